package analyze

import (
	"fmt"
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"

	"github.com/tokentrace/tokentrace/analyze/stats"
)

// The pooled ITL keeps one float64 per token gap for exact percentiles:
// 8 bytes per gap and convention (its order statistics are read by
// selection, stats.SelectRanks, not from a sorted copy). A
// run with more gaps than the memory budget allows (SetMemoryBudget) is
// summarized instead by a DDSketch (Masson, Rim and Lee, "DDSketch: a fast
// and fully-mergeable quantile sketch with relative-error guarantees",
// VLDB 2019; github.com/DataDog/sketches-go): every quantile it returns is
// within ITLSketchAccuracy (relative) of the order statistic at its rank,
// whatever the distribution, in a few thousand bins. The count, mean,
// standard deviation, minimum and maximum stay exact (running sums); the
// per-request metrics (TTFT, TPOT, E2E, …) are never sketched.
const (
	// ITLSketchAccuracy is the sketch's relative accuracy: 0.5%.
	ITLSketchAccuracy = 0.005
	// ITLSketchPoints is the size of the representative sample a sketched
	// pooled ITL is read back as (RunData.ITL, Samples.Values[ITL]): the
	// sketch's values at the quantiles 0, 1/(M−1), …, 1, so that a
	// percentile taken from it by linear interpolation is the sketch's own
	// at every multiple of 0.001%.
	ITLSketchPoints = 100_001
	// itlBytesPerGap is what one exact gap costs: its value.
	itlBytesPerGap = 8
)

// itlSketch is a run's pooled ITL under one convention past the budget.
type itlSketch struct {
	sk *ddsketch.DDSketch
	// exact running statistics (Welford)
	n              int64
	mean, m2       float64
	min, max       float64
	sample         []float64 // the representative sample, once read
	untrackable    int64     // values the sketch could not hold (NaN, ±Inf, beyond its range)
	firstUntracked float64
}

// newITLSketch is an empty sketch: DDSketch's cubically interpolated
// index mapping (the logarithm approximated from the float's exponent
// and a cubic in its mantissa: the same relative-accuracy guarantee as
// the logarithmic mapping, with about 1% more bins, and no math.Log per
// value, which was most of the cost of sketching 32M gaps) over dense
// stores (an array of counts from the lowest to the highest index seen:
// for latencies from 1 ns to a day in ms, ~5,000 bins).
func newITLSketch() *itlSketch {
	m, err := mapping.NewCubicallyInterpolatedMapping(ITLSketchAccuracy)
	if err != nil {
		panic(err) // a constant, valid accuracy
	}
	sk := ddsketch.NewDDSketch(m, store.NewDenseStore(), store.NewDenseStore())
	return &itlSketch{sk: sk, min: math.Inf(1), max: math.Inf(-1)}
}

// addAll adds the values of vs (one request's gaps): each to the sketch,
// and the batch's count, mean and sum of squared deviations (two passes)
// to the running ones by Chan et al.'s pairwise update, one division per
// batch instead of one per value.
func (s *itlSketch) addAll(vs []float64) {
	var n int64
	sum := 0.0
	lo, hi := s.min, s.max
	for _, v := range vs {
		if err := s.sk.Add(v); err != nil {
			if s.untrackable == 0 {
				s.firstUntracked = v
			}
			s.untrackable++
			continue
		}
		n++
		sum += v
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if n == 0 {
		return
	}
	mean := sum / float64(n)
	m2 := 0.0
	all := n == int64(len(vs))
	for _, v := range vs {
		// the values the sketch refused (NaN, ±Inf, beyond its range)
		// are out of the statistics too
		if all || trackable(s.sk, v) {
			d := v - mean
			m2 += d * d
		}
	}
	s.min, s.max = lo, hi
	s.mergeMoments(n, mean, m2)
	s.sample = nil
}

// trackable reports whether the sketch holds v (DDSketch.Add's own test).
func trackable(sk *ddsketch.DDSketch, v float64) bool {
	a := math.Abs(v)
	return !math.IsNaN(v) && a <= sk.MaxIndexableValue()
}

// mergeMoments folds a batch's count, mean and sum of squared deviations
// into the running ones.
func (s *itlSketch) mergeMoments(n int64, mean, m2 float64) {
	t := s.n + n
	d := mean - s.mean
	s.m2 += m2 + d*d*float64(s.n)*float64(n)/float64(t)
	s.mean += d * float64(n) / float64(t)
	s.n = t
}

// merge adds o's values (pooled reports).
func (s *itlSketch) merge(o *itlSketch) {
	if o == nil || o.n == 0 {
		return
	}
	if err := s.sk.MergeWith(o.sk); err != nil {
		panic(err) // same mapping by construction
	}
	s.mergeMoments(o.n, o.mean, o.m2)
	s.min, s.max = math.Min(s.min, o.min), math.Max(s.max, o.max)
	s.untrackable += o.untrackable
	s.sample = nil
}

// values is the representative sample (sorted).
func (s *itlSketch) values() []float64 {
	if s.sample != nil || s.n == 0 {
		return s.sample
	}
	out := make([]float64, ITLSketchPoints)
	for i := range out {
		v, err := s.sk.GetValueAtQuantile(float64(i) / float64(ITLSketchPoints-1))
		if err != nil {
			v = math.NaN()
		}
		out[i] = v
	}
	// the sketch's values are bin representatives: the ends are the
	// exact minimum and maximum
	out[0], out[len(out)-1] = s.min, s.max
	s.sample = out
	return out
}

// std is the exact standard deviation with ddof.
func (s *itlSketch) std(ddof int) float64 {
	if s.n <= int64(ddof) {
		return math.NaN()
	}
	return math.Sqrt(s.m2 / float64(s.n-int64(ddof)))
}

// quantileAtRank is the sketch's value at 1-based rank r of n.
func (s *itlSketch) quantileAtRank(r int64) float64 {
	if r < 1 || r > s.n {
		return math.NaN()
	}
	if s.n == 1 {
		return s.min
	}
	v, err := s.sk.GetValueAtQuantile(float64(r-1) / float64(s.n-1))
	if err != nil {
		return math.NaN()
	}
	return v
}

// fix replaces a summary computed from the representative sample with the
// exact count, mean, std, min and max, and intervals from the order
// statistics' ranks for the real count.
func (s *itlSketch) fix(sum stats.Summary, ddof int) stats.Summary {
	if s.n == 0 {
		return sum
	}
	sum.N = int(s.n)
	sum.Mean, sum.Std, sum.Min, sum.Max = s.mean, s.std(ddof), s.min, s.max
	for i := range sum.Quantiles {
		q := &sum.Quantiles[i]
		l, u := stats.QuantileCIRanks(int(s.n), q.P, stats.CILevel)
		q.Lo, q.Hi = s.quantileAtRank(int64(l)), s.quantileAtRank(int64(u))
	}
	return sum
}

// warning is the report's statement that the pooled ITL was sketched.
func (s *itlSketch) warning(budget int64) Warning {
	msg := fmt.Sprintf("the exact pooled ITL (%d gaps, %s) is over the memory budget's share (%s of --memory-budget %s): "+
		"its percentiles come from a DDSketch, each within ±%g%% of the order statistic at its rank; n, mean, std, min and max are exact; "+
		"TTFT, TPOT, E2E and the other per-request metrics are exact. Raise --memory-budget for exact ITL percentiles",
		s.n, formatBytes(s.n*itlBytesPerGap), formatBytes(budget/2), formatBytes(budget), 100*ITLSketchAccuracy)
	if s.untrackable > 0 {
		msg += fmt.Sprintf("; %d gap(s) the sketch cannot hold (first: %g) are left out", s.untrackable, s.firstUntracked)
	}
	return Warning{Code: "itl_sketch", Metric: ITL.Key, Message: msg}
}

// formatBytes writes n bytes in binary units.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// SetMemoryBudget bounds the memory the Analyzer gives the exact pooled
// ITL: half of budget bytes (8 bytes per gap and convention; the other half is left to the per-request metrics, about
// 400 bytes per request and convention, and to the readers). Once the
// gaps of every run and convention together would pass it, each run's
// pooled ITL moves to a DDSketch (itlSketch) and its report says so
// (warning itl_sketch). 0 or less: no bound (every gap kept); a positive
// budget too small for one gap still bounds them (one gap).
func (a *Analyzer) SetMemoryBudget(budget int64) {
	a.budget = budget
	a.gapLimit = 0
	if budget > 0 {
		a.gapLimit = max(1, budget/2/itlBytesPerGap)
	}
}

// sketchAll moves every run's exact pooled ITL to sketches.
func (a *Analyzer) sketchAll() {
	for _, acc := range a.runs {
		for i := range acc.per {
			p := &acc.per[i]
			if p.sketch != nil {
				continue
			}
			p.sketch = newITLSketch()
			for _, b := range p.itlBlocks {
				p.sketch.addAll(b)
			}
			p.sketch.addAll(p.itl)
			p.itlBlocks, p.itl = nil, nil
		}
	}
	a.sketched = true
}

// arenaCap is how many gaps one run's arena reserves room for: every gap
// the budget allows (at most 2^32, 32 GiB of address space, without one).
func (a *Analyzer) arenaCap() int {
	if a.gapLimit > 0 {
		return int(min(a.gapLimit, 1<<32))
	}
	return 1 << 32
}
