package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// Normalizers and pre-tokenizers of tokenizer.json, following the Rust
// tokenizers crate (tokenizers/src/normalizers, tokenizers/src/pre_tokenizers).
// Regex patterns in tokenizer.json are Oniguruma patterns; they run here on
// regexp2 (.NET syntax), which accepts the constructs used by the GPT-2,
// GPT-4o, Llama 3 and Qwen split patterns: \p{..} classes, (?i:..) groups
// and the (?!\S) look-ahead.

type normalizer interface {
	normalize(s string) string
}

type normalizerFunc func(string) string

func (f normalizerFunc) normalize(s string) string { return f(s) }

type normSequence []normalizer

func (q normSequence) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		var q normSequence
		for _, r := range c.Normalizers {
			n, err := parseNormalizer(r)
			if err != nil {
				return nil, err
			}
			if n != nil {
				q = append(q, n)
			}
		}
		return q, nil
	case "Prepend":
		p := c.Prepend
		return normalizerFunc(func(s string) string {
			if s == "" {
				return s
			}
			return p + s
		}), nil
	case "Replace":
		if c.Pattern == nil {
			return nil, errors.New(`type "Replace" without pattern`)
		}
		content := c.Content
		switch {
		case c.Pattern.String != nil:
			lit := *c.Pattern.String
			if lit == "" {
				return normalizerFunc(func(s string) string { return s }), nil
			}
			return normalizerFunc(func(s string) string { return strings.ReplaceAll(s, lit, content) }), nil
		case c.Pattern.Regex != nil:
			re, err := compileRegex(*c.Pattern.Regex)
			if err != nil {
				return nil, err
			}
			return normalizerFunc(func(s string) string {
				idx, err := re.FindAllStringIndex(s, -1)
				if err != nil || len(idx) == 0 {
					return s
				}
				var sb strings.Builder
				prev := 0
				for _, m := range idx {
					sb.WriteString(s[prev:m[0]])
					sb.WriteString(content)
					prev = m[1]
				}
				sb.WriteString(s[prev:])
				return sb.String()
			}), nil
		}
		return nil, errors.New(`type "Replace": pattern is neither String nor Regex`)
	case "NFC":
		return normalizerFunc(norm.NFC.String), nil
	case "NFD":
		return normalizerFunc(norm.NFD.String), nil
	case "NFKC":
		return normalizerFunc(norm.NFKC.String), nil
	case "NFKD":
		return normalizerFunc(norm.NFKD.String), nil
	case "Lowercase":
		return normalizerFunc(strings.ToLower), nil
	case "Strip":
		left, right := c.StripLeft == nil || *c.StripLeft, c.StripRight == nil || *c.StripRight
		return normalizerFunc(func(s string) string {
			if left {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if right {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
			return s
		}), nil
	case "StripAccents":
		return normalizerFunc(func(s string) string {
			return strings.Map(func(r rune) rune {
				if unicode.Is(unicode.Mn, r) {
					return -1
				}
				return r
			}, s)
		}), nil
	case "Precompiled":
		if c.PrecompiledCharsmap == nil || *c.PrecompiledCharsmap == "" {
			return nil, nil // an empty charsmap is the identity
		}
		return nil, fmt.Errorf(`type "Precompiled" with a SentencePiece charsmap: %w`, ErrUnsupported)
	default:
		return nil, fmt.Errorf("type %q: %w", c.Type, ErrUnsupported)
	}
}

// piece is a part of a segment on its way to becoming words. first is true
// while the piece starts at offset 0 of the original text (what Metaspace's
// prepend_scheme "first" tests).
type piece struct {
	s     string
	first bool
}

type preTokenizer interface {
	preTokenize(in []piece) ([]piece, error)
}

type preSequence []preTokenizer

func (q preSequence) preTokenize(in []piece) ([]piece, error) {
	var err error
	for _, p := range q {
		if in, err = p.preTokenize(in); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// behavior is the Rust crate's SplitDelimiterBehavior.
type behavior int

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(s string) (behavior, error) {
	switch s {
	case "Removed":
		return removed, nil
	case "Isolated":
		return isolated, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, fmt.Errorf("split behavior %q: %w", s, ErrUnsupported)
}

// span is a byte range of a piece; match marks a delimiter.
type span struct {
	start, end int
	match      bool
}

// spansFromMatches turns match ranges into a full cover of [0,n).
func spansFromMatches(n int, matches [][]int) []span {
	out := make([]span, 0, 2*len(matches)+1)
	prev := 0
	for _, m := range matches {
		if prev != m[0] {
			out = append(out, span{prev, m[0], false})
		}
		out = append(out, span{m[0], m[1], true})
		prev = m[1]
	}
	if prev != n {
		out = append(out, span{prev, n, false})
	}
	return out
}

// applyBehavior is NormalizedString::split: it regroups the spans by the
// delimiter behavior and returns the non-empty pieces.
func applyBehavior(p piece, spans []span, b behavior) []piece {
	var kept []span
	switch b {
	case removed:
		for _, s := range spans {
			if !s.match {
				kept = append(kept, s)
			}
		}
	case isolated:
		kept = spans
	case mergedWithPrevious:
		prevMatch := false
		for _, s := range spans {
			if s.match && !prevMatch && len(kept) > 0 {
				kept[len(kept)-1].end = s.end
			} else {
				kept = append(kept, span{s.start, s.end, false})
			}
			prevMatch = s.match
		}
	case mergedWithNext:
		prevMatch := false
		for i := len(spans) - 1; i >= 0; i-- {
			s := spans[i]
			if s.match && !prevMatch && len(kept) > 0 {
				kept[len(kept)-1].start = s.start
			} else {
				kept = append(kept, span{s.start, s.end, false})
			}
			prevMatch = s.match
		}
		for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
			kept[i], kept[j] = kept[j], kept[i]
		}
	case contiguous:
		prevMatch := false
		for _, s := range spans {
			if s.match == prevMatch && len(kept) > 0 {
				kept[len(kept)-1].end = s.end
			} else {
				kept = append(kept, span{s.start, s.end, false})
			}
			prevMatch = s.match
		}
	}
	out := make([]piece, 0, len(kept))
	for _, s := range kept {
		if s.end > s.start {
			out = append(out, piece{s: p.s[s.start:s.end], first: p.first && s.start == 0})
		}
	}
	return out
}

// charMatches returns one match per rune for which f is true.
func charMatches(s string, f func(rune) bool) [][]int {
	var m [][]int
	for i, r := range s {
		if f(r) {
			m = append(m, []int{i, i + utf8.RuneLen(r)})
		}
	}
	return m
}

// splitter applies a match function and a behavior to every piece.
type splitter struct {
	find   func(s string) ([][]int, error)
	b      behavior
	invert bool
}

func (sp splitter) preTokenize(in []piece) ([]piece, error) {
	var out []piece
	for _, p := range in {
		m, err := sp.find(p.s)
		if err != nil {
			return nil, err
		}
		spans := spansFromMatches(len(p.s), m)
		if sp.invert {
			for i := range spans {
				spans[i].match = !spans[i].match
			}
		}
		out = append(out, applyBehavior(p, spans, sp.b)...)
	}
	return out, nil
}

func regexFinder(re *regexp2.Regexp) func(string) ([][]int, error) {
	return func(s string) ([][]int, error) { return re.FindAllStringIndex(s, -1) }
}

func literalFinder(lit string) func(string) ([][]int, error) {
	return func(s string) ([][]int, error) {
		var m [][]int
		if lit == "" {
			return nil, nil
		}
		for off := 0; ; {
			i := strings.Index(s[off:], lit)
			if i < 0 {
				return m, nil
			}
			m = append(m, []int{off + i, off + i + len(lit)})
			off += i + len(lit)
		}
	}
}

func charFinder(f func(rune) bool) func(string) ([][]int, error) {
	return func(s string) ([][]int, error) { return charMatches(s, f), nil }
}

func isPunct(r rune) bool {
	// Rust: char::is_ascii_punctuation || Unicode category P*.
	return unicode.IsPunct(r) || r < utf8.RuneSelf && strings.ContainsRune("$+<=>^`|~", r)
}

// gpt2Pattern is the split regex of the ByteLevel pre-tokenizer
// (use_regex=true), the same as tiktoken's r50k_base pattern.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

func compileRegex(pattern string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w (%w)", pattern, err, ErrUnsupported)
	}
	return re, nil
}

// byteLevel is the ByteLevel pre-tokenizer: optional prefix space,
// optional GPT-2 split, then each byte mapped to its printable stand-in.
type byteLevel struct {
	addPrefixSpace bool
	re             *regexp2.Regexp // nil when use_regex is false
}

func (b byteLevel) preTokenize(in []piece) ([]piece, error) {
	var out []piece
	for _, p := range in {
		if b.addPrefixSpace && !strings.HasPrefix(p.s, " ") {
			p.s = " " + p.s
		}
		if b.re == nil {
			out = append(out, p)
			continue
		}
		m, err := b.re.FindAllStringIndex(p.s, -1)
		if err != nil {
			return nil, err
		}
		out = append(out, applyBehavior(p, spansFromMatches(len(p.s), m), isolated)...)
	}
	for i := range out {
		out[i].s = byteLevelMap(out[i].s)
	}
	return out, nil
}

// byteToUnicode is GPT-2's bytes_to_unicode table.
var byteToUnicode = func() [256]rune {
	var t [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			t[b] = rune(b)
		} else {
			t[b] = rune(256 + n)
			n++
		}
	}
	return t
}()

func byteLevelMap(s string) string {
	var sb strings.Builder
	sb.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		sb.WriteRune(byteToUnicode[s[i]])
	}
	return sb.String()
}

// metaspace is the Metaspace pre-tokenizer (SentencePiece style "▁").
type metaspace struct {
	repl    string
	prepend string // "always", "first" or "never"
	split   bool
}

func (m metaspace) preTokenize(in []piece) ([]piece, error) {
	var out []piece
	for _, p := range in {
		p.s = strings.ReplaceAll(p.s, " ", m.repl)
		if !strings.HasPrefix(p.s, m.repl) && (m.prepend == "always" || m.prepend == "first" && p.first) {
			p.s = m.repl + p.s
		}
		if !m.split {
			out = append(out, p)
			continue
		}
		mm, _ := literalFinder(m.repl)(p.s)
		out = append(out, applyBehavior(p, spansFromMatches(len(p.s), mm), mergedWithNext)...)
	}
	return out, nil
}

func parsePreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "Sequence":
		var q preSequence
		for _, r := range c.PreTokenizers {
			p, err := parsePreTokenizer(r)
			if err != nil {
				return nil, err
			}
			if p != nil {
				q = append(q, p)
			}
		}
		return q, nil
	case "ByteLevel":
		b := byteLevel{addPrefixSpace: c.AddPrefixSpace == nil || *c.AddPrefixSpace}
		if c.UseRegex == nil || *c.UseRegex {
			re, err := compileRegex(gpt2Pattern)
			if err != nil {
				return nil, err
			}
			b.re = re
		}
		return b, nil
	case "Split":
		b, err := parseBehavior(c.Behavior)
		if err != nil {
			return nil, err
		}
		sp := splitter{b: b, invert: c.Invert}
		switch {
		case c.Pattern == nil:
			return nil, errors.New(`type "Split" without pattern`)
		case c.Pattern.String != nil:
			sp.find = literalFinder(*c.Pattern.String)
		case c.Pattern.Regex != nil:
			re, err := compileRegex(*c.Pattern.Regex)
			if err != nil {
				return nil, err
			}
			sp.find = regexFinder(re)
		default:
			return nil, errors.New(`type "Split": pattern is neither String nor Regex`)
		}
		return sp, nil
	case "Metaspace":
		m := metaspace{repl: c.Replacement, prepend: c.PrependScheme, split: c.Split == nil || *c.Split}
		if m.repl == "" {
			m.repl = "▁"
		}
		if m.prepend == "" { // files from tokenizers < 0.14 carry add_prefix_space
			m.prepend = "always"
			if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
				m.prepend = "never"
			}
		}
		if m.prepend != "always" && m.prepend != "first" && m.prepend != "never" {
			return nil, fmt.Errorf(`type "Metaspace": prepend_scheme %q: %w`, m.prepend, ErrUnsupported)
		}
		return m, nil
	case "Digits":
		if c.IndividualDigits {
			return splitter{find: charFinder(unicode.IsNumber), b: isolated}, nil
		}
		return splitter{find: charFinder(unicode.IsNumber), b: contiguous}, nil
	case "Whitespace":
		re, err := compileRegex(`[\p{L}\p{M}\p{Nd}\p{Pc}]+|[^\p{L}\p{M}\p{Nd}\p{Pc}\s]+`)
		if err != nil {
			return nil, err
		}
		return splitter{find: regexFinder(re), b: removed, invert: true}, nil
	case "WhitespaceSplit":
		return splitter{find: charFinder(unicode.IsSpace), b: removed}, nil
	case "Punctuation":
		b := isolated
		if c.Behavior != "" {
			var err error
			if b, err = parseBehavior(c.Behavior); err != nil {
				return nil, err
			}
		}
		return splitter{find: charFinder(isPunct), b: b}, nil
	case "BertPreTokenizer":
		return preSequence{
			splitter{find: charFinder(unicode.IsSpace), b: removed},
			splitter{find: charFinder(isPunct), b: isolated},
		}, nil
	default:
		return nil, fmt.Errorf("type %q: %w", c.Type, ErrUnsupported)
	}
}
