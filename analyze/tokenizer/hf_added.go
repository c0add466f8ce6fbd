package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedMatcher splits text on a tokenizer's added tokens with the rules of
// the Rust crate's AddedVocabulary::find_matches: leftmost-longest matches
// (an Aho-Corasick automaton there, a first-byte index here), single_word
// tokens only between non-word characters, lstrip/rstrip tokens swallowing
// the whitespace beside them. Every kept match is one token id, whether or
// not the token is "special" (transformers' split_special_tokens=False).
type addedMatcher struct {
	byFirst map[byte][]hfAddedToken // candidates by first byte, longest first
}

type segment struct {
	text  string
	start int // byte offset in the string that was split
	added bool
}

func newAddedMatcher(tokens []hfAddedToken) *addedMatcher {
	m := &addedMatcher{byFirst: map[byte][]hfAddedToken{}}
	for _, t := range tokens {
		m.byFirst[t.Content[0]] = append(m.byFirst[t.Content[0]], t)
	}
	for _, list := range m.byFirst {
		sort.SliceStable(list, func(i, j int) bool { return len(list[i].Content) > len(list[j].Content) })
	}
	return m
}

// split returns text as alternating plain and added-token segments; plain
// segments are never empty, so the empty string yields no segment.
func (m *addedMatcher) split(text string) []segment {
	if len(m.byFirst) == 0 {
		if text == "" {
			return nil
		}
		return []segment{{text: text}}
	}
	var out []segment
	offset := 0 // end of the previous match
	for i := 0; i < len(text); {
		tok, ok := m.longestAt(text, i)
		if !ok {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			continue
		}
		start, stop := i, i+len(tok.Content)
		if tok.SingleWord && (endsWithWord(text[:start]) || startsWithWord(text[stop:])) {
			i = stop // the automaton resumes after a rejected match
			continue
		}
		if tok.LStrip {
			s := start
			for s > offset {
				r, size := utf8.DecodeLastRuneInString(text[:s])
				if !unicode.IsSpace(r) {
					break
				}
				s -= size
			}
			start = s
		}
		if tok.RStrip {
			for stop < len(text) {
				r, size := utf8.DecodeRuneInString(text[stop:])
				if !unicode.IsSpace(r) {
					break
				}
				stop += size
			}
		}
		if offset < start {
			out = append(out, segment{text: text[offset:start], start: offset})
		}
		out = append(out, segment{text: text[start:stop], start: start, added: true})
		offset, i = stop, stop
	}
	if offset < len(text) {
		out = append(out, segment{text: text[offset:], start: offset})
	}
	return out
}

func (m *addedMatcher) longestAt(text string, i int) (hfAddedToken, bool) {
	for _, t := range m.byFirst[text[i]] {
		if strings.HasPrefix(text[i:], t.Content) {
			return t, true
		}
	}
	return hfAddedToken{}, false
}

func isWordChar(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

func endsWithWord(s string) bool {
	r, size := utf8.DecodeLastRuneInString(s)
	return size > 0 && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	return size > 0 && isWordChar(r)
}
