package inferenceperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// config is what the run's config.yaml says. inference-perf writes it with
// yaml.dump (local storage) or json.dumps (GCS, S3) of its pydantic config
// (generate_config_report, v0.2+); a hand-written input config (the
// KubeCon demo's) has the same keys.
type config struct {
	src        formats.SourceFile
	tree       any // parsed document: map[string]any (ordered keys lost), []any, scalars
	configJSON string
	notes      []string
}

// str returns the string at a key path, "" when absent or not a string.
func (c *config) str(path ...string) string {
	if c == nil {
		return ""
	}
	if s, ok := lookup(c.tree, path...).(string); ok {
		return s
	}
	return ""
}

// boolean returns the boolean at a key path.
func (c *config) boolean(path ...string) (bool, bool) {
	if c == nil {
		return false, false
	}
	b, ok := lookup(c.tree, path...).(bool)
	return b, ok
}

func lookup(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// readConfig reads config.yaml. A file that cannot be parsed is not an
// import error (it is the tool's configuration echo, not a result): the
// returned config then has only a note.
func readConfig(path string, opt ingest.Options) *config {
	src, raw, err := ingest.ReadFile(path, "config", opt)
	if err != nil {
		return &config{notes: []string{"config.yaml not read: " + err.Error()}}
	}
	c := &config{src: src}
	trimmed := bytes.TrimSpace(raw)
	var tree any
	if len(trimmed) > 0 && trimmed[0] == '{' {
		err = json.Unmarshal(trimmed, &tree)
	} else {
		tree, err = parseYAML(string(raw))
	}
	if err != nil {
		c.notes = append(c.notes, fmt.Sprintf("config.yaml not parsed (%v): configuration, model and tokenizer not imported from it", err))
		return c
	}
	c.tree = tree
	// tokenizer.token is a Hugging Face access token (config/tokenizer);
	// RedactJSON does not know the bare key "token".
	var hfPaths []string
	if tok, ok := lookup(tree, "tokenizer").(map[string]any); ok {
		for _, k := range []string{"token", "hf_token"} {
			if s, ok := tok[k].(string); ok && s != "" {
				tok[k] = ingest.Redacted
				hfPaths = append(hfPaths, "config.tokenizer."+k)
			}
		}
	}
	b, err := json.Marshal(tree)
	if err == nil {
		out, paths := ingest.RedactJSON(b, "config")
		paths = append(paths, hfPaths...)
		sort.Strings(paths)
		c.configJSON = out
		if len(paths) > 0 {
			c.notes = append(c.notes, "config.yaml: redacted "+strings.Join(paths, ", "))
		}
	} else {
		c.notes = append(c.notes, fmt.Sprintf("config.yaml: not representable as JSON (%v): config_json left empty", err))
	}
	return c
}

// parseYAML parses the block-style YAML subset that PyYAML's dump
// (default_flow_style=False) and hand-written inference-perf configs use:
// nested mappings, block sequences (of scalars or of mappings), plain and
// quoted scalars, flow sequences and mappings of scalars, "|" and ">" block
// scalars, comments and a leading "---". Anchors, aliases, tags and
// multi-document streams are errors.
func parseYAML(src string) (any, error) {
	var lines []yline
	for i, raw := range strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n") {
		text := strings.TrimRight(stripComment(raw), " \t")
		if strings.TrimSpace(text) == "" {
			lines = append(lines, yline{n: i + 1, blank: true, raw: raw})
			continue
		}
		if strings.HasPrefix(text, "\t") {
			return nil, fmt.Errorf("line %d: tab indentation", i+1)
		}
		indent := len(text) - len(strings.TrimLeft(text, " "))
		body := strings.TrimSpace(text)
		if body == "---" && indent == 0 {
			if len(nonBlank(lines)) > 0 {
				return nil, fmt.Errorf("line %d: a second YAML document", i+1)
			}
			continue
		}
		if body == "..." && indent == 0 {
			break
		}
		lines = append(lines, yline{n: i + 1, indent: indent, text: body, raw: raw})
	}
	p := &yparser{lines: lines}
	p.skipBlank()
	if p.i >= len(p.lines) {
		return map[string]any{}, nil
	}
	v, err := p.block(p.lines[p.i].indent)
	if err != nil {
		return nil, err
	}
	p.skipBlank()
	if p.i < len(p.lines) {
		return nil, fmt.Errorf("line %d: unexpected indentation", p.lines[p.i].n)
	}
	return v, nil
}

type yline struct {
	n      int
	indent int
	text   string
	raw    string
	blank  bool
}

func nonBlank(ls []yline) []yline {
	var out []yline
	for _, l := range ls {
		if !l.blank {
			out = append(out, l)
		}
	}
	return out
}

type yparser struct {
	lines []yline
	i     int
}

func (p *yparser) skipBlank() {
	for p.i < len(p.lines) && p.lines[p.i].blank {
		p.i++
	}
}

// block parses the mapping or sequence whose lines start at indent.
func (p *yparser) block(indent int) (any, error) {
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil, nil
	}
	if isSeqItem(p.lines[p.i].text) {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

func isSeqItem(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }

func (p *yparser) mapping(indent int) (any, error) {
	m := map[string]any{}
	for {
		p.skipBlank()
		if p.i >= len(p.lines) {
			return m, nil
		}
		l := p.lines[p.i]
		if l.indent < indent {
			return m, nil
		}
		if l.indent > indent {
			return nil, fmt.Errorf("line %d: unexpected indentation", l.n)
		}
		if isSeqItem(l.text) {
			return nil, fmt.Errorf("line %d: a sequence item inside a mapping", l.n)
		}
		key, rest, err := splitKey(l.text, l.n)
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("line %d: duplicate key %q", l.n, key)
		}
		p.i++
		v, err := p.valueAfterKey(rest, indent, l.n)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
}

// valueAfterKey parses what follows "key:" — an inline scalar, a block
// scalar, or a nested block on the next lines (a sequence may sit at the
// key's own indentation, as PyYAML writes it).
func (p *yparser) valueAfterKey(rest string, indent, n int) (any, error) {
	if rest == "|" || rest == ">" || strings.HasPrefix(rest, "|") || strings.HasPrefix(rest, ">") {
		return p.blockScalar(rest, indent), nil
	}
	if rest != "" {
		return scalar(rest, n)
	}
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil, nil
	}
	next := p.lines[p.i]
	switch {
	case next.indent > indent:
		return p.block(next.indent)
	case next.indent == indent && isSeqItem(next.text):
		return p.sequence(indent)
	}
	return nil, nil
}

func (p *yparser) sequence(indent int) (any, error) {
	var out []any
	for {
		p.skipBlank()
		if p.i >= len(p.lines) {
			return out, nil
		}
		l := p.lines[p.i]
		if l.indent != indent || !isSeqItem(l.text) {
			if l.indent > indent {
				return nil, fmt.Errorf("line %d: unexpected indentation", l.n)
			}
			return out, nil
		}
		item := strings.TrimSpace(strings.TrimPrefix(l.text, "-"))
		p.i++
		switch {
		case item == "":
			p.skipBlank()
			if p.i < len(p.lines) && p.lines[p.i].indent > indent {
				v, err := p.block(p.lines[p.i].indent)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			} else {
				out = append(out, nil)
			}
		case looksLikeKey(item):
			// "- key: value" opens a mapping whose keys sit at the item's
			// text column.
			after := strings.TrimPrefix(l.text, "-")
			col := indent + 1 + len(after) - len(strings.TrimLeft(after, " "))
			p.i--
			p.lines[p.i] = yline{n: l.n, indent: col, text: item, raw: l.raw}
			v, err := p.mapping(col)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		default:
			v, err := scalar(item, l.n)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
}

// blockScalar reads the lines of a "|" or ">" scalar, more indented than
// indent.
func (p *yparser) blockScalar(header string, indent int) string {
	var parts []string
	start := -1
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if !l.blank && l.indent <= indent {
			break
		}
		if l.blank {
			parts = append(parts, "")
		} else {
			if start < 0 {
				start = l.indent
			}
			parts = append(parts, strings.TrimRight(l.raw[min(start, len(l.raw)):], " \t"))
		}
		p.i++
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	sep := "\n"
	if strings.HasPrefix(header, ">") {
		sep = " "
	}
	s := strings.Join(parts, sep)
	if !strings.HasSuffix(header, "-") && s != "" {
		s += "\n"
	}
	return s
}

// looksLikeKey reports whether s is "key: …" or "key:".
func looksLikeKey(s string) bool {
	if s == "" || s[0] == '"' && !strings.Contains(s, "\":") || s[0] == '\'' && !strings.Contains(s, "':") || s[0] == '[' || s[0] == '{' {
		return false
	}
	_, _, err := splitKey(s, 0)
	return err == nil
}

// splitKey splits "key: rest" (the key may be quoted).
func splitKey(s string, n int) (string, string, error) {
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		end := strings.IndexByte(s[1:], q)
		if end < 0 || !strings.HasPrefix(s[end+2:], ":") {
			return "", "", fmt.Errorf("line %d: cannot read the key", n)
		}
		k, err := scalar(s[:end+2], n)
		if err != nil {
			return "", "", err
		}
		ks, _ := k.(string)
		return ks, strings.TrimSpace(s[end+3:]), nil
	}
	i := strings.Index(s, ": ")
	if i < 0 {
		if strings.HasSuffix(s, ":") {
			i = len(s) - 1
		} else {
			return "", "", fmt.Errorf("line %d: not a \"key: value\" line", n)
		}
	}
	key := strings.TrimSpace(s[:i])
	if key == "" || strings.ContainsAny(key[:1], "&*!|>%@`") {
		return "", "", fmt.Errorf("line %d: unsupported key %q", n, key)
	}
	return key, strings.TrimSpace(s[i+1:]), nil
}

// stripComment removes a "#" comment outside quotes.
func stripComment(s string) string {
	inS, inD := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' && !inD:
			inS = !inS
		case c == '"' && !inS:
			if i == 0 || s[i-1] != '\\' {
				inD = !inD
			}
		case c == '#' && !inS && !inD && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// scalar parses an inline value.
func scalar(s string, n int) (any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	switch s[0] {
	case '&', '*', '!':
		return nil, fmt.Errorf("line %d: anchors, aliases and tags are not supported", n)
	case '"':
		v, err := strconv.Unquote(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: bad double-quoted string", n)
		}
		return v, nil
	case '\'':
		if len(s) < 2 || s[len(s)-1] != '\'' {
			return nil, fmt.Errorf("line %d: bad single-quoted string", n)
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	case '[', '{':
		return flow(s, n)
	}
	switch s {
	case "null", "Null", "NULL", "~":
		return nil, nil
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	case ".inf", ".Inf", "+.inf":
		return math.Inf(1), nil
	case "-.inf", "-.Inf":
		return math.Inf(-1), nil
	case ".nan", ".NaN":
		return math.NaN(), nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return float64(i), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpP_") {
		return f, nil
	}
	return s, nil
}

// flow parses a one-line flow sequence or mapping of scalars ("[a, b]",
// "{k: v}", "[]", "{}").
func flow(s string, n int) (any, error) {
	open, close := s[0], byte(']')
	if open == '{' {
		close = '}'
	}
	if s[len(s)-1] != close {
		return nil, fmt.Errorf("line %d: multi-line flow collections are not supported", n)
	}
	body := strings.TrimSpace(s[1 : len(s)-1])
	var items []string
	if body != "" {
		depth, start, inQ := 0, 0, byte(0)
		for i := 0; i < len(body); i++ {
			c := body[i]
			switch {
			case inQ != 0:
				if c == inQ {
					inQ = 0
				}
			case c == '"' || c == '\'':
				inQ = c
			case c == '[' || c == '{':
				depth++
			case c == ']' || c == '}':
				depth--
			case c == ',' && depth == 0:
				items = append(items, body[start:i])
				start = i + 1
			}
		}
		items = append(items, body[start:])
	}
	if open == '[' {
		out := []any{}
		for _, it := range items {
			v, err := scalar(it, n)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	out := map[string]any{}
	for _, it := range items {
		k, rest, err := splitKey(strings.TrimSpace(it), n)
		if err != nil {
			return nil, err
		}
		v, err := scalar(rest, n)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}
