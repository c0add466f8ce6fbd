package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/compare"
	"github.com/tokentrace/tokentrace/analyze/sweep"
	"github.com/tokentrace/tokentrace/formats"
)

// Comparison is what `tokentrace compare` writes: the comparison of the
// sides (compare.Result) and, when their runs form sweeps, the sweeps
// (JSON: the comparison's keys and "sweeps").
type Comparison struct {
	*compare.Result
	Sweeps *sweep.Result `json:"sweeps,omitempty"`
	// Verbose asks the text and Markdown outputs for every warning in
	// full (--verbose); not in the JSON.
	Verbose bool `json:"-"`
}

// writeCompareWarnings writes the comparison's warnings, one line each:
// the runs' data checks grouped by code ("data check X on 16 runs"), the
// others cut at a word boundary (docs/OUTPUT.md).
func writeCompareWarnings(r *compare.Result, verbose, md bool, line func(string, ...any)) {
	fromCheck := map[int]bool{}
	for _, d := range r.DataChecks {
		fromCheck[d.Warning] = true
	}
	dc := r.DataChecks
	groups := groupWarnings(len(dc), func(i int) string { return dc[i].Code }, func(i int) string { return dc[i].Side + "/" + dc[i].Run },
		func(i int) string { return dc[i].Message })
	for _, g := range groups {
		line("%s", g.line("warning: data check ", "run", LineLimit-len(" (analyze/TRAPS.md)"), verbose, md)+" (analyze/TRAPS.md)")
	}
	for i, wn := range r.Warnings {
		if !fromCheck[i] {
			line("warning: %s", cleanN(wn, md, lineLimit(verbose, LineLimit)))
		}
	}
}

// WriteCompareJSON writes a comparison as indented JSON (NaN as null).
func WriteCompareJSON(w io.Writer, c *Comparison) error { return writeIndentedJSON(w, c) }

// WriteCompareText writes a comparison as text: the sides, the matching,
// a table per metric in benchstat's manner (values side by side, the
// change against the base with "~" when not significant, the bounds of
// the difference with their test as a footnote), then the sweeps.
func WriteCompareText(w io.Writer, c *Comparison) error { return writeCompare(w, c, false) }

// WriteCompareMarkdown writes a comparison as Markdown (for a pull
// request comment).
func WriteCompareMarkdown(w io.Writer, c *Comparison) error {
	return writeCompare(w, c, true)
}

// footnotes numbers distinct notes in order of first use.
type footnotes struct {
	list []string
	idx  map[string]int
}

func (f *footnotes) mark(note string) string {
	if f.idx == nil {
		f.idx = map[string]int{}
	}
	i, ok := f.idx[note]
	if !ok {
		f.list = append(f.list, note)
		i = len(f.list)
		f.idx[note] = i
	}
	return superscript(i)
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, r := range strconv.Itoa(n) {
		b.WriteString(string([]rune(digits)[r-'0']))
	}
	return b.String()
}

func writeCompare(out io.Writer, c *Comparison, md bool) error {
	w := &errWriter{w: out}
	r := c.Result
	h := func(s string) {
		if md {
			fmt.Fprintf(w, "### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "== %s ==\n", s)
		}
	}
	line := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		if md {
			s = "- " + s
		}
		fmt.Fprintln(w, s)
	}
	h("compare")
	for i, s := range r.Sides {
		role := "vs  "
		if i == 0 {
			role = "base"
		}
		line("%s %s: %s (%s; %s; convention %s)", role, clean(s.Label, md), plural(len(s.Runs), "run"),
			clean(strings.Join(s.Tools, "+"), md), clean(strings.Join(s.Models, ", "), md), clean(s.Convention, md))
	}
	line("matched by %s: %s compared", strings.Join(r.Matching.Keys, ", "), plural(len(r.Matching.Groups), "configuration"))
	if common := r.Matching.Common(); common != "" {
		line("configuration: %s", clean(common, md))
	}
	for _, u := range r.Matching.Unmatched {
		line("unmatched on %s: %s (%s)", clean(r.Sides[u.Side].Label, md), clean(u.Key, md), clean(strings.Join(u.Runs, ", "), md))
	}
	for _, e := range r.Matching.Excluded {
		line("left out on %s: %s (%s)", clean(r.Sides[e.Side].Label, md), clean(e.Run, md), e.Why)
	}
	for _, d := range MatchHint(r) {
		line("%s", cleanN(d, md, 1000))
	}
	writeCompareWarnings(r, c.Verbose, md, line)
	fmt.Fprintln(w)
	var notes footnotes
	for _, t := range r.Tables {
		writeCompareTable(w, r, t, md, &notes)
	}
	if len(r.Tables) > 0 {
		writeCompareLegend(w, r, md, &notes)
	}
	if c.Sweeps != nil {
		writeSweeps(w, c, md)
	}
	return w.err
}

// errWriter keeps the first error of its writer's writes and writes
// nothing after it: a report written in many Fprintf calls returns it once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// MatchHint explains, when some side had no run matched, which keys told
// the sides apart and the flags that pair them ("" lines when all
// matched).
func MatchHint(r *compare.Result) []string {
	if len(r.Matching.Differ) == 0 {
		return nil
	}
	var out []string
	var keys []string
	for _, d := range r.Matching.Differ {
		var parts []string
		for si, v := range d.Values {
			parts = append(parts, fmt.Sprintf("%s has %s", r.Sides[si].Label, strings.Join(v, ", ")))
		}
		out = append(out, fmt.Sprintf("no run paired on %s: %s", d.Key, strings.Join(parts, "; ")))
		keys = append(keys, d.Key)
	}
	out = append(out, fmt.Sprintf("to compare them anyway: --ignore %s (or --match with the keys to keep)", strings.Join(keys, ",")))
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// unitLabel is a table's unit as shown in its title.
func unitLabel(unit string) string {
	if unit == "fraction" {
		return "%"
	}
	return unit
}

// cmpValue writes a value in the table's unit: fractions as percentages
// (Pct).
func cmpValue(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if unit == "fraction" {
		return Pct(v)
	}
	if isDuration(unit) {
		return Cell(v, unit)
	}
	return num(v)
}

// cmpSigned writes a difference with its sign (fractions in percentage
// points).
func cmpSigned(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 1):
		return "+∞"
	case math.IsInf(v, -1):
		return "-∞"
	}
	s := ""
	switch {
	case unit == "fraction":
		s = pctDigits(100 * v)
	case isDuration(unit):
		s = Cell(v, unit)
	default:
		s = num(v)
	}
	if v >= 0 && !strings.HasPrefix(s, "+") {
		s = "+" + s
	}
	return s
}

// pctChange writes a relative change as a signed percentage (SignedPct).
func pctChange(v float64) string { return SignedPct(v) }

// spread is a cell's between-run spread: ± half the range of the runs'
// own values, relative to the pooled value ("" for one run).
func spread(c compare.Cell) string {
	if len(c.RunValues) < 2 || math.IsNaN(float64(c.Value)) || c.Value == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range c.RunValues {
		lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
	}
	if math.IsInf(lo, 0) || math.IsNaN(lo) {
		return ""
	}
	return fmt.Sprintf(" ±%.0f%%", 100*(hi-lo)/2/math.Abs(float64(c.Value)))
}

// deltaText is the "vs base" cell: the change when significant, "~ (…)"
// when not, "? (…)" when untested.
func deltaText(d *compare.Delta, unit string) string {
	if d == nil {
		return ""
	}
	ch := pctChange(float64(d.Change))
	if math.IsNaN(float64(d.Change)) {
		// against a base of 0: the difference itself
		ch = cmpSigned(float64(d.Diff), unit)
		if unit == "fraction" {
			ch += " pp"
		}
	}
	switch d.Verdict {
	case "~":
		return "~ (" + ch + ")"
	case "untested":
		return "? (" + ch + ")"
	}
	return ch
}

// boundsText is the "Δ bounds" cell with its test's footnote.
func boundsText(d *compare.Delta, unit string, notes *footnotes) string {
	if d == nil {
		return ""
	}
	if d.Verdict == "untested" {
		return notes.mark("untested: " + strings.TrimSuffix(strings.TrimPrefix(d.Test, "none ("), ")"))
	}
	s := "[" + cmpSigned(float64(d.Lo), unit) + ", " + cmpSigned(float64(d.Hi), unit) + "]"
	if p := float64(d.PValue); !math.IsNaN(p) {
		s += fmt.Sprintf(" p=%.3f", p)
	}
	return s + notes.mark(testNote(d.Test))
}

// testNote explains a test in the legend.
func testNote(test string) string {
	switch {
	case strings.HasPrefix(test, "order-statistic bounds"):
		return test + ": each side's distribution-free bound of the percentile (binomial order statistics); Δ from the candidate's lower bound minus the base's upper, and the candidate's upper minus the base's lower"
	case strings.Contains(test, "bootstrap"):
		return test + ": each side's bound of the percentile, from order statistics where the sample gives one, else the percentile bootstrap (seeded: the same bounds on every run), ±∞ where resampling reaches the sample's extreme (too few values to bound that tail); Δ as for order-statistic bounds"
	case test == "welch t":
		return "welch t: Welch's unequal-variance t test of the means; Δ = difference ∓ t·se"
	case test == "welch t over runs":
		return "welch t over runs: Welch's t test over the runs' own values (the rate of each repeated run)"
	case test == "agresti-caffo":
		return "agresti-caffo: the Agresti–Caffo interval and test of two proportions (one success and one failure added to each); Δ in percentage points"
	}
	return test
}

func writeCompareTable(w io.Writer, r *compare.Result, t compare.Table, md bool, notes *footnotes) {
	if t.Unit == "ms" {
		t.Unit = tableUnit(t) // a copy: the Result keeps ms
	}
	title := t.Label
	if u := unitLabel(t.Unit); u != "" {
		title += " (" + u + ")"
	}
	base := clean(r.Sides[0].Label, md)
	header := []string{title}
	for si, s := range r.Sides {
		header = append(header, clean(s.Label, md), "n")
		if si > 0 {
			header = append(header, "vs "+base, "Δ bounds")
		}
	}
	multi := len(r.Matching.Groups) > 1
	tb := &table{md: md}
	tb.add(header...)
	for _, row := range t.Rows {
		name := row.Stat
		if multi {
			name = clean(row.Label, md) + " " + row.Stat
			if row.Stat == "value" {
				name = clean(row.Label, md)
			}
		}
		cells := []string{name}
		for si, c := range row.Cells {
			v := cmpValue(float64(c.Value), t.Unit) + spread(c)
			if math.IsNaN(float64(c.Value)) && c.Why != "" && c.Runs > 0 {
				v += notes.mark("–: " + c.Why)
			}
			if c.Source == "reported" && !math.IsNaN(float64(c.Value)) {
				if t.Metric == "throughput" || t.Metric == "request_rate" {
					v += notes.mark("reported: the tool's own throughput (the source has no request start times to recompute it)")
				} else {
					v += notes.mark("reported: the tool's own summary value (the run has no per-request data)")
				}
			}
			for _, wn := range c.Warnings {
				v += notes.mark(wn)
			}
			n := ""
			if c.N > 0 {
				n = strconv.Itoa(c.N)
			}
			cells = append(cells, v, n)
			if si > 0 {
				cells = append(cells, deltaText(c.VsBase, t.Unit), boundsText(c.VsBase, t.Unit, notes))
			}
		}
		tb.add(cells...)
	}
	if g := t.Geomean; g != nil {
		cells := []string{"geomean"}
		for si := range r.Sides {
			cells = append(cells, cmpValue(float64(g.Values[si]), t.Unit), "")
			if si > 0 {
				cells = append(cells, pctChange(float64(g.Change[si])), "")
			}
		}
		if g.Note != "" {
			cells[len(cells)-1] = notes.mark("geomean: " + g.Note)
		}
		tb.add(cells...)
	}
	if md {
		fmt.Fprintf(w, "#### %s\n\n", clean(title, md))
		tb.rows[0][0] = "statistic"
	}
	tb.write(w)
	if !md {
		fmt.Fprintln(w)
	}
}

func writeCompareLegend(w io.Writer, r *compare.Result, md bool, notes *footnotes) {
	a := float64(r.Alpha)
	legend := []string{
		fmt.Sprintf("vs %s: the change against the base; ~ not significant, ? untested. Δ bounds: one-sided %s%% lower and upper bounds of the difference (together a %s%% interval), the test gate --baseline applies at --alpha %s: a change is significant when the bound on its side excludes 0",
			clean(r.Sides[0].Label, md), fmtPct(1-a), fmtPct(1-2*a), strconv.FormatFloat(a, 'g', -1, 64)),
	}
	if anyGeomean(r) {
		legend = append(legend, "geomean: the geometric mean of the metric's rows above (its statistics, over every configuration compared), benchstat's summary row: one overall ratio, not a test")
	}
	if anySpread(r) {
		legend = append(legend, "±: between-run spread (half the range of the runs' own values, relative to the pooled value); runs of one configuration are pooled")
	}
	for i, n := range notes.list {
		legend = append(legend, superscript(i+1)+" "+n)
	}
	for _, l := range legend {
		if md {
			fmt.Fprintf(w, "%s\n\n", clean(l, md))
		} else {
			fmt.Fprintln(w, l)
		}
	}
	if !md {
		fmt.Fprintln(w)
	}
}

// anyGeomean reports whether some table has a geomean row.
func anyGeomean(r *compare.Result) bool {
	for _, t := range r.Tables {
		if t.Geomean != nil {
			return true
		}
	}
	return false
}

// anySpread reports whether some cell pools several runs.
func anySpread(r *compare.Result) bool {
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for _, c := range row.Cells {
				if len(c.RunValues) > 1 {
					return true
				}
			}
		}
	}
	return false
}

func fmtPct(v float64) string { return strconv.FormatFloat(100*v, 'g', 4, 64) }

// WriteCompareCSV writes a comparison as CSV (RFC 4180): one record per
// metric, configuration, statistic and side, with the side's comparison
// against the base (empty for the base): metric, unit, config, stat,
// side, value, n, runs, source, vs, change, diff, lo, hi, test, p_value,
// verdict. Undefined numbers are empty fields; fractions stay fractions.
func WriteCompareCSV(w io.Writer, c *Comparison) error {
	cw := csv.NewWriter(w)
	r := c.Result
	f := func(v analyze.F) string {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return ""
		}
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	}
	if err := cw.Write([]string{"metric", "unit", "config", "stat", "side", "value", "n", "runs", "source", "vs", "change", "diff", "lo", "hi", "test", "p_value", "verdict"}); err != nil {
		return err
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for si, cell := range row.Cells {
				rec := []string{t.Metric, t.Unit, row.Config, row.Stat, r.Sides[si].Label, f(cell.Value), strconv.Itoa(cell.N), strconv.Itoa(cell.Runs), cell.Source}
				if d := cell.VsBase; d != nil {
					rec = append(rec, r.Sides[0].Label, f(d.Change), f(d.Diff), f(d.Lo), f(d.Hi), d.Test, f(d.PValue), d.Verdict)
				} else {
					rec = append(rec, "", "", "", "", "", "", "", "")
				}
				for i := range rec {
					rec[i] = csvSafe(rec[i])
				}
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	if c.Sweeps != nil {
		return writeSweepCSV(w, c)
	}
	return nil
}

// csvSafe keeps a field from untrusted names printable and inert in a
// spreadsheet: control characters become "?", and a leading =, +, - or @
// that is not a number gets a quote prefix (formula injection:
// formats.SpreadsheetSafe).
func csvSafe(s string) string {
	return formats.SpreadsheetSafe(cleanN(s, false, 1000))
}

// tableUnit is the unit a table of durations in ms is written in: the
// whole table in one unit (ColumnUnit over its values: docs/OUTPUT.md),
// the values staying in ms for cmpValue and cmpSigned to convert.
func tableUnit(t compare.Table) string {
	var vals []float64
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			vals = append(vals, float64(c.Value))
		}
	}
	return ColumnUnit(vals...)
}

// isDuration reports whether a table unit is a duration's (the values
// are in ms, written in that unit).
func isDuration(unit string) bool { return unit == "ms" || unit == "s" || unit == "min" }
