package plots

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tokentrace/tokentrace/formats"
)

// Hover texts, legends under the plot and labels that do not collide:
// what report.html's figures add to gonum/plot's drawing.

// tip is one hover text of an SVG figure, in canvas points: a circle of
// radius R at (X, Y), or, when Path is set, a polyline.
type tip struct {
	X, Y, R vg.Length
	Path    []vg.Point
	Text    string
}

// tipSink collects a figure's tips while it is drawn (reset at each
// Render).
type tipSink struct{ tips []tip }

// tipPoints is a plotter that draws nothing: it records a hover text for
// each of its points that lands inside the plot area, or — with line —
// one hover text along the polyline through them (at most maxTipPath
// vertices, evenly strided: it is a hit area, the drawn line is exact).
type tipPoints struct {
	sink   *tipSink
	pts    []XY
	texts  []string
	radius vg.Length
	line   bool
}

// maxTipPath bounds the vertices of one line's hover path.
const maxTipPath = 300

func (t *tipPoints) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	at := func(q XY) (vg.Point, bool) {
		if !finite(q.X) || !finite(q.Y) {
			return vg.Point{}, false
		}
		pt := vg.Point{X: trX(q.X), Y: trY(q.Y)}
		ok := !math.IsNaN(float64(pt.X)) && !math.IsNaN(float64(pt.Y)) && !math.IsInf(float64(pt.X), 0) && !math.IsInf(float64(pt.Y), 0)
		return pt, ok && c.Contains(pt)
	}
	if t.line {
		stride := max(1, (len(t.pts)+maxTipPath-1)/maxTipPath)
		var path []vg.Point
		for i := 0; i < len(t.pts); i += stride {
			if pt, ok := at(t.pts[i]); ok {
				path = append(path, pt)
			}
		}
		if n := len(t.pts); n > 0 && (n-1)%stride != 0 {
			if pt, ok := at(t.pts[n-1]); ok {
				path = append(path, pt)
			}
		}
		if len(path) > 1 && len(t.texts) > 0 {
			t.sink.tips = append(t.sink.tips, tip{Path: path, Text: t.texts[0]})
		}
		return
	}
	for i, q := range t.pts {
		if pt, ok := at(q); ok && i < len(t.texts) {
			t.sink.tips = append(t.sink.tips, tip{X: pt.X, Y: pt.Y, R: t.radius, Text: t.texts[i]})
		}
	}
}

// addTips adds hover texts at pts (one text each) to p, recorded in sink.
func addTips(p *plot.Plot, sink *tipSink, pts []XY, texts []string, radius vg.Length) {
	p.Add(&tipPoints{sink: sink, pts: pts, texts: texts, radius: radius})
}

// addLineTip adds one hover text along the line through pts.
func addLineTip(p *plot.Plot, sink *tipSink, pts []XY, text string) {
	p.Add(&tipPoints{sink: sink, pts: pts, texts: []string{text}, line: true})
}

// withTips inserts the figure's hover texts into gonum/plot's SVG: one
// group of invisible shapes (transparent fill or stroke, so they take the
// pointer) each with a <title>, inside the drawing's flipped coordinate
// group, after everything drawn. Titles are untrusted text: SafeLines,
// then XML-escaped.
func (f *Figure) withTips(svg []byte) []byte {
	if f.tips == nil || len(f.tips.tips) == 0 {
		return svg
	}
	end := bytes.LastIndex(svg, []byte("</g>"))
	if end < 0 {
		return svg
	}
	var b bytes.Buffer
	b.Grow(len(svg) + 120*len(f.tips.tips))
	b.Write(svg[:end])
	b.WriteString(`<g class="tips">` + "\n")
	tips := append([]tip(nil), f.tips.tips...)
	sort.SliceStable(tips, func(i, j int) bool { return tips[i].Path != nil && tips[j].Path == nil }) // circles on top
	for _, t := range tips {
		title := "<title>" + html.EscapeString(formats.SafeLines(t.Text)) + "</title>"
		if t.Path != nil {
			var d strings.Builder
			for i, p := range t.Path {
				if i == 0 {
					d.WriteString("M")
				} else {
					d.WriteString("L")
				}
				fmt.Fprintf(&d, "%.5g,%.5g", float64(p.X), float64(p.Y))
			}
			fmt.Fprintf(&b, `<path d="%s" style="fill:none;stroke:#000;stroke-opacity:0;stroke-width:6">%s</path>`+"\n", d.String(), title)
			continue
		}
		fmt.Fprintf(&b, `<circle cx="%.5g" cy="%.5g" r="%.3g" style="fill:#000;fill-opacity:0">%s</circle>`+"\n", float64(t.X), float64(t.Y), float64(t.R), title)
	}
	b.WriteString("</g>\n")
	b.Write(svg[end:])
	return b.Bytes()
}

// legendRow is the height of one legend entry (gonum/plot spaces entries
// by their text height).
func legendRow(l *plot.Legend) vg.Length {
	return l.TextStyle.Height("Xg") + l.Padding
}

// legendBelow makes a figure of p whose legend is drawn under the plot,
// outside the data: the figure is taller by the legend's rows, the plot
// area keeps the default size.
func legendBelow(kind Kind, name, run string, p *plot.Plot, data string, entries int, tips *tipSink) *Figure {
	leg := p.Legend
	p.Legend = plot.NewLegend()
	leg.Top, leg.Left = true, true
	band := vg.Length(entries)*legendRow(&leg) + 12
	if entries == 0 {
		band = 0
	}
	f := &Figure{Kind: kind, Name: name, Title: p.Title.Text, Run: run, Width: Width, Height: Height + band, Data: data, tips: tips}
	f.draw = func(dc draw.Canvas) {
		h := dc.Max.Y - dc.Min.Y
		p.Draw(draw.Crop(dc, 0, 0, band, 0))
		if entries > 0 {
			leg.Draw(draw.Crop(dc, 14, 0, 4, -(h - band + 4)))
		}
	}
	return f
}

// markLabels draws value labels beside their markers (the percentile
// marks of a CCDF) so that no two labels overlap: layoutLabels places
// them.
type markLabels struct {
	pts   []XY
	texts []string
	style text.Style
}

func newMarkLabels(size vg.Length) *markLabels {
	fnt := plot.DefaultFont
	fnt.Size = size
	st := text.Style{Color: black, Font: fnt, Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YBottom}
	return &markLabels{style: st}
}

func (m *markLabels) add(pts []XY, texts []string) {
	m.pts = append(m.pts, pts...)
	m.texts = append(m.texts, texts...)
}

func (m *markLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var anchors, sizes []vg.Point
	var texts []string
	for i, q := range m.pts {
		a := vg.Point{X: trX(q.X), Y: trY(q.Y)}
		if !c.Contains(a) {
			continue
		}
		anchors = append(anchors, a)
		sizes = append(sizes, vg.Point{X: m.style.Width(m.texts[i]), Y: m.style.Height(m.texts[i])})
		texts = append(texts, m.texts[i])
	}
	for i, r := range layoutLabels(anchors, sizes, c.Rectangle) {
		c.FillText(m.style, r.Min, texts[i])
	}
}

// layoutLabels places labels of the given sizes next to their anchors,
// in order, each at the first of these positions that stays inside bounds
// and overlaps no label placed before it: right of the anchor and above,
// right and below, left and above, left and below, then right of it
// shifted up or down by one to eight label heights. A label that fits
// nowhere keeps the first position inside bounds. The result is each
// label's rectangle; the same input gives the same layout.
func layoutLabels(anchors, sizes []vg.Point, bounds vg.Rectangle) []vg.Rectangle {
	const gap = 3
	var placed []vg.Rectangle
	out := make([]vg.Rectangle, len(anchors))
	for i, a := range anchors {
		w, h := sizes[i].X, sizes[i].Y
		cands := []vg.Point{{X: a.X + gap, Y: a.Y + 2}, {X: a.X + gap, Y: a.Y - 2 - h}, {X: a.X - gap - w, Y: a.Y + 2}, {X: a.X - gap - w, Y: a.Y - 2 - h}}
		for k := 1; k <= 8; k++ {
			cands = append(cands, vg.Point{X: a.X + gap, Y: a.Y + 2 + vg.Length(k)*h}, vg.Point{X: a.X + gap, Y: a.Y - 2 - h - vg.Length(k)*h})
		}
		var first *vg.Rectangle
		chosen := false
		for _, c := range cands {
			r := vg.Rectangle{Min: c, Max: vg.Point{X: c.X + w, Y: c.Y + h}}
			if r.Min.X < bounds.Min.X || r.Max.X > bounds.Max.X || r.Min.Y < bounds.Min.Y || r.Max.Y > bounds.Max.Y {
				continue
			}
			if first == nil {
				first = &r
			}
			if !overlapsAny(r, placed) {
				out[i], chosen = r, true
				break
			}
		}
		if !chosen {
			if first != nil {
				out[i] = *first
			} else {
				c := cands[0]
				out[i] = vg.Rectangle{Min: c, Max: vg.Point{X: c.X + w, Y: c.Y + h}}
			}
		}
		placed = append(placed, out[i])
	}
	return out
}

func overlapsAny(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}
