package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// The significance tests that compare a statistic of a candidate sample
// with the same statistic of a baseline sample. `tokentrace gate
// --baseline` (analyze/slo) and `tokentrace compare` (analyze/compare)
// both call these functions, so that a regression gate and a comparison
// of the same two samples reach the same verdict.
//
// Every test is one-sided at level alpha in each direction: "the candidate
// is higher" is established when the difference's lower bound is above
// the line, "lower" when its upper bound is below it. The difference is
// cand − (K·base + D), where K and D come from a regression gate
// ("p99(ttft) <= 1.1 * baseline + 5ms": K = 1.1, D = 5); a comparison
// uses K = 1, D = 0. The two one-sided (1 − alpha) bounds together form a
// (1 − 2·alpha) two-sided interval: at the default alpha 0.05 each bound
// is a 95% bound and the pair a 90% interval.

// BootReplicates is the number of bootstrap resamples behind a percentile
// bound that the order statistics cannot give.
const BootReplicates = 2000

// bootSeed seeds the bootstrap's generator (PCG, two 64-bit words: the
// bytes of "token" and "trace"), so that a verdict is reproducible.
var bootSeed = [2]uint64{0x746f6b656e, 0x7472616365}

// PercentileBound is a one-sided (1 − alpha) confidence bound of the
// p-quantile of the population sorted (ascending, no NaN) was drawn from:
// the upper bound when upper, else the lower. It is the distribution-free
// order-statistic bound (QuantileCI at level 1 − 2·alpha, whose ends are
// one-sided (1 − alpha) bounds) when the sample is large enough to give
// it; otherwise (boot true) the percentile bootstrap's: the alpha or
// 1 − alpha quantile (Linear) of the p-quantile (by method m) over
// BootReplicates resamples with replacement, drawn from a PCG generator
// with a fixed seed so that the bound is the same on every run, widened
// to the sample's own p-quantile where it falls short of it (a bound
// never excludes the estimate). Resampling cannot see past the sample's
// extremes: where the bootstrap bound reaches the sample's max (an upper
// bound) or min (a lower one) — always for one value, and for a tail
// quantile of a small sample — the data cannot bound that side, and the
// bound is +Inf or −Inf (unbounded; no difference is significant on it).
// An empty sample gives NaN (boot true).
func PercentileBound(sorted []float64, p float64, m Method, alpha float64, upper bool) (bound float64, boot bool) {
	lo, hi := QuantileCI(sorted, p, 1-2*alpha)
	if upper && !math.IsNaN(hi) {
		return hi, false
	}
	if !upper && !math.IsNaN(lo) {
		return lo, false
	}
	n := len(sorted)
	if n == 0 {
		return math.NaN(), true
	}
	rng := rand.New(rand.NewPCG(bootSeed[0], bootSeed[1]))
	reps := make([]float64, BootReplicates)
	buf := make([]float64, n)
	for b := range reps {
		for i := range buf {
			buf[i] = sorted[rng.IntN(n)]
		}
		sort.Float64s(buf)
		reps[b] = Percentile(buf, p, m)
	}
	sort.Float64s(reps)
	q := alpha
	if upper {
		q = 1 - alpha
	}
	b, est := Percentile(reps, q, Linear), Percentile(sorted, p, m)
	if upper {
		if b >= sorted[n-1] {
			return math.Inf(1), true // resampling cannot see past the sample's max
		}
		return math.Max(b, est), true
	}
	if b <= sorted[0] {
		return math.Inf(-1), true
	}
	return math.Min(b, est), true
}

// PercentileTestName names the percentile test by how its bounds were
// found (PercentileBound's boot, for each bound used): "order-statistic
// bounds", "bootstrap bounds (B=2000)", or "order-statistic and bootstrap
// bounds (B=2000)" when some came from each.
func PercentileTestName(boot ...bool) string {
	some, all := false, len(boot) > 0
	for _, b := range boot {
		some = some || b
		all = all && b
	}
	switch {
	case all:
		return fmt.Sprintf("bootstrap bounds (B=%d)", BootReplicates)
	case some:
		return fmt.Sprintf("order-statistic and bootstrap bounds (B=%d)", BootReplicates)
	}
	return "order-statistic bounds"
}

// PercentileDiff bounds the difference of the p-quantiles of two samples
// (sorted ascending, no NaN), each read by its own method (mc, mb): Lo =
// candLo − (K·baseHi + D) and Hi = candHi − (K·baseLo + D), each sample's
// bound from PercentileBound at alpha (K > 0). It is distribution-free where the order statistics give every bound:
// with the samples independent, each end of the interval holds with
// probability at least (1 − alpha)² (both samples' bounds must hold), and
// in practice more, since both rarely fail together. The test is the one
// gate --baseline applies: the candidate's quantile is established higher
// when Lo > 0, lower when Hi < 0. Either end is NaN when a sample is
// empty.
func PercentileDiff(cand, base []float64, p float64, mc, mb Method, alpha, k, d float64) Diff {
	cLo, b1 := PercentileBound(cand, p, mc, alpha, false)
	cHi, b2 := PercentileBound(cand, p, mc, alpha, true)
	bLo, b3 := PercentileBound(base, p, mb, alpha, false)
	bHi, b4 := PercentileBound(base, p, mb, alpha, true)
	est := Percentile(cand, p, mc) - (k*Percentile(base, p, mb) + d)
	return Diff{Test: PercentileTestName(b1, b2, b3, b4), Alpha: alpha, Estimate: est,
		Lo: cLo - (k*bHi + d), Hi: cHi - (k*bLo + d), PUp: math.NaN(), PDown: math.NaN()}
}

// Diff is the comparison of one statistic of a candidate sample with K
// times the baseline's plus D: the observed difference, its one-sided
// (1 − Alpha) bounds and, where the test gives them, one-sided p-values.
type Diff struct {
	// Test names the test: "order-statistic bounds" (or the bootstrap
	// variants of PercentileTestName), "welch t", "agresti-caffo", or
	// "none (…)" with the reason no test applies.
	Test string
	// Alpha is the one-sided level of each bound.
	Alpha float64
	// Estimate is the observed difference cand − (K·base + D) (for
	// agresti-caffo, of the adjusted proportions).
	Estimate float64
	// Lo and Hi are one-sided (1 − Alpha) lower and upper bounds of the
	// difference; NaN where the samples cannot give one.
	Lo, Hi float64
	// PUp is the one-sided p-value of "cand > K·base + D" (1 − F(t) of the
	// test statistic t), PDown that of "cand < K·base + D" (F(t)); NaN for
	// the percentile bounds and when no test applies.
	PUp, PDown float64
}

// Up reports whether the candidate is established higher than the line at
// level Alpha: the lower bound is above 0 (p-value tests: PUp < Alpha).
func (d Diff) Up() bool {
	if !math.IsNaN(d.PUp) {
		return d.PUp < d.Alpha
	}
	return d.Lo > 0
}

// Down reports whether the candidate is established lower than the line
// at level Alpha: the upper bound is below 0 (p-value tests: PDown <
// Alpha).
func (d Diff) Down() bool {
	if !math.IsNaN(d.PDown) {
		return d.PDown < d.Alpha
	}
	return d.Hi < 0
}

// Untested is a Diff whose samples no test applies to, with the observed
// difference and why.
func Untested(estimate float64, why string) Diff {
	nan := math.NaN()
	return Diff{Test: "none (" + why + ")", Estimate: estimate, Lo: nan, Hi: nan, PUp: nan, PDown: nan}
}

// Welch compares the means of two samples (no NaN) with Welch's
// unequal-variance t test (Welch 1947): t = (x̄c − (K·x̄b + D))/se with
// se² = s²c/nc + K²·s²b/nb (sample variances, divisor n − 1) and
// Welch–Satterthwaite degrees of freedom ν = se⁴/((s²c/nc)²/(nc−1) +
// (K²s²b/nb)²/(nb−1)); PUp = 1 − T_ν(t), PDown = T_ν(t), and the bounds are
// the difference ∓ t_ν,1−α·se. Each sample needs two values (else
// Untested). When both variances are 0, se is 0: the bounds are the
// difference itself and the p-values 0 or 1 (0.5 each when the difference
// is 0 too): two constant samples that differ differ.
func Welch(cand, base []float64, alpha, k, d float64) Diff {
	nc, nb := len(cand), len(base)
	mc, mb := Mean(cand), Mean(base)
	diff := mc - (k*mb + d)
	if nc < 2 || nb < 2 {
		return Untested(diff, "a mean of fewer than two samples cannot be tested")
	}
	se2c, se2b := Variance(cand)/float64(nc), k*k*Variance(base)/float64(nb)
	se := math.Sqrt(se2c + se2b)
	out := Diff{Test: "welch t", Alpha: alpha, Estimate: diff}
	if se == 0 {
		out.Lo, out.Hi = diff, diff
		switch {
		case diff > 0:
			out.PUp, out.PDown = 0, 1
		case diff < 0:
			out.PUp, out.PDown = 1, 0
		default:
			out.PUp, out.PDown = 0.5, 0.5
		}
		return out
	}
	df := (se2c + se2b) * (se2c + se2b) / (se2c*se2c/float64(nc-1) + se2b*se2b/float64(nb-1))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	t := diff / se
	out.PUp, out.PDown = 1-dist.CDF(t), dist.CDF(t)
	q := dist.Quantile(1 - alpha)
	out.Lo, out.Hi = diff-q*se, diff+q*se
	return out
}

// AgrestiCaffo compares two proportions, xc successes of nc trials against
// xb of nb, with the Agresti–Caffo adjusted interval and test (Agresti &
// Caffo, "Simple and effective confidence intervals for proportions and
// differences of proportions result from adding two successes and two
// failures", The American Statistician 54(4), 2000): each proportion is
// p̃ = (x + 1)/(n + 2), se = √(p̃c(1−p̃c)/(nc+2) + K²·p̃b(1−p̃b)/(nb+2)),
// z = (p̃c − (K·p̃b + D))/se; PUp = 1 − Φ(z), PDown = Φ(z), and the bounds
// are p̃c − (K·p̃b + D) ∓ z₁₋α·se, held within [−1, 1] when K = 1 and D = 0
// (a difference of proportions). A side without trials is Untested.
func AgrestiCaffo(xc, nc, xb, nb int, alpha, k, d float64) Diff {
	if nc == 0 || nb == 0 {
		return Untested(math.NaN(), "no requests to test")
	}
	pc := float64(xc+1) / float64(nc+2)
	pb := float64(xb+1) / float64(nb+2)
	se := math.Sqrt(pc*(1-pc)/float64(nc+2) + k*k*pb*(1-pb)/float64(nb+2))
	diff := pc - (k*pb + d)
	z := diff / se
	n := distuv.UnitNormal
	q := n.Quantile(1 - alpha)
	// a difference of two proportions lies in [−1, 1] (K = 1, D = 0)
	lo, hi := diff-q*se, diff+q*se
	if k == 1 && d == 0 {
		lo, hi = math.Max(lo, -1), math.Min(hi, 1)
	}
	return Diff{Test: "agresti-caffo", Alpha: alpha, Estimate: diff, Lo: lo, Hi: hi,
		PUp: 1 - n.CDF(z), PDown: n.CDF(z)}
}
