package plots

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/plot/vg/draw"
)

// GoodputCapacity returns the goodput-capacity figure of a load sweep:
// goodput fraction (0…1) against offered request rate (req/s), one point
// per run (rates[i], fractions[i]; drawn in rate order), the target
// fraction as a horizontal line, and the capacity — the interpolated rate
// at which goodput falls to the target, computed by the caller (analyze) —
// as a vertical line; capacity NaN means not reached in the tested range
// (said in the legend). It fails when the slices differ in length, are
// empty, or hold a non-finite rate or fraction.
func GoodputCapacity(rates, fractions []float64, target, capacity float64) (*Figure, error) {
	if len(rates) != len(fractions) {
		return nil, fmt.Errorf("goodput capacity: %d rates but %d fractions", len(rates), len(fractions))
	}
	if len(rates) == 0 {
		return nil, fmt.Errorf("goodput capacity: no runs")
	}
	pts := make([]XY, len(rates))
	for i := range rates {
		if !finite(rates[i]) || !finite(fractions[i]) {
			return nil, fmt.Errorf("goodput capacity: run %d: rate %v, fraction %v: want finite numbers", i, rates[i], fractions[i])
		}
		pts[i] = XY{rates[i], fractions[i]}
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
	p := newPlot("Goodput capacity", "offered request rate (req/s)", "goodput (fraction of all requests)")
	var d strings.Builder
	fmt.Fprintf(&d, "# goodput-capacity: rate req/s, fraction; target %s; capacity %s req/s\n", g(target), g(capacity))
	l, err := line(pts, seriesColor(0), 1.5, nil)
	if err != nil {
		return nil, err
	}
	sc, err := points(pts, seriesColor(0), draw.CircleGlyph{}, 3)
	if err != nil {
		return nil, err
	}
	p.Add(l, sc)
	p.Legend.Add("goodput per run", l, sc)
	xmax := pts[len(pts)-1].X
	if finite(capacity) && capacity > xmax {
		xmax = capacity
	}
	xmax *= 1.05
	if finite(target) {
		tl, err := hline(target, 0, xmax, grey)
		if err != nil {
			return nil, err
		}
		p.Add(tl)
		p.Legend.Add("target "+pct(target), tl)
	}
	if finite(capacity) {
		cl, err := vline(capacity, 0, 1, red)
		if err != nil {
			return nil, err
		}
		p.Add(cl)
		p.Legend.Add("capacity "+fmtNum(capacity)+" req/s", cl)
		if finite(target) {
			mk, err := points([]XY{{capacity, target}}, red, draw.CircleGlyph{}, 3.5)
			if err != nil {
				return nil, err
			}
			p.Add(mk)
		}
	} else {
		p.Legend.Add("capacity: not reached in the tested range")
	}
	for _, q := range pts {
		fmt.Fprintf(&d, "%s\t%s\n", g(q.X), g(q.Y))
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, xmax, 0, 1.05
	p.Legend.Top = false
	return single(KindGoodput, "goodput-capacity", "", p, d.String()), nil
}
