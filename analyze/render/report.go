package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/formats"
)

// WriteJSON writes the report as indented JSON (the versioned contract).
func WriteJSON(w io.Writer, r *analyze.Report) error { return writeIndentedJSON(w, r) }

// writeIndentedJSON writes v as two-space-indented JSON without HTML
// escaping, the form of every JSON document tokentrace writes.
func writeIndentedJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonSafe(b.Bytes())) // safe.go
	return err
}

// WriteIndentedJSON writes v as writeIndentedJSON does (the form of every
// JSON document tokentrace writes, terminal-safe: safe.go), for documents
// written outside this package (reconcile's).
func WriteIndentedJSON(w io.Writer, v any) error { return writeIndentedJSON(w, v) }

// WriteText writes the report as aligned plain-text tables, one block per
// run (and the pooled block last).
func WriteText(w io.Writer, r *analyze.Report) error {
	return safeOut(w, func(w io.Writer) error { return writeHuman(w, r, false) })
}

// WriteMarkdown writes the report as GitHub-flavoured Markdown (for a CI
// job summary).
func WriteMarkdown(w io.Writer, r *analyze.Report) error {
	return safeOut(w, func(w io.Writer) error { return writeHuman(w, r, true) })
}

func writeHuman(w io.Writer, r *analyze.Report, md bool) error {
	runs := r.Runs
	if r.Pooled != nil {
		runs = append(append([]*analyze.RunReport{}, runs...), r.Pooled)
	}
	for i, rr := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeRun(w, rr, md, r.Location, r.Verbose); err != nil {
			return err
		}
	}
	if r.ServerJoin != nil {
		writeServerJoin(w, r.ServerJoin, md)
	}
	return nil
}

// Num writes a number with about four significant digits, as every
// table of tokentrace's reports does (text, Markdown, HTML, plot labels):
// whole numbers from 1000, then 1, 2 or 3 decimals, and three
// significant digits below 0.01 (0.00523, not 0.005); "–" when undefined.
func Num(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// num is Num.
func num(v float64) string { return Num(v) }

// repNum is num with four significant digits below 1.
func repNum(v float64) string {
	if a := math.Abs(v); a > 0 && a < 1 && !math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return num(v)
}

type table struct {
	md   bool
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the table; a table with only its header row is not printed.
func (t *table) write(w io.Writer) {
	if len(t.rows) < 2 {
		return
	}
	if t.md {
		for i, row := range t.rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
			if i == 0 {
				seps := make([]string, len(row))
				for j := range seps {
					seps[j] = "---"
					if j > 0 {
						seps[j] = "--:"
					}
				}
				fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
			}
		}
		fmt.Fprintln(w)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range t.rows {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	tw.Flush()
}

// clean makes a string from a trace safe to print: the characters
// formats.SafeText replaces (control characters, terminal escapes,
// newlines, bidi overrides, invalid UTF-8) become "?", Markdown-significant
// characters are escaped in Markdown, and long strings are cut at 120
// characters. Traces are untrusted input.
func clean(s string, md bool) string { return cleanN(s, md, 120) }

// cleanN is clean with a length limit of n runes, cut at a word boundary
// (CutWords: docs/OUTPUT.md).
func cleanN(s string, md bool, limit int) string {
	s = CutWords(formats.SafeText(s), limit)
	if !md {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("|<>*_`[]\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func writeRun(w io.Writer, rr *analyze.RunReport, md bool, loc *time.Location, verbose bool) error {
	head := func(s string) {
		if md {
			fmt.Fprintf(w, "### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "== %s ==\n", s)
		}
	}
	line := func(format string, a ...any) {
		fmt.Fprintf(w, format, a...)
		if md {
			fmt.Fprint(w, "  ")
		}
		fmt.Fprintln(w)
	}
	streaming := "streaming unknown"
	if rr.Streaming != nil {
		streaming = map[bool]string{true: "streaming", false: "non-streaming"}[*rr.Streaming]
	}
	head(fmt.Sprintf("run %s", clean(rr.RunID, md)))
	tool := clean(orDash(rr.Tool), md)
	if rr.ToolVersion != "" {
		tool += " " + clean(rr.ToolVersion, md)
	}
	line("tool %s · model %s · %s", tool, clean(orDash(rr.Model), md), streaming)
	line("convention %s (percentiles %s, std %s, N from %s)", rr.Convention.Name, rr.PercentileMethod,
		rr.Convention.Choices["std"], rr.Convention.Choices["output_count"])
	q := rr.Requests
	line("requests %d: %d completed, %d empty, %d failed, %d cancelled (error rate %s)",
		q.Total, q.Completed, q.Empty, q.Failed, q.Cancelled, Pct(float64(q.ErrorRate)))
	if md {
		fmt.Fprintln(w)
	}

	percentiles, tail, rows := metricTable(rr.Metrics, num, true)
	t := &table{md: md}
	t.add(append(append([]string{"metric", "n", "mean", "std", "min"}, percentiles...), "max")...)
	var cis []string
	for _, m := range rows {
		t.add(append(append([]string{m.Label + " " + m.Unit, fmt.Sprint(m.N), m.Mean, m.Std, m.Min}, m.Quantiles...), m.Max)...)
		if m.Metric.Tail {
			cis = append(cis, fmt.Sprintf("%s [%s, %s] %s", m.Label, m.TailLo, m.TailHi, m.Unit))
		}
	}
	t.write(w)
	var inf []string
	failed := 0
	for _, m := range rr.Metrics {
		if m.Summary.Infinite > 0 {
			inf = append(inf, m.Metric.Label)
			failed = max(failed, m.Summary.Infinite)
		}
	}
	if len(inf) > 0 {
		line("∞ (%d failed): failed and cancelled requests count as +∞ in %s (failed_requests %s, AIPerf's adj_*); JSON: null, \"infinite\": %d",
			failed, strings.Join(inf, ", "), rr.Convention.Choices["failed_requests"], failed)
	}
	if len(cis) > 0 {
		line("%s 95%% confidence interval, distribution-free (– : too few samples to bound): %s", tail, strings.Join(cis, " · "))
	}
	tp := rr.Throughput
	tag := ""
	if tp.Reported {
		tag = " (reported by the tool)"
	}
	line("throughput%s: duration %s · %s req/s · %s output tok/s · %s total tok/s",
		tag, Duration(1000*float64(tp.DurationS)), num(float64(tp.RequestsPerS)), num(float64(tp.OutputTokensPerS)), num(float64(tp.TotalTokensPerS)))
	if len(rr.OSLSource) > 0 {
		keys := make([]string, 0, len(rr.OSLSource))
		for k := range rr.OSLSource {
			keys = append(keys, fmt.Sprintf("%s %d", k, rr.OSLSource[k]))
		}
		sort.Strings(keys)
		line("output tokens from: %s", strings.Join(keys, ", "))
	}
	if g := rr.Goodput; g != nil {
		vac := ""
		if g.BoundsTPOT {
			vac = fmt.Sprintf(" (TPOT vacuously met by %d with N ≤ 1)", g.TPOTVacuous)
		}
		line("goodput [%s]: %d of %d requests good = %s · %s good req/s%s",
			g.SLO, g.Good, g.Total, Pct(float64(g.Fraction)), num(float64(g.RequestsPerS)), vac)
	}
	for _, x := range analyze.Table {
		if sp, ok := rr.BetweenRuns[x.Key]; ok && x.Tail {
			u, f := x.Unit, num
			if u == "ms" {
				u = ColumnUnit(float64(sp.Min), float64(sp.Median), float64(sp.Max), float64(sp.Std))
				f = func(v float64) string { return Cell(v, u) }
			}
			line("between runs, P99 %s over %d runs: min %s · median %s · max %s · std %s %s",
				x.Label, len(sp.P99), f(float64(sp.Min)), f(float64(sp.Median)), f(float64(sp.Max)), f(float64(sp.Std)), u)
		}
	}
	if md {
		fmt.Fprintln(w)
	}
	writeBuckets(w, md, "E2E by output length (tokens)", rr.E2EByOSL, rr.E2EOSLFit, "E2E ≈ %s %s × N (R² %s, n %d)", "E2E vs N")
	writeBuckets(w, md, "TTFT by input length (tokens)", rr.TTFTByISL, rr.TTFTISLFit, "TTFT ≈ %s %s × ISL (R² %s, n %d)", "TTFT vs ISL")
	writeDimensions(w, md, rr, line)

	if len(rr.Reported) > 0 {
		keys := make([]string, 0, len(rr.Reported))
		for _, k := range rr.Headline { // the tool's own order: its verdict first
			if _, ok := rr.Reported[k]; ok {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 { // a tool without headline names (MLPerf): the first ones
			for _, k := range slices.Sorted(maps.Keys(rr.Reported)) {
				if len(keys) < 12 {
					keys = append(keys, k)
				}
			}
		}
		t := &table{md: md}
		t.add(fmt.Sprintf("reported by %s (%d of %d metrics; all in the JSON report)", clean(orDash(rr.Tool), md), len(keys), len(rr.Reported)), "unit", "avg/mean", "P50", "P90", "P99")
		var long []string // text values too long for a cell, printed below
		for _, k := range keys {
			r := rr.Reported[k]
			v := rep(r, "avg", "mean", "value")
			if len(v) > 40 {
				long = append(long, fmt.Sprintf("  %s: %s", clean(k, md), cleanN(v, md, lineLimit(verbose, 600))))
				v = "(below)"
			}
			t.add(clean(k, md), clean(fmt.Sprint(orEmpty(r["unit"])), md), v, rep(r, "p50"), rep(r, "p90"), rep(r, "p99"))
		}
		t.write(w)
		for _, l := range long {
			line("%s", l)
		}
	}
	for i, e := range rr.Errors {
		if i == 5 {
			line("  … %d more error kinds in the JSON report", len(rr.Errors)-5)
			break
		}
		desc := e.Status
		if e.Code != "" {
			desc += " " + e.Code
		}
		if e.Type != "" {
			desc += " " + e.Type
		}
		if e.Message != "" {
			desc += ": " + e.Message
		}
		line("errors: %d × %s", e.Count, cleanN(desc, md, lineLimit(verbose, 120)))
	}
	writeForensics(w, rr, md, loc, line) // forensics.go
	if rp := rr.Reproduction; rp != nil {
		writeReproduction(w, rp, rr.Tool, md)
	}
	checks := 0
	for _, wn := range rr.Warnings {
		if !wn.DataCheck {
			continue
		}
		if checks == 0 {
			line("data checks (the catalogue: analyze/TRAPS.md; --no-corrections computes on the data as written; --verbose prints them in full):")
		}
		checks++
		line("  %s", dataCheckLine(wn, md, verbose))
	}
	var ws []analyze.Warning
	for _, wn := range rr.Warnings {
		if !wn.DataCheck {
			ws = append(ws, wn)
		}
	}
	// one line per code: the metrics it is about, the first message
	groups := groupWarnings(len(ws), func(i int) string { return ws[i].Code }, func(i int) string { return metricLabel(ws[i].Metric) },
		func(i int) string {
			msg := ws[i].Message
			if ws[i].Source != "" {
				msg += " (" + ws[i].Source + ")"
			}
			return msg
		})
	for _, g := range groups {
		line("%s", g.line("warning ", "metric", LineLimit, verbose, md))
	}
	return nil
}

// metricLabel is a metric's label ("TTFT" for ttft_ms), the key itself
// when it is not a report metric.
func metricLabel(key string) string {
	if key == "" {
		return ""
	}
	for _, x := range analyze.Table {
		if x.Key == key {
			return x.Label
		}
	}
	return key
}

// lineLimit is limit, or no limit under --verbose.
func lineLimit(verbose bool, limit int) int {
	if verbose {
		return math.MaxInt
	}
	return limit
}

// dataCheckLine is one data check of a run: code, metric, count of
// requests, what was found and done, and the public source. Unless
// verbose, what was found is cut at a word boundary so that the line
// holds DataCheckLimit characters; the code, the count and the source are
// never cut (docs/OUTPUT.md).
func dataCheckLine(wn analyze.Warning, md, verbose bool) string {
	head := wn.Code
	if len(wn.Metrics) > 0 {
		head += " [" + strings.Join(wn.Metrics, " ") + "]"
	} else if wn.Metric != "" {
		head += " [" + wn.Metric + "]"
	}
	if wn.Count > 0 {
		head += fmt.Sprintf(" %d request(s)", wn.Count)
	}
	src := ""
	if wn.Source != "" {
		src = " — " + wn.Source
	}
	room := math.MaxInt
	if !verbose {
		room = max(60, DataCheckLimit-utf8.RuneCountInString(head+": "+src))
	}
	return formats.SafeText(head) + ": " + cleanN(wn.Message, md, room) + cleanN(src, md, math.MaxInt)
}

func writeBuckets(w io.Writer, md bool, title string, bs []analyze.Bucket, f *analyze.Fit, fitFmt, what string) {
	var vals []float64
	for _, b := range bs {
		if b.N > 0 {
			vals = append(vals, b.P50, b.P90, b.P99)
		}
	}
	u := ColumnUnit(vals...) // one unit for the table's percentiles
	in := func(v float64) string { return Cell(v, u) }
	t := &table{md: md}
	t.add(title, "n", "P50 "+u, "P90 "+u, "P99 "+u)
	for _, b := range bs {
		if b.N == 0 {
			continue
		}
		hi := fmt.Sprintf("%g", b.Max)
		if math.IsInf(b.Max, 1) {
			hi = "∞"
		}
		t.add(fmt.Sprintf("[%g, %s)", b.Min, hi), fmt.Sprint(b.N), in(b.P50), in(b.P90), in(b.P99))
	}
	if len(t.rows) < 2 {
		return
	}
	t.write(w)
	switch {
	case f != nil && f.Explains:
		fmt.Fprintf(w, fitFmt+"\n", Duration(float64(f.InterceptMs)), signedDuration(float64(f.SlopeMsPerToken)), num(float64(f.R2)), f.N)
	case f != nil:
		fmt.Fprintf(w, "%s: no linear fit: %s\n", what, f.Why)
	}
	if f != nil && md {
		fmt.Fprintln(w)
	}
}

// tailQuantile is the percentile whose interval the text report shows:
// P99 when the summary holds it, else its highest percentile.
func tailQuantile(s stats.Summary) float64 {
	if _, ok := s.Quantile(0.99); ok || len(s.Quantiles) == 0 {
		return 0.99
	}
	return s.Quantiles[len(s.Quantiles)-1].P
}

// signedDuration writes a sum's next term, a duration in ms: "+ 3.200
// ms" or "− 3.200 ms".
func signedDuration(v float64) string {
	if v < 0 {
		return "− " + Duration(-v)
	}
	return "+ " + Duration(v)
}

// rep writes the tool's own value: as num, but a value below 1 keeps four
// significant digits (0.005234, not 0.005): tools report seconds, and the
// value must compare with tokentrace's milliseconds (5.234).
func rep(r analyze.Reported, keys ...string) string {
	for _, k := range keys {
		if v, ok := r[k]; ok {
			if f, ok := v.(analyze.F); ok {
				return repNum(float64(f))
			}
			// a tool's text (MLPerf's early-stopping block): one line
			return strings.Join(strings.Fields(fmt.Sprint(v)), " ")
		}
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// writeReproduction summarizes a Reproduction: the counts, then the
// statistics that differ or cannot be recomputed, grouped by reason.
func writeReproduction(w io.Writer, rp *analyze.Reproduction, tool string, md bool) {
	fmt.Fprintf(w, "reproduction under %s: %d of %d statistics %s reported reproduced within %g; %d differ, %d not reproducible\n",
		rp.Convention, rp.Reproduced, rp.Total, orDash(tool), analyze.ReproTolerance, rp.Differs, rp.NotReproducible)
	type group struct {
		status, reason string
		metrics        []string
		n              int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, it := range rp.Items {
		if it.Status == "reproduced" {
			continue
		}
		key := it.Status + "|" + it.Reason
		g := byKey[key]
		if g == nil {
			g = &group{status: it.Status, reason: it.Reason}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.n++
		if len(g.metrics) == 0 || g.metrics[len(g.metrics)-1] != it.Metric {
			g.metrics = append(g.metrics, it.Metric)
		}
	}
	for _, g := range groups {
		names := g.metrics
		if len(names) > 4 {
			names = append(append([]string{}, names[:4]...), fmt.Sprintf("+%d more", len(g.metrics)-4))
		}
		prefix := "  "
		if md {
			prefix = "- "
		}
		fmt.Fprintf(w, "%s%s (%d): %s — %s\n", prefix, strings.ReplaceAll(g.status, "_", " "), g.n, strings.Join(names, ", "), g.reason)
	}
	if md {
		fmt.Fprintln(w)
	}
}

// writeDimensions writes the prefix-cache, speculative-decoding, energy
// and sessions blocks of a run, each only where the run has the data.
func writeDimensions(w io.Writer, md bool, rr *analyze.RunReport, line func(string, ...any)) {
	pctTable := func(title string, rows [][2]string, ps [][3]float64, ns []int) {
		var vals []float64
		for _, p := range ps {
			vals = append(vals, p[0], p[1], p[2])
		}
		u := ColumnUnit(vals...)
		t := &table{md: md}
		t.add(title, "n", "P50 "+u, "P90 "+u, "P99 "+u)
		for k, r := range rows {
			t.add(r[0], fmt.Sprint(ns[k]), Cell(ps[k][0], u), Cell(ps[k][1], u), Cell(ps[k][2], u))
		}
		t.write(w)
		if md {
			fmt.Fprintln(w)
		}
	}
	if c := rr.Cache; c != nil {
		unk := ""
		if c.Unknown > 0 {
			unk = fmt.Sprintf("; %d without a count: unknown, not misses", c.Unknown)
		}
		reqs := "requests"
		if c.Requests == 1 {
			reqs = "request"
		}
		line("prefix cache: %s of %d input tokens cached (%d completed %s, token-weighted%s)", Pct(float64(c.HitFraction)), c.InputTokens, c.Requests, reqs, unk)
		if len(rr.TTFTByCache) > 1 {
			var rows [][2]string
			var ps [][3]float64
			var ns []int
			for _, b := range rr.TTFTByCache {
				rows, ns = append(rows, [2]string{b.Bucket}), append(ns, b.N)
				ps = append(ps, [3]float64{float64(b.P50), float64(b.P90), float64(b.P99)})
			}
			pctTable(fmt.Sprintf("TTFT by prefix cache (hit: ≥ %g%% cached)", 100*analyze.CacheHitShare), rows, ps, ns)
		}
	}
	if sd := rr.SpecDecode; sd != nil {
		line("speculative decoding: acceptance length %s tokens per step · draft acceptance %s (%d requests, %d steps; ITL and TPOT stay per token)",
			num(float64(sd.AcceptanceLengthMean)), Pct(float64(sd.DraftAcceptanceRate)), sd.Requests, sd.Steps)
	}
	if e := rr.Energy; e != nil {
		dup := ""
		if e.Duplicates > 0 {
			dup = fmt.Sprintf("; %d duplicate exporter(s) counted once", e.Duplicates)
		}
		per := num(float64(e.EnergyPerOutputTokenMJ)) + " mJ per output token"
		if e.Why != "" {
			per = "per output token unknown: " + e.Why
		}
		line("energy: %s J over the run (%d device(s), %s%s; %s of the run covered) · %s",
			num(float64(e.EnergyJ)), e.Devices, map[string]string{"counter": "energy counter", "power": "power integrated", "counter+power": "counters, power where none"}[e.Source],
			dup, Pct(float64(e.CoverageShare)), per)
	}
	if s := rr.Sessions; s != nil {
		line("sessions: %d (%d completed, %d failed: one failed turn fails its session) · %s requests each · span P50 %s, P99 %s (n %d)",
			s.Count, s.Completed, s.Failed, num(float64(s.TurnsMean)), Duration(float64(s.Duration.P50)), Duration(float64(s.Duration.P99)), s.Duration.N)
		if len(rr.TTFTByTurn) > 0 {
			var rows [][2]string
			var ps [][3]float64
			var ns []int
			for _, b := range rr.TTFTByTurn {
				rows, ns = append(rows, [2]string{fmt.Sprint(b.Turn)}), append(ns, b.N)
				ps = append(ps, [3]float64{float64(b.P50), float64(b.P90), float64(b.P99)})
			}
			pctTable("TTFT by turn", rows, ps, ns)
		}
	}
}
