package registry

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TestTwoShapesIsAnError: a vLLM result that also carries an "experiments"
// array (GenAI-Perf's key) matches both tools' shapes. It used to be read
// as GenAI-Perf, and vLLM's requests — a failure among them — vanished; now
// it is an error naming both formats and --from, in a directory too, and
// --from vllm imports all five requests.
func TestTwoShapesIsAnError(t *testing.T) {
	b, err := os.ReadFile("../vllmbench/testdata/detailed-appended/openai-chat-4.0qps-concurrency2-Llama-3.1-8B-Instruct-20260301-101500.json")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	both := append([]byte(`{"experiments": [{"experiment": {"mode": "concurrency", "value": 2}, "requests": []}], `), first[1:]...)
	dir := t.TempDir()
	p := filepath.Join(dir, "result.json")
	if err := os.WriteFile(p, both, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{p, dir} {
		_, _, err := Resolve([]string{in}, "")
		if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "genai-perf and vllm") || !strings.Contains(err.Error(), "--from") {
			t.Errorf("%s: %v, want an ambiguity error naming both formats and --from", in, err)
		}
	}
	jobs, _, err := Resolve([]string{p}, "vllm")
	if err != nil {
		t.Fatal(err)
	}
	var c formats.Collector
	if err := Import(jobs, nil, ingest.Options{}, &c); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, r := range c.Requests {
		if r.Status == formats.StatusError {
			failed++
		}
	}
	if len(c.Runs) != 1 || c.Runs[0].Tool != "vllm" || len(c.Requests) != 5 || failed != 1 {
		t.Errorf("--from vllm: %d runs, %d requests (%d failed), want 1 vllm run, 5 requests, 1 failed", len(c.Runs), len(c.Requests), failed)
	}
}

// TestCompanionNamedAlone: a summary named on its own while its raw file is
// beside it is not imported as something else: the error names the raw
// file and the --from that imports the summary alone, which works.
func TestCompanionNamedAlone(t *testing.T) {
	for path, want := range map[string]string{
		"../../testdata/aiperf/qwen3vl30b-local-agent-c2/profile_export_aiperf.json":                 "companion of profile_export.jsonl beside it, which the aiperf importer reads with it",
		"../../testdata/genai-perf/openrouter-llama31-8b-c1-nonstream/profile_export_genai_perf.csv": "companion of profile_export.json beside it, which the genai-perf importer reads with it",
		"../../testdata/llmperf/leaderboard-groq-70b/summary.json":                                   "companion of individual_responses.json beside it, which the llmperf importer reads with it",
		"../../testdata/mlperf/amd-mi300x-llama2-70b-99-offline/mlperf_log_detail.txt":               "companion of mlperf_log_summary.txt beside it, which the mlperf importer reads with it",
	} {
		_, _, err := Resolve([]string{path}, "")
		if !errors.Is(err, ErrUnrecognized) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", path, err)
			continue
		}
		from := strings.Fields(strings.SplitAfter(err.Error(), "--from ")[1])[0]
		jobs, _, err := Resolve([]string{path}, from)
		if err != nil {
			t.Fatal(err)
		}
		var c formats.Collector
		if err := Import(jobs, nil, ingest.Options{}, &c); err != nil || len(c.Runs) == 0 {
			t.Errorf("%s --from %s: %v (%d runs)", path, from, err, len(c.Runs))
		}
	}
}

// TestStageReportNamedAlone: inference-perf's stage_N_lifecycle_metrics.json
// named on the command line is a job of its own (it used to be "not a
// recognized trace format" unless it was its run's primary report), while
// its directory still makes one job for the whole run.
func TestStageReportNamedAlone(t *testing.T) {
	dir := "../../testdata/inference-perf/kubecon25-vllm-baseline"
	jobs, _, err := Resolve([]string{filepath.Join(dir, "stage_3_lifecycle_metrics.json")}, "")
	if err != nil || len(jobs) != 1 || jobs[0].Importer.Name() != "inference-perf" {
		t.Fatalf("%v %v", jobs, err)
	}
	var c formats.Collector
	if err := Import(jobs, nil, ingest.Options{}, &c); err != nil || len(c.Runs) != 1 || c.Runs[0].RunID != "kubecon25-vllm-baseline/stage_3" {
		t.Errorf("%v %+v", err, c.Runs)
	}
	jobs, _, err = Resolve([]string{dir}, "")
	if err != nil || len(jobs) != 1 || filepath.Base(jobs[0].Path) != "summary_lifecycle_metrics.json" {
		t.Errorf("directory: %v %v", jobs, err)
	}
}
