package stats

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSummarize: n, mean, std, min, P50…P99, max of 1M ITL-like
// samples (the pooled ITL of a ~250 MB GenAI-Perf run is ~820k): the sort
// dominates.
func BenchmarkSummarize(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 1_000_000)
	for i := range xs {
		xs[i] = 20 + 5*r.NormFloat64()
	}
	b.SetBytes(int64(8 * len(xs)))
	for b.Loop() {
		_ = Summarize(xs, nil, Linear, 1)
	}
}

// BenchmarkPercentile: one linear-interpolation percentile of sorted data.
func BenchmarkPercentile(b *testing.B) {
	xs := make([]float64, 10_000)
	for i := range xs {
		xs[i] = float64(i)
	}
	for b.Loop() {
		_ = Percentile(xs, 0.99, Linear)
	}
}
