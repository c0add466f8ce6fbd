package analyze

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
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

// SLOError is a syntax error in an SLO or a gate, with the 1-based
// character position of the offending text.
type SLOError struct {
	Input string
	Pos   int
	Msg   string
	// What names the input's kind in the message: "slo" (default) or "gate".
	What string
}

func (e *SLOError) Error() string {
	what := e.What
	if what == "" {
		what = "slo"
	}
	return fmt.Sprintf("%s %q: at character %d: %s", what, e.Input, e.Pos, e.Msg)
}

// ParseSLO parses s by the SLO grammar. An empty s gives an empty SLO.
// Errors are *SLOError pointing at the offending character.
func ParseSLO(s string) (SLO, error) {
	out := SLO{Text: strings.TrimSpace(s)}
	if out.Text == "" {
		return out, nil
	}
	if vllmAlias.MatchString(s) {
		return parseVLLMAlias(s)
	}
	toks, err := lex(s)
	if err != nil {
		return SLO{}, err
	}
	seen := map[string]bool{}
	for _, item := range splitTop(toks) {
		p := &parser{whole: s, toks: item}
		first := p.peek()
		c, err := p.constraint()
		if err != nil {
			return SLO{}, err
		}
		key := c.Metric.Name
		if c.Metric.Parametrised {
			key = c.Deadlines.String()
		}
		if seen[key] {
			return SLO{}, &SLOError{s, first.pos, "metric " + key + " constrained twice", ""}
		}
		seen[key] = true
		c.Text = itemText(s, item)
		out.Constraints = append(out.Constraints, c)
	}
	return out, nil
}

// itemText is the source text of one list item, trimmed.
func itemText(s string, item []token) string {
	if len(item) < 2 {
		return ""
	}
	r := []rune(s)
	from, to := item[0].pos-1, item[len(item)-1].pos-1
	if to > len(r) {
		to = len(r)
	}
	return strings.TrimSpace(string(r[from:to]))
}

// constraint parses metric op quantity up to the item's end.
func (p *parser) constraint() (Constraint, error) {
	t := p.next()
	sloNames := metricNames(func(x *Metric) bool { return x.SLO })
	if t.kind != tIdent {
		return Constraint{}, p.errAt(t, "expected a metric (%s), found %s", sloNames, t)
	}
	x := LookupMetric(t.text)
	if x == nil || !x.SLO {
		return Constraint{}, p.errAt(t, "unknown metric %q (want %s)", t.text, metricNamesOr(func(x *Metric) bool { return x.SLO }))
	}
	c := Constraint{Metric: x}
	if x.Parametrised {
		d, err := p.deadlines()
		if err != nil {
			return c, err
		}
		c.Deadlines = d
	}
	opTok := p.peek()
	op, err := p.op()
	if err != nil {
		return c, err
	}
	c.Strict = op == "<" || op == ">"
	c.AtLeast = op == ">=" || op == ">"
	kind := unitOf(x.Unit)
	if x.AtLeast && !c.AtLeast {
		return c, p.errAt(opTok, "%s is a share of deadlines met: bound it from below (>= or >)", x.Name)
	} else if !x.AtLeast && c.AtLeast {
		return c, p.errAt(opTok, "%s is a latency: bound it from above (<= or <)", x.Name)
	}
	limTok := p.peek()
	if c.Limit, err = p.quantity(kind); err != nil {
		return c, err
	}
	if kind == unitFraction && c.Limit > 1 {
		return c, p.errAt(limTok, "fluidity is a fraction: the bound must be between 0 and 1")
	}
	if !p.atItemEnd() {
		return c, p.errAt(p.peek(), "unexpected %s after the constraint", p.peek())
	}
	return c, nil
}

// vllmAlias matches vLLM's --goodput form: KEY:VALUE pairs separated by
// spaces (or commas), no comparison operators.
var vllmAlias = regexp.MustCompile(`^\s*[a-z_0-9]+\s*:\s*[0-9.]+(\s*[ ,]\s*[a-z_0-9]+\s*:\s*[0-9.]+)*\s*$`)

// vllmGoodputKeys map vLLM's --goodput keys to metric names (vLLM
// benchmarks/benchmark_serving.py check_goodput_args: ttft, tpot, e2el).
var vllmGoodputKeys = map[string]string{"ttft": "ttft", "tpot": "tpot", "e2el": "e2e", "e2e": "e2e"}

// parseVLLMAlias parses "ttft:500 tpot:15 e2el:2000" as ttft<=500ms,
// tpot<=15ms, e2e<=2000ms: vLLM counts a request good when every given
// metric is ≤ its value in ms (keys ttft, tpot, e2el).
func parseVLLMAlias(s string) (SLO, error) {
	out := SLO{Text: strings.TrimSpace(s)}
	seen := map[string]bool{}
	for _, loc := range regexp.MustCompile(`([a-z_0-9]+)\s*:\s*([0-9.]+)`).FindAllStringSubmatchIndex(s, -1) {
		key, val := s[loc[2]:loc[3]], s[loc[4]:loc[5]]
		pos := utf8.RuneCountInString(s[:loc[2]]) + 1
		metric := LookupMetric(vllmGoodputKeys[key])
		if metric == nil {
			return SLO{}, &SLOError{s, pos, fmt.Sprintf("unknown vLLM goodput key %q (want ttft, tpot or e2el)", key), ""}
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return SLO{}, &SLOError{s, utf8.RuneCountInString(s[:loc[4]]) + 1, "bad number " + strconv.Quote(val), ""}
		}
		if seen[metric.Name] {
			return SLO{}, &SLOError{s, pos, "metric " + metric.Name + " constrained twice", ""}
		}
		seen[metric.Name] = true
		out.Constraints = append(out.Constraints, Constraint{Metric: metric, Limit: v, Text: s[loc[0]:loc[1]]})
	}
	return out, nil
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
