package analyze

import (
	"math"
	"testing"
)

func TestSummarizeHandComputed(t *testing.T) {
	// Five 6s and five 16s: mean 11; population std 5; sample std √(250/9).
	xs := []float64{6, 6, 6, 6, 6, 16, 16, 16, 16, 16}
	pop := Summarize(xs, PercentileLinear, 0)
	if pop.Mean != 11 || pop.Std != 5 {
		t.Fatalf("population: mean %v std %v, want 11 and 5", pop.Mean, pop.Std)
	}
	smp := Summarize(xs, PercentileLinear, 1)
	if want := math.Sqrt(250.0 / 9); math.Abs(smp.Std-want) > 1e-12 {
		t.Fatalf("sample std %v, want %v", smp.Std, want)
	}
	// h = 9·0.5 = 4.5 → between x[4]=6 and x[5]=16 → 11.
	if smp.P50 != 11 || smp.Min != 6 || smp.Max != 16 || smp.N != 10 {
		t.Fatalf("summary %+v", smp)
	}
	// p90: h = 8.1 → 16.
	if smp.P90 != 16 {
		t.Fatalf("p90 %v", smp.P90)
	}
}

func TestSummarizeEdgeCases(t *testing.T) {
	empty := Summarize(nil, PercentileLinear, 1)
	if empty.N != 0 || !math.IsNaN(empty.Mean) || !math.IsNaN(empty.P99) {
		t.Fatalf("empty: %+v", empty)
	}
	one := Summarize([]float64{3}, PercentileLinear, 1)
	if one.Mean != 3 || !math.IsNaN(one.Std) || one.P99 != 3 {
		t.Fatalf("one value: %+v (sample std of one value is undefined)", one)
	}
	withNaN := Summarize([]float64{math.NaN(), 1, 3}, PercentileLinear, 0)
	if withNaN.N != 2 || withNaN.Mean != 2 {
		t.Fatalf("NaN must be ignored: %+v", withNaN)
	}
}

func TestPairwiseSumMatchesNaiveOnIntegers(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 127, 128, 129, 1000, 4097} {
		xs := make([]float64, n)
		want := 0.0
		for i := range xs {
			xs[i] = float64(i%13 + 1)
			want += xs[i]
		}
		if got := pairwiseSum(xs); got != want {
			t.Errorf("n=%d: %v != %v", n, got, want)
		}
	}
}
