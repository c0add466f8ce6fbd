package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// run executes the CLI in-process and returns stdout.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

var demoInputs = []string{
	"../../testdata/aiperf/qwen3vl30b-local-agent-c2",
	"../../testdata/llmperf/leaderboard-bedrock-70b",
	"../../testdata/genai-perf/openrouter-llama31-8b-c1-nonstream",
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

// TestAnalyzeEndToEnd is the main job: real runs of three tools in,
// Parquet tables and report.json out, the same report printed; and the
// report recomputed from the written tables equals the one from the raw
// files.
func TestAnalyzeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"analyze"}, demoInputs...)
	args = append(args, "-o", dir, "--slo", "ttft<=500ms,e2e<=15s", "--format", "json")
	out, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"events.parquet", "requests.parquet", "runs.parquet", "report.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	saved, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	if string(saved) != out {
		t.Error("report.json differs from the printed JSON report")
	}
	var rep struct {
		SchemaVersion int `json:"schema_version"`
		Runs          []struct {
			RunID    string `json:"run_id"`
			Tool     string `json:"tool"`
			Requests struct{ Total, Completed, Failed int }
			Goodput  struct{ Good, Total int }
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.SchemaVersion != analyze.ReportSchemaVersion || len(rep.Runs) != 3 {
		t.Fatalf("report: %+v", rep)
	}
	want := []struct {
		tool              string
		total, done, fail int
	}{{"aiperf", 20, 20, 0}, {"llmperf", 150, 101, 49}, {"genai-perf", 39, 39, 0}}
	for i, w := range want {
		r := rep.Runs[i]
		if r.Tool != w.tool || r.Requests.Total != w.total || r.Requests.Completed != w.done || r.Requests.Failed != w.fail {
			t.Errorf("run %d: %+v, want %+v", i, r, w)
		}
	}

	fromTables, err := run(t, "report", dir, "--slo", "ttft<=500ms,e2e<=15s", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if fromTables != out {
		t.Error("report from the Parquet tables differs from the report from the raw files")
	}
}

// TestDemoReportText pins the human report of the demo runs (the README
// tour shows this output).
func TestDemoReportText(t *testing.T) {
	args := append([]string{"report"}, demoInputs...)
	out, err := run(t, append(args, "--slo", "ttft<=500ms,e2e<=15s")...)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "demo-report.txt", out)
	md, err := run(t, append(args, "--format", "markdown")...)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "demo-report.md", md)
}

func TestUsageErrors(t *testing.T) {
	_, err := run(t, "report", demoInputs[0], "--slo", "ttft<=500")
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "at character 10") {
		t.Fatalf("bad SLO: %v (want a usage error pointing at character 10)", err)
	}
	if _, err := run(t, "analyze", demoInputs[0]); !errors.As(err, &ue) {
		t.Fatalf("analyze without -o: %v", err)
	}
	if _, err := run(t, "report", demoInputs[0], "--format", "xml"); !errors.As(err, &ue) {
		t.Fatalf("bad format: %v", err)
	}
	// An SLO the run cannot measure is a plain error naming the constraint.
	_, err = run(t, "report", demoInputs[2], "--slo", "tpot<=20ms")
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "tpot<=20ms") {
		t.Fatalf("TPOT on non-streaming: %v", err)
	}
}

func TestImportNoTextAndPool(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "import", "../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts", "-o", dir, "--drop-text", "--arrow")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "imported 1 run, 20 requests") {
		t.Fatalf("import output %q", out)
	}
	for _, f := range []string{"events.arrow", "requests.arrow", "runs.arrow"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	js, err := run(t, "report", "--pool", "--format", "json", demoInputs[0], demoInputs[1])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Pooled *struct {
			Requests struct{ Total int }
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || rep.Pooled == nil || rep.Pooled.Requests.Total != 170 {
		t.Fatalf("pooled: %+v %v", rep.Pooled, err)
	}
}

// TestReconcileCorpus pins the reconciliation of a real LLMPerf run from
// its own convention to tokentrace's (README shows it).
func TestReconcileCorpus(t *testing.T) {
	out, err := run(t, "reconcile", "../../testdata/llmperf/leaderboard-anyscale-70b")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "reconcile-anyscale.txt", out)
	js, err := run(t, "reconcile", "../../testdata/aiperf/qwen3vl30b-local-agent-c2", "--format", "json", "--stat", "mean")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Runs []struct {
			From, To string
			Metrics  []struct {
				Metric    string
				FromValue float64 `json:"from_value"`
				ToValue   float64 `json:"to_value"`
				Total     float64
				Steps     []struct{ Delta float64 }
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Runs) != 1 || rec.Runs[0].From != "aiperf" || rec.Runs[0].To != "tokentrace" {
		t.Fatalf("%+v", rec.Runs)
	}
	for _, m := range rec.Runs[0].Metrics {
		sum := 0.0
		for _, s := range m.Steps {
			sum += s.Delta
		}
		if d := sum - m.Total; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: steps sum to %v, total %v", m.Metric, sum, m.Total)
		}
	}
}

// TestReportUnderToolConvention: --convention tool reports each run under
// its tool's convention, with the reproduction of the tool's summary.
func TestReportUnderToolConvention(t *testing.T) {
	js, err := run(t, "report", "--convention", "tool", "--format", "json", demoInputs[0], demoInputs[1])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Runs []struct {
			Convention   struct{ Name string }
			Reproduction struct {
				Reproduced, Differs, Total int
				NotReproducible            int `json:"not_reproducible"`
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Runs[0].Convention.Name != "aiperf" || rep.Runs[1].Convention.Name != "llmperf@2023-12" {
		t.Fatalf("conventions %+v", rep.Runs)
	}
	for _, r := range rep.Runs {
		rp := r.Reproduction
		if rp.Total == 0 || rp.Reproduced+rp.Differs+rp.NotReproducible != rp.Total {
			t.Errorf("%s reproduction %+v", r.Convention.Name, rp)
		}
	}
	if _, err := run(t, "report", "--convention", "nosuch", demoInputs[0]); err == nil || !strings.Contains(err.Error(), "known:") {
		t.Fatalf("unknown convention: %v", err)
	}
}

// TestSameRunNamesAreNotMerged: two inputs whose runs share a name are
// reported as two runs (newcomer report: tables written twice were merged).
// TestSameRunNamesAreNotMerged: runs of different inputs that would share
// a name stay apart, under labels no other input has (x/run-2, y/run and
// z/run used to give two runs, one holding 40 requests).
func TestSameRunNamesAreNotMerged(t *testing.T) {
	root := t.TempDir()
	ins := []string{demoInputs[0], "../../testdata/aiperf/llama31-8b-local-chatbot-c2", "../../testdata/aiperf/qwen3vl30b-local-chatbot-c1-warmup2"}
	var dirs []string
	for i, d := range []string{"x/run-2", "y/run", "z/run"} {
		dirs = append(dirs, filepath.Join(root, d))
		if err := os.CopyFS(dirs[i], os.DirFS(ins[i])); err != nil {
			t.Fatal(err)
		}
	}
	var js string
	stderr := captureStderr(t, func() {
		var err error
		if js, err = run(t, append([]string{"report", "--format", "json"}, dirs...)...); err != nil {
			t.Error(err)
		}
	})
	var rep struct {
		Runs []struct {
			RunID    string `json:"run_id"`
			Requests struct{ Total int }
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Runs {
		got = append(got, fmt.Sprintf("%s:%d", r.RunID, r.Requests.Total))
	}
	if s := strings.Join(got, " "); s != "run-2:20 run:20 run-3:10" {
		t.Errorf("runs %s, want run-2:20 run:20 run-3:10", s)
	}
	if !strings.Contains(stderr, `run_label_collision: 1 input(s)`) || !strings.Contains(stderr, `z/run/profile_export.jsonl as "run-3"`) {
		t.Errorf("no collision warning: %s", stderr)
	}
}

// TestSameInputIsReadOnce: the same content reached again — the same
// folder twice, a copy, the tables an analyze wrote inside the input
// folder, a killed run's hidden temporary — is read once, with a
// duplicate_input warning, however it was reached.
func TestSameInputIsReadOnce(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "run")
	if err := os.CopyFS(in, os.DirFS(demoInputs[0])); err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(root, "copy")
	if err := os.CopyFS(copyDir, os.DirFS(demoInputs[0])); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "analyze", in, "-o", filepath.Join(in, "out"), "--no-plots"); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, ".out.tmp-999-x"), os.DirFS(filepath.Join(in, "out"))); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "tables-copy"), os.DirFS(filepath.Join(in, "out"))); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		warn string
	}{
		"folder twice":          {[]string{in, in, copyDir}, "duplicate_input: 2 input(s)"},
		"output inside input":   {[]string{in}, "duplicate_input: 1 input(s)"},
		"tables, copy and temp": {[]string{root}, "duplicate_input: 1 table folder(s)"},
	} {
		var js string
		stderr := captureStderr(t, func() {
			var err error
			if js, err = run(t, append([]string{"report", "--format", "json"}, tc.args...)...); err != nil {
				t.Error(err)
			}
		})
		var rep struct {
			Runs []struct{ Requests struct{ Total int } }
		}
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rep.Runs) != 1 || rep.Runs[0].Requests.Total != 20 {
			t.Errorf("%s: %+v, want one run of 20 requests", name, rep.Runs)
		}
		if !strings.Contains(stderr, tc.warn) {
			t.Errorf("%s: no %q warning: %s", name, tc.warn, stderr)
		}
	}
}

// TestPoolKeepsStreamingMetrics: pooling a non-streaming run with a
// streaming one keeps the streaming run's TPOT and ITL.
func TestPoolKeepsStreamingMetrics(t *testing.T) {
	js, err := run(t, "report", "--pool", "--format", "json", demoInputs[0], demoInputs[2])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Pooled struct {
			Streaming bool
			Metrics   map[string]struct{ N int }
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Pooled.Streaming || rep.Pooled.Metrics["tpot_ms"].N != 20 || rep.Pooled.Metrics["itl_ms"].N != 4490 || rep.Pooled.Metrics["ttft_ms"].N != 59 {
		t.Fatalf("pooled %+v", rep.Pooled)
	}
}

func TestUsageExitCodes(t *testing.T) {
	var ue usageError
	for _, args := range [][]string{{"report"}, {"report", demoInputs[0], "--from", "bogus"}, {"report", demoInputs[0], "--label", "a", "--label", "b"}} {
		if _, err := run(t, args...); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestREADMETourIsReal keeps the README's pasted output true: every line
// of its demo block is a line of the demo report golden.
func TestREADMETourIsReal(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/demo-report.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(golden), "\n") {
		lines[l] = true
	}
	s := string(readme)
	i := strings.Index(s, "== run qwen3vl30b-local-agent-c2 ==")
	if i < 0 {
		t.Fatal("README has no demo output block")
	}
	block := s[i : i+strings.Index(s[i:], "```")]
	for _, l := range strings.Split(block, "\n") {
		if l != "" && l != "…" && !lines[l] {
			t.Errorf("README line not in the demo report: %q", l)
		}
	}
}

// TestReportFindsTableDirsBelowADirectory: report OUT reads every table
// directory written below OUT.
func TestReportFindsTableDirsBelowADirectory(t *testing.T) {
	root := t.TempDir()
	for i, in := range demoInputs[:2] {
		if _, err := run(t, "import", in, "-o", filepath.Join(root, []string{"a", "b"}[i])); err != nil {
			t.Fatal(err)
		}
	}
	js, err := run(t, "report", "--format", "json", root)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Runs []struct{ Tool string } }
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Tool != "aiperf" || rep.Runs[1].Tool != "llmperf" {
		t.Fatalf("%+v", rep.Runs)
	}
}

// TestPooledThroughputCountsTimedRunsOnly: an LLMPerf run (no start times)
// pooled with an AIPerf run does not inflate the pooled request rate.
func TestPooledThroughputCountsTimedRunsOnly(t *testing.T) {
	js, err := run(t, "report", "--pool", "--format", "json", demoInputs[0], demoInputs[1])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Runs []struct {
			Throughput struct {
				RequestsPerS float64 `json:"requests_per_s"`
			}
		}
		Pooled struct {
			Throughput struct {
				RequestsPerS float64 `json:"requests_per_s"`
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Pooled.Throughput.RequestsPerS, rep.Runs[0].Throughput.RequestsPerS; math.Abs(got-want) > 1e-12 {
		t.Fatalf("pooled req/s %v, want the timed run's %v", got, want)
	}
	if _, err := run(t, "reconcile", demoInputs[1], "--stat", "bogus"); err == nil {
		t.Fatal("reconcile --stat bogus accepted")
	}
}

func TestKnownNonTraceFilesAreSkippedQuietly(t *testing.T) {
	for p, want := range map[string]bool{
		"runs/x/inputs.json": true, "mlperf/user.conf": true, "out/bench/truth.csv": true, "a/SOURCE.md": true,
		"a/plots/ccdf-ttft.svg": true, "a/results.json": false, "a/profile_export.csv": false,
	} {
		if got := knownNonTrace(p); got != want {
			t.Errorf("%s: %v, want %v", p, got, want)
		}
	}
}

// TestNoteRepeatedDirs: one directory given twice under two spellings is
// noted (its files are imported once); distinct directories and files are
// not.
func TestNoteRepeatedDirs(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	noteRepeatedDirs([]string{
		"../../testdata/llmperf/leaderboard-groq-70b",
		"../../testdata/llmperf/leaderboard-anyscale-70b",
		"../../testdata/llmperf/../llmperf/leaderboard-groq-70b/",
		"../../testdata/llmperf/leaderboard-groq-70b/SOURCE.md",
		"../../testdata/llmperf/leaderboard-groq-70b/SOURCE.md",
	})
	os.Stderr = saved
	w.Close()
	b, _ := io.ReadAll(r)
	want := "tokentrace: note: ../../testdata/llmperf/leaderboard-groq-70b and ../../testdata/llmperf/../llmperf/leaderboard-groq-70b/ are the same directory: its files are imported once\n"
	if string(b) != want {
		t.Errorf("got %q\nwant %q", b, want)
	}
}

// TestPercentilesFlag: --percentiles chooses the summaries' percentiles:
// the text table's columns and the JSON keys (p25, p99_9 and their
// intervals); the AIPerf run's TTFT P25 is numpy's linear percentile of its
// 20 TTFTs (h = 19·0.25 = 4.75), the same value `report` prints without the
// flag for P50 stays; a bad list is a usage error.
func TestPercentilesFlag(t *testing.T) {
	in := "../../testdata/aiperf/qwen3vl30b-local-agent-c2"
	out, err := run(t, "report", in, "--percentiles", "25,50,99.9")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "min    P25    P50  P99.9    max") || !strings.Contains(out, "P99.9 95% confidence interval") {
		t.Errorf("text report:\n%s", out)
	}
	js, err := run(t, "report", in, "--percentiles", "25,50,99.9", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Metrics map[string]map[string]any `json:"metrics"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	ttft := doc.Runs[0].Metrics["ttft_ms"]
	for _, k := range []string{"p25", "p50", "p99_9", "p25_ci95", "p99_9_ci95"} {
		if _, ok := ttft[k]; !ok {
			t.Errorf("ttft_ms lacks %s: %v", k, ttft)
		}
	}
	if _, ok := ttft["p99"]; ok {
		t.Error("p99 was not asked for")
	}
	def, _ := run(t, "report", in, "--format", "json")
	var d2 struct {
		Runs []struct {
			Metrics map[string]map[string]any `json:"metrics"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(def), &d2); err != nil {
		t.Fatal(err)
	}
	if ttft["p50"] != d2.Runs[0].Metrics["ttft_ms"]["p50"] {
		t.Errorf("P50 %v differs from the default report's %v", ttft["p50"], d2.Runs[0].Metrics["ttft_ms"]["p50"])
	}
	if _, err := run(t, "report", in, "--percentiles", "99,50"); err == nil || exitCode(err) != 2 {
		t.Errorf("descending list: %v", err)
	}
}
