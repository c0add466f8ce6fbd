package registry

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// samples are one JSON, JSONL, YAML or log file per importer (and shape),
// each detected on its own in a directory of its own.
var samples = []struct{ from, path string }{
	{"genai-perf", "../../testdata/genai-perf/openrouter-llama31-8b-c1-nonstream/profile_export.json"},
	{"aiperf", "../../testdata/aiperf/qwen3vl30b-local-agent-c2/profile_export.jsonl"},
	{"llmperf", "../../testdata/llmperf/leaderboard-groq-70b/individual_responses.json"},
	{"llmperf", "../../testdata/llmperf/leaderboard-groq-70b/summary.json"},
	{"inference-perf", "../inferenceperf/testdata/head-2stages/per_request_lifecycle_metrics.json"},
	{"inference-perf", "../../testdata/inference-perf/kubecon25-vllm-baseline/stage_2_lifecycle_metrics.json"},
	{"vllm", "../vllmbench/testdata/latencies-only/openai-1.0qps-opt-125m-20260302-090000.json"},
	{"sglang", "../../testdata/sglang-bench/dlora-oldformat-1req/sglang_1022_1_1024_128.jsonl"},
	{"guidellm", "../guidellm/testdata/v04-requests/benchmarks.json"},
	{"guidellm", "../guidellm/testdata/v04-yaml/benchmarks.yaml"},
	{"guidellm", "../../testdata/guidellm/v03-sweep-sync-stripped/benchmarks_stripped.yaml"},
	{"mlperf", "../../testdata/mlperf/amd-mi300x-llama2-70b-99-offline/mlperf_log_summary.txt"},
	{"server-log", "../../testdata/server-logs/vllm-otel-span-fixture/vllm-0.29.0-otel.json"},
	{"server-log", "../../testdata/server-logs/anud18-trace-samples/sample_trace.jsonl"},
}

// importAlone copies data into a directory of its own under name, and
// resolves and imports it; it returns the runs, the warnings and the error.
func importAlone(t *testing.T, name string, data []byte) (formats.Collector, []string, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var c formats.Collector
	var warnings []string
	jobs, _, err := Resolve([]string{p}, "")
	if err != nil {
		return c, nil, err
	}
	err = Import(jobs, nil, ingest.Options{Warn: func(m string) { warnings = append(warnings, m) }}, &c)
	return c, warnings, err
}

// TestTruncatedSaysSo: every importer's file cut in the middle of a line
// (at 3/5 of its bytes) either fails with an error that says the file is
// cut, or imports what is complete with a Truncated run and a warning
// saying so — never a silent, smaller import. (A guidellm YAML cut short
// used to import with exit 0 and no word.)
func TestTruncatedSaysSo(t *testing.T) {
	cutWords := []string{"cut", "truncated", "incomplete", "ends before", "ends at", "ends inside", "ends early"}
	says := func(s string) bool {
		s = strings.ToLower(s)
		for _, w := range cutWords {
			if strings.Contains(s, w) {
				return true
			}
		}
		return false
	}
	for _, sm := range samples {
		b, err := os.ReadFile(sm.path)
		if err != nil {
			t.Fatal(err)
		}
		n := len(b) * 3 / 5
		for n < len(b) && b[n-1] == '\n' { // mid-line
			n++
		}
		c, warnings, err := importAlone(t, filepath.Base(sm.path), b[:n])
		if err != nil {
			if !says(err.Error()) {
				t.Errorf("%s cut at byte %d of %d: error %q does not say the file is cut", sm.path, n, len(b), err)
			}
			continue
		}
		truncated := false
		for _, r := range c.Runs {
			truncated = truncated || r.Truncated
		}
		warned := false
		for _, w := range warnings {
			warned = warned || says(w)
		}
		if !truncated || !warned {
			t.Errorf("%s cut at byte %d of %d: runs truncated %v, warnings %q", sm.path, n, len(b), truncated, warnings)
		}
	}
}

// TestBOMAndCompressedInputs: every importer's sample with a UTF-8 BOM in
// front, gzipped, and zstd-compressed is recognized (it used to be "not a
// recognized trace format") and imports the same requests and runs as the
// file itself.
func TestBOMAndCompressedInputs(t *testing.T) {
	for _, sm := range samples {
		b, err := os.ReadFile(sm.path)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := importAlone(t, filepath.Base(sm.path), b)
		if err != nil {
			t.Fatalf("%s: %v", sm.path, err)
		}
		var gz bytes.Buffer
		z := gzip.NewWriter(&gz)
		z.Write(append([]byte("\xef\xbb\xbf"), b...))
		z.Close()
		for kind, data := range map[string][]byte{
			"BOM":      append([]byte("\xef\xbb\xbf"), b...),
			"gzip+BOM": gz.Bytes(),
			"zstd":     zstdBytes(b),
		} {
			got, _, err := importAlone(t, filepath.Base(sm.path), data)
			if err != nil {
				t.Errorf("%s (%s): %v", sm.path, kind, err)
				continue
			}
			if len(got.Runs) != len(want.Runs) || len(got.Requests) != len(want.Requests) || len(got.Runs[0].Reported) != len(want.Runs[0].Reported) {
				t.Errorf("%s (%s): %d runs, %d requests; want %d, %d", sm.path, kind, len(got.Runs), len(got.Requests), len(want.Runs), len(want.Requests))
			}
		}
	}
}

var zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))

func zstdBytes(b []byte) []byte { return zenc.EncodeAll(b, nil) }
