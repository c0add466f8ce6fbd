package analyze

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/internal/reqtest"
)

// t0 is 2023-11-14T22:13:20Z, a multiple of 10 s since the Unix epoch.
const t0 = int64(1_700_000_000) * 1e9

const sec = int64(1e9)

// forensicRun is a small hand-made run (times from t0, in s):
//
//	r0 start 1,  tokens at +0.2 +0.3 +0.4   (TTFT 200 ms, gaps 100, 100)
//	r1 start 2,  tokens at +0.5 +0.6        (TTFT 500, gap 100)
//	r2 start 12, tokens at +0.1 +1.1        (TTFT 100, gap 1000)
//	r3 start 13, error 503, no end
//	r4 start 14, error 503, no end
//	r5 start 25, tokens at +0.3 +0.4        (TTFT 300, gap 100)
//
// Open loop: r3 and r4 are counted in flight as long as the longest
// recorded request (r2, 1.1 s).
func forensicRun(t *testing.T, opt Options) *RunReport {
	t.Helper()
	a := NewAnalyzer(Canonical)
	tok := func(key, start int64, offs ...int64) {
		var evs []reqtest.Event
		for _, o := range offs {
			evs = append(evs, reqtest.Event{Off: o * reqtest.MS, Kind: formats.KindContent})
		}
		r, ev := reqtest.Request(key, t0+start, evs, nil)
		if err := a.Request(&r, ev); err != nil {
			t.Fatal(err)
		}
	}
	fail := func(key, start int64) {
		st := t0 + start
		code := int64(503)
		r := formats.Request{RunID: "r", RequestKey: key, StartNs: &st, ClockDomain: formats.ClockUnix, Status: formats.StatusError,
			ErrorCode: &code, ErrorText: "Service Unavailable"}
		if err := a.Request(&r, nil); err != nil {
			t.Fatal(err)
		}
	}
	tok(0, 1*sec, 200, 300, 400)
	tok(1, 2*sec, 500, 600)
	tok(2, 12*sec, 100, 1100)
	fail(3, 13*sec)
	fail(4, 14*sec)
	tok(5, 25*sec, 300, 400)
	stream := true
	if err := a.Run(&formats.Run{RunID: "r", ClockDomain: formats.ClockUnix, Streaming: &stream}); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Runs[0]
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestWindowsHandMade: 10 s windows aligned on the Unix clock. Window 0
// [0, 10): r0, r1; TTFT [200, 500] → P50 350 (linear), P90 and P99 null
// (fewer than 10 and 100), max 500; ITL gaps 100, 100, 100 (P99 null);
// the run starts at 1 s, so the window covers 9 s of it: output tokens
// 3 + 2 over 9 s = 0.556 tok/s; in flight 1 on [1, 1.4) and [2, 2.6):
// mean 1/9, max 1. Window 1 [10, 20): r2, r3, r4 → 1 completed,
// 2 failed; TTFT [100] → P50 null; in flight 1 on [12,13) [13.1,14)
// [14.1,15.1), 2 on [13,13.1) [14,14.1) → (1 + 0.9 + 1 + 0.2 + 0.2)/10 =
// 0.33, max 2; goodput under ttft<=250ms: r2 good, 1 of 3. Window 2: r5,
// the last end at 25.4 s: it covers 5.4 s.
func TestWindowsHandMade(t *testing.T) {
	slo := SLO{Text: "ttft<=250ms", Constraints: []Constraint{{Metric: TTFT, Limit: 250, Text: "ttft<=250ms"}}}
	rr := forensicRun(t, Options{WindowNs: 10 * sec, SLO: slo})
	ws := rr.Windows
	if ws == nil || len(ws.Items) != 3 || ws.By != "start" || ws.WidthS != 10 {
		t.Fatalf("windows %+v", ws)
	}
	w0, w1, w2 := ws.Items[0], ws.Items[1], ws.Items[2]
	if w0.StartNs != t0 || w0.Start != "2023-11-14T22:13:20.000Z" || w0.OffsetS != -1 || w2.StartNs != t0+20*sec {
		t.Errorf("edges %d %q %v, %d", w0.StartNs, w0.Start, w0.OffsetS, w2.StartNs)
	}
	if w0.Started != 2 || w0.Completed != 2 || w0.TTFT.N != 2 || w0.TTFT.P50 != 350 || !math.IsNaN(float64(w0.TTFT.P90)) || w0.TTFT.Max != 500 || !w0.Few {
		t.Errorf("window 0 %+v", w0)
	}
	if w0.ITLN != 3 || !math.IsNaN(float64(w0.ITLP99Ms)) || w0.CoveredS != 9 || !closeTo(float64(w0.OutputTokensPerS), 5.0/9) || !closeTo(float64(w0.InFlightMean), 1.0/9) || w0.InFlightMax != 1 {
		t.Errorf("window 0 itl %d %v, tok/s %v, in flight %v/%d", w0.ITLN, w0.ITLP99Ms, w0.OutputTokensPerS, w0.InFlightMean, w0.InFlightMax)
	}
	if w1.Started != 3 || w1.Completed != 1 || w1.Failed != 2 || w1.TTFT.N != 1 || !math.IsNaN(float64(w1.TTFT.P50)) || w1.TTFT.Max != 100 ||
		!closeTo(float64(w1.InFlightMean), 0.33) || w1.InFlightMax != 2 {
		t.Errorf("window 1 %+v", w1)
	}
	if w1.Goodput == nil || w1.Goodput.Good != 1 || !closeTo(float64(w1.Goodput.Fraction), 1.0/3) || !closeTo(float64(w1.Goodput.RateS), 0.1) {
		t.Errorf("window 1 goodput %+v", w1.Goodput)
	}
	if w2.Started != 1 || w2.TTFT.Max != 300 || !closeTo(float64(w2.CoveredS), 5.4) || w1.CoveredS != 10 {
		t.Errorf("window 2 %+v", w2)
	}
	// by end: r0 ends 1.4, r1 2.6, r2 13.1, r3 14.1 (bound), r4 15.1, r5 25.4
	rr = forensicRun(t, Options{WindowNs: 10 * sec, Select: Selection{ByEnd: true}})
	if got := []int{rr.Windows.Items[0].Started, rr.Windows.Items[1].Started, rr.Windows.Items[2].Started}; !slices.Equal(got, []int{2, 3, 1}) || rr.Windows.By != "end" {
		t.Errorf("by end %v", got)
	}
	// a width that makes more than MaxWindows windows is an error
	a := NewAnalyzer(Canonical)
	for k := int64(0); k < 2; k++ {
		r, ev := reqtest.Request(k, t0+k*sec, []reqtest.Event{{Off: 100 * reqtest.MS, Kind: formats.KindContent}}, nil)
		a.Request(&r, ev)
	}
	a.Run(&formats.Run{RunID: "r", ClockDomain: formats.ClockUnix})
	if _, err := a.Report(Options{WindowNs: 1000}); err == nil || !strings.Contains(err.Error(), "give a wider window") {
		t.Errorf("1 µs windows: %v", err)
	}
}

// TestFailuresHandMade: r3 and r4 failed back to back (no completed
// request started between them): one burst of 2 from +13 s to +14 s; each
// waited an unknown time, bounded by the longest recorded request (1.1 s);
// in flight at their start 2 (r2 until 13.1, then r3 until 14.1).
func TestFailuresHandMade(t *testing.T) {
	rr := forensicRun(t, Options{Top: 2})
	f := rr.Failures
	if f == nil || len(f.Requests) != 2 || len(f.Bursts) != 1 {
		t.Fatalf("failures %+v", f)
	}
	b := f.Bursts[0]
	if b.Count != 2 || b.FromNs != t0+13*sec || b.ToNs != t0+14*sec || b.From != "2023-11-14T22:13:33.000Z" || b.FromS != 12 || b.Kind != "error 503: Service Unavailable" || !slices.Equal(b.Keys, []int64{3, 4}) {
		t.Errorf("burst %+v", b)
	}
	r3 := f.Requests[0]
	if r3.Key != 3 || r3.Code != "503" || !math.IsNaN(float64(r3.DurationMs)) || r3.HeldBoundMs != 1100 || r3.HeldBoundRule != formats.EndLongestRequest || r3.InFlightAtStart != 2 {
		t.Errorf("r3 %+v", r3)
	}
	if in := rr.InFlight; in.Max != 2 || in.UnknownEnd != 2 || in.Bounds[formats.EndLongestRequest] != 2 || in.Concurrency != 0 {
		t.Errorf("in flight %+v", in)
	}
	// the slowest by TTFT: r1 (500), r5 (300); by E2E: r2 (1100), r1 (600)
	s := rr.Slowest
	if len(s.ByTTFT) != 2 || s.ByTTFT[0].Key != 1 || s.ByTTFT[1].Key != 5 || s.ByE2E[0].Key != 2 || s.ByE2E[0].E2EMs != 1100 || s.ByE2E[1].Key != 1 {
		t.Errorf("slowest %+v", s)
	}
	// with a timeout of 0.5 s the failures are held 0.5 s
	rr = forensicRun(t, Options{TimeoutNs: sec / 2})
	if r := rr.Failures.Requests[1]; r.HeldBoundMs != 500 || r.HeldBoundRule != formats.EndTimeout || r.InFlightAtStart != 1 {
		t.Errorf("timeout: %+v", r)
	}
}

// TestSelectionHandMade: --since +11s (from the first start, t0+1 s:
// t0+12 s on) keeps r2…r5; --until at t0+14 s on the wall clock leaves r4
// and r5 out; --trim 1.5s,5s keeps starts in [t0+2.5, t0+20.4) (the last
// recorded time is r5's end, 25.4).
func TestSelectionHandMade(t *testing.T) {
	since, _ := ParseTimeRef("+11s")
	until, _ := ParseTimeRef("2023-11-14T22:13:34Z")
	rr := forensicRun(t, Options{Select: Selection{Since: since, Until: until}})
	s := rr.Selection
	if s == nil || s.Kept != 2 || rr.Requests.Total != 2 || *s.FromNs != t0+12*sec || *s.ToNs != t0+14*sec || s.FromS != 11 || s.To != "2023-11-14T22:13:34.000Z" {
		t.Fatalf("selection %+v", s)
	}
	if len(s.LeftOut) != 2 || s.LeftOut[0].Reason != "before_since" || !slices.Equal(s.LeftOut[0].Keys, []int64{0, 1}) ||
		s.LeftOut[1].Reason != "after_until" || !slices.Equal(s.LeftOut[1].Keys, []int64{4, 5}) {
		t.Errorf("left out %+v", s.LeftOut)
	}
	// the failures list covers the selection; in flight the whole run
	if len(rr.Failures.Requests) != 1 || rr.InFlight.Max != 2 {
		t.Errorf("failures %d, in flight %d", len(rr.Failures.Requests), rr.InFlight.Max)
	}
	trim, _ := ParseTrim("1.5s,5s")
	rr = forensicRun(t, Options{Select: Selection{Trim: trim}})
	s = rr.Selection
	if s.Kept != 3 || s.Trim == nil || s.Trim.Mode != "manual" || s.Trim.HeadS != 1.5 || !closeTo(float64(s.Trim.TailS), 5) ||
		s.LeftOut[0].Reason != "warm_up" || s.LeftOut[0].Count != 2 || s.LeftOut[1].Reason != "cool_down" || !slices.Equal(s.LeftOut[1].Keys, []int64{5}) {
		t.Errorf("trim %+v %+v", s, s.Trim)
	}
	// a wall-clock bound on a monotonic run is an error naming the run
	a := NewAnalyzer(Canonical)
	r, ev := reqtest.Request(0, 5*sec, []reqtest.Event{{Off: 100 * reqtest.MS, Kind: formats.KindContent}}, nil)
	r.ClockDomain = formats.ClockMonotonic
	a.Request(&r, ev)
	a.Run(&formats.Run{RunID: "r", ClockDomain: formats.ClockMonotonic})
	if _, err := a.Report(Options{Select: Selection{Since: until}}); err == nil || !strings.Contains(err.Error(), `run "r" has no wall clock`) {
		t.Errorf("monotonic: %v", err)
	}
	for _, bad := range []string{"auto:0", "auto:1.5", "autox", "30s,x", "-5s"} {
		if _, err := ParseTrim(bad); err == nil {
			t.Errorf("ParseTrim(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"+x", "22:00", "+-5s"} {
		if _, err := ParseTimeRef(bad); err == nil {
			t.Errorf("ParseTimeRef(%q) accepted", bad)
		}
	}
}

// TestSteadyWindow: a ramp 1…4, a plateau at 4 from 3 s to 10 s with a
// 0.5 s handover dip to 3 (bridged), then a drain: at ratio 0.8 the
// threshold is ⌈3.2⌉ = 4 and the window [3 s, 10 s); a 2 s dip splits the
// plateau and the longer part wins; at ratio 0.5 (threshold 2) the window
// runs from 1 s to 12 s.
func TestSteadyWindow(t *testing.T) {
	st := func(pts ...[2]int64) []formats.Step {
		var out []formats.Step
		for _, p := range pts {
			out = append(out, formats.Step{TimeNs: p[0] * sec / 10, Count: int(p[1])})
		}
		return out
	}
	steps := st([2]int64{0, 1}, [2]int64{10, 2}, [2]int64{20, 3}, [2]int64{30, 4}, [2]int64{50, 3}, [2]int64{55, 4}, [2]int64{100, 3}, [2]int64{110, 2}, [2]int64{120, 0})
	from, to, peak, thr, ok := SteadyWindow(steps, 0.8)
	if !ok || from != 3*sec || to != 10*sec || peak != 4 || thr != 4 {
		t.Errorf("ratio 0.8: [%d, %d) peak %d thr %d", from, to, peak, thr)
	}
	if from, to, _, thr, _ = SteadyWindow(steps, 0.5); from != 1*sec || to != 12*sec || thr != 2 {
		t.Errorf("ratio 0.5: [%d, %d) thr %d", from, to, thr)
	}
	split := st([2]int64{30, 4}, [2]int64{50, 3}, [2]int64{70, 4}, [2]int64{100, 0})
	if from, to, _, _, _ = SteadyWindow(split, 0.8); from != 7*sec || to != 10*sec {
		t.Errorf("split: [%d, %d)", from, to)
	}
	if _, _, _, _, ok := SteadyWindow(nil, 0.8); ok {
		t.Error("no steps: ok")
	}
}

// TestInterferenceHandMade: request A (start 0) has tokens at 100, 150,
// 200, 500, 550 ms; B (start 100 ms) at 400, 450, 500; C (start 5 s) at
// 5100, 5150. Gaps: 50, 50, 300, 50 | 50, 50 | 50: the P99 (linear) is
// 50 + 0.94·250 = 285 ms, so the one tail gap is A's (200, 500], which
// holds B's first token (400): 1 of 1. Of all 7 gaps only that one holds
// another's first token (1/7). Chance for a 300 ms gap: first tokens at
// 100, 400, 5100 ms (differences 300, 4700) cover (300 + 300 + 300) of
// the 5150 ms span.
func TestInterferenceHandMade(t *testing.T) {
	a := NewAnalyzer(Canonical)
	add := func(key, start int64, offs ...int64) {
		var evs []reqtest.Event
		for _, o := range offs {
			evs = append(evs, reqtest.Event{Off: o * reqtest.MS, Kind: formats.KindContent})
		}
		r, ev := reqtest.Request(key, t0+start*reqtest.MS, evs, nil)
		a.Request(&r, ev)
	}
	add(0, 0, 100, 150, 200, 500, 550)
	add(1, 100, 300, 350, 400)
	add(2, 5000, 100, 150)
	stream := true
	a.Run(&formats.Run{RunID: "r", ClockDomain: formats.ClockUnix, Streaming: &stream})
	rep, err := a.Report(Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := rep.Runs[0].Interference
	if in == nil || !closeTo(float64(in.ThresholdMs), 285) || in.TailGaps != 1 || in.WithPrefill != 1 || in.Share != 1 || in.AllGaps != 7 || in.AllWithPrefill != 1 {
		t.Fatalf("%+v", in)
	}
	if !closeTo(float64(in.ExpectedShare), 900.0/5150) {
		t.Errorf("expected share %v, want %v", in.ExpectedShare, 900.0/5150)
	}
	if len(in.Longest) != 1 || in.Longest[0].Key != 0 || in.Longest[0].Gap != 3 || in.Longest[0].Ms != 300 || !slices.Equal(in.Longest[0].Prefill, []int64{1}) || in.Longest[0].StartNs != t0+200*reqtest.MS {
		t.Errorf("longest %+v", in.Longest)
	}
}

// TestEngineState: the queue sums the label sets' latest samples at or
// before t (engine 0: 3 at 10 s; engine 1: 4 at 12 s → 7 at 12 s, 3 at
// 11 s); the KV cache is the fullest engine's, a fraction × 100; samples
// older than SeriesStaleNs do not count; another clock is ignored.
func TestEngineState(t *testing.T) {
	p := func(m, l string, ts int64, v float64) formats.SeriesPoint {
		return formats.SeriesPoint{Metric: m, Labels: l, TimeNs: ts * sec, ClockDomain: "unix", Value: v}
	}
	e := NewEngineState([]formats.SeriesPoint{
		p("vllm:num_requests_waiting", `engine="0"`, 10, 3), p("vllm:num_requests_waiting", `engine="1"`, 12, 4),
		p("vllm:kv_cache_usage_perc", `engine="0"`, 10, 0.5), p("vllm:kv_cache_usage_perc", `engine="1"`, 10, 0.98),
		p("gpu:gpu_power_usage", "", 10, 300),
		{Metric: "vllm:num_requests_waiting", TimeNs: 11 * sec, ClockDomain: "local", Value: 100},
	}, "unix")
	if w, kv := e.At(11 * sec); w != 3 || kv != 98 {
		t.Errorf("at 11 s: %v %v", w, kv)
	}
	if w, _ := e.At(12 * sec); w != 7 {
		t.Errorf("at 12 s: %v", w)
	}
	if w, kv := e.At(9 * sec); !math.IsNaN(w) || !math.IsNaN(kv) {
		t.Errorf("before: %v %v", w, kv)
	}
	if w, _ := e.At(10*sec + SeriesStaleNs + 1); w != 4 {
		t.Errorf("stale engine 0: %v", w)
	}
	if NewEngineState([]formats.SeriesPoint{p("gpu:gpu_power_usage", "", 1, 1)}, "unix") != nil {
		t.Error("no engine metric: not nil")
	}
}

// TestSelectionBounds: bounds past what a Unix ns holds are refused or
// held at the end of the range, never wrapped around; --since not before
// --until is an error; a selection that keeps nothing says so.
func TestSelectionBounds(t *testing.T) {
	for _, bad := range []string{"9999-12-31T23:59:59Z", "1677-09-21T00:12:43Z", "2262-04-12T00:00:00Z"} {
		if _, err := ParseTimeRef(bad); err == nil || !strings.Contains(err.Error(), "outside the times") {
			t.Errorf("ParseTimeRef(%q): %v", bad, err)
		}
	}
	far, err := ParseTimeRef("+2562047h")
	if err != nil {
		t.Fatal(err)
	}
	// since far in the future: nothing kept (a wrapped sum kept all 6)
	rr := forensicRun(t, Options{Select: Selection{Since: far}})
	if rr.Selection.Kept != 0 || rr.Requests.Total != 0 || !hasWarning(rr, "selection_empty") || !math.IsNaN(float64(rr.Throughput.RequestsPerS)) || rr.Throughput.Reported {
		t.Errorf("since far: kept %d, total %d, throughput %+v, warnings %+v", rr.Selection.Kept, rr.Requests.Total, rr.Throughput, rr.Warnings)
	}
	// until far in the future: everything kept (a wrapped sum kept none)
	rr = forensicRun(t, Options{Select: Selection{Until: far}})
	if rr.Selection.Kept != 6 || hasWarning(rr, "selection_empty") {
		t.Errorf("until far: kept %d", rr.Selection.Kept)
	}
	// a trim longer than the run keeps nothing and says so
	trim, _ := ParseTrim("0s,2562047h")
	rr = forensicRun(t, Options{Select: Selection{Trim: trim}})
	if rr.Selection.Kept != 0 || !hasWarning(rr, "selection_empty") {
		t.Errorf("long trim: kept %d", rr.Selection.Kept)
	}
	a := NewAnalyzer(Canonical)
	r, ev := reqtest.Request(0, t0, []reqtest.Event{{Off: 100 * reqtest.MS, Kind: formats.KindContent}}, nil)
	a.Request(&r, ev)
	a.Run(&formats.Run{RunID: "r", ClockDomain: formats.ClockUnix})
	since, _ := ParseTimeRef("+10m")
	until, _ := ParseTimeRef("+5m")
	if _, err := a.Report(Options{Select: Selection{Since: since, Until: until}}); err == nil || !strings.Contains(err.Error(), "is not before --until") {
		t.Errorf("since after until: %v", err)
	}
}

// TestWindowWiderThanTheRun: a width that does not divide a day starts at
// the first request (not at the epoch, 1970), a window wider than the run
// is one window over the run's span (1 s → 25.4 s: 24.4 s; 9 tokens), and
// a width near the int64 limit does not wrap around.
func TestWindowWiderThanTheRun(t *testing.T) {
	for _, w := range []int64{int64(7 * 24 * 3600 * sec), int64(2562047) * 3600 * sec} {
		rr := forensicRun(t, Options{WindowNs: w})
		ws := rr.Windows
		if len(ws.Items) != 1 || ws.Items[0].StartNs != t0+1*sec || ws.Items[0].Started != 6 ||
			!closeTo(float64(ws.Items[0].CoveredS), 24.4) || !closeTo(float64(ws.Items[0].OutputTokensPerS), 9/24.4) {
			t.Errorf("width %d: %+v", w, ws.Items)
		}
	}
}
