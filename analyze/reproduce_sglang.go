package analyze

// SGLang bench_serving: how its reported metrics, as ingest/sglangbench
// stores them, map to tokentrace quantities (statistic keys
// "<stat>_<metric>_ms" as Metric "<metric>_ms" and Stat "<stat>", scalars
// under their key with Stat "value"). Sources: sgl-project/sglang 0033168
// python/sglang/bench_serving.py calculate_metrics; 1291c7f
// python/sglang/benchmark/metrics.py; research note llmperf-vllm-sglang.md
// 2.3.

const (
	whySGLangLatency  = "SGLang's latency ends at the last stream line ([DONE] included) and is not saved per request (--output-details has no latencies)"
	whySGLangTPOT     = "SGLang's TPOT is (latency − ttft)/(output_len − 1) with that latency, which is not saved per request"
	whySGLangConc     = "SGLang's concurrency is Σ latency / duration, and latency is not saved per request"
	whySGLangDuration = "SGLang's duration runs from dispatch to after the profiler stop and the /get_server_info call; no request time bounds it"
	whyRetokenized    = "SGLang's re-tokenized output count (its tokenizer, add_special_tokens=False) is not saved per request"
	whyVision         = "the text/vision split of the prompt tokens is not imported"
	whyAccept         = "average speculative-decoding accept length from the server's internal state; not in the per-request data"
	whySGLangCount    = "SGLang sums output_lens (usage.completion_tokens when seen, else the requested max tokens), imported as tool_reported for OpenAI-style backends; this convention's output-count sources do not include tool_reported"
)

func sglangMetrics(c Convention) map[string]toolMetric {
	m := map[string]toolMetric{
		"ttft_ms":                         {quantity: "ttft", scale: 1},
		"itl_ms":                          {quantity: "itl", scale: 1},
		"tpot_ms":                         {reason: whySGLangTPOT},
		"e2e_latency_ms":                  {reason: whySGLangLatency},
		"completed":                       {quantity: "scalar:counted", scale: 1},
		"total_input_tokens":              {quantity: "scalar:sum:isl", scale: 1},
		"total_output_tokens":             {quantity: "scalar:sum:osl", scale: 1},
		"request_throughput":              {quantity: "scalar:reported_duration:counted", scale: 1},
		"input_throughput":                {quantity: "scalar:reported_duration:sum:isl", scale: 1},
		"output_throughput":               {quantity: "scalar:reported_duration:sum:osl", scale: 1},
		"total_throughput":                {quantity: "scalar:reported_duration:sum:osl+isl", scale: 1},
		"duration":                        {reason: whySGLangDuration},
		"concurrency":                     {reason: whySGLangConc},
		"total_output_tokens_retokenized": {reason: whyRetokenized},
		"output_throughput_retokenized":   {reason: whyRetokenized},
		"total_throughput_retokenized":    {reason: whyRetokenized},
		"total_input_text_tokens":         {reason: whyVision},
		"total_input_vision_tokens":       {reason: whyVision},
		"accept_length":                   {reason: whyAccept},
	}
	// Native-backend runs store output_lens as server_usage, which every
	// SGLang profile reads; the OpenAI-style backends' output_lens are
	// tool_reported.
	if c.Name != SGLangNative.Name && !hasCountSource(c, CountToolReported) {
		for _, k := range []string{"total_output_tokens", "output_throughput", "total_throughput"} {
			m[k] = toolMetric{reason: whySGLangCount}
		}
	}
	return m
}

func init() {
	toolMetricMaps["sglang"] = sglangMetrics
}
