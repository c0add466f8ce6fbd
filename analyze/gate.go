package analyze

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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
	// Metric is a per-request metric (ttft, ttfo, ttst, tpot, itl, e2e,
	// max_itl, osl, isl, fluidity) or a run-level one (goodput,
	// goodput_rate, throughput, request_rate, error_rate, capacity).
	Metric    string
	Deadlines Deadlines // fluidity's
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
	Var   string
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
// req/s or tok/s.
func (g Gate) Unit() string {
	switch g.Metric {
	case "osl", "isl":
		return "tokens"
	case "fluidity", "goodput", "error_rate":
		return "fraction"
	case "goodput_rate", "request_rate", "capacity":
		return "req/s"
	case "throughput":
		return "tok/s"
	}
	return "ms"
}

func (g Gate) unitKind() unitKind {
	switch g.Unit() {
	case "tokens":
		return unitTokens
	case "fraction":
		return unitFraction
	case "req/s":
		return unitRate
	case "tok/s":
		return unitTokRate
	}
	return unitTime
}

// perRequestMetrics are the metrics a statistic can be taken of.
var perRequestMetrics = map[string]bool{"ttft": true, "ttfo": true, "ttst": true, "tpot": true, "itl": true,
	"e2e": true, "max_itl": true, "osl": true, "isl": true, "fluidity": true}

// runMetrics are the run-level gate metrics and their report JSON aliases.
var runMetrics = map[string]string{
	"goodput": "goodput", "goodput.fraction": "goodput",
	"goodput_rate": "goodput_rate", "goodput.requests_per_s": "goodput_rate",
	"throughput": "throughput", "throughput.output_tokens_per_s": "throughput",
	"request_rate": "request_rate", "throughput.requests_per_s": "request_rate",
	"error_rate": "error_rate", "requests.error_rate": "error_rate",
	"capacity": "capacity",
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
		return g, p.errAt(t, "expected a statistic (p99(…), mean(…), min(…), max(…)) or a run metric (goodput, goodput_rate, throughput, request_rate, error_rate, capacity), found %s", t)
	}
	switch {
	case runMetrics[t.text] != "":
		g.Metric = runMetrics[t.text]
		if g.Metric == "capacity" {
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
	case perRequestMetrics[t.text]:
		return g, p.errAt(t, "%s is a per-request metric: gate a statistic of it, e.g. p99(%s)", t.text, t.text)
	default:
		return g, p.errAt(t, "unknown gate %q (want p<N>(metric), mean/min/max(metric), goodput, goodput_rate, throughput, request_rate, error_rate or capacity)", t.text)
	}
	opTok := p.peek()
	op, err := p.op()
	if err != nil {
		return g, err
	}
	g.Op = op
	if g.Metric == "capacity" && (op == "<" || op == "<=") {
		return g, p.errAt(opTok, "capacity is a floor: bound it from below (>= or >)")
	}
	if err := p.bound(&g); err != nil {
		return g, err
	}
	if !p.atItemEnd() {
		return g, p.errAt(p.peek(), "unexpected %s after the gate", p.peek())
	}
	if g.Bound.Baseline && g.Metric == "capacity" {
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
	if m.kind != tIdent || !perRequestMetrics[m.text] {
		return p.errAt(m, "expected a per-request metric (ttft, ttfo, ttst, tpot, itl, e2e, max_itl, osl, isl, fluidity(…)), found %s", m)
	}
	g.Metric = m.text
	if g.Metric == "fluidity" {
		d, err := p.deadlines()
		if err != nil {
			return err
		}
		g.Deadlines = d
	}
	if p.peek().kind == tPipe {
		bar := p.next()
		if g.Metric == "itl" {
			return p.errAt(bar, "itl pools every gap of every request, so it cannot be conditioned on a request's length; condition tpot or max_itl instead")
		}
		for {
			v := p.next()
			if v.kind != tIdent || (v.text != "osl" && v.text != "isl") {
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
			g.Conds = append(g.Conds, Cond{Var: v.text, Op: op, Value: x})
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
			return p.errAt(t, "%s is a fraction: the bound must be between 0 and 1 (0%% and 100%%)", g.Metric)
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
	if g.Stat == "" {
		if g.Metric == "capacity" {
			return fmt.Sprintf("capacity(%s)", strconv.FormatFloat(g.Target, 'g', -1, 64))
		}
		return g.Metric
	}
	name := g.Stat
	if name == "p" {
		name = "p" + strconv.FormatFloat(g.P*100, 'g', -1, 64)
	}
	m := g.Metric
	if m == "fluidity" {
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
		cs = append(cs, c.Var+c.Op+strconv.FormatFloat(c.Value, 'g', -1, 64))
	}
	return strings.Join(cs, " & ")
}

// meets reports whether a request's length satisfies every condition (a
// request with an unknown length satisfies none).
func meets(conds []Cond, m *RequestMetrics) bool {
	for _, c := range conds {
		v := m.OutputTokens
		if c.Var == "isl" {
			v = m.InputTokens
		}
		if math.IsNaN(v) || !holds(v, c.Op, c.Value) {
			return false
		}
	}
	return true
}
