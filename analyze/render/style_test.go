package render

import (
	"math"
	"strings"
	"testing"
)

// TestDuration: the thresholds of docs/OUTPUT.md, computed by hand.
func TestDuration(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		want string
	}{
		{0.037, "0.037 ms"},
		{44.94, "44.94 ms"},
		{9999, "9999 ms"},        // below 10 s: ms
		{9999.4, "9999 ms"},      // still below 10 s
		{10000, "10.00 s"},       // from 10 s: s
		{20441, "20.44 s"},       // the demo's P99 E2E
		{119781, "119.8 s"},      // the 119781 ms: 2 min, below 10 min
		{599999, "600.0 s"},      // just below 10 min
		{600000, "10.00 min"},    // from 10 min: min
		{7_200_000, "120.0 min"}, // 2 h
		{-15000, "-15.00 s"},     // by magnitude
		{math.NaN(), "–"},
	} {
		if got := Duration(c.ms); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.ms, got, c.want)
		}
	}
}

// TestColumnUnit: a column takes the unit of its largest finite value,
// and every cell of it is written in that unit.
func TestColumnUnit(t *testing.T) {
	for _, c := range []struct {
		vals []float64
		want string
	}{
		{[]float64{174.6, 9999}, "ms"},
		{[]float64{3627, 6976, 20556}, "s"},
		{[]float64{410.9, 72947, math.Inf(1), math.NaN()}, "s"}, // ∞ and – do not scale a column
		{[]float64{1, 600000}, "min"},
		{nil, "ms"},
	} {
		if got := ColumnUnit(c.vals...); got != c.want {
			t.Errorf("ColumnUnit(%v) = %q, want %q", c.vals, got, c.want)
		}
	}
	if got := Num(InUnit(3627, "s")); got != "3.627" {
		t.Errorf("3627 ms in s = %q, want 3.627", got)
	}
	if got := Num(InUnit(119781, "min")); got != "1.996" {
		t.Errorf("119781 ms in min = %q, want 1.996", got)
	}
}

// TestPct: one format for every fraction and rate.
func TestPct(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0.9333, "93.33%"},
		{0.7, "70%"},
		{0, "0%"},
		{1, "100%"},
		{0.3267, "32.67%"},
		{0.05128, "5.128%"},
		{0.00423, "0.423%"},
		{0.99999, "99.99%"}, // never rounds up to 100%
		{math.NaN(), "–"},
	} {
		if got := Pct(c.v); got != c.want {
			t.Errorf("Pct(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0.4856, "+48.56%"}, {-1, "-100%"}, {0, "+0%"}, {3.6451, "+364.5%"}, {-0.0078, "-0.78%"}, {math.NaN(), "?"},
	} {
		if got := SignedPct(c.v); got != c.want {
			t.Errorf("SignedPct(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestCutWords: a cut falls between words, marked " …", within the limit.
func TestCutWords(t *testing.T) {
	s := "the reported TPOT and ITL are about half the decode time per token, TTFT and E2E end on SSE lines"
	for _, c := range []struct {
		limit int
		want  string
	}{
		{200, s},
		{40, "the reported TPOT and ITL are about …"},
		{70, "the reported TPOT and ITL are about half the decode time per token …"}, // the comma before the cut is dropped
		{10, "abcdefghi…"}, // one word longer than the limit
	} {
		in := s
		if c.limit == 10 {
			in = "abcdefghijklmnop qrs"
		}
		got := CutWords(in, c.limit)
		if got != c.want {
			t.Errorf("CutWords(%d) = %q, want %q", c.limit, got, c.want)
		}
		if n := len([]rune(got)); n > c.limit {
			t.Errorf("CutWords(%d) is %d characters long", c.limit, n)
		}
		if i := strings.Index(got, "…"); i > 0 && c.limit != 10 && got[i-1] != ' ' {
			t.Errorf("CutWords(%d) cut mid-word: %q", c.limit, got)
		}
	}
}

// TestGroupWarnings: sixteen runs' identical warnings are one line with a
// count; differing messages say which one is shown.
func TestGroupWarnings(t *testing.T) {
	var codes, subjects, msgs []string
	for i := 0; i < 16; i++ {
		codes = append(codes, "itl_per_message")
		subjects = append(subjects, "run"+string(rune('a'+i)))
		msgs = append(msgs, "tokens per message unknown")
	}
	codes = append(codes, "few_samples", "few_samples")
	subjects = append(subjects, "TTFT", "E2E")
	msgs = append(msgs, "P99 rests on 20 samples", "P99 rests on 39 samples")
	gs := groupWarnings(len(codes), func(i int) string { return codes[i] }, func(i int) string { return subjects[i] }, func(i int) string { return msgs[i] })
	if len(gs) != 2 {
		t.Fatalf("%d groups, want 2", len(gs))
	}
	if got, want := gs[0].line("warning ", "run", false), "warning itl_per_message on 16 runs: tokens per message unknown"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := gs[1].line("warning ", "metric", false), "warning few_samples [TTFT, E2E]: P99 rests on 20 samples (the first of 2)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
