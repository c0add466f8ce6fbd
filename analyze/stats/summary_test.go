package stats

import (
	"math"
	"testing"
)

func TestSummarizeHandComputed(t *testing.T) {
	// Five 6s and five 16s: mean 11; population std 5; sample std √(250/9).
	xs := []float64{6, 6, 6, 6, 6, 16, 16, 16, 16, 16}
	pop := Summarize(xs, nil, Linear, 0)
	if pop.Mean != 11 || pop.Std != 5 {
		t.Fatalf("population: mean %v std %v, want 11 and 5", pop.Mean, pop.Std)
	}
	smp := Summarize(xs, nil, Linear, 1)
	if want := math.Sqrt(250.0 / 9); math.Abs(smp.Std-want) > 1e-12 {
		t.Fatalf("sample std %v, want %v", smp.Std, want)
	}
	// h = 9·0.5 = 4.5 → between x[4]=6 and x[5]=16 → 11.
	if smp.Value(0.5) != 11 || smp.Min != 6 || smp.Max != 16 || smp.N != 10 {
		t.Fatalf("summary %+v", smp)
	}
	// p90: h = 8.1 → 16.
	if smp.Value(0.9) != 16 {
		t.Fatalf("p90 %v", smp.Value(0.9))
	}
}

func TestSummarizeEdgeCases(t *testing.T) {
	empty := Summarize(nil, nil, Linear, 1)
	if empty.N != 0 || !math.IsNaN(empty.Mean) || !math.IsNaN(empty.Value(0.99)) {
		t.Fatalf("empty: %+v", empty)
	}
	one := Summarize([]float64{3}, nil, Linear, 1)
	if one.Mean != 3 || !math.IsNaN(one.Std) || one.Value(0.99) != 3 {
		t.Fatalf("one value: %+v (sample std of one value is undefined)", one)
	}
	withNaN := Summarize([]float64{math.NaN(), 1, 3}, nil, Linear, 0)
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

// TestSummaryPercentileList: a summary holds the percentiles asked for, in
// order, each with its interval, and writes them under QuantileKey names
// (default keys unchanged: p50 … p99, p50_ci95 …).
func TestSummaryPercentileList(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	s := Summarize(xs, []float64{0.25, 0.99, 0.999}, Linear, 1)
	// numpy: h = 999·0.25 = 249.75 → 250.75; h = 989.01 → 990.01;
	// h = 998.001 → 999.001.
	want := []float64{250.75, 990.01, 999.001}
	for i, q := range s.Quantiles {
		if math.Abs(q.Value-want[i]) > 1e-9 {
			t.Errorf("quantile %v = %v, want %v", q.P, q.Value, want[i])
		}
	}
	// Intervals from exact binomial sums (Python fractions, as in
	// TestQuantileCI): P25 [223, 278], P99 [983, 997], P99.9 [997, –]: P99.9 cannot be
	// bounded above with 1000 samples.
	if q, _ := s.Quantile(0.99); q.Lo != 983 || q.Hi != 997 {
		t.Errorf("P99 interval [%v, %v]", q.Lo, q.Hi)
	}
	if q, _ := s.Quantile(0.999); !math.IsNaN(q.Hi) {
		t.Errorf("P99.9 upper bound %v, want NaN", q.Hi)
	}
	if !math.IsNaN(s.Value(0.5)) {
		t.Error("a percentile not asked for must be NaN")
	}
	for p, key := range map[float64]string{0.5: "p50", 0.99: "p99", 0.999: "p99_9", 0.001: "p0_1", 0.25: "p25"} {
		if got := QuantileKey(p); got != key {
			t.Errorf("QuantileKey(%v) = %q, want %q", p, got, key)
		}
	}
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"n":1000,"mean":500.5,"std":288.8194360957494,"min":1,"p25":250.75,"p99":990.01,"p99_9":999.001,"max":1000,` +
		`"p25_ci95":[223,278],"p99_ci95":[983,997],"p99_9_ci95":[997,null]}`
	if string(b) != wantJSON {
		t.Errorf("JSON\n%s\nwant\n%s", b, wantJSON)
	}
	d, _ := Summarize(nil, nil, Linear, 1).MarshalJSON()
	if want := `{"n":0,"mean":null,"std":null,"min":null,"p50":null,"p90":null,"p95":null,"p99":null,"max":null,"p50_ci95":[null,null],"p90_ci95":[null,null],"p95_ci95":[null,null],"p99_ci95":[null,null]}`; string(d) != want {
		t.Errorf("empty JSON %s", d)
	}
}

func TestParsePercentiles(t *testing.T) {
	got, err := ParsePercentiles("50, 90,p99,99.9")
	if err != nil || len(got) != 4 || got[0] != 0.5 || got[2] != 0.99 || QuantileKey(got[3]) != "p99_9" {
		t.Fatalf("%v, %v", got, err)
	}
	if got, err := ParsePercentiles(""); got != nil || err != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"0", "100", "90,50", "50,50", "x", "50,,90",
		"99.9999999999,99.99999999999", "99.9999999999", "50,50.0000000000001", "0.00000000001"} {
		if _, err := ParsePercentiles(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
