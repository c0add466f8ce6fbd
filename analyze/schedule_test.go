package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TestScheduleMetrics: the three schedule-relative metrics, hand-computed
// on the classic request (TTFT 500 ms, E2E 1200 ms) sent 250 ms after its
// intended start: dispatch delay 250, sched TTFT 750, sched E2E 1450 ms.
// A request without an intended start has none; a run where no request
// has one reports none of the three.
func TestScheduleMetrics(t *testing.T) {
	r, evs := classic(0, 10_000*ms)
	r.ScheduledStartNs, r.ScheduledStartSource = ingest.Ptr(9_750*ms), "test:slot"
	m, _ := ComputeRequest(Canonical, &r, evs, nil, nil)
	near(t, "dispatch delay", DispatchDelay.Value(&m, Deadlines{}), 250)
	near(t, "sched TTFT", SchedTTFT.Value(&m, Deadlines{}), 750)
	near(t, "sched E2E", SchedE2E.Value(&m, Deadlines{}), 1450)

	// sent early (a tool's timer): a negative delay is kept
	r.ScheduledStartNs = ingest.Ptr(10_000*ms + 400_000)
	m, _ = ComputeRequest(Canonical, &r, evs, nil, nil)
	near(t, "early dispatch delay", DispatchDelay.Value(&m, Deadlines{}), -0.4)
	near(t, "early sched E2E", SchedE2E.Value(&m, Deadlines{}), 1199.6)

	r2, evs2 := classic(1, 11_000*ms)
	m, _ = ComputeRequest(Canonical, &r2, evs2, nil, nil)
	for _, x := range []*Metric{DispatchDelay, SchedTTFT, SchedE2E} {
		if v := x.Value(&m, Deadlines{}); !math.IsNaN(v) {
			t.Errorf("%s without an intended start = %v, want undefined", x.Name, v)
		}
	}

	yes := true
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes}
	rr := analyzeRows(t, run,
		func() (formats.Request, []formats.Event) {
			r, e := classic(0, 10_000*ms)
			r.ScheduledStartNs, r.ScheduledStartSource = ingest.Ptr(9_750*ms), "test:slot"
			return r, e
		},
		func() (formats.Request, []formats.Event) {
			r, e := classic(1, 11_000*ms)
			r.ScheduledStartNs, r.ScheduledStartSource = ingest.Ptr(10_250*ms), "test:slot"
			return r, e
		},
		func() (formats.Request, []formats.Event) { return classic(2, 12_000*ms) }, // no slot
	)
	d := rr.Metrics.Of(DispatchDelay)
	if d.N != 2 {
		t.Fatalf("dispatch delay n = %d, want 2 (the request without a slot has none)", d.N)
	}
	near(t, "dispatch delay mean", d.Mean, (250+750)/2.0)
	near(t, "sched E2E max", rr.Metrics.Of(SchedE2E).Max, 750+1200)
	near(t, "E2E mean (unchanged)", rr.Metrics.Of(E2E).Mean, 1200)

	rr = analyzeRows(t, run, func() (formats.Request, []formats.Event) { return classic(0, 0) })
	for _, s := range rr.Metrics {
		if s.Metric.Scheduled {
			t.Errorf("%s reported for a run without intended starts", s.Metric.Name)
		}
	}
}

// coRun is 100 classic requests (E2E 1200 ms) of a run in mode at 10
// req/s, intended every 100 ms; from request 50 on, a stalled client sends
// each one late(i) ms after its slot. withSlots false: the file records
// no intended starts.
func coRun(t *testing.T, mode string, rate float64, withSlots bool, late func(i int) int64) *RunReport {
	t.Helper()
	yes := true
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes, LoadMode: mode, RequestRateRPS: &rate}
	var rows []func() (formats.Request, []formats.Event)
	for i := range 100 {
		slot := int64(i) * 100 * ms
		rows = append(rows, func() (formats.Request, []formats.Event) {
			r, e := classic(int64(i), slot+late(i)*ms)
			if withSlots {
				r.ScheduledStartNs, r.ScheduledStartSource = ingest.Ptr(slot), "test:slot"
			}
			return r, e
		})
	}
	return analyzeRows(t, run, rows...)
}

func findWarning(rr *RunReport, code string) *Warning {
	for i := range rr.Warnings {
		if rr.Warnings[i].Code == code {
			return &rr.Warnings[i]
		}
	}
	return nil
}

// TestCoordinatedOmission: an open-loop run whose sends fell up to 3 s
// behind is flagged with the tail both ways; the same requests in a
// closed loop, or sent at most 100 ms late (< 10% of E2E P50 1200 ms), are
// not; a rate run without intended starts says its latencies are from
// the send.
func TestCoordinatedOmission(t *testing.T) {
	stall := func(i int) int64 {
		if i < 50 {
			return 0
		}
		return int64(i-49) * 60 // 60 ms later each: 3000 ms by request 99
	}
	rr := coRun(t, "request_rate", 10, true, stall)
	w := findWarning(rr, TrapCoordinatedOmission)
	if w == nil {
		t.Fatalf("no %s warning: %+v", TrapCoordinatedOmission, rr.Warnings)
	}
	// late > 120 ms (10% of 1200): requests 52..99 (60·(i−49) > 120 ⇔ i ≥ 52)
	if w.Count != 48 || !w.DataCheck {
		t.Errorf("count %d (data check %v), want 48 requests later than 120 ms", w.Count, w.DataCheck)
	}
	e2e, sched := rr.Metrics.Of(E2E), rr.Metrics.Of(SchedE2E)
	near(t, "E2E P99 (from the send)", e2e.Value(0.99), 1200)
	// sched E2E = 1200 + late: the top values 1200 + 3000, 1200 + 2940;
	// P99 at rank 0.99·99 = 98.01 → 4140 + 0.01·60 = 4140.6
	near(t, "sched E2E P99", sched.Value(0.99), 4140.6)
	if want := FormatValue(4140.6, "ms") + " from the schedule"; !strings.Contains(w.Message, want) {
		t.Errorf("message lacks %q: %s", want, w.Message)
	}

	if w := findWarning(coRun(t, "concurrency", 10, true, stall), TrapCoordinatedOmission); w != nil {
		t.Errorf("closed loop flagged: %s", w.Message)
	}
	small := func(i int) int64 { return int64(i % 2 * 100) }
	if w := findWarning(coRun(t, "request_rate", 10, true, small), TrapCoordinatedOmission); w != nil {
		t.Errorf("100 ms late (< 120 ms) flagged: %s", w.Message)
	}
	rr = coRun(t, "request_rate", 10, false, stall)
	if w := findWarning(rr, TrapFromActualSend); w == nil || w.DataCheck {
		t.Errorf("rate run without intended starts: %+v", rr.Warnings)
	}
	if findWarning(rr, TrapCoordinatedOmission) != nil {
		t.Error("flagged without intended starts")
	}
}

// TestFailedAsInfinite: under tokentrace-adjusted (AIPerf's adj_*) each
// failed request adds one +∞ to TTFT and E2E: with 1 failure in 100 the
// P99 (rank 0.99·99 = 98.01, between the 99th finite value and the +∞)
// is +∞ and the P50 unchanged; with 1 in 200 the P99 (rank 197.01, both
// neighbours finite) stays 500 ms; TPOT and ITL are untouched.
func TestFailedAsInfinite(t *testing.T) {
	yes := true
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes}
	rows := func(ok, failed int) []func() (formats.Request, []formats.Event) {
		var out []func() (formats.Request, []formats.Event)
		for i := range ok + failed {
			out = append(out, func() (formats.Request, []formats.Event) {
				if i >= ok {
					return formats.Request{RunID: "r", RequestKey: int64(i), StartNs: ingest.Ptr(int64(i) * ms), Status: formats.StatusError, ErrorText: "HTTP 500"}, nil
				}
				return classic(int64(i), int64(i)*ms)
			})
		}
		return out
	}
	a := NewAnalyzer(Adjusted)
	for _, f := range rows(99, 1) {
		r, e := f()
		if err := a.Request(&r, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Run(&run); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(Options{Tools: tools, Convention: func(*formats.Run) convention.Convention { return Adjusted }})
	if err != nil {
		t.Fatal(err)
	}
	rr := rep.Runs[0]
	ttft := rr.Metrics.Of(TTFT)
	if ttft.N != 100 || ttft.Infinite != 1 {
		t.Fatalf("TTFT n %d, infinite %d; want 100, 1", ttft.N, ttft.Infinite)
	}
	if !math.IsInf(ttft.Value(0.99), 1) || !math.IsInf(ttft.Mean, 1) || !math.IsNaN(ttft.Std) {
		t.Errorf("TTFT p99 %v, mean %v, std %v: want +∞, +∞, undefined", ttft.Value(0.99), ttft.Mean, ttft.Std)
	}
	near(t, "TTFT P50", ttft.Value(0.5), 500)
	if tp := rr.Metrics.Of(TPOT); tp.N != 99 || tp.Infinite != 0 {
		t.Errorf("TPOT n %d infinite %d: failures entered TPOT", tp.N, tp.Infinite)
	}
	for _, w := range rr.Warnings {
		if w.Code == TrapImplausibleValues {
			t.Errorf("+∞ of a failure flagged as implausible: %s", w.Message)
		}
	}
	b, _ := ttft.MarshalJSON()
	if !strings.Contains(string(b), `"p99":null`) || !strings.Contains(string(b), `"infinite":1`) {
		t.Errorf("JSON %s: want p99 null and infinite 1", b)
	}

	a = NewAnalyzer(Adjusted)
	for _, f := range rows(199, 1) {
		r, e := f()
		if err := a.Request(&r, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Run(&run); err != nil {
		t.Fatal(err)
	}
	rep, err = a.Report(Options{Tools: tools, Convention: func(*formats.Run) convention.Convention { return Adjusted }})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "E2E P99, 1 failure in 200", rep.Runs[0].Metrics.Of(E2E).Value(0.99), 1200)
}

// TestTimeWeighted: counts 1 on [0, 10), 2 on [10, 30), 0 on [30, 40), 1 on
// [40, 50): mean (10 + 40 + 0 + 10)/50 = 1.2; busy 40 of 50; mean while
// busy 60/40 = 1.5; by duration the count is ≤ 0 for 20%, ≤ 1 for 60%, ≤ 2
// always: P10 0, P50 1, P90 2.
func TestTimeWeighted(t *testing.T) {
	steps := []formats.Step{{TimeNs: 0, Count: 1}, {TimeNs: 10, Count: 2}, {TimeNs: 30, Count: 0}, {TimeNs: 40, Count: 1}}
	tw := TimeWeighted(steps, 0, 50, []float64{0.1, 0.5, 0.9})
	near(t, "mean", tw.Mean, 1.2)
	near(t, "busy share", tw.BusyShare, 0.8)
	near(t, "active mean", tw.ActiveMean, 1.5)
	for i, want := range []float64{0, 1, 2} {
		near(t, "quantile", tw.Quantiles[i], want)
	}
	if tw := TimeWeighted(steps, 5, 5, []float64{0.5}); !math.IsNaN(tw.Mean) || !math.IsNaN(tw.Quantiles[0]) {
		t.Errorf("empty span: %+v", tw)
	}
}

// TestCoordinatedOmissionUnderSchedule: under tokentrace-schedule the
// report's E2E is measured from the schedule, but the check still states
// the tail from the send (1200 ms) beside the one from the schedule.
func TestCoordinatedOmissionUnderSchedule(t *testing.T) {
	yes := true
	rate := 10.0
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes, LoadMode: "request_rate", RequestRateRPS: &rate}
	a := NewAnalyzer(Scheduled)
	for i := range 100 {
		slot := int64(i) * 100 * ms
		late := int64(0)
		if i >= 50 {
			late = int64(i-49) * 60 * ms
		}
		r, e := classic(int64(i), slot+late)
		r.ScheduledStartNs, r.ScheduledStartSource = ingest.Ptr(slot), "test:slot"
		if err := a.Request(&r, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Run(&run); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(Options{Tools: tools, Convention: func(*formats.Run) convention.Convention { return Scheduled }})
	if err != nil {
		t.Fatal(err)
	}
	rr := rep.Runs[0]
	near(t, "E2E P99 under tokentrace-schedule", rr.Metrics.Of(E2E).Value(0.99), 4140.6)
	w := findWarning(rr, TrapCoordinatedOmission)
	if w == nil {
		t.Fatal("no coordinated_omission warning")
	}
	if want := "E2E P99 " + FormatValue(1200, "ms") + " from the send, " + FormatValue(4140.6, "ms") + " from the schedule"; !strings.Contains(w.Message, want) {
		t.Errorf("message lacks %q: %s", want, w.Message)
	}
}
