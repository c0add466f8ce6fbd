package jsonscan

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkFloat fails when Float gives a value for mant·10^exp10 that is not
// strconv.ParseFloat's; it reports whether Float gave one.
func checkFloat(t *testing.T, mant uint64, exp10 int, neg bool) bool {
	t.Helper()
	got, ok := Float(mant, exp10, neg)
	if !ok {
		return false
	}
	s := strconv.FormatUint(mant, 10) + "e" + strconv.Itoa(exp10)
	if neg {
		s = "-" + s
	}
	want, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("Float(%s) = %v (%x), strconv %v (%x) %v", s, got, math.Float64bits(got), want, math.Float64bits(want), err)
	}
	return true
}

// TestFloat: Float agrees with strconv.ParseFloat bit for bit on the
// numbers it decides — Python's 17-digit floats (each double's shortest
// repr, the vLLM/SGLang case, at every exponent of the table), random
// mantissas of 1 to 19 digits, the halfway cases between doubles and the
// ends of the table — and decides nearly all of those within its range.
func TestFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	decided, tried := 0, 0
	for range 200_000 {
		// a double's shortest decimal (Python's repr), back to mant·10^e
		x := math.Float64frombits(rng.Uint64() & (1<<63 - 1)) // any positive double
		if math.IsInf(x, 0) || math.IsNaN(x) || x == 0 {
			continue
		}
		s := strconv.FormatFloat(x, 'e', -1, 64)
		mant, exp10, ok := splitE(s)
		if !ok || exp10 < FloatMinExp10 || exp10 > FloatMaxExp10 {
			continue
		}
		tried++
		if checkFloat(t, mant, exp10, rng.IntN(2) == 0) {
			decided++
		}
	}
	for range 200_000 {
		digits := 1 + rng.IntN(19)
		mant := rng.Uint64() % pow10u(digits)
		checkFloat(t, mant, FloatMinExp10+rng.IntN(FloatMaxExp10-FloatMinExp10+1), false)
	}
	// halfway between two doubles: 2^53+1 and its neighbours, scaled
	for _, m := range []uint64{1<<53 + 1, 1<<53 + 3, 1<<54 + 2, 9007199254740993, 9007199254740995} {
		for e := -5; e <= 5; e++ {
			checkFloat(t, m, e, false)
		}
	}
	for _, e := range []int{FloatMinExp10, FloatMaxExp10, 0, -1, 1, -27, -28, 22, 23} {
		for _, m := range []uint64{1, 9, 12345678901234567, math.MaxUint64, 1 << 63} {
			checkFloat(t, m, e, false)
		}
	}
	if _, ok := Float(1, FloatMinExp10-1, false); ok {
		t.Error("outside the table")
	}
	// ~17-digit seconds as vLLM writes them: every one decided
	for range 10_000 {
		v := rng.Float64() * 0.1
		mant, exp10, _ := splitE(strconv.FormatFloat(v, 'e', -1, 64))
		if !checkFloat(t, mant, exp10, false) {
			t.Fatalf("%v not decided", v)
		}
	}
	t.Logf("decided %d of %d shortest-repr doubles in range", decided, tried)
	if tried == 0 || float64(decided) < 0.95*float64(tried) {
		t.Errorf("decided %d of %d shortest-repr doubles", decided, tried)
	}
}

// FuzzFloat: whatever the mantissa and exponent, Float's value is
// strconv's when it gives one.
func FuzzFloat(f *testing.F) {
	f.Add(uint64(22512345678901234), -18, false)
	f.Add(uint64(1<<53+1), 0, true)
	f.Fuzz(func(t *testing.T, mant uint64, exp10 int, neg bool) {
		checkFloat(t, mant, exp10%200, neg)
	})
}

// splitE splits strconv's 'e' format (d.ddde±xx) into its digits and
// power of ten.
func splitE(s string) (mant uint64, exp10 int, ok bool) {
	digits := 0
	i := 0
	for ; i < len(s) && s[i] != 'e'; i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			mant = mant*10 + uint64(c-'0')
			digits++
		}
	}
	e, err := strconv.Atoi(s[i+1:])
	if err != nil || digits > 19 {
		return 0, 0, false
	}
	return mant, e - (digits - 1), true
}

func pow10u(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}
