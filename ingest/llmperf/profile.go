package llmperf

import "github.com/tokentrace/tokentrace/convention"

// srcLLMPerf are the ray-project/llmperf files the profiles were read from.
const srcLLMPerf = "ray-project/llmperf token_benchmark_ray.py, src/llmperf/ray_clients/openai_chat_completions_client.py"

// Profile2023 is LLMPerf from "LLMPerfV2" 1eac866 (2023-12-05) to before
// afd137a (2024-04-07): per-request throughput counts SSE chunks.
var Profile2023 = convention.Convention{
	Name: Convention2023, Tool: Name,
	Completed: convention.CompletedNoError, Responses: convention.ResponsesContent, ResponseUnit: convention.UnitMessage, E2EEnd: convention.E2EStreamEnd,
	OutputTokens: []convention.CountSource{convention.CountToolRaw, convention.CountTokenizer}, SpecialTokens: true,
	TPOTFrom: convention.TPOTFromRequestStart, TPOTDivisor: convention.DivideN, TPOTCount: []convention.CountSource{convention.CountToolRaw, convention.CountTokenizer},
	TPOTRounding: convention.RoundNone, ITL: convention.ITLPooledGaps, Percentile: convention.PercentileLinear, StdDDOF: 1,
	Duration: convention.DurationNotRecorded, ThroughputRequests: convention.ThroughputCompleted, Goodput: convention.GoodputNone,
	Sources: map[string]string{
		"completed":           srcLLMPerf + " metrics_summary: rows with error_code null",
		"responses":           srcLLMPerf + ": only chunks with non-empty delta.content are timed",
		"response_unit":       srcLLMPerf + ": SSE lines",
		"e2e_end":             srcLLMPerf + ": end_to_end_latency_s after the stream closes",
		"latency_from":        srcLLMPerf + ": from the request's send",
		"failed_requests":     srcLLMPerf + ": rows without an error only",
		"output_count":        srcLLMPerf + ": len(LlamaTokenizerFast.encode(text)) incl. BOS (issue #35)",
		"tokenize_reasoning":  srcLLMPerf + ": generated_text is content only",
		"special_tokens":      srcLLMPerf + ": encode() adds BOS",
		"tpot_from":           srcLLMPerf + " 1eac866: Σ time_to_next_token = t_last_content − start (includes TTFT)",
		"tpot_divisor":        srcLLMPerf + " 1eac866: / N_tok",
		"tpot_count":          srcLLMPerf + " 1eac866: N_tok (with BOS)",
		"tpot_rounding":       srcLLMPerf + ": none",
		"itl":                 srcLLMPerf + ": inter_token_latency_s is a per-request mean (tpot), no gaps kept",
		"percentile":          srcLLMPerf + " metrics_summary: pandas Series.quantile (linear)",
		"std":                 srcLLMPerf + " metrics_summary: pandas Series.std (ddof 1)",
		"duration":            srcLLMPerf + ": wall time of the whole threaded request loop, not in the files",
		"throughput_requests": srcLLMPerf + ": num_completed_requests / loop wall time",
		"goodput":             srcLLMPerf + ": none",
		"corrections":         "the tool computes from its data as written, its known bugs included: reproducing its numbers needs them uncorrected",
	},
}

// Profile2024Apr is LLMPerf from afd137a (2024-04-07) to before f1d6bed:
// per-request throughput = N_tok / E2E.
var Profile2024Apr = convention.WithName(Profile2023, Convention2024Apr, map[string]string{
	"output_count": srcLLMPerf + " afd137a: N_tok incl. BOS; request_output_throughput = N_tok / e2e",
})

// Profile2024Dec is LLMPerf from f1d6bed (2024-12-09, final): the client
// divides its ITL sum by its SSE chunk counter.
var Profile2024Dec = func() convention.Convention {
	c := convention.WithName(Profile2023, Convention2024Dec, map[string]string{
		"tpot_count": srcLLMPerf + " f1d6bed: / tokens_received (every non-empty SSE line except [DONE])",
	})
	c.TPOTCount = []convention.CountSource{convention.CountSSEMessages}
	return c
}()

const (
	whyLoopWall = "LLMPerf divides by the wall time of its whole request loop, which its files do not record"
	whyChunks23 = "LLMPerf before afd137a divides its SSE chunk count, which its files do not keep, by E2E"
	whyChunks24 = "LLMPerf 2024-12 divides by its SSE chunk counter (tokens_received), which its files do not keep"
)

// metrics maps LLMPerf's summary (the results_* keys) to tokentrace's
// quantities under a convention of the tool: the version decides which
// per-request rates can be recomputed.
func metrics(c convention.Convention) map[string]convention.ReportedMetric {
	m := map[string]convention.ReportedMetric{
		"ttft_s":                                convention.Map("ttft", 1e-3),
		"end_to_end_latency_s":                  convention.Map("e2e", 1e-3),
		"inter_token_latency_s":                 convention.Map("tpot", 1e-3),
		"number_output_tokens":                  convention.Map("osl", 1),
		"number_input_tokens":                   convention.Map("isl_reported", 1),
		"request_output_throughput_token_per_s": convention.Map("osl_per_e2e_s", 1),
		"num_requests_started":                  convention.Map("scalar:total", 1),
		"number_errors":                         convention.Map("scalar:errors", 1),
		"error_rate":                            convention.Map("scalar:error_rate_errors", 1),
		"num_completed_requests":                convention.Map("scalar:counted", 1),
		"mean_output_throughput_token_per_s":    convention.Unmapped(whyLoopWall),
		"num_completed_requests_per_min":        convention.Unmapped(whyLoopWall),
		"error_code_frequency":                  convention.Map("scalar:error_code", 1),
	}
	switch c.Name {
	case Convention2023:
		m["request_output_throughput_token_per_s"] = convention.Unmapped(whyChunks23)
	case Convention2024Dec:
		m["inter_token_latency_s"] = convention.Unmapped(whyChunks24)
	}
	return m
}

// Tool is what tokentrace knows of LLMPerf's numbers: one profile per
// version whose definitions differ (detectConvention tells them apart);
// "llmperf" alone names the final code's.
// noteNoContent begins the run note counting replies without content.
const noteNoContent = "rows without content (no error, ttft_s 0, number_output_tokens ≤ 1: empty replies)"

var Tool = convention.Tool{
	Name:       Name,
	Profiles:   []convention.Convention{Profile2023, Profile2024Apr, Profile2024Dec},
	Aliases:    map[string]string{ConventionUnknown: Convention2024Dec},
	Metrics:    metrics,
	Traps:      traps,
	Throughput: &convention.ReportedThroughput{OutputMetric: "mean_output_throughput_token_per_s", OutputStat: "value", RequestMetric: "num_completed_requests_per_min", RequestStat: "value", RequestScale: 1.0 / 60},
	Differences: []convention.Difference{{Metric: "ttft_s", RunNote: noteNoContent,
		Reason: "LLMPerf keeps replies without content in its statistics with ttft_s 0 (its initial value: no content chunk came; " +
			"token_benchmark_ray.py drops error rows only); tokentrace gives them no TTFT"}},
	Headline: []string{
		"ttft_s", "end_to_end_latency_s", "inter_token_latency_s",
		"number_output_tokens", "number_input_tokens", "mean_output_throughput_token_per_s",
		"num_completed_requests", "num_completed_requests_per_min", "error_rate",
		"num_requests_started",
	},
}
