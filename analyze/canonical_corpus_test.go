package analyze_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// analyzeDir imports a corpus directory and reports it canonically.
func analyzeDir(t *testing.T, dir string) (*analyze.Report, []formats.Run) {
	t.Helper()
	jobs, _, err := registry.Resolve([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	a := analyze.NewAnalyzer(analyze.Canonical)
	col := &formats.Collector{}
	if err := registry.Import(jobs, nil, ingest.Options{}, formats.Tee(a, runsOnly{col})); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools)})
	if err != nil {
		t.Fatal(err)
	}
	return rep, col.Runs
}

type runsOnly struct{ c *formats.Collector }

func (r runsOnly) Request(*formats.Request, []formats.Event) error { return nil }
func (r runsOnly) Run(run *formats.Run) error                      { return r.c.Run(run) }

func reported(run formats.Run, metric, stat string) (float64, bool) {
	for _, s := range run.Reported {
		if s.Metric == metric && s.Stat == stat && s.Value != nil {
			return *s.Value, true
		}
	}
	return 0, false
}

func checkRel(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > 1e-6*math.Abs(want) {
		t.Errorf("%s: canonical %.10g, tool reported %.10g (rel diff %.2g)", what, got, want, math.Abs(got-want)/math.Abs(want))
	}
}

// statsOf maps a tool's stat names to the canonical Summary's fields that
// share their definition (percentiles by the same linear rule, mean, min,
// max; std is left out: the canonical std is the sample one).
func statsOf(s stats.Summary, scale float64) map[string]float64 {
	return map[string]float64{
		"avg": s.Mean * scale, "mean": s.Mean * scale, "min": s.Min * scale, "max": s.Max * scale,
		"p50": s.Value(0.5) * scale, "p90": s.Value(0.9) * scale, "p95": s.Value(0.95) * scale, "p99": s.Value(0.99) * scale,
	}
}

// TestCanonicalReproducesAIPerf: AIPerf's time_to_first_token (first
// content-or-reasoning response) and request_latency (last such response)
// are the canonical TTFT and E2E, over the same requests (valid records =
// status ok), with numpy's linear percentiles.
func TestCanonicalReproducesAIPerf(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/aiperf/*")
	if len(dirs) < 7 {
		t.Fatalf("expected the 7 AIPerf corpus runs, found %d", len(dirs))
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "profile_export.jsonl")); err != nil {
			continue // a multi-run tree (multirun-sweep-qwen3vl30b): its runs are the corpus runs above
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rep, runs := analyzeDir(t, dir)
			if len(rep.Runs) != 1 {
				t.Fatalf("%d runs", len(rep.Runs))
			}
			rr, run := rep.Runs[0], runs[0]
			checked := 0
			for _, m := range []struct {
				tool string
				s    stats.Summary
			}{{"time_to_first_token", rr.Metrics.Of(analyze.TTFT)}, {"request_latency", rr.Metrics.Of(analyze.E2E)}} {
				for stat, got := range statsOf(m.s, 1) {
					want, ok := reported(run, m.tool, stat)
					if !ok {
						continue
					}
					checkRel(t, m.tool+" "+stat, got, want)
					checked++
				}
				if n, ok := reported(run, m.tool, "count"); ok && int(n) != m.s.N {
					t.Errorf("%s count: canonical n %d, tool %v", m.tool, m.s.N, n)
				}
			}
			if rc, ok := reported(run, "request_count", "avg"); ok {
				if int(rc) != rr.Requests.Completed {
					t.Errorf("request_count %v vs completed %d", rc, rr.Requests.Completed)
				}
				if checked != 14 {
					t.Errorf("checked %d statistics, want 14 (avg, min, max, p50, p90, p95, p99 of TTFT and of request latency)", checked)
				}
			} else if rr.Requests.Completed != 0 {
				t.Errorf("no request_count reported but %d completed", rr.Requests.Completed)
			}
			if ec, ok := reported(run, "error_request_count", "avg"); ok && int(ec) != rr.Requests.Failed+rr.Requests.Cancelled {
				t.Errorf("error_request_count %v vs failed+cancelled %d", ec, rr.Requests.Failed+rr.Requests.Cancelled)
			}
		})
	}
}

// TestCanonicalReproducesLLMPerfTTFT: LLMPerf's ttft_s (first non-empty
// content chunk) is the canonical TTFT of a non-reasoning stream; its
// summary covers rows without error_code = status ok, with pandas' linear
// quantiles.
func TestCanonicalReproducesLLMPerfTTFT(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/llmperf/*")
	if len(dirs) < 5 {
		t.Fatalf("expected the 5 LLMPerf corpus runs, found %d", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rep, runs := analyzeDir(t, dir)
			rr, run := rep.Runs[0], runs[0]
			checked := 0
			for stat, got := range statsOf(rr.Metrics.Of(analyze.TTFT), 1e-3) { // ms → s
				want, ok := reported(run, "ttft_s", stat)
				if !ok {
					continue
				}
				checkRel(t, "ttft_s "+stat, got, want)
				checked++
			}
			if checked != 7 { // mean, min, max, p50, p90, p95, p99
				t.Errorf("checked %d TTFT statistics, want 7", checked)
			}
			if n, ok := reported(run, "num_completed_requests", "value"); !ok || int(n) != rr.Requests.Completed {
				t.Errorf("num_completed_requests %v vs completed %d", n, rr.Requests.Completed)
			}
		})
	}
}

func (r runsOnly) Batch(b *formats.Batch) error { return b.EachRow(r.Request) }
