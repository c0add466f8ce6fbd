// Package reproduce recomputes each peer tool's own reported statistics
// from tokentrace's tables under the tool's convention (Reproducer, the
// report's reproduction section), and reconciles two conventions one
// choice at a time (Reconcile). What it knows of each tool — the mapping
// of its reported metrics, its known differences, how it computes
// statistics — comes from the tool's importer (convention.Tool) through a
// convention.Set; the generic rules (statistics named the tools' way,
// run-level scalars) live here.
package reproduce

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

// Reproducer returns the hook analyze.Options.Reproduce takes: it
// recomputes every statistic a run's tool reported, under the run data's
// convention (the tool's own), through the tool's mapping of its metrics
// in tools; nil when tokentrace has no mapping for the tool or the run
// reported nothing.
func Reproducer(tools *convention.Set) func(rd *analyze.RunData) *analyze.Reproduction {
	return func(rd *analyze.RunData) *analyze.Reproduction { return reproduce(tools, rd) }
}

// reproduce is Reproducer's work.
func reproduce(tools *convention.Set, rd *analyze.RunData) *analyze.Reproduction {
	c, run, reqs := rd.Convention, rd.Run, rd.Requests
	tool := tools.Tool(c.Tool)
	mapping := tools.Metrics(c)
	if mapping == nil || len(run.Reported) == 0 {
		return nil
	}
	out := &analyze.Reproduction{Convention: c.Name, Items: []analyze.ReproducedStat{}}
	for _, st := range run.Reported {
		if st.Value == nil {
			continue // text values (timestamps, error details) are not statistics
		}
		item := analyze.ReproducedStat{Metric: st.Metric, Stat: st.Stat, Unit: st.Unit, Reported: analyze.F(*st.Value), Recomputed: analyze.F(math.NaN()), RelDiff: analyze.F(math.NaN())}
		tm, ok := mapping[st.Metric]
		switch {
		case tool.PrefixReason(st.Metric) != "":
			item.Reason = tool.PrefixReason(st.Metric)
		case len(reqs) == 0:
			item.Reason = "summary only: nothing to recompute"
		case !ok:
			item.Reason = "no tokentrace definition of this metric yet"
		case tm.Reason != "":
			item.Reason = tm.Reason
		default:
			v, why := recompute(tools.StatsRule(c), tm, st, rd)
			item.Recomputed = analyze.F(v)
			item.Reason = why
			if why == "" && rd.ITLSketched && tm.Quantity == analyze.ITL.Name {
				// kept only if the item differs (judge clears it otherwise)
				item.Reason = fmt.Sprintf("the pooled ITL is over --memory-budget and summarized by a DDSketch (±%g%% per quantile): raise the budget for the exact value", 100*analyze.ITLSketchAccuracy)
			}
		}
		judge(&item, run, tool, tools, tm)
		switch item.Status {
		case "reproduced":
			out.Reproduced++
		case "differs":
			out.Differs++
		default:
			out.NotReproducible++
		}
		out.Total++
		out.Items = append(out.Items, item)
	}
	sort.SliceStable(out.Items, func(i, j int) bool { return out.Items[i].Metric < out.Items[j].Metric })
	return out
}

// judge sets the item's status from its values: reproduced within
// ReproTolerance, differs (with a reason: a data check of the run's that
// affects the metric, else one of the tool's Differences that applies)
// or not reproducible.
func judge(item *analyze.ReproducedStat, run *formats.Run, tool *convention.Tool, tools *convention.Set, tm convention.ReportedMetric) {
	rec, rep := float64(item.Recomputed), float64(item.Reported)
	if math.IsNaN(rec) {
		item.Status = "not_reproducible"
		if item.Reason == "" {
			item.Reason = "not computable from this run's tables"
		}
		return
	}
	diff := math.Abs(rec - rep)
	if rep != 0 {
		item.RelDiff = analyze.F(diff / math.Abs(rep))
	} else {
		item.RelDiff = analyze.F(diff)
	}
	if rep == 0 && diff <= 1e-9 || rep != 0 && diff <= analyze.ReproTolerance*math.Abs(rep) {
		item.Status, item.Reason = "reproduced", ""
		return
	}
	item.Status = "differs"
	if item.Reason != "" {
		return
	}
	if why := trapReason(run, tools, tm); why != "" {
		item.Reason = why
		return
	}
	if tool != nil {
		for _, d := range tool.Differences {
			if d.Applies(item.Metric, item.Stat, run.ToolVersion, run.Notes) {
				item.Reason = d.Reason
				return
			}
		}
	}
	if run.Truncated {
		item.Reason = "the input was cut (truncated_input): the tool's summary covers requests the file lost"
	}
}

// recompute returns the value of the tool's statistic st under c: a
// statistic of a Table metric's values (the tool's weighted-pmf statistics
// where rule says so), or a run-level scalar ("scalar:<name>",
// reproductionScalar).
func recompute(rule convention.StatsRule, tm convention.ReportedMetric, st formats.ReportedStat, rd *analyze.RunData) (float64, string) {
	c := rd.Convention
	if q, ok := strings.CutPrefix(tm.Quantity, "scalar:"); ok {
		v, why := reproductionScalar(q, &scalarInput{st: st, rd: rd})
		if q == "duration_s" {
			// the run's span summarized like a per-request metric (AIPerf's
			// benchmark_duration has avg, min, max and count): one value
			switch st.Stat {
			case "count":
				return 1, ""
			case "std", "std_dev", "stddev", "variance":
				return 0, ""
			}
		}
		return v * tm.Scale, why
	}
	q, failedInf := strings.CutSuffix(tm.Quantity, convention.FailedInfSuffix)
	x := analyze.LookupMetric(q)
	if x == nil {
		return math.NaN(), "the tool's mapping names no tokentrace metric " + strconv.Quote(tm.Quantity)
	}
	xs := rd.Values[x]
	if failedInf && c.FailedLatency != convention.FailedInfinite {
		// the tool's error-adjusted form: one +∞ per failed request
		k := 0
		for i := range rd.Requests {
			if st := rd.Requests[i].Status; st == formats.StatusError || st == formats.StatusCancelled {
				k++
			}
		}
		if k > 0 && len(xs) > 0 {
			xs = append(slices.Clip(xs), make([]float64, k)...)
			for i := len(xs) - k; i < len(xs); i++ {
				xs[i] = math.Inf(1)
			}
		}
	}
	if len(xs) == 0 && x.Scheduled {
		return math.NaN(), "no completed request has an intended start (scheduled_start_ns): the file records none (the run's notes say why), or no request completed"
	}
	if rule != convention.StatsNumpy {
		// the tool's own weighted-pmf statistics (guidellm's
		// DistributionSummary: token-weighted percentiles, count, std_dev,
		// mode, variance, total_sum)
		if v, ok := stats.PMFStat(xs, rd.Weights[x], tm.Scale, st.Stat, rule == convention.StatsPMFMerged); ok {
			return v, "" // already in the tool's unit
		}
	}
	v, why := statOf(xs, rd.Weights[x], st.Stat, c)
	return v * tm.Scale, why
}

// statOf computes a statistic named the tools' way over xs under c.
func statOf(xs, ws []float64, stat string, c convention.Convention) (float64, string) {
	if len(xs) == 0 {
		return math.NaN(), "no samples under this convention"
	}
	if ws != nil && c.Percentile == convention.PercentileWeightedNearestRank {
		sum := stats.SummarizeWeighted(xs, ws, nil)
		switch stat {
		case "mean", "avg":
			return sum.Mean, ""
		}
	}
	sorted := stats.SortedCopy(xs)
	switch stat {
	case "avg", "mean":
		return stats.Mean(sorted), ""
	case "std", "stddev":
		return stats.Std(sorted, stats.Mean(sorted), c.StdDDOF), ""
	case "min":
		return sorted[0], ""
	case "max":
		return sorted[len(sorted)-1], ""
	case "count":
		return float64(len(sorted)), ""
	case "sum":
		return stats.PairwiseSum(xs), ""
	case "median":
		return stats.Percentile(sorted, 0.5, stats.Method(c.Percentile)), ""
	}
	if p, ok := strings.CutPrefix(stat, "p"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err == nil && v >= 0 && v <= 100 {
			return stats.Percentile(sorted, v/100, stats.Method(c.Percentile)), ""
		}
	}
	return math.NaN(), fmt.Sprintf("statistic %q is not known to tokentrace", stat)
}

// scalarInput is what a reproduction scalar is computed from: the run's
// requests and samples under c, and the reported statistic it is compared
// with.
type scalarInput struct {
	st formats.ReportedStat
	rd *analyze.RunData
}

// count counts the run's requests that satisfy keep.
func (in *scalarInput) count(keep func(*analyze.RequestMetrics) bool) float64 {
	n := 0.0
	for i := range in.rd.Requests {
		if keep(&in.rd.Requests[i]) {
			n++
		}
	}
	return n
}

// duration is the run's span under the convention (NaN where the
// convention's duration is not in the files).
func (in *scalarInput) duration() float64 {
	dur, _ := analyze.Duration(in.rd.Convention, in.rd.Requests)
	if in.rd.Convention.Duration == convention.DurationNotRecorded {
		return math.NaN()
	}
	return dur
}

// sum is Σ of a Table metric's values over the counted requests (0 for
// none; NaN for an unknown metric).
// sum is Σ of metric name's values over the convention's completed
// requests that have one (the tools sum what they have: AIPerf's totals
// skip requests without usage); NaN with the reason when completed
// requests exist but none has a value — vLLM without output_lens, say:
// an empty sum is unknown, not 0.
func (in *scalarInput) sum(name string) (float64, string) {
	x := analyze.LookupMetric(name)
	if x == nil {
		return math.NaN(), "unknown metric " + strconv.Quote(name)
	}
	xs := in.rd.Values[x]
	n, which := float64(in.rd.Counted), "completed"
	if x.FailedRequests {
		n, which = in.count(isFailure), "failed"
	}
	if len(xs) == 0 && n > 0 {
		return math.NaN(), fmt.Sprintf("none of the %g %s requests has its %s in the file", n, which, x.Label)
	}
	return sumOr0(xs), ""
}

// sum2 is the sum of two metrics' sums, with the first reason.
func (in *scalarInput) sum2(a, b string) (float64, string) {
	x, why := in.sum(a)
	y, why2 := in.sum(b)
	if why == "" {
		why = why2
	}
	return x + y, why
}

func isFailure(m *analyze.RequestMetrics) bool {
	return m.Status == formats.StatusError || m.Status == formats.StatusCancelled
}

func isError(m *analyze.RequestMetrics) bool { return m.Status == formats.StatusError }

// reproductionScalars are the run-level values a tool's reported statistic
// can map to, by the name after "scalar:" in convention.ReportedMetric
// (besides the families of reproductionScalar).
var reproductionScalars = []struct {
	name, doc string
	value     func(in *scalarInput) (float64, string)
}{
	{"total", "every request", func(in *scalarInput) (float64, string) { return float64(len(in.rd.Requests)), "" }},
	{"counted", "the convention's completed requests", func(in *scalarInput) (float64, string) {
		return in.count(func(m *analyze.RequestMetrics) bool { return m.Counted }), ""
	}},
	{"failed", "failed and cancelled requests", func(in *scalarInput) (float64, string) { return in.count(isFailure), "" }},
	{"errors", "failed requests (status error)", func(in *scalarInput) (float64, string) { return in.count(isError), "" }},
	{"error_rate_errors", "errors / every request", func(in *scalarInput) (float64, string) {
		return div(in.count(isError), float64(len(in.rd.Requests))), ""
	}},
	{"e2e_count", "requests with an E2E", func(in *scalarInput) (float64, string) { return float64(len(in.rd.Values[analyze.E2E])), "" }},
	{"duration_s", "the run's span under the convention, in s", func(in *scalarInput) (float64, string) { return in.duration(), "" }},
	{"cache_hit_fraction", "Σ cached input tokens / Σ input tokens over the completed requests with both counts (the report's cache.hit_fraction)", func(in *scalarInput) (float64, string) {
		var cached, input float64
		for i := range in.rd.Requests {
			m := &in.rd.Requests[i]
			if m.Counted && !math.IsNaN(m.CachedInputTokens) && !math.IsNaN(m.InputTokens) && m.CachedInputTokens <= m.InputTokens {
				cached, input = cached+m.CachedInputTokens, input+m.InputTokens
			}
		}
		if input == 0 {
			return math.NaN(), "no completed request with a cached and an input count"
		}
		return cached / input, ""
	}},
	{"recorded_concurrency", "requests in flight over [start, recorded end) of every request (a request without an end holds no time), " +
		"time-weighted from the first intended start (else the first start) to the last end; the statistic asked (avg, pNN, min, max) by duration",
		recordedConcurrency},
	{"request_throughput", "requests per second (the convention's throughput_requests)", func(in *scalarInput) (float64, string) {
		return float64(analyze.ComputeThroughput(in.rd.Convention, in.rd.Requests, in.duration()).RequestsPerS), ""
	}},
	{"output_token_throughput", "Σ OSL over counted requests / duration", func(in *scalarInput) (float64, string) {
		v, why := in.sum(analyze.OSL.Name)
		return div(v, in.duration()), why
	}},
	{"total_token_throughput", "(Σ OSL + Σ ISL) / duration", func(in *scalarInput) (float64, string) {
		v, why := in.sum2(analyze.OSL.Name, analyze.ISL.Name)
		return div(v, in.duration()), why
	}},
	{"error_code", "failed requests whose error code is the statistic's name", func(in *scalarInput) (float64, string) {
		code, err := strconv.ParseFloat(in.st.Stat, 64)
		if err != nil {
			return math.NaN(), "error code " + strconv.Quote(in.st.Stat) + " is not a number"
		}
		return in.count(func(m *analyze.RequestMetrics) bool {
			return isError(m) && m.HasErrorCode && m.ErrorCode == int64(code)
		}), ""
	}},
}

// reproductionScalar computes the run-level value called name: one of
// reproductionScalars, or one of the families
//
//	sum:<metric>                     Σ a Table metric's values over counted requests
//	reported_duration:counted        counted requests / the tool's reported duration
//	reported_duration:sum:<metric>   Σ metric / the tool's reported duration
//	reported_duration:sum:osl+isl    (Σ OSL + Σ ISL) / the tool's reported duration
//
// The reported duration is the run's Reported metric "duration" (Stat
// "value", in seconds: vLLM and SGLang measure it around their dispatch
// loop, so only the numerator is recomputed).
func reproductionScalar(name string, in *scalarInput) (float64, string) {
	if q, ok := strings.CutPrefix(name, "sum:"); ok {
		return in.sum(q)
	}
	if rest, ok := strings.CutPrefix(name, "reported_duration:"); ok {
		dur := math.NaN()
		for _, st := range in.rd.Run.Reported {
			if st.Metric == "duration" && st.Stat == "value" && st.Value != nil {
				dur = *st.Value
			}
		}
		if math.IsNaN(dur) || dur <= 0 {
			return math.NaN(), "the tool reported no positive duration"
		}
		if rest == "sum:osl+isl" {
			v, why := in.sum2(analyze.OSL.Name, analyze.ISL.Name)
			return v / dur, why
		}
		if q, ok := strings.CutPrefix(rest, "sum:"); ok {
			v, why := in.sum(q)
			return v / dur, why
		}
		if rest == "counted" {
			return float64(in.rd.Counted) / dur, ""
		}
	}
	for _, sc := range reproductionScalars {
		if sc.name == name {
			return sc.value(in)
		}
	}
	return math.NaN(), "unknown scalar " + name
}

func sumOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.PairwiseSum(xs)
}

// div is a/b, NaN when b is 0 or NaN.
func div(a, b float64) float64 {
	if b == 0 || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// trapReason is the reason a data check of the run gives for a difference
// in the tokentrace metric tm maps to ("" when none affects it): the
// trap's Reproduction, else its Effect.
func trapReason(run *formats.Run, tools *convention.Set, tm convention.ReportedMetric) string {
	key := strings.TrimPrefix(tm.Quantity, "scalar:")
	if x := analyze.LookupMetric(tm.Quantity); x != nil {
		key = x.Key
	}
	for _, ch := range run.Checks {
		t, ok := tools.Trap(ch.Code)
		if !ok || !slices.Contains(t.Metrics, key) {
			continue
		}
		why := t.Reproduction
		if why == "" {
			why = t.Effect
		}
		return fmt.Sprintf("data check %s (%d requests): %s", ch.Code, ch.Requests, why)
	}
	return ""
}

// recordedConcurrency is the recorded_concurrency scalar: AIPerf's
// effective_concurrency (ai-dynamo/aiperf 36c0308
// docs/reference/effective-vs-active-metrics.md: a sweep line over every
// record's [start_ns, end_ns), failures included — an errored record whose
// end equals its start holds no time — integrated from the first credit
// to the last response).
func recordedConcurrency(in *scalarInput) (float64, string) {
	var spans []formats.Span
	from, to, seen := int64(0), int64(0), false
	for i := range in.rd.Requests {
		m := &in.rd.Requests[i]
		if !m.HasStart {
			continue
		}
		first := m.StartNs
		if !math.IsNaN(m.DispatchDelayMs) {
			first -= int64(math.Round(m.DispatchDelayMs * 1e6))
		}
		if !seen || first < from {
			from = first
		}
		s := formats.Span{StartNs: m.StartNs, HasStart: true, EndNs: m.StartNs, EndKnown: true}
		if m.EndOffsetNs > 0 {
			s.EndNs = m.StartNs + m.EndOffsetNs
		}
		if !seen || s.EndNs > to {
			to = s.EndNs
		}
		seen = true
		spans = append(spans, s)
	}
	if !seen || to <= from {
		return math.NaN(), "no request with a start and an end"
	}
	res := formats.InFlight(spans, formats.InFlightOptions{})
	steps := formats.InFlightSteps(spans, res)
	var p float64
	switch st := in.st.Stat; st {
	case "avg", "mean":
		return analyze.TimeWeighted(steps, from, to, nil).Mean, ""
	case "min":
		p = 0
	case "max":
		p = 1
	default:
		v, err := strconv.ParseFloat(strings.TrimPrefix(st, "p"), 64)
		if !strings.HasPrefix(st, "p") || err != nil || v < 0 || v > 100 {
			return math.NaN(), fmt.Sprintf("statistic %q of a time-weighted count is not computed", st)
		}
		p = v / 100
	}
	return analyze.TimeWeighted(steps, from, to, []float64{p}).Quantiles[0], ""
}
