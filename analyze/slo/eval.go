package slo

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// GateSchemaVersion is the version of the gate result JSON contract.
const GateSchemaVersion = 1

// DefaultAlpha is the significance level of regression gates.
const DefaultAlpha = 0.05

// GateSpec is everything `tokentrace gate` checks: the SLO that defines a
// good request and the gates over runs.
type GateSpec struct {
	SLO   analyze.SLO
	Gates []Gate
	// Alpha is the significance level at which a regression gate's
	// violation must be established before it fails (0: DefaultAlpha).
	Alpha float64
	// StrictSamples fails a percentile gate whose percentile rests on too
	// few samples to be bounded (QuantileCI), instead of only warning.
	StrictSamples bool
	// AllowTruncated lets a run whose input was cut short pass; by default
	// such a run fails an "input complete" check (a benchmark that did not
	// finish writing its results is not evidence).
	AllowTruncated bool
	// MatchKeys are the configuration keys a run is matched to the
	// baseline's runs by, as compare matches them (compare.ParseKeys;
	// nil: compare.Keys). They apply when the baseline holds runs of more
	// than one configuration.
	MatchKeys []string
}

// Deadlines lists every fluidity deadline pair the SLO and the gates use.
func (s GateSpec) Deadlines() []analyze.Deadlines {
	out := s.SLO.Deadlines()
	for _, g := range s.Gates {
		if g.Metric != nil && g.Metric.Parametrised && !slices.Contains(out, g.Deadlines) {
			out = append(out, g.Deadlines)
		}
	}
	return out
}

// NeedsBaseline reports whether a gate compares with a baseline.
func (s GateSpec) NeedsBaseline() bool {
	for _, g := range s.Gates {
		if g.Bound.Baseline {
			return true
		}
	}
	return false
}

// Validate checks what the grammar alone cannot: goodput and capacity
// gates need the SLO that defines a good request.
func (s GateSpec) Validate() error {
	for _, g := range s.Gates {
		if g.Capacity || g.Metric.NeedsSLO {
			if len(s.SLO.Constraints) == 0 {
				return fmt.Errorf("gate %q needs an SLO defining a good request (--slo, or slo: in the SLO file)", g.Text)
			}
		}
		if g.Bound.Baseline && g.Bound.Scale <= 0 {
			return fmt.Errorf("gate %q: the baseline factor must be positive", g.Text)
		}
	}
	if len(s.Gates) == 0 {
		if len(s.SLO.Constraints) > 0 {
			return fmt.Errorf("an SLO defines good requests but gates nothing by itself: add a gate such as goodput>=0.99 (--gate, or gates: in the SLO file)")
		}
		return fmt.Errorf("nothing to gate: give --gate (and --slo for goodput gates)")
	}
	return nil
}

// GateReport is the outcome of a gate run: the JSON contract of `tokentrace
// gate --format json` (documented in analyze/REPORT.md).
type GateReport struct {
	SchemaVersion int       `json:"schema_version"`
	Pass          bool      `json:"pass"`
	SLO           string    `json:"slo"`
	Convention    string    `json:"convention"`
	Alpha         analyze.F `json:"alpha"`
	// Baseline names the baseline's runs ("" without one).
	Baseline string       `json:"baseline,omitempty"`
	Results  []GateResult `json:"results"`
	// Capacity is the goodput capacity over the runs as a rate sweep, when
	// a capacity gate asked for it.
	Capacity *Capacity `json:"capacity,omitempty"`
	// BetweenRuns is, with --pool, each pooled run's own P99 and their
	// spread (as in the pooled report), beside the pooled gate values.
	BetweenRuns map[string]analyze.Spread `json:"between_runs,omitempty"`
	// DataChecks are, per run, the data checks that found its data wrong
	// or impossible (analyze/TRAPS.md), whether or not a gate bounds them
	// (data_warnings does).
	DataChecks []RunDataChecks `json:"data_checks,omitempty"`
	// Verbose asks the text and Markdown renderings for every detail and
	// warning in full (--verbose); not in the JSON.
	Verbose bool `json:"-"`
}

// RunDataChecks are one run's data-check warnings.
type RunDataChecks struct {
	Run    string            `json:"run"`
	Checks []analyze.Warning `json:"checks"`
}

// GateResult is one gate checked on one subject (a run, the pooled runs,
// or the sweep of all runs for capacity).
type GateResult struct {
	Gate    string `json:"gate"`
	Subject string `json:"run"`
	// Status is "pass" or "fail".
	Status string `json:"status"`
	// Value and Bound are in Unit; Bound is resolved against the baseline.
	Value analyze.F `json:"value"`
	Op    string    `json:"op"`
	Bound analyze.F `json:"bound"`
	Unit  string    `json:"unit"`
	// N is the number of samples behind Value (requests, or gaps for itl).
	N int `json:"n"`
	// CI95 is Value's distribution-free 95% interval, for percentiles.
	CI95 *[2]analyze.F `json:"ci95,omitempty"`
	// Source is "recomputed" (from the requests under the convention) or
	// "reported" (the tool's own summary value; the run has no
	// per-request data).
	Source   string              `json:"source"`
	Baseline *BaselineComparison `json:"baseline,omitempty"`
	// Reason says why a gate failed or passed despite an observed
	// violation (within noise).
	Reason   string            `json:"reason,omitempty"`
	Warnings []analyze.Warning `json:"warnings,omitempty"`
}

// BaselineComparison is a regression gate's baseline value and the test
// that decided whether an observed violation is more than noise.
type BaselineComparison struct {
	// Runs names the baseline runs compared with (pooled when several):
	// all of them, or — when the baseline holds several configurations —
	// those of the run's configuration.
	Runs  string        `json:"runs,omitempty"`
	Value analyze.F     `json:"value"`
	N     int           `json:"n"`
	CI95  *[2]analyze.F `json:"ci95,omitempty"`
	// Test names the significance test: "order-statistic bounds"
	// (percentiles), "welch t" (means), "agresti-caffo" (proportions), or
	// "none" (extremes and run-level rates: the observed comparison
	// decides).
	Test string `json:"test"`
	// Significant is true when the observed violation is established at
	// level Alpha; false also when the gate holds.
	Significant bool `json:"significant"`
	// PValue is the one-sided p-value of the violation, where the test
	// gives one (null for order-statistic bounds and none).
	PValue analyze.F `json:"p_value"`
}

// subject is one set of requests a gate is checked on.
type subject struct {
	name      string
	c         convention.Convention
	run       *formats.Run
	reqs      []analyze.RequestMetrics
	itl       []float64
	streaming bool
	rr        *analyze.RunReport
	tools     *convention.Set
	// itlSketched: itl is a sketch's representative sample of itlCount
	// gaps (over the memory budget)
	itlSketched bool
	itlCount    int
}

// Check checks spec on a's runs under opt (its SLO is replaced
// by spec.SLO). Each run is a subject, or — with opt.Pool and more than
// one run — the pooled runs are the one subject. baseline (nil when no
// gate compares with one) holds the baseline runs, pooled when there are
// several. Capacity gates are checked once over all runs as a rate sweep.
// It fails on the errors Report fails on, and when a regression gate has
// no baseline.
func Check(a *analyze.Analyzer, spec GateSpec, opt analyze.Options, baseline *analyze.Analyzer) (*GateReport, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	alpha := spec.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if spec.NeedsBaseline() && baseline == nil {
		return nil, fmt.Errorf("a regression gate compares with a baseline: give --baseline")
	}
	opt.SLO = spec.SLO
	subs, rep, err := subjects(a, opt, opt.Pool)
	if err != nil {
		return nil, err
	}
	out := &GateReport{SchemaVersion: GateSchemaVersion, Pass: true, SLO: spec.SLO.Text, Alpha: analyze.F(alpha), Results: []GateResult{}}
	if len(subs) > 0 {
		out.Convention = subs[0].c.Name
	}
	if rep.Pooled != nil && opt.Pool {
		out.BetweenRuns = rep.Pooled.BetweenRuns
	}
	var base *subject
	var match *baselineMatch
	if baseline != nil && spec.NeedsBaseline() {
		bs, _, err := subjects(baseline, opt, true)
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		if len(bs) == 0 {
			return nil, fmt.Errorf("baseline: no runs")
		}
		base = bs[len(bs)-1] // the pooled subject when there are several
		out.Baseline = base.name
		if match, err = matchBaseline(baseline, opt, spec.MatchKeys, base); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
	}
	for _, r := range rep.Runs {
		var checks []analyze.Warning
		for _, w := range r.Warnings {
			if w.DataCheck && !w.Routine {
				checks = append(checks, w)
			}
		}
		if len(checks) > 0 {
			out.DataChecks = append(out.DataChecks, RunDataChecks{Run: r.RunID, Checks: checks})
		}
	}
	for _, r := range rep.Runs {
		if !hasWarning(r.Warnings, "truncated_input") {
			continue
		}
		res := GateResult{Gate: "input complete", Subject: r.RunID, Status: "fail", Value: analyze.F(math.NaN()), Bound: analyze.F(math.NaN()), Unit: "fraction", Source: "recomputed",
			Reason: "the run's input was cut short (" + strings.Join(r.Notes, "; ") + "); its statistics cover only the complete requests", Warnings: []analyze.Warning{}}
		if spec.AllowTruncated {
			res.Status = "pass"
			res.Reason = "allowed (--allow-truncated): " + res.Reason
		}
		out.Results = append(out.Results, res)
	}
	out.Results = append(out.Results, resultsComplete(rep, opt.Tools)...)
	for _, g := range spec.Gates {
		if g.Capacity {
			r, capa := capacityGate(g, rep)
			out.Capacity = capa
			out.Results = append(out.Results, r)
			continue
		}
		for _, s := range subs {
			b, why := base, ""
			if match != nil && g.Bound.Baseline {
				b, why = match.of(s, opt.Pool && len(subs) == 1 && len(rep.Runs) > 1)
			}
			if g.Bound.Baseline && b == nil {
				out.Results = append(out.Results, GateResult{Gate: g.Text, Subject: s.name, Op: g.Op, Unit: g.Unit(), Status: "fail",
					Value: analyze.F(math.NaN()), Bound: analyze.F(math.NaN()), Source: "recomputed", Reason: why, Warnings: []analyze.Warning{}})
				continue
			}
			r := checkGate(g, s, b, spec, alpha)
			if why != "" {
				r.Warnings = append(r.Warnings, analyze.Warning{Code: "baseline_config_differs", Message: why})
			}
			if g.Metric == analyze.DataWarnings && s.rr != nil {
				var found []string
				for _, w := range s.rr.Warnings {
					if w.DataCheck && !w.Routine {
						found = append(found, fmt.Sprintf("%s (%d requests)", w.Code, w.Count))
					}
				}
				if len(found) > 0 {
					r.Reason = strings.TrimPrefix(r.Reason+"; data checks: "+strings.Join(found, ", ")+" (TRAPS.md)", "; ")
				}
			}
			out.Results = append(out.Results, r)
		}
	}
	for _, r := range out.Results {
		if r.Status != "pass" {
			out.Pass = false
		}
	}
	return out, nil
}

// resultsComplete is a failing "results complete" result for each run
// with a data check whose trap says the run's results cover part of it or
// none (convention.Trap.Incomplete: the tool said its results are partial,
// or it measured no request): such a run is no evidence, whatever gates
// were given. No flag lets it pass.
func resultsComplete(rep *analyze.Report, tools *convention.Set) []GateResult {
	var out []GateResult
	for _, r := range rep.Runs {
		for _, w := range r.Warnings {
			if t, ok := tools.Trap(w.Code); !w.DataCheck || !ok || !t.Incomplete {
				continue
			}
			out = append(out, GateResult{Gate: "results complete", Subject: r.RunID, Status: "fail", Value: analyze.F(math.NaN()), Bound: analyze.F(math.NaN()), Unit: "fraction", Source: "reported",
				Reason: "the run's results do not cover the whole run: " + w.Message, Warnings: []analyze.Warning{}})
		}
	}
	return out
}

// subjects returns the runs as gate subjects (or, with pool and several
// runs, the one pooled subject) with the report built under opt.
func subjects(a *analyze.Analyzer, opt analyze.Options, pool bool) ([]*subject, *analyze.Report, error) {
	rep, data, err := a.Subjects(opt, pool)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*subject, len(data))
	for i, rd := range data {
		out[i] = &subject{name: rd.Run.RunID, c: rd.Convention, run: rd.Run, reqs: rd.Requests, itl: rd.ITL, itlSketched: rd.ITLSketched, itlCount: rd.ITLCount,
			streaming: rd.Streaming, rr: rd.Report, tools: opt.Tools}
	}
	return out, rep, nil
}

// measure is a gate's value on a subject with what the tests need.
type measure struct {
	value  float64
	n      int
	sorted []float64 // the sample, for percentiles and means
	x, nn  int       // successes and trials, for proportions
	source string
	note   string // why the value is the tool's own (source "reported")
	why    string // why the value is undefined
	method convention.PercentileMethod
}

// measureOf computes g's left-hand side on s.
func measureOf(g Gate, s *subject) measure {
	m := measure{value: math.NaN(), source: "recomputed", method: s.c.Percentile}
	if g.Metric.Scope == analyze.RunLevel {
		v := g.Metric.Run(s.rr)
		m.value, m.n = v.Value, v.N
		m.x, m.nn = v.Successes, v.Trials
		if v.Reported {
			m.source, m.note = "reported", v.Note
		}
		if math.IsNaN(m.value) {
			m.why = v.Why
			if s.rr != nil && s.rr.Selection != nil && s.rr.Requests.Total == 0 {
				m.why = "undefined: the selection keeps none of the run's requests"
			}
		}
		return m
	}
	// A statistic of a per-request metric.
	reqs := s.reqs
	if len(g.Conds) > 0 {
		reqs = nil
		for i := range s.reqs {
			if meets(g.Conds, &s.reqs[i]) {
				reqs = append(reqs, s.reqs[i])
			}
		}
	}
	var vals []float64
	var anyReasoning bool
	switch {
	case g.Metric.Parametrised:
		if !s.streaming {
			m.why = "undefined: the run is not streaming, so there are no per-token deadlines"
			return m
		}
		for i := range reqs {
			if reqs[i].Counted && !reqs[i].NonStreaming {
				if v := analyze.Fluidity.Value(&reqs[i], g.Deadlines); !math.IsNaN(v) {
					vals = append(vals, v)
				}
			}
		}
	default:
		itl := s.itl
		if len(g.Conds) > 0 {
			itl = nil
		}
		smp := analyze.Sample(s.c, reqs, itl, s.streaming)
		vals, anyReasoning = smp.Values[g.Metric], smp.AnyReasoning
		if g.Metric.WithReasoning && !anyReasoning {
			// as in the report: TTFO is reported only where some request
			// produced reasoning; otherwise it is TTFT under another name
			vals = nil
		}
	}
	m.sorted = stats.SortedCopy(vals)
	m.n = len(m.sorted)
	if g.Metric == analyze.ITL && s.itlSketched && len(g.Conds) == 0 {
		m.n = s.itlCount // the real count; the sample stands for it
	}
	if m.n == 0 {
		if v, ok := reportedStat(g, s); ok && len(g.Conds) == 0 && len(s.reqs) == 0 {
			m.value, m.source = v, "reported"
			return m
		}
		m.why = fmt.Sprintf("undefined: no %s samples", g.Metric.Name)
		switch {
		case g.Metric.WithReasoning && len(s.reqs) > 0:
			m.why += " (no request produced reasoning: TTFO is TTFT, gate ttft)"
		case g.Metric.Scheduled && len(s.reqs) > 0:
			m.why += " (no completed request has an intended start: the file records none, or no request completed; gate e2e)"
		case len(s.reqs) == 0 && s.rr != nil && s.rr.Selection != nil:
			m.why += " (the selection keeps none of the run's requests)"
		case len(s.reqs) == 0:
			m.why += " (the run has no per-request data)"
		case g.Metric.Streaming && !s.streaming:
			m.why += " (the run is not streaming)"
		}
		if len(g.Conds) > 0 {
			m.why += " among requests with " + condText(g.Conds)
		}
		if why := notMeasured(g, s); why != "" {
			m.why = why
		}
		return m
	}
	switch g.Stat {
	case "p":
		m.value = stats.Percentile(m.sorted, g.P, stats.Method(s.c.Percentile))
	case "mean":
		m.value = stats.Mean(m.sorted)
	case "min":
		m.value = m.sorted[0]
	case "max":
		m.value = m.sorted[m.n-1]
	}
	return m
}

// reportedStat is the tool's own value of g's statistic for a run whose
// source has no per-request rows (summary only), where the tool reported
// it: e.g. MLPerf's first_token_latency_ns p99 for p99(ttft).
func reportedStat(g Gate, s *subject) (float64, bool) {
	if s.run == nil || len(s.run.Reported) == 0 {
		return 0, false
	}
	if s.rr != nil && s.rr.Selection != nil {
		return 0, false // the tool's values cover the whole run, not the selection
	}
	if s.tools == nil {
		return 0, false
	}
	c, ok := s.tools.ForRun(s.run.Convention, s.run.Tool)
	if !ok {
		return 0, false
	}
	keys := []string{g.Stat}
	switch g.Stat {
	case "p":
		keys = []string{"p" + strconv.FormatFloat(g.P*100, 'f', -1, 64)}
	case "mean":
		keys = []string{"mean", "avg"}
	}
	for name, tm := range s.tools.Metrics(c) {
		if tm.Quantity != g.Metric.Name || tm.Reason != "" || tm.Scale == 0 {
			continue
		}
		for _, st := range s.run.Reported {
			if st.Metric != name || st.Value == nil {
				continue
			}
			for _, k := range keys {
				if st.Stat == k {
					return *st.Value / tm.Scale, true
				}
			}
		}
	}
	return 0, false
}

// checkGate checks one gate on one subject.
func checkGate(g Gate, s *subject, base *subject, spec GateSpec, alpha float64) GateResult {
	r := GateResult{Gate: g.Text, Subject: s.name, Op: g.Op, Unit: g.Unit(), Status: "fail", Warnings: []analyze.Warning{}}
	cur := measureOf(g, s)
	r.Value, r.N, r.Source = analyze.F(cur.value), cur.n, cur.source
	if g.Metric == analyze.ITL && s.itlSketched {
		r.Warnings = append(r.Warnings, analyze.Warning{Code: "itl_sketch", Metric: analyze.ITL.Key, Message: fmt.Sprintf(
			"the pooled ITL is over --memory-budget: its percentiles come from a DDSketch (±%g%%) and the interval and tests use a representative sample of %d values, wider than the %d gaps would give",
			100*analyze.ITLSketchAccuracy, analyze.ITLSketchPoints, s.itlCount)})
	}
	if cur.source == "reported" {
		msg := cur.note
		if msg == "" {
			msg = "the run has no per-request data: the value is the tool's own reported statistic (its percentile method and definitions)"
		}
		r.Warnings = append(r.Warnings, analyze.Warning{Code: "tool_reported", Message: msg})
	}
	if g.Stat == "p" && cur.n > 0 {
		lo, hi := stats.QuantileCI(cur.sorted, g.P, stats.CILevel)
		r.CI95 = &[2]analyze.F{analyze.F(lo), analyze.F(hi)}
		if math.IsNaN(lo) || math.IsNaN(hi) {
			need := stats.MinSamplesForCI(g.P, stats.CILevel)
			msg := fmt.Sprintf("%s rests on %d samples; at least %d are needed to bound it at 95%% confidence", g.lhs(), cur.n, need)
			if spec.StrictSamples {
				// the reason says it once (it used to be said twice, and
				// the bound printed as "<= 0 ms")
				r.Reason = "too few samples: " + msg
				r.Bound = analyze.F(g.Bound.Value)
				if g.Bound.Baseline {
					r.Bound = analyze.F(math.NaN()) // the baseline was not measured
				}
				return r
			}
			r.Warnings = append(r.Warnings, analyze.Warning{Code: "few_samples", Message: msg, Metric: g.Metric.Name})
		}
	}
	if math.IsNaN(cur.value) {
		r.Reason = cur.why
		r.Bound = analyze.F(g.Bound.Value)
		if !g.Bound.Baseline {
			return r
		}
	}
	bound := g.Bound.Value
	var bm measure
	if g.Bound.Baseline {
		bm = measureOf(g, base)
		bound = g.Bound.Scale*bm.value + g.Bound.Value
		r.Baseline = &BaselineComparison{Runs: base.name, Value: analyze.F(bm.value), N: bm.n, Test: "none", PValue: analyze.F(math.NaN())}
		if g.Stat == "p" && bm.n > 0 {
			lo, hi := stats.QuantileCI(bm.sorted, g.P, stats.CILevel)
			r.Baseline.CI95 = &[2]analyze.F{analyze.F(lo), analyze.F(hi)}
		}
		if math.IsNaN(bm.value) {
			r.Bound = analyze.F(bound)
			r.Reason = "baseline " + bm.why
			return r
		}
	}
	r.Bound = analyze.F(bound)
	if math.IsNaN(cur.value) {
		return r
	}
	if g.Metric != nil && g.Metric != analyze.DataWarnings && s.rr != nil {
		// the data checks that affect the gated metric
		for _, w := range s.rr.Warnings {
			if w.DataCheck && slices.Contains(w.Metrics, g.Metric.Key) {
				r.Warnings = append(r.Warnings, w)
			}
		}
	}
	if holds(cur.value, g.Op, bound) {
		r.Status = "pass"
		if r.CI95 != nil && !g.Bound.Baseline {
			lo, hi := float64(r.CI95[0]), float64(r.CI95[1])
			if !math.IsNaN(lo) && !math.IsNaN(hi) && (g.upper() && hi > bound || !g.upper() && lo < bound) {
				r.Warnings = append(r.Warnings, analyze.Warning{Code: "marginal", Message: fmt.Sprintf("the 95%% interval [%s, %s] crosses the bound %s: another run of the same system may fail", g.fmtValue(lo), g.fmtValue(hi), g.fmtValue(bound))})
			}
		}
		return r
	}
	if !g.Bound.Baseline {
		r.Reason = fmt.Sprintf("%s is not %s %s", g.fmtValue(cur.value), g.Op, g.fmtValue(bound))
		return r
	}
	// An observed regression: fail only when it is more than noise. A
	// tool-reported value has no samples to test: the comparison decides.
	var sig bool
	var test string
	var p float64
	if cur.source == "reported" || bm.source == "reported" {
		sig, test, p = true, "none (a tool-reported value has no per-request samples to test)", math.NaN()
	} else {
		sig, test, p = regressionSignificant(g, cur, bm, alpha)
	}
	r.Baseline.Test, r.Baseline.Significant, r.Baseline.PValue = test, sig, analyze.F(p)
	if sig {
		r.Reason = fmt.Sprintf("%s is not %s %s (baseline %s), significant at α=%s (%s)", g.fmtValue(cur.value), g.Op, g.fmtValue(bound), g.fmtValue(bm.value), fmtNum(alpha), test)
		return r
	}
	r.Status = "pass"
	r.Reason = fmt.Sprintf("within noise: %s is not %s %s (baseline %s), but the difference is not significant at α=%s (%s)", g.fmtValue(cur.value), g.Op, g.fmtValue(bound), g.fmtValue(bm.value), fmtNum(alpha), test)
	if need := stats.MinSamplesForCI(g.P, 1-2*alpha); g.Stat == "p" && need > 0 && (cur.n < need || bm.n < need) {
		r.Reason += fmt.Sprintf("; a distribution-free bound of P%s needs ≥ %d values on each side (here %d and %d): gate a lower percentile or run more requests",
			strconv.FormatFloat(100*g.P, 'f', -1, 64), need, cur.n, bm.n)
	}
	return r
}

// regressionSignificant decides whether an observed violation of a
// regression gate (current vs Scale·baseline + Value) is established at
// level alpha (one-sided), with the tests of package stats that compare
// also uses (stats/difference.go), so that a gate and a comparison of the
// same samples agree. Percentiles: the violation must hold between the
// current sample's one-sided (1−alpha) bound and the baseline's
// (stats.PercentileBound: distribution-free order statistics, or the
// seeded bootstrap where a sample is too small for them), a conservative
// test. Means: Welch's t test. Proportions (goodput, error_rate): the
// Agresti–Caffo adjusted two-proportion z test (Agresti & Caffo 2000).
// Extremes and run-level rates have no test: the observed comparison
// decides (test "none").
func regressionSignificant(g Gate, cur, base measure, alpha float64) (sig bool, test string, p float64) {
	k, d := g.Bound.Scale, g.Bound.Value
	upper := g.upper()
	switch {
	case g.Stat == "p":
		// upper gate: the current's lower bound against the baseline's
		// upper bound (a lower gate: the other way round).
		cb, cboot := stats.PercentileBound(cur.sorted, g.P, stats.Method(cur.method), alpha, !upper)
		bb, bboot := stats.PercentileBound(base.sorted, g.P, stats.Method(base.method), alpha, upper)
		test = stats.PercentileTestName(cboot, bboot)
		return !math.IsNaN(cb) && !math.IsNaN(bb) && !holds(cb, g.Op, k*bb+d), test, math.NaN()
	case g.Stat == "mean":
		w := stats.Welch(cur.sorted, base.sorted, alpha, k, d)
		if w.Test != "welch t" {
			return true, w.Test, math.NaN()
		}
		if w.Lo == w.Hi { // no variance: the observed violation is established
			return true, w.Test, 0
		}
		p = w.PUp
		if !upper {
			p = w.PDown
		}
		return p < alpha, w.Test, p
	case g.Stat == "" && g.Metric.Proportion:
		ac := stats.AgrestiCaffo(cur.x, cur.nn, base.x, base.nn, alpha, k, d)
		if ac.Test != "agresti-caffo" {
			return true, ac.Test, math.NaN()
		}
		p = ac.PUp
		if !upper {
			p = ac.PDown
		}
		return p < alpha, ac.Test, p
	}
	return true, "none", math.NaN()
}

func hasWarning(ws []analyze.Warning, code string) bool {
	for _, w := range ws {
		if w.Code == code {
			return true
		}
	}
	return false
}

func fmtNum(v float64) string {
	if math.IsNaN(v) {
		return "null"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// CapacityPoint is one run of a rate sweep: its offered request rate
// (RateSource "configured" from the run's settings, or "measured": the
// completed requests per second), the share of its requests that met the
// SLO, and its output token throughput.
type CapacityPoint struct {
	RunID            string    `json:"run_id"`
	RateRPS          analyze.F `json:"rate_rps"`
	RateSource       string    `json:"rate_source"`
	Attainment       analyze.F `json:"attainment"`
	OutputTokensPerS analyze.F `json:"output_tokens_per_s"`
	Requests         int       `json:"requests"`
}

// Capacity is DistServe's goodput (Zhong et al., OSDI 2024, §2): the
// highest request rate at which at least Target of the requests meet the
// SLO, over a sweep of runs at several rates. RateRPS is interpolated
// linearly between the last measured rate that meets the target and the
// next one, which does not; AtLeast is set when even the highest measured
// rate meets it (the capacity is then that rate, a lower bound); RateRPS is
// NaN when no measured rate does. OutputTokensPerS is the output token
// throughput interpolated at the same point. Points are sorted by rate.
type Capacity struct {
	Target           analyze.F `json:"target"`
	RateRPS          analyze.F `json:"rate_rps"`
	OutputTokensPerS analyze.F `json:"output_tokens_per_s"`
	AtLeast          bool      `json:"at_least"`
	// GPUs and PerGPURateRPS: the capacity divided by the GPU count
	// (DistServe's per-GPU goodput), when given.
	GPUs          int             `json:"gpus,omitempty"`
	PerGPURateRPS analyze.F       `json:"per_gpu_rate_rps,omitempty"`
	Note          string          `json:"note,omitempty"`
	Points        []CapacityPoint `json:"points"`
	// LeftOut are the runs that could not be placed on the curve (no
	// request rate, or no attainment), each with why: listed, never
	// dropped silently.
	LeftOut []LeftOutPoint `json:"left_out,omitempty"`
}

// LeftOutPoint is a run of a sweep the capacity could not use.
type LeftOutPoint struct {
	RunID    string `json:"run_id"`
	Requests int    `json:"requests"`
	Why      string `json:"why"`
}

// ComputeCapacity finds the capacity of a sweep (see Capacity).
func ComputeCapacity(points []CapacityPoint, target float64) Capacity {
	pts := make([]CapacityPoint, 0, len(points))
	var left []LeftOutPoint
	for _, p := range points {
		switch {
		case math.IsNaN(float64(p.RateRPS)):
			left = append(left, LeftOutPoint{RunID: p.RunID, Requests: p.Requests, Why: "no request rate: none configured in its files, and no completed requests to measure one (a run where every request failed)"})
		case math.IsNaN(float64(p.Attainment)):
			left = append(left, LeftOutPoint{RunID: p.RunID, Requests: p.Requests, Why: "no SLO attainment: no requests, or no goodput under --slo"})
		default:
			pts = append(pts, p)
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].RateRPS < pts[j].RateRPS })
	c := Capacity{Target: analyze.F(target), RateRPS: analyze.F(math.NaN()), OutputTokensPerS: analyze.F(math.NaN()), Points: pts, LeftOut: left}
	if len(pts) == 0 {
		c.Note = "no run has both a request rate and an attainment"
		return c
	}
	last := -1
	for i, p := range pts {
		if float64(p.Attainment) >= target {
			last = i
		}
	}
	switch {
	case last < 0:
		c.Note = fmt.Sprintf("no measured rate meets the target: at the lowest, %s req/s, %s%% of requests met the SLO", fmtNum(float64(pts[0].RateRPS)), fmtNum(100*float64(pts[0].Attainment)))
	case last == len(pts)-1:
		c.RateRPS, c.OutputTokensPerS, c.AtLeast = pts[last].RateRPS, pts[last].OutputTokensPerS, true
		c.Note = "the highest measured rate still meets the target: the capacity is at least this; sweep higher rates to find it"
		if len(left) > 0 {
			c.Note = fmt.Sprintf("at least this: the highest placed rate meets the target; %d run(s) left out (below) may be higher rates", len(left))
		}
	default:
		a, b := pts[last], pts[last+1]
		t := (float64(a.Attainment) - target) / (float64(a.Attainment) - float64(b.Attainment))
		c.RateRPS = analyze.F(float64(a.RateRPS) + t*float64(b.RateRPS-a.RateRPS))
		c.OutputTokensPerS = analyze.F(float64(a.OutputTokensPerS) + t*float64(b.OutputTokensPerS-a.OutputTokensPerS))
	}
	return c
}

// SweepPoints turns a report's runs into capacity points: each run's
// configured request rate when finite, else its measured request rate.
func SweepPoints(rep *analyze.Report) []CapacityPoint {
	var out []CapacityPoint
	for _, rr := range rep.Runs {
		p := CapacityPoint{RunID: rr.RunID, RateRPS: analyze.F(math.NaN()), Attainment: analyze.F(math.NaN()), OutputTokensPerS: rr.Throughput.OutputTokensPerS, Requests: rr.Requests.Total}
		if rr.ConfiguredRateRPS > 0 && !math.IsInf(rr.ConfiguredRateRPS, 0) {
			p.RateRPS, p.RateSource = analyze.F(rr.ConfiguredRateRPS), "configured"
		} else {
			p.RateRPS, p.RateSource = rr.Throughput.RequestsPerS, "measured"
		}
		if rr.Goodput != nil {
			p.Attainment = rr.Goodput.Fraction
		}
		out = append(out, p)
	}
	return out
}

func capacityGate(g Gate, rep *analyze.Report) (GateResult, *Capacity) {
	c := ComputeCapacity(SweepPoints(rep), g.Target)
	r := GateResult{Gate: g.Text, Subject: "sweep", Op: g.Op, Unit: g.Unit(), Value: c.RateRPS, Bound: analyze.F(g.Bound.Value),
		N: len(c.Points), Source: "recomputed", Status: "fail", Warnings: []analyze.Warning{}}
	switch {
	case len(c.Points) < 2:
		r.Warnings = append(r.Warnings, analyze.Warning{Code: "few_runs", Message: fmt.Sprintf("capacity from %d run(s): a sweep needs runs at several request rates", len(c.Points))})
	}
	if c.AtLeast {
		r.Warnings = append(r.Warnings, analyze.Warning{Code: "capacity_lower_bound", Message: c.Note})
	}
	for _, l := range c.LeftOut {
		r.Warnings = append(r.Warnings, analyze.Warning{Code: "capacity_run_left_out", Message: fmt.Sprintf("run %s (%d requests) is not on the curve: %s", formats.SafeText(l.RunID), l.Requests, l.Why)})
	}
	switch {
	case math.IsNaN(float64(c.RateRPS)):
		r.Reason = c.Note
	case holds(float64(c.RateRPS), g.Op, g.Bound.Value):
		r.Status = "pass"
	default:
		r.Reason = fmt.Sprintf("capacity %s is not %s %s", analyze.FormatValue(float64(c.RateRPS), "req/s"), g.Op, analyze.FormatValue(g.Bound.Value, "req/s"))
	}
	return r, &c
}

// notMeasured says why g's value is unknown when a data check of the run
// set it to null (a value the tool wrote as 0 meaning "not measured",
// TRAPS.md); "" when none did.
func notMeasured(g Gate, s *subject) string {
	if s.run == nil || s.tools == nil || g.Metric == nil {
		return ""
	}
	for _, ch := range s.run.Checks {
		t, ok := s.tools.Trap(ch.Code)
		if !ok || t.Action != convention.ActionNull || !slices.Contains(t.Metrics, g.Metric.Key) {
			continue
		}
		return fmt.Sprintf("not measured: %s (data check %s, %s): the value is null, never 0; the gate cannot pass on it", t.Title, ch.Code, t.Source)
	}
	return ""
}
