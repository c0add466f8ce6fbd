package analyze

import (
	"errors"
	"testing"
)

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO("ttft<=500ms, tpot<=15ms,e2e<2s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Constraint{
		{Metric: "ttft", Limit: 500, Text: "ttft<=500ms"},
		{Metric: "tpot", Limit: 15, Text: "tpot<=15ms"},
		{Metric: "e2e", Strict: true, Limit: 2000, Text: "e2e<2s"},
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
	le := Constraint{Metric: "ttft", Limit: 500}
	lt := Constraint{Metric: "ttft", Limit: 500, Strict: true}
	if !le.Met(500) || lt.Met(500) || !lt.Met(499.9) || le.Met(500.1) {
		t.Fatal("inclusive/strict bounds wrong")
	}
}
