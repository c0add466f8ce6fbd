package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/formats"
)

// MetricRow is one metric's row of a report's metric table, formatted:
// its label and unit, sample count, mean, standard deviation, extremes,
// the percentiles in the report's order, and the tail percentile's 95%
// interval.
type MetricRow struct {
	Metric              *analyze.Metric
	Label, Unit         string
	N                   int
	Mean, Std, Min, Max string
	Quantiles           []string
	TailLo, TailHi      string
}

// MetricTable is the report's metric table, shared by the text, Markdown
// and HTML renderings: the labels of the percentile columns, the tail
// percentile whose interval is shown (P99, else the highest), and a row
// per report metric with samples, each number written by format.
func MetricTable(m analyze.Metrics, format func(float64) string) (percentiles []string, tail string, rows []MetricRow) {
	return metricTable(m, format, false)
}

// metricTable is MetricTable; with scaled, a row in ms is written in the
// unit most of its values call for (ColumnUnit: docs/OUTPUT.md), its Unit set to
// that unit (Cell), the tail interval too.
func metricTable(m analyze.Metrics, format func(float64) string, scaled bool) (percentiles []string, tail string, rows []MetricRow) {
	ttft := m.Of(analyze.TTFT)
	for _, q := range ttft.Quantiles {
		percentiles = append(percentiles, stats.QuantileLabel(q.P))
	}
	tp := tailQuantile(ttft)
	for _, x := range m {
		if x.N == 0 {
			continue
		}
		q, _ := x.Quantile(tp)
		unit, f := x.Metric.Unit, format
		if scaled && unit == "ms" {
			vals := []float64{x.Mean, x.Std, x.Min, x.Max}
			for _, q := range x.Quantiles {
				vals = append(vals, q.Value)
			}
			unit = ColumnUnit(vals...)
			f = func(v float64) string { return Cell(v, unit) }
		}
		r := MetricRow{Metric: x.Metric, Label: x.Metric.Label, Unit: unit, N: x.N, Mean: f(x.Mean), Std: f(x.Std), Min: f(x.Min),
			Max: f(x.Max), TailLo: f(q.Lo), TailHi: f(q.Hi)}
		for _, q := range x.Quantiles {
			r.Quantiles = append(r.Quantiles, f(q.Value))
		}
		rows = append(rows, r)
	}
	return percentiles, stats.QuantileLabel(tp), rows
}

// HTMLPercent writes a fraction as a percentage with one decimal ("–"
// when undefined).
func HTMLPercent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

// WriteHTMLRun writes one run's report as HTML tables — provenance (from
// run, when not nil), request counts and the metric table, throughput,
// goodput, the length buckets and fits, errors and warnings — for a page
// that embeds them (report.html). Every string from a trace goes through
// html/template's escaping and SafeMarkup (control and bidi characters).
func WriteHTMLRun(w io.Writer, rr *analyze.RunReport, run *formats.Run) error {
	percentiles, tail, rows := MetricTable(rr.Metrics, Num)
	var b strings.Builder
	err := runTemplate.Execute(&b, struct {
		R           *analyze.RunReport
		Run         *formats.Run
		Metrics     []MetricRow
		Percentiles []string
		Tail        string
	}{rr, run, rows, percentiles, tail})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, SafeMarkup(b.String())) // control and bidi characters too (safe.go)
	return err
}

var runTemplate = template.Must(template.New("run").Funcs(template.FuncMap{
	"num":  func(v analyze.F) string { return Num(float64(v)) },
	"pct":  func(v analyze.F) string { return HTMLPercent(float64(v)) },
	"fnum": Num,
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
		return Num(*p)
	},
	"dataChecks":    func(ws []analyze.Warning) []analyze.Warning { return warningsWhere(ws, true) },
	"otherWarnings": func(ws []analyze.Warning) []analyze.Warning { return warningsWhere(ws, false) },
	"join":          strings.Join,
}).Parse(runHTML))

// warningsWhere are the warnings of ws that are data checks (or not).
func warningsWhere(ws []analyze.Warning, dataCheck bool) []analyze.Warning {
	var out []analyze.Warning
	for _, w := range ws {
		if w.DataCheck == dataCheck {
			out = append(out, w)
		}
	}
	return out
}

const runHTML = `<h3>Provenance</h3>
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
{{range .Metrics}}<tr><td class="t">{{.Label}}</td><td class="t">{{.Unit}}</td><td>{{.N}}</td><td>{{.Mean}}</td>{{range .Quantiles}}<td>{{.}}</td>{{end}}<td>{{.Max}}</td><td>[{{.TailLo}}, {{.TailHi}}]</td></tr>
{{end}}</table>{{end}}
<p>Throughput{{if .R.Throughput.Reported}} (reported by the tool){{end}}: duration {{num .R.Throughput.DurationS}} s · {{num .R.Throughput.RequestsPerS}} req/s · {{num .R.Throughput.OutputTokensPerS}} output tok/s · {{num .R.Throughput.TotalTokensPerS}} total tok/s.</p>
{{with .R.Goodput}}<p>Goodput [{{.SLO}}]: {{.Good}} of {{.Total}} requests good = {{pct .Fraction}} · {{num .RequestsPerS}} good req/s.</p>{{end}}
{{if .R.E2EByOSL}}<table><tr><th>E2E by output length (tokens)</th><th>n</th><th>P50 ms</th><th>P90 ms</th><th>P99 ms</th></tr>
{{range .R.E2EByOSL}}{{if .N}}<tr><td class="t">[{{edge .Min}}, {{edge .Max}})</td><td>{{.N}}</td><td>{{fnum .P50}}</td><td>{{fnum .P90}}</td><td>{{fnum .P99}}</td></tr>
{{end}}{{end}}</table>{{end}}
{{with .R.E2EOSLFit}}{{if .Explains}}<p>E2E ≈ {{num .InterceptMs}} ms + {{num .SlopeMsPerToken}} ms × N (R² {{num .R2}}, n {{.N}}).</p>{{else}}<p>E2E vs N: no linear fit: {{.Why}}.</p>{{end}}{{end}}
{{if .R.TTFTByISL}}<table><tr><th>TTFT by input length (tokens)</th><th>n</th><th>P50 ms</th><th>P90 ms</th><th>P99 ms</th></tr>
{{range .R.TTFTByISL}}{{if .N}}<tr><td class="t">[{{edge .Min}}, {{edge .Max}})</td><td>{{.N}}</td><td>{{fnum .P50}}</td><td>{{fnum .P90}}</td><td>{{fnum .P99}}</td></tr>
{{end}}{{end}}</table>{{end}}
{{with .R.TTFTISLFit}}{{if .Explains}}<p>TTFT ≈ {{num .InterceptMs}} ms + {{num .SlopeMsPerToken}} ms × ISL (R² {{num .R2}}, n {{.N}}).</p>{{else}}<p>TTFT vs ISL: no linear fit: {{.Why}}.</p>{{end}}{{end}}
{{if .R.Errors}}<h3>Errors</h3>
<table><tr><th>count</th><th>status</th><th>code</th><th>type</th><th>message</th></tr>
{{range .R.Errors}}<tr><td>{{.Count}}</td><td class="t">{{.Status}}</td><td class="t">{{.Code}}</td><td class="t">{{.Type}}</td><td class="t">{{.Message}}</td></tr>
{{end}}</table>{{end}}
{{if dataChecks .R.Warnings}}<h3>Data checks</h3><p>Known bugs of the tool's data, and values that cannot be right (the catalogue: analyze/TRAPS.md in tokentrace's source); <code>--no-corrections</code> computes on the data as written.</p><ul>
{{range dataChecks .R.Warnings}}<li class="warn"><code>{{.Code}}</code>{{if .Metrics}} [{{join .Metrics " "}}]{{else if .Metric}} [{{.Metric}}]{{end}}{{if .Count}} {{.Count}} request(s){{end}}: {{.Message}}{{if .Source}} — {{.Source}}{{end}}</li>
{{end}}</ul>{{end}}
{{if otherWarnings .R.Warnings}}<h3>Warnings</h3><ul>
{{range otherWarnings .R.Warnings}}<li class="warn"><code>{{.Code}}</code>{{if .Metric}} [{{.Metric}}]{{end}}: {{.Message}}{{if .Source}} ({{.Source}}){{end}}</li>
{{end}}</ul>{{end}}
`
