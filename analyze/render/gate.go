package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
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

// inPercent reports whether a result's numbers are shown as percentages:
// a fraction gate written with "%" ("error_rate<=1%" shows "10% <= 1%",
// not "0.1 <= 0.01").
func inPercent(r slo.GateResult) bool { return r.Unit == "fraction" && strings.Contains(r.Gate, "%") }

// resVal writes one of a result's numbers in the result's unit, as a
// percentage when the gate was written in percent (inPercent);
// "undefined" for NaN (a value the run cannot give).
func resVal(r slo.GateResult, v analyze.F) string {
	if math.IsNaN(float64(v)) {
		return "undefined"
	}
	if inPercent(r) && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
		return strconv.FormatFloat(100*float64(v), 'g', 4, 64) + "%"
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

// detail is a result's one-line explanation: CI, baseline, reason and
// warnings.
func detail(r slo.GateResult, md bool) string {
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
	if r.Reason != "" {
		parts = append(parts, r.Reason)
	}
	for _, w := range r.Warnings {
		parts = append(parts, "warning "+w.Code+": "+w.Message)
	}
	return cleanN(strings.Join(parts, "; "), md, 600)
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
			resVal(r, r.Value), r.Op, resVal(r, r.Bound), detail(r, false))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeCapacity(w, g.Capacity, false)
	writeBetweenRuns(w, g.BetweenRuns)
	writeGateDataChecks(w, g, false)
	_, err := fmt.Fprintln(w, verdict(g))
	return err
}

// writeGateDataChecks lists each run's data checks (TRAPS.md).
func writeGateDataChecks(w io.Writer, g *slo.GateReport, md bool) {
	for _, rc := range g.DataChecks {
		if md {
			fmt.Fprintf(w, "\nData checks of run %s (TRAPS.md):\n\n", clean(rc.Run, true))
		} else {
			fmt.Fprintf(w, "data checks of run %s (TRAPS.md):\n", clean(rc.Run, false))
		}
		for _, c := range rc.Checks {
			if md {
				fmt.Fprintf(w, "- %s\n", dataCheckLine(c, true))
			} else {
				fmt.Fprintf(w, "  %s\n", dataCheckLine(c, false))
			}
		}
	}
}

// writeBetweenRuns prints each pooled run's own P99 spread (gate --pool).
func writeBetweenRuns(w io.Writer, br map[string]analyze.Spread) {
	for _, x := range analyze.Table {
		if sp, ok := br[x.Key]; ok && x.Tail {
			fmt.Fprintf(w, "between runs, P99 %s over %d runs: min %s · median %s · max %s\n", x.Label,
				len(sp.P99), fmtVal(sp.Min, x.Unit), fmtVal(sp.Median, x.Unit), fmtVal(sp.Max, x.Unit))
		}
	}
}

func writeCapacity(w io.Writer, c *slo.Capacity, md bool) {
	if c == nil {
		return
	}
	if md {
		fmt.Fprintf(w, "\n**Goodput capacity** (≥ %s%% of requests good): %s", fmtNum(100*float64(c.Target)), fmtVal(c.RateRPS, "req/s"))
	} else {
		fmt.Fprintf(w, "goodput capacity (>= %s%% of requests good): %s", fmtNum(100*float64(c.Target)), fmtVal(c.RateRPS, "req/s"))
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
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", clean(p.RunID, true), fmtVal(p.RateRPS, "req/s"), p.RateSource, fmtVal(p.Attainment, "fraction"), fmtVal(p.OutputTokensPerS, "tok/s"))
		} else {
			fmt.Fprintf(w, "  %-40s %12s (%s)  attainment %s  %s\n", clean(p.RunID, false), fmtVal(p.RateRPS, "req/s"), p.RateSource, fmtVal(p.Attainment, "fraction"), fmtVal(p.OutputTokensPerS, "tok/s"))
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
			resVal(r, r.Value), opSymbol[r.Op], resVal(r, r.Bound), detail(r, true))
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
		if d := detail(r, false); d != "" {
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
			lines = append(lines, dataCheckLine(c, false))
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

// fmtNum writes v with 6 significant digits ("null" for NaN).
func fmtNum(v float64) string {
	if math.IsNaN(v) {
		return "null"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
