package slo

import (
	"errors"
	"math"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
)

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO("ttft<=500ms, tpot<=15ms,e2e<2s")
	if err != nil {
		t.Fatal(err)
	}
	want := []analyze.Constraint{
		{Metric: analyze.LookupMetric("ttft"), Limit: 500, Text: "ttft<=500ms"},
		{Metric: analyze.LookupMetric("tpot"), Limit: 15, Text: "tpot<=15ms"},
		{Metric: analyze.LookupMetric("e2e"), Strict: true, Limit: 2000, Text: "e2e<2s"},
	}
	if len(s.Constraints) != len(want) {
		t.Fatalf("got %+v", s.Constraints)
	}
	for i, c := range want {
		if s.Constraints[i] != c {
			t.Errorf("constraint %d = %+v, want %+v", i, s.Constraints[i], c)
		}
	}
	us, err := ParseSLO("ttfo <= 250000 us")
	if err != nil || us.Constraints[0].Limit != 250 {
		t.Fatalf("µs: %+v %v", us, err)
	}
}

func TestParseSLOErrorsPointAtTheCharacter(t *testing.T) {
	cases := []struct {
		in  string
		pos int
	}{
		{"ttft<=500", 10},            // missing unit, after the number
		{"ttft<=500ms,itl<=5ms", 13}, // unknown metric
		{"ttft=>500ms", 5},           // bad operator
		{"ttft<=ms", 7},              // missing number
		{"ttft<=5ms,ttft<=6ms", 11},  // duplicate
		{"ttft<=5 min", 9},           // unknown unit
	}
	for _, c := range cases {
		_, err := ParseSLO(c.in)
		var se *SLOError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want *SLOError", c.in, err)
			continue
		}
		if se.Pos != c.pos {
			t.Errorf("%q: position %d, want %d (%v)", c.in, se.Pos, c.pos, err)
		}
	}
}

func TestConstraintMet(t *testing.T) {
	le := analyze.Constraint{Metric: analyze.LookupMetric("ttft"), Limit: 500}
	lt := analyze.Constraint{Metric: analyze.LookupMetric("ttft"), Limit: 500, Strict: true}
	if !le.Met(500) || lt.Met(500) || !lt.Met(499.9) || le.Met(500.1) {
		t.Fatal("inclusive/strict bounds wrong")
	}
}

func TestConstraintCheckVerdicts(t *testing.T) {
	nan := math.NaN()
	one := analyze.RequestMetrics{TTFTMs: 120, TPOTMs: nan, MaxITLMs: nan, OutputTokens: 1, Responses: 1}
	many := analyze.RequestMetrics{TTFTMs: 120, TPOTMs: 30, MaxITLMs: 400, OutputTokens: 10, Responses: 10}
	noTTFT := analyze.RequestMetrics{TTFTMs: nan, TPOTMs: nan, MaxITLMs: nan, OutputTokens: nan}
	s, err := ParseSLO("ttft<=200ms, tpot<=25ms, max_itl<=300ms")
	if err != nil {
		t.Fatal(err)
	}
	ttft, tpot, maxITL := s.Constraints[0], s.Constraints[1], s.Constraints[2]
	cases := []struct {
		name string
		c    analyze.Constraint
		m    *analyze.RequestMetrics
		want analyze.Verdict
	}{
		{"a TTFT within the bound is met", ttft, &one, analyze.Met},
		{"a missing TTFT fails", ttft, &noTTFT, analyze.Failed},
		{"TPOT of a one-token reply is vacuous", tpot, &one, analyze.Vacuous},
		{"TPOT above the bound fails", tpot, &many, analyze.Failed},
		{"max_itl of a one-response reply is vacuous", maxITL, &one, analyze.Vacuous},
		{"a 400 ms stall fails max_itl<=300ms", maxITL, &many, analyze.Failed},
		{"TPOT with an unknown N fails", tpot, &noTTFT, analyze.Failed},
	}
	for _, c := range cases {
		if got := c.c.Check(c.m); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestUnicodeComparisonSigns: ≤ and ≥, which tokentrace's own Markdown
// prints, read as <= and >=, in SLOs and gates; positions after them stay
// character positions.
func TestUnicodeComparisonSigns(t *testing.T) {
	a, err := ParseSLO("ttft≤500ms, e2e ≤ 2s")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ParseSLO("ttft<=500ms, e2e <= 2s")
	for i := range b.Constraints {
		a.Constraints[i].Text, b.Constraints[i].Text = "", ""
		if a.Constraints[i] != b.Constraints[i] {
			t.Errorf("constraint %d: %+v, want %+v", i, a.Constraints[i], b.Constraints[i])
		}
	}
	if a.Constraints[0].Strict {
		t.Error("≤ read as <")
	}
	gs, err := ParseGates("goodput≥0.9, p99(ttft | osl≥100)≤800ms")
	if err != nil {
		t.Fatal(err)
	}
	if gs[0].Op != ">=" || gs[1].Op != "<=" || gs[1].Conds[0].Op != ">=" || gs[1].Bound.Value != 800 {
		t.Errorf("gates %+v", gs)
	}
	_, err = ParseSLO("ttft≤500")
	var se *SLOError
	if !errors.As(err, &se) || se.Pos != 9 {
		t.Errorf("missing unit after ≤: %v (want character 9)", err)
	}
}
