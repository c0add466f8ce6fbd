package serverlog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// FuzzImport writes arbitrary bytes to a temporary file and runs Detect
// and Import on it, as a log (.log) or as JSON (.json): neither may panic,
// and Import never fails on content (unknown lines are counted).
func FuzzImport(f *testing.F) {
	for _, p := range []string{
		"../../testdata/server-logs/tgi-success-line-issue7395/snippet.log",
		"../../testdata/server-logs/sglang-finish-log-pr15759/snippet-truncated.log",
		"../../testdata/server-logs/llamacpp-slot-timing-club3090-1124/snippet.log",
		"../../testdata/server-logs/llamacpp-legacy-print-timings-issue9013/snippet.log",
		"../../testdata/server-logs/ollama-gin-access-issue13805/snippet.log",
		"../../testdata/server-logs/vllm-v0-engine-log-kserve4470/snippet.log",
		"../../testdata/server-logs/triton-trace-doc-example/trace-timestamps.json",
		"../../testdata/server-logs/vllm-otel-span-fixture/vllm-0.29.0-otel.json",
		"../../testdata/joined/aiperf-vllm/vllm-request.log",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, filepath.Ext(p) == ".json")
	}
	f.Add([]byte(`{"done":true,"total_duration":1e400,"created_at":"x","eval_count":-1,"eval_duration":0}`), false)
	f.Add([]byte("data: {\"id\":\"a\",\"timings\":{\"prompt_n\":\"9\",\"prompt_ms\":-0}}\n\n[GIN] 2026/13/40 - 99:99:99 | 999 | 1h1h | x | POST \"/api/chat\""), false)
	f.Add([]byte(`[{"id":1,"timestamps":[{"name":"COMPUTE_START","ns":"9223372036854775807"}]},{"id":1,"timestamps":[{"name":"QUEUE_START","ns":-9223372036854775808}]}`), true)
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		name := "x.log"
		if asJSON {
			name = "x.json"
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		im := &Importer{Year: 2026}
		_ = im.Detect(p, data)
		var c formats.Collector
		if err := ingest.ImportFile(im, p, ingest.Options{Label: "f"}, &c); err != nil {
			t.Fatalf("Import: %v", err)
		}
	})
}

// FuzzParseDuration: Rust and Go duration strings never panic.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"986.532642ms", "681.374µs", "4.065504959s", "29m59s", "971.777μs", "16.52us", "1h0m0s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseDuration(s) })
}

// FuzzTextLine feeds one line to the line dispatcher (every text shape:
// vLLM, KServe, SGLang, TGI, llama.cpp, GIN, uvicorn, Prometheus, SSE,
// JSONL) after a record, so continuation handling runs too.
func FuzzTextLine(f *testing.F) {
	for _, s := range []string{
		"(APIServer pid=1) INFO 02-13 11:33:33 [logger.py:49] Received request chatcmpl-a: params: SamplingParams(max_tokens=100), lora_request: None.",
		"INFO 05-14 17:45:10 [metrics.py:486] Avg prompt throughput: 2.4 tokens/s, Avg generation throughput: 0.2 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: 0.0%.",
		`2025-05-01T01:31:14.787487Z  INFO generate{total_time="1s" queue_time="2µs" inference_time="1s" time_per_token="1ms"}: text_generation_router::server: router/src/server.rs:1: Success`,
		"[2025-12-24 21:05:35] Finish: obj=GenerateReqInput(received_time=1.5, rid='x'), out={'meta_info': {'e2e_latency': 1.0}}",
		"5.27.453.098 I slot print_timing: id  0 | task 160 |       total time =    5981.21 ms /   100 tokens",
		"INFO [           print_timings]           total time =    3209.84 ms | tid=\"1\" timestamp=1723569622 id_slot=0 id_task=0 t_total=3209.839",
		`janv. 20 23:15:37 h ollama[1]: [GIN] 2026/01/20 - 23:15:37 | 200 | 32.779561288s |       127.0.0.1 | POST     "/api/generate"`,
		`data: {"id":"x","metrics":{"time_to_first_token_ms":1}}`, `{"event":"request.finished","obj":{"received_time":"1e999"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s := newTextState("f", 2026, "fuzz")
		s.line(1, "INFO 01-01 00:00:00 [x.py:1] start")
		s.line(2, line)
		s.finish(true, 2)
	})
}

// FuzzJSON feeds one JSON document to the whole-document paths: OTLP
// export, Triton trace array, response bodies.
func FuzzJSON(f *testing.F) {
	for _, p := range []string{
		"../../testdata/server-logs/triton-trace-doc-example/trace-timestamps.json",
		"../../testdata/server-logs/vllm-otel-span-fixture/vllm-0.29.0-otel.json",
		"../../testdata/server-logs/anud18-trace-samples/sample_vllm_spans.jsonl",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	if b, err := os.ReadFile("../../testdata/joined/aiperf-vllm/vllm-spans.json"); err == nil {
		f.Add(b[:len(b)/2]) // a cut export: salvageSpans
		f.Add(append(append([]byte{}, b...), b...))
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SPAN_KIND_CLIENT","startTimeUnixNano":"-9223372036854775808","events":[{"timeUnixNano":"9223372036854775807","name":"chunk"}],"attributes":[{"key":"gen_ai.operation.name","value":{"arrayValue":{"values":[{}]}}}]}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		im := &Importer{Year: 2026}
		in, err := ingest.OpenReader("f.json", bytes.NewReader(data), ingest.Options{})
		if err != nil {
			return // a damaged gzip or zstd header
		}
		// only damaged compressed data may fail
		if _, err := im.parse(in); err != nil && in.Compression == "" {
			t.Fatal(err)
		}
	})
}
