package analyze

import (
	"slices"
	"testing"
)

// TestImplausible: negative latencies and latencies over a day (a request
// timestamp far from its responses: TTFT of 3.5e12 ms) are named with
// their counts; ordinary ones give no warning.
func TestImplausible(t *testing.T) {
	s := &Samples{Values: map[*Metric][]float64{
		TTFT: {120, -3, 3.5e12},
		E2E:  {900, 3.5e12},
		ITL:  {-0.5, 12},
	}}
	want := "negative latencies (1 negative ttft, 1 negative itl); latencies over a day (1 ttft, 1 e2e; a request start or a response time far from the others): check the source's clocks"
	if got, n := implausible(s); got != want || n != 4 {
		t.Errorf("got  %q (%d values)\nwant %q (4)", got, n, want)
	}
	ok := &Samples{Values: map[*Metric][]float64{TTFT: {0, 120, 86_400_000}, E2E: {5000}}}
	if got, _ := implausible(ok); got != "" {
		t.Errorf("plausible values flagged: %q", got)
	}
}

// TestITLArena: past arenaFrom gaps a run's gaps move to an arena (where
// the system has one) and grow there without blocks; gaps() returns them
// in arrival order.
func TestITLArena(t *testing.T) {
	defer func(n int) { arenaFrom = n }(arenaFrom)
	arenaFrom = 5000
	var p convAcc
	var want []float64
	x := 0.0
	for req := 0; req < 2000; req++ {
		k := 1 + req%300
		p.reserve(k, 1<<20)
		for j := 0; j < k; j++ {
			x++
			p.itl = append(p.itl, x)
		}
		want = append(want, p.itl[len(p.itl)-k:]...)
	}
	if newGapArena(1) != nil && (p.arena == nil || len(p.itlBlocks) != 0) {
		t.Fatalf("arena %v, %d blocks: the gaps did not move to an arena", p.arena != nil, len(p.itlBlocks))
	}
	if got := p.gaps(); !slices.Equal(got, want) {
		t.Fatalf("gaps differ: %d, want %d", len(got), len(want))
	}
}

// TestITLBlocks: gaps appended request by request across many blocks (and
// a request truncated back, as for a failed one) come back from gaps() in
// arrival order, as one slice; blocks grow from 1,024 gaps to itlBlock.
func TestITLBlocks(t *testing.T) {
	var p convAcc
	var want []float64
	x := 0.0
	for req := 0; req < 3000; req++ {
		k := 1 + req%700 // gaps of this request
		p.reserve(k, 0)
		n := len(p.itl)
		for j := 0; j < k; j++ {
			x++
			p.itl = append(p.itl, x)
		}
		if req%10 == 3 { // not counted: its gaps are dropped
			p.itl = p.itl[:n]
			continue
		}
		want = append(want, p.itl[n:]...)
	}
	if len(p.itlBlocks) < 3 {
		t.Fatalf("%d blocks: the test should span several", len(p.itlBlocks))
	}
	for i, b := range p.itlBlocks {
		if cap(b) > itlBlock || i > 0 && cap(b) < cap(p.itlBlocks[i-1]) && cap(b) < itlBlock {
			t.Errorf("block %d has capacity %d", i, cap(b))
		}
	}
	got := p.gaps()
	if len(got) != len(want) {
		t.Fatalf("%d gaps, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("gap %d = %v, want %v", i, got[i], want[i])
		}
	}
	if p.itlBlocks != nil || len(p.gaps()) != len(want) {
		t.Error("gaps() did not keep the joined slice")
	}
}
