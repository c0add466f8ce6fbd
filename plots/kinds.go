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
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// Kind names a kind of plot.
type Kind string

// The plot kinds.
const (
	// KindCCDF: the tail (survival function, log Y) of TTFT, TPOT, ITL and
	// E2E, one file per metric, runs overlaid, P50/P90/P99 marked.
	KindCCDF Kind = "ccdf"
	// KindE2EOSL: E2E against output length per run: the requests, the
	// report's per-bucket P50/P90/P99 and its fit E2E ≈ a + b·N.
	KindE2EOSL Kind = "e2e-osl"
	// KindTimeline: per run, TTFT and E2E against the wall clock with the
	// time windows' P99 over them and failures at their time, over the
	// requests in flight (those with an unrecorded end drawn apart).
	KindTimeline Kind = "timeline"
	// KindITLPosition: per run, P50 and P99 of the token gap against its
	// position in the output.
	KindITLPosition Kind = "itl-position"
	// KindGoodput: per SLO constraint, goodput fraction as that bound moves
	// (the others held), runs overlaid, the configured bound marked.
	KindGoodput Kind = "goodput"
	// KindWindows: per run, the report's time windows (report --window, or
	// a width analyze.AutoWindowNs picks): latency percentiles, requests
	// completed and failed, output tok/s and requests in flight.
	KindWindows Kind = "windows"
)

// Kinds are all plot kinds, in output order.
var Kinds = []Kind{KindCCDF, KindE2EOSL, KindTimeline, KindITLPosition, KindGoodput, KindWindows}

// ParseKinds parses kind names (each item may be a comma-separated list);
// none gives all kinds.
func ParseKinds(list []string) ([]Kind, error) {
	if len(list) == 0 {
		return Kinds, nil
	}
	seen := map[Kind]bool{}
	for _, item := range list {
		for _, s := range strings.Split(item, ",") {
			k := Kind(strings.TrimSpace(s))
			ok := false
			for _, known := range Kinds {
				ok = ok || k == known
			}
			if !ok {
				var names []string
				for _, known := range Kinds {
					names = append(names, string(known))
				}
				return nil, fmt.Errorf("plot kind %q: want %s", k, strings.Join(names, ", "))
			}
			seen[k] = true
		}
	}
	var out []Kind
	for _, k := range Kinds {
		if seen[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

// Input is one run to plot: its report and its per-request data (the same
// Analyzer's, under the report's convention).
type Input struct {
	// Label names the run in legends and file names (default: Report.RunID).
	Label  string
	Report *analyze.RunReport
	Data   *analyze.RunData
	// Location is the zone of the timeline's and windows' wall-clock axes
	// (--tz); nil: UTC. TimeoutNs is the client's request timeout, which
	// bounds requests without a recorded end in open-loop runs (0:
	// unknown; formats.InFlight).
	Location  *time.Location
	TimeoutNs int64
}

func (in Input) location() *time.Location {
	if in.Location == nil {
		return time.UTC
	}
	return in.Location
}

func (in Input) label() string {
	l := in.Label
	if l == "" {
		l = in.Report.RunID
	}
	// a label comes from untrusted names (directories, run ids): control
	// characters are not allowed in XML (SVG), and a bidi override would
	// reverse the text around it, so they become '?' (formats.SafeText)
	return formats.SafeText(l)
}

// Skip is a plot not drawn, and why.
type Skip struct {
	Kind   Kind   `json:"kind"` // "" for all kinds
	Run    string `json:"run,omitempty"`
	Metric string `json:"metric,omitempty"`
	Reason string `json:"reason"`
}

func (s Skip) String() string {
	what := string(s.Kind)
	if what == "" {
		what = "all plots"
	}
	if s.Metric != "" {
		what += " " + s.Metric
	}
	if s.Run != "" {
		what += " of " + s.Run
	}
	return what + ": " + s.Reason
}

// Set is the figures drawn for some runs and the plots skipped.
type Set struct {
	Figures []*Figure
	Skipped []Skip
}

// Build prepares the figures of kinds for inputs (SLO: the goodput
// constraints; empty skips goodput). It draws what each run's data
// supports and lists the rest in Set.Skipped.
func Build(inputs []Input, slo analyze.SLO, kinds []Kind) (*Set, error) {
	set := &Set{}
	slugs := slugger{}
	var perRun []Input // runs with per-request data
	var runSlugs []string
	for _, in := range inputs {
		if summaryOnly(in) {
			set.Skipped = append(set.Skipped, Skip{Run: in.label(), Reason: summaryOnlyReason})
			continue
		}
		perRun = append(perRun, in)
		runSlugs = append(runSlugs, slugs.slug(in.label()))
	}
	for _, k := range kinds {
		var err error
		switch k {
		case KindCCDF:
			err = set.ccdf(perRun)
		case KindGoodput:
			err = set.goodput(perRun, slo)
		default:
			for i, in := range perRun {
				switch k {
				case KindE2EOSL:
					err = set.e2eOSL(in, runSlugs[i])
				case KindTimeline:
					err = set.timeline(in, runSlugs[i])
				case KindITLPosition:
					err = set.itlPosition(in, runSlugs[i])
				case KindWindows:
					err = set.windowsFigure(in, runSlugs[i]) // timeline.go
				}
				if err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return set, nil
}

const summaryOnlyReason = "summary-only run: the source holds the tool's summary statistics, no per-request data"

func summaryOnly(in Input) bool { return in.Report.Requests.Total == 0 || in.Data == nil }

// slugger makes file-name-safe, unique names from run labels.
type slugger map[string]bool

func (s slugger) slug(label string) string {
	var b strings.Builder
	for _, r := range label {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else if !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_') // one per run of other characters
		}
	}
	base := strings.Trim(b.String(), "._")
	if base == "" {
		base = "run"
	}
	out := base
	for n := 2; s[out]; n++ {
		out = fmt.Sprintf("%s-%d", base, n)
	}
	s[out] = true
	return out
}

// TailSeries is one run's CCDF of one metric with the report's P50, P90
// and P99 (under the run's convention and percentile method).
type TailSeries struct {
	Label         string
	N             int
	Points        []XY
	P50, P90, P99 float64
}

// Tail returns the CCDF series of a tail metric x (analyze.Metric.Tail:
// TTFT, TPOT, ITL, E2E) of one run: the report's samples (RunData.Values)
// and percentiles.
func Tail(in Input, x *analyze.Metric) (TailSeries, string) {
	if summaryOnly(in) {
		return TailSeries{}, summaryOnlyReason
	}
	vals := in.Data.Values[x]
	if len(vals) == 0 {
		switch {
		case x.Streaming && !in.Data.Streaming:
			return TailSeries{}, "non-streaming run: " + x.Label + " is undefined"
		case x.Scope == analyze.Pooled:
			return TailSeries{}, "no per-message arrival times in the source, so no token gaps"
		}
		return TailSeries{}, "no completed request with a defined " + x.Label
	}
	sorted := make([]float64, 0, len(vals))
	for _, v := range vals {
		if !math.IsInf(v, 0) { // a failed request counted as +∞ (tokentrace-adjusted): off the axis
			sorted = append(sorted, v)
		}
	}
	if len(sorted) == 0 {
		return TailSeries{}, "every value is +∞ (failed requests under failed_requests infinite)"
	}
	sort.Float64s(sorted)
	s := in.Report.Metrics.Of(x)
	return TailSeries{Label: in.label(), N: len(sorted), Points: CCDF(sorted, MaxCCDFPoints), P50: s.Value(0.5), P90: s.Value(0.9), P99: s.Value(0.99)}, ""
}

func (set *Set) ccdf(inputs []Input) error {
	for _, x := range analyze.Table {
		if !x.Tail || x.Scheduled {
			continue // the schedule-relative E2E is drawn beside E2E
		}
		var series []TailSeries
		for _, in := range inputs {
			ts, why := Tail(in, x)
			if why != "" {
				set.Skipped = append(set.Skipped, Skip{Kind: KindCCDF, Run: in.label(), Metric: x.Label, Reason: why})
				continue
			}
			series = append(series, ts)
			if x == analyze.E2E && len(inputs) == 1 && len(in.Data.Values[analyze.SchedE2E]) > 0 {
				// one run: the same requests measured from their intended starts:
				// the gap between the curves is the coordinated omission
				if sc, why := Tail(in, analyze.SchedE2E); why == "" {
					sc.Label += " · from schedule"
					series = append(series, sc)
				}
			}
		}
		if len(series) == 0 {
			continue
		}
		f, err := ccdfFigure(x.Label, "ccdf-"+x.Name, series)
		if err != nil {
			return err
		}
		set.Figures = append(set.Figures, f)
	}
	return nil
}

func ccdfFigure(metric, name string, series []TailSeries) (*Figure, error) {
	p := newPlot(metric+" tail (CCDF)", metric+" (ms)", "P("+metric+" ≥ x), log scale")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var d strings.Builder
	fmt.Fprintf(&d, "# %s: %s tail; x ms, P(X ≥ x); markers at the report's percentiles\n", name, metric)
	minY := 0.01
	tips := &tipSink{}
	marks := newMarkLabels(8) // every series' labels, laid out together
	for i, s := range series {
		c := seriesColor(i)
		l, err := line(s.Points, c, 1.5, seriesDashes(i))
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PreStep
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", s.Label, s.N), l)
		addLineTip(p, tips, s.Points, fmt.Sprintf("%s (n=%d)\n%s: P50 %s ms · P90 %s ms · P99 %s ms · max %s ms",
			s.Label, s.N, metric, fmtNum(s.P50), fmtNum(s.P90), fmtNum(s.P99), fmtNum(s.Points[len(s.Points)-1].X)))
		var mk []XY
		var txt, tipText []string
		for _, q := range []struct {
			name string
			v, y float64
		}{{"P50", s.P50, 0.5}, {"P90", s.P90, 0.1}, {"P99", s.P99, 0.01}} {
			if finite(q.v) {
				mk = append(mk, XY{q.v, q.y})
				txt = append(txt, q.name+" "+fmtNum(q.v))
				tipText = append(tipText, fmt.Sprintf("%s (n=%d)\n%s %s = %s ms", s.Label, s.N, metric, q.name, fmtNum(q.v)))
			}
		}
		if len(mk) > 0 {
			sc, err := points(mk, c, draw.CircleGlyph{}, 3)
			if err != nil {
				return nil, err
			}
			p.Add(sc)
			addTips(p, tips, mk, tipText, 5)
			if len(series) <= maxLabelledSeries {
				marks.add(mk, txt)
			}
		}
		if last := s.Points[len(s.Points)-1].Y; last < minY {
			minY = last
		}
		fmt.Fprintf(&d, "series %q n=%d p50=%s p90=%s p99=%s points=%d\n", s.Label, s.N, g(s.P50), g(s.P90), g(s.P99), len(s.Points))
		for _, pt := range s.Points {
			fmt.Fprintf(&d, "%s\t%s\n", g(pt.X), g(pt.Y))
		}
	}
	p.Add(marks)
	p.Y.Min, p.Y.Max = minY/2, 1.2
	// a log X axis when the runs span a wide range (overlaid runs of very
	// different latency stay readable); linear when a value is ≤ 0
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		xmin, xmax = math.Min(xmin, s.Points[0].X), math.Max(xmax, s.Points[len(s.Points)-1].X)
	}
	if xmin > 0 && xmax/xmin > 20 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Label.Text += ", log scale"
		fmt.Fprintf(&d, "x axis log\n")
	}
	return legendBelow(KindCCDF, name, "", p, d.String(), len(series), tips), nil
}

func (set *Set) e2eOSL(in Input, slug string) error {
	xs, ys := in.Data.PairOSL, in.Data.PairE2E
	keys := countedKeys(in.Data.Requests, len(xs))
	nPairs := 0
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i := range xs {
		if i < len(ys) && finite(xs[i]) && finite(ys[i]) {
			nPairs++
			xmin, xmax = math.Min(xmin, xs[i]), math.Max(xmax, xs[i])
		}
	}
	if nPairs < 2 {
		set.Skipped = append(set.Skipped, Skip{Kind: KindE2EOSL, Run: in.label(), Reason: "fewer than two completed requests with both an output length and an E2E"})
		return nil
	}
	rr := in.Report
	p := newPlot("E2E vs output length: "+in.label(), "output length N (tokens)", "E2E (ms)")
	var d strings.Builder
	fmt.Fprintf(&d, "# e2e-osl %q: (N tokens, E2E ms) points, buckets, fit\n", in.label())
	tips := &tipSink{}
	entries := 0
	reqTip := func(i int) string {
		return fmt.Sprintf("%s\nN %s tok · E2E %s ms", keyText(keys, i), fmtNum(xs[i]), fmtNum(ys[i]))
	}
	var drawn []XY // the per-request points drawn, for the dump
	if nPairs > BandThreshold {
		// Past BandThreshold requests the points become quantile bands:
		// per N bin the P10–P90 of E2E as a box and its P50, with every
		// request above its bin's P99 drawn as a point (at most
		// MaxBandOutliers, the slowest).
		bands, out := OSLBands(xs, ys, BandBins, MaxBandOutliers, in.Data.Convention.Percentile)
		var rings []plotter.XYer
		var bandTips []XY
		var bandText []string
		for _, b := range bands {
			rings = append(rings, plotter.XYs{{X: b.Lo, Y: b.P10}, {X: b.Hi, Y: b.P10}, {X: b.Hi, Y: b.P90}, {X: b.Lo, Y: b.P90}})
			bandTips = append(bandTips, XY{(b.Lo + b.Hi) / 2, b.P50})
			bandText = append(bandText, fmt.Sprintf("N %s–%s tok: %d requests\nE2E P10 %s · P50 %s · P90 %s · P99 %s ms", fmtNum(b.Lo), fmtNum(b.Hi), b.N, fmtNum(b.P10), fmtNum(b.P50), fmtNum(b.P90), fmtNum(b.P99)))
			fmt.Fprintf(&d, "band [%s, %s] n=%d p10=%s p50=%s p90=%s p99=%s\n", g(b.Lo), g(b.Hi), b.N, g(b.P10), g(b.P50), g(b.P90), g(b.P99))
		}
		poly, err := plotter.NewPolygon(rings...)
		if err != nil {
			return err
		}
		poly.Color = color.RGBA{R: 200, G: 200, B: 200, A: 255}
		poly.LineStyle.Width = 0
		p.Add(poly)
		p.Legend.Add(fmt.Sprintf("requests (%d): P10–P90 of E2E in %d bins of N", nPairs, len(bands)), poly)
		entries++
		for i, b := range bands {
			l, err := line([]XY{{b.Lo, b.P50}, {b.Hi, b.P50}}, grey, 2, nil)
			if err != nil {
				return err
			}
			p.Add(l)
			if i == 0 {
				p.Legend.Add("bin P50", l)
				entries++
			}
		}
		addTips(p, tips, bandTips, bandText, 6)
		var texts []string
		for _, i := range out {
			drawn = append(drawn, XY{xs[i], ys[i]})
			texts = append(texts, reqTip(i)+" (above its bin's P99)")
		}
		if len(drawn) > 0 {
			sc, err := points(drawn, grey, draw.CircleGlyph{}, 2)
			if err != nil {
				return err
			}
			p.Add(sc)
			p.Legend.Add(fmt.Sprintf("requests above their bin's P99 (%d drawn)", len(drawn)), sc)
			entries++
			addTips(p, tips, drawn, texts, 3)
		}
		fmt.Fprintf(&d, "bands %d outliers %d of %d requests\n", len(bands), len(drawn), nPairs)
	} else {
		var texts []string
		for _, i := range ScatterIdx(xs, ys, MaxScatterPoints) {
			drawn = append(drawn, XY{xs[i], ys[i]})
			texts = append(texts, reqTip(i))
		}
		sc, err := points(drawn, grey, draw.CircleGlyph{}, 2)
		if err != nil {
			return err
		}
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("requests (%d)", len(drawn)), sc)
		entries++
		addTips(p, tips, drawn, texts, 3)
	}
	for i, q := range []struct {
		name string
		v    func(b analyze.Bucket) float64
	}{{"P50", func(b analyze.Bucket) float64 { return b.P50 }}, {"P90", func(b analyze.Bucket) float64 { return b.P90 }}, {"P99", func(b analyze.Bucket) float64 { return b.P99 }}} {
		first := true
		for _, b := range rr.E2EByOSL {
			if b.N == 0 || !finite(q.v(b)) {
				continue
			}
			x0, x1 := math.Max(b.Min, xmin), math.Min(b.Max, xmax)
			if x1 < x0 {
				x1 = x0
			}
			l, err := line([]XY{{x0, q.v(b)}, {x1, q.v(b)}}, seriesColor(i), 2, nil)
			if err != nil {
				return err
			}
			p.Add(l)
			if first {
				p.Legend.Add("bucket "+q.name, l)
				entries++
				first = false
			}
		}
	}
	for _, b := range rr.E2EByOSL {
		fmt.Fprintf(&d, "bucket [%s, %s) n=%d p50=%s p90=%s p99=%s\n", g(b.Min), g(b.Max), b.N, g(b.P50), g(b.P90), g(b.P99))
	}
	if f := rr.E2EOSLFit; f != nil && f.Explains {
		a, b := float64(f.InterceptMs), float64(f.SlopeMsPerToken)
		fl, err := line([]XY{{xmin, a + b*xmin}, {xmax, a + b*xmax}}, black, 1.5, []vg.Length{vg.Points(5), vg.Points(3)})
		if err != nil {
			return err
		}
		p.Add(fl)
		p.Legend.Add(fmt.Sprintf("fit E2E ≈ %s ms + %s ms × N (R² %.3f)", fmtNum(a), fmtNum(b), float64(f.R2)), fl)
		entries++
		fmt.Fprintf(&d, "fit intercept_ms=%s slope_ms_per_token=%s r2=%s n=%d\n", g(a), g(b), g(float64(f.R2)), f.N)
	}
	fmt.Fprintf(&d, "points %d\n", len(drawn))
	for _, q := range drawn {
		fmt.Fprintf(&d, "%s\t%s\n", g(q.X), g(q.Y))
	}
	set.Figures = append(set.Figures, legendBelow(KindE2EOSL, "e2e-osl-"+slug, in.label(), p, d.String(), entries, tips))
	return nil
}

// countedKeys are the request keys of the counted requests, in order —
// the requests RunData's (OSL, E2E) pairs come from — or nil when their
// number is not n (no key is then shown).
func countedKeys(reqs []analyze.RequestMetrics, n int) []int64 {
	var keys []int64
	for i := range reqs {
		if reqs[i].Counted {
			keys = append(keys, reqs[i].RequestKey)
		}
	}
	if len(keys) != n {
		return nil
	}
	return keys
}

// keyText names pair i's request by its request_key ("?" when unknown).
func keyText(keys []int64, i int) string {
	if i < len(keys) {
		return fmt.Sprintf("request_key %d", keys[i])
	}
	return "request (key unknown)"
}

func dumpXY(d *strings.Builder, name string, pts []XY) {
	fmt.Fprintf(d, "%s %d\n", name, len(pts))
	for _, q := range pts {
		fmt.Fprintf(d, "%s\t%s\n", g(q.X), g(q.Y))
	}
}

func (set *Set) itlPosition(in Input, slug string) error {
	skip := func(why string) error {
		set.Skipped = append(set.Skipped, Skip{Kind: KindITLPosition, Run: in.label(), Reason: why})
		return nil
	}
	switch {
	case !in.Data.Streaming:
		return skip("non-streaming run: no token gaps")
	case in.Data.Convention.ITL == convention.ITLPerRequestMean:
		return skip("convention " + in.Data.Convention.Name + " defines ITL as one mean per request, not per gap")
	case len(in.Data.ITL) == 0:
		return skip("no per-message arrival times in the source, so no token gaps")
	case in.Data.ITLSketched:
		return skip("the pooled ITL is over --memory-budget and summarized by a sketch: no gap keeps its position")
	}
	st, ok := ITLByPosition(in.Data.Requests, in.Data.ITL, in.Data.Convention.Percentile)
	if !ok {
		return skip("per-request gap counts do not match the pooled ITL samples")
	}
	p := newPlot("ITL by token position: "+in.label(), "gap position k (between output tokens k and k+1), log scale", "ITL (ms)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	var p50, p99 []XY
	var d strings.Builder
	fmt.Fprintf(&d, "# itl-position %q: gaps from-to, n, P50 ms, P99 ms (x drawn at the group's first gap)\n", in.label())
	for _, s := range st {
		p50 = append(p50, XY{float64(s.From), s.P50})
		p99 = append(p99, XY{float64(s.From), s.P99})
		fmt.Fprintf(&d, "%d-%d\t%d\t%s\t%s\n", s.From, s.To, s.N, g(s.P50), g(s.P99))
	}
	// One long stall (an 80 s gap at one position) flattens a linear axis
	// into a line at 0: past a spread of logYSpread between the largest
	// value and the median P99, the axis is logarithmic (values ≤ 0, which
	// a log axis cannot show, are drawn at its bottom and counted in the
	// label).
	logY, floor, nonPos := itlLogAxis(st)
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Label.Text = "ITL (ms), log scale"
		if nonPos > 0 {
			p.Y.Label.Text += fmt.Sprintf(" (%d value(s) ≤ 0 drawn at the bottom)", nonPos)
		}
		for _, s := range [][]XY{p50, p99} {
			for i := range s {
				if s[i].Y <= 0 {
					s[i].Y = floor
				}
			}
		}
		fmt.Fprintf(&d, "y axis log (max / median P99 > %g)\n", logYSpread)
	}
	tips := &tipSink{}
	var tipText []string
	for _, s := range st {
		gaps := fmt.Sprintf("gap %d", s.From)
		if s.To > s.From {
			gaps = fmt.Sprintf("gaps %d–%d", s.From, s.To)
		}
		tipText = append(tipText, fmt.Sprintf("%s (n=%d): P50 %s ms · P99 %s ms", gaps, s.N, fmtNum(s.P50), fmtNum(s.P99)))
	}
	for i, s := range []struct {
		name string
		pts  []XY
	}{{"P50", p50}, {"P99", p99}} {
		l, err := line(s.pts, seriesColor(i), 1.5, nil)
		if err != nil {
			return err
		}
		sc, err := points(s.pts, seriesColor(i), draw.CircleGlyph{}, 1.5)
		if err != nil {
			return err
		}
		p.Add(l, sc)
		p.Legend.Add(s.name, l, sc)
		addTips(p, tips, s.pts, tipText, 4)
	}
	if !logY {
		p.Y.Min = 0
	}
	set.Figures = append(set.Figures, legendBelow(KindITLPosition, "itl-position-"+slug, in.label(), p, d.String(), 2, tips))
	return nil
}

// logYSpread is the spread (largest value over the median P99 of the
// positions) beyond which ITL by position uses a log axis.
const logYSpread = 10.0

// itlLogAxis decides ITL by position's axis: log when the largest P50 or
// P99 exceeds logYSpread times the median P99 over positions; floor is
// where values ≤ 0 are drawn (half the smallest positive value) and
// nonPos how many there are.
func itlLogAxis(st []PositionStats) (logY bool, floor float64, nonPos int) {
	var p99s []float64
	mx, minPos := math.Inf(-1), math.Inf(1)
	for _, s := range st {
		p99s = append(p99s, s.P99)
		for _, v := range []float64{s.P50, s.P99} {
			mx = math.Max(mx, v)
			if v > 0 {
				minPos = math.Min(minPos, v)
			} else {
				nonPos++
			}
		}
	}
	if len(p99s) == 0 || math.IsInf(minPos, 1) {
		return false, 0, 0
	}
	sort.Float64s(p99s)
	med := p99s[len(p99s)/2]
	if med <= 0 || mx <= logYSpread*med {
		return false, 0, 0
	}
	return true, minPos / 2, nonPos
}

func (set *Set) goodput(inputs []Input, slo analyze.SLO) error {
	if len(slo.Constraints) == 0 {
		set.Skipped = append(set.Skipped, Skip{Kind: KindGoodput, Reason: "no SLO given (--slo)"})
		return nil
	}
	type runCurves struct {
		label  string
		curves []GoodputCurve
	}
	var rc []runCurves
	for _, in := range inputs {
		rc = append(rc, runCurves{in.label(), GoodputCurves(slo, in.Data.Requests)})
	}
	if len(rc) == 0 {
		return nil
	}
	for ci, c := range slo.Constraints {
		p := newPlot("Goodput vs "+c.Metric.Label+" bound ("+slo.Text+")", c.Metric.Label+" bound ("+c.Metric.Unit+")", "goodput (fraction of all requests)")
		var d strings.Builder
		fmt.Fprintf(&d, "# goodput %s: bound ms, fraction good with the others held (%s)\n", c.Text, slo.Text)
		xmax := c.Limit
		tips := &tipSink{}
		entries := 0
		for i, r := range rc {
			gc := r.curves[ci]
			if len(gc.Points) == 0 {
				continue
			}
			pts := append([]XY(nil), gc.Points...)
			for _, q := range pts {
				xmax = math.Max(xmax, q.X)
			}
			l, err := line(pts, seriesColor(i), 1.5, seriesDashes(i))
			if err != nil {
				return err
			}
			l.StepStyle = plotter.PostStep
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("%s (%s at the bound)", r.label, pct(gc.AtLimit)), l)
			entries++
			addLineTip(p, tips, pts, fmt.Sprintf("%s: goodput as the %s bound moves (%d requests)", r.label, c.Metric.Label, gc.Total))
			mk, err := points([]XY{{gc.LimitMs, gc.AtLimit}}, seriesColor(i), draw.CircleGlyph{}, 3)
			if err != nil {
				return err
			}
			p.Add(mk)
			addTips(p, tips, []XY{{gc.LimitMs, gc.AtLimit}}, []string{fmt.Sprintf("%s: %s of %d requests good at %s", r.label, pct(gc.AtLimit), gc.Total, c.Text)}, 5)
			fmt.Fprintf(&d, "series %q total=%d at_limit=%s points=%d\n", r.label, gc.Total, g(gc.AtLimit), len(gc.Points))
			for _, q := range gc.Points {
				fmt.Fprintf(&d, "%s\t%s\n", g(q.X), g(q.Y))
			}
		}
		xmax *= 1.05
		// extend each curve to the right edge
		for i, r := range rc {
			gc := r.curves[ci]
			if len(gc.Points) == 0 {
				continue
			}
			last := gc.Points[len(gc.Points)-1]
			if last.X < xmax {
				l, err := line([]XY{last, {xmax, last.Y}}, seriesColor(i), 1.5, seriesDashes(i))
				if err != nil {
					return err
				}
				p.Add(l)
			}
		}
		vl, err := vline(c.Limit, 0, 1, red)
		if err != nil {
			return err
		}
		p.Add(vl)
		p.Legend.Add("configured bound "+c.Text, vl)
		p.Y.Min, p.Y.Max = 0, 1.05
		p.X.Min, p.X.Max = 0, xmax
		set.Figures = append(set.Figures, legendBelow(KindGoodput, "goodput-"+sloSlug(c.Metric.Name), "", p, d.String(), entries+1, tips))
	}
	return nil
}

func sloSlug(m string) string { return slugger{}.slug(m) }

func pct(v float64) string {
	if !finite(v) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}
