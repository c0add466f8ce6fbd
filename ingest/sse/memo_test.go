package sse

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// vllmChunk is a vLLM chat chunk with the given content literal (JSON text,
// quotes included) and finish_reason literal.
func vllmChunk(content, finish string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` +
		content + `},"logprobs":null,"finish_reason":` + finish + `}]}`
}

func TestMemoReusesOnlySameTemplate(t *testing.T) {
	var c Memo
	stream := []struct {
		data string
		hit  bool
		kind string
		text string
	}{
		{`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, false, formats.KindRole, ""},
		{vllmChunk(`" the"`, "null"), false, formats.KindContent, " the"},
		{vllmChunk(`" model"`, "null"), true, formats.KindContent, " model"},
		{vllmChunk(`"\n\"x\"\u00e9"`, "null"), true, formats.KindContent, "\n\"x\"é"},
		{vllmChunk(`""`, "null"), false, formats.KindEmpty, ""},                // empty content: classified in full
		{vllmChunk(`"a"`, `"stop"`), false, formats.KindContent, "a"},          // suffix differs
		{vllmChunk(`"b"`, `"stop"`), true, formats.KindContent, "b"},           // new template
		{vllmChunk(`"bad`+"\x01"+`"`, `"stop"`), false, formats.KindOther, ""}, // control byte: not JSON
		{vllmChunk(`"c" `, `"stop"`), false, formats.KindContent, "c"},         // whitespace after literal: suffix differs
		{vllmChunk(`"d" `, `"stop"`), true, formats.KindContent, "d"},          // the new template has the space
		{`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`, false, formats.KindUsage, ""},
		{vllmChunk(`"e" `, `"stop"`), true, formats.KindContent, "e"}, // the usage chunk did not replace the template
	}
	for i, s := range stream {
		m := &Message{Data: s.data, HasData: true}
		hits := c.Hits
		got := c.Classify(m)
		if want := Classify(m); !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: memo %+v, Classify %+v", i, got, want)
		}
		if hit := c.Hits > hits; hit != s.hit {
			t.Errorf("%d: hit %v, want %v", i, hit, s.hit)
		}
		if got.Kind != s.kind || got.Content != s.text {
			t.Errorf("%d: kind %q content %q, want %q %q", i, got.Kind, got.Content, s.kind, s.text)
		}
	}
	if c.Total != len(stream) || c.Hits != 5 {
		t.Errorf("total %d hits %d, want %d and 5", c.Total, c.Hits, len(stream))
	}
}

func TestMemoDoneErrorAndNoData(t *testing.T) {
	var c Memo
	c.Classify(&Message{Data: vllmChunk(`"x"`, "null"), HasData: true})
	for _, m := range []*Message{
		{Data: " [DONE] ", HasData: true},
		{Data: vllmChunk(`"x"`, "null"), HasData: true, Event: "Error"},
		{Comment: true},
		{Data: "", HasData: true},
	} {
		if got, want := c.Classify(m), Classify(m); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: memo %+v, Classify %+v", m, got, want)
		}
	}
	if c.Hits != 0 {
		t.Errorf("hits %d, want 0", c.Hits)
	}
}

// FuzzMemo classifies a stream of chunks made from one fuzzed template
// with fuzzed content literals (and the template alone, and the literals
// as whole documents) through one Memo and checks every answer against
// Classify.
func FuzzMemo(f *testing.F) {
	f.Add(`{"id":"x","choices":[{"delta":{"content":`, `}}]}`, `" a"`, `"b"`, `""`, `"\u00e9"`)
	f.Add(`{"choices":[{"text":`, `,"finish_reason":null}]}`, `"1"`, `"2"`, `3`, `"\ud800"`)
	f.Add(`{"choices":[{"delta":{"content":`, `,"content":"z"}}]}`, `"a"`, `"b"`, `"c"`, `"d"`)
	f.Add(`{"choices":[{"message":{"content":"q"},"delta":{"content":`, `}}],"usage":{"completion_tokens":1}}`, `"a"`, `null`, `"b"`, `"é"`)
	f.Fuzz(func(t *testing.T, pre, post, a, b, c, d string) {
		var memo Memo
		for _, data := range []string{pre + a + post, pre + b + post, a, pre + c + post, pre + d + post, pre + b + post, pre + post} {
			m := &Message{Data: data, HasData: true}
			if got, want := memo.Classify(m), Classify(m); !reflect.DeepEqual(got, want) {
				t.Fatalf("data %q:\nmemo     %+v\nClassify %+v", data, got, want)
			}
		}
	})
}

// BenchmarkMemoClassify: 400 content chunks of one stream through a Memo
// (after the first, each is checked against the previous), against
// BenchmarkClassify's one chunk through the fast path.
func BenchmarkMemoClassify(b *testing.B) {
	words := []string{" token", " the", " latency", ",", " of", " prefill", " decode", "."}
	base := strings.TrimSuffix(strings.TrimPrefix(benchChunk, "data: "), "\n\n")
	msgs := make([]Message, 400)
	n := 0
	for i := range msgs {
		d := strings.Replace(base, `" token"`, `"`+words[i%len(words)]+`"`, 1)
		msgs[i] = Message{Data: d, HasData: true}
		n += len(d)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		var c Memo
		for i := range msgs {
			_ = c.Classify(&msgs[i])
		}
	}
}
