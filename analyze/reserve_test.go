package analyze

import (
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// TestStartRunReserves: a run that says how many requests it has gets room
// for their metrics at once (bounded by maxReserve), under every
// convention it is computed under; the requests then fill it in place.
func TestStartRunReserves(t *testing.T) {
	a := NewAnalyzer(Canonical, Canonical)
	if err := a.StartRun(&formats.Run{RunID: "r", RequestCount: 3}); err != nil {
		t.Fatal(err)
	}
	if err := a.StartRun(&formats.Run{RunID: "big", RequestCount: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if c := cap(a.byID["r"].per[i].reqs); c != 3 {
			t.Errorf("convention %d: room for %d requests, want 3", i, c)
		}
		if c := cap(a.byID["big"].per[i].reqs); c != maxReserve {
			t.Errorf("convention %d: room for %d requests, want %d", i, c, maxReserve)
		}
	}
	base := &a.byID["r"].per[0].reqs
	first := cap(*base)
	for k := range 3 {
		if err := a.Request(&formats.Request{RunID: "r", RequestKey: int64(k), Status: formats.StatusOK}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(*base) != 3 || cap(*base) != first {
		t.Errorf("%d requests in room for %d, want 3 in 3", len(*base), cap(*base))
	}
}
