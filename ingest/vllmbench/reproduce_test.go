package vllmbench

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
// sources (after server usage), as Profile must list it to read
// vLLM's output_lens; c itself when it already does.
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

// reportUnder imports path and reports its runs under c.
func reportUnder(t *testing.T, path string, c convention.Convention) *analyze.Report {
	t.Helper()
	a := analyze.NewAnalyzer(c)
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "fx"}, a); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: func(*formats.Run) convention.Convention { return c }})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// pendingDuration reports whether a throughput item is waiting for
// reproduce.go to call reportedDurationScalar (see the report that came
// with this importer).
func pendingDuration(it analyze.ReproducedStat) bool {
	return it.Status == "not_reproducible" && strings.Contains(it.Reason, "unknown scalar reported_duration:")
}

// TestReproduceDetailedFixture recomputes the hand-made --save-detailed
// fixture under vLLM's convention and checks every statistic of its
// summary: all latency statistics (mean, median, std, p50, p90, p99, p99.9
// of TTFT, TPOT, pooled ITL and E2EL; p99 and p99.9 in the older object),
// the counts and token totals are reproduced within 1e-6; the rest are not
// reproducible, each for its stated reason. The summaries were computed
// from the arrays with numpy's rules (testdata/FIXTURES.md).
func TestReproduceDetailedFixture(t *testing.T) {
	path := filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"])
	conv, patched := withToolReported(Profile)
	if patched {
		t.Log("Profile lacks tool_reported among its output-count sources: testing a copy that has it (see the importer's report)")
	}
	rep := reportUnder(t, path, conv)
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(rep.Runs))
	}
	notReproducible := map[string]string{
		"duration":                "dispatch loop",
		"request_goodput":         "goodput constraints",
		"max_output_tokens_per_s": "1-s bins",
		"max_concurrent_requests": "sweep-line",
		"rtfx":                    "audio",
	}
	throughput := map[string]bool{"request_throughput": true, "output_throughput": true, "total_token_throughput": true}
	for ri, want := range []struct{ reproduced, latency int }{
		// object 1: 4 metrics × 7 statistics, the client queue and the
		// queue-inclusive E2EL × 7 (from start_times − queue_times: the
		// intended starts), completed, failed, 2 token totals (+3
		// throughputs once wired)
		{6*7 + 4, 42},
		// object 2: 3 metrics × 5 statistics, completed, 2 token totals (+3 throughputs)
		{3*5 + 3, 15},
	} {
		rr := rep.Runs[ri]
		rp := rr.Reproduction
		if rp == nil {
			t.Fatalf("run %s: no reproduction", rr.RunID)
		}
		reproduced, latency, pending := 0, 0, 0
		for _, it := range rp.Items {
			key := it.Metric + "/" + it.Stat
			switch {
			case it.Status == "reproduced":
				reproduced++
				if strings.HasSuffix(it.Metric, "_ms") {
					latency++
				}
				if throughput[it.Metric] {
					reproduced-- // counted apart: they need the wiring
				}
			case throughput[it.Metric] && pendingDuration(it):
				pending++
			case it.Status == "not_reproducible" && notReproducible[it.Metric] != "" && strings.Contains(it.Reason, notReproducible[it.Metric]):
			default:
				t.Errorf("%s %s: %s (%s) reported %.12g recomputed %.12g", rr.RunID, key, it.Status, it.Reason, float64(it.Reported), float64(it.Recomputed))
			}
		}
		if reproduced != want.reproduced || latency != want.latency {
			t.Errorf("%s: %d reproduced (%d latency statistics), want %d (%d)", rr.RunID, reproduced, latency, want.reproduced, want.latency)
		}
		if pending > 0 {
			t.Logf("%s: %d throughput statistics wait for reproduce.go to call reportedDurationScalar", rr.RunID, pending)
		}
		t.Logf("%s: %d of %d reported statistics reproduced, %d not reproducible", rr.RunID, rp.Reproduced, rp.Total, rp.NotReproducible)
	}
}

// TestReproduceProfileGap checks what the unpatched vLLM profile says of the
// statistics that need output_lens while it does not list tool_reported:
// not reproducible, with the reason, instead of a misleading 0.
func TestReproduceProfileGap(t *testing.T) {
	if _, patched := withToolReported(Profile); !patched {
		t.Skip("Profile reads tool_reported counts")
	}
	rep := reportUnder(t, filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"]), Profile)
	for _, it := range rep.Runs[0].Reproduction.Items {
		switch it.Metric {
		case "tpot_ms", "total_output_tokens", "output_throughput", "total_token_throughput":
			if it.Status != "not_reproducible" || !strings.Contains(it.Reason, "tool_reported") {
				t.Errorf("%s/%s: %s %q", it.Metric, it.Stat, it.Status, it.Reason)
			}
		case "ttft_ms", "itl_ms", "e2el_ms", "completed", "total_input_tokens":
			if it.Status != "reproduced" {
				t.Errorf("%s/%s: %s %q", it.Metric, it.Stat, it.Status, it.Reason)
			}
		}
	}
}

// TestCorpusReproduction: the corpus files are summary only, so no
// latency statistic can be recomputed (no samples), and none is reported
// as reproduced or as differing. (Run-level counts are compared with the
// zero requests of a summary-only run by reproduce.go; see the report.)
func TestCorpusReproduction(t *testing.T) {
	for name, file := range corpusFiles {
		rep := reportUnder(t, filepath.Join(corpus, name, file), Profile)
		for _, rr := range rep.Runs {
			if rr.Reproduction == nil || rr.Reproduction.Total == 0 {
				t.Errorf("%s: no reproduction section", name)
				continue
			}
			for _, it := range rr.Reproduction.Items {
				if strings.HasSuffix(it.Metric, "_ms") && it.Status != "not_reproducible" {
					t.Errorf("%s %s/%s: %s from a summary-only file", name, it.Metric, it.Stat, it.Status)
				}
			}
		}
	}
}

// tools are the canonical convention and this tool's profiles, with the
// shared goodput check this importer records.
var tools = convention.NewSet(analyze.Canonical, Tool).WithTraps(ingest.GoodputTraps...)
