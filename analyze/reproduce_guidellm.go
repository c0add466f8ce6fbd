package analyze

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze/stats"
)

// guidellm's reported metrics (ingest/guidellm): Metric "<metric>.<status>"
// with status successful, incomplete, errored or total; Stat the tool's
// statistic name, percentiles as "p0.1" … "p99.9".

const (
	whyGuideRate   = "guidellm's rate and concurrency metrics are time-weighted distributions over event timelines (request ends, token iterations it spreads evenly between first and last token), which tokentrace does not rebuild"
	whyGuideStatus = "tokentrace computes latency statistics over successful requests only; guidellm's incomplete, errored and total summaries include unfinished and failed requests (with missing values as 0)"
	whyGuideIter   = "guidellm's iteration counts per request (request_iterations, tokens per iteration) are not a tokentrace quantity"
	whyGuideTotal  = "prompt + output tokens per request is not a tokentrace quantity"
	whyGuideCancel = "tokentrace has no scalar for cancelled requests alone"
	whyGuideWindow = "guidellm v0.4+ measures duration as the scheduler's measurement window (measure_end − measure_start, minus warm-up and cool-down), not a span of request times"
)

// guidellmPerRequest maps guidellm's per-request distributions to
// quantities (over successful requests).
var guidellmPerRequest = map[string]toolMetric{
	"time_to_first_token_ms":             {quantity: "ttft", scale: 1},
	"time_to_first_output_token_ms":      {quantity: "ttfo", scale: 1},
	"time_per_output_token_ms":           {quantity: "tpot", scale: 1},
	"inter_token_latency_ms":             {quantity: "itl", scale: 1},
	"request_latency":                    {quantity: "e2e", scale: 1e-3},
	"output_token_count":                 {quantity: "osl", scale: 1},
	"prompt_token_count":                 {quantity: "isl", scale: 1},
	"total_token_count":                  {reason: whyGuideTotal},
	"request_streaming_iterations_count": {reason: whyGuideIter},
	"output_tokens_per_iteration":        {reason: whyGuideIter},
	"iter_tokens_per_iteration":          {reason: whyGuideIter},
	"requests_per_second":                {reason: whyGuideRate},
	"request_concurrency":                {reason: whyGuideRate},
	"prompt_tokens_per_second":           {reason: whyGuideRate},
	"output_tokens_per_second":           {reason: whyGuideRate},
	"tokens_per_second":                  {reason: whyGuideRate},
}

func guidellmMetrics(c Convention) map[string]toolMetric {
	m := map[string]toolMetric{
		"request_totals.successful": {quantity: "scalar:counted", scale: 1},
		"request_totals.errored":    {quantity: "scalar:errors", scale: 1},
		"request_totals.total":      {quantity: "scalar:total", scale: 1},
		"request_totals.incomplete": {reason: whyGuideCancel},
		"duration":                  {quantity: "scalar:duration_s", scale: 1},
		"warmup_duration":           {reason: whyGuideWindow},
		"cooldown_duration":         {reason: whyGuideWindow},
	}
	if c.Duration == DurationNotRecorded {
		m["duration"] = toolMetric{reason: whyGuideWindow}
	}
	for name, tm := range guidellmPerRequest {
		for _, st := range []string{"successful", "incomplete", "errored", "total"} {
			if st == "successful" || tm.reason != "" {
				m[name+"."+st] = tm
			} else {
				m[name+"."+st] = toolMetric{reason: whyGuideStatus}
			}
		}
	}
	return m
}

func init() { toolMetricMaps["guidellm"] = guidellmMetrics }

// GuideLLMStat computes statistic stat of the values xs·scale (xs in
// tokentrace's unit, scale to the tool's: 1e-3 for request_latency in s),
// weighted by ws (nil: equal weights), the way guidellm's
// DistributionSummary does under convention c (GuideLLM03: v0.2–v0.3
// rules; any other: v0.4+ rules). The result is in the tool's unit (count
// is not scaled, variance is in the unit squared). ok is false for a
// statistic guidellm does not report. An empty sample gives 0, as guidellm
// writes.
//
// Statistics: mean, median, mode, variance, std_dev, min, max, count,
// total_sum, and percentiles named "p<percent>" ("p0.1", "p99.9"). All come
// from the weighted pmf (values sorted, probabilities w/Σw): mean = Σ v·p,
// variance = Σ (v − mean)²·p (population), percentile p = the first value
// whose cumulative probability reaches p.
//
// v0.2–v0.3 (objects/statistics.py from_distribution_function): values are
// not merged, the percentile is argmax(cdf ≥ p) (the smallest value when
// rounding leaves every cdf below p), mode is the value of the largest
// single probability, count = number of values, total_sum = Σ values.
//
// v0.4+ (schemas/statistics.py from_values, from_pdf): equal values are
// merged (weights summed), zero weights dropped, all weights taken equal
// when they sum to ≤ 1e-6; the percentile is searchsorted(cdf, p, "left");
// count = round(Σ weights) (so the token-weighted TPOT's count is Σ N);
// total_sum = mean·count.
//
// Sums are numpy's pairwise sums, cumulative sums sequential, as numpy
// computes them.
func GuideLLMStat(c Convention, xs, ws []float64, scale float64, stat string) (float64, bool) {
	p, isPct := guidellmPercentile(stat)
	switch stat {
	case "mean", "median", "mode", "variance", "std_dev", "min", "max", "count", "total_sum":
	default:
		if !isPct {
			return math.NaN(), false
		}
	}
	v04 := c.Name != GuideLLM03.Name
	type pt struct{ v, w float64 }
	pts := make([]pt, 0, len(xs))
	rawW := make([]float64, 0, len(xs))
	for i, x := range xs {
		w := 1.0
		if ws != nil {
			w = 0
			if i < len(ws) {
				w = ws[i]
			}
		}
		if math.IsNaN(x) || math.IsNaN(w) {
			continue
		}
		pts = append(pts, pt{x * scale, w})
		rawW = append(rawW, w)
	}
	var vals, probs []float64
	var count, totalSum float64
	if v04 {
		count = math.RoundToEven(guidellmSum(rawW))
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].v < pts[j].v })
		var mw []float64
		for _, q := range pts {
			if n := len(vals); n > 0 && vals[n-1] == q.v {
				mw[n-1] += q.w
				continue
			}
			vals = append(vals, q.v)
			mw = append(mw, q.w)
		}
		k := 0
		for i := range vals {
			if mw[i] > 0 {
				vals[k], mw[k] = vals[i], mw[i]
				k++
			}
		}
		vals, mw = vals[:k], mw[:k]
		tw := guidellmSum(mw)
		if tw <= 1e-6 {
			for i := range mw {
				mw[i] = 1
			}
			tw = guidellmSum(mw)
		}
		probs = make([]float64, len(mw))
		for i, w := range mw {
			probs[i] = w / tw
		}
	} else {
		tw := guidellmSum(rawW) // over the unsorted weights, as numpy
		probs0 := make([]float64, len(pts))
		for i, q := range pts {
			probs0[i] = q.w / tw
		}
		idx := make([]int, len(pts))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return pts[idx[a]].v < pts[idx[b]].v })
		for _, i := range idx {
			vals = append(vals, pts[i].v)
			probs = append(probs, probs0[i])
		}
		count = float64(len(vals))
		totalSum = guidellmSum(vals)
	}
	if len(vals) == 0 {
		if stat == "count" {
			return count, true
		}
		return 0, true
	}
	prod := make([]float64, len(vals))
	for i := range vals {
		prod[i] = vals[i] * probs[i]
	}
	mean := stats.PairwiseSum(prod)
	switch stat {
	case "mean":
		return mean, true
	case "min":
		return vals[0], true
	case "max":
		return vals[len(vals)-1], true
	case "count":
		return count, true
	case "total_sum":
		if v04 {
			return mean * count, true
		}
		return totalSum, true
	case "mode":
		best := 0
		for i := range probs {
			if probs[i] > probs[best] {
				best = i
			}
		}
		return vals[best], true
	case "variance", "std_dev":
		for i := range vals {
			d := vals[i] - mean
			prod[i] = d * d * probs[i]
		}
		v := stats.PairwiseSum(prod)
		if stat == "std_dev" {
			return math.Sqrt(v), true
		}
		return v, true
	case "median":
		p = 0.5
	}
	cum := 0.0
	for i := range probs {
		cum += probs[i]
		if cum >= p {
			return vals[i], true
		}
	}
	if v04 {
		return vals[len(vals)-1], true // numpy would index past the end
	}
	return vals[0], true // np.argmax of all-False
}

// guidellmPercentiles are the probabilities guidellm writes its percentiles
// at, under the names ingest/guidellm gives them (the literals of its
// Percentiles model, so that cdf ≥ p compares the same numbers).
var guidellmPercentiles = map[string]float64{
	"p0.1": 0.001, "p1": 0.01, "p5": 0.05, "p10": 0.1, "p25": 0.25, "p50": 0.5,
	"p75": 0.75, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p99.9": 0.999,
}

// guidellmPercentile reads "p<percent>" as a probability.
func guidellmPercentile(stat string) (float64, bool) {
	if p, ok := guidellmPercentiles[stat]; ok {
		return p, true
	}
	s, ok := strings.CutPrefix(stat, "p")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 100 {
		return 0, false
	}
	return v / 100, true
}

func guidellmSum(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.PairwiseSum(xs)
}
