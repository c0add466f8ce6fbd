package analyze

import (
	"math"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// vLLM `vllm bench serve` (benchmark_serving.py): how its reported metrics,
// as ingest/vllmbench stores them, map to tokentrace quantities. Statistic
// keys "<stat>_<metric>_ms" are stored as Metric "<metric>_ms" with the
// statistic as Stat ("mean", "median", "std", "p99", "p99.9"); scalars keep
// their key with Stat "value". Sources: vllm-project/vllm 009e6d4
// vllm/benchmarks/serve.py calculate_metrics and benchmark(); research note
// llmperf-vllm-sglang.md 2.2.

const (
	whyVLLMDuration  = "vLLM's duration is perf_counter around its dispatch loop (after warm-up and profiler start); the requests' start times bound it from inside only"
	whyQueue         = "queue_times (the client's wait for the --max-concurrency semaphore) are not imported per request"
	whyPeakTokens    = "peak of 1-s bins of one token per message at start + ttft + Σ itl; tokentrace computes no such statistic"
	whyPeakConc      = "sweep-line peak of [start, start + latency) over successful requests; tokentrace computes no such statistic"
	whyServerMetrics = "read by the client from the server's Prometheus /metrics before and after the run; not in the per-request data"
	whyProbe         = "probe requests (--probe-request-rate) are not in the per-request arrays"
	whyAudio         = "input audio durations are not imported"
	whyPooling       = "embedding (pooling) runs: input sequence counts are not imported"
	whyVLLMCount     = "vLLM sums output_lens (usage.completion_tokens, else its re-tokenized count), imported as tool_reported; this convention's output-count sources do not include tool_reported"
)

// reportedDurationScalar computes the run-level values a tool derives from
// its own measured duration: the tool's numerator recomputed from the
// tables, divided by the duration the tool reported (Reported metric
// "duration", Stat "value", in seconds; vLLM and SGLang). name is the
// scalar's name after "scalar:":
//
//	reported_duration:counted        requests in the convention's completed set / duration
//	reported_duration:sum:<q>        Σ q over counted requests / duration
//	reported_duration:sum:osl+isl    (Σ osl + Σ isl) / duration
//
// ok is false for other names. It needs the run row, which scalar() does
// not receive, so recompute (reproduce.go) must try it before scalar();
// until it does, these scalars are reported as not reproducible with
// "unknown scalar reported_duration:…".
func reportedDurationScalar(name string, run *formats.Run, s *samples) (v float64, why string, ok bool) {
	rest, ok := strings.CutPrefix(name, "reported_duration:")
	if !ok {
		return 0, "", false
	}
	dur := math.NaN()
	if run != nil {
		for _, st := range run.Reported {
			if st.Metric == "duration" && st.Stat == "value" && st.Value != nil {
				dur = *st.Value
			}
		}
	}
	if math.IsNaN(dur) || dur <= 0 {
		return math.NaN(), "the tool reported no positive duration", true
	}
	switch rest {
	case "counted":
		return float64(s.counted) / dur, "", true
	case "sum:osl+isl":
		return (sumOr0(s.values["osl"]) + sumOr0(s.values["isl"])) / dur, "", true
	}
	if q, ok := strings.CutPrefix(rest, "sum:"); ok {
		return sumOr0(s.values[q]) / dur, "", true
	}
	return math.NaN(), "unknown scalar " + name, true
}

// hasCountSource reports whether the convention takes N from src.
func hasCountSource(c Convention, src CountSource) bool {
	for _, x := range c.OutputTokens {
		if x == src {
			return true
		}
	}
	return false
}

func vllmMetrics(c Convention) map[string]toolMetric {
	m := map[string]toolMetric{
		"ttft_ms":                                   {quantity: "ttft", scale: 1},
		"tpot_ms":                                   {quantity: "tpot", scale: 1},
		"itl_ms":                                    {quantity: "itl", scale: 1},
		"e2el_ms":                                   {quantity: "e2e", scale: 1},
		"client_queue_time_ms":                      {reason: whyQueue},
		"e2el_including_client_queue_ms":            {reason: whyQueue},
		"completed":                                 {quantity: "scalar:counted", scale: 1},
		"failed":                                    {quantity: "scalar:failed", scale: 1},
		"total_input_tokens":                        {quantity: "scalar:sum:isl", scale: 1},
		"total_output_tokens":                       {quantity: "scalar:sum:osl", scale: 1},
		"request_throughput":                        {quantity: "scalar:reported_duration:counted", scale: 1},
		"input_throughput":                          {quantity: "scalar:reported_duration:sum:isl", scale: 1},
		"output_throughput":                         {quantity: "scalar:reported_duration:sum:osl", scale: 1},
		"total_token_throughput":                    {quantity: "scalar:reported_duration:sum:osl+isl", scale: 1},
		"duration":                                  {reason: whyVLLMDuration},
		"request_goodput":                           {reason: whyGoodput},
		"max_output_tokens_per_s":                   {reason: whyPeakTokens},
		"max_concurrent_requests":                   {reason: whyPeakConc},
		"rtfx":                                      {reason: whyAudio},
		"total_input_sequences":                     {reason: whyPooling},
		"input_sequence_throughput":                 {reason: whyPooling},
		"probe_completed":                           {reason: whyProbe},
		"probe_failed":                              {reason: whyProbe},
		"probe_median_e2el_ms":                      {reason: whyProbe},
		"probe_p99_e2el_ms":                         {reason: whyProbe},
		"probe_max_e2el_ms":                         {reason: whyProbe},
		"spec_decode_acceptance_rate":               {reason: whyServerMetrics},
		"spec_decode_acceptance_length":             {reason: whyServerMetrics},
		"spec_decode_num_drafts":                    {reason: whyServerMetrics},
		"spec_decode_draft_tokens":                  {reason: whyServerMetrics},
		"spec_decode_accepted_tokens":               {reason: whyServerMetrics},
		"diffusion_committed_throughput":            {reason: whyServerMetrics},
		"diffusion_steps_per_canvas":                {reason: whyServerMetrics},
		"diffusion_committed_per_step":              {reason: whyServerMetrics},
		"diffusion_committed_tokens":                {reason: whyServerMetrics},
		"diffusion_denoising_steps":                 {reason: whyServerMetrics},
		"diffusion_canvas_positions":                {reason: whyServerMetrics},
		"spec_decode_per_position_acceptance_rates": {reason: whyServerMetrics},
	}
	// vLLM's N is output_lens, which ingest/vllmbench stores as
	// tool_reported; a convention that cannot read it has no N, and
	// everything built on N would come out as 0 or missing.
	if !hasCountSource(c, CountToolReported) {
		for _, k := range []string{"tpot_ms", "total_output_tokens", "output_throughput", "total_token_throughput"} {
			m[k] = toolMetric{reason: whyVLLMCount}
		}
	}
	return m
}

func init() {
	toolMetricMaps["vllm"] = vllmMetrics
}
