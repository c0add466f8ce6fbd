package analyze

// inference-perf (kubernetes-sigs/inference-perf) reported-metric mapping.
// The importer (ingest/inferenceperf) names each statistic by its key path
// in the lifecycle report (reportgen/base.py summarize_requests), e.g.
// "successes.latency.time_to_first_token" / "p99", "successes" / "count",
// "successes.throughput.output_tokens_per_sec" / "value", and the model
// server's Prometheus statistics with the prefix "prometheus.". Latencies
// are in seconds: tokentrace's ms are scaled by 1e-3.

const (
	whyIPNTPOT     = "normalized_time_per_output_token is E2E/N per request (0 when N = 0); tokentrace has no E2E/N quantity"
	whyIPSchedule  = "schedule_delay is start_time − scheduled_time; the per-request file does not keep scheduled_time"
	whyIPSend      = "send_duration (last start − first start) has no tokentrace scalar"
	whyIPAchieved  = "achieved_rate is requests / send_duration, which has no tokentrace scalar"
	whyIPConfig    = "a configured load setting, not a measurement (compare with the run's request_rate_rps / concurrency)"
	whyIPInput     = "input_tokens_per_sec (Σ ISL of successes / total_time) has no tokentrace scalar"
	whyIPMedia     = "inference-perf's request-size and image/video/audio statistics are not imported"
	whyIPMismatch  = "token_count_mismatches compares the per-chunk re-tokenized sum with the server's completion_tokens; tokentrace has no such count"
	whyIPFailedLat = "tokentrace has no latency quantity over failed requests"
	whyIPLabels    = "failure labels are inference-perf's classification of error messages (make_concise_label)"
	whyIPProm      = "a server-side number from the model server's Prometheus metrics (PromQL over the stage's window), not a client measurement: nothing in the client's requests recomputes it"
	whyIPBenchProm = "inference-perf writes benchmark_time_seconds 0.0 in every Prometheus report (summarize_prometheus_metrics)"
)

// inferencePerfMetrics maps inference-perf's reported metrics. The same
// mapping serves every version: the reported statistics keep their names
// while the per-request times behind them changed (see ingest/inferenceperf
// and the run's convention note).
func inferencePerfMetrics(Convention) map[string]toolMetric {
	m := map[string]toolMetric{
		"load_summary":                  {quantity: "scalar:total", scale: 1},
		"load_summary.schedule_delay":   {reason: whyIPSchedule},
		"load_summary.send_duration":    {reason: whyIPSend},
		"load_summary.requested_rate":   {reason: whyIPConfig},
		"load_summary.achieved_rate":    {reason: whyIPAchieved},
		"load_summary.concurrency":      {reason: whyIPConfig},
		"benchmark_time_seconds":        {quantity: "scalar:duration_s", scale: 1},
		"successes":                     {quantity: "scalar:counted", scale: 1},
		"failures":                      {quantity: "scalar:failed", scale: 1},
		"failures.request_latency":      {reason: whyIPFailedLat},
		"failures.by_label":             {reason: whyIPLabels},
		"failures.prompt_len":           {quantity: "error_isl", scale: 1},
		"failures.prompt_tokens":        {quantity: "error_isl", scale: 1},
		"failures.prompt_tokens.total":  {quantity: "scalar:sum:error_isl", scale: 1},
		"failures.prompt_tokens.cached": {reason: whyCache}, "failures.prompt_tokens.uncached": {reason: whyCache},

		"successes.latency.request_latency":                  {quantity: "e2e", scale: 1e-3},
		"successes.latency.time_to_first_token":              {quantity: "ttft", scale: 1e-3},
		"successes.latency.time_per_output_token":            {quantity: "tpot", scale: 1e-3},
		"successes.latency.inter_token_latency":              {quantity: "itl", scale: 1e-3},
		"successes.latency.normalized_time_per_output_token": {reason: whyIPNTPOT},

		"successes.throughput.requests_per_sec":      {quantity: "scalar:request_throughput", scale: 1},
		"successes.throughput.output_tokens_per_sec": {quantity: "scalar:output_token_throughput", scale: 1},
		"successes.throughput.total_tokens_per_sec":  {quantity: "scalar:total_token_throughput", scale: 1},
		"successes.throughput.input_tokens_per_sec":  {reason: whyIPInput},

		// ≤ v0.5: the client's prompt count; v0.6+: prompt_tokens, the
		// server's usage.prompt_tokens where reported, else the client's
		// count (= Request.input_tokens as imported).
		"successes.prompt_len":             {quantity: "isl_reported", scale: 1},
		"successes.prompt_tokens":          {quantity: "isl", scale: 1},
		"successes.prompt_tokens.total":    {quantity: "scalar:sum:isl", scale: 1},
		"successes.prompt_tokens.cached":   {reason: whyCache},
		"successes.prompt_tokens.uncached": {reason: whyCache},
		// output_len is N (the convention's output count); output_tokens is
		// the server's completion_tokens (the client's count where the
		// server gave none: then it differs from osl_usage).
		"successes.output_len":             {quantity: "osl", scale: 1},
		"successes.output_tokens":          {quantity: "osl_usage", scale: 1},
		"successes.output_tokens.total":    {quantity: "scalar:sum:osl_usage", scale: 1},
		"successes.token_count_mismatches": {reason: whyIPMismatch},
		"successes.request_size_bytes":     {reason: whyIPMedia},
	}
	for _, k := range []string{"goodput_percentage", "request_goodput", "token_goodput", "good_requests", "total_requests",
		"ttft_attainment_percentage", "tpot_attainment_percentage", "itl_attainment_percentage",
		"ntpot_attainment_percentage", "request_latency_attainment_percentage"} {
		m["successes.goodput_metrics."+k] = toolMetric{reason: whyGoodput}
	}
	for _, k := range []string{"images_per_sec", "videos_per_sec", "audios_per_sec",
		"image.count", "image.pixels", "image.bytes", "image.aspect_ratio",
		"video.count", "video.frames", "video.pixels", "video.bytes", "video.aspect_ratio",
		"audio.count", "audio.seconds", "audio.bytes"} {
		name := "successes." + k
		if len(k) > 8 && k[len(k)-8:] == "_per_sec" {
			name = "successes.throughput." + k
		}
		m[name] = toolMetric{reason: whyIPMedia}
	}
	for _, k := range []string{"successes", "successes.prompt_len", "successes.output_len", "successes.queue_len",
		"successes.request_latency", "successes.time_to_first_token", "successes.time_per_output_token",
		"successes.kv_cache_usage_percentage", "successes.num_requests_swapped", "successes.num_preemptions_total",
		"successes.prefix_cache_hit_percent", "successes.inter_token_latency", "successes.num_requests_running",
		"successes.request_queue_time", "successes.request_inference_time", "successes.request_prefill_time",
		"successes.request_decode_time", "successes.request_prompt_tokens", "successes.request_generation_tokens",
		"successes.request_max_num_generation_tokens", "successes.request_params_n", "successes.request_params_max_tokens",
		"successes.request_success_count", "successes.iteration_tokens", "successes.prompt_tokens_cached",
		"successes.external_prefix_cache_hit_percent", "successes.mm_cache_hit_percent", "successes.corrupted_requests",
		"successes.request_prefill_kv_computed_tokens", "successes.kv_block_idle_before_evict",
		"successes.kv_block_lifetime", "successes.kv_block_reuse_gap"} {
		m["prometheus."+k] = toolMetric{reason: whyIPProm}
	}
	m["prometheus.benchmark_time_seconds"] = toolMetric{reason: whyIPBenchProm}
	return m
}

func init() {
	toolMetricMaps["inference-perf"] = inferencePerfMetrics
	reportedThroughputKeys["inference-perf"] = struct {
		outMetric, outStat string
		reqMetric, reqStat string
		reqScale           float64
	}{"successes.throughput.output_tokens_per_sec", "value", "successes.throughput.requests_per_sec", "value", 1}
}
