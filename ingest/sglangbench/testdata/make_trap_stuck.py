#!/usr/bin/env python3
"""Writes trap-stuck/: one SGLang bench_serving run (--output-details) in
the layout of sgl-project/sglang 0033168 python/sglang/bench_serving.py
(the result dict of benchmark() | result_details, json.dumps + "\\n"),
the data-check fixture of sglang_output_len_stuck (sglang issues #24254,
#10746).

Backend sglang-oai (async_request_openai_completions) with
--disable-ignore-eos, random dataset, --random-output-len 16,
--random-range-ratio 1.0: every request asks for 16 tokens. Three replies
stop early at EOS (5, 8 and 3 tokens), one reaches 16; each content chunk
carries one token. The client updates output_len from usage only inside
`if data["choices"][0]["text"]:`, and the usage chunk has no text, so every
output_len stays 16 (the bug). calculate_metrics as at 0033168: TPOT =
(latency - ttft)/(output_len - 1), ITL pooled, numpy's mean, median,
std (population) and linear percentile, throughputs over the duration.
latency (the last stream line, [DONE] included) is not saved per request;
it is taken as the last chunk's time + 1 ms. total_output_tokens_retokenized
is what SGLang's tokenizer would give for the generated text (one token a
word here: 5 + 8 + 3 + 16).

Run from this directory: python3 make_trap_stuck.py
"""
import json
import math

REQUESTED = 16
# (ttft s, itls s, generated words)
REQS = [(0.05, [0.01] * 4, 5), (0.06, [0.02] * 7, 8), (0.04, [0.01, 0.03], 3), (0.05, [0.01] * 15, 16)]
DURATION = 0.5


def pct(xs, p):
    s = sorted(xs)
    h = (len(s) - 1) * p / 100
    lo = math.floor(h)
    if lo + 1 >= len(s):
        return s[-1]
    return s[lo] + (h - lo) * (s[lo + 1] - s[lo])


def mean(xs):
    return sum(xs) / len(xs)


def std(xs):
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


ttfts = [r[0] for r in REQS]
itls = [r[1] for r in REQS]
latency = [t + sum(g) + 0.001 for t, g, _ in REQS]
texts = [" ".join("w%d" % j for j in range(n)) for _, _, n in REQS]
output_lens = [REQUESTED] * len(REQS)
tpots = [(l - t) / (n - 1) for l, t, n in zip(latency, ttfts, output_lens)]
pooled = [g for gs in itls for g in gs]
total_in = 32 * len(REQS)
total_out = sum(output_lens)
result = {
    "backend": "sglang-oai",
    "dataset_name": "random",
    "request_rate": float("inf"),
    "max_concurrency": 4,
    "sharegpt_output_len": None,
    "random_input_len": 32,
    "random_output_len": REQUESTED,
    "random_range_ratio": 1.0,
    "duration": DURATION,
    "completed": len(REQS),
    "total_input_tokens": total_in,
    "total_output_tokens": total_out,
    "total_output_tokens_retokenized": sum(n for _, _, n in REQS),
    "request_throughput": len(REQS) / DURATION,
    "input_throughput": total_in / DURATION,
    "output_throughput": total_out / DURATION,
    "mean_e2e_latency_ms": mean(latency) * 1000,
    "median_e2e_latency_ms": pct(latency, 50) * 1000,
    "std_e2e_latency_ms": std(latency) * 1000,
    "p99_e2e_latency_ms": pct(latency, 99) * 1000,
    "mean_ttft_ms": mean(ttfts) * 1000,
    "median_ttft_ms": pct(ttfts, 50) * 1000,
    "std_ttft_ms": std(ttfts) * 1000,
    "p99_ttft_ms": pct(ttfts, 99) * 1000,
    "mean_tpot_ms": mean(tpots) * 1000,
    "median_tpot_ms": pct(tpots, 50) * 1000,
    "std_tpot_ms": std(tpots) * 1000,
    "p99_tpot_ms": pct(tpots, 99) * 1000,
    "mean_itl_ms": mean(pooled) * 1000,
    "median_itl_ms": pct(pooled, 50) * 1000,
    "std_itl_ms": std(pooled) * 1000,
    "p95_itl_ms": pct(pooled, 95) * 1000,
    "p99_itl_ms": pct(pooled, 99) * 1000,
    "concurrency": sum(latency) / DURATION,
    "accept_length": None,
}
details = {
    "input_lens": [32] * len(REQS),
    "output_lens": output_lens,
    "ttfts": ttfts,
    "itls": itls,
    "generated_texts": texts,
    "errors": [""] * len(REQS),
}
with open("trap-stuck/sglang-oai_0502_4_32_16.jsonl", "w") as f:
    f.write(json.dumps(result | details) + "\n")
