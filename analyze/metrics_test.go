package analyze

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/reqtest"
)

const ms = int64(1e6)

// ev is one message of a hand-made request (offset ns, kind, tokens);
// mkRequest builds the request through internal/reqtest.
type ev struct {
	off  int64
	kind string
	tok  *int32
}

func mkRequest(key int64, start int64, events []ev, usage *int64) (formats.Request, []formats.Event) {
	evs := make([]reqtest.Event, len(events))
	for i, e := range events {
		evs[i] = reqtest.Event{Off: e.off, Kind: e.kind, Tok: e.tok}
	}
	return reqtest.Request(key, start, evs, usage)
}

// classic is the brief's request (reqtest.Classic).
var classic = reqtest.Classic

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.IsNaN(want) {
		if !math.IsNaN(got) {
			t.Errorf("%s = %v, want undefined", what, got)
		}
		return
	}
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

func TestClassicExample(t *testing.T) {
	r, evs := classic(0, 1_000_000_000)
	m, itl := ComputeRequest(Canonical, &r, evs, nil, nil)
	near(t, "TTFT", m.TTFTMs, 500)                    // the role-only chunk at 400 ms does not count
	near(t, "E2E", m.E2EMs, 1200)                     // usage and [DONE] do not extend E2E
	near(t, "TPOT", m.TPOTMs, 700.0/99)               // 7.0707… ms
	near(t, "N", m.OutputTokens, 100)                 // server usage
	near(t, "TTST", m.TTSTMs, float64(700*ms/99)/1e6) // second − first token message (whole ns)
	if len(itl) != 99 {
		t.Fatalf("ITL samples %d, want 99", len(itl))
	}
	s := stats.Summarize(itl, nil, stats.Linear, 1)
	near(t, "ITL mean", s.Mean, 700.0/99)
	// E2E ≈ TTFT + TPOT·(N−1), exactly for this request.
	near(t, "identity", m.TTFTMs+m.TPOTMs*(m.OutputTokens-1), m.E2EMs)
	if m.OutputSource != "server_usage" {
		t.Errorf("source %q", m.OutputSource)
	}
	if r.StreamEndOffsetNs == nil || *r.StreamEndOffsetNs != 1202*ms {
		t.Errorf("stream end %v, want the [DONE] at 1202 ms", r.StreamEndOffsetNs)
	}
}

func TestEdgeCases(t *testing.T) {
	t.Run("N=1", func(t *testing.T) {
		r, evs := mkRequest(0, 0, []ev{{300 * ms, formats.KindContent, nil}, {310 * ms, formats.KindDone, nil}}, ingest.Ptr(int64(1)))
		m, itl := ComputeRequest(Canonical, &r, evs, nil, nil)
		near(t, "TTFT", m.TTFTMs, 300)
		near(t, "E2E", m.E2EMs, 300)
		near(t, "TPOT", m.TPOTMs, math.NaN())
		near(t, "TTST", m.TTSTMs, math.NaN())
		if len(itl) != 0 || m.Status != formats.StatusOK {
			t.Fatalf("itl %v status %s", itl, m.Status)
		}
	})
	t.Run("N=0 role and usage only", func(t *testing.T) {
		r, evs := mkRequest(0, 0, []ev{{100 * ms, formats.KindRole, nil}, {120 * ms, formats.KindUsage, nil}, {121 * ms, formats.KindDone, nil}}, ingest.Ptr(int64(0)))
		m, _ := ComputeRequest(Canonical, &r, evs, nil, nil)
		if m.Status != formats.StatusEmpty {
			t.Fatalf("status %s, want empty", m.Status)
		}
		near(t, "TTFT", m.TTFTMs, math.NaN())
		near(t, "TPOT", m.TPOTMs, math.NaN())
	})
	t.Run("multi-token chunks split gaps", func(t *testing.T) {
		three := int32(3)
		r, evs := mkRequest(0, 0, []ev{{100 * ms, formats.KindContent, &three}, {130 * ms, formats.KindContent, &three}}, ingest.Ptr(int64(6)))
		m, itl := ComputeRequest(Canonical, &r, evs, nil, nil)
		if len(itl) != 3 {
			t.Fatalf("a 30 ms gap before a 3-token message is 3 samples, got %v", itl)
		}
		near(t, "ITL sample", itl[0], 10)
		near(t, "TPOT", m.TPOTMs, 30.0/5)
		if !m.TokensPerMessageKnown {
			t.Error("tokens per message were known")
		}
	})
	t.Run("reasoning first: TTFT vs TTFO", func(t *testing.T) {
		r, evs := mkRequest(0, 0, []ev{{50 * ms, formats.KindReasoning, nil}, {80 * ms, formats.KindReasoning, nil}, {200 * ms, formats.KindContent, nil}}, nil)
		m, _ := ComputeRequest(Canonical, &r, evs, nil, nil)
		near(t, "TTFT", m.TTFTMs, 50)
		near(t, "TTFO", m.TTFOMs, 200)
		if !m.HasReasoning {
			t.Error("reasoning not seen")
		}
	})
}

func analyzeRows(t *testing.T, run formats.Run, rows ...func() (formats.Request, []formats.Event)) *RunReport {
	t.Helper()
	rep := analyzeWith(t, Options{Tools: tools}, run, rows...)
	return rep.Runs[0]
}

func analyzeWith(t *testing.T, opt Options, run formats.Run, rows ...func() (formats.Request, []formats.Event)) *Report {
	t.Helper()
	a := NewAnalyzer(Canonical)
	for _, f := range rows {
		r, evs := f()
		if err := a.Request(&r, evs); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Run(&run); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRunReportClassicTwoRequests(t *testing.T) {
	yes := true
	slo := SLO{Text: "ttft<=500ms,tpot<=7.1ms", Constraints: []Constraint{{Metric: TTFT, Limit: 500, Text: "ttft<=500ms"}, {Metric: TPOT, Limit: 7.1, Text: "tpot<=7.1ms"}}}
	rep := analyzeWith(t, Options{Tools: tools, SLO: slo}, formats.Run{RunID: "r", Tool: "x", Streaming: &yes},
		func() (formats.Request, []formats.Event) { return classic(0, 1_000*ms) },
		func() (formats.Request, []formats.Event) { return classic(1, 2_000*ms) },
		func() (formats.Request, []formats.Event) {
			r := formats.Request{RunID: "r", RequestKey: 2, StartNs: ingest.Ptr(2_500 * ms), Status: formats.StatusError, ErrorText: "HTTP 429"}
			return r, nil
		},
	).Runs[0]
	if rep.Requests.Total != 3 || rep.Requests.Completed != 2 || rep.Requests.Failed != 1 {
		t.Fatalf("counts %+v", rep.Requests)
	}
	near(t, "error rate", float64(rep.Requests.ErrorRate), 1.0/3)
	near(t, "TTFT p50", rep.Metrics.Of(TTFT).Value(0.5), 500)
	near(t, "TPOT mean", rep.Metrics.Of(TPOT).Mean, 700.0/99)
	if rep.Metrics.Of(ITL).N != 198 {
		t.Errorf("pooled ITL n = %d, want 198", rep.Metrics.Of(ITL).N)
	}
	// Duration: first start (1.0 s) → last token of the second request
	// (2.0 s + 1.2 s) = 2.2 s; the failed request's start counts only if
	// earlier.
	near(t, "duration", float64(rep.Throughput.DurationS), 2.2)
	near(t, "req/s", float64(rep.Throughput.RequestsPerS), 2/2.2)
	near(t, "out tok/s", float64(rep.Throughput.OutputTokensPerS), 200/2.2)
	// Goodput: both completed requests meet TTFT 500 ms (inclusive) and
	// TPOT 7.07 ≤ 7.1; the failed one is not good: 2 of 3.
	if rep.Goodput.Good != 2 || rep.Goodput.Total != 3 {
		t.Fatalf("goodput %+v", rep.Goodput)
	}
	near(t, "goodput fraction", float64(rep.Goodput.Fraction), 2.0/3)
	near(t, "goodput rate", float64(rep.Goodput.RequestsPerS), 2/2.2)
}

func TestAllRequestsFailed(t *testing.T) {
	yes := true
	rep := analyzeRows(t, formats.Run{RunID: "r", Streaming: &yes},
		func() (formats.Request, []formats.Event) {
			return formats.Request{RunID: "r", Status: formats.StatusError, StartNs: ingest.Ptr(int64(0))}, nil
		},
		func() (formats.Request, []formats.Event) {
			return formats.Request{RunID: "r", RequestKey: 1, Status: formats.StatusError, StartNs: ingest.Ptr(int64(5))}, nil
		},
	)
	if rep.Requests.Completed != 0 || rep.Metrics.Of(TTFT).N != 0 || !math.IsNaN(rep.Metrics.Of(TTFT).Value(0.99)) {
		t.Fatalf("%+v", rep.Metrics.Of(TTFT))
	}
	if !math.IsNaN(float64(rep.Throughput.DurationS)) {
		t.Errorf("duration %v: no completed request, no duration", rep.Throughput.DurationS)
	}
	found := false
	for _, w := range rep.Warnings {
		found = found || w.Code == "no_completed_requests"
	}
	if !found {
		t.Errorf("warnings %+v", rep.Warnings)
	}
	near(t, "error rate", float64(rep.Requests.ErrorRate), 1)
}

func TestNonStreaming(t *testing.T) {
	no := false
	body := func() (formats.Request, []formats.Event) {
		return mkRequest(0, 0, []ev{{2 * 1000 * ms, formats.KindContent, nil}}, ingest.Ptr(int64(135)))
	}
	rep := analyzeRows(t, formats.Run{RunID: "r", Streaming: &no}, body)
	near(t, "TTFT", rep.Metrics.Of(TTFT).Mean, 2000)
	near(t, "E2E", rep.Metrics.Of(E2E).Mean, 2000)
	if rep.Metrics.Of(TPOT).N != 0 || rep.Metrics.Of(ITL).N != 0 || rep.Metrics.Of(TTST).N != 0 {
		t.Fatalf("non-streaming must leave TPOT/ITL/TTST undefined: %+v", rep.Metrics)
	}
	if rep.Requests.TPOTUndefined != 0 {
		t.Errorf("tpot_undefined counts streaming requests only")
	}
	// A TPOT constraint on a non-streaming run is an error naming it.
	a := NewAnalyzer(Canonical)
	r, evs := body()
	_ = a.Request(&r, evs)
	_ = a.Run(&formats.Run{RunID: "r", Streaming: &no})
	slo := SLO{Text: "ttft<=1s,tpot<=20ms", Constraints: []Constraint{{Metric: TTFT, Limit: 1000, Text: "ttft<=1s"}, {Metric: TPOT, Limit: 20, Text: "tpot<=20ms"}}}
	if _, err := a.Report(Options{Tools: tools, SLO: slo}); err == nil || !contains(err.Error(), "tpot<=20ms") {
		t.Fatalf("error %v must name the constraint", err)
	}
}

func TestGoodputTPOTVacuousForOneToken(t *testing.T) {
	yes := true
	slo := SLO{Text: "tpot<=1ms", Constraints: []Constraint{{Metric: TPOT, Limit: 1, Text: "tpot<=1ms"}}}
	rep := analyzeWith(t, Options{Tools: tools, SLO: slo}, formats.Run{RunID: "r", Streaming: &yes},
		func() (formats.Request, []formats.Event) {
			return mkRequest(0, 0, []ev{{300 * ms, formats.KindContent, nil}}, ingest.Ptr(int64(1)))
		},
	).Runs[0]
	if rep.Goodput.Good != 1 || rep.Goodput.TPOTVacuous != 1 || rep.Requests.TPOTUndefined != 1 {
		t.Fatalf("goodput %+v counts %+v", rep.Goodput, rep.Requests)
	}
}

func TestBucketsAndFit(t *testing.T) {
	// E2E = 100 + 10·N exactly: the fit must recover a=100, b=10, R²=1.
	x := []float64{10, 20, 70, 100, 300}
	y := []float64{200, 300, 800, 1100, 3100}
	f := fit(x, y)
	near(t, "intercept", float64(f.InterceptMs), 100)
	near(t, "slope", float64(f.SlopeMsPerToken), 10)
	near(t, "r2", float64(f.R2), 1)
	b := buckets(x, y, DefaultOSLEdges, "osl", convention.PercentileLinear)
	if b[0].N != 2 || b[1].N != 2 || b[2].N != 0 || b[3].N != 1 {
		t.Fatalf("bucket counts %+v", b)
	}
	near(t, "bucket0 p50", b[0].P50, 250)
	if fit([]float64{5, 5}, []float64{1, 2}) != nil {
		t.Error("one distinct x: no fit")
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}

func TestErrorCounts(t *testing.T) {
	code := int64(524)
	reqs := []formats.Request{
		{Status: formats.StatusError, ErrorCode: &code, ErrorText: "<!DOCTYPE html>\n<html><head><title>x.com | 524: A timeout occurred</title>"},
		{Status: formats.StatusError, ErrorType: "TimeoutError", ErrorText: "TimeoutError()"},
		{Status: formats.StatusError, ErrorCode: &code, ErrorText: "<!DOCTYPE html>\n<html><head><title>x.com | 524: A timeout occurred</title>"},
		{Status: formats.StatusOK},
	}
	var ms []RequestMetrics
	for i := range reqs {
		m, _ := ComputeRequest(Canonical, &reqs[i], nil, nil, nil)
		ms = append(ms, m)
	}
	got := errorCounts(ms)
	if len(got) != 2 || got[0].Count != 2 || got[0].Code != "524" || got[0].Message != "HTML page: x.com | 524: A timeout occurred" || got[1].Type != "TimeoutError" {
		t.Fatalf("%+v", got)
	}
}

func TestThroughputUndefinedWithoutCounts(t *testing.T) {
	// Completed requests without an output count: output tokens/s is
	// undefined (null), never 0.
	ms := []RequestMetrics{{Counted: true, OutputTokens: math.NaN(), InputTokens: 10}}
	tp := ComputeThroughput(Canonical, ms, 2)
	if !math.IsNaN(float64(tp.OutputTokensPerS)) || !math.IsNaN(float64(tp.TotalTokensPerS)) || float64(tp.RequestsPerS) != 0.5 {
		t.Fatalf("%+v", tp)
	}
}

// TestITLLeavesOutBrokenStreams: a request whose stream broke after three
// tokens (status error) is not completed, so its two gaps stay out of the
// pooled ITL (CONVENTIONS.md: over the completed requests); the classic
// request's 99 gaps are all there.
func TestITLLeavesOutBrokenStreams(t *testing.T) {
	broken := func() (formats.Request, []formats.Event) {
		r, e := mkRequest(2, 0, []ev{{100 * ms, formats.KindContent, nil}, {110 * ms, formats.KindContent, nil}, {120 * ms, formats.KindContent, nil}}, nil)
		r.Status, r.ErrorText = formats.StatusError, "stream reset"
		return r, e
	}
	rr := analyzeRows(t, formats.Run{RunID: "r"}, func() (formats.Request, []formats.Event) { return classic(1, 0) }, broken)
	if rr.Metrics.Of(ITL).N != 99 || rr.Requests.Failed != 1 {
		t.Errorf("ITL n = %d (failed %d), want 99", rr.Metrics.Of(ITL).N, rr.Requests.Failed)
	}
}

// TestFirstLineBounded: the first line of a 64 MB error text (an HTML page
// or plain text) costs what that of a 1 KB one does: the bytes allocated
// do not grow with the text (it was lowered and split whole: gigabytes).
func TestFirstLineBounded(t *testing.T) {
	alloc := func(s string) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		for range 3 {
			_ = firstLine(s, 120)
		}
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	for _, head := range []string{"upstream error: the model timed out\n", "<html><head><title>524: A timeout occurred</title></head><body>"} {
		small := head + strings.Repeat("x", 1<<10)
		big := head + strings.Repeat("x", 64<<20)
		if got, want := firstLine(big, 120), firstLine(small, 120); got != want {
			t.Errorf("first line %q, want %q", got, want)
		}
		if s, b := alloc(small), alloc(big); b > 2*s+(512<<10) {
			t.Errorf("%.20q: %d bytes allocated for 64 MB, %d for 1 KB", head, b, s)
		}
	}
	if got := firstLine("<html><title>502 Bad Gateway</title>", 120); got != "HTML page: 502 Bad Gateway" {
		t.Errorf("title: %q", got)
	}
}
