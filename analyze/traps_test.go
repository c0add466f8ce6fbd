package analyze

import (
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// warningOf returns the run's warning with code, or fails.
func warningOf(t *testing.T, rr *RunReport, code string) Warning {
	t.Helper()
	for _, w := range rr.Warnings {
		if w.Code == code {
			return w
		}
	}
	t.Fatalf("no %s warning in %+v", code, rr.Warnings)
	return Warning{}
}

func hasWarning(rr *RunReport, code string) bool {
	for _, w := range rr.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}

// contentRequest is a request whose content messages arrive at offsets
// (ms), with usage N = len(offsMs).
func contentRequest(key int64, offsMs ...int64) func() (formats.Request, []formats.Event) {
	return func() (formats.Request, []formats.Event) {
		var evs []ev
		for _, o := range offsMs {
			evs = append(evs, ev{o * ms, formats.KindContent, one()})
		}
		n := int64(len(offsMs))
		return mkRequest(key, key*10_000*ms, evs, &n)
	}
}

func one() *int32 { v := int32(1); return &v }

// TestTrapITLBelowTPOT: a 2-token reply (TTFT 100 ms, one 100 ms gap:
// TPOT 100) and an 11-token reply (ten 10 ms gaps: TPOT 10). TPOT mean
// (100 + 10)/2 = 55 ms; pooled ITL mean (100 + 10·10)/11 = 18.18 ms <
// 0.95 × 55: the explanation is given, as an explanation (not a data
// check). Two replies of equal pace give none.
func TestTrapITLBelowTPOT(t *testing.T) {
	yes := true
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes}
	long := []int64{100}
	for i := int64(1); i <= 10; i++ {
		long = append(long, 100+10*i)
	}
	rr := analyzeRows(t, run, contentRequest(0, 100, 200), contentRequest(1, long...))
	near(t, "TPOT mean", rr.Metrics.Of(TPOT).Mean, 55)
	near(t, "ITL mean", rr.Metrics.Of(ITL).Mean, 200.0/11)
	w := warningOf(t, rr, TrapITLBelowTPOT)
	if w.DataCheck || w.Metric != "itl_ms" || !strings.Contains(w.Message, "18.18 ms is below mean TPOT 55.00 ms") || !strings.Contains(w.Source, "vllm-project/vllm/issues/6531") {
		t.Errorf("warning %+v", w)
	}
	even := analyzeRows(t, run, contentRequest(0, 100, 110, 120), contentRequest(1, 100, 110, 120, 130))
	if hasWarning(even, TrapITLBelowTPOT) {
		t.Errorf("equal pace flagged: %+v", even.Warnings)
	}
}

// fixedCounter re-tokenizes any text to n tokens.
type fixedCounter int

func (fixedCounter) Name() string                      { return "fixed" }
func (f fixedCounter) Count(string, bool) (int, error) { return int(f), nil }

// TestTrapRetokenizedBelowMessages: five content messages (TTFT 100 ms,
// last at 500 ms) whose text re-tokenizes to 3 tokens, no usage. Under
// Canonical (corrects) N is 5, the lower bound: TPOT 400/4 = 100 ms and a
// data-check warning names 3 and 5; without corrections N is 3 and TPOT
// 400/2 = 200 ms, still with the warning.
func TestTrapRetokenizedBelowMessages(t *testing.T) {
	yes := true
	request := func() (formats.Request, []formats.Event) {
		var evs []ev
		for i := int64(0); i < 5; i++ {
			evs = append(evs, ev{(100 + 100*i) * ms, formats.KindContent, nil})
		}
		r, e := mkRequest(0, 0, evs, nil)
		for i := range e {
			s := "w "
			e[i].Text = &s
		}
		r.OutputTokens, r.OutputTokensSource = nil, ""
		return r, e
	}
	for _, enabled := range []bool{true, false} {
		a := NewAnalyzer(Canonical)
		a.SetTokenizer(fixedCounter(3))
		a.SetCorrections(map[string]convention.Fix{}, enabled)
		r, e := request()
		if err := a.Request(&r, e); err != nil {
			t.Fatal(err)
		}
		if err := a.Run(&formats.Run{RunID: "r", Streaming: &yes}); err != nil {
			t.Fatal(err)
		}
		rep, err := a.Report(Options{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		rr := rep.Runs[0]
		wantN, wantTPOT := 5.0, 100.0
		if !enabled {
			wantN, wantTPOT = 3, 200
		}
		near(t, "OSL", rr.Metrics.Of(OSL).Mean, wantN)
		near(t, "TPOT", rr.Metrics.Of(TPOT).Mean, wantTPOT)
		w := warningOf(t, rr, TrapRetokenizedBelowMessages)
		if !w.DataCheck || w.Count != 1 || !strings.Contains(w.Message, "first: 3 tokens for 5 messages") {
			t.Errorf("corrections %v: warning %+v", enabled, w)
		}
	}
}

// TestErrorGroupKey: numbers become N in the grouping key, HTTP status
// codes stay (at the start, after HTTP/status/code/error).
func TestErrorGroupKey(t *testing.T) {
	for in, want := range map[string]string{
		"524: A timeout occurred":               "524: A timeout occurred",
		"HTTP 429 Too Many Requests":            "HTTP 429 Too Many Requests",
		"HTTP/1.1 503 Service Unavailable":      "HTTP/1.1 503 Service Unavailable",
		"Error code: 400 - context length 9000": "Error code: 400 - context length N",
		"status code 502 after 1234 ms":         "status code 502 after N ms",
		"Output too few tokens 102":             "Output too few tokens N",
		"read timed out after 300 s":            "read timed out after N s",
		"request 12345 failed with code=500":    "request N failed with code=500",
		"upstream 999: odd":                     "upstream N: odd",
	} {
		if got := errorGroupKey(in); got != want {
			t.Errorf("errorGroupKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorGroupsReadable: a group of identical messages shows the
// message as written; a group whose numbers vary shows its key.
func TestErrorGroupsReadable(t *testing.T) {
	fail := func(key int64, msg string) func() (formats.Request, []formats.Event) {
		return func() (formats.Request, []formats.Event) {
			return formats.Request{RunID: "r", RequestKey: key, Status: formats.StatusError, ErrorText: msg}, nil
		}
	}
	rr := analyzeRows(t, formats.Run{RunID: "r"}, fail(0, "524: A timeout occurred"), fail(1, "524: A timeout occurred"),
		fail(2, "Output too few tokens 102"), fail(3, "Output too few tokens 59"))
	if len(rr.Errors) != 2 || rr.Errors[0].Message != "524: A timeout occurred" || rr.Errors[0].Count != 2 ||
		rr.Errors[1].Message != "Output too few tokens N" || rr.Errors[1].Count != 2 {
		t.Errorf("errors %+v", rr.Errors)
	}
}

// TestITLPerMessageMean: messages without token counts make each one an
// ITL sample, and the warning gives the mean tokens per message from the
// usage: 3 messages and 3 tokens read "mean 1 token per message", 3 and 6
// "mean 2 tokens per message".
func TestITLPerMessageMean(t *testing.T) {
	yes := true
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes}
	for _, c := range []struct {
		usage int64
		want  string
	}{{3, "(mean 1 token per message)"}, {6, "(mean 2 tokens per message)"}} {
		req := func() (formats.Request, []formats.Event) {
			n := c.usage
			return mkRequest(0, 0, []ev{{100 * ms, formats.KindContent, nil}, {110 * ms, formats.KindContent, nil}, {120 * ms, formats.KindContent, nil}}, &n)
		}
		w := warningOf(t, analyzeRows(t, run, req), "itl_per_message")
		if !strings.HasSuffix(w.Message, c.want) {
			t.Errorf("usage %d: %q, want it to end %q", c.usage, w.Message, c.want)
		}
	}
}
