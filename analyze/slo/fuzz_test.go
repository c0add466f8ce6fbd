package slo

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzParseSLOAndGates: the SLO and gate parsers never panic; a syntax
// error is an *SLOError pointing inside the input (1 … runes+1); a parsed
// gate's text parses again to the same gate.
func FuzzParseSLOAndGates(f *testing.F) {
	for _, s := range []string{
		"ttft<=500ms, tpot<=15ms, e2e<=2s", "ttft:500 tpot:15 e2el:2000", "fluidity(500ms,50ms)>=0.9",
		"p99(ttft)<=800ms", "p99(e2e | osl<300 & isl>=8tok)<=3s", "goodput>=99%", "goodput_rate>=2.5/s",
		"throughput>=1000tok/s", "capacity(0.9)>=4/s", "p99(ttft) <= 1.10 * baseline", "goodput >= baseline - 0.01",
		"p1(fluidity(1s,50ms))>=0.9\nerror_rate<=1%", "µ", "p99(ttft)<=", "((", "1e309ms",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		check := func(err error) {
			if err == nil {
				return
			}
			var se *SLOError
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %v is not an *SLOError", s, err)
			}
			if n := utf8.RuneCountInString(s); se.Pos < 1 || se.Pos > n+1 {
				t.Fatalf("%q: position %d outside 1…%d", s, se.Pos, n+1)
			}
		}
		_, err := ParseSLO(s)
		check(err)
		gs, err := ParseGates(s)
		check(err)
		for _, g := range gs {
			again, err := ParseGates(g.Text)
			if err != nil || len(again) != 1 {
				t.Fatalf("%q: gate %q does not parse alone: %v", s, g.Text, err)
			}
			a := again[0]
			if a.Metric != g.Metric || a.Stat != g.Stat || a.P != g.P || a.Op != g.Op || a.Bound != g.Bound || a.Deadlines != g.Deadlines || len(a.Conds) != len(g.Conds) {
				t.Fatalf("%q: %q parses to %+v alone, %+v in the list", s, g.Text, a, g)
			}
		}
	})
}
