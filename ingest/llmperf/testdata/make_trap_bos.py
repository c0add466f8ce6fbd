#!/usr/bin/env python3
"""Writes trap-bos/: an LLMPerf run of three successful requests in the
layout of ray-project/llmperf at afd137a (2024-04; token_benchmark_ray.py
get_token_throughput_latencies and metrics_summary, src/llmperf/
common_metrics.py keys), the data-check fixture of llmperf_bos_in_count
(ray-project/llmperf#35).

Each reply generated n tokens; LLMPerf's number_output_tokens is
len(LlamaTokenizerFast.encode(text)) = n + 1 (the BOS). Per row, as
token_benchmark_ray.py computes it at afd137a:
  inter_token_latency_s = (t_last_content - start) / number_output_tokens
  request_output_throughput_token_per_s = number_output_tokens / e2e
The summary is metrics_summary's: pandas quantile (linear), mean, min, max,
std (ddof 1) over the successful rows. Pure Python, no pandas.

Run from this directory: python3 make_trap_bos.py
"""
import json
import math

# (ttft_s, t_last_content_s, e2e_s, generated tokens n, input tokens)
ROWS = [(0.2, 1.1, 1.2, 10, 100), (0.3, 0.84, 0.9, 5, 120), (0.1, 2.1, 2.2, 20, 80)]


def quantile(xs, q):
    s = sorted(xs)
    h = (len(s) - 1) * q
    lo = math.floor(h)
    if lo + 1 >= len(s):
        return float(s[-1])
    return float(s[lo] + (h - lo) * (s[lo + 1] - s[lo]))


def std(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


rows = []
for ttft, last, e2e, n, nin in ROWS:
    ntok = n + 1  # the BOS
    rows.append({
        "error_code": None,
        "error_msg": "",
        "inter_token_latency_s": last / ntok,
        "ttft_s": ttft,
        "end_to_end_latency_s": e2e,
        "request_output_throughput_token_per_s": ntok / e2e,
        "number_total_tokens": ntok + nin,
        "number_output_tokens": ntok,
        "number_input_tokens": nin,
    })

summary = {
    "version": "2023-08-31",
    "name": "trap-bos_100_10_summary",
    "model": "meta-llama/Llama-2-7b-chat-hf",
    "mean_input_tokens": 100,
    "stddev_input_tokens": 20,
    "mean_output_tokens": 12,
    "stddev_output_tokens": 8,
    "num_concurrent_requests": 1,
}
for key in ["inter_token_latency_s", "ttft_s", "end_to_end_latency_s", "request_output_throughput_token_per_s",
            "number_input_tokens", "number_output_tokens"]:
    xs = [r[key] for r in rows]
    for q in [25, 50, 75, 90, 95, 99]:
        summary["results_%s_quantiles_p%d" % (key, q)] = quantile(xs, q / 100)
    summary["results_%s_mean" % key] = sum(xs) / len(xs)
    lo, hi = min(xs), max(xs)
    # LLMPerf writes the integer counts' min and max as strings
    summary["results_%s_min" % key] = str(lo) if isinstance(lo, int) else lo
    summary["results_%s_max" % key] = str(hi) if isinstance(hi, int) else hi
    summary["results_%s_stddev" % key] = std(xs)
summary.update({
    "results_num_requests_started": 3,
    "results_error_rate": 0.0,
    "results_number_errors": 0,
    "results_error_code_frequency": "{}",
    # the loop's wall time (not in the files): 4.5 s for 38 tokens, 3 requests
    "results_mean_output_throughput_token_per_s": 38 / 4.5,
    "results_num_completed_requests": 3,
    "results_num_completed_requests_per_min": 3 / 4.5 * 60,
    "timestamp": 1718000000,  # 2024-06-10: after afd137a, before f1d6bed
})

with open("trap-bos/individual_responses.json", "w") as f:
    json.dump(rows, f, indent=4)
with open("trap-bos/summary.json", "w") as f:
    json.dump(summary, f, indent=4)
