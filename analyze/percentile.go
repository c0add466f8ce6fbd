package analyze

import (
	"fmt"
	"math"
)

// PercentileMethod names how a percentile is read from a sample. Each
// method is a small exact function of the sorted sample; see Percentile.
type PercentileMethod string

const (
	// PercentileLinear is numpy's default ("linear", Hyndman & Fan type 7):
	// rank h = (n−1)·p, result = x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
	// Used by GenAI-Perf and AIPerf (np.percentile), vLLM and SGLang bench
	// (np.percentile), LLMPerf (pandas Series.quantile, same rule), and by
	// tokentrace's canonical convention. The median of [1,2,3] is 2.
	// (gonum's stat.Quantile with LinInterp is a different rule: it gives
	// 1.5 there.)
	PercentileLinear PercentileMethod = "linear"
	// PercentileFloorRank is MLPerf LoadGen's rule: x[⌊n·p⌋] of the sorted
	// sample (clamped to n−1), no interpolation.
	PercentileFloorRank PercentileMethod = "floor_rank"
	// PercentileWeightedNearestRank is guidellm's rule: the first value whose
	// cumulative (weighted) probability reaches p, no interpolation. With
	// equal weights it is x[⌈n·p⌉−1]. Weighted samples go through
	// SummarizeWeighted.
	PercentileWeightedNearestRank PercentileMethod = "weighted_nearest_rank"
)

// Percentile returns the p-quantile (0 ≤ p ≤ 1) of sorted (ascending, no
// NaN) by method m. It returns NaN for an empty sample and panics on an
// unknown method or p outside [0, 1].
func Percentile(sorted []float64, p float64, m PercentileMethod) float64 {
	if p < 0 || p > 1 || math.IsNaN(p) {
		panic(fmt.Sprintf("analyze: percentile %v outside [0,1]", p))
	}
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	switch m {
	case PercentileLinear:
		h := float64(n-1) * p
		lo := math.Floor(h)
		i := int(lo)
		if i >= n-1 {
			return sorted[n-1]
		}
		// numpy computes lerp as a + (b−a)·t, switching to b − (b−a)·(1−t)
		// for t ≥ 0.5; the same here keeps results bit-identical.
		a, b, t := sorted[i], sorted[i+1], h-lo
		d := b - a
		if t >= 0.5 {
			return b - d*(1-t)
		}
		return a + d*t
	case PercentileWeightedNearestRank:
		i := int(math.Ceil(float64(n)*p)) - 1
		if i < 0 {
			i = 0
		}
		if i > n-1 {
			i = n - 1
		}
		return sorted[i]
	case PercentileFloorRank:
		i := int(math.Floor(float64(n) * p))
		if i > n-1 {
			i = n - 1
		}
		return sorted[i]
	}
	panic(fmt.Sprintf("analyze: unknown percentile method %q", m))
}
