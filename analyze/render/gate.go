package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/slo"
)

// WriteGateJSON writes the gate report as indented JSON (NaN as null).
func WriteGateJSON(w io.Writer, g *slo.GateReport) error { return writeIndentedJSON(w, g) }

// gateCounts returns the number of passing and failing results.
func gateCounts(g *slo.GateReport) (pass, fail int) {
	for _, r := range g.Results {
		if r.Status == "pass" {
			pass++
		} else {
			fail++
		}
	}
	return
}

func verdict(g *slo.GateReport) string {
	pass, fail := gateCounts(g)
	if g.Pass {
		return fmt.Sprintf("PASS: %d of %d gates hold", pass, pass+fail)
	}
	return fmt.Sprintf("FAIL: %d of %d gates failed", fail, pass+fail)
}

// fmtVal writes v in unit (analyze.FormatValue).
func fmtVal(v analyze.F, unit string) string { return analyze.FormatValue(float64(v), unit) }

// resVal writes one of a result's numbers in the result's unit, in the
// house style (docs/OUTPUT.md): a fraction as a percentage (Pct: goodput
// "70% >= 90%", "error_rate<=1%" as "10% <= 1%"), a duration in the unit
// its size calls for (Duration: "20.44 s <= 15.00 s"); "undefined" for NaN
// (a value the run cannot give).
func resVal(r slo.GateResult, v analyze.F) string {
	x := float64(v)
	switch {
	case math.IsNaN(x):
		return "undefined"
	case math.IsInf(x, 0):
		return fmtVal(v, r.Unit)
	case r.Unit == "fraction":
		return Pct(x)
	case r.Unit == "ms":
		return Duration(x)
	}
	return fmtVal(v, r.Unit)
}

// ciText writes a percentile's 95% interval; an end that too few samples
// cannot bound (NaN) is said to be unbounded, not printed as null.
func ciText(r slo.GateResult, ci [2]analyze.F) string {
	lo, hi := math.IsNaN(float64(ci[0])), math.IsNaN(float64(ci[1]))
	switch {
	case lo && hi:
		return "95% CI unbounded (too few samples to bound it)"
	case hi:
		return fmt.Sprintf("95%% CI [%s, unbounded: too few samples for an upper bound]", resVal(r, ci[0]))
	case lo:
		return fmt.Sprintf("95%% CI [unbounded: too few samples for a lower bound, %s]", resVal(r, ci[1]))
	}
	return fmt.Sprintf("95%% CI [%s, %s]", resVal(r, ci[0]), resVal(r, ci[1]))
}

// negated is the operator that holds when op fails.
var negated = map[string]string{"<=": ">", "<": ">=", ">=": "<", ">": "<="}

// comparison says how a result's value stands against its bound, in the
// words of its status: "51.61 ms <= 25.00 ms" for a pass; for a failure
// "51.61 ms > bound 25.00 ms" when the value violates the bound, else the
// value undefined or the bound held (a failure for another reason, e.g.
// too few samples) so that it never reads like a pass.
func comparison(r slo.GateResult) string {
	v, b := float64(r.Value), float64(r.Bound)
	if r.Status == "pass" {
		return fmt.Sprintf("%s %s %s", resVal(r, r.Value), r.Op, resVal(r, r.Bound))
	}
	switch {
	case math.IsNaN(v):
		return fmt.Sprintf("value undefined, bound %s %s", r.Op, resVal(r, r.Bound))
	case math.IsNaN(b):
		return fmt.Sprintf("%s, bound undefined", resVal(r, r.Value))
	case !holdsOp(v, r.Op, b):
		return fmt.Sprintf("%s %s bound %s", resVal(r, r.Value), negated[r.Op], resVal(r, r.Bound))
	}
	return fmt.Sprintf("%s %s %s holds, but the gate fails", resVal(r, r.Value), r.Op, resVal(r, r.Bound))
}

// holdsOp reports whether v op b.
func holdsOp(v float64, op string, b float64) bool {
	switch op {
	case "<=":
		return v <= b
	case "<":
		return v < b
	case ">=":
		return v >= b
	case ">":
		return v > b
	}
	return false
}

// restates reports whether a reason only says what the VALUE and BOUND
// columns say ("651.2 ms is not <= 500.0 ms").
func restates(r slo.GateResult) bool {
	f := func(v analyze.F) string { return analyze.FormatValue(float64(v), r.Unit) }
	return r.Reason == fmt.Sprintf("%s is not %s %s", f(r.Value), r.Op, f(r.Bound))
}

// detail is a result's explanation: CI, baseline, reason and the codes
// of its warnings (their messages follow the table, grouped: gateWarnings);
// short is the text and Markdown cell (a reason that restates the columns
// left out, cut to DetailLimit at a word boundary), else the full text
// (JUnit, --verbose).
func detail(r slo.GateResult, md, short bool) string {
	var parts []string
	if r.CI95 != nil {
		parts = append(parts, ciText(r, *r.CI95))
	}
	if r.N > 0 {
		parts = append(parts, fmt.Sprintf("n=%d", r.N))
	}
	if r.Source == "reported" {
		parts = append(parts, "tool-reported")
	}
	if b := r.Baseline; b != nil {
		s := "baseline " + resVal(r, b.Value)
		if b.Test != "none" || b.Significant {
			s += ", " + b.Test
			if !math.IsNaN(float64(b.PValue)) {
				s += fmt.Sprintf(" p=%.3g", float64(b.PValue))
			}
		}
		parts = append(parts, s)
	}
	if r.Reason != "" && !(short && restates(r)) {
		parts = append(parts, r.Reason)
	}
	if short {
		var codes []string
		for _, w := range r.Warnings {
			codes = append(codes, w.Code)
		}
		if len(codes) > 0 {
			parts = append(parts, "warning "+strings.Join(codes, ", "))
		}
		return cleanN(strings.Join(parts, "; "), md, DetailLimit)
	}
	for _, w := range r.Warnings {
		parts = append(parts, "warning "+w.Code+": "+w.Message)
	}
	return cleanN(strings.Join(parts, "; "), md, math.MaxInt)
}

// gateWarnings writes the results' warnings below the table, one line per
// code with the runs it concerns (groupWarnings).
func gateWarnings(w io.Writer, g *slo.GateReport, md bool) {
	type item struct{ run, code, msg string }
	var items []item
	for _, r := range g.Results {
		for _, wn := range r.Warnings {
			items = append(items, item{r.Subject, wn.Code, wn.Message})
		}
	}
	groups := groupWarnings(len(items), func(i int) string { return items[i].code }, func(i int) string { return items[i].run },
		func(i int) string { return items[i].msg })
	for _, gr := range groups {
		l := gr.line("warning ", "run", LineLimit, g.Verbose, md)
		if md {
			l = "- " + l
		}
		fmt.Fprintln(w, l)
	}
}

// WriteGateText writes the gate report as an aligned table with the
// verdict last.
func WriteGateText(w io.Writer, g *slo.GateReport) error {
	return safeOut(w, func(w io.Writer) error { return writeGateText(w, g) })
}

func writeGateText(w io.Writer, g *slo.GateReport) error {
	fmt.Fprintf(w, "tokentrace gate — convention %s", clean(g.Convention, false))
	if g.SLO != "" {
		fmt.Fprintf(w, ", SLO %s", clean(g.SLO, false))
	}
	if g.Baseline != "" {
		fmt.Fprintf(w, ", baseline %s", clean(g.Baseline, false))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tGATE\tRUN\tVALUE\tBOUND\tDETAIL")
	for _, r := range g.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\t%s\n", strings.ToUpper(r.Status), clean(r.Gate, false), clean(r.Subject, false),
			resVal(r, r.Value), r.Op, resVal(r, r.Bound), detail(r, false, !g.Verbose))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	gateWarnings(w, g, false)
	writeCapacity(w, g.Capacity, false)
	writeBetweenRuns(w, g.BetweenRuns)
	writeGateDataChecks(w, g, false)
	_, err := fmt.Fprintln(w, verdict(g))
	return err
}

// writeGateDataChecks lists the runs' data checks (TRAPS.md), one line
// per code with the runs it was found in (groupWarnings).
func writeGateDataChecks(w io.Writer, g *slo.GateReport, md bool) {
	type item struct {
		run string
		c   analyze.Warning
	}
	var items []item
	for _, rc := range g.DataChecks {
		for _, c := range rc.Checks {
			items = append(items, item{rc.Run, c})
		}
	}
	if len(items) == 0 {
		return
	}
	groups := groupWarnings(len(items), func(i int) string { return items[i].c.Code }, func(i int) string { return items[i].run },
		func(i int) string {
			return strings.TrimPrefix(dataCheckLine(items[i].c, false, true), items[i].c.Code+" ")
		})
	if md {
		fmt.Fprint(w, "\nData checks (TRAPS.md):\n\n")
	} else {
		fmt.Fprintln(w, "data checks (TRAPS.md):")
	}
	for _, gr := range groups {
		if md {
			fmt.Fprintf(w, "- %s\n", gr.line("", "run", math.MaxInt, true, true))
		} else {
			fmt.Fprintf(w, "  %s\n", gr.line("", "run", math.MaxInt, true, false))
		}
	}
}

// writeBetweenRuns prints each pooled run's own P99 spread (gate --pool).
func writeBetweenRuns(w io.Writer, br map[string]analyze.Spread) {
	for _, x := range analyze.Table {
		if sp, ok := br[x.Key]; ok && x.Tail {
			fmt.Fprintf(w, "between runs, P99 %s over %d runs: min %s · median %s · max %s\n", x.Label,
				len(sp.P99), styled(sp.Min, x.Unit), styled(sp.Median, x.Unit), styled(sp.Max, x.Unit))
		}
	}
}

func writeCapacity(w io.Writer, c *slo.Capacity, md bool) {
	if c == nil {
		return
	}
	if md {
		fmt.Fprintf(w, "\n**Goodput capacity** (≥ %s of requests good): %s", Pct(float64(c.Target)), fmtVal(c.RateRPS, "req/s"))
	} else {
		fmt.Fprintf(w, "goodput capacity (>= %s of requests good): %s", Pct(float64(c.Target)), fmtVal(c.RateRPS, "req/s"))
	}
	if c.AtLeast {
		fmt.Fprint(w, " (at least)")
	}
	if !math.IsNaN(float64(c.OutputTokensPerS)) {
		fmt.Fprintf(w, ", %s", fmtVal(c.OutputTokensPerS, "tok/s"))
	}
	if c.Note != "" {
		fmt.Fprintf(w, " — %s", clean(c.Note, md))
	}
	fmt.Fprintln(w)
	if md {
		fmt.Fprintln(w, "\n| run | rate | source | attainment | output tok/s |\n|---|---|---|---|---|")
	}
	for _, p := range c.Points {
		if md {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", clean(p.RunID, true), fmtVal(p.RateRPS, "req/s"), p.RateSource, Pct(float64(p.Attainment)), fmtVal(p.OutputTokensPerS, "tok/s"))
		} else {
			fmt.Fprintf(w, "  %-40s %12s (%s)  attainment %s  %s\n", clean(p.RunID, false), fmtVal(p.RateRPS, "req/s"), p.RateSource, Pct(float64(p.Attainment)), fmtVal(p.OutputTokensPerS, "tok/s"))
		}
	}
	for _, l := range c.LeftOut {
		if md {
			fmt.Fprintf(w, "| %s | left out: %s | | | |\n", clean(l.RunID, true), clean(l.Why, true))
		} else {
			fmt.Fprintf(w, "  %-40s left out (%d requests): %s\n", clean(l.RunID, false), l.Requests, l.Why)
		}
	}
	if md {
		fmt.Fprintln(w)
	}
}

var opSymbol = map[string]string{"<=": "≤", "<": "&lt;", ">=": "≥", ">": "&gt;"}

// codeSpan renders user text (a gate, an SLO) as a Markdown code span,
// where nothing needs escaping but the pipe of a table cell; control
// characters and backticks are replaced.
func codeSpan(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '`' || r < 0x20 || r == 0x7f {
			return '\''
		}
		return r
	}, cleanN(s, false, 200))
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}

// WriteGateMarkdown writes the gate report as a Markdown table, for a CI
// job summary (e.g. appended to $GITHUB_STEP_SUMMARY).
func WriteGateMarkdown(w io.Writer, g *slo.GateReport) error {
	return safeOut(w, func(w io.Writer) error { return writeGateMarkdown(w, g) })
}

func writeGateMarkdown(w io.Writer, g *slo.GateReport) error {
	icon := "✅"
	if !g.Pass {
		icon = "❌"
	}
	fmt.Fprintf(w, "### %s tokentrace gate: %s\n\n", icon, verdict(g))
	fmt.Fprintf(w, "Convention %s", codeSpan(g.Convention))
	if g.SLO != "" {
		fmt.Fprintf(w, "; a good request meets %s", codeSpan(g.SLO))
	}
	if g.Baseline != "" {
		fmt.Fprintf(w, "; baseline %s", clean(g.Baseline, true))
	}
	fmt.Fprint(w, ".\n\n| | gate | run | value | bound | detail |\n|---|---|---|---|---|---|\n")
	for _, r := range g.Results {
		mark := "✅"
		if r.Status != "pass" {
			mark = "❌"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s %s | %s |\n", mark, codeSpan(r.Gate), clean(r.Subject, true),
			resVal(r, r.Value), opSymbol[r.Op], resVal(r, r.Bound), detail(r, true, !g.Verbose))
	}
	if anyWarning(g) {
		fmt.Fprintln(w)
		gateWarnings(w, g, true)
	}
	writeCapacity(w, g.Capacity, true)
	if len(g.BetweenRuns) > 0 {
		fmt.Fprintln(w)
		writeBetweenRuns(w, g.BetweenRuns)
	}
	writeGateDataChecks(w, g, true)
	return nil
}

// WriteGateJUnit writes the gate report as JUnit XML: one test suite per
// gate run, one test case per result (name: the gate; classname:
// tokentrace.gate.<run>), a <failure> for each failed gate, and the
// detail in <system-out>, so CI systems show gates natively.
func WriteGateJUnit(w io.Writer, g *slo.GateReport) error {
	return safeOut(w, func(w io.Writer) error { return writeGateJUnit(w, g) })
}

func writeGateJUnit(w io.Writer, g *slo.GateReport) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type suite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type suites struct {
		XMLName  xml.Name `xml:"testsuites"`
		Name     string   `xml:"name,attr"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []suite  `xml:"testsuite"`
	}
	s := suite{Name: "tokentrace gate"}
	for _, r := range g.Results {
		out := comparison(r)
		if d := detail(r, false, false); d != "" {
			out += "; " + d
		}
		tc := testcase{Name: clean(r.Gate, false), Classname: "tokentrace.gate." + clean(r.Subject, false), Time: "0", SystemOut: out}
		if r.Status != "pass" {
			s.Failures++
			msg := r.Reason
			if msg == "" {
				msg = "gate failed: " + comparison(r)
			}
			tc.Failure = &failure{Message: cleanN(msg, false, 600), Type: "GateFailed", Text: out}
		}
		s.Cases = append(s.Cases, tc)
		s.Tests++
	}
	for _, rc := range g.DataChecks {
		// a run's data checks, as a passing case whose output lists them
		// (a data_warnings gate is what fails a build on them)
		var lines []string
		for _, c := range rc.Checks {
			lines = append(lines, dataCheckLine(c, false, true))
		}
		s.Cases = append(s.Cases, testcase{Name: "data checks", Classname: "tokentrace.gate." + rc.Run, Time: "0", SystemOut: strings.Join(lines, "\n")})
		s.Tests++
	}
	doc := suites{Name: "tokentrace", Tests: s.Tests, Failures: s.Failures, Suites: []suite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteCapacity writes a capacity (see Capacity) as text, markdown or
// JSON; gpus > 0 adds the per-GPU capacity.
func WriteCapacity(w io.Writer, format string, c *slo.Capacity, gpus int) error {
	if format == "json" {
		return writeCapacityDoc(w, format, c, gpus)
	}
	return safeOut(w, func(w io.Writer) error { return writeCapacityDoc(w, format, c, gpus) })
}

func writeCapacityDoc(w io.Writer, format string, c *slo.Capacity, gpus int) error {
	if gpus > 0 {
		c.GPUs = gpus
		c.PerGPURateRPS = c.RateRPS / analyze.F(gpus)
	}
	switch format {
	case "json":
		return writeIndentedJSON(w, c)
	case "markdown", "md":
		writeCapacity(w, c, true)
	default:
		writeCapacity(w, c, false)
	}
	if gpus > 0 {
		fmt.Fprintf(w, "per GPU (%d): %s\n", gpus, fmtVal(c.PerGPURateRPS, "req/s"))
	}
	return nil
}

// anyWarning reports whether some result carries a warning.
func anyWarning(g *slo.GateReport) bool {
	for _, r := range g.Results {
		if len(r.Warnings) > 0 {
			return true
		}
	}
	return false
}

// styled writes v in unit as resVal does (durations by their size).
func styled(v analyze.F, unit string) string { return resVal(slo.GateResult{Unit: unit}, v) }
