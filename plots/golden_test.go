package plots_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/internal/golden"
	"github.com/tokentrace/tokentrace/plots"
)

// TestGoldenPlots draws every plot kind from real testdata runs and checks
// each SVG and the numbers behind it (NAME.txt) against golden files, the
// list of skipped plots, and that a second rendering (SVG, PDF, PNG) is
// byte-identical.
func TestGoldenPlots(t *testing.T) {
	_, inputs, slo := load(t, goldenSLO, nil, goldenRuns...)
	set, err := plots.Build(inputs, slo, plots.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[plots.Kind]int{}
	var names []string
	for _, f := range set.Figures {
		kinds[f.Kind]++
		names = append(names, f.Name)
		var a, b bytes.Buffer
		if err := f.Render(&a, "svg"); err != nil {
			t.Fatal(err)
		}
		if err := f.Render(&b, "svg"); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two SVG renderings differ", f.Name)
		}
		golden.Check(t, "testdata/golden/"+f.Name+".svg", a.Bytes())
		golden.Check(t, "testdata/golden/"+f.Name+".txt", []byte(f.Data))
		var p1, p2 bytes.Buffer
		if err := f.Render(&p1, "pdf"); err != nil {
			t.Fatal(err)
		}
		if err := f.Render(&p2, "pdf"); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p1.Bytes(), p2.Bytes()) || !bytes.HasPrefix(p1.Bytes(), []byte("%PDF-")) {
			t.Errorf("%s: PDF renderings differ or are not PDF", f.Name)
		}
		var g1, g2 bytes.Buffer
		if err := f.Render(&g1, "png"); err != nil {
			t.Fatal(err)
		}
		if err := f.Render(&g2, "png"); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g1.Bytes(), g2.Bytes()) || !bytes.HasPrefix(g1.Bytes(), []byte("\x89PNG")) {
			t.Errorf("%s: PNG renderings differ or are not PNG", f.Name)
		}
		if !bytes.Contains(p1.Bytes(), []byte("D:20000101000000")) {
			t.Errorf("%s: PDF creation date is not the fixed PDFDate", f.Name)
		}
	}
	for _, k := range plots.Kinds {
		if kinds[k] == 0 {
			t.Errorf("no %s figure drawn", k)
		}
	}
	var skipped strings.Builder
	for _, s := range set.Skipped {
		skipped.WriteString(s.String() + "\n")
	}
	golden.Check(t, "testdata/golden/skipped.txt", []byte(skipped.String()))
	golden.Check(t, "testdata/golden/figures.txt", []byte(strings.Join(names, "\n")+"\n"))
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The numbers behind the plots, checked against the report and against
// the peers' own published values.
func TestPlotDataAgainstReport(t *testing.T) {
	rep, inputs, slo := load(t, goldenSLO, nil, goldenRuns...)
	aiperf := inputs[0]
	if aiperf.Report.RunID != "qwen3vl30b-local-agent-c2" {
		t.Fatalf("first run %q", aiperf.Report.RunID)
	}

	// CCDF of TTFT: 20 distinct values from 1 down to 1/20; the P99 marker
	// is the report's, which equals AIPerf's own summary p99 (229.026246 ms,
	// SOURCE.md).
	ts, why := plots.Tail(aiperf, analyze.TTFT)
	if why != "" {
		t.Fatal(why)
	}
	if ts.N != 20 || len(ts.Points) != 20 || ts.Points[0].Y != 1 || ts.Points[19].Y != 0.05 {
		t.Fatalf("TTFT CCDF: n %d, %d points, first %v, last %v", ts.N, len(ts.Points), ts.Points[0], ts.Points[19])
	}
	if math.Abs(ts.P99-229.026246) > 1e-6 || ts.P99 != aiperf.Report.Metrics.Of(analyze.TTFT).Value(0.99) {
		t.Fatalf("TTFT P99 marker %v, want AIPerf's 229.026246", ts.P99)
	}
	if ts.Points[0].X != aiperf.Report.Metrics.Of(analyze.TTFT).Min || ts.Points[19].X != aiperf.Report.Metrics.Of(analyze.TTFT).Max {
		t.Fatalf("CCDF ends %v…%v, report min/max %v…%v", ts.Points[0].X, ts.Points[19].X, aiperf.Report.Metrics.Of(analyze.TTFT).Min, aiperf.Report.Metrics.Of(analyze.TTFT).Max)
	}
	// ITL CCDF over all 4490 pooled gaps
	if its, _ := plots.Tail(aiperf, analyze.ITL); its.N != 4490 || its.N != aiperf.Report.Metrics.Of(analyze.ITL).N {
		t.Fatalf("ITL CCDF over %d gaps", its.N)
	}

	// ITL by position: the groups hold every pooled gap once, and gap 1
	// (between the first and second token) is TTST by definition.
	st, ok := plots.ITLByPosition(aiperf.Data.Requests, aiperf.Data.ITL, aiperf.Data.Convention.Percentile)
	if !ok {
		t.Fatal("ITL counts do not add up")
	}
	total := 0
	for _, s := range st {
		total += s.N
	}
	ttst := aiperf.Report.Metrics.Of(analyze.TTST)
	if total != 4490 || st[0].From != 1 || st[0].N != ttst.N || !near(st[0].P50, ttst.Value(0.5)) || !near(st[0].P99, ttst.Value(0.99)) {
		t.Fatalf("ITL by position: %d gaps; gap 1 %+v, TTST n %d P50 %v P99 %v", total, st[0], ttst.N, ttst.Value(0.5), ttst.Value(0.99))
	}

	// Timeline: concurrency 2 (SOURCE.md) never has more than 2 in flight,
	// and the in-flight span is the run's duration (report: 108.95 s, AIPerf
	// benchmark_duration 108.950 s).
	tl, ok, err := plots.BuildTimeline(aiperf.Data, nil, 0)
	if err != nil || !ok {
		t.Fatal("no timeline", err)
	}
	span := tl.InFlight[len(tl.InFlight)-1].X - tl.InFlight[0].X
	if tl.MaxInFlight != 2 || tl.Requests != 20 || len(tl.Failed) != 0 || math.Abs(span-float64(aiperf.Report.Throughput.DurationS)) > 1e-6 {
		t.Fatalf("timeline: max in flight %d, %d requests, %d failed, span %v s (report duration %v s)", tl.MaxInFlight, tl.Requests, len(tl.Failed), span, float64(aiperf.Report.Throughput.DurationS))
	}
	if math.Abs(span-108.95) > 0.01 {
		t.Fatalf("span %v s, AIPerf benchmark_duration 108.950 s", span)
	}

	// Goodput curves: at each configured bound, the report's goodput.
	for i, in := range inputs {
		if in.Data == nil {
			continue
		}
		for _, c := range plots.GoodputCurves(slo, in.Data.Requests) {
			if c.AtLimit != float64(rep.Runs[i].Goodput.Fraction) {
				t.Errorf("%s %s: curve at the bound %v, report goodput %v", in.Report.RunID, c.Text, c.AtLimit, float64(rep.Runs[i].Goodput.Fraction))
			}
			last := c.Points[len(c.Points)-1]
			if last.Y < c.AtLimit {
				t.Errorf("%s %s: curve ends at %v below its value at the bound", in.Report.RunID, c.Text, last.Y)
			}
		}
	}
	// hand-checked: 14 of 20 AIPerf requests good (report text), 92 of 150 LLMPerf
	if rep.Runs[0].Goodput.Good != 14 || rep.Runs[1].Goodput.Good != 92 {
		t.Fatalf("goodput counts %d, %d", rep.Runs[0].Goodput.Good, rep.Runs[1].Goodput.Good)
	}

	// Failed LLMPerf requests have no start: no timeline, listed as skipped.
	set, err := plots.Build(inputs[1:2], slo, []plots.Kind{plots.KindTimeline, plots.KindITLPosition})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Figures) != 0 || len(set.Skipped) != 2 {
		t.Fatalf("LLMPerf: %d figures, skipped %v", len(set.Figures), set.Skipped)
	}
}

func TestGoodputCapacityGolden(t *testing.T) {
	f, err := plots.GoodputCapacity([]float64{8, 1, 2, 4}, []float64{0.5, 1, 0.98, 0.9}, 0.95, 2.75)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/golden/goodput-capacity.svg", b.Bytes())
	golden.Check(t, "testdata/golden/goodput-capacity.txt", []byte(f.Data))
	if !strings.Contains(f.Data, "1\t1\n2\t0.98\n4\t0.9\n8\t0.5\n") {
		t.Fatalf("points not in rate order:\n%s", f.Data)
	}
	// not reached: no capacity line, said in the legend
	f, err = plots.GoodputCapacity([]float64{1, 2}, []float64{1, 0.99}, 0.95, math.NaN())
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := f.Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "not reached in the tested range") {
		t.Fatal("legend does not say the capacity was not reached")
	}
}

// TestTimeline524: the bundled AIPerf run with ten HTTP 524 errors. Every
// failure is drawn at its start, held ≤ 125 s (the next start into its
// slot); the in-flight panel no longer drops to 0 while they hold their
// slots: two requests in flight, both only through a bound, from
// 22:46:12.955 (request 37 starts while 35 still holds its slot) to
// 22:52:28.044 (request 45 takes 41's slot), and the whole figure and its
// data are kept as golden files.
func TestTimeline524(t *testing.T) {
	_, inputs, _ := load(t, "", nil, "../testdata/aiperf/llama31-8b-cloudflare-agent-c2-524errors")
	in := inputs[0]
	tl, ok, err := plots.BuildTimeline(in.Data, nil, 0)
	if err != nil || !ok {
		t.Fatal(err)
	}
	if !tl.Wall || len(tl.Failed) != 10 || tl.Unknown != 10 || tl.MaxInFlight != 2 || tl.WindowWidthS != 600 {
		t.Fatalf("timeline: wall %v, %d failed, unknown %d, max %d, windows %v s", tl.Wall, len(tl.Failed), tl.Unknown, tl.MaxInFlight, tl.WindowWidthS)
	}
	for _, f := range tl.Failed {
		if !f.Bounded || f.Code != "524" || f.Y < 125000 || f.Y > 125200 {
			t.Errorf("failure %+v", f)
		}
	}
	twoBounded := 0.0
	for i, b := range tl.Bounded {
		if b.Y == 2 && i+1 < len(tl.Bounded) {
			twoBounded += tl.Bounded[i+1].X - b.X
			if tl.InFlight[i].Y != 2 {
				t.Errorf("at %v: %v bounded, %v in flight", b.X, b.Y, tl.InFlight[i].Y)
			}
		}
	}
	// start_ns 1785365172955791261 (37) to 1785365548044209140 (45)
	if math.Abs(twoBounded-375.088417879) > 1e-6 {
		t.Errorf("two bounded requests in flight for %v s", twoBounded)
	}
	set, err := plots.Build(inputs, analyze.SLO{}, []plots.Kind{plots.KindTimeline})
	if err != nil || len(set.Figures) != 1 {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := set.Figures[0].Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/golden/timeline-524errors.svg", b.Bytes())
	golden.Check(t, "testdata/golden/timeline-524errors.txt", []byte(set.Figures[0].Data))
}
