package sse

import (
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// Memo classifies the messages of streams as Classify does, faster for the
// common case: a server's content chunks are byte-for-byte the same but for
// the content string (vLLM, SGLang, TGI and OpenAI repeat id, model,
// created and the rest in every chunk). Memo remembers the last content
// chunk it classified with the fast path and where its content literal
// lies; a new message whose data equals it before that literal and after
// the new literal gets the same Payload with the new content, after
// checking only the new literal. Anything else is classified in full.
//
// The answer is always Classify's: the two documents differ only in one
// string literal's value, which the fast path (classifyFast) reads for
// Content and for nothing else, and the new value is validated by the
// same code and must be non-empty (so Kind stays KindContent).
// FuzzMemo checks it against Classify on streams of related chunks.
//
// The zero value is ready; a Memo is not safe for concurrent use. It
// holds the last content chunk's data string.
type Memo struct {
	prev  string  // data of the remembered chunk; "" if none
	at    [2]int  // its content literal, quotes included
	p     Payload // its classification
	Hits  int     // messages answered from the memo (for benchmarks)
	Total int     // messages classified
}

// Classify is Classify(m), remembering content chunks.
func (c *Memo) Classify(m *Message) Payload {
	c.Total++
	if !m.HasData || m.Event != "" && strings.Contains(strings.ToLower(m.Event), "error") {
		return Classify(m)
	}
	if strings.TrimSpace(m.Data) == "[DONE]" {
		return Payload{Kind: formats.KindDone}
	}
	if p, ok := c.reuse(m.Data); ok {
		c.Hits++
		return p
	}
	p, at, ok := classifyFastAt(m.Data)
	if !ok {
		return classifySlow(m.Data)
	}
	if p.Kind == formats.KindContent && at[1] > at[0] {
		c.prev, c.at, c.p = m.Data, at, p
	}
	return p
}

// reuse answers for data from the remembered chunk when data has the same
// bytes before the content literal and after it, and a valid non-empty
// content literal in between.
func (c *Memo) reuse(data string) (Payload, bool) {
	a, b := c.at[0], c.at[1]
	if c.prev == "" || len(data) <= a || data[:a] != c.prev[:a] {
		return Payload{}, false
	}
	s := fastScanner{s: data, i: a}
	content, ok := s.str()
	if !ok || content == "" || data[s.i:] != c.prev[b:] {
		return Payload{}, false
	}
	p := c.p
	p.Content = content
	c.prev, c.at[1] = data, s.i
	return p, true
}
