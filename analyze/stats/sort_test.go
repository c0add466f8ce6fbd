package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedCopy compares sortedCopy with filtering NaNs and slices.Sort
// on data shaped like token gaps (gamma-like, clustered), with NaNs,
// duplicates, zeros of both signs, negatives, infinities, all-equal data
// and sizes around the bucketing threshold and the bucket-width steps
// (fewer buckets below 2^16 values); the input must be unchanged.
func TestSortedCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := map[string]func(i int) float64{
		"itl-ms":    func(int) float64 { return 20 + 5*r.NormFloat64() + 40*r.ExpFloat64()*float64(r.IntN(50)/49) },
		"nan":       func(i int) float64 { return []float64{math.NaN(), 7, r.Float64(), math.NaN(), -1}[i%5] },
		"dups":      func(int) float64 { return float64(r.IntN(7)) },
		"zeros":     func(i int) float64 { return []float64{0, math.Copysign(0, -1), 1e-300, -1e-300}[i%4] },
		"signed":    func(int) float64 { return r.NormFloat64() * 1e6 },
		"inf":       func(i int) float64 { return []float64{math.Inf(1), math.Inf(-1), 3, r.Float64()}[i%4] },
		"equal":     func(int) float64 { return 12.5 },
		"wide":      func(int) float64 { return math.Exp(r.NormFloat64() * 50) },
		"integral":  func(int) float64 { return float64(r.IntN(1 << 20)) },
		"one-apart": func(i int) float64 { return math.Nextafter(1, 2) * float64(1+i%2) },
		"skewed":    func(i int) float64 { return []float64{1, 1 + 1e-12*float64(i)}[min(i%1000, 1)] },
		// zero gaps and stalls beside the bulk: crowded buckets bucketed again
		"tail": func(i int) float64 {
			return []float64{0, 22 + 250*r.ExpFloat64(), 22 + 3*r.NormFloat64(), 22 + 3*r.NormFloat64()}[i%4]
		},
	}
	for name, g := range gen {
		for _, n := range []int{0, 1, 5, bucketMin - 1, bucketMin, 8_000, 1<<15 - 1, 1 << 16, 100_000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = g(i)
			}
			orig := slices.Clone(xs)
			var want []float64
			for _, x := range xs {
				if !math.IsNaN(x) {
					want = append(want, x)
				}
			}
			slices.Sort(want)
			got := SortedCopy(xs)
			if len(got) != len(want) {
				t.Fatalf("%s n=%d: %d values, want %d", name, n, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s n=%d: [%d] = %v, want %v", name, n, i, got[i], want[i])
				}
			}
			for i := range xs {
				if math.Float64bits(xs[i]) != math.Float64bits(orig[i]) {
					t.Fatalf("%s n=%d: input changed at %d", name, n, i)
				}
			}
		}
	}
}

func BenchmarkSortedCopy(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float64, 822_168) // the 259 MB bench run's token gaps
	for i := range src {
		src[i] = 15 + 10*r.ExpFloat64()
	}
	b.Run("bucketed", func(b *testing.B) {
		for b.Loop() {
			_ = SortedCopy(src)
		}
	})
	b.Run("copy+slices.Sort", func(b *testing.B) {
		for b.Loop() {
			xs := slices.Clone(src)
			slices.Sort(xs)
		}
	})
}

// BenchmarkSortedCopyTail: 4.5M gaps as a real stream has them — most
// near 22 ms, 0.2% stalls of ~250 ms, 1% zero gaps (tokens of one chunk)
// — whose range spans many binary exponents.
func BenchmarkSortedCopyTail(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	src := make([]float64, 4_500_000)
	for i := range src {
		switch u := r.Float64(); {
		case u < 0.01:
			src[i] = 0
		case u < 0.012:
			src[i] = 22 + 250*r.ExpFloat64()
		default:
			src[i] = 22 * (1 + 0.5*r.NormFloat64()*0.5)
		}
	}
	for b.Loop() {
		_ = SortedCopy(src)
	}
}

// BenchmarkSortedCopySmall: one small run's pooled gaps (20 requests of
// ~400 tokens), sorted once per run of a many-run folder.
func BenchmarkSortedCopySmall(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{5_000, 8_000, 30_000} {
		src := make([]float64, n)
		for i := range src {
			src[i] = 15 + 10*r.ExpFloat64()
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				_ = SortedCopy(src)
			}
		})
	}
}
