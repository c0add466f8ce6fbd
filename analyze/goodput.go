package analyze

import (
	"math"
)

// SLO is a set of per-request constraints that together define a good
// request: a request is good when it completed (status ok) and meets every
// constraint at once. The grammar is in the package doc (slo); e.g.
// "ttft<=500ms, tpot<=15ms, e2e<=2s, fluidity(500ms,50ms)>=0.9". A unit is
// required: "500" is an error, never silently milliseconds — except in
// vLLM's --goodput form "ttft:500 tpot:15 e2el:2000", accepted as an alias
// whose values are milliseconds by that tool's definition (vLLM
// benchmarks/benchmark_serving.py --goodput; SGLang bench_serving the same).
type SLO struct {
	Text        string
	Constraints []Constraint
}

// Constraint is one bound on a per-request metric: Metric Op Limit.
type Constraint struct {
	// Metric is the constrained metric: one of the Table's SLO metrics
	// (ttft, ttfo, tpot, e2e, max_itl, fluidity under Deadlines).
	Metric *Metric
	// Strict is true for "<" and ">", false for "<=" and ">=".
	Strict bool
	// AtLeast is true for a lower bound (">=", ">"), which only fluidity
	// takes; latencies take upper bounds.
	AtLeast bool
	// Limit is in milliseconds for latencies, a fraction for fluidity.
	Limit float64
	// Deadlines are fluidity's per-token deadlines (zero otherwise).
	Deadlines Deadlines
	// Text is the constraint as written.
	Text string
}

// Deadlines lists the fluidity deadlines the SLO's constraints use, each
// once (the Analyzer computes the fluidity-index for these as rows stream
// by; see Analyzer.SetFluidity).
func (s SLO) Deadlines() []Deadlines {
	var out []Deadlines
	for _, c := range s.Constraints {
		if c.Metric.Parametrised {
			out = appendUnique(out, c.Deadlines)
		}
	}
	return out
}

// Value returns m's value of the constraint's metric (in its unit; NaN
// if undefined).
func (c Constraint) Value(m *RequestMetrics) float64 { return c.Metric.Value(m, c.Deadlines) }

// Verdict is how one request fares against one constraint.
type Verdict int

const (
	// Failed: the request misses the bound, or lacks a value it should
	// have (a completed request without a TTFT).
	Failed Verdict = iota
	// Met: the value is within the bound.
	Met
	// Vacuous: there is nothing to constrain — TPOT of a request with
	// N ≤ 1 (no decode), max_itl of a request with one response (no gap) —
	// so the constraint holds.
	Vacuous
)

// Check applies the constraint to a request's metrics: the one rule the
// report's goodput, the gates and the goodput plots share. It does not
// look at the status; callers count only completed (ok) requests as good.
func (c Constraint) Check(m *RequestMetrics) Verdict {
	v := c.Value(m)
	if math.IsNaN(v) {
		if c.Metric.Vacuous != nil && c.Metric.Vacuous(m) {
			return Vacuous
		}
		return Failed
	}
	if c.Met(v) {
		return Met
	}
	return Failed
}

// Met reports whether v meets the constraint.
func (c Constraint) Met(v float64) bool {
	if c.AtLeast {
		if c.Strict {
			return v > c.Limit
		}
		return v >= c.Limit
	}
	if c.Strict {
		return v < c.Limit
	}
	return v <= c.Limit
}
