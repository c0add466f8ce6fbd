package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortFloat64s compares sortFloat64s with slices.Sort on data shaped
// like token gaps (gamma-like, clustered), with duplicates, zeros of both
// signs, negatives, infinities, all-equal data and sizes around the
// bucketing threshold.
func TestSortFloat64s(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := map[string]func(i int) float64{
		"itl-ms":    func(int) float64 { return 20 + 5*r.NormFloat64() + 40*r.ExpFloat64()*float64(r.IntN(50)/49) },
		"dups":      func(int) float64 { return float64(r.IntN(7)) },
		"zeros":     func(i int) float64 { return []float64{0, math.Copysign(0, -1), 1e-300, -1e-300}[i%4] },
		"signed":    func(int) float64 { return r.NormFloat64() * 1e6 },
		"inf":       func(i int) float64 { return []float64{math.Inf(1), math.Inf(-1), 3, r.Float64()}[i%4] },
		"equal":     func(int) float64 { return 12.5 },
		"wide":      func(int) float64 { return math.Exp(r.NormFloat64() * 50) },
		"integral":  func(int) float64 { return float64(r.IntN(1 << 20)) },
		"one-apart": func(i int) float64 { return math.Nextafter(1, 2) * float64(1+i%2) },
	}
	for name, g := range gen {
		for _, n := range []int{0, 1, 5, radixMin - 1, radixMin, 100_000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = g(i)
			}
			want := slices.Clone(xs)
			slices.Sort(want)
			sortFloat64s(xs)
			for i := range xs {
				if xs[i] != want[i] {
					t.Fatalf("%s n=%d: [%d] = %v, want %v", name, n, i, xs[i], want[i])
				}
			}
		}
	}
}

func BenchmarkSortFloat64s(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float64, 822_168) // the 259 MB bench run's token gaps
	for i := range src {
		src[i] = 15 + 10*r.ExpFloat64()
	}
	xs := make([]float64, len(src))
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(xs, src)
			sortFloat64s(xs)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			copy(xs, src)
			slices.Sort(xs)
		}
	})
}
