package vllmbench

import "github.com/tokentrace/tokentrace/convention"

// srcVLLM are the vllm-project/vllm files the profile was read from.
const srcVLLM = "vllm-project/vllm 009e6d4 vllm/benchmarks/serve.py; 02cfb53 vllm/benchmarks/lib/endpoint_request_func.py"

// Profile is vLLM's `vllm bench serve` (benchmark_serving.py) convention.
var Profile = convention.Convention{
	Name: Name, Tool: Name,
	Completed: convention.CompletedOK, Responses: convention.ResponsesChoices, ResponseUnit: convention.UnitMessage, E2EEnd: convention.E2ELastResponse,
	OutputTokens: []convention.CountSource{convention.CountServerUsage, convention.CountToolReported, convention.CountTokenizer}, TPOTFrom: convention.TPOTFromFirstResponse, TPOTDivisor: convention.DivideNMinus1,
	TPOTRounding: convention.RoundNone, ITL: convention.ITLPooledGaps, Percentile: convention.PercentileLinear, StdDDOF: 0,
	Duration: convention.DurationNotRecorded, ThroughputRequests: convention.ThroughputCompleted, Goodput: convention.GoodputPerSecond,
	Sources: map[string]string{
		"completed":           srcVLLM + ": success requires ≥1 choices message",
		"responses":           srcVLLM + ": TTFT at the first message with non-empty choices (role-only chunk counts; issue #15106)",
		"response_unit":       srcVLLM + ": SSE messages",
		"e2e_end":             srcVLLM + ": latency = last choices message − start",
		"latency_from":        srcVLLM + ": from start_time, after the --max-concurrency semaphore; client_queue_time and e2el_including_client_queue (PR #54136) are separate metrics",
		"failed_requests":     srcVLLM + ": successful requests only",
		"output_count":        srcVLLM + ": usage.completion_tokens, else re-tokenized generated_text",
		"tokenize_reasoning":  srcVLLM + ": generated_text is content",
		"special_tokens":      srcVLLM + ": add_special_tokens=False",
		"tpot_from":           srcVLLM + " serve.py: (latency − ttft)",
		"tpot_divisor":        srcVLLM + " serve.py: / (output_len − 1), only output_len > 1",
		"tpot_count":          srcVLLM + ": output_len",
		"tpot_rounding":       srcVLLM + ": none",
		"itl":                 srcVLLM + ": pooled gaps, one per chunk (no splitting; issue #27485)",
		"percentile":          srcVLLM + ": np.percentile default",
		"std":                 srcVLLM + ": np.std (ddof 0)",
		"duration":            srcVLLM + ": perf_counter around the dispatch loop (the file's duration key)",
		"throughput_requests": srcVLLM + ": completed / duration",
		"goodput":             srcVLLM + " PR #9338: request_goodput = good / duration (req/s)",
		"corrections":         "the tool computes from its data as written, its known bugs included: reproducing its numbers needs them uncorrected",
	},
}

// How vLLM's reported metrics, as this package stores them, map to
// tokentrace quantities. Statistic keys "<stat>_<metric>_ms" are stored as
// Metric "<metric>_ms" with the statistic as Stat ("mean", "median",
// "std", "p99", "p99.9"); scalars keep their key with Stat "value".
// Sources: vllm-project/vllm 009e6d4 vllm/benchmarks/serve.py
// calculate_metrics and benchmark().

const (
	whyVLLMDuration  = "vLLM's duration is perf_counter around its dispatch loop (after warm-up and profiler start); the requests' start times bound it from inside only"
	whyPeakTokens    = "peak of 1-s bins of one token per message at start + ttft + Σ itl; tokentrace computes no such statistic"
	whyPeakConc      = "sweep-line peak of [start, start + latency) over successful requests; tokentrace computes no such statistic"
	whyServerMetrics = "read by the client from the server's Prometheus /metrics before and after the run; not in the per-request data"
	whyProbe         = "probe requests (--probe-request-rate) are not in the per-request arrays"
	whyAudio         = "input audio durations are not imported"
	whyPooling       = "embedding (pooling) runs: input sequence counts are not imported"
	whyVLLMCount     = "vLLM sums output_lens (usage.completion_tokens, else its re-tokenized count), imported as tool_reported; this convention's output-count sources do not include tool_reported"
)

func metrics(c convention.Convention) map[string]convention.ReportedMetric {
	m := map[string]convention.ReportedMetric{
		"ttft_ms":                                   convention.Map("ttft", 1),
		"tpot_ms":                                   convention.Map("tpot", 1),
		"itl_ms":                                    convention.Map("itl", 1),
		"e2el_ms":                                   convention.Map("e2e", 1),
		"client_queue_time_ms":                      convention.Map("dispatch_delay", 1),
		"e2el_including_client_queue_ms":            convention.Map("sched_e2e", 1),
		"completed":                                 convention.Map("scalar:counted", 1),
		"failed":                                    convention.Map("scalar:failed", 1),
		"total_input_tokens":                        convention.Map("scalar:sum:isl", 1),
		"total_output_tokens":                       convention.Map("scalar:sum:osl", 1),
		"request_throughput":                        convention.Map("scalar:reported_duration:counted", 1),
		"input_throughput":                          convention.Map("scalar:reported_duration:sum:isl", 1),
		"output_throughput":                         convention.Map("scalar:reported_duration:sum:osl", 1),
		"total_token_throughput":                    convention.Map("scalar:reported_duration:sum:osl+isl", 1),
		"duration":                                  convention.Unmapped(whyVLLMDuration),
		"request_goodput":                           convention.Unmapped(convention.ReasonGoodput),
		"max_output_tokens_per_s":                   convention.Unmapped(whyPeakTokens),
		"max_concurrent_requests":                   convention.Unmapped(whyPeakConc),
		"rtfx":                                      convention.Unmapped(whyAudio),
		"total_input_sequences":                     convention.Unmapped(whyPooling),
		"input_sequence_throughput":                 convention.Unmapped(whyPooling),
		"probe_completed":                           convention.Unmapped(whyProbe),
		"probe_failed":                              convention.Unmapped(whyProbe),
		"probe_median_e2el_ms":                      convention.Unmapped(whyProbe),
		"probe_p99_e2el_ms":                         convention.Unmapped(whyProbe),
		"probe_max_e2el_ms":                         convention.Unmapped(whyProbe),
		"spec_decode_acceptance_rate":               convention.Unmapped(whyServerMetrics),
		"spec_decode_acceptance_length":             convention.Unmapped(whyServerMetrics),
		"spec_decode_num_drafts":                    convention.Unmapped(whyServerMetrics),
		"spec_decode_draft_tokens":                  convention.Unmapped(whyServerMetrics),
		"spec_decode_accepted_tokens":               convention.Unmapped(whyServerMetrics),
		"diffusion_committed_throughput":            convention.Unmapped(whyServerMetrics),
		"diffusion_steps_per_canvas":                convention.Unmapped(whyServerMetrics),
		"diffusion_committed_per_step":              convention.Unmapped(whyServerMetrics),
		"diffusion_committed_tokens":                convention.Unmapped(whyServerMetrics),
		"diffusion_denoising_steps":                 convention.Unmapped(whyServerMetrics),
		"diffusion_canvas_positions":                convention.Unmapped(whyServerMetrics),
		"spec_decode_per_position_acceptance_rates": convention.Unmapped(whyServerMetrics),
	}
	// vLLM's N is output_lens, which ingest/vllmbench stores as
	// tool_reported; a convention that cannot read it has no N, and
	// everything built on N would come out as 0 or missing.
	if !c.CountsFrom(convention.CountToolReported) {
		for _, k := range []string{"tpot_ms", "total_output_tokens", "output_throughput", "total_token_throughput"} {
			m[k] = convention.Unmapped(whyVLLMCount)
		}
	}
	return m
}

// Tool is what tokentrace knows of vLLM bench serve's numbers.
var Tool = convention.Tool{
	Name:       Name,
	Profiles:   []convention.Convention{Profile},
	Metrics:    metrics,
	Throughput: &convention.ReportedThroughput{OutputMetric: "output_throughput", OutputStat: "value", RequestMetric: "request_throughput", RequestStat: "value", RequestScale: 1},
	Traps:      traps,
	Headline: []string{
		"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "client_queue_time_ms", "e2el_including_client_queue_ms", "completed", "failed", "duration",
		"request_throughput", "output_throughput", "total_throughput", "request_goodput",
	},
}
