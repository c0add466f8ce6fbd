package stats

import (
	"math"
	"strings"
	"testing"
)

func seq(from, to float64) []float64 {
	var out []float64
	for x := from; x <= to; x++ {
		out = append(out, x)
	}
	return out
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestPercentileBound: the one-sided 97.5% bounds of the median of 1…100
// are the ends of its 95% interval (x(40), x(61); see TestQuantileCI); a
// P99 of ten values has no order-statistic upper bound, so the seeded
// bootstrap gives one between the two largest values, the same on every
// call.
func TestPercentileBound(t *testing.T) {
	xs := seq(1, 100)
	if lo, boot := PercentileBound(xs, 0.5, Linear, 0.025, false); lo != 40 || boot {
		t.Errorf("lower bound %v (boot %v), want 40 from order statistics", lo, boot)
	}
	if hi, boot := PercentileBound(xs, 0.5, Linear, 0.025, true); hi != 61 || boot {
		t.Errorf("upper bound %v (boot %v), want 61", hi, boot)
	}
	// P99 of ten values: the order statistics give a lower bound (x(9):
	// P(B ≤ 8) = 0.0043 ≤ 0.05 < P(B ≤ 9) = 0.096 for B ~ Bin(10, 0.99))
	// but no upper one (0.99¹⁰ > 0.05); the bootstrap reaches the max there
	// (it cannot see past it), so the side is unbounded, not the max
	ten := seq(1, 10)
	if lo, boot := PercentileBound(ten, 0.99, Linear, 0.05, false); lo != 9 || boot {
		t.Errorf("P99 of 10 values: lower bound %v (boot %v), want 9", lo, boot)
	}
	if hi, boot := PercentileBound(ten, 0.99, Linear, 0.05, true); !boot || !math.IsInf(hi, 1) {
		t.Errorf("P99 of 10 values: upper bound %v (boot %v), want +Inf", hi, boot)
	}
	// one value bounds nothing on either side
	if lo, _ := PercentileBound([]float64{5}, 0.5, Linear, 0.05, false); !math.IsInf(lo, -1) {
		t.Errorf("one value: lower bound %v, want -Inf", lo)
	}
	if hi, _ := PercentileBound([]float64{5}, 0.5, Linear, 0.05, true); !math.IsInf(hi, 1) {
		t.Errorf("one value: upper bound %v, want +Inf", hi)
	}
	// so two samples of one value each differ by nothing significant
	if d := PercentileDiff([]float64{7}, []float64{5}, 0.5, Linear, Linear, 0.05, 1, 0); d.Up() || d.Down() {
		t.Errorf("n=1 against n=1: %+v", d)
	}
	if b, boot := PercentileBound(nil, 0.5, Linear, 0.05, true); !math.IsNaN(b) || !boot {
		t.Errorf("empty sample: %v %v", b, boot)
	}
}

func TestPercentileTestName(t *testing.T) {
	for _, c := range []struct {
		boot []bool
		want string
	}{
		{[]bool{false, false}, "order-statistic bounds"},
		{[]bool{true, false}, "order-statistic and bootstrap bounds (B=2000)"},
		{[]bool{true, true, true, true}, "bootstrap bounds (B=2000)"},
	} {
		if got := PercentileTestName(c.boot...); got != c.want {
			t.Errorf("%v: %q, want %q", c.boot, got, c.want)
		}
	}
}

// TestPercentileDiff: medians of 51…150 against 1…100 at alpha 0.025: the
// candidate's bounds are x(40)+50 = 90 and x(61)+50 = 111, the baseline's
// 40 and 61, so the difference lies in [90 − 61, 111 − 40] = [29, 71]:
// established higher. The same samples the other way round give [−71,
// −29]: lower. Against itself the interval holds 0.
func TestPercentileDiff(t *testing.T) {
	base := seq(1, 100)
	cand := seq(51, 150)
	d := PercentileDiff(cand, base, 0.5, Linear, Linear, 0.025, 1, 0)
	if d.Lo != 29 || d.Hi != 71 || d.Estimate != 50 || !d.Up() || d.Down() || d.Test != "order-statistic bounds" {
		t.Errorf("%+v", d)
	}
	d = PercentileDiff(base, cand, 0.5, Linear, Linear, 0.025, 1, 0)
	if d.Lo != -71 || d.Hi != -29 || d.Up() || !d.Down() {
		t.Errorf("reversed: %+v", d)
	}
	d = PercentileDiff(base, base, 0.5, Linear, Linear, 0.025, 1, 0)
	if d.Lo != -21 || d.Hi != 21 || d.Up() || d.Down() {
		t.Errorf("itself: %+v", d)
	}
	// a gate's line K·base + D: 1.5 × 40…61 + 0 against 90…111
	d = PercentileDiff(cand, base, 0.5, Linear, Linear, 0.025, 1.5, 0)
	if d.Lo != 90-1.5*61 || d.Hi != 111-1.5*40 {
		t.Errorf("K=1.5: %+v", d)
	}
}

// TestWelch: {3,4,5,6,7} against {1,2,3,4,5}: means 5 and 3, variances
// 2.5 each, se² = 2.5/5 + 2.5/5 = 1, t = 2, ν = 1/((0.5²)/4 + (0.5²)/4) =
// 8. One-sided p = 1 − T₈(2) = 0.0402581 (numerical integration of the
// t₈ density from 2 to 200); t₈,0.95 = 1.859548 (t tables), so the bounds
// are 2 ∓ 1.859548.
func TestWelch(t *testing.T) {
	w := Welch([]float64{3, 4, 5, 6, 7}, []float64{1, 2, 3, 4, 5}, 0.05, 1, 0)
	if w.Test != "welch t" || w.Estimate != 2 || !near(w.PUp, 0.0402581, 1e-6) || !near(w.PDown, 1-0.0402581, 1e-6) {
		t.Errorf("%+v", w)
	}
	if !near(w.Lo, 2-1.859548, 1e-5) || !near(w.Hi, 2+1.859548, 1e-5) || !w.Up() || w.Down() {
		t.Errorf("bounds %+v", w)
	}
	// at alpha 0.025 the same difference is not established (p 0.040)
	if w := Welch([]float64{3, 4, 5, 6, 7}, []float64{1, 2, 3, 4, 5}, 0.025, 1, 0); w.Up() || w.Lo > 0 {
		t.Errorf("alpha 0.025: %+v", w)
	}
	if w := Welch([]float64{1}, []float64{1, 2}, 0.05, 1, 0); !strings.HasPrefix(w.Test, "none") || w.Up() || w.Down() {
		t.Errorf("one value: %+v", w)
	}
	if w := Welch([]float64{2, 2}, []float64{1, 1}, 0.05, 1, 0); w.PUp != 0 || !w.Up() || w.Lo != 1 {
		t.Errorf("constant samples: %+v", w)
	}
}

// TestAgrestiCaffo: 101 good of 150 against 150 of 150 (Bedrock against
// Groq under ttft<=1s, see analyze/slo): p̃ = 102/152 and 151/152, se =
// 0.0386683, difference −0.3223684, z = −8.33675; the bounds are the
// difference ∓ 1.6448536·se = [−0.3859722, −0.2587646] (computed by hand
// in float64).
func TestAgrestiCaffo(t *testing.T) {
	ac := AgrestiCaffo(101, 150, 150, 150, 0.05, 1, 0)
	if ac.Test != "agresti-caffo" || !near(ac.Estimate, -0.3223684, 1e-7) || !near(ac.Lo, -0.3859722, 1e-7) || !near(ac.Hi, -0.2587646, 1e-7) {
		t.Errorf("%+v", ac)
	}
	if !ac.Down() || ac.Up() || ac.PDown > 1e-15 {
		t.Errorf("verdict %+v", ac)
	}
	if ac := AgrestiCaffo(0, 0, 1, 2, 0.05, 1, 0); !strings.HasPrefix(ac.Test, "none") || ac.Down() || ac.Up() {
		t.Errorf("no trials: %+v", ac)
	}
}
