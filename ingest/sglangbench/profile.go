package sglangbench

import "github.com/tokentrace/tokentrace/convention"

// srcSGLang are the sgl-project/sglang files the profiles were read from.
const srcSGLang = "sgl-project/sglang 0033168 python/sglang/bench_serving.py; 1291c7f python/sglang/benchmark/metrics.py"

// Profile is SGLang bench_serving with OpenAI-style backends (sglang-oai,
// vllm, *-chat).
var Profile = convention.Convention{
	Name: Name, Tool: Name,
	Completed: convention.CompletedWithContent, Responses: convention.ResponsesContent, ResponseUnit: convention.UnitMessage, E2EEnd: convention.E2EStreamEnd,
	OutputTokens: []convention.CountSource{convention.CountServerUsage, convention.CountToolReported, convention.CountRequested}, TPOTFrom: convention.TPOTFromFirstResponse, TPOTDivisor: convention.DivideNMinus1,
	TPOTRounding: convention.RoundNone, ITL: convention.ITLPooledGaps, Percentile: convention.PercentileLinear, StdDDOF: 0,
	Duration: convention.DurationNotRecorded, ThroughputRequests: convention.ThroughputCompleted, Goodput: convention.GoodputNone,
	Sources: map[string]string{
		"completed":           srcSGLang + ": success with ≥1 content chunk",
		"responses":           srcSGLang + ": first chunk with non-empty text/content",
		"response_unit":       srcSGLang + ": SSE lines",
		"e2e_end":             srcSGLang + ": latency stamped for every line, [DONE] included",
		"latency_from":        srcSGLang + ": from the request's send",
		"failed_requests":     srcSGLang + ": successful requests only",
		"output_count":        srcSGLang + ": usage.completion_tokens, else the requested max tokens (issue #24254)",
		"tokenize_reasoning":  srcSGLang + ": retokenized count reported aside only",
		"special_tokens":      srcSGLang + ": add_special_tokens=False (retokenized aside)",
		"tpot_from":           srcSGLang + ": (latency − ttft)",
		"tpot_divisor":        srcSGLang + ": / (output_len − 1)",
		"tpot_count":          srcSGLang + ": output_len",
		"tpot_rounding":       srcSGLang + ": none",
		"itl":                 srcSGLang + ": one sample per content chunk",
		"percentile":          srcSGLang + ": np.percentile default",
		"std":                 srcSGLang + ": np.std (ddof 0)",
		"duration":            srcSGLang + ": dispatch to after profiler stop / server-info call",
		"throughput_requests": srcSGLang + ": completed / duration",
		"goodput":             srcSGLang + ": none (PR #5495 closed)",
		"corrections":         "the tool computes from its data as written, its known bugs included: reproducing its numbers needs them uncorrected",
	},
}

// ProfileNative is SGLang bench_serving with the native /generate backend:
// server token counts, token-split ITL.
var ProfileNative = func() convention.Convention {
	c := convention.WithName(Profile, "sglang-native", map[string]string{
		"output_count": srcSGLang + ": meta_info.completion_tokens",
		"itl":          srcSGLang + ": a chunk adding k tokens gives k samples of gap/k",
	})
	c.OutputTokens = []convention.CountSource{convention.CountServerUsage}
	c.ITL = convention.ITLPooledTokenSplit
	return c
}()

// How SGLang bench_serving's reported metrics, as this package stores
// them, map to tokentrace quantities (statistic keys "<stat>_<metric>_ms"
// as Metric "<metric>_ms" and Stat "<stat>", scalars under their key with
// Stat "value"). Sources: sgl-project/sglang 0033168
// python/sglang/bench_serving.py calculate_metrics; 1291c7f
// python/sglang/benchmark/metrics.py.

const (
	whySGLangLatency  = "SGLang's latency ends at the last stream line ([DONE] included) and is not saved per request (--output-details has no latencies)"
	whySGLangTPOT     = "SGLang's TPOT is (latency − ttft)/(output_len − 1) with that latency, which is not saved per request"
	whySGLangConc     = "SGLang's concurrency is Σ latency of the successful requests / duration (failures, in flight until they failed, are left out: sglang_concurrency_successes), and latency is not saved per request"
	whySGLangDuration = "SGLang's duration runs from dispatch to after the profiler stop and the /get_server_info call; no request time bounds it"
	whyRetokenized    = "SGLang's re-tokenized output count (its tokenizer, add_special_tokens=False) is not saved per request"
	whyVision         = "the text/vision split of the prompt tokens is not imported"
	whyAccept         = "average speculative-decoding accept length from the server's internal state; not in the per-request data"
	whySGLangCount    = "SGLang sums output_lens (usage.completion_tokens when seen, else the requested max tokens), imported as tool_reported for OpenAI-style backends; this convention's output-count sources do not include tool_reported"
)

func metrics(c convention.Convention) map[string]convention.ReportedMetric {
	m := map[string]convention.ReportedMetric{
		"ttft_ms":                         convention.Map("ttft", 1),
		"itl_ms":                          convention.Map("itl", 1),
		"tpot_ms":                         convention.Unmapped(whySGLangTPOT),
		"e2e_latency_ms":                  convention.Unmapped(whySGLangLatency),
		"completed":                       convention.Map("scalar:counted", 1),
		"total_input_tokens":              convention.Map("scalar:sum:isl", 1),
		"total_output_tokens":             convention.Map("scalar:sum:osl", 1),
		"request_throughput":              convention.Map("scalar:reported_duration:counted", 1),
		"input_throughput":                convention.Map("scalar:reported_duration:sum:isl", 1),
		"output_throughput":               convention.Map("scalar:reported_duration:sum:osl", 1),
		"total_throughput":                convention.Map("scalar:reported_duration:sum:osl+isl", 1),
		"duration":                        convention.Unmapped(whySGLangDuration),
		"concurrency":                     convention.Unmapped(whySGLangConc),
		"total_output_tokens_retokenized": convention.Unmapped(whyRetokenized),
		"output_throughput_retokenized":   convention.Unmapped(whyRetokenized),
		"total_throughput_retokenized":    convention.Unmapped(whyRetokenized),
		"total_input_text_tokens":         convention.Unmapped(whyVision),
		"total_input_vision_tokens":       convention.Unmapped(whyVision),
		"accept_length":                   convention.Unmapped(whyAccept),
	}
	// Native-backend runs store output_lens as server_usage, which every
	// SGLang profile reads; the OpenAI-style backends' output_lens are
	// tool_reported.
	if c.Name != ProfileNative.Name && !c.CountsFrom(convention.CountToolReported) {
		for _, k := range []string{"total_output_tokens", "output_throughput", "total_throughput"} {
			m[k] = convention.Unmapped(whySGLangCount)
		}
	}
	return m
}

// Tool is what tokentrace knows of SGLang bench_serving's numbers.
var Tool = convention.Tool{
	Name:       Name,
	Profiles:   []convention.Convention{Profile, ProfileNative},
	Metrics:    metrics,
	Traps:      traps,
	Throughput: &convention.ReportedThroughput{OutputMetric: "output_throughput", OutputStat: "value", RequestMetric: "request_throughput", RequestStat: "value", RequestScale: 1},
	Headline: []string{
		"ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms", "completed", "failed", "duration",
		"request_throughput", "output_throughput", "total_throughput",
	},
}
