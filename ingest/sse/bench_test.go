package sse

import (
	"strings"
	"testing"
)

// benchChunk is one vLLM chat chunk as GenAI-Perf records it (one read).
const benchChunk = `data: {"id":"chatcmpl-840312ff78664572bb504e606140b952","object":"chat.completion.chunk","created":1719969577,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}` + "\n\n"

// BenchmarkParserFeed: SSE framing of 400 one-message reads.
func BenchmarkParserFeed(b *testing.B) {
	var p Parser
	var msgs []Message
	b.SetBytes(400 * int64(len(benchChunk)))
	for b.Loop() {
		msgs = msgs[:0]
		for i := 0; i < 400; i++ {
			msgs = p.Feed(msgs, i, int64(i), benchChunk)
		}
		msgs = p.End(msgs)
	}
}

// BenchmarkClassify: one content chunk through Classify (the fast path).
func BenchmarkClassify(b *testing.B) {
	m := &Message{Data: strings.TrimSuffix(strings.TrimPrefix(benchChunk, "data: "), "\n\n"), HasData: true}
	b.SetBytes(int64(len(m.Data)))
	for b.Loop() {
		_ = Classify(m)
	}
}

// BenchmarkClassifySlow: the same chunk through encoding/json, for
// comparison.
func BenchmarkClassifySlow(b *testing.B) {
	data := strings.TrimSuffix(strings.TrimPrefix(benchChunk, "data: "), "\n\n")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		_ = classifySlow(data)
	}
}
