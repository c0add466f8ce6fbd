package ingest

import (
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// TestFarStartHoldBounded: the requests held for the reference start stop
// at farStartHeldEvents messages: with a bound of 10, request 0 (4
// events) is held, request 1 (8 events) is not — the reference comes from
// both starts (median of 2: the lower, request 0's) and both go on in
// order, request 1 uncopied — and request 2, 71 years out, is still
// flagged.
func TestFarStartHoldBounded(t *testing.T) {
	defer func(n int) { farStartHeldEvents = n }(farStartHeldEvents)
	farStartHeldEvents = 10
	var col formats.Collector
	s := &importSink{Sink: &col, in: &Input{Path: "x"}, runs: map[string]*runChecks{}}
	req := func(key, start int64, n int) (*formats.Request, []formats.Event) {
		st := start
		r := &formats.Request{RunID: "r", RequestKey: key, StartNs: &st, ClockDomain: formats.ClockUnix, Status: formats.StatusOK}
		ev := make([]formats.Event, n)
		for i := range ev {
			ev[i] = formats.Event{RunID: "r", RequestKey: key, Index: int32(i), OffsetNs: int64(i + 1)}
		}
		return r, ev
	}
	r0, e0 := req(0, 1_760_000_000e9, 4)
	r1, e1 := req(1, 1_760_000_001e9, 8)
	r2, e2 := req(2, 4e18, 2)
	for _, x := range []struct {
		r  *formats.Request
		ev []formats.Event
	}{{r0, e0}, {r1, e1}} {
		if err := s.Request(x.r, x.ev); err != nil {
			t.Fatal(err)
		}
	}
	rc := s.runs["r"]
	if !rc.refSet || len(rc.held) != 0 || len(col.Requests) != 2 || col.Requests[0].RequestKey != 0 || col.Requests[1].RequestKey != 1 {
		t.Fatalf("after 12 events: ref set %v, %d held, %d sent", rc.refSet, len(rc.held), len(col.Requests))
	}
	if rc.ref != 1_760_000_000e9 || rc.refFrom != 2 {
		t.Errorf("reference %d from %d starts", rc.ref, rc.refFrom)
	}
	if err := s.Request(r2, e2); err != nil {
		t.Fatal(err)
	}
	if rc.far != 1 || col.Requests[2].StartNs != nil {
		t.Errorf("far start not flagged: far %d, start %v", rc.far, col.Requests[2].StartNs)
	}
	if len(col.Events) != 14 {
		t.Errorf("%d events sent, want 14", len(col.Events))
	}
}
