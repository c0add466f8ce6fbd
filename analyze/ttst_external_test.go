package analyze_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
)

// TestTTSTExceedsTTFT: the ai-dynamo/dynamo mocker before PR #5681
// signalled each token before sleeping its prefill and decode time, so
// AIPerf measured a TTFT of a few milliseconds and a TTST holding the
// prefill. The trap-mocker-ttst fixture (AIPerf's profile_export.jsonl,
// six requests of 10 tokens) has TTFT 1.8–2.4 ms and TTST
// 136, 264, 520, 264, 136 ms on five of them (ISL 512–2048), 9 ms on the
// sixth (not over 5 × 2.0 ms): 5 of 6 flagged, the first request 0
// (TTFT 2.10 ms, TTST 136.0 ms); the values stay as measured (TTFT mean
// 12.4/6 ms, TTST mean 1329/6 ms). A corpus run against a real server
// (TTST 67 ms after a 149 ms TTFT) is not flagged.
func TestTTSTExceedsTTFT(t *testing.T) {
	rep, _ := analyzeDir(t, "../ingest/aiperf/testdata/trap-mocker-ttst")
	rr := rep.Runs[0]
	var w *analyze.Warning
	for i := range rr.Warnings {
		if rr.Warnings[i].Code == analyze.TrapTTSTExceedsTTFT {
			w = &rr.Warnings[i]
		}
	}
	if w == nil {
		t.Fatalf("no %s warning: %+v", analyze.TrapTTSTExceedsTTFT, rr.Warnings)
	}
	if !w.DataCheck || w.Routine || w.Count != 5 || w.Metric != "ttft_ms" ||
		!strings.Contains(w.Message, "5 of 6 requests have a TTST over 5 × their TTFT (first: request 0, TTFT 2.10 ms, TTST 136.0 ms)") ||
		!strings.Contains(w.Source, "ai-dynamo/dynamo/pull/5681") {
		t.Errorf("warning %+v", *w)
	}
	for _, c := range []struct {
		x    *analyze.Metric
		want float64
	}{{analyze.TTFT, 12.4 / 6}, {analyze.TTST, 1329.0 / 6}} {
		if got := rr.Metrics.Of(c.x).Mean; math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s mean %v, want %v", c.x.Key, got, c.want)
		}
	}
	clean, _ := analyzeDir(t, "../testdata/aiperf/llama31-8b-local-chatbot-c2")
	for _, w := range clean.Runs[0].Warnings {
		if w.Code == analyze.TrapTTSTExceedsTTFT {
			t.Errorf("a real server's run flagged: %+v", w)
		}
	}
}
