package analyze

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/formats"
)

// ReproTolerance is the relative difference within which a recomputed
// statistic reproduces the tool's (absolute 1e-9 when the tool's is 0).
const ReproTolerance = 1e-6

// Reproduction compares every statistic a tool reported for a run with the
// same statistic recomputed from the tables under the tool's convention.
type Reproduction struct {
	Convention string `json:"convention"`
	Reproduced int    `json:"reproduced"`
	Differs    int    `json:"differs"`
	// NotReproducible counts statistics the tables cannot recompute; each
	// says why.
	NotReproducible int              `json:"not_reproducible"`
	Total           int              `json:"total"`
	Items           []ReproducedStat `json:"items"`
}

// ReproducedStat is one reported statistic and its recomputation.
type ReproducedStat struct {
	Metric     string `json:"metric"`
	Stat       string `json:"stat"`
	Unit       string `json:"unit,omitempty"`
	Reported   F      `json:"reported"`
	Recomputed F      `json:"recomputed"`
	RelDiff    F      `json:"rel_diff"`
	// Status is "reproduced", "differs" or "not_reproducible".
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// toolMetric maps one of a tool's reported metrics to a tokentrace
// quantity (per-request distribution) or run-level scalar, with the scale
// from tokentrace's unit (ms, tokens, tokens/s) to the tool's.
type toolMetric struct {
	quantity string  // a Quantities name, or a scalar ("scalar:…")
	scale    float64 // multiply tokentrace's value by this
	reason   string  // set: not reproducible, and why
}

const (
	whyHTTP      = "the HTTP timing breakdown (http_req_*) is not imported"
	whyPrompt    = "GenAI-Perf re-tokenizes the prompt text, which tokentrace does not store"
	whyLoopWall  = "LLMPerf divides by the wall time of its whole request loop, which its files do not record"
	whyChunks23  = "LLMPerf before afd137a divides its SSE chunk count, which its files do not keep, by E2E"
	whyChunks24  = "LLMPerf 2024-12 divides by its SSE chunk counter (tokens_received), which its files do not keep"
	whyGoodput   = "needs the goodput constraints the run was given; recompute with --slo"
	whyCache     = "prompt-cache token counts are not imported"
	whyMismatch  = "AIPerf's OSL-mismatch check compares with the requested length, which is not imported"
	whyReasoning = "reasoning token counts per request are not imported from AIPerf records"
)

var genaiPerfMetrics = map[string]toolMetric{
	"time_to_first_token":                 {quantity: "ttft", scale: 1},
	"time_to_second_token":                {quantity: "ttst", scale: 1},
	"inter_token_latency":                 {quantity: "tpot", scale: 1},
	"request_latency":                     {quantity: "e2e", scale: 1},
	"output_sequence_length":              {quantity: "osl", scale: 1},
	"input_sequence_length":               {reason: whyPrompt},
	"output_token_throughput_per_request": {quantity: "osl_per_e2e_s", scale: 1},
	"output_token_throughput_per_user":    {quantity: "tpot_tokens_per_s", scale: 1},
	"output_token_throughput":             {quantity: "scalar:output_token_throughput", scale: 1},
	"request_throughput":                  {quantity: "scalar:request_throughput", scale: 1},
	"request_count":                       {quantity: "scalar:e2e_count", scale: 1},
	"request_goodput":                     {reason: whyGoodput},
}

var aiperfMetrics = map[string]toolMetric{
	"time_to_first_token":                  {quantity: "ttft", scale: 1},
	"time_to_first_output_token":           {quantity: "ttfo", scale: 1},
	"time_to_second_token":                 {quantity: "ttst", scale: 1},
	"request_latency":                      {quantity: "e2e", scale: 1},
	"inter_token_latency":                  {quantity: "tpot", scale: 1},
	"inter_chunk_latency":                  {quantity: "itl", scale: 1},
	"output_sequence_length":               {quantity: "osl", scale: 1},
	"output_token_count":                   {quantity: "osl", scale: 1},
	"input_sequence_length":                {quantity: "isl_reported", scale: 1},
	"usage_prompt_tokens":                  {quantity: "isl_usage", scale: 1},
	"usage_completion_tokens":              {quantity: "osl_usage", scale: 1},
	"usage_total_tokens":                   {quantity: "usage_total", scale: 1},
	"output_token_throughput_per_user":     {quantity: "tpot_tokens_per_s", scale: 1},
	"e2e_output_token_throughput":          {quantity: "osl_per_e2e_s", scale: 1},
	"prefill_throughput_per_user":          {quantity: "isl_per_ttft_s", scale: 1},
	"error_isl":                            {quantity: "error_isl", scale: 1},
	"request_throughput":                   {quantity: "scalar:request_throughput", scale: 1},
	"output_token_throughput":              {quantity: "scalar:output_token_throughput", scale: 1},
	"total_token_throughput":               {quantity: "scalar:total_token_throughput", scale: 1},
	"benchmark_duration":                   {quantity: "scalar:duration_s", scale: 1},
	"request_count":                        {quantity: "scalar:counted", scale: 1},
	"error_request_count":                  {quantity: "scalar:failed", scale: 1},
	"total_osl":                            {quantity: "scalar:sum:osl", scale: 1},
	"total_output_tokens":                  {quantity: "scalar:sum:osl", scale: 1},
	"total_isl":                            {quantity: "scalar:sum:isl_reported", scale: 1},
	"total_error_isl":                      {quantity: "scalar:sum:error_isl", scale: 1},
	"total_usage_prompt_tokens":            {quantity: "scalar:sum:isl_usage", scale: 1},
	"total_usage_completion_tokens":        {quantity: "scalar:sum:osl_usage", scale: 1},
	"total_usage_total_tokens":             {quantity: "scalar:sum:usage_total", scale: 1},
	"reasoning_token_count":                {reason: whyReasoning},
	"total_reasoning_tokens":               {reason: whyReasoning},
	"goodput":                              {reason: whyGoodput},
	"good_request_count":                   {reason: whyGoodput},
	"osl_mismatch_diff_pct":                {reason: whyMismatch},
	"osl_mismatch_count":                   {reason: whyMismatch},
	"usage_prompt_cache_read_tokens":       {reason: whyCache},
	"total_usage_prompt_cache_read_tokens": {reason: whyCache},
	"overall_usage_prompt_cache_read_pct":  {reason: whyCache},
}

func llmperfMetrics(c Convention) map[string]toolMetric {
	m := map[string]toolMetric{
		"ttft_s":                                {quantity: "ttft", scale: 1e-3},
		"end_to_end_latency_s":                  {quantity: "e2e", scale: 1e-3},
		"inter_token_latency_s":                 {quantity: "tpot", scale: 1e-3},
		"number_output_tokens":                  {quantity: "osl", scale: 1},
		"number_input_tokens":                   {quantity: "isl_reported", scale: 1},
		"request_output_throughput_token_per_s": {quantity: "osl_per_e2e_s", scale: 1},
		"num_requests_started":                  {quantity: "scalar:total", scale: 1},
		"number_errors":                         {quantity: "scalar:errors", scale: 1},
		"error_rate":                            {quantity: "scalar:error_rate_errors", scale: 1},
		"num_completed_requests":                {quantity: "scalar:counted", scale: 1},
		"mean_output_throughput_token_per_s":    {reason: whyLoopWall},
		"num_completed_requests_per_min":        {reason: whyLoopWall},
		"error_code_frequency":                  {quantity: "scalar:error_code", scale: 1},
	}
	switch c.Name {
	case LLMPerf2023.Name:
		m["request_output_throughput_token_per_s"] = toolMetric{reason: whyChunks23}
	case LLMPerf2024Dec.Name:
		m["inter_token_latency_s"] = toolMetric{reason: whyChunks24}
	}
	return m
}

// toolMetricMaps maps a tool name (Convention.Tool) to the mapping of its
// reported metrics for a given convention of it. Each tool's mapping lives
// in its own file (reproduce_<tool>.go) and registers here.
var toolMetricMaps = map[string]func(Convention) map[string]toolMetric{
	"genai-perf": func(Convention) map[string]toolMetric { return genaiPerfMetrics },
	"aiperf":     func(Convention) map[string]toolMetric { return aiperfMetrics },
	"llmperf":    llmperfMetrics,
}

// toolMetrics returns the reported-metric mapping of c's tool; nil when
// tokentrace has none for it yet.
func toolMetrics(c Convention) map[string]toolMetric {
	if f := toolMetricMaps[c.Tool]; f != nil {
		return f(c)
	}
	return nil
}

// reproduce recomputes every statistic the run's tool reported, under c.
func reproduce(c Convention, run *formats.Run, reqs []RequestMetrics, s *samples) *Reproduction {
	mapping := toolMetrics(c)
	if mapping == nil || len(run.Reported) == 0 {
		return nil
	}
	out := &Reproduction{Convention: c.Name, Items: []ReproducedStat{}}
	for _, st := range run.Reported {
		if st.Value == nil {
			continue // text values (timestamps, error details) are not statistics
		}
		item := ReproducedStat{Metric: st.Metric, Stat: st.Stat, Unit: st.Unit, Reported: F(*st.Value), Recomputed: F(math.NaN()), RelDiff: F(math.NaN())}
		tm, ok := mapping[st.Metric]
		switch {
		case strings.HasPrefix(st.Metric, "http_req_"):
			item.Reason = whyHTTP
		case len(reqs) == 0:
			item.Reason = "summary only: nothing to recompute"
		case !ok:
			item.Reason = "no tokentrace definition of this metric yet"
		case tm.reason != "":
			item.Reason = tm.reason
		default:
			v, why := recompute(c, tm, st, run, reqs, s)
			item.Recomputed = F(v)
			item.Reason = why
		}
		judge(&item, run)
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

func judge(item *ReproducedStat, run *formats.Run) {
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
		item.RelDiff = F(diff / math.Abs(rep))
	} else {
		item.RelDiff = F(diff)
	}
	if rep == 0 && diff <= 1e-9 || rep != 0 && diff <= ReproTolerance*math.Abs(rep) {
		item.Status, item.Reason = "reproduced", ""
		return
	}
	item.Status = "differs"
	if item.Reason == "" && hasNote(run, "sampled:") {
		item.Reason = "the file keeps only a sample of the run's requests (guidellm --sample-requests); the tool's statistics cover them all"
	}
	if item.Reason == "" && run.Tool == "aiperf" && item.Metric == "inter_chunk_latency" && strings.HasPrefix(item.Stat, "p") && versionAtLeast(run.ToolVersion, 0, 10) {
		item.Reason = "AIPerf 0.10+ estimates percentiles of list metrics (inter_chunk_latency) with an approximate t-digest (per the research notes; mean, min, max and sum agree exactly); tokentrace's are exact"
	}
}

func hasNote(run *formats.Run, prefix string) bool {
	for _, n := range run.Notes {
		if strings.HasPrefix(n, prefix) || strings.Contains(n, " "+prefix) {
			return true
		}
	}
	return false
}

func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

// recompute returns the value of the tool's statistic st under c.
func recompute(c Convention, tm toolMetric, st formats.ReportedStat, run *formats.Run, reqs []RequestMetrics, s *samples) (float64, string) {
	if q, ok := strings.CutPrefix(tm.quantity, "scalar:"); ok {
		if v, why, ok := reportedDurationScalar(q, run, s); ok {
			return v * tm.scale, why
		}
		v, why := scalar(c, q, st, reqs, s)
		return v * tm.scale, why
	}
	xs := s.values[tm.quantity]
	if c.Tool == "guidellm" {
		// guidellm's own DistributionSummary statistics (token-weighted
		// percentiles, count, std_dev, mode, variance, total_sum)
		if v, ok := GuideLLMStat(c, xs, s.weights[tm.quantity], tm.scale, st.Stat); ok {
			return v, "" // already in the tool's unit
		}
	}
	v, why := statOf(xs, s.weights[tm.quantity], st.Stat, c)
	return v * tm.scale, why
}

// statOf computes a statistic named the tools' way over xs under c.
func statOf(xs, ws []float64, stat string, c Convention) (float64, string) {
	if len(xs) == 0 {
		return math.NaN(), "no samples under this convention"
	}
	if ws != nil && c.Percentile == PercentileWeightedNearestRank {
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

// scalar computes a run-level value.
func scalar(c Convention, name string, st formats.ReportedStat, reqs []RequestMetrics, s *samples) (float64, string) {
	var total, counted, failed, errors float64
	codes := map[int64]float64{}
	for i := range reqs {
		m := &reqs[i]
		total++
		if m.Counted {
			counted++
		}
		if m.Status == formats.StatusError || m.Status == formats.StatusCancelled {
			failed++
		}
		if m.Status == formats.StatusError {
			errors++
			if m.HasErrorCode {
				codes[m.ErrorCode]++
			}
		}
	}
	if q, ok := strings.CutPrefix(name, "sum:"); ok {
		if len(s.values[q]) == 0 {
			return 0, ""
		}
		return stats.PairwiseSum(s.values[q]), ""
	}
	dur, _ := duration(c, reqs)
	if c.Duration == DurationNotRecorded {
		dur = math.NaN()
	}
	tp := throughput(c, reqs, dur)
	switch name {
	case "total":
		return total, ""
	case "counted":
		return counted, ""
	case "failed":
		return failed, ""
	case "errors":
		return errors, ""
	case "error_rate_errors":
		return div(errors, total), ""
	case "e2e_count":
		return float64(len(s.values["e2e"])), ""
	case "duration_s":
		return dur, ""
	case "request_throughput":
		return float64(tp.RequestsPerS), ""
	case "output_token_throughput":
		// the convention's N summed over counted requests
		return div(sumOr0(s.values["osl"]), dur), ""
	case "total_token_throughput":
		return div(sumOr0(s.values["osl"])+sumOr0(s.values["isl"]), dur), ""
	case "error_code":
		code, err := strconv.ParseFloat(st.Stat, 64)
		if err != nil {
			return math.NaN(), "error code " + strconv.Quote(st.Stat) + " is not a number"
		}
		return codes[int64(code)], ""
	}
	return math.NaN(), "unknown scalar " + name
}

func sumOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.PairwiseSum(xs)
}
