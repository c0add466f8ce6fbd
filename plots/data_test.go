package plots_test

import (
	"math"
	"reflect"
	"sort"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/plots"
)

func TestCCDFHandComputed(t *testing.T) {
	got := plots.CCDF([]float64{1, 2, 2, 3}, 0)
	want := []plots.XY{{1, 1}, {2, 0.75}, {3, 0.25}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CCDF = %v, want %v", got, want)
	}
	if plots.CCDF(nil, 10) != nil {
		t.Fatal("CCDF of nothing should be nil")
	}
}

func TestCCDFThinningKeepsTheTail(t *testing.T) {
	n := 100000
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	got := plots.CCDF(xs, plots.MaxCCDFPoints)
	if len(got) > plots.MaxCCDFPoints+10 || len(got) < plots.MaxCCDFPoints/2 {
		t.Fatalf("thinned to %d points, want about %d", len(got), plots.MaxCCDFPoints)
	}
	if got[0] != (plots.XY{1, 1}) {
		t.Fatalf("first point %v", got[0])
	}
	// the 200 largest values exactly, with survival k/n
	tail := got[len(got)-plots.CCDFTailExact:]
	for i, p := range tail {
		v := float64(n - plots.CCDFTailExact + 1 + i)
		if p.X != v || p.Y != float64(n-int(v)+1)/float64(n) {
			t.Fatalf("tail point %d = %v, want (%v, %v)", i, p, v, float64(n-int(v)+1)/float64(n))
		}
	}
	// survival levels spread in log scale: some point at or below 1e-3
	found := false
	for _, p := range got[:len(got)-plots.CCDFTailExact] {
		found = found || (p.Y <= 1e-2 && p.Y > 2e-3)
	}
	if !found {
		t.Fatal("no point between survival 2e-3 and 1e-2 outside the exact tail")
	}
	// deterministic
	if !reflect.DeepEqual(got, plots.CCDF(xs, plots.MaxCCDFPoints)) {
		t.Fatal("CCDF thinning is not deterministic")
	}
}

func TestScatterKeepsTailExactly(t *testing.T) {
	n := 20000
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
		ys[i] = float64((i * 7919) % n) // a permutation of 0…n−1
	}
	got := plots.Scatter(xs, ys, plots.MaxScatterPoints)
	if len(got) > plots.MaxScatterPoints {
		t.Fatalf("%d points, want at most %d", len(got), plots.MaxScatterPoints)
	}
	// P99 (linear) of 0…19999 is 19799.01: every y ≥ it (200 points) kept
	tail := 0
	for _, p := range got {
		if p.Y >= 19799.01 {
			tail++
		}
	}
	if tail != 200 {
		t.Fatalf("%d tail points kept, want 200", tail)
	}
	// NaN pairs left out
	if got := plots.Scatter([]float64{1, math.NaN(), 3}, []float64{1, 2, math.Inf(1)}, 0); len(got) != 1 {
		t.Fatalf("Scatter kept %v", got)
	}
}

func TestRollingP99HandComputed(t *testing.T) {
	got := plots.RollingP99([]float64{0, 1, 2, 3, 4}, []float64{1, 2, 3, 4, 5}, 3, 0, convention.PercentileLinear)
	// P99 linear of three values a<b<c: b + 0.98·(c−b)
	want := []plots.XY{{2, 2.98}, {3, 3.98}, {4, 4.98}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].X != want[i].X || math.Abs(got[i].Y-want[i].Y) > 1e-12 {
			t.Fatalf("point %d = %v, want %v", i, got[i], want[i])
		}
	}
	// at most evals evaluations, the last request included
	ts := make([]float64, 1000)
	ys := make([]float64, 1000)
	for i := range ts {
		ts[i], ys[i] = float64(i), float64(i)
	}
	got = plots.RollingP99(ts, ys, 10, 50, convention.PercentileLinear)
	if len(got) > 51 || got[len(got)-1].X != 999 {
		t.Fatalf("%d evaluations, last at %v", len(got), got[len(got)-1])
	}
	if plots.RollingP99(ts[:5], ys[:5], 10, 0, convention.PercentileLinear) != nil {
		t.Fatal("fewer values than the window should give nil")
	}
}

func TestInFlightHandComputed(t *testing.T) {
	// [0,3) [1,2) [2,4): at t=2 one ends and one starts
	pts, max := plots.InFlight([]float64{0, 1, 2}, []float64{3, 2, 4}, 0)
	want := []plots.XY{{0, 1}, {1, 2}, {2, 2}, {3, 1}, {4, 0}}
	if !reflect.DeepEqual(pts, want) || max != 2 {
		t.Fatalf("InFlight = %v max %d, want %v max 2", pts, max, want)
	}
	// binning keeps a one-instant spike
	var s, e []float64
	for i := 0; i < 5000; i++ {
		s = append(s, float64(i))
		e = append(e, float64(i)+0.5)
	}
	for i := 0; i < 7; i++ { // 8 in flight at t=2500.1
		s = append(s, 2500.1)
		e = append(e, 2500.2)
	}
	pts, max = plots.InFlight(s, e, 1000)
	peak := 0.0
	for _, p := range pts {
		peak = math.Max(peak, p.Y)
	}
	if max != 8 || peak != 8 || len(pts) > 1001 {
		t.Fatalf("max %d, peak drawn %v, %d points", max, peak, len(pts))
	}
}

func TestITLByPositionHandComputed(t *testing.T) {
	reqs := []analyze.RequestMetrics{{ITLSamples: 3}, {ITLSamples: 0}, {ITLSamples: 2}}
	itl := []float64{10, 20, 30, 11, 21}
	got, ok := plots.ITLByPosition(reqs, itl, convention.PercentileLinear)
	want := []plots.PositionStats{
		{From: 1, To: 1, N: 2, P50: 10.5, P99: 10.99},
		{From: 2, To: 2, N: 2, P50: 20.5, P99: 20.99},
		{From: 3, To: 3, N: 1, P50: 30, P99: 30},
	}
	if !ok || len(got) != len(want) {
		t.Fatalf("got %v, %v", got, ok)
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.From != w.From || g.To != w.To || g.N != w.N || math.Abs(g.P50-w.P50) > 1e-12 || math.Abs(g.P99-w.P99) > 1e-12 {
			t.Fatalf("group %d = %+v, want %+v", i, g, w)
		}
	}
	if _, ok := plots.ITLByPosition(reqs, itl[:4], convention.PercentileLinear); ok {
		t.Fatal("counts not adding up must be reported")
	}
	// a long request: gaps 65–72 form one group
	long := []analyze.RequestMetrics{{ITLSamples: 72}}
	vals := make([]float64, 72)
	for i := range vals {
		vals[i] = float64(i + 1)
	}
	got, _ = plots.ITLByPosition(long, vals, convention.PercentileLinear)
	last := got[len(got)-1]
	if len(got) != 65 || last.From != 65 || last.To != 72 || last.N != 8 || last.P50 != 68.5 {
		t.Fatalf("%d groups, last %+v", len(got), last)
	}
}

func TestGoodputCurvesHandComputed(t *testing.T) {
	slo, err := slo.ParseSLO("ttft<=100ms, tpot<10ms")
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	ok := formats.StatusOK
	reqs := []analyze.RequestMetrics{
		{Status: ok, TTFTMs: 50, TPOTMs: 5, OutputTokens: 10},
		{Status: ok, TTFTMs: 150, TPOTMs: 5, OutputTokens: 10},
		{Status: ok, TTFTMs: 80, TPOTMs: 12, OutputTokens: 10},
		{Status: ok, TTFTMs: 90, TPOTMs: nan, OutputTokens: 1}, // TPOT vacuous (N = 1)
		{Status: ok, TTFTMs: nan, TPOTMs: 5, OutputTokens: 10}, // no TTFT: never good
		{Status: formats.StatusError, TTFTMs: 10, TPOTMs: 1, OutputTokens: 10},
	}
	cs := plots.GoodputCurves(slo, reqs)
	if len(cs) != 2 {
		t.Fatalf("%d curves", len(cs))
	}
	// TTFT bound moving, TPOT < 10 ms held: requests 0, 1, 3 pass TPOT;
	// their TTFTs 50, 90, 150.
	ttft := cs[0]
	want := []plots.XY{{0, 0}, {50, 1.0 / 6}, {90, 2.0 / 6}, {150, 3.0 / 6}}
	if !reflect.DeepEqual(ttft.Points, want) || ttft.AtLimit != 2.0/6 || ttft.LimitMs != 100 || ttft.Total != 6 {
		t.Fatalf("ttft curve %+v, want points %v at limit 2/6", ttft, want)
	}
	// TPOT bound moving, TTFT ≤ 100 held: requests 0 (5), 2 (12), 3
	// (vacuous, good at any bound).
	tpot := cs[1]
	want = []plots.XY{{0, 1.0 / 6}, {5, 2.0 / 6}, {12, 3.0 / 6}}
	if !reflect.DeepEqual(tpot.Points, want) || tpot.AtLimit != 2.0/6 {
		t.Fatalf("tpot curve %+v, want points %v at limit 2/6", tpot, want)
	}
}

// TestBuildTimelineHandComputed (monotonic clock, no concurrency; s from
// the first start at 1 s): r1 [0, 3) and r0 [1, 2) completed; r2 failed
// at 0.5 after 500 ms; r3 failed at 1.5 with no recorded end, counted as
// long as the longest request (3 s) but capped at the run's last recorded
// time (3, r1's end): held 1.5 s, drawn bounded. In flight 1, 2, 3 (one
// bounded), 2, 0. Windows of 1 s (auto for a 3 s span, at most 4) from the first
// start: [0, 1) holds r1 and r2, [1, 2) r0 and r3; each TTFT window has
// one value, so its max is drawn (few).
func TestBuildTimelineHandComputed(t *testing.T) {
	nan := math.NaN()
	reqs := []analyze.RequestMetrics{
		{Key: 0, Status: formats.StatusOK, Counted: true, HasStart: true, StartNs: 2e9, TTFTMs: 100, E2EMs: 1000, StreamEndMs: 1000, EndOffsetNs: 1e9},
		{Key: 1, Status: formats.StatusOK, Counted: true, HasStart: true, StartNs: 1e9, TTFTMs: 200, E2EMs: 3000, StreamEndMs: 3000, EndOffsetNs: 3e9},
		{Key: 2, Status: formats.StatusError, HasStart: true, StartNs: 1.5e9, TTFTMs: nan, E2EMs: nan, StreamEndMs: 500, LastResponseMs: nan, EndOffsetNs: 5e8,
			Error: analyze.ErrorKey{Status: formats.StatusError, Code: "503"}},
		{Key: 3, Status: formats.StatusError, HasStart: true, StartNs: 2.5e9, TTFTMs: nan, E2EMs: nan, StreamEndMs: nan, LastResponseMs: nan, EndOffsetNs: -1},
	}
	rd := &analyze.RunData{Run: &formats.Run{RunID: "r", ClockDomain: formats.ClockMonotonic}, Convention: analyze.Canonical, Requests: reqs}
	tl, ok, err := plots.BuildTimeline(rd, nil, 0)
	if err != nil || !ok {
		t.Fatal("no timeline", err)
	}
	if tl.Wall || tl.T0Ns != 1e9 || tl.Requests != 4 || tl.Unknown != 1 || tl.MaxInFlight != 3 || tl.WindowWidthS != 1 {
		t.Fatalf("timeline %+v", tl)
	}
	if !reflect.DeepEqual(tl.E2E, []plots.XY{{0, 3000}, {1, 1000}}) || !reflect.DeepEqual(tl.TTFT, []plots.XY{{0, 200}, {1, 100}}) {
		t.Fatalf("E2E %v TTFT %v", tl.E2E, tl.TTFT)
	}
	want := []plots.FailedPoint{{X: 0.5, Y: 500, Status: "error", Code: "503"}, {X: 1.5, Y: 1500, Bounded: true, Status: "error"}}
	if !reflect.DeepEqual(tl.Failed, want) {
		t.Fatalf("failed %+v", tl.Failed)
	}
	if !reflect.DeepEqual(tl.InFlight, []plots.XY{{0, 1}, {0.5, 2}, {1.5, 3}, {2, 2}, {3, 0}}) || !reflect.DeepEqual(tl.Bounded, []plots.XY{{0, 0}, {0.5, 0}, {1.5, 1}, {2, 1}, {3, 0}}) {
		t.Fatalf("in flight %v bounded %v", tl.InFlight, tl.Bounded)
	}
	if !reflect.DeepEqual(tl.WindowTTFT, []plots.WindowSegment{{X0: 0, X1: 1, Y: 200, Few: true}, {X0: 1, X1: 2, Y: 100, Few: true}}) {
		t.Fatalf("window TTFT %+v", tl.WindowTTFT)
	}
	rd.Requests = []analyze.RequestMetrics{{Status: formats.StatusOK}}
	if _, ok, _ := plots.BuildTimeline(rd, nil, 0); ok {
		t.Fatal("a run without start times has no timeline")
	}
}

func TestGoodputCapacityValidates(t *testing.T) {
	if _, err := plots.GoodputCapacity([]float64{1, 2}, []float64{1}, 0.9, 1.5); err == nil {
		t.Fatal("length mismatch accepted")
	}
	if _, err := plots.GoodputCapacity(nil, nil, 0.9, 1.5); err == nil {
		t.Fatal("empty sweep accepted")
	}
	if _, err := plots.GoodputCapacity([]float64{1, math.NaN()}, []float64{1, 0.5}, 0.9, 1.5); err == nil {
		t.Fatal("NaN rate accepted")
	}
}

// synthRun is n requests of gaps ITL samples each (deterministic values).
func synthRun(n, gaps int) ([]analyze.RequestMetrics, []float64) {
	reqs := make([]analyze.RequestMetrics, n)
	itl := make([]float64, 0, n*gaps)
	for i := range reqs {
		reqs[i] = analyze.RequestMetrics{Status: formats.StatusOK, Counted: true, HasStart: true, StartNs: int64(i) * 1e7,
			TTFTMs: float64(100 + i%97), E2EMs: float64(1000 + (i*7919)%5003), StreamEndMs: float64(1000 + (i*7919)%5003), ITLSamples: gaps}
		for k := 0; k < gaps; k++ {
			itl = append(itl, float64(20+(i*31+k*17)%41))
		}
	}
	return reqs, itl
}

// 10,000 requests × 500 gaps = 5M gaps.
func BenchmarkITLByPosition(b *testing.B) {
	reqs, itl := synthRun(10000, 500)
	b.ResetTimer()
	for b.Loop() {
		if _, ok := plots.ITLByPosition(reqs, itl, convention.PercentileLinear); !ok {
			b.Fatal("counts")
		}
	}
}

// The CCDF of 5M pooled gaps (sort included, as Tail does).
func BenchmarkCCDF(b *testing.B) {
	_, itl := synthRun(10000, 500)
	b.ResetTimer()
	for b.Loop() {
		s := append([]float64(nil), itl...)
		sort.Float64s(s)
		plots.CCDF(s, plots.MaxCCDFPoints)
	}
}

// The timeline of 100,000 requests.
func BenchmarkTimeline(b *testing.B) {
	reqs, _ := synthRun(100000, 0)
	for i := range reqs {
		reqs[i].EndOffsetNs = int64(reqs[i].StreamEndMs * 1e6)
	}
	rd := &analyze.RunData{Run: &formats.Run{RunID: "r", ClockDomain: formats.ClockUnix}, Convention: analyze.Canonical, Requests: reqs}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := plots.BuildTimeline(rd, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScatterTailBounded: the points kept at or above the P99 are at most
// a quarter of the budget, the largest, so a million-point series stays
// within MaxScatterPoints (1% of 1M is 10,000 tail points).
func TestScatterTailBounded(t *testing.T) {
	n := 1_000_000
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
		ys[i] = float64((i * 7919) % n)
	}
	idx := plots.ScatterIdx(xs, ys, plots.MaxScatterPoints)
	if len(idx) > plots.MaxScatterPoints {
		t.Fatalf("%d points, want at most %d", len(idx), plots.MaxScatterPoints)
	}
	tail := 0
	for _, i := range idx {
		if ys[i] >= float64(n-1000) { // the 1000 largest: all kept
			tail++
		}
	}
	if tail != 1000 {
		t.Errorf("%d of the 1000 largest kept", tail)
	}
	for k := 1; k < len(idx); k++ {
		if idx[k] <= idx[k-1] {
			t.Fatal("indices not ascending")
		}
	}
}

// TestOSLBandsHandComputed: two bins of N over [0, 10]; the bins'
// percentiles (linear) and the points above their bin's P99.
func TestOSLBandsHandComputed(t *testing.T) {
	// bin [0, 5): E2E 1…100 at N 0…4 (100 points); bin [5, 10]: 1000 and
	// 2000 at N 10
	var xs, ys []float64
	for i := 1; i <= 100; i++ {
		xs, ys = append(xs, float64(i%5)), append(ys, float64(i))
	}
	xs, ys = append(xs, 10, 10, math.NaN()), append(ys, 1000, 2000, 5)
	bands, out := plots.OSLBands(xs, ys, 2, 10, convention.PercentileLinear)
	if len(bands) != 2 {
		t.Fatalf("bands %+v", bands)
	}
	b := bands[0]
	// linear P10 of 1…100: 1 + 0.1·99 = 10.9; P50 50.5; P90 90.1; P99 99.01
	if b.Lo != 0 || b.Hi != 5 || b.N != 100 || !near(b.P10, 10.9) || !near(b.P50, 50.5) || !near(b.P90, 90.1) || !near(b.P99, 99.01) {
		t.Errorf("bin 0: %+v", b)
	}
	if c := bands[1]; c.N != 2 || !near(c.P50, 1500) || !near(c.P99, 1990) {
		t.Errorf("bin 1: %+v", c)
	}
	// above P99: y=100 (index 99) in bin 0, y=2000 (index 101) in bin 1
	if len(out) != 2 || out[0] != 99 || out[1] != 101 {
		t.Errorf("outliers %v", out)
	}
	if _, out := plots.OSLBands(xs, ys, 2, 1, convention.PercentileLinear); len(out) != 1 || out[0] != 101 {
		t.Errorf("capped outliers %v, want the slowest (101)", out)
	}
}
