package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
	"github.com/tokentrace/tokentrace/ingest/genaiperf"
	"github.com/tokentrace/tokentrace/ingest/sglangbench"
	"github.com/tokentrace/tokentrace/ingest/vllmbench"
)

// TestMessagesCap: a request with more messages than MaxMessages
// (MaxValue / 256: 16 at a 4 KiB value cap) is refused before its events
// are built, naming the cap and the flag; one at the cap imports. AIPerf
// counts the inter_chunk_latency values + 1 (the first response), GenAI-
// Perf the responses, vLLM and SGLang a request's itls + 1.
func TestMessagesCap(t *testing.T) {
	opt := ingest.Options{MaxValueBytes: 4 << 10}
	if got := opt.MaxMessages(); got != 16 {
		t.Fatalf("MaxMessages at 4 KiB = %d, want 16", got)
	}
	aiperfWith := func(gaps int) string {
		list := strings.TrimSuffix(strings.Repeat("10.0,", gaps), ",")
		return strings.Replace(aiperfLine(0), `"inter_chunk_latency":{"value":[100.0,100.0]`, `"inter_chunk_latency":{"value":[`+list+`]`, 1)
	}
	genaiWith := func(n int) string {
		p := filepath.Join(t.TempDir(), "profile_export.json")
		var ts, outs []string
		for i := range n {
			ts = append(ts, fmt.Sprint(1760000000_100000000+int64(i)*1_000_000))
			outs = append(outs, `{"response":"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n"}`)
		}
		doc := `{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[{"timestamp":1760000000000000000,"response_timestamps":[` +
			strings.Join(ts, ",") + `],"response_outputs":[` + strings.Join(outs, ",") + `]}]}],"version":"2.54.0","service_kind":"openai","endpoint":"v1/chat/completions"}`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// a vLLM result (one JSON document) and an SGLang one (a JSON line)
	// whose first request has gaps itls
	pyWith := func(name string, gaps int) string {
		p := filepath.Join(t.TempDir(), name)
		itl := strings.TrimSuffix(strings.Repeat("0.01,", gaps), ",")
		doc := fmt.Sprintf(`{"date": "20260301-101500", "backend": "openai-chat", "model_id": "m", "tokenizer_id": "m", "duration": 2.0, "completed": 2, "request_throughput": 1.0, "output_throughput": 10.0, "total_output_tokens": %d, `+
			`"input_lens": [8, 8], "output_lens": [%d, 3], "ttfts": [0.1, 0.1], "itls": [[%s], [0.01, 0.01]], "latencies": [%g, 0.12], "generated_texts": ["a", "b"], "errors": ["", ""]}`+"\n",
			gaps+4, gaps+1, itl, 0.1+0.01*float64(gaps))
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		im   ingest.Importer
		path string
		ok   bool
	}{
		{"aiperf at the cap", aiperf.New(), aiperfFile(t, aiperfWith(15)), true},
		{"aiperf past it", aiperf.New(), aiperfFile(t, aiperfWith(16)), false},
		{"genai-perf at the cap", genaiperf.New(), genaiWith(16), true},
		{"genai-perf past it", genaiperf.New(), genaiWith(17), false},
		{"vllm at the cap", vllmbench.New(), pyWith("vllm.json", 15), true},
		{"vllm past it", vllmbench.New(), pyWith("vllm.json", 16), false},
		{"sglang at the cap", sglangbench.New(), pyWith("sglang.jsonl", 15), true},
		{"sglang past it", sglangbench.New(), pyWith("sglang.jsonl", 16), false},
	} {
		var col formats.Collector
		err := ingest.ImportFile(c.im, c.path, opt, &col)
		var me *ingest.MessagesError
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && (!errors.As(err, &me) || !errors.Is(err, ingest.ErrValueTooLarge) || me.Cap != 16 || !strings.Contains(err.Error(), "--max-value-size")):
			t.Errorf("%s: %v, want a MessagesError naming --max-value-size", c.name, err)
		case !c.ok && len(col.Events) != 0:
			t.Errorf("%s: %d events built before the refusal", c.name, len(col.Events))
		}
	}
}
