package inferenceperf

import (
	"fmt"
	"strings"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// The data checks of inference-perf's Prometheus reports.
const (
	// TrapZeroVLLMCounters: the report's vLLM counter queries matched no
	// series (names without _total): every counter-derived value is 0.
	TrapZeroVLLMCounters = "inference_perf_zero_vllm_counters"
	// TrapGatedMetricZero: a vLLM metric a server exports only when asked
	// is all 0 in the report: not exported, not measured.
	TrapGatedMetricZero = "inference_perf_gated_metric_zero"
)

// counterStats are the Prometheus report's statistics that come from the
// vLLM counters inference-perf queried by their name without the _total
// suffix (vllm_client.py before PR #455: vllm:request_success,
// vllm:prompt_tokens, vllm:generation_tokens): the successes count and
// rate, prompt_len and output_len, request_success_count.
var counterStats = []string{"successes", "successes.prompt_len", "successes.output_len", "successes.request_success_count"}

// gatedStats are the vLLM metrics a stock server exports only when asked
// (PR #699 documents the gates at their declarations): the kv_block_*
// histograms with --kv-cache-metrics, corrupted_requests with
// VLLM_COMPUTE_NANS_IN_LOGITS=1.
var gatedStats = map[string]string{
	"successes.kv_block_idle_before_evict": "--kv-cache-metrics",
	"successes.kv_block_lifetime":          "--kv-cache-metrics",
	"successes.kv_block_reuse_gap":         "--kv-cache-metrics",
	"successes.corrupted_requests":         "VLLM_COMPUTE_NANS_IN_LOGITS=1",
}

// zeroNoData is the Text of a Prometheus statistic set to null: the 0
// inference-perf wrote for a query that matched no series.
const zeroNoData = "null (0 written for a query that matched no series)"

// promTraps are the catalogue's entries for the Prometheus reports.
var promTraps = []convention.Trap{{
	Code:  TrapZeroVLLMCounters,
	Title: "inference-perf queried vLLM's counters without their _total suffix: every counter-derived server value is 0",
	Tools: "inference-perf up to v0.4.x against vLLM (client/modelserver/vllm_client.py queried vllm:request_success, vllm:prompt_tokens and vllm:generation_tokens, which prometheus_client exports as *_total; PR #455, in v0.5.0, fixed the names); " +
		"its Prometheus client writes 0.0 for a query that matched no series",
	Signature: "a stage's Prometheus report counts no successful request (successes count 0) while the client's lifecycle report of the same stage counts successes: " +
		"the server cannot have served none of them over a window that covers the stage",
	Action: convention.ActionNull,
	Effect: "the counter-derived statistics that are 0 — the successes count and rate, prompt_len and output_len (mean and rate), request_success_count — are null (unknown), never 0; " +
		"the histogram- and gauge-derived ones (latencies, queue length, KV cache usage) are kept; the check names the client's count",
	Metrics: []string{"prometheus.successes", "prometheus.successes.prompt_len", "prometheus.successes.output_len"},
	Source:  "https://github.com/kubernetes-sigs/inference-perf/pull/455, https://github.com/kubernetes-sigs/inference-perf/issues/428",
	Test:    "ingest/inferenceperf TestTrapZeroPrometheusValues",
}, {
	Code:  TrapGatedMetricZero,
	Title: "a vLLM metric the server exports only when asked is all 0 in inference-perf's Prometheus report: it was not exported",
	Tools: "inference-perf with vLLM, every version that queries them: the vllm:kv_block_*_seconds histograms (exported with --kv-cache-metrics) and vllm:corrupted_requests (with VLLM_COMPUTE_NANS_IN_LOGITS=1); " +
		"PR #699 keeps them declared and says a gated-off metric keeps yielding zero-filled report fields",
	Signature: "every statistic of kv_block_idle_before_evict, kv_block_lifetime, kv_block_reuse_gap or corrupted_requests in a Prometheus report is 0",
	Action:    convention.ActionNull,
	Effect: "the metric's statistics are null (unknown), never 0: a KV block lifetime of 0 s or a count of 0 corrupted requests is what a server that did not export the metric gives " +
		"(a corrupted_requests of 0 from a server that exports it cannot be told apart, and is null too); the check names the gate",
	Metrics: []string{"prometheus.successes.kv_block_lifetime", "prometheus.successes.corrupted_requests"},
	Source:  "https://github.com/kubernetes-sigs/inference-perf/pull/699",
	Test:    "ingest/inferenceperf TestTrapZeroPrometheusValues",
}}

// nullPromZeros sets to null the Prometheus statistics of p that are 0
// for a query that matched nothing (TrapZeroVLLMCounters,
// TrapGatedMetricZero) and returns the checks.
func nullPromZeros(p *runPlan) []formats.DataCheck {
	if p.prom == nil {
		return nil
	}
	var out []formats.DataCheck
	under := func(metric, base string) bool {
		m := strings.TrimPrefix(metric, PrometheusPrefix)
		return m == base || strings.HasPrefix(m, base+".")
	}
	null := func(match func(string) bool) (n int) {
		for i := range p.prom.reported {
			r := &p.prom.reported[i]
			if r.Value != nil && *r.Value == 0 && match(r.Metric) {
				delete(p.prom.values, strings.TrimPrefix(r.Metric, PrometheusPrefix)+"\x00"+r.Stat)
				r.Value, r.Text = nil, zeroNoData
				n++
			}
		}
		return n
	}
	if p.life != nil {
		server, ok1 := p.prom.value("successes", "count")
		client, ok2 := p.life.value("successes", "count")
		if ok1 && ok2 && server == 0 && client > 0 {
			n := null(func(m string) bool {
				for _, b := range counterStats {
					if b == "successes" && strings.TrimPrefix(m, PrometheusPrefix) == b || b != "successes" && under(m, b) {
						return true
					}
				}
				return false
			})
			out = append(out, formats.DataCheck{Code: TrapZeroVLLMCounters, Field: "prometheus.successes",
				Detail: fmt.Sprintf("the server's successes count is 0, the client's %g: %d counter-derived statistics set to null", client, n)})
		}
	}
	var gated, field []string
	for _, base := range []string{"successes.corrupted_requests", "successes.kv_block_idle_before_evict", "successes.kv_block_lifetime", "successes.kv_block_reuse_gap"} {
		seen, zero := 0, 0
		for _, r := range p.prom.reported {
			if under(r.Metric, base) && r.Value != nil {
				seen++
				if *r.Value == 0 {
					zero++
				}
			}
		}
		if seen > 0 && zero == seen {
			null(func(m string) bool { return under(m, base) })
			gated = append(gated, fmt.Sprintf("%s (%s)", strings.TrimPrefix(base, "successes."), gatedStats[base]))
			field = append(field, PrometheusPrefix+base)
		}
	}
	if len(gated) > 0 {
		out = append(out, formats.DataCheck{Code: TrapGatedMetricZero, Field: field[0],
			Detail: "all 0, set to null: " + strings.Join(gated, ", ")})
	}
	return out
}
