package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
)

// Timeline is the post-incident view of one run: per-request latencies
// at their start, the time windows' P99 over them, failures at their time
// with their status, and the requests in flight with the stretches that
// are counted only through a bound on their end drawn apart.
//
// X is wall-clock time as Unix seconds when the run is on the Unix clock
// (Wall), else seconds since the run's first start. Latencies in ms.
type Timeline struct {
	Wall bool
	// T0Ns is the run's first start (ns, in its clock).
	T0Ns int64
	// TTFT and E2E are the counted requests' values at their start
	// (thinned by Scatter).
	TTFT, E2E []XY
	// Dispatch is the counted requests' dispatch delay (actual − intended
	// start, ms) at their start in an open-loop (request-rate) run whose
	// file records intended starts; empty otherwise. Zero and negative delays (sent on time, or early)
	// are left out of the log-scale panel.
	Dispatch []XY
	// Failed are the failed, cancelled and empty requests at their start.
	Failed []FailedPoint
	// WindowWidthS is the width of the windows whose TTFT and E2E P99 are
	// WindowTTFT and WindowE2E: per window with requests, two points (its
	// start and end) at the P99, or at the window's max where it holds
	// fewer than 100 values (Few).
	WindowWidthS          float64
	WindowTTFT, WindowE2E []WindowSegment
	// InFlight is the step function of requests in flight ((t, count),
	// each holding until the next point, ending at 0) and Bounded the part
	// of it counted only through a bound on the request's end; both at
	// most MaxInFlightSteps points (the maximum within each bin beyond).
	InFlight, Bounded []XY
	// MaxInFlight is the largest count; Unknown the requests without a
	// recorded end; Requests those with a start.
	MaxInFlight, Unknown, Requests int
}

// FailedPoint is a request that did not complete, at its start: Y is how
// long the client waited (its recorded duration, else the bound its
// in-flight count used, Bounded true; NaN when neither is known).
type FailedPoint struct {
	X, Y    float64
	Bounded bool
	Status  string
	Code    string
}

// WindowSegment is one window's P99 (or max, when Few) from X0 to X1.
type WindowSegment struct {
	X0, X1, Y float64
	Few       bool
}

// BuildTimeline assembles the timeline of rd's run: its windows are ws
// when given (the report's --window), else computed with the width
// analyze.AutoWindowNs picks for the run's span; timeoutNs bounds
// requests without a recorded end in open-loop runs (0: unknown). ok is
// false when no request has a start time.
func BuildTimeline(rd *analyze.RunData, ws *analyze.WindowsReport, timeoutNs int64) (tl Timeline, ok bool, err error) {
	steps, res, t0, ok := rd.InFlight(timeoutNs)
	if !ok {
		return tl, false, nil
	}
	reqs := rd.Requests
	tl.Wall = rd.Run.ClockDomain == formats.ClockUnix
	tl.T0Ns = t0
	x := func(ns int64) float64 {
		if tl.Wall {
			return float64(ns) / 1e9
		}
		return float64(ns-t0) / 1e9
	}
	idx := make([]int, 0, len(reqs))
	for i := range reqs {
		if reqs[i].HasStart {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return reqs[idx[a]].StartNs < reqs[idx[b]].StartNs })
	tl.Requests, tl.Unknown = len(idx), res.Unknown
	var ts, ttft, e2e, dts, dd []float64
	// an open-loop run's lateness against its schedule; a closed loop's
	// intended start is when a slot freed, its delay the tool's own
	// overhead (analyze/CONVENTIONS.md, tokentrace-schedule)
	openLoop := analyze.OpenLoop(rd.Run)
	for _, i := range idx {
		m := &reqs[i]
		switch {
		case m.Counted:
			ts = append(ts, x(m.StartNs))
			ttft = append(ttft, m.TTFTMs)
			e2e = append(e2e, m.E2EMs)
			if openLoop && m.DispatchDelayMs > 0 {
				dts, dd = append(dts, x(m.StartNs)), append(dd, m.DispatchDelayMs)
			}
		case m.Status == formats.StatusError || m.Status == formats.StatusCancelled || m.Status == formats.StatusEmpty:
			p := FailedPoint{X: x(m.StartNs), Y: math.NaN(), Status: m.Status, Code: m.Error.Code}
			if m.EndOffsetNs >= 0 {
				p.Y = float64(m.EndOffsetNs) / 1e6
			} else if res.Rule[i] != formats.EndRecorded {
				p.Y, p.Bounded = float64(res.EndNs[i]-m.StartNs)/1e6, true
			}
			tl.Failed = append(tl.Failed, p)
		}
	}
	tl.TTFT = Scatter(ts, ttft, MaxScatterPoints)
	tl.E2E = Scatter(ts, e2e, MaxScatterPoints)
	if len(dd) > 0 {
		tl.Dispatch = Scatter(dts, dd, MaxScatterPoints)
	}
	if ws == nil {
		from, to, _ := rd.Span()
		if ws, err = rd.Windows(analyze.AutoWindowNs(to-from, len(rd.Requests)), false, analyze.SLO{}, timeoutNs); err != nil {
			return tl, false, err
		}
	}
	if ws != nil {
		tl.WindowWidthS = ws.WidthS
		for _, w := range ws.Items {
			x0, x1 := x(w.StartNs), x(w.StartNs)+ws.WidthS
			if from, to, ok := rd.Span(); ok && ws.WidthS*1e9 > float64(to-from) {
				x0, x1 = x(max(w.StartNs, from)), x(to) // one window wider than the run
			}
			for _, s := range []struct {
				st  analyze.WindowStat
				dst *[]WindowSegment
			}{{w.TTFT, &tl.WindowTTFT}, {w.E2E, &tl.WindowE2E}} {
				if s.st.N == 0 {
					continue
				}
				seg := WindowSegment{X0: x0, X1: x1, Y: float64(s.st.P99)}
				if math.IsNaN(seg.Y) {
					seg.Y, seg.Few = float64(s.st.Max), true
				}
				*s.dst = append(*s.dst, seg)
			}
		}
	}
	var all, bnd []XY
	for _, s := range steps {
		all = append(all, XY{x(s.TimeNs), float64(s.Count)})
		bnd = append(bnd, XY{x(s.TimeNs), float64(s.Bounded)})
		tl.MaxInFlight = max(tl.MaxInFlight, s.Count)
	}
	tl.InFlight = thinSteps(all, MaxInFlightSteps)
	tl.Bounded = thinSteps(bnd, MaxInFlightSteps)
	return tl, true, nil
}

// thinSteps keeps a step function within maxSteps points: beyond it, the
// span is cut into maxSteps/2 equal bins and each bin's point is the
// largest value within it (spikes survive), ending with the last point.
func thinSteps(pts []XY, maxSteps int) []XY {
	if maxSteps <= 0 || len(pts) <= maxSteps || len(pts) < 2 {
		return pts
	}
	bins := maxSteps / 2
	t0, t1 := pts[0].X, pts[len(pts)-1].X
	width := (t1 - t0) / float64(bins)
	out := make([]XY, 0, bins+1)
	prev := 0.0
	j := 0
	for b := 0; b < bins; b++ {
		lo, hi := t0+float64(b)*width, t0+float64(b+1)*width
		mx := prev
		for j < len(pts) && (pts[j].X < hi || b == bins-1 && pts[j].X < t1) {
			mx = math.Max(mx, pts[j].Y)
			prev = pts[j].Y
			j++
		}
		out = append(out, XY{lo, mx})
	}
	return append(out, pts[len(pts)-1])
}

// legendWidth is the column beside the panels that holds the legend.
const legendWidth = 2.6 * vg.Inch

// niceDuration writes a width in seconds as Go does, without zero units:
// "10m", "1h30m", "15s".
func niceDuration(sec float64) string {
	s := time.Duration(sec * 1e9).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// timeAxis sets p's X axis to wall-clock time in loc (wall) or seconds
// from the first start, from x0 to x1.
func timeAxis(p *plot.Plot, wall bool, loc *time.Location, x0, x1 float64, label bool) {
	p.X.Min, p.X.Max = x0, x1
	if !wall {
		if label {
			p.X.Label.Text = "time since the first request (s)"
		}
		return
	}
	p.X.Tick.Marker = clockTicks{loc: loc}
	if label {
		t := time.Unix(int64(x0), 0).In(loc)
		p.X.Label.Text = fmt.Sprintf("time (%s, %s)", loc, t.Format("2006-01-02"))
	}
}

// clockTicks places ticks at round clock times in loc: the smallest step
// of 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1 d
// giving at most 8 ticks, aligned on the zone's clock.
type clockTicks struct{ loc *time.Location }

func (c clockTicks) Ticks(min, max float64) []plot.Tick {
	steps := []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if (max-min)/s <= 8 {
			step = s
			break
		}
	}
	if (max-min)/step > 8 { // beyond 8 days: whole days, at most 8 ticks
		step = math.Ceil((max-min)/8/86400) * 86400
	}
	_, off := time.Unix(int64(min), 0).In(c.loc).Zone()
	first := math.Ceil((min+float64(off))/step)*step - float64(off)
	layout := "15:04"
	switch {
	case step < 60:
		layout = "15:04:05"
	case step >= 86400 || max-min > 86400:
		layout = "Jan 2 15:04"
	}
	var out []plot.Tick
	for t := first; t <= max+1e-9; t += step {
		out = append(out, plot.Tick{Value: t, Label: time.Unix(int64(math.Round(t)), 0).In(c.loc).Format(layout)})
	}
	return out
}

var (
	orange = color.RGBA{R: 230, G: 140, B: 20, A: 255}
	amber  = color.NRGBA{R: 240, G: 150, B: 30, A: 150}
)

// failColor is the color of a request's status on the timeline.
func failColor(status string) color.Color {
	switch status {
	case formats.StatusCancelled:
		return orange
	case formats.StatusEmpty:
		return grey
	}
	return red
}

func (set *Set) timeline(in Input, slug string) error {
	tl, ok, err := BuildTimeline(in.Data, in.Report.Windows, in.TimeoutNs)
	if err != nil {
		return err
	}
	if !ok {
		set.Skipped = append(set.Skipped, Skip{Kind: KindTimeline, Run: in.label(), Reason: "no request start times in the source"})
		return nil
	}
	loc := in.location()
	top := newPlot("Timeline: "+in.label(), "", "latency (ms), log scale")
	leg := plot.NewLegend()
	leg.TextStyle.Font.Size = 8
	leg.ThumbnailWidth = 0.35 * vg.Centimeter
	var d strings.Builder
	fmt.Fprintf(&d, "# timeline %q: x = %s; windows %g s; requests %d; max in flight %d; unknown end %d\n",
		in.label(), map[bool]string{true: "Unix s (" + loc.String() + ")", false: "s since the first start"}[tl.Wall], tl.WindowWidthS, tl.Requests, tl.MaxInFlight, tl.Unknown)
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, s := range [][]XY{tl.TTFT, tl.E2E, tl.Dispatch} {
		for _, q := range s {
			if finite(q.Y) && q.Y > 0 {
				minY, maxY = math.Min(minY, q.Y), math.Max(maxY, q.Y)
			}
		}
	}
	for _, f := range tl.Failed {
		if finite(f.Y) && f.Y > 0 {
			minY, maxY = math.Min(minY, f.Y), math.Max(maxY, f.Y)
		}
	}
	logY := maxY > minY
	if logY {
		top.Y.Scale = plot.LogScale{}
		top.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	} else {
		top.Y.Label.Text = "latency (ms)"
		fmt.Fprintf(&d, "y axis linear (no positive spread)\n")
		if math.IsInf(minY, 1) {
			minY = 1
		}
	}
	bottomY := minY / 2
	clampPos := func(y float64) float64 {
		switch {
		case logY && (!finite(y) || y <= 0):
			return bottomY // unknown (or 0): drawn at the bottom
		case !finite(y):
			return 0
		}
		return y
	}
	clamp := func(s []XY) []XY {
		out := make([]XY, 0, len(s))
		for _, q := range s {
			out = append(out, XY{q.X, clampPos(q.Y)})
		}
		return out
	}
	for i, s := range []struct {
		name string
		pts  []XY
		win  []WindowSegment
	}{{"TTFT", tl.TTFT, tl.WindowTTFT}, {"E2E", tl.E2E, tl.WindowE2E}} {
		c := seriesColor(i)
		if len(s.pts) > 0 {
			sc, err := points(clamp(s.pts), c, draw.CircleGlyph{}, 1.8)
			if err != nil {
				return err
			}
			top.Add(sc)
			leg.Add(fmt.Sprintf("%s (%d requests)", s.name, len(s.pts)), sc)
		}
		var full, few *plotter.Line
		for _, w := range s.win {
			l, err := line([]XY{{w.X0, clampPos(w.Y)}, {w.X1, clampPos(w.Y)}}, c, 2.4, nil)
			if err != nil {
				return err
			}
			if w.Few {
				l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
				l.Width = 1.6
				few = l
			} else {
				full = l
			}
			top.Add(l)
		}
		width := niceDuration(tl.WindowWidthS)
		if full != nil {
			leg.Add(fmt.Sprintf("%s P99, %s windows", s.name, width), full)
		}
		if few != nil {
			leg.Add(fmt.Sprintf("%s max, %s windows <100 req.", s.name, width), few)
		}
	}
	if len(tl.Dispatch) > 0 {
		// how late each request was sent against its schedule: a stall of
		// the load generator shows as a ramp here while E2E stays flat
		sc, err := points(clamp(tl.Dispatch), seriesColor(2), draw.TriangleGlyph{}, 1.8)
		if err != nil {
			return err
		}
		top.Add(sc)
		leg.Add(fmt.Sprintf("dispatch delay (%d sent late)", len(tl.Dispatch)), sc)
		fmt.Fprintf(&d, "dispatch delay: %d requests sent after their intended start\n", len(tl.Dispatch))
	}
	if len(tl.Failed) > 0 {
		byStatus := map[string][]XY{}
		var order []string
		var bounded []XY
		for _, f := range tl.Failed {
			key := f.Status
			if f.Code != "" {
				key += " " + f.Code
			}
			if _, ok := byStatus[key]; !ok {
				order = append(order, key)
			}
			byStatus[key] = append(byStatus[key], XY{f.X, clampPos(f.Y)})
			if f.Bounded {
				bounded = append(bounded, XY{f.X, clampPos(f.Y)})
			}
		}
		sort.Strings(order)
		for _, k := range order {
			status, _, _ := strings.Cut(k, " ")
			sc, err := points(byStatus[k], failColor(status), draw.CrossGlyph{}, 3.5)
			if err != nil {
				return err
			}
			top.Add(sc)
			leg.Add(fmt.Sprintf("%s (%d) at its start", k, len(byStatus[k])), sc)
		}
		if len(bounded) > 0 {
			sc, err := points(bounded, red, draw.RingGlyph{}, 4.5)
			if err != nil {
				return err
			}
			top.Add(sc)
			leg.Add("waited ≤ y (end not recorded)", sc)
		}
		if len(tl.Failed) <= 40 {
			var txt []string
			var at []XY
			for _, f := range tl.Failed {
				if f.Code != "" {
					txt = append(txt, f.Code)
				} else {
					txt = append(txt, f.Status)
				}
				at = append(at, XY{f.X, clampPos(f.Y)})
			}
			lb, err := labels(at, txt, 7)
			if err != nil {
				return err
			}
			for i := range lb.TextStyle {
				lb.TextStyle[i].Color = red
			}
			top.Add(lb)
		}
	}
	bottom := newPlot("", "", "requests in flight")
	if len(tl.InFlight) > 0 {
		l, err := line(tl.InFlight, black, 1.2, nil)
		if err != nil {
			return err
		}
		l.StepStyle = plotter.PostStep
		bottom.Add(l)
		leg.Add("in flight", l)
	}
	if tl.Unknown > 0 && len(tl.Bounded) > 0 {
		poly, err := stepArea(tl.Bounded)
		if err != nil {
			return err
		}
		bottom.Add(poly)
		leg.Add(fmt.Sprintf("of them, end not recorded (%d)", tl.Unknown), poly)
	}
	bottom.Y.Min = 0
	bottom.Y.Max = math.Max(1, float64(tl.MaxInFlight)*1.15)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, s := range [][]XY{tl.TTFT, tl.E2E, tl.InFlight} {
		for _, q := range s {
			xmin, xmax = math.Min(xmin, q.X), math.Max(xmax, q.X)
		}
	}
	for _, f := range tl.Failed {
		xmin, xmax = math.Min(xmin, f.X), math.Max(xmax, f.X)
	}
	timeAxis(top, tl.Wall, loc, xmin, xmax, false)
	timeAxis(bottom, tl.Wall, loc, xmin, xmax, true)
	for _, s := range []struct {
		name string
		pts  []XY
	}{{analyze.TTFT.Name, tl.TTFT}, {analyze.E2E.Name, tl.E2E}, {"in_flight", tl.InFlight}, {"in_flight_bounded", tl.Bounded}} {
		dumpXY(&d, s.name, s.pts)
	}
	fmt.Fprintf(&d, "failed %d\n", len(tl.Failed))
	for _, f := range tl.Failed {
		fmt.Fprintf(&d, "%s\t%s\t%s %s bounded=%v\n", g(f.X), g(f.Y), f.Status, f.Code, f.Bounded)
	}
	for _, s := range []struct {
		name string
		w    []WindowSegment
	}{{"window_p99_ttft", tl.WindowTTFT}, {"window_p99_e2e", tl.WindowE2E}} {
		fmt.Fprintf(&d, "%s %d\n", s.name, len(s.w))
		for _, w := range s.w {
			fmt.Fprintf(&d, "%s\t%s\t%s few=%v\n", g(w.X0), g(w.X1), g(w.Y), w.Few)
		}
	}
	f := &Figure{Kind: KindTimeline, Name: "timeline-" + slug, Title: top.Title.Text, Run: in.label(), Width: Width + legendWidth, Height: 6 * vg.Inch, Data: d.String(),
		draw: func(dc draw.Canvas) { drawPanels(dc, []*plot.Plot{top, bottom}, []float64{2, 1}, &leg) }}
	set.Figures = append(set.Figures, f)
	return nil
}

// stepArea is the filled area under a step function.
func stepArea(pts []XY) (*plotter.Polygon, error) {
	var poly plotter.XYs
	poly = append(poly, plotter.XY{X: pts[0].X, Y: 0})
	for i, p := range pts {
		if i > 0 {
			poly = append(poly, plotter.XY{X: p.X, Y: pts[i-1].Y})
		}
		poly = append(poly, plotter.XY{X: p.X, Y: p.Y})
	}
	poly = append(poly, plotter.XY{X: pts[len(pts)-1].X, Y: 0})
	pg, err := plotter.NewPolygon(poly)
	if err != nil {
		return nil, err
	}
	pg.Color = amber
	pg.LineStyle.Width = 0
	return pg, nil
}

// drawPanels stacks plots top to bottom with the given height weights,
// their plot areas aligned, and the legend in a column on the right,
// outside every panel's data.
func drawPanels(dc draw.Canvas, ps []*plot.Plot, weights []float64, leg *plot.Legend) {
	right := dc.Max.X - legendWidth
	area := dc
	area.Max.X = right
	total := 0.0
	for _, w := range weights {
		total += w
	}
	grid := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		grid[i] = []*plot.Plot{p}
	}
	cs := plot.Align(grid, draw.Tiles{Rows: len(ps), Cols: 1}, area)
	h := area.Max.Y - area.Min.Y
	y := area.Max.Y
	for i, p := range ps {
		ph := vg.Length(weights[i]/total) * h
		c := area
		c.Max.Y, c.Min.Y = y, y-ph
		c.Min.X, c.Max.X = cs[i][0].Min.X, cs[i][0].Max.X
		p.Draw(c)
		y -= ph
	}
	if leg != nil {
		lc := dc
		lc.Min.X = right + 0.15*vg.Inch
		lc.Max.Y -= 0.5 * vg.Inch
		leg.Top, leg.Left = true, true
		leg.Draw(lc)
	}
}

// windowsFigure draws one run's windows: latency percentiles, requests,
// output throughput and load, one panel each.
func (set *Set) windowsFigure(in Input, slug string) error {
	ws := in.Report.Windows
	if ws == nil {
		from, to, ok := in.Data.Span()
		if !ok {
			set.Skipped = append(set.Skipped, Skip{Kind: KindWindows, Run: in.label(), Reason: "no request start times in the source"})
			return nil
		}
		var err error
		if ws, err = in.Data.Windows(analyze.AutoWindowNs(to-from, len(in.Data.Requests)), false, analyze.SLO{}, in.TimeoutNs); err != nil {
			return err
		}
	}
	if ws == nil || len(ws.Items) == 0 {
		set.Skipped = append(set.Skipped, Skip{Kind: KindWindows, Run: in.label(), Reason: "no request start times in the source"})
		return nil
	}
	loc := in.location()
	wall := in.Data.Run.ClockDomain == formats.ClockUnix
	var t0 int64
	if in.Report.FirstStartNs != nil {
		t0 = *in.Report.FirstStartNs
	}
	x := func(ns int64) float64 {
		if wall {
			return float64(ns) / 1e9
		}
		return float64(ns-t0) / 1e9
	}
	// each window is drawn over its part within the run (a first or last
	// window, or one wider than the run, reaches past it)
	from, to, _ := in.Data.Span()
	widthNs := int64(math.Round(ws.WidthS * 1e9))
	end := func(w analyze.Window) int64 { // the window's end, held at the int64 range
		if e := w.StartNs + widthNs; e >= w.StartNs {
			return e
		}
		return math.MaxInt64
	}
	xc := func(w analyze.Window) float64 {
		a, b := max(w.StartNs, from), min(end(w), to)
		if b <= a {
			return x(w.StartNs) + ws.WidthS/2
		}
		return (x(a) + x(b)) / 2
	}
	barS := min(ws.WidthS, float64(to-from)/1e9)
	if barS <= 0 {
		barS = ws.WidthS
	}
	width := niceDuration(ws.WidthS)
	lat := newPlot(fmt.Sprintf("Windows of %s by %s: %s", width, ws.By, in.label()), "", "latency (ms)")
	cnt := newPlot("", "", "requests")
	tok := newPlot("", "", "output tok/s")
	load := newPlot("", "", "in flight")
	leg := plot.NewLegend()
	leg.TextStyle.Font.Size = 8
	leg.ThumbnailWidth = 0.35 * vg.Centimeter
	var d strings.Builder
	fmt.Fprintf(&d, "# windows %q: width %g s by %s; x0 ttft_p50 ttft_p99 e2e_p99 (max* when few) started completed failed out_tok_s inflight_mean inflight_max\n", in.label(), ws.WidthS, ws.By)
	type series struct {
		name  string
		get   func(w analyze.Window) (float64, bool) // value, few
		color color.Color
		dash  []vg.Length
	}
	stat := func(s func(w analyze.Window) analyze.WindowStat, p func(st analyze.WindowStat) analyze.F) func(w analyze.Window) (float64, bool) {
		return func(w analyze.Window) (float64, bool) {
			st := s(w)
			if st.N == 0 {
				return math.NaN(), false
			}
			if v := float64(p(st)); !math.IsNaN(v) {
				return v, false
			}
			return float64(st.Max), true
		}
	}
	ttft := func(w analyze.Window) analyze.WindowStat { return w.TTFT }
	e2e := func(w analyze.Window) analyze.WindowStat { return w.E2E }
	p50 := func(st analyze.WindowStat) analyze.F { return st.P50 }
	p99 := func(st analyze.WindowStat) analyze.F { return st.P99 }
	lats := []series{
		{"TTFT P50", stat(ttft, p50), seriesColor(0), []vg.Length{vg.Points(2), vg.Points(2)}},
		{"TTFT P99", stat(ttft, p99), seriesColor(0), nil},
		{"E2E P99", stat(e2e, p99), seriesColor(1), nil},
	}
	anyLat := false
	for _, s := range lats {
		var pts, few []XY
		for _, w := range ws.Items {
			v, f := s.get(w)
			if !finite(v) || v <= 0 {
				continue
			}
			pts = append(pts, XY{xc(w), v})
			if f {
				few = append(few, XY{xc(w), v})
			}
		}
		if len(pts) == 0 {
			continue
		}
		anyLat = true
		l, err := line(pts, s.color, 1.6, s.dash)
		if err != nil {
			return err
		}
		sc, err := points(pts, s.color, draw.CircleGlyph{}, 2.2)
		if err != nil {
			return err
		}
		lat.Add(l, sc)
		leg.Add(s.name, l, sc)
		if len(few) > 0 {
			r, err := points(few, s.color, draw.RingGlyph{}, 4)
			if err != nil {
				return err
			}
			lat.Add(r)
		}
	}
	if anyLat {
		lat.Y.Scale = plot.LogScale{}
		lat.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		lat.Y.Label.Text = "latency (ms), log scale"
		leg.Add("ring: max (too few values)", &ringThumb{})
	} else {
		lat.Y.Min, lat.Y.Max = 0, 1 // no positive latency to draw
	}
	var okBars, failBars, tokPts, loadMean, loadMax []XY
	for _, w := range ws.Items {
		xc := xc(w)
		okBars = append(okBars, XY{xc, float64(w.Completed)})
		failBars = append(failBars, XY{xc, float64(w.Failed + w.Cancelled + w.Empty)})
		if finite(float64(w.OutputTokensPerS)) {
			tokPts = append(tokPts, XY{xc, float64(w.OutputTokensPerS)})
		}
		if finite(float64(w.InFlightMean)) {
			loadMean = append(loadMean, XY{xc, float64(w.InFlightMean)})
		}
		loadMax = append(loadMax, XY{xc, float64(w.InFlightMax)})
		fmt.Fprintf(&d, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\n", g(x(w.StartNs)), g(float64(w.TTFT.P50)), g(float64(w.TTFT.P99)), g(float64(w.E2E.P99)),
			w.Started, w.Completed, w.Failed+w.Cancelled+w.Empty, g(float64(w.OutputTokensPerS)), g(float64(w.InFlightMean)), w.InFlightMax)
	}
	okB, err := windowBars(okBars, nil, barS, seriesColor(2))
	if err != nil {
		return err
	}
	failB, err := windowBars(failBars, okBars, barS, red)
	if err != nil {
		return err
	}
	cnt.Add(okB, failB)
	leg.Add("completed", okB)
	leg.Add("failed, cancelled or empty", failB)
	cnt.Y.Min = 0
	if len(tokPts) > 0 {
		l, err := line(tokPts, seriesColor(3), 1.6, nil)
		if err != nil {
			return err
		}
		tok.Add(l)
		leg.Add("output tok/s", l)
	}
	tok.Y.Min = 0
	if len(loadMean) > 0 {
		l, err := line(loadMean, black, 1.4, nil)
		if err != nil {
			return err
		}
		mx, err := points(loadMax, black, draw.BoxGlyph{}, 1.8)
		if err != nil {
			return err
		}
		load.Add(l, mx)
		leg.Add("in flight, mean", l)
		leg.Add("in flight, max", mx)
	}
	load.Y.Min = 0
	x0 := x(max(ws.Items[0].StartNs, from))
	x1 := x(min(end(ws.Items[len(ws.Items)-1]), to))
	if x1 <= x0 {
		x0, x1 = x(ws.Items[0].StartNs), x(ws.Items[len(ws.Items)-1].StartNs)+ws.WidthS
	}
	for i, p := range []*plot.Plot{lat, cnt, tok, load} {
		timeAxis(p, wall, loc, x0, x1, i == 3)
	}
	f := &Figure{Kind: KindWindows, Name: "windows-" + slug, Title: lat.Title.Text, Run: in.label(), Width: Width + legendWidth, Height: 7 * vg.Inch, Data: d.String(),
		draw: func(dc draw.Canvas) {
			drawPanels(dc, []*plot.Plot{lat, cnt, tok, load}, []float64{2, 1, 1, 1}, &leg)
		}}
	set.Figures = append(set.Figures, f)
	return nil
}

// windowBars draws one box per window of width widthS, from the base
// (below, per window; nil: 0) up by the value: stacked bars.
func windowBars(vals, below []XY, widthS float64, c color.Color) (*plotter.Polygon, error) {
	var rings []plotter.XYer
	for i, v := range vals {
		if v.Y <= 0 {
			continue
		}
		b := 0.0
		if below != nil {
			b = below[i].Y
		}
		lo, hi := v.X-widthS*0.42, v.X+widthS*0.42
		rings = append(rings, plotter.XYs{{X: lo, Y: b}, {X: hi, Y: b}, {X: hi, Y: b + v.Y}, {X: lo, Y: b + v.Y}})
	}
	if len(rings) == 0 {
		rings = append(rings, plotter.XYs{{X: vals[0].X, Y: 0}, {X: vals[0].X, Y: 0}, {X: vals[0].X, Y: 0}})
	}
	pg, err := plotter.NewPolygon(rings...)
	if err != nil {
		return nil, err
	}
	pg.Color = c
	pg.LineStyle.Width = 0
	return pg, nil
}

// ringThumb is a legend thumbnail of a ring glyph.
type ringThumb struct{}

func (ringThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(draw.GlyphStyle{Color: black, Radius: 3.5, Shape: draw.RingGlyph{}}, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2})
}
