package slo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/analyze"
)

// The lexer and the shared pieces of the SLO and gate grammars (see the
// package doc for the BNF). Positions are 1-based character (rune)
// positions in the whole input, so an error can point at the character.

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tOp // <= < >= > (≤ and ≥ are read as <= and >=)
	tLParen
	tRParen
	tComma
	tPipe
	tAmp
	tStar
	tPlus
	tMinus
	tSlash
	tPercent
	tColon
)

type token struct {
	kind tokKind
	text string
	pos  int // 1-based rune position in the input
}

func (t token) String() string {
	if t.kind == tEOF {
		return "end of input"
	}
	return strconv.Quote(t.text)
}

// lex splits s into tokens. Identifiers are [a-zA-Z_µ][a-zA-Z0-9_.]*
// (lower-cased; "µs" is the micro-second unit); numbers are decimal with
// an optional fraction and exponent.
func lex(s string) ([]token, error) {
	var out []token
	pos := 0 // rune position (0-based) of byte i
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		start := pos
		switch {
		case r == ' ' || r == '\t' || r == '\r':
			i += w
			pos++
			continue
		case r >= '0' && r <= '9' || r == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					for k < len(s) && s[k] >= '0' && s[k] <= '9' {
						k++
					}
					j = k
				}
			}
			out = append(out, token{tNumber, s[i:j], start + 1})
			pos += j - i
			i = j
			continue
		case r == '_' || r == 'µ' || r == 'μ' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			j := i
			n := 0
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if !(r2 == '_' || r2 == 'µ' || r2 == 'μ' || r2 == '.' || r2 >= 'a' && r2 <= 'z' || r2 >= 'A' && r2 <= 'Z' || r2 >= '0' && r2 <= '9') {
					break
				}
				j += w2
				n++
			}
			text := strings.ToLower(strings.ReplaceAll(s[i:j], "μ", "µ"))
			out = append(out, token{tIdent, text, start + 1})
			pos += n
			i = j
			continue
		}
		two := ""
		if i+1 < len(s) {
			two = s[i : i+2]
		}
		switch {
		case two == "<=" || two == ">=":
			out = append(out, token{tOp, two, start + 1})
			i += 2
			pos += 2
			continue
		case two == "==" || two == "=<" || two == "=>":
			return nil, &SLOError{s, start + 1, fmt.Sprintf("unknown operator %q (want <=, <, >= or >)", two), ""}
		}
		if r == '≤' || r == '≥' {
			// the signs tokentrace's Markdown prints (and a pasted
			// formula's): the same operators as <= and >=
			out = append(out, token{tOp, map[rune]string{'≤': "<=", '≥': ">="}[r], start + 1})
			i += w
			pos++
			continue
		}
		k := tEOF
		switch r {
		case '<', '>':
			k = tOp
		case '(':
			k = tLParen
		case ')':
			k = tRParen
		case ',', ';', '\n':
			k = tComma
		case '|':
			k = tPipe
		case '&':
			k = tAmp
		case '*':
			k = tStar
		case '+':
			k = tPlus
		case '-':
			k = tMinus
		case '/':
			k = tSlash
		case '%':
			k = tPercent
		case ':':
			k = tColon
		case '=':
			return nil, &SLOError{s, start + 1, "unknown operator \"=\" (want <=, <, >= or >)", ""}
		default:
			return nil, &SLOError{s, start + 1, fmt.Sprintf("unexpected character %q", r), ""}
		}
		out = append(out, token{k, string(r), start + 1})
		i += w
		pos++
	}
	out = append(out, token{tEOF, "", utf8.RuneCountInString(s) + 1})
	return out, nil
}

// parser walks a token list; whole is the input for error messages.
type parser struct {
	whole string
	toks  []token
	i     int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}
func (p *parser) errAt(t token, format string, a ...any) error {
	return &SLOError{p.whole, t.pos, fmt.Sprintf(format, a...), ""}
}

// atItemEnd reports whether the next token ends a list item.
func (p *parser) atItemEnd() bool {
	k := p.peek().kind
	return k == tComma || k == tEOF
}

// number reads a NUMBER token.
func (p *parser) number(what string) (float64, token, error) {
	t := p.next()
	if t.kind != tNumber {
		return 0, t, p.errAt(t, "expected %s, found %s", what, t)
	}
	v, err := strconv.ParseFloat(t.text, 64)
	if err != nil {
		return 0, t, p.errAt(t, "bad number %q", t.text)
	}
	return v, t, nil
}

// op reads a comparison operator.
func (p *parser) op() (string, error) {
	t := p.next()
	if t.kind != tOp {
		return "", p.errAt(t, "expected <=, <, >= or >, found %s", t)
	}
	return t.text, nil
}

// unitKind is what a quantity measures, which decides the units it takes.
type unitKind int

const (
	unitTime     unitKind = iota // ns us µs ms s → ms
	unitFraction                 // plain number, or % → fraction
	unitRate                     // /s, req/s → requests per second
	unitTokRate                  // tok/s, tokens/s → tokens per second
	unitTokens                   // plain number or tok, tokens → tokens
	unitCount                    // plain number: a count of things
)

// unitOf is the kind of a metric's unit (Metric.Unit).
func unitOf(unit string) unitKind {
	switch unit {
	case "tokens":
		return unitTokens
	case "fraction":
		return unitFraction
	case "req/s":
		return unitRate
	case "tok/s":
		return unitTokRate
	case "count":
		return unitCount
	}
	return unitTime
}

var timeUnits = map[string]float64{"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1e3}

func (k unitKind) want() string {
	switch k {
	case unitTime:
		return "a time unit (ns, us, ms, s)"
	case unitFraction:
		return "a fraction (0.99) or a percentage (99%)"
	case unitRate:
		return "a rate unit (/s or req/s)"
	case unitTokRate:
		return "a token-rate unit (tok/s)"
	case unitCount:
		return "a count (0)"
	}
	return "a token count (300 or 300tok)"
}

// unit reads the unit after a number of kind k and returns the factor to
// the kind's base unit (ms, fraction, req/s, tok/s, tokens). required:
// a time or rate without a unit is an error.
func (p *parser) unit(k unitKind, numTok token) (float64, error) {
	t := p.peek()
	switch k {
	case unitTime:
		if t.kind == tIdent {
			if f, ok := timeUnits[t.text]; ok {
				p.next()
				return f, nil
			}
			return 0, p.errAt(t, "unknown unit %q (want ns, us, ms, s)", t.text)
		}
		return 0, p.errAt(t, "a unit is required (ns, us, ms, s)")
	case unitFraction:
		if t.kind == tPercent {
			p.next()
			return 0.01, nil
		}
		if t.kind == tIdent {
			return 0, p.errAt(t, "unexpected unit %q: want %s", t.text, k.want())
		}
		return 1, nil
	case unitCount:
		if t.kind == tIdent || t.kind == tPercent {
			return 0, p.errAt(t, "unexpected unit %q: want %s", t.text, k.want())
		}
		return 1, nil
	case unitTokens:
		if t.kind == tIdent {
			switch t.text {
			case "tok", "tokens":
				p.next()
				return 1, nil
			case "and":
				return 1, nil
			}
			return 0, p.errAt(t, "unexpected unit %q: want %s", t.text, k.want())
		}
		return 1, nil
	}
	// rates: [ident] "/" "s"
	name := ""
	if t.kind == tIdent {
		name = t.text
		p.next()
	}
	sl := p.peek()
	if sl.kind != tSlash {
		return 0, p.errAt(sl, "%s is required", k.want())
	}
	p.next()
	s := p.next()
	if s.kind != tIdent || s.text != "s" {
		return 0, p.errAt(s, "expected \"s\" after \"/\"")
	}
	switch {
	case k == unitRate && (name == "" || name == "req" || name == "requests"):
		return 1, nil
	case k == unitTokRate && (name == "tok" || name == "tokens"):
		return 1, nil
	}
	return 0, p.errAt(t, "unit %q: want %s", name+"/s", k.want())
}

// quantity reads NUMBER unit.
func (p *parser) quantity(k unitKind) (float64, error) {
	v, nt, err := p.number("a number")
	if err != nil {
		return 0, err
	}
	f, err := p.unit(k, nt)
	if err != nil {
		return 0, err
	}
	return scaleBy(v, f), nil
}

// scaleBy applies a unit factor; a percentage divides by 100 so 95% is
// exactly 0.95.
func scaleBy(v, f float64) float64 {
	if f == 0.01 {
		return v / 100
	}
	return v * f
}

// splitTop splits the token list at top-level commas (outside
// parentheses); each item ends with a tEOF token at the comma's position.
func splitTop(toks []token) [][]token {
	var out [][]token
	depth := 0
	start := 0
	for i, t := range toks {
		switch t.kind {
		case tLParen:
			depth++
		case tRParen:
			depth--
		case tComma, tEOF:
			if depth > 0 && t.kind == tComma {
				continue
			}
			item := append(append([]token{}, toks[start:i]...), token{tEOF, "", t.pos})
			out = append(out, item)
			start = i + 1
		}
	}
	return out
}

// deadlines reads "(" time "," time ")" after "fluidity".
func (p *parser) deadlines() (analyze.Deadlines, error) {
	if t := p.next(); t.kind != tLParen {
		return analyze.Deadlines{}, p.errAt(t, "fluidity needs its deadlines: fluidity(TTFT_DEADLINE, TBT_DEADLINE), e.g. fluidity(500ms,50ms)")
	}
	dpt := p.peek()
	dp, err := p.quantity(unitTime)
	if err != nil {
		return analyze.Deadlines{}, err
	}
	if t := p.next(); t.kind != tComma {
		return analyze.Deadlines{}, p.errAt(t, "expected \",\" between the TTFT and the TBT deadline")
	}
	ddt := p.peek()
	dd, err := p.quantity(unitTime)
	if err != nil {
		return analyze.Deadlines{}, err
	}
	if t := p.next(); t.kind != tRParen {
		return analyze.Deadlines{}, p.errAt(t, "expected \")\"")
	}
	d := analyze.Deadlines{PrefillNs: int64(dp*1e6 + 0.5), DecodeNs: int64(dd*1e6 + 0.5)}
	if d.PrefillNs < 0 {
		return d, p.errAt(dpt, "the TTFT deadline must not be negative")
	}
	if d.DecodeNs <= 0 {
		return d, p.errAt(ddt, "the TBT deadline must be positive")
	}
	return d, nil
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
func ParseSLO(s string) (analyze.SLO, error) {
	out := analyze.SLO{Text: strings.TrimSpace(s)}
	if out.Text == "" {
		return out, nil
	}
	if vllmAlias.MatchString(s) {
		return parseVLLMAlias(s)
	}
	toks, err := lex(s)
	if err != nil {
		return analyze.SLO{}, err
	}
	seen := map[string]bool{}
	for _, item := range splitTop(toks) {
		p := &parser{whole: s, toks: item}
		first := p.peek()
		c, err := p.constraint()
		if err != nil {
			return analyze.SLO{}, err
		}
		key := c.Metric.Name
		if c.Metric.Parametrised {
			key = c.Deadlines.String()
		}
		if seen[key] {
			return analyze.SLO{}, &SLOError{s, first.pos, "metric " + key + " constrained twice", ""}
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
func (p *parser) constraint() (analyze.Constraint, error) {
	t := p.next()
	sloNames := metricNames(func(x *analyze.Metric) bool { return x.SLO })
	if t.kind != tIdent {
		return analyze.Constraint{}, p.errAt(t, "expected a metric (%s), found %s", sloNames, t)
	}
	x := analyze.LookupMetric(t.text)
	if x == nil || !x.SLO {
		return analyze.Constraint{}, p.errAt(t, "unknown metric %q (want %s)", t.text, metricNamesOr(func(x *analyze.Metric) bool { return x.SLO }))
	}
	c := analyze.Constraint{Metric: x}
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
func parseVLLMAlias(s string) (analyze.SLO, error) {
	out := analyze.SLO{Text: strings.TrimSpace(s)}
	seen := map[string]bool{}
	for _, loc := range regexp.MustCompile(`([a-z_0-9]+)\s*:\s*([0-9.]+)`).FindAllStringSubmatchIndex(s, -1) {
		key, val := s[loc[2]:loc[3]], s[loc[4]:loc[5]]
		pos := utf8.RuneCountInString(s[:loc[2]]) + 1
		metric := analyze.LookupMetric(vllmGoodputKeys[key])
		if metric == nil {
			return analyze.SLO{}, &SLOError{s, pos, fmt.Sprintf("unknown vLLM goodput key %q (want ttft, tpot or e2el)", key), ""}
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return analyze.SLO{}, &SLOError{s, utf8.RuneCountInString(s[:loc[4]]) + 1, "bad number " + strconv.Quote(val), ""}
		}
		if seen[metric.Name] {
			return analyze.SLO{}, &SLOError{s, pos, "metric " + metric.Name + " constrained twice", ""}
		}
		seen[metric.Name] = true
		out.Constraints = append(out.Constraints, analyze.Constraint{Metric: metric, Limit: v, Text: s[loc[0]:loc[1]]})
	}
	return out, nil
}
