package sweep

import (
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/compare"
	"github.com/tokentrace/tokentrace/formats"
)

// TestKneedle: x 1…5, y 1, 1.1, 1.2, 1.5, 5 normalize to xn 0, .25, .5,
// .75, 1 and yn 0, .025, .05, .125, 1; the difference curve is 0, .225,
// .45, .625, 0, its one local maximum at index 3 with threshold .625 − 1/4
// = .375, and d(4) = 0 falls below it: the knee is x = 4.
func TestKneedle(t *testing.T) {
	if k, why := Kneedle([]float64{1, 2, 3, 4, 5}, []float64{1, 1.1, 1.2, 1.5, 5}, 1); k != 3 {
		t.Errorf("knee %d (%s), want 3", k, why)
	}
	// a straight line: d is 0 everywhere, no knee
	if k, why := Kneedle([]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1); k != -1 || !strings.Contains(why, "no knee") {
		t.Errorf("line: %d %s", k, why)
	}
	// a gentle curve whose difference never clears the threshold: y =
	// x^1.2 on 1…5 has d at most 0.05 < S/(n−1) = 0.25
	var ys []float64
	for x := 1.0; x <= 5; x++ {
		ys = append(ys, math.Pow(x, 1.2))
	}
	if k, _ := Kneedle([]float64{1, 2, 3, 4, 5}, ys, 1); k != -1 {
		t.Errorf("gentle curve: knee %d, want none", k)
	}
	if k, why := Kneedle([]float64{1, 2, 3, 4}, []float64{5, 5, 5, 5}, 1); k != -1 || !strings.Contains(why, "does not change") {
		t.Errorf("flat: %d %s", k, why)
	}
}

// TestKneeNeedsFourLevels: three levels are not enough, whatever their
// shape.
func TestKneeNeedsFourLevels(t *testing.T) {
	pts := []Point{
		{RequestsPerS: 1, Latency: map[string]analyze.F{"e2e_p99_ms": 1}},
		{RequestsPerS: 2, Latency: map[string]analyze.F{"e2e_p99_ms": 1.1}},
		{RequestsPerS: 3, Latency: map[string]analyze.F{"e2e_p99_ms": 9}},
	}
	if k, why := kneeOf(pts); k != nil || !strings.Contains(why, "at least 4") {
		t.Errorf("%+v %s", k, why)
	}
}

// TestPareto: (total tok/s, per-user tok/s) = (100, 50), (200, 40), (150,
// 30), (300, 10), (300, 5): (150, 30) is dominated by (200, 40) and (300,
// 5) by (300, 10); the other three are the frontier. A point without a
// per-user rate (non-streaming) is never on it.
func TestPareto(t *testing.T) {
	pts := []Point{
		{OutputTokensPerS: 100, PerUserTokensPerS: 50},
		{OutputTokensPerS: 200, PerUserTokensPerS: 40},
		{OutputTokensPerS: 150, PerUserTokensPerS: 30},
		{OutputTokensPerS: 300, PerUserTokensPerS: 10},
		{OutputTokensPerS: 300, PerUserTokensPerS: 5},
		{OutputTokensPerS: 400, PerUserTokensPerS: analyze.F(math.NaN())},
	}
	markPareto(pts)
	want := []bool{true, true, false, true, false, false}
	for i, p := range pts {
		if p.Pareto != want[i] {
			t.Errorf("point %d (%v, %v): pareto %v, want %v", i, p.OutputTokensPerS, p.PerUserTokensPerS, p.Pareto, want[i])
		}
	}
}

// TestCost: $2.50 per GPU-hour × 8 GPUs = $20/h = $0.0055556/s; at 1000
// output tok/s a million tokens take 1000 s: $5.5556; at 4000 total tok/s
// $1.3889. Without --gpus the price is the deployment's: $2.50/h at 1000
// tok/s is $0.6944 per million.
func TestCost(t *testing.T) {
	c := costOf(Options{CostPerHour: 2.5, GPUs: 8}, 1000, 4000)
	if !near(float64(c.PerMillionOutput), 20.0/3600/1000*1e6, 1e-9) || !near(float64(c.PerMillionOutput), 5.5556, 1e-4) || !near(float64(c.PerMillionTotal), 1.3889, 1e-4) {
		t.Errorf("%+v", c)
	}
	if c := costOf(Options{CostPerHour: 2.5}, 1000, math.NaN()); !near(float64(c.PerMillionOutput), 0.6944, 1e-4) || !math.IsNaN(float64(c.PerMillionTotal)) {
		t.Errorf("no gpus: %+v", c)
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// run is a hand-made run at a configured concurrency: n requests with
// E2E e2e ms, TPOT tpot ms and TTFT 10 ms; rps achieved, good of n met
// the SLO.
func run(id string, conc float64, n int, e2e, tpot, rps, outTPS float64, good int) *analyze.RunData {
	st := true
	vals := map[*analyze.Metric][]float64{}
	for i := 0; i < n; i++ {
		vals[analyze.E2E] = append(vals[analyze.E2E], e2e)
		vals[analyze.TPOT] = append(vals[analyze.TPOT], tpot)
		vals[analyze.TTFT] = append(vals[analyze.TTFT], 10)
	}
	rd := &analyze.RunData{Run: &formats.Run{RunID: id, Model: "m", Streaming: &st, Concurrency: &conc}, Convention: analyze.Canonical, Streaming: true, Values: vals,
		Report: &analyze.RunReport{RunID: id}}
	rd.Report.Requests.Total = n
	rd.Report.Throughput = analyze.Throughput{RequestsPerS: analyze.F(rps), OutputTokensPerS: analyze.F(outTPS), TotalTokensPerS: analyze.F(2 * outTPS)}
	rd.Report.Goodput = &analyze.Goodput{Good: good, Total: n, Fraction: analyze.F(float64(good) / float64(n))}
	rd.Report.ConfiguredRateRPS = 0
	return rd
}

// TestBuildSweep: side A at concurrency 1, 2, 4, 8 (achieved 1, 2, 3.8,
// 4 req/s; P99 E2E 100, 110, 150, 900 ms) and side B at 1, 2, 4. A's knee:
// xn 0, 1/3, .933, 1; yn 0, .0125, .0625, 1; d 0, .321, .871, 0: the
// local maximum at concurrency 4 (threshold .871 − 1/3) is followed by 0,
// so the knee is concurrency=4. B has three levels: no knee. Capacity at
// 90% from the measured rates (no configured rate): A's attainments 1,
// 1, .95, .5 cross 0.9 between 3.8 and 4 req/s: 3.8 + (0.95 − 0.9)/(0.95
// − 0.5)·0.2 = 3.8222; B's 1, .95, .8 over 1, 2, 3 req/s: 2 + 0.05/0.15 =
// 2.3333, −38.95% against A.
func TestBuildSweep(t *testing.T) {
	a := []*analyze.RunData{
		run("a1", 1, 20, 100, 20, 1, 100, 20), run("a2", 2, 20, 110, 21, 2, 200, 20),
		run("a4", 4, 20, 150, 25, 3.8, 380, 19), run("a8", 8, 20, 900, 50, 4, 400, 10),
	}
	b := []*analyze.RunData{run("b1", 1, 20, 100, 20, 1, 100, 20), run("b2", 2, 20, 120, 22, 2, 200, 19), run("b4", 4, 20, 300, 40, 3, 300, 16)}
	slo := analyze.SLO{Text: "e2e<=200ms", Constraints: []analyze.Constraint{{}}}
	res := Build([]compare.Side{{Label: "A", Runs: a}, {Label: "B", Runs: b}}, Options{Keys: compare.Keys, SLO: slo, Target: 0.9, GPUs: 2, CostPerHour: 1})
	if res == nil || len(res.Series) != 1 || len(res.Series[0].Curves) != 2 {
		t.Fatalf("%+v", res)
	}
	ca, cb := res.Series[0].Curves[0], res.Series[0].Curves[1]
	if ca.Knee == nil || ca.Knee.Load != "concurrency=4, rate=?" || ca.Knee.E2EP99Ms != 150 {
		t.Errorf("A knee %+v %s", ca.Knee, ca.KneeWhy)
	}
	if cb.Knee != nil || !strings.Contains(cb.KneeWhy, "at least 4") {
		t.Errorf("B knee %+v %s", cb.Knee, cb.KneeWhy)
	}
	if p := ca.Points[3]; p.PerUserTokensPerS != 20 || p.OutputTokensPerSPerGPU != 200 || !near(float64(p.Cost.PerMillionOutput), 2.0/3600/400*1e6, 1e-9) {
		t.Errorf("A at concurrency 8: %+v", p)
	}
	if !near(float64(ca.Capacity.RateRPS), 3.8+0.05/0.45*0.2, 1e-9) || !near(float64(cb.Capacity.RateRPS), 2+0.05/0.15, 1e-9) {
		t.Errorf("capacities %v %v", ca.Capacity.RateRPS, cb.Capacity.RateRPS)
	}
	rows := res.Series[0].Capacity
	if len(rows) != 2 || !near(float64(rows[1].Change), (2+0.05/0.15)/(3.8+0.05/0.45*0.2)-1, 1e-12) {
		t.Errorf("capacity rows %+v", rows)
	}
	// one side with one level and no other side with two: no sweep
	if r := Build([]compare.Side{{Label: "A", Runs: a[:1]}, {Label: "B", Runs: b[:1]}}, Options{Keys: compare.Keys}); r != nil {
		t.Errorf("single levels: %+v", r)
	}
}

// TestKneePastSaturation: past saturation the achieved rate falls (1, 2,
// 3, 4, then 3.5 at the highest load): Kneedle runs over the four rising
// levels only; with one fewer rising level there is no knee, and the
// reason names the level where the rate stopped rising.
func TestKneePastSaturation(t *testing.T) {
	mk := func(load string, rps, e2e float64) Point {
		return Point{Load: load, RequestsPerS: analyze.F(rps), Latency: map[string]analyze.F{"e2e_p99_ms": analyze.F(e2e)}}
	}
	pts := []Point{mk("c1", 1, 1), mk("c2", 2, 1.1), mk("c4", 3, 1.2), mk("c8", 4, 1.5), mk("c16", 3.5, 9)}
	// over the first four: xn 0, 1/3, 2/3, 1; yn 0, .2, .4, 1; d 0, .133,
	// .267, 0: the local maximum at c4 (threshold .267 − 1/3 < 0) never
	// clears: no knee. Add a level that keeps rising to 5 req/s at 5: d at
	// c8 is then .75 − .125 = .625, threshold .375, followed by 0.
	if k, why := kneeOf(pts); k != nil || !strings.Contains(why, "no knee") {
		t.Errorf("folded: %+v %s", k, why)
	}
	pts = []Point{mk("c1", 1, 1), mk("c2", 2, 1.1), mk("c4", 3, 1.2), mk("c8", 4, 1.5), mk("c16", 5, 5), mk("c32", 4.5, 20)}
	if k, why := kneeOf(pts); k == nil || k.Load != "c8" {
		t.Errorf("knee %+v %s, want c8 (c32 past saturation left out)", k, why)
	}
	if k, why := kneeOf(pts[:3:3]); k != nil || !strings.Contains(why, "at least 4") {
		t.Errorf("%+v %s", k, why)
	}
	pts = []Point{mk("c1", 1, 1), mk("c2", 2, 1.1), mk("c4", 3, 1.2), mk("c8", 2.5, 9), mk("c16", 2, 20)}
	if k, why := kneeOf(pts); k != nil || !strings.Contains(why, "stops rising at c8") {
		t.Errorf("%+v %s", k, why)
	}
}
