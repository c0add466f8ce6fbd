package genaiperf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TestShapes checks how a request's reads are told apart: SSE stream or
// one whole body, whatever padding comes first.
func TestShapes(t *testing.T) {
	body := `{"id":"b1","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`
	tests := []struct {
		name     string
		reads    []string // at +100 ms, +200 ms, …
		kinds    string
		readIdx  string
		outSrc   string
		lastOffs int64 // stream end, ms
	}{
		{"comment keep-alive read, then a whole body", []string{": OPENROUTER PROCESSING\n\n", "\n   \n" + body},
			"content", "1", formats.SourceServerUsage, 200},
		{"whitespace read, then a whole body", []string{"\n         \n", body},
			"content", "1", formats.SourceServerUsage, 200},
		{"comment-only first read of a stream", []string{": ping\n\n", ev(delta(`{"content":"x"}`, "null")), done},
			"other content done", "0 1 2", formats.SourceChunkCount, 300},
		{"field name split across reads", []string{"da", "ta: " + delta(`{"content":"x"}`, "null") + "\n\n"},
			"content", "1", formats.SourceChunkCount, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := fixture{name: "x", serviceKind: "openai", endpoint: "v1/chat/completions",
				experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{{start: t0, body: chatBody(4, false)}}}}}
			for i, r := range tt.reads {
				fx.experiments[0].requests[0].reads = append(fx.experiments[0].requests[0].reads, read{ms(float64(100 * (i + 1))), r})
			}
			path := filepath.Join(t.TempDir(), "profile_export.json")
			if err := os.WriteFile(path, fx.encode(), 0o644); err != nil {
				t.Fatal(err)
			}
			var col formats.Collector
			if err := ingest.ImportFile(New(), path, ingest.Options{}, &col); err != nil {
				t.Fatal(err)
			}
			var kinds, reads []string
			for _, e := range col.Events {
				kinds = append(kinds, e.Kind)
				reads = append(reads, itoa(int(e.ReadIndex)))
			}
			r := col.Requests[0]
			if strings.Join(kinds, " ") != tt.kinds || strings.Join(reads, " ") != tt.readIdx ||
				r.OutputTokensSource != tt.outSrc || *r.StreamEndOffsetNs != ms(float64(tt.lastOffs)) || r.Status != formats.StatusOK {
				t.Errorf("kinds %v reads %v request %+v", kinds, reads, r)
			}
		})
	}
}
