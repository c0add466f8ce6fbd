package plots_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
	"github.com/tokentrace/tokentrace/plots"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The real runs the golden plots are drawn from (see each SOURCE.md):
// AIPerf streaming with per-chunk times (concurrency 2), LLMPerf without
// start times or per-message data (49 failed requests), GenAI-Perf
// non-streaming, and an MLPerf summary-only run.
var goldenRuns = []string{
	"../testdata/aiperf/qwen3vl30b-local-agent-c2",
	"../testdata/llmperf/leaderboard-bedrock-70b",
	"../testdata/genai-perf/openrouter-llama31-8b-c1-nonstream",
	"../testdata/mlperf/amd-mi300x-llama2-70b-99-server",
}

const goldenSLO = "ttft<=500ms,e2e<=15s"

// load imports dirs (labels optional, one per run) into an Analyzer under
// the canonical convention and returns the report and the plot inputs.
func load(t *testing.T, sloText string, labels []string, dirs ...string) (*analyze.Report, []plots.Input, analyze.SLO) {
	t.Helper()
	slo, err := analyze.ParseSLO(sloText)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := registry.Resolve(dirs, "")
	if err != nil {
		t.Fatal(err)
	}
	an := analyze.NewAnalyzer(analyze.Canonical)
	if err := registry.Import(jobs, labels, ingest.Options{}, an); err != nil {
		t.Fatal(err)
	}
	rep, err := an.Report(analyze.Options{SLO: slo})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []plots.Input
	for _, rr := range rep.Runs {
		in := plots.Input{Report: rr}
		if rr.Requests.Total > 0 {
			if in.Data, err = an.RunData(rr.RunID, rr.Convention.Name); err != nil {
				t.Fatal(err)
			}
		}
		inputs = append(inputs, in)
	}
	return rep, inputs, slo
}

// golden compares got with testdata/golden/name (rewritten with -update),
// naming the first differing line.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/golden/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s", path, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s differs in length: got %d lines, want %d", path, len(gl), len(wl))
}

func figure(t *testing.T, set *plots.Set, name string) *plots.Figure {
	t.Helper()
	for _, f := range set.Figures {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no figure %q", name)
	return nil
}
