package serverlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// importText imports content written to a file called name.
func importText(t *testing.T, name, content string) ([]formats.Request, formats.Run) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	im := &Importer{Year: 2026}
	if !im.Detect(p, []byte(content)) {
		t.Fatalf("Detect(%s) = false", name)
	}
	var c formats.Collector
	if err := ingest.ImportFile(im, p, ingest.Options{Label: "t"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 1 {
		t.Fatalf("%d runs", len(c.Runs))
	}
	return c.Requests, c.Runs[0]
}

func eq(t *testing.T, name string, got *int64, want int64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = null, want %d", name, want)
	} else if *got != want {
		t.Errorf("%s = %d, want %d", name, *got, want)
	}
}

func notes(r formats.Run) string { return strings.Join(r.Notes, "\n") }

func TestParseDuration(t *testing.T) {
	for s, want := range map[string]int64{
		"986.532642ms": 986532642, "681.374µs": 681374, "681.374μs": 681374, "681.374us": 681374,
		"4.065504959s": 4065504959, `"49.382µs"`: 49382, "29m59s": 1799e9, "30m0s": 1800e9, "1h0m0s": 3600e9,
		"32.779561288s": 32779561288, "16.52µs": 16520, "12ns": 12,
	} {
		got, err := parseDuration(s)
		if err != nil || got != want {
			t.Errorf("parseDuration(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "5", "1.2.3s", "ms", "1 day"} {
		if _, err := parseDuration(s); err == nil {
			t.Errorf("parseDuration(%q) accepted", s)
		}
	}
}

// TGI --json-output Success event (tracing-subscriber JSON: flattened event,
// span = current span, spans = outermost first; field names from
// huggingface/text-generation-inference@db931fcf42da router/src/server.rs
// and router/src/logging.rs). No real JSON record was found: the shape is
// built from the documented fields; the OTLP HTTP span carries trace_id.
func TestTGIJSONSuccess(t *testing.T) {
	line := `{"timestamp":"2026-03-01T10:00:01.500000Z","level":"INFO","message":"Success","target":"text_generation_router::server","filename":"router/src/server.rs","line_number":402,` +
		`"span":{"inference_time":"1.2s","queue_time":"30.5ms","seed":"None","time_per_token":"40ms","total_time":"1.25s","validation_time":"2.5ms","name":"generate"},` +
		`"spans":[{"otel.name":"POST /generate","trace_id":"0af7651916cd43dd8448eb211c80319c","name":"HTTP request"},{"name":"generate"}]}` + "\n"
	reqs, run := importText(t, "tgi.jsonl", line)
	if len(reqs) != 1 || run.Tool != "tgi-server" {
		t.Fatalf("%d requests, tool %s", len(reqs), run.Tool)
	}
	r := reqs[0]
	eq(t, "queue", r.ServerQueueNs, 30_500_000)
	eq(t, "inference", r.ServerInferenceNs, 1_200_000_000)
	eq(t, "tpt", r.ServerTimePerTokenNs, 40_000_000)
	eq(t, "e2e", r.ServerE2ENs, 1_250_000_000)
	// arrival = timestamp − total_time = 10:00:01.5 − 1.25 s
	eq(t, "arrival", r.ServerArrivalNs, 1772359201_500_000_000-1_250_000_000)
	if r.TraceID != "0af7651916cd43dd8448eb211c80319c" || r.ServerClockDomain != "unix" || r.ServerTTFTNs != nil {
		t.Errorf("trace %q clock %q ttft %v", r.TraceID, r.ServerClockDomain, r.ServerTTFTNs)
	}
}

// SGLang --log-requests-format json (request_logger.py) and the metrics
// export file (request_metrics_exporter.py), shapes from
// sgl-project/sglang@01bb91204cf6 python/sglang/srt/utils/request_logger.py
// and sgl-project/sglang@d6645396ff69
// python/sglang/srt/managers/request_metrics_exporter.py; plus a text Finish
// record with its out={meta_info} part.
func TestSGLangShapes(t *testing.T) {
	js := `{"timestamp": "2026-03-01T10:00:00.100", "event": "request.received", "rid": "r1", "obj": {"rid": "r1"}}` + "\n" +
		`{"timestamp": "2026-03-01T10:00:02.000", "event": "request.finished", "rid": "r1", "obj": {"rid": "r1", "received_time": 1772359200.1, "received_time_perf": 1000.5}, "out": {"meta_info": {"id": "r1", "prompt_tokens": 12, "completion_tokens": 34, "cached_tokens": 0, "e2e_latency": 1.9, "queue_time": 0.25, "finish_reason": {"type": "stop"}}}}` + "\n"
	reqs, run := importText(t, "sglang.jsonl", js)
	if len(reqs) != 1 || run.Tool != "sglang-server" {
		t.Fatalf("%d requests, tool %s", len(reqs), run.Tool)
	}
	r := reqs[0]
	eq(t, "arrival", r.ServerArrivalNs, 1772359200_100_000_000)
	eq(t, "e2e", r.ServerE2ENs, 1_900_000_000)
	eq(t, "queue", r.ServerQueueNs, 250_000_000)
	eq(t, "in", r.InputTokens, 12)
	eq(t, "out", r.OutputTokens, 34)
	if r.ServerRequestID != "r1" || r.ServerKind != KindSGLangFinish || r.ServerFinishReason != "stop" {
		t.Errorf("id %q kind %q finish %q", r.ServerRequestID, r.ServerKind, r.ServerFinishReason)
	}

	exp := `{"request_parameters": "{\"rid\": \"abc\", \"received_time\": 1772359300.5, \"stream\": true}", "id": "abc", "prompt_tokens": 7, "completion_tokens": 3, "e2e_latency": 0.75}` + "\n"
	reqs, _ = importText(t, "sglang-request-metrics-20260301_10.log", exp)
	if len(reqs) != 1 || reqs[0].ServerKind != KindSGLangExport || reqs[0].ServerRequestID != "abc" {
		t.Fatalf("export: %+v", reqs)
	}
	eq(t, "export arrival", reqs[0].ServerArrivalNs, 1772359300_500_000_000)
	eq(t, "export e2e", reqs[0].ServerE2ENs, 750_000_000)

	txt := "[2026-03-01 10:00:05 TP0] Finish: obj=GenerateReqInput(validation_time=1e-05, received_time=1772359203.25, received_time_perf=1.0, rid='q9', stream=False), out={'text': 'hi', 'meta_info': {'id': 'q9', 'finish_reason': {'type': 'length', 'length': 8}, 'prompt_tokens': 5, 'completion_tokens': 8, 'cached_tokens': 0, 'e2e_latency': 0.5}}\n"
	reqs, run = importText(t, "sglang.log", txt)
	if len(reqs) != 1 || run.Truncated {
		t.Fatalf("text finish: %d, truncated %v", len(reqs), run.Truncated)
	}
	eq(t, "text arrival", reqs[0].ServerArrivalNs, 1772359203_250_000_000)
	eq(t, "text e2e", reqs[0].ServerE2ENs, 500_000_000)
	eq(t, "text out", reqs[0].OutputTokens, 8)
	if reqs[0].ServerFinishReason != "length" {
		t.Errorf("text finish reason %q, want length", reqs[0].ServerFinishReason)
	}
}

// Responses captured by the client: vLLM's per-request metrics on the
// usage chunk (docs/features/per_request_metrics.md), llama.cpp's timings
// on the final chunk, Ollama's final NDJSON chunk (api/types.go).
func TestResponseShapes(t *testing.T) {
	sse := "data: {\"id\":\"chatcmpl-x1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"id\":\"chatcmpl-x1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":4},\"metrics\":{\"time_to_first_token_ms\":35.5,\"generation_time_ms\":60.0,\"queue_time_ms\":2.25,\"mean_itl_ms\":20.0,\"tokens_per_second\":42.1}}\n\ndata: [DONE]\n\n"
	reqs, _ := importText(t, "vllm-stream.txt", sse)
	if len(reqs) != 1 || reqs[0].ServerKind != KindVLLMMetrics || reqs[0].ServerRequestID != "chatcmpl-x1" {
		t.Fatalf("vllm metrics: %+v", reqs)
	}
	r := reqs[0]
	eq(t, "queue", r.ServerQueueNs, 2_250_000)
	eq(t, "prefill (ttft from scheduling)", r.ServerPrefillNs, 35_500_000)
	eq(t, "decode", r.ServerDecodeNs, 60_000_000)
	if r.ServerTTFTNs != nil {
		t.Error("vLLM response metrics TTFT starts at scheduling: server_ttft must stay null")
	}

	llama := "data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],\"id\":\"chatcmpl-L\",\"object\":\"chat.completion.chunk\",\"timings\":{\"cache_n\":3,\"prompt_n\":9,\"prompt_ms\":45.5,\"prompt_per_token_ms\":5.05,\"predicted_n\":20,\"predicted_ms\":400.0,\"predicted_per_token_ms\":20.0,\"predicted_per_second\":50.0}}\n\n"
	reqs, _ = importText(t, "llama.txt", llama)
	if len(reqs) != 1 || reqs[0].ServerKind != KindLlamaCppTimings {
		t.Fatalf("llama timings: %+v", reqs)
	}
	eq(t, "llama in = prompt_n + cache_n", reqs[0].InputTokens, 12)
	eq(t, "llama prefill", reqs[0].ServerPrefillNs, 45_500_000)
	eq(t, "llama decode", reqs[0].ServerDecodeNs, 400_000_000)
	if reqs[0].ServerFinishReason != "stop" {
		t.Errorf("llama finish reason %q, want the choice's stop", reqs[0].ServerFinishReason)
	}

	ollama := `{"model":"m","created_at":"2026-03-01T10:00:10.000000000Z","response":"a","done":false}` + "\n" +
		`{"model":"m","created_at":"2026-03-01T10:00:10.500000000Z","response":"","done":true,"done_reason":"stop","total_duration":5043500667,"load_duration":5025959,"prompt_eval_count":26,"prompt_eval_duration":325953000,"eval_count":290,"eval_duration":4709213000}` + "\n"
	reqs, _ = importText(t, "ollama.jsonl", ollama)
	if len(reqs) != 1 {
		t.Fatalf("ollama: %d", len(reqs))
	}
	eq(t, "ollama e2e", reqs[0].ServerE2ENs, 5043500667)
	eq(t, "ollama arrival = created_at − total", reqs[0].ServerArrivalNs, 1772359210_500_000_000-5043500667)
	eq(t, "ollama tpt", reqs[0].ServerTimePerTokenNs, 4709213000/290)
	if reqs[0].ServerFinishReason != "stop" {
		t.Errorf("ollama done_reason %q, want stop", reqs[0].ServerFinishReason)
	}
}

// Hazards in one log: docker compose and vLLM process prefixes, CRLF and
// LF mixed, a traceback, unknown lines before any record, a yearless
// timestamp crossing the new year, vLLM's engine suffix on Added lines.
func TestTextLogHazards(t *testing.T) {
	log := "garbage line one\r\n" +
		"???\n" +
		"vllm-1  | (APIServer pid=1) INFO 12-31 23:59:59 [logger.py:49] Received request chatcmpl-aaa: params: SamplingParams(max_tokens=7), lora_request: None.\r\n" +
		"vllm-1  | (APIServer pid=1) INFO 01-01 00:00:00 [async_llm.py:382] Added request chatcmpl-aaa-0123abcd.\n" +
		"(APIServer pid=1) INFO 01-01 00:00:01 [async_llm.py:382] Added request chatcmpl-bbb.\n" +
		"(EngineCore pid=2) ERROR 01-01 00:00:02 [core.py:1] EngineCore failed\r\n" +
		"Traceback (most recent call last):\r\n" +
		"  File \"x.py\", line 1, in <module>\r\n" +
		"(APIServer pid=1) INFO 01-01 00:00:03 [loggers.py:273] Engine 000: Avg prompt throughput: 6.8 tokens/s, Avg generation throughput: 10.6 tokens/s, Running: 1 reqs, Waiting: 2 reqs, GPU KV cache usage: 0.7%, Prefix cache hit rate: 0.0%\n"
	reqs, run := importText(t, "vllm.log", log)
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[0].ServerRequestID != "chatcmpl-aaa" || reqs[1].ServerRequestID != "chatcmpl-bbb" {
		t.Errorf("ids %q %q", reqs[0].ServerRequestID, reqs[1].ServerRequestID)
	}
	eq(t, "arrival 2026-12-31 23:59:59", reqs[0].ServerArrivalNs, 1798761599_000_000_000)
	eq(t, "arrival 2027-01-01 00:00:01", reqs[1].ServerArrivalNs, 1798761601_000_000_000)
	eq(t, "max_tokens", reqs[0].MaxTokens, 7)
	n := notes(run)
	for _, s := range []string{"now 2027", "2 unknown lines skipped (first: line 1)", "5 lines ended in CRLF", "placed in 2026", "2 continuation lines", "1 engine-stats lines"} {
		if !strings.Contains(n, s) {
			t.Errorf("notes lack %q:\n%s", s, n)
		}
	}
	for _, st := range run.Reported {
		if st.Metric == "waiting_reqs" && st.Stat == "max" && *st.Value != 2 {
			t.Errorf("waiting max %v", *st.Value)
		}
	}
}

// A Triton trace array cut mid-element (the server was still writing):
// the complete fragments are imported; a client request id and an
// ensemble child are handled.
func TestTritonCut(t *testing.T) {
	js := `[{"id":1,"model_name":"ens","model_version":1,"request_id":"client-7"},` +
		`{"id":1,"timestamps":[{"name":"HTTP_RECV_START","ns":1000},{"name":"REQUEST_START","ns":1100},{"name":"QUEUE_START","ns":1200}]},` +
		`{"id":2,"model_name":"step","parent_id":1},{"id":2,"timestamps":[{"name":"QUEUE_START","ns":1300}]},` +
		`{"id":1,"timestamps":[{"name":"COMPUTE_START","ns":2200},{"name":"INFER_RESPONSE_COMPLETE","ns":5200},{"name":"INFER_RESPONSE_COMPLETE","ns":9200},{"name":"COMPUTE_END","ns":9300}]},` +
		`{"id":1,"timestamps":[{"name":"HTTP_SEND_END","ns":9900}]},{"id":3,"timesta`
	reqs, run := importText(t, "trace.json", js)
	if len(reqs) != 2 || !run.Truncated { // trace 3 has no events but a header-less fragment was cut
		t.Logf("notes: %s", notes(run))
	}
	r := reqs[0]
	if r.ServerRequestID != "client-7" || r.ServerClockDomain != "monotonic" {
		t.Errorf("id %q clock %q", r.ServerRequestID, r.ServerClockDomain)
	}
	eq(t, "arrival", r.ServerArrivalNs, 1000)
	eq(t, "queue", r.ServerQueueNs, 1000)
	eq(t, "prefill", r.ServerPrefillNs, 3000)
	eq(t, "decode", r.ServerDecodeNs, 4000)
	eq(t, "ttft", r.ServerTTFTNs, 4200)
	eq(t, "e2e", r.ServerE2ENs, 8900)
	if !run.Truncated || !strings.Contains(notes(run), "1 child traces") {
		t.Errorf("truncated %v notes %s", run.Truncated, notes(run))
	}
}

// TGI TEXT Success with the OTLP HTTP span prefix (trace_id, the join key)
// and its RFC 3339 µs timestamp
// (huggingface/text-generation-inference@db931fcf42da router/src/server.rs).
func TestTGITextWithTraceID(t *testing.T) {
	line := `2026-03-01T10:00:02.000000Z  INFO HTTP request{otel.name=POST /generate http.client_ip= http.flavor=1.1 http.host=localhost:3000 http.method=POST http.route=/generate http.scheme=HTTP http.target=/generate http.user_agent=curl/8.5.0 otel.kind=server trace_id=4bf92f3577b34da6a3ce929d0e0e4736}:generate{parameters=GenerateParameters { best_of: None, temperature: None, max_new_tokens: Some(20), stop: [], seed: None } total_time="986.532642ms" validation_time="681.374µs" queue_time="188.125µs" inference_time="985.66325ms" time_per_token="49.283162ms" seed="None"}: text_generation_router::server: router/src/server.rs:622: Success` + "\n"
	reqs, _ := importText(t, "tgi.log", line)
	if len(reqs) != 1 || reqs[0].TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("%+v", reqs)
	}
	r := reqs[0]
	eq(t, "arrival = 10:00:02 − 986.532642 ms", r.ServerArrivalNs, 1772359202_000_000_000-986532642)
	eq(t, "queue", r.ServerQueueNs, 188125)
	eq(t, "tpt", r.ServerTimePerTokenNs, 49283162)
}

// TGI's text output keeps its ANSI colors in `docker logs` of a terminal
// run; they are removed before matching.
func TestANSIColors(t *testing.T) {
	line := "\x1b[2m2026-03-01T10:00:02.000000Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[1mgenerate\x1b[0m\x1b[1m{\x1b[0mtotal_time=\"2s\" validation_time=\"1ms\" queue_time=\"500ms\" inference_time=\"1.499s\" time_per_token=\"99.933333ms\" seed=\"None\"\x1b[1m}\x1b[0m\x1b[2m:\x1b[0m \x1b[2mtext_generation_router::server\x1b[0m\x1b[2m:\x1b[0m \x1b[2mrouter/src/server.rs\x1b[0m:\x1b[2m402:\x1b[0m Success\n"
	reqs, _ := importText(t, "tgi-color.log", line)
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	eq(t, "queue", reqs[0].ServerQueueNs, 500_000_000)
	eq(t, "arrival", reqs[0].ServerArrivalNs, 1772359200_000_000_000)
}
