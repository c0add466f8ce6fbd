package slo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
)

// Gate is one aggregate condition over a run (see the package doc's
// grammar): a statistic of a per-request metric, or a run-level number
// named after the report's JSON keys, compared with an absolute bound or
// with the same number of a baseline run.
//
//	p99(ttft) <= 800ms            metrics.ttft_ms.p99
//	p99(e2e | osl<300) <= 3s      P99 of E2E over requests with OSL < 300
//	p1(fluidity(500ms,50ms)) >= 0.9
//	goodput >= 0.99               goodput.fraction (needs the SLO)
//	goodput_rate >= 2.5/s         goodput.requests_per_s
//	throughput >= 1000tok/s       throughput.output_tokens_per_s
//	request_rate >= 2/s           throughput.requests_per_s
//	error_rate <= 1%              requests.error_rate
//	capacity >= 4/s               DistServe goodput capacity over a rate sweep
//	p99(ttft) <= 1.10 * baseline  regression gate (--baseline)
//	goodput >= baseline - 0.01
type Gate struct {
	// Text is the gate as written.
	Text string
	// Stat is "p" (a percentile, P its quantile), "mean", "min" or "max"
	// for a per-request metric; "" for a run-level Metric.
	Stat string
	P    float64
	// Metric is the gated metric: a per-request or pooled metric of the
	// Table whose statistic is taken (ttft, ttfo, ttst, tpot, itl, e2e,
	// max_itl, osl, isl, fluidity), or a run-level one (goodput,
	// goodput_rate, throughput, request_rate, error_rate); nil for
	// capacity.
	Metric *analyze.Metric
	// Capacity: the gate bounds the goodput capacity of the runs as a rate
	// sweep (Target is its attainment).
	Capacity  bool
	Deadlines analyze.Deadlines // fluidity's
	// Conds restrict the requests a per-request statistic is taken over.
	Conds []Cond
	// Op is <=, <, >= or >.
	Op string
	// Bound is the right-hand side.
	Bound Bound
	// Target is capacity's attainment target (fraction of good requests).
	Target float64
}

// Cond restricts requests by their output (osl) or input (isl) length in
// tokens under the report's convention: Var Op Value.
type Cond struct {
	// Var is the conditioning metric (a Table entry with Condition set:
	// OSL or ISL).
	Var   *analyze.Metric
	Op    string
	Value float64
}

// Bound is a gate's right-hand side: Value in the gate's unit, or, when
// Baseline is set, Scale × (the baseline's value) + Value.
type Bound struct {
	Value    float64
	Baseline bool
	Scale    float64
}

// Unit is the unit of the gate's value and bound: ms, tokens, fraction,
// req/s or tok/s (the metric's; req/s for capacity).
func (g Gate) Unit() string {
	if g.Capacity {
		return "req/s"
	}
	return g.Metric.Unit
}

func (g Gate) unitKind() unitKind { return unitOf(g.Unit()) }

// fmtValue writes a value of the gate (analyze.FormatValue in its unit),
// in percent when the gate is a fraction written in percent
// ("error_rate<=1%": "10%", not "0.1").
func (g Gate) fmtValue(v float64) string {
	if g.Unit() == "fraction" && strings.Contains(g.Text, "%") && !math.IsNaN(v) && !math.IsInf(v, 0) {
		return strconv.FormatFloat(100*v, 'g', 4, 64) + "%"
	}
	return analyze.FormatValue(v, g.Unit())
}

// DefaultCapacityTarget is the attainment a rate must keep to count toward
// capacity: DistServe's 90% (Zhong et al., OSDI 2024, §2).
const DefaultCapacityTarget = 0.9

// ParseGates parses a list of gates separated by commas, semicolons or
// newlines (commas inside parentheses belong to the gate). Errors are
// *SLOError pointing at the offending character.
func ParseGates(s string) ([]Gate, error) {
	gs, err := parseGates(s)
	var se *SLOError
	if errors.As(err, &se) {
		se.What = "gate"
	}
	return gs, err
}

func parseGates(s string) ([]Gate, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	var out []Gate
	for _, item := range splitTop(toks) {
		if len(item) == 1 { // empty item (",," or a trailing separator)
			return nil, &SLOError{s, item[0].pos, "empty gate", ""}
		}
		p := &parser{whole: s, toks: item}
		g, err := p.gate()
		if err != nil {
			return nil, err
		}
		g.Text = itemText(s, item)
		out = append(out, g)
	}
	return out, nil
}

func (p *parser) gate() (Gate, error) {
	var g Gate
	t := p.next()
	if t.kind != tIdent {
		return g, p.errAt(t, "expected a statistic (p99(…), mean(…), min(…), max(…)) or a run metric (%s, capacity), found %s", metricNames(func(x *analyze.Metric) bool { return x.Gate && x.Scope == analyze.RunLevel }), t)
	}
	x := analyze.LookupMetric(t.text)
	runNames := metricNames(func(x *analyze.Metric) bool { return x.Gate && x.Scope == analyze.RunLevel })
	switch {
	case t.text == "capacity":
		g.Capacity = true
		{
			g.Target = DefaultCapacityTarget
			if p.peek().kind == tLParen {
				p.next()
				v, vt, err := p.number("the attainment target, e.g. capacity(0.9)")
				if err != nil {
					return g, err
				}
				f, err := p.unit(unitFraction, vt)
				if err != nil {
					return g, err
				}
				g.Target = scaleBy(v, f)
				if g.Target <= 0 || g.Target > 1 {
					return g, p.errAt(vt, "the attainment target must be in (0, 1]")
				}
				if r := p.next(); r.kind != tRParen {
					return g, p.errAt(r, "expected \")\"")
				}
			}
		}
	case x != nil && x.Gate && x.Scope == analyze.RunLevel:
		g.Metric = x
	case t.text == "mean" || t.text == "min" || t.text == "max" || isPercentileName(t.text):
		g.Stat = t.text
		if isPercentileName(t.text) {
			q, _ := strconv.ParseFloat(t.text[1:], 64)
			if !(q > 0 && q < 100) {
				return g, p.errAt(t, "percentile %q must be between p0 and p100, exclusive", t.text)
			}
			g.Stat, g.P = "p", q/100
		}
		if err := p.statArg(&g); err != nil {
			return g, err
		}
	case x != nil && x.Gate:
		return g, p.errAt(t, "%s is a per-request metric: gate a statistic of it, e.g. p99(%s)", t.text, t.text)
	default:
		return g, p.errAt(t, "unknown gate %q (want p<N>(metric), mean/min/max(metric), %s or capacity)", t.text, runNames)
	}
	opTok := p.peek()
	op, err := p.op()
	if err != nil {
		return g, err
	}
	g.Op = op
	if g.Capacity && (op == "<" || op == "<=") {
		return g, p.errAt(opTok, "capacity is a floor: bound it from below (>= or >)")
	}
	if err := p.bound(&g); err != nil {
		return g, err
	}
	if !p.atItemEnd() {
		return g, p.errAt(p.peek(), "unexpected %s after the gate", p.peek())
	}
	if g.Bound.Baseline && g.Capacity {
		return g, p.errAt(opTok, "capacity is measured over a rate sweep and has no baseline")
	}
	return g, nil
}

func isPercentileName(s string) bool {
	if len(s) < 2 || s[0] != 'p' {
		return false
	}
	_, err := strconv.ParseFloat(s[1:], 64)
	return err == nil
}

// statArg reads "(" metric [ "|" cond { ("&"|"and") cond } ] ")".
func (p *parser) statArg(g *Gate) error {
	if t := p.next(); t.kind != tLParen {
		return p.errAt(t, "expected \"(\" and a metric after %s", g.Stat)
	}
	m := p.next()
	x := analyze.LookupMetric(m.text)
	if m.kind != tIdent || x == nil || !x.Gate || x.Scope == analyze.RunLevel {
		return p.errAt(m, "expected a per-request metric (%s), found %s", metricNames(func(x *analyze.Metric) bool { return x.Gate && x.Scope != analyze.RunLevel }), m)
	}
	g.Metric = x
	if x.Parametrised {
		d, err := p.deadlines()
		if err != nil {
			return err
		}
		g.Deadlines = d
	}
	if p.peek().kind == tPipe {
		bar := p.next()
		if g.Metric.Scope == analyze.Pooled {
			return p.errAt(bar, "%s pools every gap of every request, so it cannot be conditioned on a request's length; condition tpot or max_itl instead", g.Metric.Name)
		}
		for {
			v := p.next()
			cv := analyze.LookupMetric(v.text)
			if v.kind != tIdent || cv == nil || !cv.Condition {
				return p.errAt(v, "a condition is on osl or isl, e.g. osl<300; found %s", v)
			}
			op, err := p.op()
			if err != nil {
				return err
			}
			x, err := p.quantity(unitTokens)
			if err != nil {
				return err
			}
			g.Conds = append(g.Conds, Cond{Var: cv, Op: op, Value: x})
			if n := p.peek(); n.kind == tAmp || n.kind == tIdent && n.text == "and" {
				p.next()
				continue
			}
			break
		}
	}
	if t := p.next(); t.kind != tRParen {
		return p.errAt(t, "expected \")\", found %s", t)
	}
	return nil
}

// bound reads quantity | NUMBER "*" "baseline" [ ±quantity ] |
// "baseline" [ "*" NUMBER ] [ ("+"|"-") quantity ].
func (p *parser) bound(g *Gate) error {
	kind := g.unitKind()
	t := p.peek()
	switch {
	case t.kind == tIdent && t.text == "baseline":
		p.next()
		g.Bound = Bound{Baseline: true, Scale: 1}
		if p.peek().kind == tStar {
			p.next()
			v, _, err := p.number("a factor after \"baseline *\"")
			if err != nil {
				return err
			}
			g.Bound.Scale = v
		}
	case t.kind == tNumber && p.i+1 < len(p.toks) && p.toks[p.i+1].kind == tStar:
		v, _, _ := p.number("")
		p.next() // *
		b := p.next()
		if b.kind != tIdent || b.text != "baseline" {
			return p.errAt(b, "expected \"baseline\" after \"*\"")
		}
		g.Bound = Bound{Baseline: true, Scale: v}
	default:
		v, err := p.quantity(kind)
		if err != nil {
			return err
		}
		if kind == unitFraction && (v < 0 || v > 1) {
			return p.errAt(t, "%s is a fraction: the bound must be between 0 and 1 (0%% and 100%%)", g.Metric.Name)
		}
		if v < 0 {
			return p.errAt(t, "the bound must not be negative")
		}
		g.Bound = Bound{Value: v}
		return nil
	}
	if s := p.peek(); s.kind == tPlus || s.kind == tMinus {
		p.next()
		v, err := p.quantity(kind)
		if err != nil {
			return err
		}
		if s.kind == tMinus {
			v = -v
		}
		g.Bound.Value = v
	}
	return nil
}

// holds reports whether value op bound.
func holds(v float64, op string, bound float64) bool {
	switch op {
	case "<=":
		return v <= bound
	case "<":
		return v < bound
	case ">=":
		return v >= bound
	case ">":
		return v > bound
	}
	return false
}

// upper is true when the gate bounds its value from above.
func (g Gate) upper() bool { return g.Op == "<=" || g.Op == "<" }

// String renders a gate's left-hand side canonically, e.g. "p99(e2e | osl<300)".
func (g Gate) lhs() string {
	if g.Capacity {
		return fmt.Sprintf("capacity(%s)", strconv.FormatFloat(g.Target, 'g', -1, 64))
	}
	if g.Stat == "" {
		return g.Metric.Name
	}
	name := g.Stat
	if name == "p" {
		name = "p" + strconv.FormatFloat(g.P*100, 'g', -1, 64)
	}
	m := g.Metric.Name
	if g.Metric.Parametrised {
		m = g.Deadlines.String()
	}
	if len(g.Conds) > 0 {
		m += " | " + condText(g.Conds)
	}
	return name + "(" + m + ")"
}

// condText renders conditions as written in the grammar: "osl<300 & isl>=8".
func condText(conds []Cond) string {
	var cs []string
	for _, c := range conds {
		cs = append(cs, c.Var.Name+c.Op+strconv.FormatFloat(c.Value, 'g', -1, 64))
	}
	return strings.Join(cs, " & ")
}

// meets reports whether a request's length satisfies every condition (a
// request with an unknown length satisfies none).
func meets(conds []Cond, m *analyze.RequestMetrics) bool {
	for _, c := range conds {
		v := c.Var.Value(m, analyze.Deadlines{})
		if math.IsNaN(v) || !holds(v, c.Op, c.Value) {
			return false
		}
	}
	return true
}
