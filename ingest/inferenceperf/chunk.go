package inferenceperf

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// chunkInfo is chunkEvent's answer for one recorded chunk.
type chunkInfo struct {
	kind       string
	hasChoices bool
	text       string
	reasoning  string
	finish     string
	id         string
}

// sval is a *string field of chunkJSON as the fast path read it: set
// when the member was a string (lit, quotes included).
type sval struct {
	lit []byte
	set bool
	at  int // where lit starts in the chunk
}

func (v sval) String() string {
	if !v.set {
		return ""
	}
	return string(appendUnquoted(nil, v.lit))
}

// field reads a string-or-null member into v (null clears it, as
// encoding/json does for a pointer); false for any other value.
func (s *scanner) field(v *sval) bool {
	if s.Lit("null") {
		*v = sval{}
		return true
	}
	at := s.I
	lit, _, ok := s.Str()
	if !ok {
		return false
	}
	*v = sval{lit: lit, set: true, at: at}
	return true
}

// folds reports whether key names one of names only case-insensitively
// (encoding/json would match it; the fast path leaves that to it).
func folds(key []byte, names ...string) bool {
	for _, n := range names {
		// a fold keeps the rune count; a rune is at most 4 bytes
		if len(key) >= len(n) && len(key) <= 4*len(n) && string(key) != n && strings.EqualFold(string(key), n) {
			return true
		}
	}
	return false
}

// choiceVals are the members of a choice chunkJSON reads.
type choiceVals struct {
	text, content, reasoningContent, reasoning, finish sval
}

// fastChunk is chunkEvent for chunks it is sure to read as encoding/json
// does: an object whose members chunkJSON reads are spelled exactly, once
// each, with the types chunkJSON gives them (strings or null; objects,
// arrays or null), and nothing after it. ok is false for anything else;
// chunkEvent then decides. at is the span of the string literal the text
// came from when it has no escapes (chunkMemo's template), else [0, 0].
func fastChunk(data []byte) (c chunkInfo, at [2]int, ok bool) {
	s := scanner{Scanner: jsonscan.Scanner{B: data}}
	s.WS()
	if s.Next() != '{' {
		return c, at, false
	}
	var id, deltaText sval
	var first choiceVals
	nChoices := 0
	var seenID, seenChoices, seenDelta bool
	ok = s.Members(func(key []byte) bool {
		switch string(key) {
		case "id":
			if seenID {
				return false
			}
			seenID = true
			return s.field(&id)
		case "choices":
			if seenChoices {
				return false
			}
			seenChoices = true
			if s.Lit("null") {
				return true
			}
			if s.Next() != '[' {
				return false
			}
			s.I++
			s.WS()
			if s.Eat(']') {
				return true
			}
			for {
				var cv choiceVals
				if !s.choice(&cv) {
					return false
				}
				if nChoices == 0 {
					first = cv
				}
				nChoices++
				s.WS()
				if s.Eat(']') {
					return true
				}
				if !s.Eat(',') {
					return false
				}
				s.WS()
			}
		case "delta":
			if seenDelta {
				return false
			}
			seenDelta = true
			if s.Lit("null") {
				return true
			}
			seen := false
			return s.Next() == '{' && s.Members(func(k []byte) bool {
				if string(k) == "text" {
					if seen {
						return false
					}
					seen = true
					return s.field(&deltaText)
				}
				if folds(k, "text") {
					return false
				}
				return s.Skip(2)
			})
		}
		if folds(key, "id", "choices", "delta") {
			return false
		}
		return s.Skip(1)
	})
	if !ok {
		return c, at, false
	}
	s.WS()
	if s.I != len(s.B) {
		return c, at, false
	}
	var src sval
	c.id = id.String()
	if nChoices > 0 {
		c.hasChoices = true
		src = first.text
		c.text = src.String()
		if c.text == "" {
			src = first.content
			c.text = src.String()
		}
		c.reasoning = first.reasoningContent.String()
		if c.reasoning == "" {
			c.reasoning = first.reasoning.String()
		}
		c.finish = first.finish.String()
	} else {
		src = deltaText
		c.text = src.String()
	}
	switch {
	case c.text != "":
		c.kind = formats.KindContent
		if bytes.IndexByte(src.lit, '\\') < 0 {
			at = [2]int{src.at, src.at + len(src.lit)}
		}
	case c.reasoning != "":
		c.kind = formats.KindReasoning
	case c.hasChoices:
		c.kind = formats.KindEmpty
	default:
		c.kind = formats.KindOther
	}
	return c, at, true
}

// fieldOnce reads a string member into v unless the object had it
// already (*seen): a repeated member is left to encoding/json, whose
// last-one-wins the fast path does not follow.
func (s *scanner) fieldOnce(seen *bool, v *sval) bool {
	if *seen {
		return false
	}
	*seen = true
	return s.field(v)
}

// choice reads one element of choices (an object or null).
func (s *scanner) choice(cv *choiceVals) bool {
	if s.Lit("null") {
		return true
	}
	if s.Next() != '{' {
		return false
	}
	var seenText, seenDelta, seenFinish bool
	return s.Members(func(key []byte) bool {
		switch string(key) {
		case "text":
			return s.fieldOnce(&seenText, &cv.text)
		case "finish_reason":
			return s.fieldOnce(&seenFinish, &cv.finish)
		case "delta":
			if seenDelta {
				return false
			}
			seenDelta = true
			if s.Lit("null") {
				return true
			}
			var seenC, seenRC, seenR bool
			return s.Next() == '{' && s.Members(func(k []byte) bool {
				switch string(k) {
				case "content":
					return s.fieldOnce(&seenC, &cv.content)
				case "reasoning_content":
					return s.fieldOnce(&seenRC, &cv.reasoningContent)
				case "reasoning":
					return s.fieldOnce(&seenR, &cv.reasoning)
				}
				if folds(k, "content", "reasoning_content", "reasoning") {
					return false
				}
				return s.Skip(4)
			})
		}
		if folds(key, "text", "finish_reason", "delta") {
			return false
		}
		return s.Skip(3)
	})
}

// chunkMemo classifies the chunks of a record as chunkEvent does, faster
// for the common case: a server's content chunks are byte-for-byte the
// same but for the text (the template ingest/sse's Memo uses for
// GenAI-Perf's streams). It remembers the last content chunk the fast
// path read and where its text literal lies; a chunk with the same bytes
// before that literal and after its own escape-free, non-empty literal
// there gets the same answer with the new text. The two chunks differ in
// one string literal's value, which chunkJSON reads for the text alone,
// and a non-empty text keeps the kind content. Anything else goes to
// fastChunk, then to chunkEvent. FuzzChunkMemo holds it to chunkEvent.
type chunkMemo struct {
	prev []byte // the remembered chunk (a copy); nil if none
	at   [2]int // its text literal, quotes included
	c    chunkInfo
	buf  []byte // the chunk being classified, decoded
	lit  litTemplate
}

// classify answers for data, which the caller may overwrite afterwards.
func (m *chunkMemo) classify(data []byte) chunkInfo {
	if c, ok := m.reuse(data); ok {
		return c
	}
	c, at, ok := fastChunk(data)
	if !ok {
		kind, hasChoices, text, reasoning, finish, id := chunkEvent(string(data))
		return chunkInfo{kind, hasChoices, text, reasoning, finish, id}
	}
	if at[1] > at[0] {
		m.prev, m.at, m.c = append(m.prev[:0], data...), at, c
	}
	return c
}

func (m *chunkMemo) reuse(data []byte) (chunkInfo, bool) {
	a, b := m.at[0], m.at[1]
	if m.prev == nil || len(data) <= a || !bytes.Equal(data[:a], m.prev[:a]) {
		return chunkInfo{}, false
	}
	s := scanner{Scanner: jsonscan.Scanner{B: data, I: a}}
	lit, esc, ok := s.Str()
	if !ok || esc || len(lit) == 2 || !bytes.Equal(data[s.I:], m.prev[b:]) {
		return chunkInfo{}, false
	}
	in := lit[1 : len(lit)-1]
	if !utf8.Valid(in) {
		return chunkInfo{}, false
	}
	c := m.c
	c.text = string(in)
	m.prev = append(m.prev[:a], data[a:]...)
	m.at[1] = s.I
	return c, true
}

// chunk classifies record r's response chunk i and returns its decoded
// length too. A chunk the fast path split is first tried against the
// literal template (reuseLit), then decoded and classified.
func (m *chunkMemo) chunk(r *record, i int) (chunkInfo, int) {
	if r.chunkLits == nil {
		m.buf = append(m.buf[:0], r.chunks[i]...)
		return m.classify(m.buf), len(m.buf)
	}
	lit := r.chunkLits[i]
	if c, n, ok := m.reuseLit(lit); ok {
		return c, n
	}
	m.buf = appendUnquoted(m.buf[:0], lit)
	m.lit.prev = m.lit.prev[:0]
	c := m.classify(m.buf)
	if m.prev != nil && bytes.Equal(m.prev, m.buf) {
		m.templateLit(lit, c)
	}
	return c, len(m.buf)
}

// litTemplate is the memo's template in the file's form: the chunk's
// JSON string literal as written (escaped), with the positions of the
// escaped quotes (\") around its text.
type litTemplate struct {
	prev     []byte // the literal (a copy); empty if none
	open     int    // where the text's opening \" starts
	close    int    // where its closing \" starts
	c        chunkInfo
	size     int // the decoded chunk's length
	textSize int // its text's length
}

// templateLit makes literal lit, whose decoded chunk the memo just
// remembered with answer c, the literal template, when its escapes are
// all one-character ones (each \x is one decoded byte).
func (m *chunkMemo) templateLit(lit []byte, c chunkInfo) {
	a, b := m.at[0], m.at[1]-1 // the text's quotes in the decoded chunk
	open, close := -1, -1
	e, d := 1, 0 // escaped and decoded offsets
	for e < len(lit)-1 {
		if d == a {
			open = e
		}
		if d == b {
			close = e
		}
		if lit[e] == '\\' {
			if lit[e+1] == 'u' {
				return
			}
			e += 2
		} else {
			e++
		}
		d++
	}
	if open < 0 || close < 0 || !bytes.HasPrefix(lit[open:], []byte(`\"`)) || !bytes.HasPrefix(lit[close:], []byte(`\"`)) {
		return
	}
	m.lit = litTemplate{prev: append(m.lit.prev[:0], lit...), open: open, close: close, c: c, size: len(m.buf), textSize: b - a - 1}
}

// reuseLit answers for literal lit from the literal template: lit has the
// same bytes up to and with the text's opening \", then a non-empty text
// without a backslash (so it decodes to itself), then the same bytes from
// the closing \" on. Decoded, lit is then the decoded template with
// another escape-free, non-empty text literal: reuse's case.
func (m *chunkMemo) reuseLit(lit []byte) (chunkInfo, int, bool) {
	t := &m.lit
	o := t.open + 2
	if len(t.prev) == 0 || len(lit) <= o || !bytes.Equal(lit[:o], t.prev[:o]) {
		return chunkInfo{}, 0, false
	}
	k := bytes.IndexByte(lit[o:], '\\')
	if k <= 0 || !bytes.Equal(lit[o+k:], t.prev[t.close:]) {
		return chunkInfo{}, 0, false
	}
	text := lit[o : o+k]
	for _, c := range text {
		if c >= utf8.RuneSelf {
			if !utf8.Valid(text) {
				return chunkInfo{}, 0, false
			}
			break
		}
	}
	c := t.c
	c.text = string(text)
	size := t.size - t.textSize + len(text)
	t.prev = append(t.prev[:o], lit[o:]...)
	t.close, t.textSize, t.size = o+k, len(text), size
	return c, size, true
}
