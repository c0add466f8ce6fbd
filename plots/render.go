package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/tokentrace/tokentrace/analyze/render"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PDFDate is the creation and modification date written into every PDF,
// so that the same input gives byte-identical files.
var PDFDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func init() {
	// Sans-serif text (gonum/plot bundles Liberation Sans) reads better on
	// screen than the default serif.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
	fpdf.SetDefaultCreationDate(PDFDate)
	fpdf.SetDefaultModificationDate(PDFDate)
	fpdf.SetDefaultCatalogSort(true)
}

// Formats are the output formats Figure.Render writes.
var Formats = []string{"svg", "png", "pdf"}

// Default figure size.
const (
	Width  = 7 * vg.Inch
	Height = 4.5 * vg.Inch
)

// Figure is one plot file: a kind, a file name, and what it draws.
type Figure struct {
	Kind Kind
	// Name is the file's base name without extension ("ccdf-ttft").
	Name string
	// Title is the figure's title (also the HTML caption).
	Title string
	// Run is the run label of a per-run figure ("" for an overlay).
	Run           string
	Width, Height vg.Length
	// Data is the numbers the figure draws, one line per point or
	// statistic (the golden "data" dump).
	Data string
	draw func(dc draw.Canvas)
	// tips are the hover texts the drawing records (figure.go), written
	// into SVG output.
	tips *tipSink
}

// Render writes the figure in format ("svg", "png" or "pdf"). SVG text is
// escaped by gonum/plot (html.EscapeString); fonts are not embedded in SVG
// (text names the Liberation Sans family), and are embedded in PDF, whose
// dates are PDFDate.
func (f *Figure) Render(w io.Writer, format string) (err error) {
	// gonum/plot panics on data its scales cannot draw (a log axis with no
	// positive value); a figure that cannot be drawn is an error, not a crash
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot %s: cannot draw: %v", f.Name, r)
		}
	}()
	if f.tips != nil {
		f.tips.tips = f.tips.tips[:0]
	}
	switch format {
	case "svg":
		c := vgsvg.New(f.Width, f.Height)
		f.draw(draw.New(c))
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return err
		}
		_, err := w.Write(f.withTips(b.Bytes())) // hover texts (figure.go)
		return err
	case "pdf":
		c := vgpdf.New(f.Width, f.Height)
		f.draw(draw.New(c))
		_, err := c.WriteTo(w)
		return err
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
		f.draw(draw.New(c))
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	}
	return fmt.Errorf("plot format %q: want svg, png or pdf", format)
}

// SVG returns the figure as an SVG element for inline use in HTML: the XML
// declaration and generator comment dropped.
func (f *Figure) SVG() (string, error) {
	var b bytes.Buffer
	if err := f.Render(&b, "svg"); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return s, nil
}

// single makes a figure of one plot.
func single(kind Kind, name, run string, p *plot.Plot, data string) *Figure {
	return &Figure{Kind: kind, Name: name, Title: p.Title.Text, Run: run, Width: Width, Height: Height, Data: data,
		draw: func(dc draw.Canvas) { p.Draw(dc) }}
}

// fmtNum formats v as every report table does (render.Num).
func fmtNum(v float64) string { return render.Num(v) }

// g formats a number for the data dumps: shortest exact representation.
func g(v float64) string { return fmt.Sprint(v) }

func xys(pts []XY) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, p := range pts {
		out[i].X, out[i].Y = p.X, p.Y
	}
	return out
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = 0.35 * vg.Centimeter
	p.Legend.TextStyle.Font.Size = 9
	p.X.Tick.Marker = numTicks{}
	p.Y.Tick.Marker = numTicks{}
	p.Title.TextStyle.Font.Size = 13
	p.Add(plotter.NewGrid())
	return p
}

// numTicks is gonum's default ticks with labels in fmtNum's style ("2500",
// not "2500.00").
type numTicks struct{}

func (numTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// color i of the series palette.
func seriesColor(i int) color.Color { return plotutil.Color(i) }

// seriesDashes is the dash pattern of series i: solid for the first round
// of the palette's colors, then gonum's dash patterns in turn, so that
// many overlaid runs stay distinguishable.
func seriesDashes(i int) []vg.Length { return plotutil.Dashes(i / len(plotutil.DefaultColors)) }

// maxLabelledSeries is how many overlaid series get their percentile
// markers labelled with values; beyond it only the dots are drawn (the
// labels would overlap).
const maxLabelledSeries = 4

func line(pts []XY, c color.Color, width vg.Length, dashes []vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys(pts))
	if err != nil {
		return nil, err
	}
	l.Color = c
	l.Width = width
	l.Dashes = dashes
	return l, nil
}

func points(pts []XY, c color.Color, shape draw.GlyphDrawer, radius vg.Length) (*plotter.Scatter, error) {
	s, err := plotter.NewScatter(xys(pts))
	if err != nil {
		return nil, err
	}
	s.GlyphStyle.Color = c
	s.GlyphStyle.Shape = shape
	s.GlyphStyle.Radius = radius
	return s, nil
}

// labels writes text at pts (left-aligned, just above and right of each
// point), in size.
func labels(pts []XY, text []string, size vg.Length) (*plotter.Labels, error) {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys(pts), Labels: text})
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = size
		l.TextStyle[i].XAlign = draw.XLeft
	}
	l.Offset = vg.Point{X: 3, Y: 2}
	return l, nil
}

// vline is a vertical line at x from y0 to y1.
func vline(x, y0, y1 float64, c color.Color) (*plotter.Line, error) {
	return line([]XY{{x, y0}, {x, y1}}, c, 1, []vg.Length{vg.Points(4), vg.Points(3)})
}

// hline is a horizontal line at y from x0 to x1.
func hline(y, x0, x1 float64, c color.Color) (*plotter.Line, error) {
	return line([]XY{{x0, y}, {x1, y}}, c, 1, []vg.Length{vg.Points(4), vg.Points(3)})
}

var (
	grey  = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	red   = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	black = color.Black
)
