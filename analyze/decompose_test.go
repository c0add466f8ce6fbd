package analyze

import (
	"math"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

func i64(v int64) *int64 { return &v }

// joinedRow is a streamed client row (first token at ttft ms, then one
// message per 10 ms) joined to a server record with queue and prefill (ms).
func joinedRow(key int64, ttft, n int64, queue, prefill *int64) (*formats.Request, []formats.Event) {
	r := &formats.Request{RunID: "r", RequestKey: key, Status: formats.StatusOK, StartNs: i64(0), ClockDomain: "unix",
		MatchQuality: formats.MatchRequestID, ServerKind: "vllm.otlp_span", ServerQueueNs: queue, ServerPrefillNs: prefill,
		ServerDecodeNs: i64((n - 1) * 10e6)}
	var ev []formats.Event
	for i := int64(0); i < n; i++ {
		off := (ttft + 10*i) * 1e6
		ev = append(ev, formats.Event{RunID: "r", RequestKey: key, Index: int32(i), ReadIndex: int32(i), OffsetNs: off, Kind: formats.KindContent, HasChoices: true})
	}
	r.FirstTokenOffsetNs, r.FirstContentOffsetNs, r.LastTokenOffsetNs, r.StreamEndOffsetNs = i64(ttft*1e6), i64(ttft*1e6), i64(ev[n-1].OffsetNs), i64(ev[n-1].OffsetNs)
	if n > 1 {
		r.SecondTokenOffsetNs = i64(ev[1].OffsetNs)
	}
	r.MessageCount, r.TokenMessageCount = n, n
	r.OutputTokens, r.OutputTokensSource = i64(n), formats.SourceServerUsage
	return r, ev
}

// TestDecomposer: hand-computed remainders, a negative one kept and
// counted, rows that cannot be decomposed counted apart, the tail share.
func TestDecomposer(t *testing.T) {
	d := NewDecomposer(Canonical)
	ms := func(v int64) *int64 { return i64(v * 1e6) }
	rows := []struct {
		ttft, n     int64
		queue, pref *int64
	}{
		{100, 3, ms(10), ms(60)},  // remainder 30
		{300, 3, ms(200), ms(50)}, // remainder 50 — the tail
		{80, 3, ms(30), ms(70)},   // remainder −20
		{90, 3, nil, ms(40)},      // no queue (TGI-like): not decomposed
		{90, 1, ms(1), ms(40)},    // one message: not streamed, not decomposed
	}
	for i, x := range rows {
		r, ev := joinedRow(int64(i), x.ttft, x.n, x.queue, x.pref)
		if err := d.Request(r, ev); err != nil {
			t.Fatal(err)
		}
	}
	// a server row and an unjoined client row are ignored
	_ = d.Request(&formats.Request{RunID: "s", ServerKind: "vllm.otlp_span", MatchQuality: "request_id"}, nil)
	r, ev := joinedRow(9, 50, 3, ms(1), ms(1))
	r.MatchQuality = ""
	_ = d.Request(r, ev)

	res := d.Result()
	if res.N != 3 || res.NotDecomposable != 2 || res.NegativeRemainder != 1 {
		t.Fatalf("%+v", res)
	}
	got := []float64{}
	for _, r := range d.Rows() {
		got = append(got, r.RemainderMs)
	}
	if want := []float64{30, 50, -20}; !equalF(got, want) {
		t.Fatalf("remainders %v, want %v", got, want)
	}
	if res.RemainderMs.Min != -20 || res.DecodeMs.Mean != 20 {
		t.Errorf("min remainder %v, mean decode %v", res.RemainderMs.Min, res.DecodeMs.Mean)
	}
	// P99 of {80, 100, 300} (linear) = 100 + 0.98·200 = 296: request 2 alone
	tl := res.Tail
	if tl.N != 1 || math.Abs(float64(tl.ThresholdMs)-296) > 1e-9 || tl.Driver != "queue" ||
		math.Abs(float64(tl.QueueShare)-200.0/300) > 1e-12 || math.Abs(float64(tl.RemainderShare)-50.0/300) > 1e-12 {
		t.Errorf("tail %+v", tl)
	}
	if res.NegativeRemainder != 1 || res.NotDecomposable != 2 || res.N != 3 {
		t.Errorf("negative %d, not decomposed %d, n %d", res.NegativeRemainder, res.NotDecomposable, res.N)
	}
}

func equalF(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}
