package plots

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/compare"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/analyze/sweep"
)

// KindCompare is the kind of the figures of `tokentrace compare`: CCDFs
// overlaid per side and sweep curves.
const KindCompare Kind = "compare"

// Compare draws a comparison's figures: for each compared configuration,
// the CCDF of every tail metric with one series per side (labelled by the
// side; a side's runs of the configuration pooled), and for the sweeps,
// per series, P50 and P99 of TTFT, TPOT and E2E against the achieved
// request rate and against output throughput, the Pareto frontiers and,
// with an SLO, the attainment curves with each side's capacity — every
// side on the same axes. Plots the data cannot support are listed in
// Set.Skipped.
func Compare(res *compare.Result, sides []compare.Side, sw *sweep.Result) (*Set, error) {
	set := &Set{}
	byID := make([]map[string]*analyze.RunData, len(sides))
	for si, s := range sides {
		byID[si] = map[string]*analyze.RunData{}
		for _, rd := range s.Runs {
			byID[si][rd.Run.RunID] = rd
		}
	}
	slugs := slugger{}
	multi := len(res.Matching.Groups) > 1
	labels := res.Matching.Labels()
	for gi, g := range res.Matching.Groups {
		label := labels[gi]
		var inputs []Input
		for si, runs := range g.Runs {
			if len(runs) == 0 {
				continue
			}
			var rds []*analyze.RunData
			for _, id := range runs {
				rds = append(rds, byID[si][id])
			}
			inputs = append(inputs, pooledInput(sides[si].Label, rds))
		}
		sub, err := Build(inputs, analyze.SLO{}, []Kind{KindCCDF})
		if err != nil {
			return nil, err
		}
		prefix := "compare-"
		if multi {
			prefix += slugs.slug(label) + "-"
		}
		for _, f := range sub.Figures {
			f.Kind, f.Name = KindCompare, prefix+f.Name
			if multi {
				caption(f, label)
			}
			set.Figures = append(set.Figures, f)
		}
		for _, s := range sub.Skipped {
			s.Kind = KindCompare
			if multi {
				s.Run += " (" + label + ")"
			}
			set.Skipped = append(set.Skipped, s)
		}
	}
	if sw != nil {
		figs, err := SweepFigures(sw)
		if err != nil {
			return nil, err
		}
		set.Figures = append(set.Figures, figs...)
	}
	return set, nil
}

// caption adds text under the figure's title (the configuration of an
// overlay).
func caption(f *Figure, text string) {
	inner := f.draw
	f.Title += " — " + text
	f.Data = "# configuration: " + text + "\n" + f.Data
	f.draw = func(dc draw.Canvas) {
		inner(dc)
		fnt := plot.DefaultFont
		fnt.Size = vg.Points(9)
		sty := draw.TextStyle{Color: black, Font: fnt, Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YTop}
		dc.FillText(sty, vg.Point{X: dc.Min.X + vg.Points(4), Y: dc.Max.Y - vg.Points(2)}, text)
	}
}

// pooledInput is one side's runs of one configuration as one plot input:
// the run itself, or the runs' tail samples pooled with their P50, P90 and
// P99 (by the first run's convention).
func pooledInput(label string, rds []*analyze.RunData) Input {
	if len(rds) == 1 {
		return Input{Label: label, Report: rds[0].Report, Data: rds[0]}
	}
	first := rds[0]
	rr := &analyze.RunReport{RunID: label}
	data := &analyze.RunData{Run: first.Run, Convention: first.Convention, Values: map[*analyze.Metric][]float64{}}
	for _, rd := range rds {
		rr.Requests.Total += rd.Report.Requests.Total
		data.Streaming = data.Streaming || rd.Streaming
	}
	for _, x := range analyze.Table {
		if !x.Tail {
			continue
		}
		var vals []float64
		for _, rd := range rds {
			vals = append(vals, rd.Values[x]...)
		}
		if len(vals) == 0 {
			continue
		}
		data.Values[x] = vals
		rr.Metrics = append(rr.Metrics, analyze.MetricSummary{Metric: x,
			Summary: stats.Summarize(vals, []float64{0.5, 0.9, 0.99}, stats.Method(first.Convention.Percentile), first.Convention.StdDDOF)})
	}
	return Input{Label: fmt.Sprintf("%s (%d runs)", label, len(rds)), Report: rr, Data: data}
}

// SweepFigures draws the sweeps' curves (see Compare), one set per
// series.
func SweepFigures(sw *sweep.Result) ([]*Figure, error) {
	var out []*Figure
	slugs := slugger{}
	for _, s := range sw.Series {
		prefix := "sweep-"
		if len(sw.Series) > 1 {
			prefix += slugs.slug(s.Key) + "-"
		}
		for _, x := range []*analyze.Metric{analyze.TTFT, analyze.TPOT, analyze.E2E} {
			for _, byTput := range []bool{false, true} {
				f, err := sweepLatency(s, x, byTput, prefix)
				if err != nil {
					return nil, err
				}
				if f != nil {
					out = append(out, f)
				}
			}
		}
		f, err := sweepPareto(s, sw.GPUs, prefix)
		if err != nil {
			return nil, err
		}
		if f != nil {
			out = append(out, f)
		}
		if sw.SLO != "" {
			f, err := sweepAttainment(s, float64(sw.Target), prefix)
			if err != nil {
				return nil, err
			}
			if f != nil {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// curvePoints are a curve's finite (x, y) points in load order (a curve
// past saturation folds back: its line is drawn as the load rose).
func curvePoints(c sweep.Curve, x, y func(sweep.Point) float64) []XY {
	var pts []XY
	for _, p := range c.Points {
		if xv, yv := x(p), y(p); finite(xv) && finite(yv) {
			pts = append(pts, XY{xv, yv})
		}
	}
	return pts
}

// addCurve draws pts as a line with markers in side color i.
func addCurve(p *plot.Plot, pts []XY, i int, dashes []vg.Length, legend string) error {
	c := seriesColor(i)
	var th []plot.Thumbnailer
	if len(pts) > 1 {
		l, err := line(pts, c, 1.5, dashes)
		if err != nil {
			return err
		}
		p.Add(l)
		th = append(th, l)
	}
	sc, err := points(pts, c, draw.CircleGlyph{}, 2.5)
	if err != nil {
		return err
	}
	p.Add(sc)
	th = append(th, sc)
	p.Legend.Add(legend, th...)
	return nil
}

func sweepLatency(s sweep.Series, x *analyze.Metric, byTput bool, prefix string) (*Figure, error) {
	xl, xname, xf := "achieved request rate (req/s)", "rate", func(p sweep.Point) float64 { return float64(p.RequestsPerS) }
	if byTput {
		xl, xname, xf = "output throughput (tok/s)", "throughput", func(p sweep.Point) float64 { return float64(p.OutputTokensPerS) }
	}
	name := fmt.Sprintf("%s%s-vs-%s", prefix, x.Name, xname)
	p := newPlot(fmt.Sprintf("%s P50 (dashed) and P99 against %s", x.Label, strings.TrimSuffix(strings.SplitN(xl, " (", 2)[0], " ")), xl, x.Label+" (ms)")
	var d strings.Builder
	fmt.Fprintf(&d, "# %s: series %s; x %s, y %s ms\n", name, s.Key, xl, x.Label)
	drawn := 0
	for ci, c := range s.Curves {
		for _, q := range []float64{0.5, 0.99} {
			key := sweep.LatencyKey(x, q)
			pts := curvePoints(c, xf, func(pt sweep.Point) float64 { return float64(pt.Latency[key]) })
			if len(pts) == 0 {
				continue
			}
			var dashes []vg.Length
			if q == 0.5 {
				dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			if err := addCurve(p, pts, ci, dashes, fmt.Sprintf("%s P%g", c.Label, q*100)); err != nil {
				return nil, err
			}
			drawn++
			fmt.Fprintf(&d, "series %q p%g points=%d\n", c.Label, q*100, len(pts))
			for _, pt := range pts {
				fmt.Fprintf(&d, "%s\t%s\n", g(pt.X), g(pt.Y))
			}
		}
		if k := c.Knee; k != nil && x == analyze.E2E && !byTput {
			mk, err := points([]XY{{float64(k.RequestsPerS), float64(k.E2EP99Ms)}}, seriesColor(ci), draw.RingGlyph{}, 6)
			if err != nil {
				return nil, err
			}
			p.Add(mk)
			p.Legend.Add(fmt.Sprintf("%s knee (%s)", c.Label, sweep.ShortLoad(k.Load)), mk)
			fmt.Fprintf(&d, "knee %q %s\t%s\n", c.Label, g(float64(k.RequestsPerS)), g(float64(k.E2EP99Ms)))
		}
	}
	if drawn == 0 {
		return nil, nil
	}
	p.Y.Min = 0
	return single(KindCompare, name, "", p, d.String()), nil
}

func sweepPareto(s sweep.Series, gpus int, prefix string) (*Figure, error) {
	xl := "total output throughput (tok/s)"
	xf := func(p sweep.Point) float64 { return float64(p.OutputTokensPerS) }
	if gpus > 0 {
		n := fmt.Sprintf("%d GPUs", gpus)
		if gpus == 1 {
			n = "1 GPU"
		}
		xl = "output throughput per GPU (tok/s/GPU, " + n + ")"
		xf = func(p sweep.Point) float64 { return float64(p.OutputTokensPerSPerGPU) }
	}
	name := prefix + "pareto"
	p := newPlot("Pareto frontier: per-user speed against throughput", xl, "per-user speed (tok/s, 1000 / P50 TPOT)")
	var d strings.Builder
	fmt.Fprintf(&d, "# %s: series %s; x %s, y tok/s per user; frontier points marked *\n", name, s.Key, xl)
	drawn := 0
	for ci, c := range s.Curves {
		all := curvePoints(c, xf, func(pt sweep.Point) float64 { return float64(pt.PerUserTokensPerS) })
		front := curvePoints(sweep.Curve{Points: frontier(c.Points)}, xf, func(pt sweep.Point) float64 { return float64(pt.PerUserTokensPerS) })
		sort.SliceStable(front, func(i, j int) bool { return front[i].X < front[j].X })
		if len(all) == 0 {
			continue
		}
		col := seriesColor(ci)
		sc, err := points(all, col, draw.CrossGlyph{}, 2.5)
		if err != nil {
			return nil, err
		}
		p.Add(sc)
		if len(front) > 0 {
			if err := addCurve(p, front, ci, nil, c.Label+" frontier"); err != nil {
				return nil, err
			}
		}
		drawn++
		fmt.Fprintf(&d, "series %q points=%d frontier=%d\n", c.Label, len(all), len(front))
		for _, pt := range c.Points {
			if xv, yv := xf(pt), float64(pt.PerUserTokensPerS); finite(xv) && finite(yv) {
				mark := ""
				if pt.Pareto {
					mark = "*"
				}
				fmt.Fprintf(&d, "%s\t%s\t%s%s\n", pt.Load, g(xv), g(yv), mark)
			}
		}
	}
	if drawn == 0 {
		return nil, nil
	}
	p.X.Min, p.Y.Min = 0, 0
	return single(KindCompare, name, "", p, d.String()), nil
}

func frontier(pts []sweep.Point) []sweep.Point {
	var out []sweep.Point
	for _, p := range pts {
		if p.Pareto {
			out = append(out, p)
		}
	}
	return out
}

func sweepAttainment(s sweep.Series, target float64, prefix string) (*Figure, error) {
	name := prefix + "capacity"
	p := newPlot("SLO attainment against request rate", "achieved request rate (req/s)", "share of requests meeting the SLO")
	var d strings.Builder
	fmt.Fprintf(&d, "# %s: series %s; x req/s, y attainment; target %s\n", name, s.Key, g(target))
	drawn, xmax := 0, 0.0
	for ci, c := range s.Curves {
		pts := curvePoints(c, func(pt sweep.Point) float64 { return float64(pt.RequestsPerS) }, func(pt sweep.Point) float64 { return float64(pt.Attainment) })
		if len(pts) == 0 {
			continue
		}
		for _, q := range pts {
			xmax = math.Max(xmax, q.X)
		}
		if err := addCurve(p, pts, ci, nil, c.Label); err != nil {
			return nil, err
		}
		drawn++
		fmt.Fprintf(&d, "series %q points=%d\n", c.Label, len(pts))
		for _, pt := range pts {
			fmt.Fprintf(&d, "%s\t%s\n", g(pt.X), g(pt.Y))
		}
		if capa := c.Capacity; capa != nil && finite(float64(capa.RateRPS)) {
			cl, err := vline(float64(capa.RateRPS), 0, 1, seriesColor(ci))
			if err != nil {
				return nil, err
			}
			p.Add(cl)
			p.Legend.Add(fmt.Sprintf("%s capacity %s req/s", c.Label, fmtNum(float64(capa.RateRPS))), cl)
			fmt.Fprintf(&d, "capacity %q %s\n", c.Label, g(float64(capa.RateRPS)))
			xmax = math.Max(xmax, float64(capa.RateRPS))
		}
	}
	if drawn == 0 {
		return nil, nil
	}
	tl, err := hline(target, 0, xmax*1.05, grey)
	if err != nil {
		return nil, err
	}
	p.Add(tl)
	p.Legend.Add("target "+pct(target), tl)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, xmax*1.05, 0, 1.05
	p.Legend.Top = false
	return single(KindCompare, name, "", p, d.String()), nil
}
