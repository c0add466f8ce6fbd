package llmperf

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

var tools = convention.NewSet(analyze.Canonical, Tool)

// TestTrapBOSInCount: LLMPerf counts the generated text with a Llama-2
// tokenizer that prepends BOS (ray-project/llmperf#35). The fixture
// (testdata/make_trap_bos.py, LLMPerf 2024-04) has three replies of 10,
// 5 and 20 generated tokens, number_output_tokens 11, 6, 21; first
// content at 0.2, 0.3, 0.1 s, last at 1.1, 0.84, 2.1 s.
//
// Import: every row is corrected (output_tokens 10, 5, 20; the raw count
// stays in reported_output_tokens). Canonical: OSL mean 35/3; TPOT =
// (last − first)/(N − 1) = [900/9, 540/4, 2000/19] ms → mean
// (100 + 135 + 105.263…)/3. --no-corrections: N = 11, 6, 21: OSL 38/3,
// TPOT [90, 108, 100] → mean 298/3. Under LLMPerf's own convention its
// inter_token_latency_s (t_last/N_tok: [100, 140, 100] ms, mean 113.33)
// and number_output_tokens (mean 12.67), BOS included, are reproduced.
func TestTrapBOSInCount(t *testing.T) {
	path := filepath.Join("testdata", "trap-bos", "individual_responses.json")
	c, _ := importFile(t, path, "fx")
	ch := traptest.Check(t, &c.Runs[0], TrapBOSInCount)
	if ch.Requests != 3 || !ch.Corrected || ch.Field != "number_output_tokens" || ch.Detail != "row 0: number_output_tokens 11 → output_tokens 10" {
		t.Errorf("check %+v", ch)
	}
	for i, want := range []int64{10, 5, 20} {
		r := c.Requests[i]
		if r.Corrections != TrapBOSInCount || *r.OutputTokens != want || *r.ReportedOutputTokens != float64(want+1) {
			t.Errorf("row %d: corrections %q, output %d, reported %v", i, r.Corrections, *r.OutputTokens, *r.ReportedOutputTokens)
		}
	}

	rr := traptest.Report(t, New(), path, tools, analyze.Canonical, true)
	traptest.WantMean(t, rr, analyze.OSL, 35.0/3)
	traptest.WantMean(t, rr, analyze.TPOT, (100+135+2000.0/19)/3)
	traptest.WantMean(t, rr, analyze.E2E, (1100+840+2100)/3.0)
	w := traptest.Warning(t, rr, TrapBOSInCount)
	if !w.DataCheck || !w.Routine || w.Count != 3 || !strings.Contains(w.Message, "corrected in 3 request(s)") || !strings.Contains(w.Source, "llmperf/issues/35") {
		t.Errorf("warning %+v", w)
	}

	raw := traptest.Report(t, New(), path, tools, analyze.Canonical, false)
	traptest.WantMean(t, raw, analyze.OSL, 38.0/3)
	traptest.WantMean(t, raw, analyze.TPOT, 298.0/3)
	if w := traptest.Warning(t, raw, TrapBOSInCount); !strings.Contains(w.Message, "not corrected") {
		t.Errorf("--no-corrections warning %+v", w)
	}

	own := traptest.Report(t, New(), path, tools, Profile2024Apr, true)
	traptest.Reproduction(t, own, TrapBOSInCount, "inter_token_latency_s mean", "inter_token_latency_s p99", "number_output_tokens mean",
		"number_output_tokens p50", "request_output_throughput_token_per_s mean")
}

// TestTrapsNotOnCleanData: the only LLMPerf check is the BOS count, which
// every successful row of every LLMPerf file has; rows without a count
// (failed rows) are not marked.
func TestTrapsNotOnCleanData(t *testing.T) {
	for _, name := range corpusCases(t) {
		c, _ := importFile(t, filepath.Join(corpus, name, "individual_responses.json"), name)
		for _, ch := range c.Runs[0].Checks {
			if ch.Code != TrapBOSInCount {
				t.Errorf("%s: check %+v", name, ch)
			}
		}
		marked := int64(0)
		for _, r := range c.Requests {
			if r.Corrections != "" {
				marked++
				if r.Status == formats.StatusError {
					t.Errorf("%s: failed row %d marked", name, r.RequestKey)
				}
			}
		}
		if len(c.Runs[0].Checks) != 1 || c.Runs[0].Checks[0].Requests != marked {
			t.Errorf("%s: checks %+v for %d marked rows", name, c.Runs[0].Checks, marked)
		}
	}
}
