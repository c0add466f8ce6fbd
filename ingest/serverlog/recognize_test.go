package serverlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

func dumpRequest(t *testing.T, r *formats.Request) string {
	var b bytes.Buffer
	d := formats.NewDumper(&b)
	if err := d.Request(r, nil); err != nil {
		t.Fatal(err)
	}
	d.Flush()
	return b.String()
}

func importOne(t *testing.T, path string) formats.Collector {
	t.Helper()
	var c formats.Collector
	if err := ingest.ImportFile(&Importer{Year: 2026}, path, ingest.Options{Label: "t"}, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLlamaCppJSONLog: llama-server's --log-format json lines give the same
// record as the text lines of the same run (issue #9013's numbers), and
// the file is recognized on its own (it used to match no shape).
func TestLlamaCppJSONLog(t *testing.T) {
	js := importOne(t, "testdata/fixtures/llamacpp-json-log/server.log")
	text := importOne(t, "../../testdata/server-logs/llamacpp-legacy-print-timings-issue9013/snippet.log")
	if len(js.Requests) != 1 || len(text.Requests) != 1 {
		t.Fatalf("%d and %d records", len(js.Requests), len(text.Requests))
	}
	a, b := js.Requests[0], text.Requests[0]
	a.ServerSource, b.ServerSource = "", ""
	if dumpRequest(t, &a) != dumpRequest(t, &b) {
		t.Errorf("JSON %s\ntext %s", dumpRequest(t, &a), dumpRequest(t, &b))
	}
	if *a.ServerPrefillNs != 15615000 || *a.ServerDecodeNs != 3194224000 || *a.OutputTokens != 783 || *a.ServerArrivalNs != 1723569622e9-3209839000 {
		t.Errorf("%s", dumpRequest(t, &a))
	}
	if notes := strings.Join(js.Runs[0].Notes, "\n"); !strings.Contains(notes, "llamacpp_context 7") || strings.Contains(notes, "unknown") {
		t.Errorf("notes: %s", notes)
	}
}

// TestTriton2019Trace: a TensorRT Inference Server 1.x trace file (one
// element per trace, lower-case timestamp names, parent_id for an
// ensemble's steps) is recognized and read as Triton 2.x traces are: the
// documentation's own example gives queue 50.005 µs, compute 6.974372 ms,
// e2e 7.772006 ms; the ensemble is one record, its two steps noted.
func TestTriton2019Trace(t *testing.T) {
	c := importOne(t, "testdata/fixtures/triton-2019-ensemble/trace.json")
	if len(c.Requests) != 2 {
		t.Fatalf("%d records", len(c.Requests))
	}
	r := c.Requests[0]
	if r.ServerKind != KindTriton || *r.ServerArrivalNs != 2259961222771924 || *r.ServerQueueNs != 50005 || *r.ServerInferenceNs != 6974372 || *r.ServerE2ENs != 7772006 || r.ServerTTFTNs != nil {
		t.Errorf("trace 1: %s", dumpRequest(t, &r))
	}
	e := c.Requests[1]
	if *e.ServerArrivalNs != 2259962100000000 || *e.ServerE2ENs != 13090000 || e.ServerQueueNs != nil {
		t.Errorf("ensemble: %s", dumpRequest(t, &e))
	}
	if !strings.Contains(strings.Join(c.Runs[0].Notes, "\n"), "2 child traces") {
		t.Errorf("notes %q", c.Runs[0].Notes)
	}
}

// TestProxyRequestLog: a logging proxy's per-request JSONL (ts, ttft_ms,
// latency_ms, usage counts, response_id, status) becomes one server row per
// request — a null ttft_ms (a request that did not stream) stays null, not
// 0 — where it used to be no recognized format.
func TestProxyRequestLog(t *testing.T) {
	c := importOne(t, "../../testdata/server-logs/anud18-trace-samples/sample_trace.jsonl")
	if len(c.Requests) != 5 || c.Runs[0].Tool != "logging-proxy" {
		t.Fatalf("%d records, tool %q", len(c.Requests), c.Runs[0].Tool)
	}
	r := c.Requests[1] // ts 2026-06-22T20:33:37.377112+00:00, ttft 76.3 ms, latency 846.5 ms, 17 → 40 tokens
	if r.ServerRequestID != "chatcmpl-a72fd3cf04d3e3bf" || *r.ServerArrivalNs != 1782160417377112000 || *r.ServerTTFTNs != 76300000 ||
		*r.ServerE2ENs != 846500000 || *r.InputTokens != 17 || *r.OutputTokens != 40 || r.Status != formats.StatusOK {
		t.Errorf("record 2: %s", dumpRequest(t, &r))
	}
	if c.Requests[0].ServerTTFTNs != nil {
		t.Errorf("record 1 (not streamed, ttft_ms null): TTFT %d, want null", *c.Requests[0].ServerTTFTNs)
	}
}

// TestOneLineOTLPWithoutNewline: a complete one-line OTLP/JSON export
// written without a final newline is complete — no "the file was cut
// there", not Truncated — while the same line cut short still is (a cut
// JSON document, its complete span imported).
func TestOneLineOTLPWithoutNewline(t *testing.T) {
	b, err := os.ReadFile("../../testdata/server-logs/anud18-trace-samples/sample_vllm_spans.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	line := bytes.TrimRight(b, "\n")
	dir := t.TempDir()
	for _, tc := range []struct {
		data []byte
		cut  bool
		n    int
	}{{line, false, 2}, {line[:len(line)-40], true, 1}} {
		p := filepath.Join(dir, "spans.jsonl")
		os.WriteFile(p, tc.data, 0o644)
		var warnings []string
		var c formats.Collector
		if err := ingest.ImportFile(&Importer{Year: 2026}, p, ingest.Options{Label: "t", Warn: func(m string) { warnings = append(warnings, m) }}, &c); err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(strings.Join(warnings, "\n"), "cut")
		if c.Runs[0].Truncated != tc.cut || said != tc.cut || len(c.Requests) != tc.n {
			t.Errorf("cut %v: truncated %v, %d records, warnings %q", tc.cut, c.Runs[0].Truncated, len(c.Requests), warnings)
		}
	}
}
