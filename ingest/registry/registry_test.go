package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
)

func TestResolveDirectoriesAndCompanions(t *testing.T) {
	jobs, skipped, err := Resolve([]string{"../../testdata"}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, j := range jobs {
		got[filepath.ToSlash(j.Path)] = j.Importer.Name()
	}
	// 2 GenAI-Perf + 8 AIPerf + 5 LLMPerf raw files (their summaries are
	// companions, not jobs), 3 vLLM result files (a sweep's run=0.json is
	// a companion of its summary.json), 3 SGLang JSONL files and 3
	// inference-perf runs (a summary_lifecycle_metrics.json each; stage and
	// Prometheus files are its companions), 1 guidellm report (its YAML twin
	// is a companion), 5 MLPerf summary logs (detail logs are companions),
	// the 3 trial runs of the AIPerf multi-run tree (its aggregates across
	// runs are not runs: skipped), AIPerf's GPU telemetry sample, which has
	// no profile_export.jsonl beside it, and the Prometheus documentation's
	// range-query response.
	// testdata/server-logs holds server logs (ingest/serverlog): counted
	// apart, each read by the server-log importer.
	benchJobs := 0
	for p, name := range got {
		if strings.Contains(p, "/joined/") { // client + server example (cmd/tokentrace server-join test)
			continue
		}
		if strings.Contains(p, "/server-logs/") {
			if name != "server-log" {
				t.Errorf("%s → %q, want server-log", p, name)
			}
			continue
		}
		benchJobs++
	}
	if benchJobs != 35 {
		t.Fatalf("%d jobs: %v", benchJobs, got)
	}
	for p, name := range map[string]string{
		"../../testdata/server-logs/anud18-trace-samples/sample_trace.jsonl":                "server-log", // a logging proxy's request log
		"../../testdata/genai-perf/openrouter-gpt4omini-c1-nonstream/profile_export.json":   "genai-perf",
		"../../testdata/aiperf/qwen3vl30b-local-agent-c2/profile_export.jsonl":              "aiperf",
		"../../testdata/aiperf/gpu-telemetry-qwen-c1/gpu_telemetry_export.jsonl":            "aiperf",
		"../../testdata/prometheus/api-doc-range-query/query_range_up.json":                 "prometheus",
		"../../testdata/llmperf/leaderboard-groq-70b/individual_responses.json":             "llmperf",
		"../../testdata/vllm-bench/er0080-sweep-opt125m-c2/summary.json":                    "vllm",
		"../../testdata/sglang-bench/dlora-oldformat-1req/sglang_1022_1_1024_128.jsonl":     "sglang",
		"../../testdata/inference-perf/kubecon25-vllm-eagle/summary_lifecycle_metrics.json": "inference-perf",
	} {
		if got[p] != name {
			t.Errorf("%s → %q, want %q", p, got[p], name)
		}
	}
	for p := range got {
		if (filepath.Base(p) == "summary.json" && got[p] != "vllm") || filepath.Base(p) == "run=0.json" || filepath.Ext(p) == ".csv" || filepath.Base(p) == "profile_export_aiperf.json" {
			t.Errorf("companion %s imported as its own job", p)
		}
	}
	for _, s := range skipped {
		if strings.HasSuffix(s, "_output.txt") { // guidellm's console output
			continue
		}
		if filepath.Base(s) == "make.py" { // the joined example's generator
			continue
		}
		if aiperf.IsAggregate(filepath.Base(s)) { // AIPerf's statistics across runs
			continue
		}
		if filepath.Ext(s) == ".parquet" { // tokentrace's own tables (testdata/lesson), read by cmd as tables
			continue
		}
		switch filepath.Base(s) {
		case "SOURCE.md", "inputs.json", "manifests.yaml", "user.conf", "mlperf.conf": // documentation, GenAI-Perf inputs, inference-perf manifests, MLPerf configs
		default:
			t.Errorf("skipped %s", s)
		}
	}
}

func TestResolveUnrecognizedExplicitFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Resolve([]string{p}, "")
	if !errors.Is(err, ErrUnrecognized) {
		t.Fatalf("err = %v, want ErrUnrecognized", err)
	}
	if _, _, err := Resolve([]string{p}, "nosuchtool"); err == nil {
		t.Fatal("unknown --from accepted")
	}
}

func TestImportLabelsMustMatchJobs(t *testing.T) {
	jobs, _, err := Resolve([]string{"../../testdata/llmperf/leaderboard-groq-70b"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := Import(jobs, []string{"a", "b"}, ingestOptions(), nil); err == nil {
		t.Fatal("2 labels for 1 input accepted")
	}
}

// TestResolveFollowsSymlinks: a symlinked directory (a CI job's
// results → artifacts/run-42) and a symlinked file inside a directory are
// read as what they point to, under the names given.
func TestResolveFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	run, _ := filepath.Abs("../../testdata/llmperf/leaderboard-groq-70b")
	if err := os.Symlink(run, filepath.Join(dir, "results")); err != nil {
		t.Fatal(err)
	}
	jobs, _, err := Resolve([]string{filepath.Join(dir, "results")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Path != filepath.Join(dir, "results", "individual_responses.json") || jobs[0].Importer.Name() != "llmperf" {
		t.Fatalf("jobs %+v", jobs)
	}
	linked := filepath.Join(dir, "linked")
	os.Mkdir(linked, 0o755)
	if err := os.Symlink(filepath.Join(run, "individual_responses.json"), filepath.Join(linked, "individual_responses.json")); err != nil {
		t.Fatal(err)
	}
	jobs, _, err = Resolve([]string{linked}, "")
	if err != nil || len(jobs) != 1 || jobs[0].Importer.Name() != "llmperf" {
		t.Fatalf("symlinked file: %v %+v", err, jobs)
	}
}

// TestResolveFollowsSymlinkedSubdirectories: a symlinked directory below an
// input directory is walked too, under its link's name; a link to an
// ancestor (a cycle) is not followed, and a file reached both directly and
// through a link is one job, under its direct path.
func TestResolveFollowsSymlinkedSubdirectories(t *testing.T) {
	dir := t.TempDir()
	aiperfRun, _ := filepath.Abs("../../testdata/aiperf/qwen3vl30b-local-agent-c2")
	llmperfRun, _ := filepath.Abs("../../testdata/llmperf/leaderboard-groq-70b")
	d := filepath.Join(dir, "d")
	mustMkdir(t, filepath.Join(d, "runs"))
	mustSymlink(t, aiperfRun, filepath.Join(d, "link"))                  // the newcomer's case
	mustSymlink(t, llmperfRun, filepath.Join(d, "runs", "groq"))         // nested link
	mustSymlink(t, d, filepath.Join(d, "runs", "up"))                    // cycle: link to an ancestor
	mustSymlink(t, dir, filepath.Join(d, "runs", "top"))                 // cycle: link above the input
	mustSymlink(t, filepath.Join(d, "runs"), filepath.Join(d, "again"))  // a directory already walked
	mustSymlink(t, filepath.Join(d, "link"), filepath.Join(d, "z-link")) // link to a link: same files again
	// a run beside d, reachable only through the cycle d/runs/top → dir
	data, err := os.ReadFile(filepath.Join(llmperfRun, "individual_responses.json"))
	if err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(dir, "beside"))
	if err := os.WriteFile(filepath.Join(dir, "beside", "individual_responses.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	jobs, _, err := Resolve([]string{d}, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		rel, _ := filepath.Rel(dir, j.Path)
		got = append(got, filepath.ToSlash(rel)+" "+j.Importer.Name())
	}
	want := []string{
		"d/link/profile_export.jsonl aiperf",
		"d/runs/groq/individual_responses.json llmperf",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("jobs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if l := ingest.DefaultLabel(jobs[0].Path); l != "link" {
		t.Errorf("label %q, want the link's name", l)
	}

	// The real directory and a link to it side by side: the direct path
	// wins whatever the lexical order.
	e := filepath.Join(dir, "e")
	mustMkdir(t, filepath.Join(e, "run"))
	if err := os.WriteFile(filepath.Join(e, "run", "individual_responses.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(e, "run"), filepath.Join(e, "a-link"))
	mustSymlink(t, filepath.Join(e, "run", "individual_responses.json"), filepath.Join(e, "run", "copy_individual_responses.json"))
	jobs, _, err = Resolve([]string{e}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Path != filepath.Join(e, "run", "individual_responses.json") {
		t.Fatalf("jobs %+v, want only e/run/individual_responses.json", jobs)
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestImportNoHashHashesLookalikes: without hashing, an input whose size
// another input shares (the same file given twice, a copy, or a file that
// only has the same size) is hashed after all, so a pooled report can
// tell duplicates apart; an input of a size no other has is not hashed.
func TestImportNoHashHashesLookalikes(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile("../../testdata/aiperf/qwen3vl30b-local-agent-c2/profile_export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	write := func(name, s string) string {
		p := filepath.Join(dir, name, "profile_export.jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// a and b are byte copies; c has a's size but its first two records
	// swapped; d is one record shorter.
	a := write("a", string(raw))
	b := write("b", string(raw))
	c := write("c", lines[1]+lines[0]+strings.Join(lines[2:], ""))
	d := write("d", strings.Join(lines[1:], ""))
	jobs, _, err := Resolve([]string{a, b, c, d, a}, "")
	if err != nil {
		t.Fatal(err)
	}
	col := &formats.Collector{}
	if err := Import(jobs, nil, ingest.Options{NoHash: true}, col); err != nil {
		t.Fatal(err)
	}
	digest := map[string]string{}
	for _, r := range col.Runs {
		for _, f := range r.SourceFiles {
			if f.Role == "raw" {
				digest[r.RunID] = f.SHA256
			}
		}
	}
	if len(col.Runs) != 5 {
		t.Fatalf("%d runs, want 5", len(col.Runs))
	}
	if digest["a"] == "" || digest["a"] != digest["b"] || digest["a"] != digest["a-2"] {
		t.Errorf("copies and the repeated file must be hashed alike: %v", digest)
	}
	if digest["c"] == "" || digest["c"] == digest["a"] {
		t.Errorf("same size, other bytes: hashed, and different: %v", digest)
	}
	if digest["d"] != "" {
		t.Errorf("a size no other input has is not hashed: %v", digest)
	}
}

// TestAIPerfMultiRunTree: the documented layout of an AIPerf sweep with
// repeated trials (testdata/aiperf/multirun-sweep-qwen3vl30b, SOURCE.md)
// resolves to one job per trial and cell, labelled trial/cell; the
// aggregates across runs are skipped, never imported as runs.
func TestAIPerfMultiRunTree(t *testing.T) {
	root := "../../testdata/aiperf/multirun-sweep-qwen3vl30b"
	jobs, skipped, err := Resolve([]string{root}, "")
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, j := range jobs {
		if j.Importer.Name() != "aiperf" {
			t.Errorf("%s read by %s", j.Path, j.Importer.Name())
		}
		labels = append(labels, ingest.DefaultLabel(j.Path))
	}
	if got := strings.Join(labels, " "); got != "trial_0001/concurrency_1 trial_0001/concurrency_2 trial_0002/concurrency_1" {
		t.Errorf("labels %s", got)
	}
	var names []string
	for _, s := range skipped {
		names = append(names, filepath.Base(s))
	}
	if got := strings.Join(names, " "); got != "SOURCE.md profile_export_aiperf_aggregate.json profile_export_aiperf_sweep.json" {
		t.Errorf("skipped %s", got)
	}
	var c formats.Collector
	if err := Import(jobs, nil, ingest.Options{}, &c); err != nil {
		t.Fatal(err)
	}
	conc := map[string]float64{}
	for _, r := range c.Runs {
		if r.Concurrency != nil {
			conc[r.RunID] = *r.Concurrency
		}
	}
	if conc["trial_0001/concurrency_1"] != 1 || conc["trial_0002/concurrency_1"] != 1 || conc["trial_0001/concurrency_2"] != 2 {
		t.Errorf("recorded concurrencies %v", conc)
	}
	// named explicitly, an aggregate is not a trace
	if _, _, err := Resolve([]string{root + "/aggregate/sweep_aggregate/profile_export_aiperf_sweep.json"}, ""); !errors.Is(err, ErrUnrecognized) {
		t.Errorf("sweep aggregate: %v", err)
	}
}
