package sglangbench

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// withToolReported returns c with tool_reported among its output-count
// sources (after server usage), as Profile must list it to read the
// output_lens of OpenAI-style backends; c itself when it already does.
func withToolReported(c convention.Convention) (convention.Convention, bool) {
	for _, s := range c.OutputTokens {
		if s == convention.CountToolReported {
			return c, false
		}
	}
	out := []convention.CountSource{}
	for _, s := range c.OutputTokens {
		out = append(out, s)
		if s == convention.CountServerUsage {
			out = append(out, convention.CountToolReported)
		}
	}
	c.OutputTokens = out
	return c, true
}

// TestReproduceOutputDetails recomputes the hand-made --output-details
// fixture: its native run under ProfileNative (token-split ITL from
// the rebuilt multi-token messages), its OpenAI-style run under
// Profile. TTFT (mean, median, std, p99), pooled ITL (mean, median,
// std, p95, p99, max), completed and the token totals are reproduced
// within 1e-6; E2E, TPOT and concurrency need SGLang's per-request latency,
// which --output-details does not save; the retokenized counts need
// SGLang's tokenizer; duration is the tool's own. The summaries were
// computed from the arrays with numpy's rules (testdata/FIXTURES.md).
func TestReproduceOutputDetails(t *testing.T) {
	oai, patched := withToolReported(Profile)
	if patched {
		t.Log("Profile lacks tool_reported among its output-count sources: testing a copy that has it (see the importer's report)")
	}
	a := analyze.NewAnalyzer(ProfileNative, oai)
	if err := ingest.ImportFile(New(), filepath.Join("testdata", "output-details", fixtures["output-details"]), ingest.Options{Label: "od"}, a); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: func(r *formats.Run) convention.Convention {
		if r.Convention == ConventionNative {
			return ProfileNative
		}
		return oai
	}})
	if err != nil {
		t.Fatal(err)
	}
	notReproducible := map[string]string{
		"e2e_latency_ms":                  "latency",
		"tpot_ms":                         "latency",
		"concurrency":                     "latency",
		"duration":                        "get_server_info",
		"total_output_tokens_retokenized": "re-tokenized",
		"total_input_text_tokens":         "text/vision",
		"total_input_vision_tokens":       "text/vision",
	}
	throughput := map[string]bool{"request_throughput": true, "input_throughput": true, "output_throughput": true, "total_throughput": true}
	for ri, want := range []int{
		4 + 6 + 3, // native: ttft 4, itl 6 (max too), completed, 2 token totals
		4 + 5 + 3, // oai: ttft 4, itl 5
	} {
		rr := rep.Runs[ri]
		if rr.Reproduction == nil {
			t.Fatalf("run %s: no reproduction", rr.RunID)
		}
		reproduced, pending := 0, 0
		for _, it := range rr.Reproduction.Items {
			key := it.Metric + "/" + it.Stat
			switch {
			case it.Status == "reproduced" && !throughput[it.Metric]:
				reproduced++
			case it.Status == "reproduced":
			case throughput[it.Metric] && it.Status == "not_reproducible" && strings.Contains(it.Reason, "unknown scalar reported_duration:"):
				pending++
			case it.Status == "not_reproducible" && notReproducible[it.Metric] != "" && strings.Contains(it.Reason, notReproducible[it.Metric]):
			default:
				t.Errorf("%s %s: %s (%s) reported %.12g recomputed %.12g", rr.RunID, key, it.Status, it.Reason, float64(it.Reported), float64(it.Recomputed))
			}
		}
		if reproduced != want {
			t.Errorf("%s: %d reproduced, want %d", rr.RunID, reproduced, want)
		}
		if pending > 0 {
			t.Logf("%s: %d throughput statistics wait for reproduce.go to call reportedDurationScalar", rr.RunID, pending)
		}
		t.Logf("%s (%s): %d of %d reported statistics reproduced, %d not reproducible", rr.RunID, rr.Reproduction.Convention, rr.Reproduction.Reproduced, rr.Reproduction.Total, rr.Reproduction.NotReproducible)
	}
	// Under the OpenAI-style convention (one sample per message) the native
	// run's ITL is not SGLang's: the 3-token message is one 12 ms gap, not
	// three of 4 ms.
	a = analyze.NewAnalyzer(oai)
	if err := ingest.ImportFile(New(), filepath.Join("testdata", "output-details", fixtures["output-details"]), ingest.Options{Label: "od"}, a); err != nil {
		t.Fatal(err)
	}
	rep, _ = a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools)})
	if m := rep.Runs[0].Metrics.Of(analyze.ITL); m.N != 5 || m.Max != 12 {
		t.Errorf("native run under per-message ITL: n %d max %v", m.N, m.Max)
	}
}

// tools are the canonical convention and this tool's profiles.
var tools = convention.NewSet(analyze.Canonical, Tool)
