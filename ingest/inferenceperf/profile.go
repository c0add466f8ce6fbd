package inferenceperf

import "github.com/tokentrace/tokentrace/convention"

// srcInfPerf is the kubernetes-sigs/inference-perf file the profiles were
// read from.
const srcInfPerf = "kubernetes-sigs/inference-perf inference_perf/reportgen/base.py (summarize_requests)"

// Profile is kubernetes-sigs/inference-perf at v0.5+.
var Profile = convention.Convention{
	Name: ConventionToken, Tool: Name,
	Completed: convention.CompletedNoError, Responses: convention.ResponsesContent, ResponseUnit: convention.UnitMessage, E2EEnd: convention.E2EStreamEnd,
	OutputTokens: []convention.CountSource{convention.CountToolRaw, convention.CountTokenizer, convention.CountServerUsage}, TPOTFrom: convention.TPOTFromFirstResponse, TPOTDivisor: convention.DivideNMinus1,
	TPOTRounding: convention.RoundNone, ITL: convention.ITLTokenZeroGaps, Percentile: convention.PercentileLinear, StdDDOF: 0,
	Duration: convention.DurationAllSpan, ThroughputRequests: convention.ThroughputCompleted, Goodput: convention.GoodputFractionAndRate,
	Sources: map[string]string{
		"completed":           srcInfPerf + ": successful requests, empty replies included (corpus: output_len min 0)",
		"responses":           srcInfPerf + ": output_token_times from delta.content chunks only",
		"response_unit":       srcInfPerf + " v0.3+: one time per SSE message (≤v0.2: every line)",
		"e2e_end":             srcInfPerf + ": end_time − start_time",
		"latency_from":        srcInfPerf + ": from start_time; load_summary.schedule_delay (start_time − scheduled_time) is a separate statistic",
		"failed_requests":     srcInfPerf + ": successes only; failures summarized apart",
		"output_count":        srcInfPerf + " v0.5: the tool's count of the whole reply (re-tokenized, or server completion_tokens with use_server_output_tokens)",
		"tokenize_reasoning":  srcInfPerf + ": response text",
		"special_tokens":      srcInfPerf + " PR #566: add_special_tokens=False",
		"tpot_from":           srcInfPerf + ": (t_last − t_first)",
		"tpot_divisor":        srcInfPerf + ": / (N_eff − 1)",
		"tpot_count":          srcInfPerf + ": N_eff",
		"tpot_rounding":       srcInfPerf + ": none",
		"itl":                 srcInfPerf + ": every token gets its chunk's time: pooled gaps incl. zeros",
		"percentile":          srcInfPerf + ": np.percentile default",
		"std":                 srcInfPerf + ": np.std",
		"duration":            srcInfPerf + ": max(end) − min(start) over all requests of the stage",
		"throughput_requests": srcInfPerf + ": successes / total_time",
		"goodput":             srcInfPerf + " docs/goodput.md: good / T and 100·good / successful",
		"corrections":         "the tool computes from its data as written, its known bugs included: reproducing its numbers needs them uncorrected",
	},
}

// Profile02 is inference-perf up to v0.4 (v0.2: a time per SSE line,
// blank lines and [DONE] included; v0.3–0.4: per SSE message, usage and
// role messages included): TPOT divides by the number of recorded times,
// ITL pools those times' gaps. Registered as @0.2 and @0.4.
var Profile02 = func() convention.Convention {
	c := convention.WithName(Profile, ConventionLine, map[string]string{
		"tpot_count": srcInfPerf + " ≤v0.4: (t_last − t_first)/(len(times) − 1), one time per SSE line (≤v0.2, issue #392) or message (v0.3–0.4, PR #452)",
		"itl":        srcInfPerf + " ≤v0.4: pooled gaps between recorded times (≈ half the decode time per token on ≤v0.2 files)",
	})
	c.TPOTCount = []convention.CountSource{convention.CountResponses}
	c.ITL = convention.ITLPooledGaps
	return c
}()

// Profile05 is inference-perf v0.5 (re-tokenized per-token times).
var Profile05 = convention.WithName(Profile, ConventionToken5, map[string]string{
	"itl": srcInfPerf + " v0.5 PR #410: re-tokenized tokens, each at its chunk's time (zero gaps inside chunks)",
})

// inference-perf's reported metrics: the importer names each statistic by
// its key path in the lifecycle report (reportgen/base.py
// summarize_requests), e.g. "successes.latency.time_to_first_token" /
// "p99", "successes" / "count", "successes.throughput.output_tokens_per_sec"
// / "value", and the model server's Prometheus statistics with the prefix
// "prometheus.". Latencies are in seconds: tokentrace's ms are scaled by
// 1e-3.

const (
	whyIPNTPOT         = "normalized_time_per_output_token is E2E/N per request (0 when N = 0); tokentrace has no E2E/N quantity"
	whyIPSend          = "send_duration (last start − first start) has no tokentrace scalar"
	whyIPAchieved      = "achieved_rate is requests / send_duration, which has no tokentrace scalar"
	whyIPConfig        = "a configured load setting, not a measurement (compare with the run's request_rate_rps / concurrency)"
	whyIPInput         = "input_tokens_per_sec (Σ ISL of successes / total_time) has no tokentrace scalar"
	whyIPMedia         = "inference-perf's request-size and image/video/audio statistics are not imported"
	whyIPMismatch      = "token_count_mismatches compares the per-chunk re-tokenized sum with the server's completion_tokens; tokentrace has no such count"
	whyIPFailedLat     = "tokentrace has no latency quantity over failed requests"
	whyIPLabels        = "failure labels are inference-perf's classification of error messages (make_concise_label)"
	whyIPProm          = "a server-side number from the model server's Prometheus metrics (PromQL over the stage's window), not a client measurement: nothing in the client's requests recomputes it"
	whyIPUsageFallback = "inference-perf's output_tokens section takes the client's count where the server sent no completion_tokens; tokentrace's server-usage count has no value for those records"
	whyIPBenchProm     = "inference-perf writes benchmark_time_seconds 0.0 in every Prometheus report (summarize_prometheus_metrics)"
)

// metrics maps inference-perf's reported metrics. The same
// mapping serves every version: the reported statistics keep their names
// while the per-request times behind them changed (see ingest/inferenceperf
// and the run's convention note).
func metrics(convention.Convention) map[string]convention.ReportedMetric {
	m := map[string]convention.ReportedMetric{
		"load_summary":                  convention.Map("scalar:total", 1),
		"load_summary.schedule_delay":   convention.Map("dispatch_delay", 1e-3),
		"load_summary.send_duration":    convention.Unmapped(whyIPSend),
		"load_summary.requested_rate":   convention.Unmapped(whyIPConfig),
		"load_summary.achieved_rate":    convention.Unmapped(whyIPAchieved),
		"load_summary.concurrency":      convention.Unmapped(whyIPConfig),
		"benchmark_time_seconds":        convention.Map("scalar:duration_s", 1),
		"successes":                     convention.Map("scalar:counted", 1),
		"failures":                      convention.Map("scalar:failed", 1),
		"failures.request_latency":      convention.Unmapped(whyIPFailedLat),
		"failures.by_label":             convention.Unmapped(whyIPLabels),
		"failures.prompt_len":           convention.Map("error_isl", 1),
		"failures.prompt_tokens":        convention.Map("error_isl", 1),
		"failures.prompt_tokens.total":  convention.Map("scalar:sum:error_isl", 1),
		"failures.prompt_tokens.cached": convention.Unmapped(convention.ReasonCache), "failures.prompt_tokens.uncached": convention.Unmapped(convention.ReasonCache),

		"successes.latency.request_latency":                  convention.Map("e2e", 1e-3),
		"successes.latency.time_to_first_token":              convention.Map("ttft", 1e-3),
		"successes.latency.time_per_output_token":            convention.Map("tpot", 1e-3),
		"successes.latency.inter_token_latency":              convention.Map("itl", 1e-3),
		"successes.latency.normalized_time_per_output_token": convention.Unmapped(whyIPNTPOT),

		"successes.throughput.requests_per_sec":      convention.Map("scalar:request_throughput", 1),
		"successes.throughput.output_tokens_per_sec": convention.Map("scalar:output_token_throughput", 1),
		"successes.throughput.total_tokens_per_sec":  convention.Map("scalar:total_token_throughput", 1),
		"successes.throughput.input_tokens_per_sec":  convention.Unmapped(whyIPInput),

		// ≤ v0.5: the client's prompt count; v0.6+: prompt_tokens, the
		// server's usage.prompt_tokens where reported, else the client's
		// count (= Request.input_tokens as imported).
		"successes.prompt_len":             convention.Map("isl_reported", 1),
		"successes.prompt_tokens":          convention.Map("isl", 1),
		"successes.prompt_tokens.total":    convention.Map("scalar:sum:isl", 1),
		"successes.prompt_tokens.cached":   convention.Unmapped(convention.ReasonCache),
		"successes.prompt_tokens.uncached": convention.Unmapped(convention.ReasonCache),
		// output_len is N (the convention's output count); output_tokens is
		// the server's completion_tokens (the client's count where the
		// server gave none: then it differs from osl_usage).
		"successes.output_len":             convention.Map("osl", 1),
		"successes.output_tokens":          convention.Map("osl_usage", 1),
		"successes.output_tokens.total":    convention.Map("scalar:sum:osl_usage", 1),
		"successes.token_count_mismatches": convention.Unmapped(whyIPMismatch),
		"successes.request_size_bytes":     convention.Unmapped(whyIPMedia),
	}
	for _, k := range []string{"goodput_percentage", "request_goodput", "token_goodput", "good_requests", "total_requests",
		"ttft_attainment_percentage", "tpot_attainment_percentage", "itl_attainment_percentage",
		"ntpot_attainment_percentage", "request_latency_attainment_percentage"} {
		m["successes.goodput_metrics."+k] = convention.Unmapped(convention.ReasonGoodput)
	}
	for _, k := range []string{"images_per_sec", "videos_per_sec", "audios_per_sec",
		"image.count", "image.pixels", "image.bytes", "image.aspect_ratio",
		"video.count", "video.frames", "video.pixels", "video.bytes", "video.aspect_ratio",
		"audio.count", "audio.seconds", "audio.bytes"} {
		name := "successes." + k
		if len(k) > 8 && k[len(k)-8:] == "_per_sec" {
			name = "successes.throughput." + k
		}
		m[name] = convention.Unmapped(whyIPMedia)
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
		m["prometheus."+k] = convention.Unmapped(whyIPProm)
	}
	m["prometheus.benchmark_time_seconds"] = convention.Unmapped(whyIPBenchProm)
	return m
}

// Tool is what tokentrace knows of inference-perf's numbers: one profile
// per change of its per-request times (timing in convention.go), the
// message-timed v0.3–v0.4 sharing v0.2's.
var Tool = convention.Tool{
	Name:     Name,
	Profiles: []convention.Convention{Profile, Profile02, Profile05},
	Aliases:  map[string]string{ConventionMessage: ConventionLine},
	Metrics:  metrics,
	Traps:    append(traps[:len(traps):len(traps)], promTraps...),
	Differences: []convention.Difference{
		{Metric: "successes.latency.time_to_first_token", Reason: "inference-perf takes TTFT only from requests with two or more token times " +
			"(a one-token reply has none, inference_perf/apis/streaming_parser.py); the profile takes every completed request's first response"},
		{Metric: "successes.output_tokens", RunNote: noteNoUsage, Reason: whyIPUsageFallback},
		{Metric: "successes.output_tokens.total", RunNote: noteNoUsage, Reason: whyIPUsageFallback},
	},
	Throughput: &convention.ReportedThroughput{OutputMetric: "successes.throughput.output_tokens_per_sec", OutputStat: "value", RequestMetric: "successes.throughput.requests_per_sec", RequestStat: "value", RequestScale: 1},
}
