package plots_test

import (
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
	"github.com/tokentrace/tokentrace/plots"
)

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
	slo, err := slo.ParseSLO(sloText)
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
