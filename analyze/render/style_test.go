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

// TestColumnUnit: a column takes the unit of its upper quartile; a cell
// that calls for a larger unit carries its own.
func TestColumnUnit(t *testing.T) {
	for _, c := range []struct {
		vals []float64
		want string
	}{
		{[]float64{174.6, 9999}, "ms"},
		{[]float64{3627, 6976, 20556}, "s"},                                       // upper quartile: index ⌈0.75·2⌉ = 2
		{[]float64{9336, 2485, 5649, 9149, 12130, 13800, 15490, 15770}, "s"},      // index ⌈5.25⌉ = 6: 13800
		{[]float64{301.6, 3390, 1.835, 113.2, 119.7, 126.9, 225.4, 119781}, "ms"}, // the ITL row: 3390 at index 6; the max is an outlier
		{[]float64{410.9, 72947, 80000, math.Inf(1), math.NaN()}, "s"},            // ∞ and – do not count
		{[]float64{1, 600000, 700000}, "min"},
		{nil, "ms"},
	} {
		if got := ColumnUnit(c.vals...); got != c.want {
			t.Errorf("ColumnUnit(%v) = %q, want %q", c.vals, got, c.want)
		}
	}
	for _, c := range []struct {
		ms         float64
		unit, want string
	}{
		{113.2, "ms", "113.2"},
		{9999, "ms", "9999"},
		{119781, "ms", "119.8 s"}, // the ITL max in a column of ms
		{3627, "s", "3.627"},      // a smaller value keeps the column's unit
		{119781, "s", "119.8"},
		{700000, "s", "11.67 min"},
		{119781, "min", "1.996"},
		{math.NaN(), "s", "–"},
	} {
		if got := Cell(c.ms, c.unit); got != c.want {
			t.Errorf("Cell(%v, %s) = %q, want %q", c.ms, c.unit, got, c.want)
		}
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
		{0.05128, "5.13%"},
		{0.00423, "0.42%"}, {0.000093, "0.0093%"}, {0.5, "50%"}, {3.6451, "364.5%"},
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
	if got, want := gs[0].line("warning ", "run", LineLimit, false, false), "warning itl_per_message on 16 runs: tokens per message unknown"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := gs[1].line("warning ", "metric", LineLimit, false, false), "warning few_samples [TTFT, E2E]: P99 rests on 20 samples (the first of 2)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
