package plots

import (
	"math"
	"sort"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// XY is one point of a plotted series.
type XY struct{ X, Y float64 }

// Limits on what one figure draws, so that large runs stay legible (and
// SVG files small). The data functions below keep the points that matter
// exactly and thin the rest deterministically; see README.md.
const (
	// MaxCCDFPoints bounds the points of one CCDF curve.
	MaxCCDFPoints = 1200
	// CCDFTailExact is how many of the largest distinct values a CCDF
	// always keeps exactly.
	CCDFTailExact = 200
	// MaxScatterPoints bounds the points of one scatter series; points at or
	// above the series' P99 are kept first (at most a quarter of the
	// budget, the largest), the others evenly strided.
	MaxScatterPoints = 4000
	// BandThreshold is the number of requests above which e2e-osl draws
	// quantile bands instead of one point per request (OSLBands): BandBins
	// bins of N, each with its P10–P90 box and P50, and the requests above
	// their bin's P99 as points, at most MaxBandOutliers of them.
	BandThreshold   = MaxScatterPoints
	BandBins        = 40
	MaxBandOutliers = 400
	// MaxInFlightSteps bounds the in-flight step function; above it the
	// count is the maximum within each of MaxInFlightSteps/2 time bins.
	MaxInFlightSteps = 4000
	// RollingEvaluations bounds how many times the rolling P99 is
	// evaluated along a run.
	RollingEvaluations = 1000
	// ITLExactPositions is the number of leading gap positions ITL by
	// position reports one by one; later positions are grouped, 8 groups
	// per doubling (see ITLByPosition).
	ITLExactPositions = 64
)

// CCDF returns the empirical survival function of sorted (ascending, no
// NaN): for each distinct value v, the point (v, P(X ≥ v)) = (number of
// values ≥ v)/n, so the first point has Y = 1 and the last Y = (count of
// the maximum)/n > 0 (drawable on a log axis). Empty input gives nil.
//
// With more than maxPoints distinct values the curve is thinned: the
// CCDFTailExact largest distinct values are kept exactly, and of the rest
// the points at maxPoints/2 ranks evenly spaced in the sample and at
// maxPoints/2 levels evenly spaced in log P(X ≥ v) (the first point always
// kept). The choice depends only on the data, so output is deterministic.
func CCDF(sorted []float64, maxPoints int) []XY {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	var pts []XY
	for i := 0; i < n; {
		j := i
		for j+1 < n && sorted[j+1] == sorted[i] {
			j++
		}
		pts = append(pts, XY{sorted[i], float64(n-i) / float64(n)})
		i = j + 1
	}
	if maxPoints <= 0 || len(pts) <= maxPoints {
		return pts
	}
	m := len(pts)
	keep := make([]bool, m)
	keep[0] = true
	for i := m - CCDFTailExact; i < m; i++ {
		if i >= 0 {
			keep[i] = true
		}
	}
	half := (maxPoints - CCDFTailExact) / 2
	if half < 1 {
		half = 1
	}
	// evenly spaced ranks (the body, in X)
	for k := 0; k < half; k++ {
		keep[k*(m-1)/half] = true
	}
	// evenly spaced log survival levels (the tail, in Y): the first point
	// whose survival is at or below each level
	lo := math.Log(pts[m-1].Y)
	for k := 1; k <= half; k++ {
		level := math.Exp(lo * float64(k) / float64(half))
		i := sort.Search(m, func(i int) bool { return pts[i].Y <= level })
		if i < m {
			keep[i] = true
		}
	}
	out := make([]XY, 0, maxPoints+half)
	for i, k := range keep {
		if k {
			out = append(out, pts[i])
		}
	}
	return out
}

// Scatter pairs xs[i] with ys[i], leaving out pairs with a NaN or ±Inf,
// thinned by ScatterIdx to at most maxPoints, in input order.
func Scatter(xs, ys []float64, maxPoints int) []XY {
	idx := ScatterIdx(xs, ys, maxPoints)
	out := make([]XY, len(idx))
	for k, i := range idx {
		out[k] = XY{xs[i], ys[i]}
	}
	return out
}

// ScatterIdx returns the indices of the pairs (xs[i], ys[i]) without a
// NaN or ±Inf, ascending. With more than maxPoints such pairs it keeps
// the pairs whose Y is at or above the P99 (linear) of the Ys — at most
// maxPoints/4 of them, the largest Ys (ties: the earlier pair) — and a
// deterministic evenly strided subset of the others, so that the total
// is at most maxPoints.
func ScatterIdx(xs, ys []float64, maxPoints int) []int {
	var idx []int
	for i := range xs {
		if i < len(ys) && finite(xs[i]) && finite(ys[i]) {
			idx = append(idx, i)
		}
	}
	if maxPoints <= 0 || len(idx) <= maxPoints {
		return idx
	}
	y := make([]float64, len(idx))
	for k, i := range idx {
		y[k] = ys[i]
	}
	sort.Float64s(y)
	p99 := stats.Percentile(y, 0.99, stats.Linear)
	var tail []int
	for _, i := range idx {
		if ys[i] >= p99 {
			tail = append(tail, i)
		}
	}
	if limit := max(1, maxPoints/4); len(tail) > limit {
		sort.SliceStable(tail, func(a, b int) bool { return ys[tail[a]] > ys[tail[b]] })
		tail = tail[:limit]
		sort.Ints(tail)
	}
	inTail := make(map[int]bool, len(tail))
	for _, i := range tail {
		inTail[i] = true
	}
	rest := len(idx) - len(inTail)
	for _, i := range idx {
		if ys[i] >= p99 && !inTail[i] {
			rest-- // a tail pair over the limit: left out
		}
	}
	budget := max(1, maxPoints-len(tail))
	stride := (rest + budget - 1) / budget
	out := make([]int, 0, maxPoints)
	k := 0
	for _, i := range idx {
		switch {
		case inTail[i]:
			out = append(out, i)
		case ys[i] >= p99:
		default:
			if k%stride == 0 {
				out = append(out, i)
			}
			k++
		}
	}
	return out
}

// OSLBand is one bin of output lengths [Lo, Hi] (tokens; the last bin
// closed) with N requests and the P10, P50, P90 and P99 of their E2E (ms).
type OSLBand struct {
	Lo, Hi             float64
	N                  int
	P10, P50, P90, P99 float64
}

// OSLBands summarizes (N, E2E) pairs (NaN/±Inf left out) by bins of equal
// width over [min N, max N] (bins of them; one when every N is equal):
// each non-empty bin's E2E percentiles by method m, and outliers, the
// indices of the pairs above their bin's P99 — the maxOutliers largest
// E2E when there are more (ties: the earlier pair) — ascending.
func OSLBands(xs, ys []float64, bins, maxOutliers int, m convention.PercentileMethod) (bands []OSLBand, outliers []int) {
	lo, hi := math.Inf(1), math.Inf(-1)
	var idx []int
	for i := range xs {
		if i < len(ys) && finite(xs[i]) && finite(ys[i]) {
			idx = append(idx, i)
			lo, hi = math.Min(lo, xs[i]), math.Max(hi, xs[i])
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	if hi == lo || bins < 1 {
		bins = 1
	}
	width := (hi - lo) / float64(bins)
	binOf := func(x float64) int {
		if width == 0 {
			return 0
		}
		return min(bins-1, int((x-lo)/width))
	}
	members := make([][]int, bins)
	for _, i := range idx {
		b := binOf(xs[i])
		members[b] = append(members[b], i)
	}
	var out []int
	for b, ms := range members {
		if len(ms) == 0 {
			continue
		}
		v := make([]float64, len(ms))
		for k, i := range ms {
			v[k] = ys[i]
		}
		sort.Float64s(v)
		pm := stats.Method(m)
		band := OSLBand{Lo: lo + float64(b)*width, Hi: lo + float64(b+1)*width, N: len(ms),
			P10: stats.Percentile(v, 0.1, pm), P50: stats.Percentile(v, 0.5, pm), P90: stats.Percentile(v, 0.9, pm), P99: stats.Percentile(v, 0.99, pm)}
		if bins == 1 {
			band.Hi = hi
		}
		bands = append(bands, band)
		for _, i := range ms {
			if ys[i] > band.P99 {
				out = append(out, i)
			}
		}
	}
	if len(out) > maxOutliers {
		sort.SliceStable(out, func(a, b int) bool { return ys[out[a]] > ys[out[b]] })
		out = out[:maxOutliers]
	}
	sort.Ints(out)
	return bands, out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// RollingP99 returns the P99 (by method m) of the last window values of ys
// (NaN left out) ending at request i, for evenly spaced i from window−1 to
// len−1 (at most evals of them, the last always included), as (ts[i], P99)
// points. ts must be ascending. Fewer than window values give nil.
func RollingP99(ts, ys []float64, window, evals int, m convention.PercentileMethod) []XY {
	n := len(ys)
	if n < window || window < 1 {
		return nil
	}
	step := 1
	if evals > 0 && n-window+1 > evals {
		step = (n - window + evals) / evals
	}
	var out []XY
	buf := make([]float64, 0, window)
	emit := func(i int) {
		buf = buf[:0]
		for _, v := range ys[i-window+1 : i+1] {
			if !math.IsNaN(v) {
				buf = append(buf, v)
			}
		}
		if len(buf) == 0 {
			return
		}
		sort.Float64s(buf)
		out = append(out, XY{ts[i], stats.Percentile(buf, 0.99, stats.Method(m))})
	}
	last := -1
	for i := window - 1; i < n; i += step {
		emit(i)
		last = i
	}
	if last != n-1 {
		emit(n - 1)
	}
	return out
}

// InFlight returns the number of requests in flight over time as a step
// function: (t, count) points in time order, count holding from t to the
// next point, ending at 0. A request is in flight on [start, end); at equal
// times ends are applied before starts. With more than maxSteps changes the
// timeline is cut into maxSteps/2 equal bins and each bin's point is the
// maximum count within it (spikes survive thinning). max is the largest
// count overall.
func InFlight(starts, ends []float64, maxSteps int) (pts []XY, max int) {
	type ev struct {
		t float64
		d int
	}
	evs := make([]ev, 0, 2*len(starts))
	for i := range starts {
		evs = append(evs, ev{starts[i], +1}, ev{ends[i], -1})
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return evs[a].d < evs[b].d
	})
	cur := 0
	for i := 0; i < len(evs); {
		t := evs[i].t
		for i < len(evs) && evs[i].t == t {
			cur += evs[i].d
			i++
		}
		if cur > max {
			max = cur
		}
		pts = append(pts, XY{t, float64(cur)})
	}
	if maxSteps <= 0 || len(pts) <= maxSteps || len(pts) < 2 {
		return pts, max
	}
	bins := maxSteps / 2
	t0, t1 := pts[0].X, pts[len(pts)-1].X
	width := (t1 - t0) / float64(bins)
	out := make([]XY, 0, bins+1)
	prev := 0.0 // the count holding at the start of a bin
	j := 0
	for b := 0; b < bins; b++ {
		lo, hi := t0+float64(b)*width, t0+float64(b+1)*width
		mx := prev
		for j < len(pts) && (pts[j].X < hi || b == bins-1 && pts[j].X < t1) {
			if pts[j].Y > mx {
				mx = pts[j].Y
			}
			prev = pts[j].Y
			j++
		}
		out = append(out, XY{lo, mx})
	}
	out = append(out, XY{t1, 0})
	return out, max
}

// PositionStats is ITL over one group of gap positions: gaps From…To
// (inclusive; gap k is between output tokens k and k+1, so gap 1 follows
// the first token), N samples, their P50 and P99.
type PositionStats struct {
	From, To int
	N        int
	P50, P99 float64
}

// positionGroup maps gap k (1-based) to its group g and the group's gaps
// from…to: gaps 1…ITLExactPositions one each, then 8 equal groups per
// doubling: 65–72, 73–80, …, 121–128, 129–144, …, 241–256, 257–288, ….
func positionGroup(k int) (g, from, to int) {
	if k <= ITLExactPositions {
		return k - 1, k, k
	}
	z := k - 1 // 0-based, ≥ 64
	j := 6
	for 1<<(j+1) <= z {
		j++
	}
	w := (1 << j) / 8
	sub := (z - 1<<j) / w
	from = 1<<j + sub*w + 1
	return ITLExactPositions + (j-6)*8 + sub, from, from + w - 1
}

// ITLByPosition groups a run's pooled ITL samples by gap position: request
// i's Requests[i].ITLSamples consecutive samples of itl are its gaps 1, 2, …
// in token order (analyze.RunData). Groups: each of the first
// ITLExactPositions gaps on its own, then 8 groups per doubling of the
// position (65–72, …, 121–128, 129–144, …), so the number of groups grows
// with the log of the longest output; the result holds one PositionStats
// per non-empty group, by position. Percentiles use method m. Memory: one
// transient copy of itl (grouped), as the report's own sort does. ok is
// false when the per-request counts do not add up to len(itl).
func ITLByPosition(reqs []analyze.RequestMetrics, itl []float64, m convention.PercentileMethod) (out []PositionStats, ok bool) {
	total := 0
	for i := range reqs {
		total += reqs[i].ITLSamples
	}
	if total != len(itl) {
		return nil, false
	}
	// pass 1: counts and position ranges per group
	var counts []int
	var ranges [][2]int
	for i := range reqs {
		for k := 1; k <= reqs[i].ITLSamples; k++ {
			g, from, to := positionGroup(k)
			for len(counts) <= g {
				counts = append(counts, 0)
				ranges = append(ranges, [2]int{})
			}
			counts[g]++
			ranges[g] = [2]int{from, to}
		}
	}
	offs := make([]int, len(counts)+1)
	for g, c := range counts {
		offs[g+1] = offs[g] + c
	}
	// pass 2: scatter into one grouped copy
	grouped := make([]float64, len(itl))
	fill := append([]int(nil), offs[:len(counts)]...)
	p := 0
	for i := range reqs {
		for k := 1; k <= reqs[i].ITLSamples; k++ {
			g, _, _ := positionGroup(k)
			grouped[fill[g]] = itl[p]
			fill[g]++
			p++
		}
	}
	for g := range counts {
		seg := sortedFinite(grouped[offs[g]:offs[g+1]])
		if len(seg) == 0 {
			continue
		}
		out = append(out, PositionStats{From: ranges[g][0], To: ranges[g][1], N: len(seg), P50: stats.Percentile(seg, 0.5, stats.Method(m)), P99: stats.Percentile(seg, 0.99, stats.Method(m))})
	}
	return out, true
}

// sortedFinite sorts xs in place after moving NaNs out; it returns the
// non-NaN prefix.
func sortedFinite(xs []float64) []float64 {
	n := 0
	for _, v := range xs {
		if !math.IsNaN(v) {
			xs[n] = v
			n++
		}
	}
	xs = xs[:n]
	sort.Float64s(xs)
	return xs
}

// GoodputCurve is the goodput fraction of a run as one SLO constraint's
// bound moves while the others stay as configured.
type GoodputCurve struct {
	// Metric and Text are the constraint's metric and text ("ttft<=500ms").
	Metric, Text string
	// LimitMs is the configured bound; AtLimit the goodput fraction there
	// (equal to the report's goodput fraction).
	LimitMs, AtLimit float64
	// Points are (bound ms, fraction of all requests good with that bound
	// as "≤ bound"), one per distinct value of the metric among requests
	// good under the other constraints, ascending (thinned to at most
	// MaxCCDFPoints, the largest value kept), starting at (0, fraction of
	// requests good whatever the bound).
	Points []XY
	// Total is the number of requests (the fraction's denominator).
	Total int
}

// GoodputCurves returns one curve per constraint of slo for a run's
// requests (all statuses; streaming as RunData.Streaming). A request is good
// as in the report's goodput: status ok and every constraint met
// (Constraint.Value, Constraint.Met); a TPOT constraint is vacuously met by
// a request with a known N ≤ 1; any other undefined value fails it.
func GoodputCurves(slo analyze.SLO, reqs []analyze.RequestMetrics) []GoodputCurve {
	var out []GoodputCurve
	for ci, c := range slo.Constraints {
		gc := GoodputCurve{Metric: c.Metric.Name, Text: c.Text, LimitMs: c.Limit, Total: len(reqs)}
		var vals []float64
		always, atLimit := 0, 0
		for i := range reqs {
			r := &reqs[i]
			if r.Status != formats.StatusOK {
				continue
			}
			others := true
			for cj, o := range slo.Constraints {
				if cj == ci {
					continue
				}
				if st := meets(o, r); st == failed {
					others = false
					break
				}
			}
			if !others {
				continue
			}
			switch meets(c, r) {
			case vacuous:
				always++
				atLimit++
				continue
			case met:
				atLimit++
			}
			if v := c.Value(r); !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		sort.Float64s(vals)
		tot := float64(len(reqs))
		gc.AtLimit = math.NaN()
		if tot > 0 {
			gc.AtLimit = float64(atLimit) / tot
			gc.Points = append(gc.Points, XY{0, float64(always) / tot})
			var steps []XY
			for i := 0; i < len(vals); {
				j := i
				for j+1 < len(vals) && vals[j+1] == vals[i] {
					j++
				}
				steps = append(steps, XY{vals[i], float64(always+j+1) / tot})
				i = j + 1
			}
			if len(steps) > MaxCCDFPoints {
				stride := (len(steps) + MaxCCDFPoints - 1) / MaxCCDFPoints
				var thin []XY
				for i := 0; i < len(steps); i += stride {
					thin = append(thin, steps[i])
				}
				if thin[len(thin)-1] != steps[len(steps)-1] {
					thin = append(thin, steps[len(steps)-1])
				}
				steps = thin
			}
			gc.Points = append(gc.Points, steps...)
		}
		out = append(out, gc)
	}
	return out
}

type verdict = analyze.Verdict

const (
	failed  = analyze.Failed
	met     = analyze.Met
	vacuous = analyze.Vacuous
)

// meets applies one constraint to a request the way the report's goodput
// does (analyze.Constraint.Check).
func meets(c analyze.Constraint, r *analyze.RequestMetrics) verdict { return c.Check(r) }
