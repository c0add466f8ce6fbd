// Package plots draws latency tails with gonum/plot from the same
// per-request data a report is built from (analyze.RunData beside the
// analyze.RunReport, one Analyzer), and writes the self-contained
// report.html.
//
// Data preparation is separate from rendering: CCDF, Scatter,
// BuildTimeline, ITLByPosition and GoodputCurves
// return plain numbers that tests assert; Build turns runs into Figures
// (each with a text dump of its numbers in Figure.Data) and lists the plots
// a run's data cannot support in Set.Skipped; Figure.Render writes SVG, PNG
// or PDF. No metric is defined here: values, percentiles, buckets and fits
// are the report's (analyze/metrics.go, analyze/stats/percentile.go,
// analyze/analyzer.go); the goodput test of a request uses
// analyze.Constraint.Value and Met. README.md in this directory documents
// each plot kind, the thinning of large runs, memory, determinism and
// report.html.
package plots
