package sse

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/formats"
)

// classifyFast is ClassifyJSON's fast path for the common shapes: an
// OpenAI-style chunk or response object whose keys are spelled exactly
// (lower case), each at most once, without an error. It validates the whole
// JSON text as it goes and returns ok = false — leaving the decision to the
// encoding/json path — on anything it does not handle exactly as
// encoding/json would: invalid or unusual JSON (control characters, invalid
// UTF-8, deep nesting, trailing data), a key that differs from a field name
// only in case, a repeated field, a value of an unexpected type, an error
// ("error" not null, "object":"error"), content given as an array of parts,
// a null first choice, or a usage count that is not a plain integer.
// FuzzClassifyFast checks that whenever it answers, its answer equals the
// slow path's.
func classifyFast(data string) (p Payload, ok bool) {
	p, _, ok = classifyFastAt(data)
	return p, ok
}

// classifyFastAt is classifyFast that also returns where in data the
// string literal holding p.Content lies (quotes included): at[0] is its
// opening quote, at[1] just past its closing quote; at = {0, 0} when
// Content is "" or did not come from a string literal. Memo uses it.
func classifyFastAt(data string) (p Payload, at [2]int, ok bool) {
	s := fastScanner{s: data}
	s.ws()
	if !s.peek('{') {
		return Payload{}, [2]int{}, false
	}
	var seen uint8
	var choices bool
	ok = s.object(func(key string) bool {
		if key == "metrics" || lowerKnown(key, metricsKeys) {
			// vLLM's per-response metrics (the last chunk only): the
			// reference decoder reads them
			return false
		}
		bit := topKey(key)
		if bit == 0 {
			return !lowerKnown(key, topKeys) && s.skip(0)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch key {
		case "id":
			v, _, ok := s.anyString()
			p.ID = v
			return ok
		case "object":
			v, _, ok := s.anyString()
			return ok && v != "error"
		case "error":
			return s.literal("null")
		case "choices":
			var ok bool
			choices, ok = s.choices(&p)
			return ok
		case "usage":
			return s.usage(&p)
		}
		return s.skip(0) // message, type, code: read only for errors
	})
	if !ok {
		return Payload{}, [2]int{}, false
	}
	s.ws()
	if s.i != len(s.s) {
		return Payload{}, [2]int{}, false
	}
	p.HasChoices = choices
	switch {
	case choices && p.Content != "":
		p.Kind = formats.KindContent
	case choices && p.Reasoning != "":
		p.Kind = formats.KindReasoning
	case choices && p.Role != "" && s.delta:
		p.Kind = formats.KindRole
	case choices:
		p.Kind = formats.KindEmpty
	case p.Usage != nil:
		p.Kind = formats.KindUsage
	default:
		p.Kind = formats.KindOther
	}
	if p.Content != "" {
		at = s.contentAt
	}
	return p, at, true
}

// The fields each level reads, each with its bit in a seen-set (0: not a
// field), and all names of the level for lowerKnown.
func topKey(k string) uint8 {
	switch k {
	case "id":
		return 1
	case "object":
		return 2
	case "message":
		return 4
	case "type":
		return 8
	case "code":
		return 16
	case "error":
		return 32
	case "choices":
		return 64
	case "usage":
		return 128
	}
	return 0
}

func choiceKey(k string) uint8 {
	switch k {
	case "delta":
		return 1
	case "message":
		return 2
	case "text":
		return 4
	case "finish_reason":
		return 8
	}
	return 0
}

func messageKey(k string) uint8 {
	switch k {
	case "role":
		return 1
	case "content":
		return 2
	case "reasoning_content":
		return 4
	case "reasoning":
		return 8
	case "tool_calls":
		return 16
	}
	return 0
}

func usageKey(k string) uint8 {
	switch k {
	case "prompt_tokens":
		return 1
	case "completion_tokens":
		return 2
	case "completion_tokens_details":
		return 4
	case "prompt_tokens_details":
		return 8
	}
	return 0
}

var (
	topKeys     = []string{"id", "object", "message", "type", "code", "error", "choices", "usage"}
	choiceKeys  = []string{"delta", "message", "text", "finish_reason"}
	messageKeys = []string{"role", "content", "reasoning_content", "reasoning", "tool_calls"}
	usageKeys   = []string{"prompt_tokens", "completion_tokens", "completion_tokens_details", "prompt_tokens_details"}
	detailKeys  = []string{"reasoning_tokens"}
	promptKeys  = []string{"cached_tokens"}
	metricsKeys = []string{"metrics"}
)

// lowerKnown reports whether key matches one of known's names
// case-insensitively (encoding/json would decode it into that field). The
// names are lower-case ASCII, so a key of lower-case ASCII letters, digits
// and '_' matches only by being equal; other keys (upper case, non-ASCII
// letters that fold to ASCII such as U+212A KELVIN SIGN) are compared.
func lowerKnown(key string, known []string) bool {
	plain := true
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			plain = false
			break
		}
	}
	if plain {
		return false
	}
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// fastScanner walks JSON text, validating it.
type fastScanner struct {
	s     string
	i     int
	depth int
	delta bool // choices[0] had a non-null "delta"
	// contentAt is the span of the string literal Payload.Content came
	// from (see classifyFastAt).
	contentAt [2]int
}

func (s *fastScanner) ws() {
	for s.i < len(s.s) {
		switch s.s[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *fastScanner) peek(c byte) bool { return s.i < len(s.s) && s.s[s.i] == c }

// object reads an object, calling field for each key with the scanner
// before the value (whitespace skipped); field must consume the value.
func (s *fastScanner) object(field func(key string) bool) bool {
	if !s.peek('{') {
		return false
	}
	s.depth++
	if s.depth > 64 {
		return false
	}
	s.i++
	s.ws()
	if s.peek('}') {
		s.i++
		s.depth--
		return true
	}
	for {
		s.ws()
		key, ok := s.rawString()
		if !ok || strings.IndexByte(key, '\\') >= 0 {
			return false
		}
		s.ws()
		if !s.peek(':') {
			return false
		}
		s.i++
		s.ws()
		if !field(key) {
			return false
		}
		s.ws()
		if s.peek(',') {
			s.i++
			continue
		}
		if s.peek('}') {
			s.i++
			s.depth--
			return true
		}
		return false
	}
}

// array reads an array, calling elem with each element's index.
func (s *fastScanner) array(elem func(i int) bool) bool {
	if !s.peek('[') {
		return false
	}
	s.depth++
	if s.depth > 64 {
		return false
	}
	s.i++
	s.ws()
	if s.peek(']') {
		s.i++
		s.depth--
		return true
	}
	for n := 0; ; n++ {
		s.ws()
		if !elem(n) {
			return false
		}
		s.ws()
		if s.peek(',') {
			s.i++
			continue
		}
		if s.peek(']') {
			s.i++
			s.depth--
			return true
		}
		return false
	}
}

// rawString reads a string and returns its contents still escaped. It
// refuses control characters and invalid UTF-8 (encoding/json would reject
// the one and replace the other) and validates escapes.
func (s *fastScanner) rawString() (string, bool) {
	if !s.peek('"') {
		return "", false
	}
	s.i++
	start := s.i
	// Most strings hold no escape, control or non-ASCII byte: find the
	// closing quote with the vectorized IndexByte, then check the bytes
	// before it.
	if j := strings.IndexByte(s.s[start:], '"'); j >= 0 {
		if seg := s.s[start : start+j]; plainASCII(seg) {
			s.i = start + j + 1
			return seg, true
		}
	}
	for s.i < len(s.s) {
		for s.i+4 <= len(s.s) && !strStop[s.s[s.i]] && !strStop[s.s[s.i+1]] && !strStop[s.s[s.i+2]] && !strStop[s.s[s.i+3]] {
			s.i += 4
		}
		if s.i >= len(s.s) {
			break
		}
		c := s.s[s.i]
		switch {
		case c == '"':
			v := s.s[start:s.i]
			s.i++
			return v, true
		case c == '\\':
			if s.i+1 >= len(s.s) {
				return "", false
			}
			switch s.s[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.s) {
					return "", false
				}
				for _, h := range []byte(s.s[s.i+2 : s.i+6]) {
					if !isHex(h) {
						return "", false
					}
				}
				s.i += 6
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, size := utf8.DecodeRuneInString(s.s[s.i:])
			if r == utf8.RuneError && size <= 1 {
				return "", false
			}
			s.i += size
		}
	}
	return "", false
}

// plainASCII reports whether s holds no byte of strStop, testing eight
// bytes at a time: no high bit (non-ASCII), no byte below 0x20, no
// backslash or quote (the classic has-zero-byte and has-less-than word tests, exact
// as booleans once the high bits are known clear).
func plainASCII(s string) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&hi != 0 || (x-lo*0x20)&^x&hi != 0 {
			return false
		}
		if y := x ^ (lo * '\\'); (y-lo)&^y&hi != 0 {
			return false
		}
		if y := x ^ (lo * '"'); (y-lo)&^y&hi != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if strStop[s[i]] {
			return false
		}
	}
	return true
}

// strStop marks the bytes that end a plain run inside a string: the quote,
// the backslash, control characters and non-ASCII bytes (checked as UTF-8).
var strStop = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// str reads a string value and unescapes it.
func (s *fastScanner) str() (string, bool) {
	start := s.i
	raw, ok := s.rawString()
	if !ok {
		return "", false
	}
	if strings.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	var v string
	if json.Unmarshal([]byte(s.s[start:s.i]), &v) != nil {
		return "", false
	}
	return v, true
}

// anyString reads any value as a field of type any would hold it, and
// returns it when it is a string ("" otherwise).
func (s *fastScanner) anyString() (v string, isStr, ok bool) {
	if s.peek('"') {
		v, ok = s.str()
		return v, true, ok
	}
	return "", false, s.skip(0)
}

// literal reads exactly lit (true, false, null).
func (s *fastScanner) literal(lit string) bool {
	if !strings.HasPrefix(s.s[s.i:], lit) {
		return false
	}
	s.i += len(lit)
	return true
}

// number reads a JSON number and returns its text.
func (s *fastScanner) number() (string, bool) {
	start := s.i
	if s.peek('-') {
		s.i++
	}
	switch {
	case s.peek('0'):
		s.i++
	case s.i < len(s.s) && '1' <= s.s[s.i] && s.s[s.i] <= '9':
		s.digits()
	default:
		return "", false
	}
	if s.peek('.') {
		s.i++
		if s.digits() == 0 {
			return "", false
		}
	}
	if s.peek('e') || s.peek('E') {
		s.i++
		if s.peek('+') || s.peek('-') {
			s.i++
		}
		if s.digits() == 0 {
			return "", false
		}
	}
	return s.s[start:s.i], true
}

func (s *fastScanner) digits() int {
	n := 0
	for s.i < len(s.s) && '0' <= s.s[s.i] && s.s[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// skip reads and validates any value.
func (s *fastScanner) skip(int) bool {
	if s.i >= len(s.s) {
		return false
	}
	switch c := s.s[s.i]; {
	case c == '{':
		return s.object(func(string) bool { return s.skip(0) })
	case c == '[':
		return s.array(func(int) bool { return s.skip(0) })
	case c == '"':
		_, ok := s.rawString()
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		_, ok := s.number()
		return ok
	}
}

// choices reads the "choices" value: null or an array whose first element
// is an object (later elements are validated only).
func (s *fastScanner) choices(p *Payload) (nonEmpty, ok bool) {
	if s.literal("null") {
		return false, true
	}
	ok = s.array(func(i int) bool {
		nonEmpty = true
		if i > 0 {
			return s.peek('{') && s.skip(0)
		}
		return s.choice(p)
	})
	return nonEmpty, ok
}

// choice reads choices[0] into p's Role, Content, Reasoning, FinishReason.
func (s *fastScanner) choice(p *Payload) bool {
	var seen uint8
	var delta, message msgFields
	var hasDelta, hasMessage bool
	var textContent string
	var textAt [2]int
	ok := s.object(func(key string) bool {
		bit := choiceKey(key)
		if bit == 0 {
			return !lowerKnown(key, choiceKeys) && s.skip(0)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch key {
		case "delta":
			var ok bool
			hasDelta, ok = s.message(&delta)
			return ok
		case "message":
			var ok bool
			hasMessage, ok = s.message(&message)
			return ok
		case "text":
			var ok bool
			from := s.i
			textContent, ok = s.textValue()
			textAt = [2]int{from, s.i}
			return ok
		default: // finish_reason
			v, _, ok := s.anyString()
			p.FinishReason = v
			return ok
		}
	})
	if !ok {
		return false
	}
	m := &delta
	if !hasDelta {
		m = &message
		if !hasMessage {
			m = nil
		}
	}
	if m != nil {
		p.Role, p.Content = m.role, m.content
		s.contentAt = m.contentAt
		p.Reasoning = m.reasoningContent
		if p.Reasoning == "" {
			p.Reasoning = m.reasoning
		}
	}
	if p.Content == "" {
		p.Content, s.contentAt = textContent, textAt
	}
	s.delta = hasDelta
	return true
}

type msgFields struct {
	role, content, reasoningContent, reasoning string
	contentAt                                  [2]int // content's literal (see classifyFastAt)
}

// message reads a delta or message object (null: absent).
func (s *fastScanner) message(m *msgFields) (present, ok bool) {
	if s.literal("null") {
		return false, true
	}
	var seen uint8
	ok = s.object(func(key string) bool {
		bit := messageKey(key)
		if bit == 0 {
			return !lowerKnown(key, messageKeys) && s.skip(0)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		var ok bool
		switch key {
		case "tool_calls":
			// an empty list or null is no call; any call goes to the
			// slow path, which reads its name and arguments
			if s.literal("null") {
				return true
			}
			return s.literal("[]")
		case "role":
			m.role, _, ok = s.anyString()
		case "content":
			from := s.i
			m.content, ok = s.textValue()
			m.contentAt = [2]int{from, s.i}
		case "reasoning_content":
			m.reasoningContent, ok = s.textValue()
		default:
			m.reasoning, ok = s.textValue()
		}
		return ok
	})
	return ok, ok
}

// textValue reads a content value as text does: a string; arrays (parts)
// are left to the slow path; any other value is "".
func (s *fastScanner) textValue() (string, bool) {
	switch {
	case s.peek('"'):
		return s.str()
	case s.peek('['):
		return "", false
	}
	return "", s.skip(0)
}

// usage reads the "usage" value: null or an object of integer counts.
func (s *fastScanner) usage(p *Payload) bool {
	if s.literal("null") {
		return true
	}
	var u Usage
	var seen uint8
	ok := s.object(func(key string) bool {
		bit := usageKey(key)
		if bit == 0 {
			return !lowerKnown(key, usageKeys) && s.skip(0)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch key {
		case "prompt_tokens":
			return s.count(&u.PromptTokens)
		case "completion_tokens":
			return s.count(&u.CompletionTokens)
		}
		if s.literal("null") {
			return true
		}
		want, names, dst := "reasoning_tokens", detailKeys, &u.ReasoningTokens
		if key == "prompt_tokens_details" {
			want, names, dst = "cached_tokens", promptKeys, &u.CachedTokens
		}
		var dseen bool
		return s.object(func(key string) bool {
			if key != want {
				return !lowerKnown(key, names) && s.skip(0)
			}
			if dseen {
				return false
			}
			dseen = true
			return s.count(dst)
		})
	})
	if !ok {
		return false
	}
	p.Usage = &u
	return true
}

// count reads null (leaving *dst nil) or a plain integer that fits int64.
func (s *fastScanner) count(dst **int64) bool {
	if s.literal("null") {
		return true
	}
	t, ok := s.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return false
	}
	*dst = &n
	return true
}
