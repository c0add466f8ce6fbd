package stats

import (
	"math"
	"testing"
)

func TestLinearMatchesNumpy(t *testing.T) {
	// Expected values computed by hand with numpy's rule h = (n−1)p.
	cases := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3}, 0.5, 2}, // gonum LinInterp would give 1.5
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{10, 20, 30, 40, 50}, 0.9, 46},    // h=3.6 → 40+0.6·10
		{[]float64{10, 20, 30, 40, 50}, 0.99, 49.6}, // h=3.96
		{[]float64{7}, 0.99, 7},
		{[]float64{1, 2}, 0, 1},
		{[]float64{1, 2}, 1, 2},
	}
	for _, c := range cases {
		got := Percentile(c.xs, c.p, Linear)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("linear p%v of %v = %v, want %v", c.p, c.xs, got, c.want)
		}
	}
	if !math.IsNaN(Percentile(nil, 0.5, Linear)) {
		t.Error("empty sample must give NaN")
	}
}

func TestFloorRank(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	// MLPerf: sorted[floor(n·p)]: p90 → index 9 → 10; p50 → index 5 → 6.
	if got := Percentile(xs, 0.9, FloorRank); got != 10 {
		t.Errorf("floor p90 = %v, want 10", got)
	}
	if got := Percentile(xs, 0.5, FloorRank); got != 6 {
		t.Errorf("floor p50 = %v, want 6", got)
	}
	if got := Percentile(xs, 1, FloorRank); got != 10 {
		t.Errorf("floor p100 = %v, want 10 (clamped)", got)
	}
}
