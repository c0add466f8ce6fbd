package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

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

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/tokentrace -update)", err)
	}
	if got != string(want) {
		_ = os.WriteFile(path+".got", []byte(got), 0o644)
		t.Errorf("%s differs from golden; see %s.got", name, path)
	}
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
	if rep.SchemaVersion != 1 || len(rep.Runs) != 3 {
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
	golden(t, "demo-report.txt", out)
	md, err := run(t, append(args, "--format", "markdown")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "demo-report.md", md)
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
	out, err := run(t, "import", "../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts", "-o", dir, "--no-text", "--arrow")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "imported 1 runs, 20 requests") {
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
