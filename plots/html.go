package plots

import (
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/render"
	"github.com/tokentrace/tokentrace/formats"
)

// Write renders every figure of set into dir as NAME.FORMAT, each file
// written atomically, and returns the paths in figure order.
func Write(dir string, set *Set, format string) ([]string, error) {
	var out []string
	for _, f := range set.Figures {
		p := filepath.Join(dir, f.Name+"."+format)
		if err := formats.WriteFileAtomic(p, func(w *os.File) error { return f.Render(w, format) }); err != nil {
			return out, fmt.Errorf("plot %s: %w", p, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// WriteHTML writes report.html's content: one self-contained page (inline
// CSS and SVG, no script, nothing fetched) with each input's provenance,
// report tables (Input.Report), plots and the plots skipped. Every string from a trace
// (run ids, model names, error messages, notes, paths) goes through
// html/template's escaping; the SVG comes from gonum/plot, which escapes
// its text.
func WriteHTML(w io.Writer, inputs []Input, set *Set) error {
	type figure struct {
		Title, Name string
		SVG         template.HTML
	}
	drawSVG := func(f *Figure) (figure, error) {
		svg, err := f.SVG()
		if err != nil {
			return figure{}, err
		}
		// gonum/plot's SVG escapes all text it draws: trusted markup.
		return figure{Title: f.Title, Name: f.Name, SVG: template.HTML(svg)}, nil
	}
	type run struct {
		R     *analyze.RunReport
		Label string
		// ID is the run's anchor ("run-1", …: labels are untrusted text)
		ID string
		// Tables are the run's report tables (render.WriteHTMLRun).
		Tables template.HTML
		// TTFTP99 and E2EP99 head the overview table.
		TTFTP99, E2EP99 float64
		Figures         []figure
		Skipped         []Skip
	}
	page := struct {
		Version  string
		Runs     []run
		Overlays []figure
		Skipped  []Skip
	}{Version: formats.Version}
	byLabel := map[string]int{}
	for _, in := range inputs {
		r := run{R: in.Report, Label: in.label(), ID: fmt.Sprintf("run-%d", len(page.Runs)+1), TTFTP99: in.Report.Metrics.Of(analyze.TTFT).Value(0.99), E2EP99: in.Report.Metrics.Of(analyze.E2E).Value(0.99)}
		var src *formats.Run
		if in.Data != nil {
			src = in.Data.Run
		}
		var b strings.Builder
		if err := render.WriteHTMLRun(&b, in.Report, src); err != nil {
			return err
		}
		r.Tables = template.HTML(b.String()) // html/template escaped it
		byLabel[r.Label] = len(page.Runs)
		page.Runs = append(page.Runs, r)
	}
	for _, f := range set.Figures {
		fig, err := drawSVG(f)
		if err != nil {
			return err
		}
		if i, ok := byLabel[f.Run]; ok && f.Run != "" {
			page.Runs[i].Figures = append(page.Runs[i].Figures, fig)
		} else {
			page.Overlays = append(page.Overlays, fig)
		}
	}
	page.Skipped = append(page.Skipped, set.Skipped...)
	sort.SliceStable(page.Skipped, func(a, b int) bool { return page.Skipped[a].Run < page.Skipped[b].Run })
	var b strings.Builder
	if err := htmlTemplate.Execute(&b, page); err != nil {
		return err
	}
	// html/template escapes markup, not control or bidi characters
	_, err := io.WriteString(w, render.SafeMarkup(b.String()))
	return err
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":  func(v analyze.F) string { return render.HTMLPercent(float64(v)) },
	"fnum": render.Num,
}).Parse(htmlPage))

const htmlPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tokentrace report</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em; color: #111; background: #fff; }
nav { font-size: 0.9em; border: 1px solid #ddd; background: #fafafa; padding: 0.3em 1em; margin: 1em 0; }
nav ul { margin: 0.2em 0; padding-left: 1.2em; } nav li { margin: 0.1em 0; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: right; vertical-align: top; }
th:first-child, td:first-child, td.t { text-align: left; }
th { background: #f3f3f3; }
figure { margin: 1em 0; } figure svg { display: block; width: 100%; height: auto; } figcaption { font-size: 0.85em; color: #444; }
svg .tips circle:hover { fill-opacity: 0.25 !important; }
.warn { color: #8a4b00; } code, .mono { font-family: "Liberation Mono", monospace; font-size: 0.85em; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>tokentrace report</h1>
<p>tokentrace {{.Version}} · {{len .Runs}} run(s). Latencies in ms under each run's convention; plots are drawn from the same per-request data as the tables. Hover a point, a marker or a line of a plot for its values.</p>
<nav id="contents"><strong>Contents</strong>
<ul>
<li><a href="#overview">Overview</a></li>
{{if .Overlays}}<li><a href="#overlays">Tails and goodput (all runs)</a><ul>
{{range .Overlays}}<li><a href="#fig-{{.Name}}">{{.Title}}</a></li>
{{end}}</ul></li>{{end}}
{{range .Runs}}<li><a href="#{{.ID}}">Run {{.Label}}</a>{{if .Figures}}<ul>
{{range .Figures}}<li><a href="#fig-{{.Name}}">{{.Title}}</a></li>
{{end}}</ul>{{end}}</li>
{{end}}{{if .Skipped}}<li><a href="#skipped">Plots skipped</a></li>{{end}}
</ul></nav>
<table id="overview">
<tr><th>run</th><th>tool</th><th>model</th><th>requests</th><th>completed</th><th>failed</th><th>TTFT P99 ms</th><th>E2E P99 ms</th><th>goodput</th></tr>
{{range .Runs}}<tr><td class="t"><a href="#{{.ID}}">{{.Label}}</a></td><td class="t">{{.R.Tool}}</td><td class="t">{{.R.Model}}</td><td>{{.R.Requests.Total}}</td><td>{{.R.Requests.Completed}}</td><td>{{.R.Requests.Failed}}</td><td>{{fnum .TTFTP99}}</td><td>{{fnum .E2EP99}}</td><td>{{with .R.Goodput}}{{pct .Fraction}}{{else}}–{{end}}</td></tr>
{{end}}</table>
{{if .Overlays}}<h2 id="overlays">Tails and goodput (all runs)</h2>
{{range .Overlays}}<figure id="fig-{{.Name}}">{{.SVG}}<figcaption>{{.Title}} · {{.Name}}</figcaption></figure>
{{end}}{{end}}
{{range .Runs}}<h2 id="{{.ID}}">Run {{.Label}}</h2>
{{.Tables}}
{{range .Figures}}<figure id="fig-{{.Name}}">{{.SVG}}<figcaption>{{.Title}} · {{.Name}}</figcaption></figure>
{{end}}{{end}}
{{if .Skipped}}<h2 id="skipped">Plots skipped</h2><ul>
{{range .Skipped}}<li>{{.String}}</li>
{{end}}</ul>{{end}}
</body>
</html>
`
