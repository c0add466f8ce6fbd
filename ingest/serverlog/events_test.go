package serverlog

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// importAll imports content written to a file called name and returns
// every row.
func importAll(t *testing.T, name, content string) formats.Collector {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var c formats.Collector
	if err := ingest.ImportFile(&Importer{Year: 2026}, p, ingest.Options{Label: "t"}, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

type wantEvent struct {
	kind string
	off  int64
}

func checkEvents(t *testing.T, got []formats.Event, want []wantEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.Kind != w.kind || e.OffsetNs != w.off || e.Index != int32(i) || e.ReadIndex != int32(i) ||
			e.Tokens != nil || e.Text != nil || e.HasChoices || e.RunID != "t" || e.RequestKey != 0 {
			t.Errorf("event %d = %+v, want kind %s offset %d index %d", i, e, w.kind, w.off, i)
		}
	}
}

// A vLLM llm_request span (attribute keys and units of
// vllm/v1/engine/output_processor.py do_tracing; finish reasons as a JSON
// list in a string) with one span event: the phase boundaries are placed
// around the frontend first token (arrival + TTFT 100 ms): scheduled =
// 100 − prefill 60 = 40 ms, queued = 40 − queue 2 = 38 ms, last token =
// 100 + decode 200 = 300 ms; the span event 5 ms after the start.
func TestSpanServerEvents(t *testing.T) {
	const start = 1772359200_000_000_000
	span := `{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"vllm.llm_engine"},"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"llm_request","kind":2,` +
		`"startTimeUnixNano":"1772359200000000000","endTimeUnixNano":"1772359200350000000",` +
		`"events":[{"timeUnixNano":"1772359200005000000","name":"Custom Mark"}],` +
		`"attributes":[{"key":"gen_ai.request.id","value":{"stringValue":"chatcmpl-1"}},` +
		`{"key":"gen_ai.latency.time_to_first_token","value":{"doubleValue":0.1}},{"key":"gen_ai.latency.e2e","value":{"doubleValue":0.35}},` +
		`{"key":"gen_ai.latency.time_in_queue","value":{"doubleValue":0.002}},{"key":"gen_ai.latency.time_in_model_prefill","value":{"doubleValue":0.06}},` +
		`{"key":"gen_ai.latency.time_in_model_decode","value":{"doubleValue":0.2}},{"key":"gen_ai.latency.time_in_model_inference","value":{"doubleValue":0.26}},` +
		`{"key":"gen_ai.response.finish_reasons","value":{"stringValue":"[\"length\"]"}}]}]}]}]}` + "\n"
	c := importAll(t, "spans.jsonl", span)
	if len(c.Requests) != 1 || c.Requests[0].ServerKind != KindVLLMSpan {
		t.Fatalf("requests: %+v", c.Requests)
	}
	r := c.Requests[0]
	eq(t, "arrival", r.ServerArrivalNs, start)
	if r.ServerFinishReason != "length" || r.Status != formats.StatusOK {
		t.Errorf("finish reason %q status %q, want length ok", r.ServerFinishReason, r.Status)
	}
	checkEvents(t, c.Events, []wantEvent{
		{"server.arrival", 0}, {"server.custom_mark", 5_000_000}, {"server.queued", 38_000_000},
		{"server.scheduled", 40_000_000}, {"server.first_token", 100_000_000}, {"server.last_token", 300_000_000},
	})

	// an aborted request keeps its reason and is an error
	c = importAll(t, "spans.jsonl", strings.Replace(span, `[\"length\"]`, `[\"abort\"]`, 1))
	if r := c.Requests[0]; r.ServerFinishReason != "abort" || r.Status != formats.StatusError {
		t.Errorf("abort: finish reason %q status %q", r.ServerFinishReason, r.Status)
	}
}

// A Triton trace without any arrival timestamp (no HTTP_RECV_START,
// GRPC_WAITREAD_START or REQUEST_START) has no reference for offsets: no
// events are written; with one, every timestamp is an event.
func TestTritonEventsNeedArrival(t *testing.T) {
	noArrival := `[{"id":1,"model_name":"m","model_version":1,"request_id":"r1"},{"id":1,"timestamps":[{"name":"QUEUE_START","ns":1000},{"name":"COMPUTE_START","ns":1500},{"name":"COMPUTE_END","ns":4000}]}]`
	c := importAll(t, "trace.json", noArrival)
	if len(c.Requests) != 1 || len(c.Events) != 0 {
		t.Fatalf("%d requests, %d events (want 1, 0)", len(c.Requests), len(c.Events))
	}
	eq(t, "queue", c.Requests[0].ServerQueueNs, 500)
	withArrival := `[{"id":1,"model_name":"m","model_version":1,"request_id":"r1"},{"id":1,"timestamps":[{"name":"REQUEST_START","ns":900},{"name":"QUEUE_START","ns":1000},{"name":"COMPUTE_START","ns":1500},{"name":"COMPUTE_END","ns":4000},{"name":"REQUEST_END","ns":4200}]}]`
	c = importAll(t, "trace.json", withArrival)
	checkEvents(t, c.Events, []wantEvent{
		{"server.request_start", 0}, {"server.queue_start", 100}, {"server.compute_start", 600},
		{"server.compute_end", 3100}, {"server.request_end", 3300},
	})
}

// vLLM's output logging line (vllm/entrypoints/logger.py log_outputs)
// carries the finish reason.
func TestVLLMGeneratedResponseFinishReason(t *testing.T) {
	log := "INFO 03-01 10:00:00 [logger.py:43] Received request chatcmpl-z: prompt: 'hi', params: SamplingParams(max_tokens=2), lora_request: None.\n" +
		"INFO 03-01 10:00:01 [logger.py:70] Generated response chatcmpl-z: output: 'a b', output_token_ids: [1, 2], finish_reason: length\n"
	c := importAll(t, "vllm.log", log)
	if len(c.Requests) != 1 {
		t.Fatalf("%d requests", len(c.Requests))
	}
	r := c.Requests[0]
	eq(t, "out", r.OutputTokens, 2)
	if r.ServerFinishReason != "length" {
		t.Errorf("finish reason %q, want length", r.ServerFinishReason)
	}
	if len(c.Events) != 0 {
		t.Errorf("a request-log record has no per-phase timestamps, got %d events", len(c.Events))
	}
}

// The engine-stats series of the vLLM 0.25 corpus log: 65 lines, the first
// and last read by hand from the file (lines 9 and 232):
//
//	INFO 08-01 21:24:09 … Avg prompt throughput: 6.8 tokens/s, Avg generation throughput: 10.6 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.7%, Prefix cache hit rate: 0.0%
//	INFO 08-01 21:34:49 … Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 88.7%
//
// V1 prints no Swapped and no CPU KV cache (null); the V0 line of the
// KServe sample prints both but no prefix-cache rate.
func TestLoadSeriesCorpus(t *testing.T) {
	im := &Importer{Year: 2026}
	var c formats.Collector
	if err := ingest.ImportFile(im, "../../testdata/server-logs/vllm-v0.25-engine-stats-log/vllm-excerpt.log", ingest.Options{Label: "t"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 1 {
		t.Fatalf("%d runs", len(c.Runs))
	}
	load := c.Runs[0].Load
	if len(load) != 65 {
		t.Fatalf("%d load samples, want 65", len(load))
	}
	local := func(mo time.Month, d, h, m, s int) int64 {
		return time.Date(2026, mo, d, h, m, s, 0, time.UTC).UnixNano()
	}
	checkSample(t, "first", load[0], local(8, 1, 21, 24, 9), 1, 0, 0.7, 0.0, 6.8, 10.6)
	checkSample(t, "last", load[64], local(8, 1, 21, 34, 49), 0, 0, 0.0, 88.7, 0.0, 0.0)
	for i, l := range load {
		if l.Swapped != nil || l.CPUKVCachePct != nil || l.ClockDomain != formats.ClockLocal {
			t.Errorf("sample %d: swapped %v cpu %v clock %q (V1 prints neither; clock local)", i, l.Swapped, l.CPUKVCachePct, l.ClockDomain)
		}
	}
	// the summary stays in reported
	found := false
	for _, s := range c.Runs[0].Reported {
		if s.Metric == "running_reqs" && s.Stat == "samples" && s.Value != nil && *s.Value == 65 {
			found = true
		}
	}
	if !found {
		t.Error("reported lacks running_reqs samples = 65")
	}

	c = formats.Collector{}
	if err := ingest.ImportFile(im, "../../testdata/server-logs/vllm-v0-engine-log-kserve4470/snippet.log", ingest.Options{Label: "t"}, &c); err != nil {
		t.Fatal(err)
	}
	// INFO 05-14 17:45:10 [metrics.py:486] Avg prompt throughput: 2.4 tokens/s, Avg generation throughput: 0.2 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: 0.0%.
	if n := len(c.Runs[0].Load); n != 1 {
		t.Fatalf("V0: %d samples", n)
	}
	v0 := c.Runs[0].Load[0]
	checkSample(t, "V0", v0, time.Date(2025, 5, 14, 17, 45, 10, 0, time.UTC).UnixNano(), 1, 0, 0.0, -1, 2.4, 0.2)
	eq(t, "V0 swapped", v0.Swapped, 0)
	if v0.CPUKVCachePct == nil || *v0.CPUKVCachePct != 0 {
		t.Errorf("V0 cpu kv %v, want 0", v0.CPUKVCachePct)
	}

	// the client and server runs of a span file have no load series
	c = formats.Collector{}
	if err := ingest.ImportFile(im, "../../testdata/server-logs/anud18-trace-samples/sample_openllmetry_spans.jsonl", ingest.Options{Label: "t"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 2 {
		t.Fatalf("openllmetry: %d runs, want client and server", len(c.Runs))
	}
	for _, r := range c.Runs {
		if len(r.Load) != 0 {
			t.Errorf("run %s: load %v", r.RunID, r.Load)
		}
	}
}

// checkSample compares one load sample; prefix < 0 means null.
func checkSample(t *testing.T, name string, l formats.LoadSample, timeNs, running, waiting int64, gpu, prefix, prompt, gen float64) {
	t.Helper()
	eq(t, name+" time", l.TimeNs, timeNs)
	eq(t, name+" running", l.Running, running)
	eq(t, name+" waiting", l.Waiting, waiting)
	feq := func(what string, got *float64, want float64) {
		if want < 0 {
			if got != nil {
				t.Errorf("%s %s = %v, want null", name, what, *got)
			}
			return
		}
		if got == nil || *got != want {
			t.Errorf("%s %s = %v, want %v", name, what, got, want)
		}
	}
	feq("gpu kv %", l.GPUKVCachePct, gpu)
	feq("prefix cache hit %", l.PrefixCacheHitPct, prefix)
	feq("prompt tokens/s", l.PromptTokensPerS, prompt)
	feq("generation tokens/s", l.GenerationTokensPerS, gen)
}

// TestLoadSeriesDuckDB writes the vLLM 0.25 engine-stats run to Parquet and
// reads its load column back with DuckDB (tools/duckdb-check): unnest gives
// the 65 samples in file order, with the first and last line's values.
func TestLoadSeriesDuckDB(t *testing.T) {
	const check = "../../tools/duckdb-check"
	_, errNode := exec.LookPath("node")
	_, errMod := os.Stat(filepath.Join(check, "node_modules/@duckdb/node-api/package.json"))
	if errNode != nil || errMod != nil {
		msg := "node or tools/duckdb-check/node_modules missing (run: npm ci --prefix tools/duckdb-check)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " on CI")
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	w, err := formats.NewParquetWriter(dir, formats.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ingest.ImportFile(&Importer{Year: 2026}, "../../testdata/server-logs/vllm-v0.25-engine-stats-log/vllm-excerpt.log", ingest.Options{Label: "t"}, w); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	q := "SELECT count(*) AS n, first(running ORDER BY i) AS r0, first(gpu_kv_cache_pct ORDER BY i) AS kv0, last(prefix_cache_hit_pct ORDER BY i) AS hit64, " +
		"last(time_ns ORDER BY i) - first(time_ns ORDER BY i) AS span_ns, count(swapped) AS nswapped " +
		"FROM (SELECT generate_subscripts(load, 1) AS i, unnest(load, recursive := true) FROM '" + filepath.Join(dir, "runs.parquet") + "')"
	out, err := exec.Command("node", filepath.Join(check, "check.mjs"), dir, q).Output()
	if err != nil {
		t.Fatalf("check.mjs: %v", err)
	}
	var got struct {
		Queries []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Queries) != 1 || len(got.Queries[0].Rows) != 1 {
		t.Fatalf("check.mjs output: %v\n%s", err, out)
	}
	row := got.Queries[0].Rows[0]
	num := func(k string) string { return fmt.Sprint(row[k]) }
	// 21:24:09 → 21:34:49 is 640 s; V1 prints no Swapped (all null)
	for k, want := range map[string]string{"n": "65", "r0": "1", "kv0": "0.7", "hit64": "88.7", "span_ns": "640000000000", "nswapped": "0"} {
		if num(k) != want {
			t.Errorf("DuckDB %s = %s, want %s (row %v)", k, num(k), want, row)
		}
	}
}
