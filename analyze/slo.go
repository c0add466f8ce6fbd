package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SLO is a set of per-request latency constraints that together define a
// good request: a request is good when it completed (status ok) and meets
// every constraint at once.
//
// Grammar (spaces allowed around tokens):
//
//	slo        = constraint { "," constraint }
//	constraint = metric op number unit
//	metric     = "ttft" | "ttfo" | "tpot" | "e2e"
//	op         = "<=" | "<"
//	unit       = "ns" | "us" | "µs" | "ms" | "s"
//
// Example: "ttft<=500ms, tpot<=15ms, e2e<=2s". A unit is required: "500" is
// an error, never silently milliseconds.
type SLO struct {
	Text        string
	Constraints []Constraint
}

// Constraint is one bound: Metric Op LimitMs.
type Constraint struct {
	Metric string  // ttft, ttfo, tpot or e2e
	Strict bool    // true for "<", false for "<="
	Limit  float64 // in milliseconds
	Text   string  // the constraint as written
}

// SLOError is a syntax error in an SLO, with the 1-based character position
// of the offending text.
type SLOError struct {
	Input string
	Pos   int
	Msg   string
}

func (e *SLOError) Error() string {
	return fmt.Sprintf("slo %q: at character %d: %s", e.Input, e.Pos, e.Msg)
}

var sloUnits = map[string]float64{"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1e3}

// ParseSLO parses s by the grammar on SLO. An empty s gives an empty SLO.
// Errors are *SLOError pointing at the offending character.
func ParseSLO(s string) (SLO, error) {
	out := SLO{Text: strings.TrimSpace(s)}
	if out.Text == "" {
		return out, nil
	}
	pos := 0
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		c, err := parseConstraint(s, part, pos)
		if err != nil {
			return SLO{}, err
		}
		if seen[c.Metric] {
			return SLO{}, &SLOError{s, pos + strings.Index(part, c.Metric) + 1, "metric " + c.Metric + " constrained twice"}
		}
		seen[c.Metric] = true
		out.Constraints = append(out.Constraints, c)
		pos += len(part) + 1
	}
	return out, nil
}

func parseConstraint(whole, part string, base int) (Constraint, error) {
	i := 0
	skip := func() {
		for i < len(part) && (part[i] == ' ' || part[i] == '\t') {
			i++
		}
	}
	fail := func(msg string) error { return &SLOError{whole, base + i + 1, msg} }
	skip()
	start := i
	for i < len(part) && (part[i] >= 'a' && part[i] <= 'z' || part[i] >= '0' && part[i] <= '9' || part[i] == '_') {
		i++
	}
	metric := part[start:i]
	switch metric {
	case "ttft", "ttfo", "tpot", "e2e":
	case "":
		return Constraint{}, fail("expected a metric (ttft, ttfo, tpot, e2e)")
	default:
		i = start
		return Constraint{}, fail(fmt.Sprintf("unknown metric %q (want ttft, ttfo, tpot or e2e)", metric))
	}
	skip()
	c := Constraint{Metric: metric}
	switch {
	case strings.HasPrefix(part[i:], "<="):
		i += 2
	case strings.HasPrefix(part[i:], "<"):
		c.Strict = true
		i++
	default:
		return Constraint{}, fail("expected <= or <")
	}
	skip()
	start = i
	for i < len(part) && (part[i] >= '0' && part[i] <= '9' || part[i] == '.') {
		i++
	}
	if start == i {
		return Constraint{}, fail("expected a number")
	}
	v, err := strconv.ParseFloat(part[start:i], 64)
	if err != nil {
		i = start
		return Constraint{}, fail("bad number " + strconv.Quote(part[start:i]))
	}
	skip()
	start = i
	unit := strings.TrimRight(part[i:], " \t")
	scale, ok := sloUnits[unit]
	if !ok {
		if unit == "" {
			return Constraint{}, fail("a unit is required (ns, us, ms, s)")
		}
		return Constraint{}, fail(fmt.Sprintf("unknown unit %q (want ns, us, ms, s)", unit))
	}
	c.Limit = v * scale
	c.Text = strings.TrimSpace(part)
	return c, nil
}

// Value returns m's value of the constraint's metric (ms; NaN if undefined).
func (c Constraint) Value(m *RequestMetrics) float64 {
	switch c.Metric {
	case "ttft":
		return m.TTFTMs
	case "ttfo":
		return m.TTFOMs
	case "tpot":
		return m.TPOTMs
	case "e2e":
		return m.E2EMs
	}
	return math.NaN()
}

// Met reports whether v meets the constraint.
func (c Constraint) Met(v float64) bool {
	if c.Strict {
		return v < c.Limit
	}
	return v <= c.Limit
}
