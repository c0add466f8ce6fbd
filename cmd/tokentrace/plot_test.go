package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// runBoth executes the CLI in-process and returns stdout and stderr.
func runBoth(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestPlotCommand: plot draws the kinds asked for, in the format asked
// for, labels runs with --label, and lists what it skipped with the reason.
func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runBoth(t, "plot", demoInputs[0], demoInputs[1], "-o", dir, "--format", "png",
		"--kind", "ccdf,timeline", "--label", "agent", "--label", "bedrock")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ccdf-e2e.png", "ccdf-itl.png", "ccdf-tpot.png", "ccdf-ttft.png", "timeline-agent.png"}
	if got := listDir(t, dir); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	for _, line := range []string{
		"tokentrace: wrote 5 plot(s) to " + dir,
		"tokentrace: plot skipped: ccdf ITL of bedrock: no per-message arrival times in the source, so no token gaps",
		"tokentrace: plot skipped: timeline of bedrock: no request start times in the source",
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "timeline-agent.png"))
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("timeline-agent.png is not a PNG (%v)", err)
	}
	for _, bad := range [][]string{
		{"plot", demoInputs[0], "-o", dir, "--format", "gif"},
		{"plot", demoInputs[0], "-o", dir, "--kind", "pie"},
		{"plot", demoInputs[0]},
	} {
		if _, _, err := runBoth(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		} else if _, ok := err.(usageError); !ok {
			t.Errorf("%v: %v is not a usage error", bad, err)
		}
	}
}

// TestAnalyzeWritesPlotsAndHTML: analyze also writes DIR/plots/ and
// DIR/report.html (with --no-plots, neither).
func TestAnalyzeWritesPlotsAndHTML(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"analyze"}, demoInputs...)
	_, errOut, err := runBoth(t, append(args, "-o", dir, "--slo", "ttft<=500ms,e2e<=15s")...)
	if err != nil {
		t.Fatal(err)
	}
	got := listDir(t, filepath.Join(dir, "plots"))
	if len(got) != 14 || got[0] != "ccdf-e2e.svg" || got[13] != "windows-qwen3vl30b-local-agent-c2.svg" {
		t.Fatalf("plots: %v", got)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "<svg"); n != 14 {
		t.Errorf("report.html inlines %d SVG plots, want 14", n)
	}
	if !strings.Contains(errOut, "tokentrace: wrote "+dir+": {events,requests,runs}.parquet, report.json, plots/ and report.html") {
		t.Errorf("stderr does not say report.html was written:\n%s", errOut)
	}
	if _, _, err := runBoth(t, append(args, "-o", t.TempDir(), "--plot-format", "gif")...); err == nil {
		t.Error("--plot-format gif accepted")
	} else if _, ok := err.(usageError); !ok {
		t.Errorf("--plot-format gif: %v is not a usage error", err)
	}
	dir2 := t.TempDir()
	if _, _, err := runBoth(t, append(args, "-o", dir2, "--no-plots")...); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir2, "report.html")); !os.IsNotExist(err) {
		t.Error("--no-plots still wrote report.html")
	}
}

// TestPlotOverlaysConventions: several --convention values are overlaid,
// each run labelled "run · convention"; an unknown one is a usage error
// before anything is read.
func TestPlotOverlaysConventions(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runBoth(t, "plot", demoInputs[0], "-o", dir, "--kind", "ccdf,itl-position", "--convention", "tokentrace,aiperf"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(listDir(t, dir), " ")
	want := "ccdf-e2e.svg ccdf-itl.svg ccdf-tpot.svg ccdf-ttft.svg itl-position-qwen3vl30b-local-agent-c2_aiperf.svg itl-position-qwen3vl30b-local-agent-c2_tokentrace.svg"
	if got != want {
		t.Fatalf("wrote %s\nwant  %s", got, want)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "ccdf-tpot.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"qwen3vl30b-local-agent-c2 · tokentrace (n=20)", "qwen3vl30b-local-agent-c2 · aiperf (n=20)"} {
		if !strings.Contains(string(svg), l) {
			t.Errorf("ccdf-tpot.svg has no legend entry %q", l)
		}
	}
	if _, _, err := runBoth(t, "plot", demoInputs[0], "-o", dir, "--convention", "tokentrace,nope"); err == nil {
		t.Error("unknown convention accepted")
	} else if _, ok := err.(usageError); !ok {
		t.Errorf("%v is not a usage error", err)
	}
}

// TestAnalyzeDrawsAllZeroLatencies: a run whose every TTFT and gap is 0 (a
// broken clock, or a mock server) once panicked in gonum/plot's log axis
// and left no report.html; the timeline falls back to a linear axis.
func TestAnalyzeDrawsAllZeroLatencies(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../testdata/aiperf/qwen3vl30b-local-agent-c2/profile_export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		metrics, _ := rec["metrics"].(map[string]any)
		for _, k := range []string{"time_to_first_token", "time_to_first_output_token"} {
			if m, ok := metrics[k].(map[string]any); ok {
				m["value"] = 0.0
			}
		}
		if m, ok := metrics["inter_chunk_latency"].(map[string]any); ok {
			vs, _ := m["value"].([]any)
			for i := range vs {
				vs[i] = 0.0
			}
		}
		enc, _ := json.Marshal(rec)
		out = append(out, string(enc))
	}
	if err := os.WriteFile(filepath.Join(dir, "profile_export.jsonl"), []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := t.TempDir()
	if _, err := run(t, "analyze", dir, "-o", res, "--slo", "ttft<=500ms"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.html", "plots/timeline-" + filepath.Base(dir) + ".svg"} {
		if _, err := os.Stat(filepath.Join(res, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestPlotSVGStaysXMLWithControlCharacters: a label (a directory name, a
// run id: untrusted) with a control character once made every SVG
// malformed XML; it is drawn as '?'.
func TestPlotSVGStaysXMLWithControlCharacters(t *testing.T) {
	out := t.TempDir()
	if _, err := run(t, "plot", "../../testdata/aiperf/qwen3vl30b-local-agent-c2", "-o", out, "--label", "a\x01b"); err != nil {
		t.Fatal(err)
	}
	svgs, _ := filepath.Glob(filepath.Join(out, "*.svg"))
	if len(svgs) == 0 {
		t.Fatal("no SVG written")
	}
	for _, f := range svgs {
		b, _ := os.ReadFile(f)
		dec := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := dec.Token(); err != nil {
				if err != io.EOF {
					t.Errorf("%s: %v", filepath.Base(f), err)
				}
				break
			}
		}
		if !bytes.Contains(b, []byte("a?b")) {
			t.Errorf("%s: label not drawn as a?b", filepath.Base(f))
		}
	}
}

// TestAnalyzeOutputIsASet: analyze replaces its output directory as a
// whole — an earlier run's report.html and plots/ do not survive a
// --no-plots run (they would pass for this run's); a run that fails after
// its import leaves the previous output as it was and no temporary
// directory; a directory holding other files is refused, untouched; and
// the temporary directory of a killed run (a pid no longer running) is
// removed by the next run.
func TestAnalyzeOutputIsASet(t *testing.T) {
	const in = "../../testdata/llmperf/leaderboard-groq-70b"
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if _, _, err := runBoth(t, "analyze", in, "-o", out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runBoth(t, "analyze", in, "-o", out, "--no-plots"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(listDir(t, out), " "); got != ".tokentrace-output events.parquet report.json requests.parquet runs.parquet" {
		t.Errorf("after --no-plots: %s", got)
	}
	before, _ := os.ReadFile(filepath.Join(out, "report.json"))
	// fails after the import: a TPOT constraint on a non-streaming run
	if _, _, err := runBoth(t, "analyze", "../../testdata/genai-perf/openrouter-llama31-8b-c1-nonstream", "-o", out, "--slo", "tpot<=10ms"); err == nil {
		t.Fatal("tpot SLO on a non-streaming run accepted")
	}
	after, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if string(after) != string(before) || strings.Join(listDir(t, parent), " ") != "out" {
		t.Errorf("a failed run changed the output: %v", listDir(t, parent))
	}
	// foreign files
	mine := filepath.Join(parent, "mine")
	must(t, os.Mkdir(mine, 0o755))
	must(t, os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("keep me"), 0o644))
	_, _, err := runBoth(t, "analyze", in, "-o", mine)
	if _, ok := err.(usageError); !ok || !strings.Contains(err.Error(), "holds files analyze did not write (notes.txt)") {
		t.Errorf("foreign files: %v", err)
	}
	if got := strings.Join(listDir(t, mine), " "); got != "notes.txt" {
		t.Errorf("foreign directory changed: %s", got)
	}
	// a killed run's temporaries (pid 2^22+1: not running)
	stale := filepath.Join(parent, ".out.tmp-4194305-abc")
	must(t, os.MkdirAll(filepath.Join(stale, "plots"), 0o755))
	if _, _, err := runBoth(t, "analyze", in, "-o", out, "--no-plots"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(listDir(t, parent), " "); got != "mine out" {
		t.Errorf("stale temporaries kept: %s", got)
	}
}
