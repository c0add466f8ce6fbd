// Package stats holds tokentrace's statistics over one sample of float64
// values: percentile methods, distribution-free intervals of percentiles,
// summaries (count, mean, standard deviation, extremes and a list of
// percentiles), the numpy-exact sums they rest on, sorting, and the
// significance tests that compare two samples. It knows nothing of
// requests, runs or conventions: package analyze computes the samples,
// this package describes them.
//
// Values are plain float64s in whatever unit the caller keeps; NaN values
// are ignored by Summarize and SortedCopy, and undefined results (an empty
// sample, the standard deviation of one value, a bound the sample is too
// small to give) are NaN.
package stats

import (
	"fmt"
	"math"
)

// Method names how a percentile is read from a sample. Each method is a
// small exact function of the sorted sample; see Percentile.
type Method string

const (
	// Linear is numpy's default ("linear", Hyndman & Fan type 7): rank
	// h = (n−1)·p, result = x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). Used by
	// GenAI-Perf and AIPerf (np.percentile), vLLM and SGLang bench
	// (np.percentile), LLMPerf (pandas Series.quantile, same rule), and by
	// tokentrace's canonical convention. The median of [1,2,3] is 2.
	// (gonum's stat.Quantile with LinInterp is a different rule: it gives
	// 1.5 there.)
	Linear Method = "linear"
	// FloorRank is MLPerf LoadGen's rule: x[⌊n·p⌋] of the sorted sample
	// (clamped to n−1), no interpolation (mlcommons/inference
	// loadgen/results.cc).
	FloorRank Method = "floor_rank"
	// WeightedNearestRank is guidellm's rule: the first value whose
	// cumulative (weighted) probability reaches p, no interpolation. With
	// equal weights it is x[⌈n·p⌉−1]. Weighted samples go through
	// SummarizeWeighted.
	WeightedNearestRank Method = "weighted_nearest_rank"
)

// Methods are every Method Percentile knows.
var Methods = []Method{Linear, FloorRank, WeightedNearestRank}

// Percentile returns the p-quantile (0 ≤ p ≤ 1) of sorted (ascending, no
// NaN) by method m. It returns NaN for an empty sample and panics on an
// unknown method or p outside [0, 1].
func Percentile(sorted []float64, p float64, m Method) float64 {
	return percentileAt(len(sorted), p, m, func(i int) float64 { return sorted[i] })
}

// percentileAt is Percentile of a sorted sample of n values whose i-th
// (0-based) is at(i): the ranks it reads depend on n, p and m only.
func percentileAt(n int, p float64, m Method, at func(i int) float64) float64 {
	if p < 0 || p > 1 || math.IsNaN(p) {
		panic(fmt.Sprintf("stats: percentile %v outside [0,1]", p))
	}
	if n == 0 {
		return math.NaN()
	}
	switch m {
	case Linear:
		h := float64(n-1) * p
		lo := math.Floor(h)
		i := int(lo)
		if i >= n-1 {
			return at(n - 1)
		}
		// numpy computes lerp as a + (b−a)·t, switching to b − (b−a)·(1−t)
		// for t ≥ 0.5; the same here keeps results bit-identical.
		a, b, t := at(i), at(i+1), h-lo
		if math.IsInf(b, 1) {
			// +∞ samples (failed requests counted as +∞): the percentile
			// is +∞ once they occupy its rank, a itself at an exact rank
			// (a + ∞·0 would be NaN)
			if t == 0 {
				return a
			}
			return b
		}
		d := b - a
		if t >= 0.5 {
			return b - d*(1-t)
		}
		return a + d*t
	case WeightedNearestRank:
		i := int(math.Ceil(float64(n)*p)) - 1
		if i < 0 {
			i = 0
		}
		if i > n-1 {
			i = n - 1
		}
		return at(i)
	case FloorRank:
		i := int(math.Floor(float64(n) * p))
		if i > n-1 {
			i = n - 1
		}
		return at(i)
	}
	panic(fmt.Sprintf("stats: unknown percentile method %q", m))
}
