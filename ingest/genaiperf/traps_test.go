package genaiperf

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

var trapTools = convention.NewSet(analyze.Canonical, Tool)

// TestTrapCoalescedChunks: a server that coalesces tokens sends messages
// of several tokens; a client pooling one gap per message inflates ITL
// (vllm-project/vllm#27485, PR #28183). The fixture trap-coalesced-usage
// (GenAI-Perf raw export, vLLM chunks with continuous_usage_stats) has
// request 0's content at 120, 200, 220 ms with running completion_tokens
// 1, 4, 5 (so 1, 3, 1 tokens), request 1's at 70, 90 ms (1, 2).
//
// Import: events.tokens [1, 3, 1] and [1, 1]; one request with a
// multi-token message. Canonical (corrections or not: nothing is
// corrected, the counts are data): ITL [80/3 ×3, 20 | 20] → 120/5 = 24,
// and no itl_per_message warning; TPOT [100/4, 20/1] → 22.5. A convention
// pooling one gap per message, as the tools do, gives [80, 20, 20] → 40.
func TestTrapCoalescedChunks(t *testing.T) {
	dir := filepath.Join("testdata", "trap-coalesced-usage")
	res := importCase(t, dir, ingest.Options{})
	ch := traptest.Check(t, &res.Runs[0], TrapCoalescedChunks)
	if ch.Requests != 1 || ch.Corrected || ch.Field != "usage.completion_tokens" ||
		ch.Detail != "experiment 0, request 0: 1 of 3 content messages carried more than one token (up to 3); 1 multi-token messages in all (per-chunk usage: continuous_usage_stats)" {
		t.Errorf("check %+v", ch)
	}
	var toks []int32
	for _, e := range res.Events {
		if e.Tokens != nil {
			toks = append(toks, *e.Tokens)
		}
	}
	if len(toks) != 5 || toks[0] != 1 || toks[1] != 3 || toks[2] != 1 || toks[3] != 1 || toks[4] != 1 {
		t.Errorf("tokens %v", toks)
	}

	path := filepath.Join(dir, "profile_export.json")
	for _, corrections := range []bool{true, false} {
		rr := traptest.Report(t, New(), path, trapTools, analyze.Canonical, corrections)
		traptest.WantMean(t, rr, analyze.ITL, 24)
		traptest.WantMean(t, rr, analyze.TPOT, 22.5)
		traptest.NoWarning(t, rr, "itl_per_message")
		if w := traptest.Warning(t, rr, TrapCoalescedChunks); w.Count != 1 || !strings.Contains(w.Source, "vllm/issues/27485") {
			t.Errorf("warning %+v", w)
		}
	}
	perMessage := analyze.Canonical
	perMessage.Name, perMessage.ITL = "per-message", convention.ITLPooledGaps
	rr := traptest.Report(t, New(), path, trapTools, perMessage, true)
	traptest.WantMean(t, rr, analyze.ITL, 40)
}

// TestTrapsNotOnCleanData: no other GenAI-Perf case has per-chunk usage:
// no check fires, and no event gets a count from a usage that is not a
// per-chunk one (the last chunk's include_usage, a non-streaming body's).
func TestTrapsNotOnCleanData(t *testing.T) {
	for _, c := range cases(t) {
		if strings.HasPrefix(c.name, "trap-") || strings.HasPrefix(c.name, "summary-only") {
			continue
		}
		res := importCase(t, c.dir, ingest.Options{})
		for _, r := range res.Runs {
			if len(r.Checks) > 0 {
				t.Errorf("%s: checks %+v", c.name, r.Checks)
			}
		}
		for _, e := range res.Events {
			if e.Tokens != nil {
				t.Errorf("%s: request %d event %d has tokens %d", c.name, e.RequestKey, e.Index, *e.Tokens)
				break
			}
		}
	}
}
