package aiperf

import "github.com/tokentrace/tokentrace/convention"

// srcAIPerf are the ai-dynamo/aiperf commits the profile was read from.
const srcAIPerf = "ai-dynamo/aiperf db4f639 (0.1.1) and 0fec57a/58dd5de (0.8–0.14)"

// Profile is AIPerf's convention (0.1 – 0.10; records JSONL).
var Profile = convention.Convention{
	Name: Name, Tool: Name,
	Completed: convention.CompletedOK, Responses: convention.ResponsesTokens, ResponseUnit: convention.UnitMessage, E2EEnd: convention.E2ELastResponse,
	OutputTokens: []convention.CountSource{convention.CountToolRaw}, TokenizeReasoning: true, TPOTFrom: convention.TPOTFromFirstResponse, TPOTDivisor: convention.DivideNMinus1,
	TPOTRounding: convention.RoundNone, ITL: convention.ITLPooledGaps, Percentile: convention.PercentileLinear, StdDDOF: 0,
	Duration: convention.DurationCompletedSpan, ThroughputRequests: convention.ThroughputCompleted, Goodput: convention.GoodputPerSecond,
	Sources: map[string]string{
		"completed":           srcAIPerf + " common/models/record_models.py 582-599: valid = no error and ≥1 response",
		"responses":           srcAIPerf + " parsers/openai_parsers.py 123-134: non-empty content or reasoning",
		"response_unit":       srcAIPerf + " parsers/openai_parsers.py 85-86: one per SSE message",
		"e2e_end":             srcAIPerf + " metrics/types/request_latency_metric.py 35-39: last response − start",
		"latency_from":        srcAIPerf + ": request_latency from request_start_ns; effective_latency (from metadata.credit_issued_ns) is a separate metric",
		"failed_requests":     srcAIPerf + ": successful records only; the adj_* metrics (PERCENTILE_INCLUDES_FAILED_REQUESTS) add one +inf per errored record and are reproduced under failed_requests infinite",
		"output_count":        srcAIPerf + " inference_result_parser.py 186-214: output_sequence_length (tokenizer or --use-server-token-count)",
		"tokenize_reasoning":  srcAIPerf + " output_sequence_length_metric.py 48: output + reasoning tokens",
		"special_tokens":      srcAIPerf + " common/tokenizer.py 36-37: add_special_tokens=False",
		"tpot_from":           srcAIPerf + " inter_token_latency_metric.py 46-52: (latency − TTFT)",
		"tpot_divisor":        srcAIPerf + " inter_token_latency_metric.py 46-52: / (OSL − 1)",
		"tpot_count":          srcAIPerf + " inter_token_latency_metric.py: OSL",
		"tpot_rounding":       srcAIPerf + ": not rounded",
		"itl":                 srcAIPerf + " inter_chunk_latency_metric.py 58-65, metric_results_processor.py 79-84: pooled gaps",
		"percentile":          srcAIPerf + " metric_dicts.py 187-212: np.percentile default",
		"std":                 srcAIPerf + " metric_dicts.py 187-212: np.std (ddof 0)",
		"duration":            srcAIPerf + " benchmark_duration_metric.py 45: max(start + latency) − min start over valid records",
		"throughput_requests": srcAIPerf + " request_throughput_metric.py 40: valid records / duration",
		"goodput":             srcAIPerf + " goodput_metric.py 39: good / duration",
		"corrections":         "the tool computes from its data as written, its known bugs included: reproducing its numbers needs them uncorrected",
	},
}

const (
	whyHTTP      = "the HTTP timing breakdown (http_req_*) is not imported"
	whyMismatch  = "AIPerf's OSL-mismatch check compares with the requested length, which is not imported"
	whyReasoning = "reasoning token counts per request are not imported from AIPerf records"
)

// metrics maps AIPerf's reported metrics (profile_export_aiperf.json) to
// tokentrace's quantities.
var metrics = map[string]convention.ReportedMetric{
	"time_to_first_token":                  convention.Map("ttft", 1),
	"time_to_first_output_token":           convention.Map("ttfo", 1),
	"time_to_second_token":                 convention.Map("ttst", 1),
	"request_latency":                      convention.Map("e2e", 1),
	"inter_token_latency":                  convention.Map("tpot", 1),
	"inter_chunk_latency":                  convention.Map("itl", 1),
	"output_sequence_length":               convention.Map("osl", 1),
	"output_token_count":                   convention.Map("osl", 1),
	"input_sequence_length":                convention.Map("isl_reported", 1),
	"usage_prompt_tokens":                  convention.Map("isl_usage", 1),
	"usage_completion_tokens":              convention.Map("osl_usage", 1),
	"usage_total_tokens":                   convention.Map("usage_total", 1),
	"output_token_throughput_per_user":     convention.Map("tpot_tokens_per_s", 1),
	"e2e_output_token_throughput":          convention.Map("osl_per_e2e_s", 1),
	"prefill_throughput_per_user":          convention.Map("isl_per_ttft_s", 1),
	"error_isl":                            convention.Map("error_isl", 1),
	"request_throughput":                   convention.Map("scalar:request_throughput", 1),
	"output_token_throughput":              convention.Map("scalar:output_token_throughput", 1),
	"total_token_throughput":               convention.Map("scalar:total_token_throughput", 1),
	"benchmark_duration":                   convention.Map("scalar:duration_s", 1),
	"request_count":                        convention.Map("scalar:counted", 1),
	"error_request_count":                  convention.Map("scalar:failed", 1),
	"total_osl":                            convention.Map("scalar:sum:osl", 1),
	"total_output_tokens":                  convention.Map("scalar:sum:osl", 1),
	"total_isl":                            convention.Map("scalar:sum:isl_reported", 1),
	"total_error_isl":                      convention.Map("scalar:sum:error_isl", 1),
	"total_usage_prompt_tokens":            convention.Map("scalar:sum:isl_usage", 1),
	"total_usage_completion_tokens":        convention.Map("scalar:sum:osl_usage", 1),
	"total_usage_total_tokens":             convention.Map("scalar:sum:usage_total", 1),
	"reasoning_token_count":                convention.Unmapped(whyReasoning),
	"total_reasoning_tokens":               convention.Unmapped(whyReasoning),
	"goodput":                              convention.Unmapped(convention.ReasonGoodput),
	"good_request_count":                   convention.Unmapped(convention.ReasonGoodput),
	"osl_mismatch_diff_pct":                convention.Unmapped(whyMismatch),
	"osl_mismatch_count":                   convention.Unmapped(whyMismatch),
	"usage_prompt_cache_read_tokens":       convention.Map("cached_input", 1),
	"total_usage_prompt_cache_read_tokens": convention.Map("scalar:sum:cached_input", 1),
	"overall_usage_prompt_cache_read_pct":  convention.Map("scalar:cache_hit_fraction", 100),
	// request_end − credit_issued_ns over successful records
	// (docs/reference/effective-vs-active-metrics.md at 36c0308): the
	// schedule-relative E2E; the adj_* forms add one +inf per errored record
	// (PERCENTILE_INCLUDES_FAILED_REQUESTS), non-finite statistics omitted.
	"effective_latency":        convention.Map("sched_e2e", 1),
	"effective_concurrency":    convention.Map("scalar:recorded_concurrency", 1),
	"adj_effective_latency":    convention.Map("sched_e2e"+convention.FailedInfSuffix, 1),
	"adj_request_latency":      convention.Map("e2e"+convention.FailedInfSuffix, 1),
	"adj_time_to_first_token":  convention.Map("ttft"+convention.FailedInfSuffix, 1),
	"adj_time_to_second_token": convention.Unmapped(whyAdjGaps),
	"adj_inter_token_latency":  convention.Unmapped(whyAdjGaps),
}

// whyAdjGaps: a failed request has no gaps between responses.
const whyAdjGaps = "tokentrace counts failed requests as +∞ only in latencies from the start (TTFT, E2E): a failure has no gap between responses to inflate"

// Tool is what tokentrace knows of AIPerf's numbers.
var Tool = convention.Tool{
	Name:           Name,
	Profiles:       []convention.Convention{Profile},
	Metrics:        func(convention.Convention) map[string]convention.ReportedMetric { return metrics },
	MetricPrefixes: map[string]string{"http_req_": whyHTTP},
	Traps:          traps,
	Throughput:     &convention.ReportedThroughput{OutputMetric: "output_token_throughput", OutputStat: "avg", RequestMetric: "request_throughput", RequestStat: "avg", RequestScale: 1},
	// AIPerf keeps GenAI-Perf's metric names.
	Headline: []string{
		"time_to_first_token", "time_to_first_output_token", "time_to_second_token",
		"inter_token_latency", "inter_chunk_latency", "request_latency",
		"output_sequence_length", "input_sequence_length", "request_throughput",
		"output_token_throughput", "request_count", "error_request_count",
		"request_goodput", "goodput", "benchmark_duration",
	},
	// ai-dynamo/aiperf@0fec57a67268 src/aiperf/common/models/metric_dicts.py:
	// list metrics are aggregated in bounded memory.
	Differences: []convention.Difference{{
		Metric: "inter_chunk_latency", StatPrefix: "p", MinVersion: "0.10",
		Reason: "AIPerf 0.10+ estimates percentiles of list metrics (inter_chunk_latency) with an approximate t-digest (its bounded-memory aggregator for list metrics; mean, min, max and sum agree exactly); tokentrace's are exact",
	}},
}
