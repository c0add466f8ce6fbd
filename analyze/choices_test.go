package analyze

import (
	"math"
	"testing"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// charCounter "tokenizes" one token per byte, plus one for specials, so
// tokenizer counts can be checked by hand.
type charCounter struct{}

func (charCounter) Name() string { return "chars" }
func (charCounter) Count(s string, special bool) (int, error) {
	if special {
		return len(s) + 1, nil
	}
	return len(s), nil
}

// choiceRequest is one hand-made stream (offsets in ms from the start):
//
//	#  kind       ms   read  tokens text
//	0  role       100  0     -
//	1  reasoning  150  1     1      "th"
//	2  content    200  2     1      "A"
//	3  content    260  3     2      "BC"
//	4  content    260  3     1      "D"   (same network read as #3)
//	5  content    300  4     1      "E"
//	6  empty      310  5     -      finish_reason stop
//	7  usage      320  6     -
//	8  done       330  7     -
//
// Server usage: 6 output tokens. The tool's own raw count: 7. max_tokens 16.
func choiceRequest() (formats.Request, []formats.Event) {
	type e struct {
		ms   int64
		kind string
		read int32
		tok  int32
		text string
	}
	rows := []e{{100, formats.KindRole, 0, 0, ""}, {150, formats.KindReasoning, 1, 1, "th"}, {200, formats.KindContent, 2, 1, "A"},
		{260, formats.KindContent, 3, 2, "BC"}, {260, formats.KindContent, 3, 1, "D"}, {300, formats.KindContent, 4, 1, "E"},
		{310, formats.KindEmpty, 5, 0, ""}, {320, formats.KindUsage, 6, 0, ""}, {330, formats.KindDone, 7, 0, ""}}
	evs := make([]formats.Event, len(rows))
	for i, x := range rows {
		ev := formats.Event{RunID: "r", Index: int32(i), ReadIndex: x.read, OffsetNs: x.ms * ms, Kind: x.kind,
			HasChoices: x.kind != formats.KindUsage && x.kind != formats.KindDone}
		if x.tok > 0 {
			ev.Tokens = ingest.Ptr(x.tok)
		}
		switch x.kind {
		case formats.KindContent:
			ev.Text = ingest.Ptr(x.text)
		case formats.KindReasoning:
			ev.ReasoningText = ingest.Ptr(x.text)
		}
		evs[i] = ev
	}
	r := formats.Request{RunID: "r", StartNs: ingest.Ptr(int64(0)), ClockDomain: formats.ClockUnix,
		OutputTokens: ingest.Ptr(int64(6)), OutputTokensSource: formats.SourceServerUsage,
		ReportedOutputTokens: ingest.Ptr(7.0), MaxTokens: ingest.Ptr(int64(16))}
	formats.FillFromEvents(&r, evs)
	return r, evs
}

func with(c convention.Convention, f func(*convention.Convention)) convention.Convention {
	f(&c)
	return c
}

func TestEachChoiceHandComputed(t *testing.T) {
	r, evs := choiceRequest()
	nan := math.NaN()
	cases := []struct {
		name                   string
		conv                   convention.Convention
		ttft, ttst, e2e, n, tp float64
		itl                    []float64
	}{
		// Canonical: responses are token messages 150,200,260,260,300; N=6
		// from usage; TPOT (300−150)/5; ITL splits the 2-token gap.
		{"canonical", Canonical, 150, 50, 300, 6, 30, []float64{50, 30, 30, 0, 40}},
		// responses=content: reasoning no longer starts TTFT.
		{"responses=content", with(Canonical, func(c *convention.Convention) { c.Responses = convention.ResponsesContent }), 200, 60, 300, 6, 100.0 / 5, []float64{30, 30, 0, 40}},
		// responses=choices: the role-only first chunk starts TTFT, the finish
		// chunk ends E2E (vLLM).
		{"responses=choices", with(Canonical, func(c *convention.Convention) { c.Responses = convention.ResponsesChoices }), 100, 50, 310, 6, 210.0 / 5, []float64{50, 50, 30, 30, 0, 40, 10}},
		// response_unit=read (content): #3 and #4 are one response of 3 tokens.
		{"unit=read", with(Canonical, func(c *convention.Convention) {
			c.Responses = convention.ResponsesContent
			c.ResponseUnit = convention.UnitRead
		}), 200, 60, 300, 6, 20, []float64{20, 20, 20, 40}},
		// e2e_end=stream_end: E2E at [DONE]; TPOT still ends at the last response.
		{"e2e=stream_end", with(Canonical, func(c *convention.Convention) { c.E2EEnd = convention.E2EStreamEnd }), 150, 50, 330, 6, 30, []float64{50, 30, 30, 0, 40}},
		// output counts.
		{"count=tool_raw", with(Canonical, func(c *convention.Convention) { c.OutputTokens = []convention.CountSource{convention.CountToolRaw} }), 150, 50, 300, 7, 25, []float64{50, 30, 30, 0, 40}},
		{"count=chunk_count", with(Canonical, func(c *convention.Convention) { c.OutputTokens = []convention.CountSource{convention.CountResponses} }), 150, 50, 300, 5, 150.0 / 4, []float64{50, 30, 30, 0, 40}},
		{"count=sse_messages", with(Canonical, func(c *convention.Convention) { c.OutputTokens = []convention.CountSource{convention.CountSSEMessages} }), 150, 50, 300, 8, 150.0 / 7, []float64{50, 30, 30, 0, 40}},
		{"count=requested", with(Canonical, func(c *convention.Convention) { c.OutputTokens = []convention.CountSource{convention.CountRequested} }), 150, 50, 300, 16, 10, []float64{50, 30, 30, 0, 40}},
		// tokenizer: content+reasoning text "th"+"A"+"BC"+"D"+"E" = 7 chars;
		// content only 5; with special tokens one more.
		{"count=tokenizer", with(Canonical, func(c *convention.Convention) { c.OutputTokens = []convention.CountSource{convention.CountTokenizer} }), 150, 50, 300, 7, 25, []float64{50, 30, 30, 0, 40}},
		{"tokenize content only", with(Canonical, func(c *convention.Convention) {
			c.OutputTokens = []convention.CountSource{convention.CountTokenizer}
			c.TokenizeReasoning = false
		}), 150, 50, 300, 5, 150.0 / 4, []float64{50, 30, 30, 0, 40}},
		{"special tokens", with(Canonical, func(c *convention.Convention) {
			c.OutputTokens = []convention.CountSource{convention.CountTokenizer}
			c.SpecialTokens = true
		}), 150, 50, 300, 8, 150.0 / 7, []float64{50, 30, 30, 0, 40}},
		// TPOT variants: from the request start, divided by N.
		{"tpot_from=start", with(Canonical, func(c *convention.Convention) { c.TPOTFrom = convention.TPOTFromRequestStart }), 150, 50, 300, 6, 300.0 / 5, []float64{50, 30, 30, 0, 40}},
		{"tpot_divisor=n", with(Canonical, func(c *convention.Convention) { c.TPOTDivisor = convention.DivideN }), 150, 50, 300, 6, 25, []float64{50, 30, 30, 0, 40}},
		{"tpot_count=chunks", with(Canonical, func(c *convention.Convention) { c.TPOTCount = []convention.CountSource{convention.CountResponses} }), 150, 50, 300, 6, 150.0 / 4, []float64{50, 30, 30, 0, 40}},
		// ITL rules.
		{"itl=pooled gaps", with(Canonical, func(c *convention.Convention) { c.ITL = convention.ITLPooledGaps }), 150, 50, 300, 6, 30, []float64{50, 60, 0, 40}},
		{"itl=zero gaps in chunk", with(Canonical, func(c *convention.Convention) { c.ITL = convention.ITLTokenZeroGaps }), 150, 50, 300, 6, 30, []float64{50, 60, 0, 0, 40}},
		{"itl=per request", with(Canonical, func(c *convention.Convention) { c.ITL = convention.ITLPerRequestMean }), 150, 50, 300, 6, 30, nil},
	}
	_ = nan
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, itl := ComputeRequest(c.conv, &r, evs, charCounter{}, nil)
			near(t, "TTFT", m.TTFTMs, c.ttft)
			near(t, "TTST", m.TTSTMs, c.ttst)
			near(t, "E2E", m.E2EMs, c.e2e)
			near(t, "N", m.OutputTokens, c.n)
			near(t, "TPOT", m.TPOTMs, c.tp)
			if len(itl) != len(c.itl) {
				t.Fatalf("ITL samples %v, want %v", itl, c.itl)
			}
			for i := range itl {
				near(t, "ITL sample", itl[i], c.itl[i])
			}
			if !m.Counted {
				t.Error("the request is completed under every filter")
			}
		})
	}
	m, _ := ComputeRequest(with(Canonical, func(c *convention.Convention) { c.ITL = convention.ITLPerRequestMean }), &r, evs, nil, nil)
	near(t, "per-request ITL", m.ITLMeanMs, 30) // (300−150)/(6−1)
}

func TestTPOTRounding(t *testing.T) {
	// A 3 ns decode span over N−1 = 2 gaps is 1.5 ns; 5 ns is 2.5 ns.
	for _, c := range []struct {
		span int64
		rule convention.Rounding
		want float64 // ns
	}{{3, convention.RoundWholeNs, 2}, {5, convention.RoundWholeNs, 2}, {3, convention.RoundFloorNs, 1}, {5, convention.RoundFloorNs, 2}, {3, convention.RoundNone, 1.5}} {
		r := formats.Request{RunID: "r", Status: formats.StatusOK, StartNs: ingest.Ptr(int64(0)),
			FirstTokenOffsetNs: ingest.Ptr(int64(1000)), LastTokenOffsetNs: ingest.Ptr(1000 + c.span),
			OutputTokens: ingest.Ptr(int64(3)), OutputTokensSource: formats.SourceServerUsage, TokenMessageCount: 3}
		m, _ := ComputeRequest(with(Canonical, func(x *convention.Convention) { x.TPOTRounding = c.rule }), &r, nil, nil, nil)
		if got := m.TPOTMs * 1e6; math.Abs(got-c.want) > 1e-6 {
			t.Errorf("span %d ns, %s: TPOT %v ns, want %v (half to even / floor)", c.span, c.rule, got, c.want)
		}
	}
}

// TestCompletedFiltersAndRunRules checks which requests count, the three
// duration rules and both throughput numerators on four requests:
//
//	A ok, content       start 0 s     last token +0.3 s   stream end +0.33 s
//	B reasoning only    start 0.5 s   last token +0.9 s   (status ok, no content)
//	C empty             start 0.6 s   stream end +0.1 s
//	D error             start −0.5 s  stream end +2.0 s
func TestCompletedFiltersAndRunRules(t *testing.T) {
	mk := func(status string, start int64, first, firstContent, last, end *int64) formats.Request {
		return formats.Request{RunID: "r", Status: status, StartNs: ingest.Ptr(start), FirstTokenOffsetNs: first, FirstContentOffsetNs: firstContent,
			LastTokenOffsetNs: last, StreamEndOffsetNs: end, OutputTokens: ingest.Ptr(int64(2)), OutputTokensSource: formats.SourceServerUsage, TokenMessageCount: 2}
	}
	p := func(v int64) *int64 { return &v }
	reqs := []formats.Request{
		mk(formats.StatusOK, 0, p(100*ms), p(100*ms), p(300*ms), p(330*ms)),
		mk(formats.StatusOK, 500*ms, p(200*ms), nil, p(900*ms), p(950*ms)),
		mk(formats.StatusEmpty, 600*ms, nil, nil, nil, p(100*ms)),
		mk(formats.StatusError, -500*ms, nil, nil, nil, p(2000*ms)),
	}
	counted := func(c convention.Convention) []bool {
		var out []bool
		for i := range reqs {
			m, _ := ComputeRequest(c, &reqs[i], nil, nil, nil)
			out = append(out, m.Counted)
		}
		return out
	}
	eq := func(a, b []bool) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	if got := counted(Canonical); !eq(got, []bool{true, true, false, false}) {
		t.Errorf("status_ok: %v", got)
	}
	if got := counted(with(Canonical, func(c *convention.Convention) { c.Completed = convention.CompletedWithContent })); !eq(got, []bool{true, false, false, false}) {
		t.Errorf("ok_with_content: %v", got)
	}
	if got := counted(with(Canonical, func(c *convention.Convention) { c.Completed = convention.CompletedNoError })); !eq(got, []bool{true, true, true, false}) {
		t.Errorf("no_error: %v", got)
	}
	metrics := func(c convention.Convention) []RequestMetrics {
		var out []RequestMetrics
		for i := range reqs {
			m, _ := ComputeRequest(c, &reqs[i], nil, nil, nil)
			out = append(out, m)
		}
		return out
	}
	// first start (D, −0.5 s) → last token of a completed request (B: 1.4 s).
	d, _ := Duration(Canonical, metrics(Canonical))
	near(t, "first_start_to_last_response", d, 1.9)
	// completed requests only: A's start (0) → B's last token (1.4 s).
	cs := with(Canonical, func(c *convention.Convention) { c.Duration = convention.DurationCompletedSpan })
	d, _ = Duration(cs, metrics(cs))
	near(t, "completed_span", d, 1.4)
	// every request: D's start (−0.5 s) → D's stream end (1.5 s).
	as := with(Canonical, func(c *convention.Convention) { c.Duration = convention.DurationAllSpan })
	d, _ = Duration(as, metrics(as))
	near(t, "all_requests_span", d, 2.0)
	// throughput over 2 s: completed (2) vs all requests (4).
	tp := ComputeThroughput(Canonical, metrics(Canonical), 2)
	near(t, "completed req/s", float64(tp.RequestsPerS), 1)
	tp = ComputeThroughput(with(Canonical, func(c *convention.Convention) { c.ThroughputRequests = convention.ThroughputAllRequests }), metrics(Canonical), 2)
	near(t, "all req/s", float64(tp.RequestsPerS), 2)
}

func TestStatisticsChoices(t *testing.T) {
	// Weighted nearest rank (guidellm): values 10, 20, 30 with weights 1, 1,
	// 2 → CDF 0.25, 0.5, 1: P50 = 20, P90 = 30; mean 22.5; population
	// variance (156.25 + 6.25 + 2·56.25)/4 = 68.75.
	s := stats.SummarizeWeighted([]float64{30, 10, 20}, []float64{2, 1, 1}, nil)
	near(t, "weighted P50", s.Value(0.5), 20)
	near(t, "weighted P90", s.Value(0.9), 30)
	near(t, "weighted mean", s.Mean, 22.5)
	near(t, "weighted std", s.Std, math.Sqrt(68.75))
	// Unweighted nearest rank: x[⌈n·p⌉−1] of 1…10.
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	near(t, "nearest-rank P90", stats.Percentile(xs, 0.9, stats.WeightedNearestRank), 9)
	near(t, "nearest-rank P95", stats.Percentile(xs, 0.95, stats.WeightedNearestRank), 10)
	// std: sample vs population on 2, 4.
	near(t, "sample std", stats.Summarize([]float64{2, 4}, nil, stats.Linear, 1).Std, math.Sqrt2)
	near(t, "population std", stats.Summarize([]float64{2, 4}, nil, stats.Linear, 0).Std, 1)
}

func TestChoicesEdgeCases(t *testing.T) {
	for _, c := range tools.Profiles() {
		t.Run(c.Name, func(t *testing.T) {
			// N = 1: no TPOT under any profile whose divisor is N − 1.
			r, evs := mkRequest(0, 0, []ev{{100 * ms, formats.KindRole, nil}, {300 * ms, formats.KindContent, nil}, {310 * ms, formats.KindDone, nil}}, ingest.Ptr(int64(1)))
			r.ReportedOutputTokens = ingest.Ptr(1.0)
			m, itl := ComputeRequest(c, &r, evs, nil, nil)
			if c.TPOTDivisor == convention.DivideNMinus1 && !math.IsNaN(m.TPOTMs) {
				t.Errorf("N=1: TPOT %v, want undefined", m.TPOTMs)
			}
			if c.Responses != convention.ResponsesChoices && len(itl) != 0 {
				t.Errorf("N=1: ITL %v, want none", itl)
			}
			// N = 0 (role and [DONE] only): never counted as completed with a TTFT.
			r0, ev0 := mkRequest(1, 0, []ev{{100 * ms, formats.KindRole, nil}, {110 * ms, formats.KindDone, nil}}, ingest.Ptr(int64(0)))
			m0, _ := ComputeRequest(c, &r0, ev0, nil, nil)
			if m0.Status != formats.StatusEmpty || !math.IsNaN(m0.TPOTMs) {
				t.Errorf("N=0: status %s TPOT %v", m0.Status, m0.TPOTMs)
			}
			// A failed request is never in the completed set.
			rf := formats.Request{RunID: "r", Status: formats.StatusError, StartNs: ingest.Ptr(int64(0))}
			if mf, _ := ComputeRequest(c, &rf, nil, nil, nil); mf.Counted {
				t.Error("failed request counted")
			}
		})
	}
}
