package plots

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
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
	render := func(f *Figure) (figure, error) {
		svg, err := f.SVG()
		if err != nil {
			return figure{}, err
		}
		// gonum/plot's SVG escapes all text it draws: trusted markup.
		return figure{Title: f.Title, Name: f.Name, SVG: template.HTML(svg)}, nil
	}
	type run struct {
		R       *analyze.RunReport
		Run     *formats.Run
		Label   string
		Metrics []metricRow
		// Percentiles label the metric table's percentile columns; Tail
		// the one whose interval is shown.
		Percentiles []string
		Tail        string
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
		r := run{R: in.Report, Label: in.label(), TTFTP99: in.Report.Metrics.Of(analyze.TTFT).Value(0.99), E2EP99: in.Report.Metrics.Of(analyze.E2E).Value(0.99)}
		r.Metrics, r.Percentiles, r.Tail = metricRows(&in.Report.Metrics)
		if in.Data != nil {
			r.Run = in.Data.Run
		}
		byLabel[r.Label] = len(page.Runs)
		page.Runs = append(page.Runs, r)
	}
	for _, f := range set.Figures {
		fig, err := render(f)
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
	return htmlTemplate.Execute(w, page)
}

type metricRow struct {
	Name, Unit            string
	N                     int
	Mean, Max, CILo, CIHi string
	Quantiles             []string
}

func metricRows(m *analyze.Metrics) (rows []metricRow, labels []string, tail string) {
	ttft := m.Of(analyze.TTFT)
	for _, q := range ttft.Quantiles {
		labels = append(labels, stats.QuantileLabel(q.P))
	}
	tp := 0.99
	if _, ok := ttft.Quantile(tp); !ok && len(ttft.Quantiles) > 0 {
		tp = ttft.Quantiles[len(ttft.Quantiles)-1].P
	}
	for _, x := range *m {
		if x.N == 0 {
			continue
		}
		q, _ := x.Quantile(tp)
		r := metricRow{Name: x.Metric.Label, Unit: x.Metric.Unit, N: x.N, Mean: fmtNum(x.Mean), Max: fmtNum(x.Max), CILo: fmtNum(q.Lo), CIHi: fmtNum(q.Hi)}
		for _, q := range x.Quantiles {
			r.Quantiles = append(r.Quantiles, fmtNum(q.Value))
		}
		rows = append(rows, r)
	}
	return rows, labels, stats.QuantileLabel(tp)
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":  func(v analyze.F) string { return fmtNum(float64(v)) },
	"pct":  func(v analyze.F) string { return pct(float64(v)) },
	"fnum": fmtNum,
	"edge": func(v float64) string {
		if math.IsInf(v, 1) {
			return "∞"
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	},
	"streaming": func(b *bool) string {
		switch {
		case b == nil:
			return "unknown"
		case *b:
			return "streaming"
		}
		return "non-streaming"
	},
	"optf": func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmtNum(*p)
	},
}).Parse(htmlPage))

const htmlPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tokentrace report</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 60em; padding: 0 1em; color: #111; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: right; vertical-align: top; }
th:first-child, td:first-child, td.t { text-align: left; }
th { background: #f3f3f3; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; } figcaption { font-size: 0.85em; color: #444; }
.warn { color: #8a4b00; } code, .mono { font-family: "Liberation Mono", monospace; font-size: 0.85em; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>tokentrace report</h1>
<p>tokentrace {{.Version}} · {{len .Runs}} run(s). Latencies in ms under each run's convention; plots are drawn from the same per-request data as the tables.</p>
<table>
<tr><th>run</th><th>tool</th><th>model</th><th>requests</th><th>completed</th><th>failed</th><th>TTFT P99 ms</th><th>E2E P99 ms</th><th>goodput</th></tr>
{{range .Runs}}<tr><td class="t"><a href="#run-{{.Label}}">{{.Label}}</a></td><td class="t">{{.R.Tool}}</td><td class="t">{{.R.Model}}</td><td>{{.R.Requests.Total}}</td><td>{{.R.Requests.Completed}}</td><td>{{.R.Requests.Failed}}</td><td>{{fnum .TTFTP99}}</td><td>{{fnum .E2EP99}}</td><td>{{with .R.Goodput}}{{pct .Fraction}}{{else}}–{{end}}</td></tr>
{{end}}</table>
{{if .Overlays}}<h2>Tails and goodput (all runs)</h2>
{{range .Overlays}}<figure id="fig-{{.Name}}">{{.SVG}}<figcaption>{{.Title}} · {{.Name}}</figcaption></figure>
{{end}}{{end}}
{{range .Runs}}<h2 id="run-{{.Label}}">Run {{.Label}}</h2>
<h3>Provenance</h3>
<table>
<tr><th>tool</th><td class="t">{{.R.Tool}} {{.R.ToolVersion}}</td></tr>
<tr><th>model</th><td class="t">{{.R.Model}}</td></tr>
<tr><th>kind</th><td class="t">{{streaming .R.Streaming}}</td></tr>
<tr><th>convention</th><td class="t">{{.R.Convention.Name}} (percentiles {{.R.PercentileMethod}})</td></tr>
{{with .Run}}<tr><th>endpoint</th><td class="t">{{.Endpoint}}</td></tr>
<tr><th>load</th><td class="t">{{.LoadMode}} · concurrency {{optf .Concurrency}} · rate {{optf .RequestRateRPS}} req/s</td></tr>
<tr><th>tool convention</th><td class="t">{{.Convention}}</td></tr>
<tr><th>imported by</th><td class="t">tokentrace {{.TokentraceVersion}} (table schema {{.SchemaVersion}})</td></tr>
{{if .Truncated}}<tr><th>truncated</th><td class="t warn">an input file was cut short; complete requests imported</td></tr>{{end}}
</table>
<table><tr><th>source file</th><th>role</th><th>bytes</th><th>SHA-256</th></tr>
{{range .SourceFiles}}<tr><td class="t mono">{{.Path}}</td><td class="t">{{.Role}}</td><td>{{.Bytes}}</td><td class="t mono">{{.SHA256}}</td></tr>
{{end}}</table>
{{if .Notes}}<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{else}}</table>{{end}}
<h3>Requests and latency</h3>
<p>{{.R.Requests.Total}} requests: {{.R.Requests.Completed}} completed, {{.R.Requests.Empty}} empty, {{.R.Requests.Failed}} failed, {{.R.Requests.Cancelled}} cancelled (error rate {{pct .R.Requests.ErrorRate}}).</p>
{{if .Metrics}}<table>
<tr><th>metric</th><th>unit</th><th>n</th><th>mean</th>{{range .Percentiles}}<th>{{.}}</th>{{end}}<th>max</th><th>{{.Tail}} 95% CI</th></tr>
{{range .Metrics}}<tr><td class="t">{{.Name}}</td><td class="t">{{.Unit}}</td><td>{{.N}}</td><td>{{.Mean}}</td>{{range .Quantiles}}<td>{{.}}</td>{{end}}<td>{{.Max}}</td><td>[{{.CILo}}, {{.CIHi}}]</td></tr>
{{end}}</table>{{end}}
<p>Throughput{{if .R.Throughput.Reported}} (reported by the tool){{end}}: duration {{num .R.Throughput.DurationS}} s · {{num .R.Throughput.RequestsPerS}} req/s · {{num .R.Throughput.OutputTokensPerS}} output tok/s · {{num .R.Throughput.TotalTokensPerS}} total tok/s.</p>
{{with .R.Goodput}}<p>Goodput [{{.SLO}}]: {{.Good}} of {{.Total}} requests good = {{pct .Fraction}} · {{num .RequestsPerS}} good req/s.</p>{{end}}
{{if .R.E2EByOSL}}<table><tr><th>E2E by output length (tokens)</th><th>n</th><th>P50 ms</th><th>P90 ms</th><th>P99 ms</th></tr>
{{range .R.E2EByOSL}}{{if .N}}<tr><td class="t">[{{edge .Min}}, {{edge .Max}})</td><td>{{.N}}</td><td>{{fnum .P50}}</td><td>{{fnum .P90}}</td><td>{{fnum .P99}}</td></tr>
{{end}}{{end}}</table>{{end}}
{{with .R.E2EOSLFit}}<p>E2E ≈ {{num .InterceptMs}} ms + {{num .SlopeMsPerToken}} ms × N (R² {{num .R2}}, n {{.N}}).</p>{{end}}
{{if .R.TTFTByISL}}<table><tr><th>TTFT by input length (tokens)</th><th>n</th><th>P50 ms</th><th>P90 ms</th><th>P99 ms</th></tr>
{{range .R.TTFTByISL}}{{if .N}}<tr><td class="t">[{{edge .Min}}, {{edge .Max}})</td><td>{{.N}}</td><td>{{fnum .P50}}</td><td>{{fnum .P90}}</td><td>{{fnum .P99}}</td></tr>
{{end}}{{end}}</table>{{end}}
{{with .R.TTFTISLFit}}<p>TTFT ≈ {{num .InterceptMs}} ms + {{num .SlopeMsPerToken}} ms × ISL (R² {{num .R2}}, n {{.N}}).</p>{{end}}
{{if .R.Errors}}<h3>Errors</h3>
<table><tr><th>count</th><th>status</th><th>code</th><th>type</th><th>message</th></tr>
{{range .R.Errors}}<tr><td>{{.Count}}</td><td class="t">{{.Status}}</td><td class="t">{{.Code}}</td><td class="t">{{.Type}}</td><td class="t">{{.Message}}</td></tr>
{{end}}</table>{{end}}
{{if .R.Warnings}}<h3>Warnings</h3><ul>
{{range .R.Warnings}}<li class="warn"><code>{{.Code}}</code>{{if .Metric}} [{{.Metric}}]{{end}}: {{.Message}}</li>
{{end}}</ul>{{end}}
{{range .Figures}}<figure id="fig-{{.Name}}">{{.SVG}}<figcaption>{{.Title}} · {{.Name}}</figcaption></figure>
{{end}}{{end}}
{{if .Skipped}}<h2>Plots skipped</h2><ul>
{{range .Skipped}}<li>{{.String}}</li>
{{end}}</ul>{{end}}
</body>
</html>
`
