package mlperf

import "github.com/tokentrace/tokentrace/convention"

// srcMLPerf are the mlcommons/inference files the profile was read from.
const srcMLPerf = "mlcommons/inference loadgen/results.cc, loadgen/logging.cc"

// Profile is MLPerf Inference LoadGen's token-latency convention.
var Profile = convention.Convention{
	Name: Convention, Tool: Name,
	Completed: convention.CompletedOK, Responses: convention.ResponsesTokens, ResponseUnit: convention.UnitMessage, E2EEnd: convention.E2EStreamEnd,
	OutputTokens: []convention.CountSource{convention.CountToolReported}, TPOTFrom: convention.TPOTFromFirstResponse, TPOTDivisor: convention.DivideNMinus1,
	TPOTRounding: convention.RoundFloorNs, ITL: convention.ITLPooledGaps, Percentile: convention.PercentileFloorRank, StdDDOF: 0,
	Duration: convention.DurationNotRecorded, ThroughputRequests: convention.ThroughputCompleted, Goodput: convention.GoodputNone,
	Sources: map[string]string{
		"completed":           srcMLPerf + ": every completed sample",
		"responses":           srcMLPerf + ": FirstTokenComplete called by the SUT; latency origin is the scheduled time",
		"response_unit":       srcMLPerf + ": SUT callbacks",
		"e2e_end":             srcMLPerf + ": QuerySamplesComplete",
		"latency_from":        srcMLPerf + ": from the sample's issue as the log records it",
		"failed_requests":     srcMLPerf + ": completed samples only",
		"output_count":        srcMLPerf + ": response.n_tokens from the SUT (includes the first token)",
		"tokenize_reasoning":  srcMLPerf + ": SUT count",
		"special_tokens":      srcMLPerf + ": SUT count",
		"tpot_from":           srcMLPerf + ": (latency − TTFT)",
		"tpot_divisor":        srcMLPerf + ": / (n_tokens − 1)",
		"tpot_count":          srcMLPerf + ": n_tokens",
		"tpot_rounding":       srcMLPerf + ": integer ns division",
		"itl":                 srcMLPerf + ": no ITL; no per-token times recorded",
		"percentile":          srcMLPerf + " results.cc: sorted[(size_t)(n·p)]",
		"std":                 srcMLPerf + ": no std reported",
		"duration":            srcMLPerf + ": test start → final_query_all_samples_done_time",
		"throughput_requests": srcMLPerf + ": (n − 1) / final completion time (Server)",
		"goodput":             srcMLPerf + ": none; PerfConstraintsMet = P99 TTFT and P99 TPOT within limits",
		"corrections":         "the tool computes from its data as written, its known bugs included: reproducing its numbers needs them uncorrected",
	},
}

// LoadGen's reported metrics (this package): latency distributions in ns
// under one name per quantity, LoadGen's throughputs and counts. LoadGen
// logs hold no per-sample rows, so an imported run has nothing to
// recompute (reproduction says "summary only"); the mapping serves runs
// whose per-sample rows come from elsewhere (a hand-made or trace-derived
// table with each sample's scheduled start, first-token and completion
// times and n_tokens as tool_reported output tokens).

const (
	whyMLPerfClock   = "LoadGen divides by the time from the test's start to the last completion (or to the last query's scheduled or issue time), which per-sample rows do not record"
	whyMLPerfUnit    = "LoadGen's result_token_throughput divides by the mean latency in ns, not s (a unit slip), so it is not a throughput"
	whyMLPerfTarget  = "counts samples over target_latency, which token runs set to 0"
	whyMLPerfQuery   = "MultiStream per-query latencies span several samples; tokentrace's rows are samples"
	whyMLPerfES      = "LoadGen's early-stopping estimate is an order statistic chosen by its confidence rule, not a fixed percentile"
	whyMLPerfVerdict = "a verdict, not a statistic"
)

var metrics = map[string]convention.ReportedMetric{
	"latency_ns":               convention.Map("e2e", 1e6),
	"first_token_latency_ns":   convention.Map("ttft", 1e6),
	"time_per_output_token_ns": convention.Map("tpot", 1e6),
	"query_count":              convention.Map("scalar:total", 1),
	"num_errors":               convention.Map("scalar:errors", 1),

	"completed_samples_per_sec":              convention.Unmapped(whyMLPerfClock),
	"scheduled_samples_per_sec":              convention.Unmapped(whyMLPerfClock),
	"samples_per_second":                     convention.Unmapped(whyMLPerfClock),
	"completed_tokens_per_second":            convention.Unmapped(whyMLPerfClock),
	"tokens_per_second":                      convention.Unmapped(whyMLPerfClock),
	"token_throughput_with_loadgen_overhead": convention.Unmapped(whyMLPerfClock),
	"qps_with_loadgen_overhead":              convention.Unmapped(whyMLPerfClock),
	"qps_without_loadgen_overhead":           convention.Unmapped(whyMLPerfClock),
	"tps_without_loadgen_overhead":           convention.Unmapped(whyMLPerfClock),
	"token_throughput":                       convention.Unmapped(whyMLPerfUnit),
	"overlatency_query_count":                convention.Unmapped(whyMLPerfTarget),
	"query_latency_ns":                       convention.Unmapped(whyMLPerfQuery),
	"early_stopping_latency_ss_ns":           convention.Unmapped(whyMLPerfES),
	"early_stopping_latency_ms_ns":           convention.Unmapped(whyMLPerfES),
	"validity":                               convention.Unmapped(whyMLPerfVerdict),
}

// Tool is what tokentrace knows of MLPerf LoadGen's numbers.
var Tool = convention.Tool{
	Name:     Name,
	Profiles: []convention.Convention{Profile},
	Metrics:  func(convention.Convention) map[string]convention.ReportedMetric { return metrics },
	Traps:    traps,
	// the verdict first: LoadGen's VALID/INVALID, why, and each
	// constraint and early-stopping result (mlcommons/inference#1788: a
	// "Yes" beside a failed TPOT early stopping)
	Headline: []string{
		"validity", "invalid_reason", "perf_constraints_met", "min_duration_met", "min_queries_met",
		"early_stopping_met", "early_stopping_ttft_result", "early_stopping_tpot_result",
		"completed_samples_per_sec", "completed_tokens_per_second", "samples_per_second", "tokens_per_second",
		"first_token_latency_ns", "time_per_output_token_ns", "latency_ns", "num_errors",
	},
}
