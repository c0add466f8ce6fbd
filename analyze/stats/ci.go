package stats

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// CILevel is the confidence level of the percentile intervals in reports.
const CILevel = 0.95

// QuantileCI returns a distribution-free confidence interval for the
// p-quantile (0 < p < 1) of the population a sorted sample of n values was
// drawn from, at confidence level: the order statistics x(l) and x(u)
// (1-based ranks) with the number of values below the quantile,
// B ~ Binomial(n, p), satisfying P(B < l) ≤ (1−level)/2 and
// P(B ≥ u) ≤ (1−level)/2. It assumes only independent draws from a
// continuous distribution (no shape). A bound that would need a rank
// outside 1…n is NaN: the sample is too small to bound that side (e.g. the
// upper bound of P99 needs 0.99ⁿ ≤ 0.025, n ≥ 368, at 95%; see
// MinSamplesForCI).
func QuantileCI(sorted []float64, p, level float64) (lo, hi float64) {
	lo, hi = math.NaN(), math.NaN()
	l, u := QuantileCIRanks(len(sorted), p, level)
	if l >= 1 {
		lo = sorted[l-1]
	}
	if u >= 1 {
		hi = sorted[u-1]
	}
	return lo, hi
}

// QuantileCIRanks are the 1-based ranks of QuantileCI's bounds in a sample
// of n values (0 where a side cannot be bounded): the interval of a
// summary that keeps no sample (a sketch) is its values at these ranks.
func QuantileCIRanks(n int, p, level float64) (l, u int) {
	if n == 0 || p <= 0 || p >= 1 {
		return 0, 0
	}
	alpha := (1 - level) / 2
	b := distuv.Binomial{N: float64(n), P: p}
	// l: the largest rank with P(B ≤ l−1) ≤ alpha (the CDF grows with k,
	// so binary searches find both ranks with O(log n) evaluations).
	l = sort.Search(n, func(k int) bool { return b.CDF(float64(k)) > alpha }) // first k with CDF(k) > alpha; l = k
	// u: the smallest rank with P(B ≥ u) = 1 − P(B ≤ u−1) ≤ alpha.
	u = sort.Search(n, func(k int) bool { return 1-b.CDF(float64(k)) <= alpha }) + 1
	if u > n {
		u = 0
	}
	return l, u
}

// MinSamplesForCI is the smallest sample size whose p-quantile has both
// sides of its distribution-free interval at level (QuantileCI): at 95%,
// 72 for P95 and 368 for P99 (pⁿ ≤ 0.025). It is -1 for p or level
// outside (0, 1).
func MinSamplesForCI(p, level float64) int {
	alpha := (1 - level) / 2
	if !(p > 0 && p < 1 && alpha > 0 && alpha < 1) {
		return -1
	}
	// both extreme ranks must be excluded: (1−p)ⁿ ≤ alpha (the lower bound
	// exists) and pⁿ ≤ alpha (the upper one); n from the logarithms, then
	// nudged so floating point cannot put it one off
	n := int(math.Ceil(math.Max(math.Log(alpha)/math.Log1p(-p), math.Log(alpha)/math.Log(p))))
	ok := func(n int) bool {
		return n >= 1 && math.Pow(1-p, float64(n)) <= alpha && math.Pow(p, float64(n)) <= alpha
	}
	for n > 1 && ok(n-1) {
		n--
	}
	for !ok(n) {
		n++
	}
	return n
}
