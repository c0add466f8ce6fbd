package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSelectRanksMatchesSort: every rank SelectRanks reads is the sorted
// copy's value there, on clustered, skewed, duplicated and signed samples
// (buckets split again past gatherMax included), and xs is left as it was.
func TestSelectRanksMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func(i int) float64{
		"itl-like":  func(int) float64 { return 20 + rng.NormFloat64()*3 },
		"zeros":     func(i int) float64 { return []float64{0, 0, 0, 41.5}[i%4] },
		"heavy":     func(int) float64 { return math.Exp(rng.NormFloat64() * 4) },
		"signed":    func(int) float64 { return rng.NormFloat64() },
		"one value": func(int) float64 { return 7 },
		"with nan": func(i int) float64 {
			if i%97 == 0 {
				return math.NaN()
			}
			return float64(i % 1000)
		},
		"quantized ns": func(int) float64 { return float64(rng.IntN(2000)) / 1e6 },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 100, 5000, gatherMax + 12345} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = gen(i)
			}
			orig := append([]float64(nil), xs...)
			sorted := SortedCopy(xs)
			if len(sorted) == 0 {
				continue
			}
			ranks := []int{0, len(sorted) - 1, len(sorted) / 2, len(sorted) * 99 / 100, len(sorted) / 3}
			got := SelectRanks(xs, ranks)
			for i, r := range ranks {
				if math.Float64bits(got[i]) != math.Float64bits(sorted[r]) {
					t.Fatalf("%s n=%d rank %d: %v, sorted %v", name, n, r, got[i], sorted[r])
				}
			}
			for i := range xs {
				if math.Float64bits(xs[i]) != math.Float64bits(orig[i]) {
					t.Fatalf("%s: xs changed at %d", name, i)
				}
			}
		}
	}
}

// TestSummarizeLargeMatchesSorted: a summary by selection gives the sorted
// summary's count, extremes, percentiles and intervals exactly, and its
// mean and std to 1e-12 relative (summed in another order).
func TestSummarizeLargeMatchesSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float64, SelectMin+777)
	for i := range xs {
		xs[i] = float64(int64(20e6+rng.NormFloat64()*4e6)) / 1e6
	}
	ps := []float64{0.5, 0.9, 0.95, 0.99, 0.999}
	for _, m := range Methods {
		got := Summarize(xs, ps, m, 1)
		s := SortedCopy(xs)
		want := Summary{N: len(s), Mean: mean(s), Min: s[0], Max: s[len(s)-1]}
		want.Std = stddev(s, want.Mean, 1)
		if got.N != want.N || got.Min != want.Min || got.Max != want.Max {
			t.Fatalf("%s: %+v, want %+v", m, got, want)
		}
		for _, f := range [][2]float64{{got.Mean, want.Mean}, {got.Std, want.Std}} {
			if math.Abs(f[0]-f[1]) > 1e-12*math.Abs(f[1]) {
				t.Errorf("%s: mean/std %v, sorted %v", m, f[0], f[1])
			}
		}
		for i, p := range ps {
			lo, hi := QuantileCI(s, p, CILevel)
			q := got.Quantiles[i]
			if q.Value != Percentile(s, p, m) || q.Lo != lo || q.Hi != hi {
				t.Errorf("%s p%g: %+v, sorted %v [%v, %v]", m, p, q, Percentile(s, p, m), lo, hi)
			}
		}
	}
}

// FuzzSelectRanks: on any sample, SelectRanks reads what a sorted copy holds.
func FuzzSelectRanks(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, uint16(3))
	f.Fuzz(func(t *testing.T, raw []byte, r uint16) {
		var xs []float64
		for i := 0; i+8 <= len(raw); i += 8 {
			var u uint64
			for j := range 8 {
				u |= uint64(raw[i+j]) << (8 * j)
			}
			xs = append(xs, math.Float64frombits(u))
		}
		s := SortedCopy(xs)
		if len(s) == 0 {
			return
		}
		rank := int(r) % len(s)
		got := SelectRanks(xs, []int{rank})[0]
		if sortKey(got) != sortKey(s[rank]) && !(got == 0 && s[rank] == 0) {
			t.Fatalf("rank %d of %v: %v, sorted %v", rank, xs, got, s[rank])
		}
	})
}

// BenchmarkSelectRanks: the ranks a summary of 41M gaps reads.
func BenchmarkSelectRanks(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float64, 1<<23)
	for i := range xs {
		xs[i] = float64(int64(40e6+rng.NormFloat64()*8e6)) / 1e6
	}
	ranks := []int{0, len(xs) / 2, len(xs) * 9 / 10, len(xs) * 99 / 100, len(xs) - 1}
	for b.Loop() {
		SelectRanks(xs, ranks)
	}
}
