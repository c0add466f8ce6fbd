package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// SchemaVersion is the version of the comparison's JSON contract
// (`tokentrace compare --format json`).
const SchemaVersion = 1

// DefaultAlpha is the one-sided level of each bound and verdict: the
// default of gate --baseline's --alpha, so that both reach one verdict.
const DefaultAlpha = 0.05

// Side is one argument of a comparison: its label and its runs' data, each
// RunData with its Report (analyze.Analyzer.Subjects without pooling).
type Side struct {
	Label string
	Runs  []*analyze.RunData
}

// Options control a comparison.
type Options struct {
	// Keys are the configuration keys runs are matched by (nil: Keys).
	Keys []string
	// Metrics are the metrics compared, one table each (nil:
	// DefaultMetrics, without goodput).
	Metrics []*analyze.Metric
	// Stats are the statistics of per-request and pooled metrics (nil:
	// DefaultStats); run-level metrics have one value.
	Stats []Stat
	// Alpha is the one-sided level of the bounds and verdicts (0:
	// DefaultAlpha).
	Alpha float64
	// Tools map the tools' reported statistics to metrics, for runs
	// without per-request data (nil: such runs have no values).
	Tools *convention.Set
}

// DefaultMetrics are the metrics compared unless asked otherwise: TTFT,
// TTFO (where some request produced reasoning), TPOT, ITL, E2E, OSL,
// output throughput, request rate, goodput (with an SLO) and error rate.
var DefaultMetrics = []*analyze.Metric{analyze.TTFT, analyze.TTFO, analyze.TPOT, analyze.ITL, analyze.E2E, analyze.OSL,
	analyze.OutputThroughput, analyze.RequestRate, analyze.GoodputFraction, analyze.ErrorRate}

// Stat is a statistic of a per-request or pooled metric: "p" (the
// percentile at P), "mean", "min" or "max".
type Stat struct {
	Name string
	P    float64
}

// String is the statistic's name: "p50", "p99.9", "mean".
func (s Stat) String() string {
	if s.Name == "p" {
		return "p" + strconv.FormatFloat(s.P*100, 'f', -1, 64)
	}
	return s.Name
}

// DefaultStats are P50 and P99.
var DefaultStats = []Stat{{Name: "p", P: 0.5}, {Name: "p", P: 0.99}}

// ParseStats parses a comma-separated list of statistics: pNN (0 < NN <
// 100, e.g. p50, p99.9), median (p50), mean, min, max.
func ParseStats(s string) ([]Stat, error) {
	var out []Stat
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		var st Stat
		switch f {
		case "":
			continue
		case "mean", "min", "max":
			st = Stat{Name: f}
		case "median":
			st = Stat{Name: "p", P: 0.5}
		default:
			v, err := strconv.ParseFloat(strings.TrimPrefix(f, "p"), 64)
			if !strings.HasPrefix(f, "p") || err != nil || !(v > 0 && v < 100) {
				return nil, fmt.Errorf("--stat %q: want pNN (0 < NN < 100), median, mean, min or max", f)
			}
			st = Stat{Name: "p", P: v / 100}
		}
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--stat %q: no statistic", s)
	}
	return out, nil
}

// Result is a comparison: the JSON contract of `tokentrace compare
// --format json`. The first side is the base every other side is
// compared with. Undefined numbers are null.
type Result struct {
	SchemaVersion int `json:"schema_version"`
	// Alpha is the one-sided level of every bound and verdict.
	Alpha    analyze.F  `json:"alpha"`
	Sides    []SideInfo `json:"sides"`
	Matching Matching   `json:"matching"`
	Tables   []Table    `json:"tables"`
	// Warnings are caveats about the whole comparison: conventions that
	// differ between sides, weighted percentiles compared unweighted, the
	// data checks that found a run's data wrong (analyze/TRAPS.md).
	Warnings []string `json:"warnings"`
	// DataChecks are the data-check entries of Warnings (Warning is the
	// index), by side, run and code, for a text output that groups them;
	// not in the JSON.
	DataChecks []DataCheckNote `json:"-"`
}

// SideInfo describes one side: its label, runs, tools and models, and the
// convention its values were computed under.
type SideInfo struct {
	Label      string   `json:"label"`
	Runs       []string `json:"runs"`
	Tools      []string `json:"tools"`
	Models     []string `json:"models"`
	Convention string   `json:"convention"`
}

// Table is one metric compared across the sides: a row per compared
// configuration and statistic.
type Table struct {
	Metric string `json:"metric"`
	Label  string `json:"label"`
	Unit   string `json:"unit"`
	Rows   []Row  `json:"rows"`
	// Geomean summarizes the table's rows (nil with fewer than two rows).
	Geomean *Geomean `json:"geomean,omitempty"`
}

// Row is one statistic of one configuration on every side.
type Row struct {
	// Group indexes Matching.Groups; Config is its key text, Label the
	// keys that tell the groups apart ("rate=4"; "" with one group).
	Group  int    `json:"group"`
	Config string `json:"config"`
	Label  string `json:"label"`
	// Stat is the statistic ("p50", "mean"; "value" for a run-level
	// metric).
	Stat  string `json:"stat"`
	Cells []Cell `json:"cells"`
}

// Cell is one side's value in a row and, for every side but the base, its
// comparison with the base.
type Cell struct {
	// Value is the statistic over the side's runs of the configuration,
	// pooled (per-request and pooled metrics: the statistic of all their
	// samples; proportions: all successes over all trials; rates: the
	// runs' mean); null when undefined (Why says why) or the side lacks
	// the configuration (Runs 0).
	Value analyze.F `json:"value"`
	// N is the number of samples (requests, token gaps, or runs for a
	// rate) behind Value.
	N int `json:"n"`
	// Runs is the number of runs pooled; with more than one, RunValues are
	// each run's own value (the between-run spread).
	Runs      int         `json:"runs"`
	RunValues []analyze.F `json:"run_values,omitempty"`
	// Source is "recomputed" (from the requests) or "reported" (the tool's
	// own summary value: the run has no per-request data; untested).
	Source string `json:"source,omitempty"`
	Why    string `json:"why,omitempty"`
	// Warnings are caveats of the value: a percentile resting on fewer
	// samples than its order-statistic bounds need (its bounds then come
	// from the bootstrap, which cannot see beyond the sample's extremes).
	Warnings []string `json:"warnings,omitempty"`
	// VsBase compares the cell with the base side's (nil for the base
	// side and where either value is missing).
	VsBase *Delta `json:"vs_base,omitempty"`
}

// Delta is a cell compared with the base: Change = Value/base − 1, Diff =
// Value − base in the metric's unit, the one-sided (1 − Alpha) bounds of
// the difference [Lo, Hi], the test that gave them, its one-sided p-value
// in the observed direction (null for percentile bounds and untested
// rows), and the verdict: "higher" or "lower" when the bound on that side
// excludes 0 at level Alpha, "~" when neither does, "untested" when no
// test applies (Test "none (…)" says why).
type Delta struct {
	Change  analyze.F `json:"change"`
	Diff    analyze.F `json:"diff"`
	Lo      analyze.F `json:"lo"`
	Hi      analyze.F `json:"hi"`
	Test    string    `json:"test"`
	PValue  analyze.F `json:"p_value"`
	Verdict string    `json:"verdict"`
	// Better is true when the change is an improvement (lower latency,
	// higher throughput or goodput) and significant; false otherwise.
	Better bool `json:"better"`
}

// Geomean is the geometric mean of each side's values over the table's
// rows, and of each side's ratios to the base over the rows where both
// are defined, as a change (benchstat's summary row). A side whose values
// are not all positive has none (null), and Note says so; Note also says
// when a side lacks rows the base has.
type Geomean struct {
	Values []analyze.F `json:"values"`
	Change []analyze.F `json:"change"`
	Note   string      `json:"note,omitempty"`
}

// sample is one side's values of one metric in one configuration.
type sample struct {
	runs   int
	sorted []float64 // pooled samples of a per-request or pooled metric
	method stats.Method
	perRun [][]float64 // each run's sorted samples (with runs > 1)
	// run-level metrics: each run's value, and the proportion's counts
	runVals []float64
	x, nn   int
	// reported: each run's reported statistic, by stat
	reported map[Stat][]float64
	source   string
	why      string
}

// Compare matches the sides' runs by configuration and compares every
// metric and statistic of every configuration the base side shares with
// another side. It fails with fewer than two sides or a side without runs.
func Compare(sides []Side, opt Options) (*Result, error) {
	if len(sides) < 2 {
		return nil, fmt.Errorf("compare needs at least two sides (a baseline and a candidate)")
	}
	if opt.Keys == nil {
		opt.Keys = Keys
	}
	if opt.Metrics == nil {
		for _, x := range DefaultMetrics {
			if !x.NeedsSLO {
				opt.Metrics = append(opt.Metrics, x)
			}
		}
	}
	if opt.Stats == nil {
		opt.Stats = DefaultStats
	}
	if opt.Alpha == 0 {
		opt.Alpha = DefaultAlpha
	}
	res := &Result{SchemaVersion: SchemaVersion, Alpha: analyze.F(opt.Alpha), Tables: []Table{}, Warnings: []string{}}
	cfgs := make([][]RunConfig, len(sides))
	var excluded []Excluded
	byID := make([]map[string]*analyze.RunData, len(sides))
	convs := map[string]bool{}
	weighted := false
	for si, s := range sides {
		if len(s.Runs) == 0 {
			return nil, fmt.Errorf("side %q has no runs", s.Label)
		}
		info := SideInfo{Label: s.Label, Runs: []string{}, Tools: []string{}, Models: []string{}}
		byID[si] = map[string]*analyze.RunData{}
		for _, rd := range s.Runs {
			if rd.Report == nil {
				return nil, fmt.Errorf("side %q: run %q has no report", s.Label, rd.Run.RunID)
			}
			byID[si][rd.Run.RunID] = rd
			if Warmup(rd.Run) {
				excluded = append(excluded, Excluded{Side: si, Run: rd.Run.RunID, Why: "a warm-up phase, not a measurement"})
				continue
			}
			cfgs[si] = append(cfgs[si], RunConfig{RunID: rd.Run.RunID, Config: ConfigOf(rd.Run)})
			info.Runs = append(info.Runs, rd.Run.RunID)
			info.Tools = appendUnique(info.Tools, rd.Run.Tool)
			info.Models = appendUnique(info.Models, rd.Run.Model)
			if info.Convention == "" {
				info.Convention = rd.Convention.Name
			} else if !strings.Contains(","+info.Convention+",", ","+rd.Convention.Name+",") {
				info.Convention += "," + rd.Convention.Name
			}
			convs[rd.Convention.Name] = true
			for _, w := range rd.Report.Warnings {
				if w.DataCheck && !w.Routine {
					res.DataChecks = append(res.DataChecks, DataCheckNote{Warning: len(res.Warnings), Side: s.Label, Run: rd.Run.RunID, Code: w.Code, Message: w.Message})
					res.Warnings = append(res.Warnings, fmt.Sprintf("%s, run %s: data check %s: %s (analyze/TRAPS.md)", s.Label, rd.Run.RunID, w.Code, w.Message))
				}
			}
			for _, w := range rd.Weights {
				if len(w) > 0 {
					weighted = true
				}
			}
		}
		res.Sides = append(res.Sides, info)
	}
	if len(convs) > 1 {
		res.Warnings = append(res.Warnings, "the sides' values come from different conventions: a difference may be a difference of definitions (tokentrace reconcile explains them); compare under one convention (the default, tokentrace) for a fair comparison")
	}
	if weighted {
		res.Warnings = append(res.Warnings, "a weighted percentile convention (guidellm's token weights) is compared on unweighted samples: values and tests treat every request (or gap) alike")
	}
	res.Matching = Match(cfgs, opt.Keys)
	res.Matching.Excluded = excluded
	labels := res.Matching.Labels()
	for _, x := range opt.Metrics {
		t := Table{Metric: x.Name, Label: x.Label, Unit: x.Unit, Rows: []Row{}}
		for gi, g := range res.Matching.Groups {
			smp := make([]*sample, len(sides))
			for si := range sides {
				var rds []*analyze.RunData
				for _, id := range g.Runs[si] {
					rds = append(rds, byID[si][id])
				}
				smp[si] = collect(x, rds, opt)
			}
			if (x.WithReasoning || x.Scheduled) && !anySamples(smp) {
				// TTFO where no request produced reasoning is TTFT; no
				// schedule-relative row where no file has intended starts
				continue
			}
			sts := opt.Stats
			if x.Scope == analyze.RunLevel {
				sts = []Stat{{Name: "value"}}
			}
			for _, st := range sts {
				row := Row{Group: gi, Config: g.Key, Label: labels[gi], Stat: st.String(), Cells: make([]Cell, len(sides))}
				if x.Scope == analyze.RunLevel {
					row.Stat = "value"
				}
				for si := range sides {
					row.Cells[si] = cellOf(x, st, smp[si], opt.Alpha)
				}
				for si := 1; si < len(sides); si++ {
					row.Cells[si].VsBase = delta(x, st, smp[0], smp[si], row.Cells[0], row.Cells[si], opt.Alpha)
				}
				if !anyValue(row) {
					continue // undefined on every side (ITL of a source without arrival times)
				}
				t.Rows = append(t.Rows, row)
			}
		}
		if len(t.Rows) == 0 {
			continue
		}
		t.Geomean = geomean(t.Rows, len(sides))
		res.Tables = append(res.Tables, t)
	}
	return res, nil
}

// Labels are the groups' short names: the keys whose values differ
// between groups ("rate=4 streaming=true"), "" for a single group.
func (m Matching) Labels() []string {
	out := make([]string, len(m.Groups))
	if len(m.Groups) < 2 {
		return out
	}
	var varying []string
	for _, k := range m.Keys {
		for _, g := range m.Groups[1:] {
			if g.Config[k] != m.Groups[0].Config[k] {
				varying = append(varying, k)
				break
			}
		}
	}
	for i, g := range m.Groups {
		out[i] = strings.ReplaceAll(g.Config.Key(varying), ", ", " ")
	}
	return out
}

// Common is the part of the groups' configuration they all share ("osl=64,
// streaming=true"; every matched key with one group).
func (m Matching) Common() string {
	if len(m.Groups) == 0 {
		return ""
	}
	var same []string
	for _, k := range m.Keys {
		ok := true
		for _, g := range m.Groups[1:] {
			if g.Config[k] != m.Groups[0].Config[k] {
				ok = false
				break
			}
		}
		if ok {
			same = append(same, k)
		}
	}
	return m.Groups[0].Config.Key(same)
}

// anyValue reports whether some cell of the row has a value.
func anyValue(r Row) bool {
	for _, c := range r.Cells {
		if !math.IsNaN(float64(c.Value)) {
			return true
		}
	}
	return false
}

// anySamples reports whether a side has samples or reported values.
func anySamples(smp []*sample) bool {
	for _, s := range smp {
		if len(s.sorted) > 0 {
			return true
		}
		for _, v := range s.reported {
			if len(v) > 0 {
				return true
			}
		}
	}
	return false
}

func appendUnique(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// collect gathers one side's data of metric x over its runs rds of one
// configuration (none: the side lacks it).
func collect(x *analyze.Metric, rds []*analyze.RunData, opt Options) *sample {
	s := &sample{runs: len(rds)}
	if len(rds) == 0 {
		return s
	}
	if x.Scope == analyze.RunLevel {
		s.source = "recomputed"
		for _, rd := range rds {
			v := x.Run(rd.Report)
			if v.Reported {
				s.source = "reported"
			}
			if math.IsNaN(v.Value) {
				s.why = v.Why
				continue
			}
			s.runVals = append(s.runVals, v.Value)
			s.x += v.Successes
			s.nn += v.Trials
		}
		return s
	}
	var perRequest []*analyze.RunData
	for _, rd := range rds {
		if rd.Report.Requests.Total > 0 {
			perRequest = append(perRequest, rd)
		}
	}
	if len(perRequest) == 0 {
		// summary-only runs: the tools' reported statistics
		s.source = "reported"
		s.reported = map[Stat][]float64{}
		s.why = "the run has no per-request data and its tool reported no such statistic"
		for _, rd := range rds {
			if t := rd.Report.Throughput; t.Reported && t.RequestsPerS == 0 {
				// no request completed: a tool's statistics of an empty
				// list (vLLM writes 0) are not measurements
				s.why = "no request completed: the tool's latency statistics of an empty list are not measurements"
				continue
			}
			for _, st := range opt.Stats {
				if v, ok := ReportedValue(opt.Tools, rd.Run, x, st); ok {
					s.reported[st] = append(s.reported[st], v)
				}
			}
		}
		return s
	}
	s.source = "recomputed"
	s.method = stats.Method(perRequest[0].Convention.Percentile)
	var pooled []float64
	for _, rd := range perRequest {
		vals := rd.Values[x]
		if x.WithReasoning && rd.Report.Metrics.Of(x).N == 0 {
			vals = nil // no request produced reasoning: TTFO is TTFT
		}
		if len(perRequest) == 1 {
			pooled = vals
		} else {
			pooled = append(pooled, vals...)
			s.perRun = append(s.perRun, stats.SortedCopy(vals))
		}
	}
	s.sorted = stats.SortedCopy(pooled)
	if len(s.sorted) == 0 {
		s.sorted = nil
		switch {
		case x.WithReasoning:
			s.why = "no request produced reasoning (TTFO is TTFT)"
		case x.Scheduled:
			s.why = "no completed request has an intended start (the file records none, or no request completed)"
		case x.Streaming && !perRequest[0].Streaming:
			s.why = "the run is not streaming"
		default:
			s.why = "no samples"
		}
	}
	if len(perRequest) < len(rds) {
		s.why = fmt.Sprintf("%d of %d runs have no per-request data and are left out", len(rds)-len(perRequest), len(rds))
	}
	return s
}

// statOf is statistic st of a sorted sample by method m.
func statOf(sorted []float64, st Stat, m stats.Method) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	switch st.Name {
	case "p":
		return stats.Percentile(sorted, st.P, m)
	case "mean":
		return stats.Mean(sorted)
	case "min":
		return sorted[0]
	case "max":
		return sorted[len(sorted)-1]
	}
	return math.NaN()
}

// cellOf is one side's cell of statistic st of metric x.
func cellOf(x *analyze.Metric, st Stat, s *sample, alpha float64) Cell {
	c := Cell{Value: analyze.F(math.NaN()), Runs: s.runs, Source: s.source}
	if s.runs == 0 {
		c.Source = ""
		c.Why = "no run of this configuration"
		return c
	}
	switch {
	case x.Scope == analyze.RunLevel:
		c.N = len(s.runVals)
		switch {
		case len(s.runVals) == 0:
			c.Why = s.why
		case x.Proportion && s.nn > 0:
			c.Value, c.N = analyze.F(float64(s.x)/float64(s.nn)), s.nn
		default:
			c.Value = analyze.F(stats.Mean(s.runVals))
		}
		if s.runs > 1 {
			for _, v := range s.runVals {
				c.RunValues = append(c.RunValues, analyze.F(v))
			}
		}
	case s.reported != nil:
		vals := s.reported[st]
		c.N = 0
		if len(vals) == 0 {
			c.Why = s.why
			return c
		}
		c.Value = analyze.F(stats.Mean(vals))
		if s.runs > 1 {
			for _, v := range vals {
				c.RunValues = append(c.RunValues, analyze.F(v))
			}
		}
	default:
		c.N = len(s.sorted)
		c.Value = analyze.F(statOf(s.sorted, st, s.method))
		if need := stats.MinSamplesForCI(st.P, 1-2*alpha); st.Name == "p" && c.N > 0 && c.N < need {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s of fewer than %d samples: neither order statistics nor resampling bound its upper side, so a difference that needs that bound is not established", st, need))
		}
		if math.IsNaN(float64(c.Value)) {
			c.Why = s.why
		} else if s.why != "" {
			c.Why = s.why
		}
		for _, r := range s.perRun {
			c.RunValues = append(c.RunValues, analyze.F(statOf(r, st, s.method)))
		}
	}
	return c
}

// delta compares side cand's cell with the base's (nil when either value
// is missing).
func delta(x *analyze.Metric, st Stat, base, cand *sample, bc, cc Cell, alpha float64) *Delta {
	b, c := float64(bc.Value), float64(cc.Value)
	if math.IsNaN(b) || math.IsNaN(c) {
		return nil
	}
	var d stats.Diff
	switch {
	case base.source == "reported" || cand.source == "reported":
		d = stats.Untested(c-b, "a tool-reported value has no per-request samples to test")
	case x.Scope == analyze.RunLevel && x.Proportion:
		d = stats.AgrestiCaffo(cand.x, cand.nn, base.x, base.nn, alpha, 1, 0)
	case x.Scope == analyze.RunLevel:
		if len(cand.runVals) >= 2 && len(base.runVals) >= 2 {
			d = stats.Welch(cand.runVals, base.runVals, alpha, 1, 0)
			if d.Test == "welch t" {
				d.Test = "welch t over runs"
			}
		} else {
			d = stats.Untested(c-b, "one value per run: a rate is tested over repeated runs, two or more per side")
		}
	case st.Name == "p":
		d = stats.PercentileDiff(cand.sorted, base.sorted, st.P, cand.method, base.method, alpha, 1, 0)
	case st.Name == "mean":
		d = stats.Welch(cand.sorted, base.sorted, alpha, 1, 0)
	default:
		d = stats.Untested(c-b, "an extreme has no test")
	}
	out := &Delta{Change: analyze.F(c/b - 1), Diff: analyze.F(c - b), Lo: analyze.F(d.Lo), Hi: analyze.F(d.Hi), Test: d.Test, PValue: analyze.F(math.NaN())}
	if b == 0 {
		out.Change = analyze.F(math.NaN())
	}
	if strings.HasPrefix(d.Test, "none") {
		out.Verdict = "untested"
		return out
	}
	switch {
	case d.Up():
		out.Verdict = "higher"
	case d.Down():
		out.Verdict = "lower"
	default:
		out.Verdict = "~"
	}
	switch {
	case !math.IsNaN(d.PUp) && c > b:
		out.PValue = analyze.F(d.PUp)
	case !math.IsNaN(d.PDown) && c < b:
		out.PValue = analyze.F(d.PDown)
	case !math.IsNaN(d.PUp):
		out.PValue = analyze.F(math.Min(d.PUp, d.PDown))
	}
	higherBetter := x.AtLeast
	out.Better = out.Verdict == "higher" && higherBetter || out.Verdict == "lower" && !higherBetter
	return out
}

// geomean is the table's summary row (nil with fewer than two rows).
func geomean(rows []Row, sides int) *Geomean {
	if len(rows) < 2 {
		return nil
	}
	g := &Geomean{Values: make([]analyze.F, sides), Change: make([]analyze.F, sides)}
	var notes []string
	for si := 0; si < sides; si++ {
		logSum, n, ok := 0.0, 0, true
		ratioSum, nr, rok := 0.0, 0, true
		missing := false
		for _, r := range rows {
			v := float64(r.Cells[si].Value)
			if math.IsNaN(v) {
				missing = true
				continue
			}
			if v <= 0 {
				ok = false
			} else {
				logSum += math.Log(v)
				n++
			}
			if si > 0 {
				b := float64(r.Cells[0].Value)
				if math.IsNaN(b) {
					continue
				}
				if b <= 0 || v <= 0 {
					rok = false
					continue
				}
				ratioSum += math.Log(v / b)
				nr++
			}
		}
		g.Values[si], g.Change[si] = analyze.F(math.NaN()), analyze.F(math.NaN())
		if ok && n > 0 {
			g.Values[si] = analyze.F(math.Exp(logSum / float64(n)))
		}
		if si > 0 && rok && nr > 0 {
			g.Change[si] = analyze.F(math.Exp(ratioSum/float64(nr)) - 1)
		}
		if !ok || !rok {
			notes = append(notes, "values must be > 0 for a geometric mean")
		}
		if missing && si > 0 {
			notes = append(notes, "a side lacks rows the base has: its geomean is over fewer rows")
		}
	}
	slices.Sort(notes)
	g.Note = strings.Join(slices.Compact(notes), "; ")
	return g
}

// ReportedValue is the tool's own value of statistic st of metric x for a
// run whose source has no per-request rows (summary only), in tokentrace's
// unit, where the tool reported it: e.g. MLPerf's first_token_latency_ns
// p99 for p99 of TTFT, inference-perf's ttft mean for the mean. Keys are
// the tool's statistic names: "p99" (and "p99.9"), "mean" or "avg", "min",
// "max"; P50 is also found as "median". ok is false when tools is nil, the
// run's tool or the statistic is not known, the tool's value is not a
// number, or a data check of the run set the metric to null (TRAPS.md).
func ReportedValue(tools *convention.Set, run *formats.Run, x *analyze.Metric, st Stat) (float64, bool) {
	if tools == nil || run == nil || len(run.Reported) == 0 {
		return 0, false
	}
	c, ok := tools.ForRun(run.Convention, run.Tool)
	if !ok {
		return 0, false
	}
	for _, ch := range run.Checks {
		// a data check that set the metric to null (TRAPS.md): not a value
		if t, ok := tools.Trap(ch.Code); ok && t.Action == convention.ActionNull && slices.Contains(t.Metrics, x.Key) {
			return 0, false
		}
	}
	keys := []string{st.Name}
	switch st.Name {
	case "p":
		keys = []string{"p" + strconv.FormatFloat(st.P*100, 'f', -1, 64)}
		if st.P == 0.5 {
			keys = append(keys, "median")
		}
	case "mean":
		keys = []string{"mean", "avg"}
	}
	mapped := tools.Metrics(c)
	names := make([]string, 0, len(mapped))
	for name := range mapped {
		names = append(names, name)
	}
	slices.Sort(names) // one answer whatever the map's order
	for _, name := range names {
		tm := mapped[name]
		if tm.Quantity != x.Name || tm.Reason != "" || tm.Scale == 0 {
			continue
		}
		for _, rs := range run.Reported {
			if rs.Metric != name || rs.Value == nil {
				continue
			}
			for _, k := range keys {
				if rs.Stat == k {
					return *rs.Value / tm.Scale, true
				}
			}
		}
	}
	return 0, false
}

// Pooled is statistic st of metric x over runs rds of one configuration,
// pooled as a comparison pools them (Cell): the statistic of all their
// samples (per-request and pooled metrics), all successes over all trials
// (proportions) or the runs' mean (rates); the tools' reported values
// where the runs have no per-request data. st is ignored for run-level
// metrics.
func Pooled(x *analyze.Metric, st Stat, rds []*analyze.RunData, tools *convention.Set) Cell {
	return cellOf(x, st, collect(x, rds, Options{Stats: []Stat{st}, Tools: tools}), DefaultAlpha)
}

// DataCheckNote is one data check of a compared run: Warnings[Warning] of
// the Result, by its parts.
type DataCheckNote struct {
	Warning                  int
	Side, Run, Code, Message string
}
