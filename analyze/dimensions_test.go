package analyze

import (
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TestCacheReport, hand-computed: inputs 1000, 1000, 500 with 0, 950 and
// 100 cached tokens (a miss, a hit at 95% ≥ 90%, a partial), one request
// without usage details (unknown, not a miss) and one claiming 600 cached
// of 500 (cached_exceeds_input: left out). Hit fraction = (0 + 950 +
// 100) / 2500 = 0.42.
func TestCacheReport(t *testing.T) {
	yes := true
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes}
	mk := func(key int64, in, cached *int64) func() (formats.Request, []formats.Event) {
		return func() (formats.Request, []formats.Event) {
			r, e := classic(key, key*10_000*ms)
			r.InputTokens, r.InputTokensSource, r.CachedInputTokens = in, formats.SourceServerUsage, cached
			return r, e
		}
	}
	p := ingest.Ptr[int64]
	rr := analyzeRows(t, run, mk(0, p(1000), p(0)), mk(1, p(1000), p(950)), mk(2, p(500), p(100)), mk(3, p(800), nil), mk(4, p(500), p(600)))
	c := rr.Cache
	if c == nil {
		t.Fatal("no cache block")
	}
	if c.CachedInputTokens != 1050 || c.InputTokens != 2500 || c.Requests != 3 || c.Unknown != 1 || c.OverInput != 1 {
		t.Errorf("cache %+v", *c)
	}
	near(t, "hit fraction", float64(c.HitFraction), 0.42)
	got := map[string]int{}
	for _, b := range rr.TTFTByCache {
		got[b.Bucket] = b.N
		near(t, b.Bucket+" TTFT P50", float64(b.P50), 500)
	}
	if got["miss"] != 1 || got["hit"] != 1 || got["partial"] != 1 {
		t.Errorf("buckets %v", got)
	}
	found := false
	for _, w := range rr.Warnings {
		if w.Code == TrapCachedExceedsInput && w.Count == 1 && w.DataCheck {
			found = true
		}
	}
	if !found {
		t.Errorf("no %s warning: %+v", TrapCachedExceedsInput, rr.Warnings)
	}
	// no request with a cached count: no block (not a 0% hit rate)
	if rr := analyzeRows(t, run, mk(0, p(1000), nil)); rr.Cache != nil || rr.TTFTByCache != nil {
		t.Errorf("cache block without cached counts: %+v", rr.Cache)
	}
}

// TestSessionsReport: two sessions of three turns 2 s apart (classic
// requests: the client is done at the [DONE] 1202 ms after the start); the
// second's last turn fails after 1200 ms, so that session fails. Spans
// 2·2000 + 1202 = 5202 and 5200 ms: P50 5201. TTFT by turn: 500 ms at turns 0 and 1 (two
// requests each), turn 2 has one completed request.
func TestSessionsReport(t *testing.T) {
	yes := true
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes}
	var rows []func() (formats.Request, []formats.Event)
	for s := range 2 {
		for turn := range 3 {
			key := int64(3*s + turn)
			start := int64(s)*60_000*ms + int64(turn)*2_000*ms
			rows = append(rows, func() (formats.Request, []formats.Event) {
				r, e := classic(key, start)
				if s == 1 && turn == 2 {
					r = formats.Request{RunID: "r", RequestKey: key, StartNs: ingest.Ptr(start), Status: formats.StatusError, ErrorText: "HTTP 500",
						StreamEndOffsetNs: ingest.Ptr(1200 * ms)}
					e = nil
				}
				r.SessionID, r.TurnIndex = []string{"a", "b"}[s], ingest.Ptr(int64(turn))
				return r, e
			})
		}
	}
	rr := analyzeRows(t, run, rows...)
	se := rr.Sessions
	if se == nil {
		t.Fatal("no sessions block")
	}
	if se.Count != 2 || se.Completed != 1 || se.Failed != 1 || se.Duration.N != 2 {
		t.Errorf("sessions %+v", *se)
	}
	near(t, "turns mean", float64(se.TurnsMean), 3)
	near(t, "span P50", float64(se.Duration.P50), 5201)
	if len(rr.TTFTByTurn) != 3 || rr.TTFTByTurn[0].N != 2 || rr.TTFTByTurn[2].N != 1 {
		t.Fatalf("ttft by turn %+v", rr.TTFTByTurn)
	}
	near(t, "turn 0 TTFT P50", float64(rr.TTFTByTurn[0].P50), 500)
	// one request per session: no block
	single := analyzeRows(t, run, func() (formats.Request, []formats.Event) {
		r, e := classic(0, 0)
		r.SessionID = "only"
		return r, e
	})
	if single.Sessions != nil || single.TTFTByTurn != nil {
		t.Errorf("sessions block for single-turn sessions: %+v", single.Sessions)
	}
}

// TestSpecDecodeReport, hand-computed: requests with (steps, drafted,
// accepted) = (40, 120, 59) and (10, 30, 10), and one without counts:
// acceptance length 1 + 69/50 = 2.38 tokens per step, draft acceptance
// 69/150 = 46%; the first request's own acceptance length is 1 + 59/40.
func TestSpecDecodeReport(t *testing.T) {
	yes := true
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes}
	p := ingest.Ptr[int64]
	mk := func(key int64, steps, draft, acc *int64) func() (formats.Request, []formats.Event) {
		return func() (formats.Request, []formats.Event) {
			r, e := classic(key, key*10_000*ms)
			r.SpecSteps, r.DraftTokens, r.AcceptedTokens = steps, draft, acc
			return r, e
		}
	}
	rr := analyzeRows(t, run, mk(0, p(40), p(120), p(59)), mk(1, p(10), p(30), p(10)), mk(2, nil, nil, nil))
	sd := rr.SpecDecode
	if sd == nil || sd.Requests != 2 || sd.Steps != 50 || sd.AcceptedTokens != 69 || sd.DraftTokens != 150 {
		t.Fatalf("spec decode %+v", sd)
	}
	near(t, "acceptance length", float64(sd.AcceptanceLengthMean), 2.38)
	near(t, "draft acceptance", float64(sd.DraftAcceptanceRate), 0.46)
	r, e := mk(0, p(40), p(120), p(59))()
	m, _ := ComputeRequest(Canonical, &r, e, nil, nil)
	near(t, "per-request acceptance length", AcceptanceLength.Value(&m, Deadlines{}), 1+59.0/40)
	if rr := analyzeRows(t, run, mk(0, nil, nil, nil)); rr.SpecDecode != nil {
		t.Errorf("spec_decode block without counts: %+v", rr.SpecDecode)
	}
}
