#!/usr/bin/env python3
"""Writes co-stall/: a hand-made `vllm bench serve --save-detailed` result
(vLLM v0.30+ layout: queue_times and the client-queue statistics of PR
#54136) of an open-loop run that fell behind its schedule.

No real run behind it. The client: `--request-rate 8 --burstiness 1
--max-concurrency 5 --num-prompts 600 --percentile-metrics
ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue
--metric-percentiles 50,90,99`, arrivals from a seeded exponential process
(random.Random(7)). The server: every request takes TTFT 80 ms then 23
gaps of 15 ms (24 tokens, latency 425 ms), except that it stalls from 20 s
to 23 s after the first arrival: every response due in the stall arrives
3 s later (less what had passed of it when the request started). The requests
in flight wait out the stall; the ones that arrive meanwhile
wait for the semaphore (queue_times), then send on time as far as vLLM
is concerned.

Statistics by vLLM's calculate_metrics rules (vllm/benchmarks/serve.py):
np.mean, np.median, np.std (population), np.percentile (linear) over
successful requests; TPOT = (latency − ttft)/(output_len − 1); ITL pooled;
client_queue_time over queue_times and e2el_including_client_queue over
latency + queue_time (PR #54136). Rewrite with
`python3 gen_co_stall.py` from this directory."""
import json
import random

N, RATE, CONC = 600, 8.0, 5
TTFT, GAP, TOKENS = 0.080, 0.015, 24
STALL = (20.0, 23.0)
T0 = 5000.0  # perf_counter at the first arrival


def pct(xs, p):
    s = sorted(xs)
    h = (len(s) - 1) * p / 100
    lo = int(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def mean(xs):
    return sum(xs) / len(xs)


def std(xs):
    m = mean(xs)
    return (sum((x - m) ** 2 for x in xs) / len(xs)) ** 0.5


def stall(start, t):
    """t, a response due at t (relative), moved past the stall."""
    a, b = STALL
    if t < a:
        return t
    if start >= b:
        return t
    return t + (b - max(a, start))


rng = random.Random(7)
arrivals, t = [], 0.0
for i in range(N):
    arrivals.append(t)
    t += rng.expovariate(RATE)

free = [0.0] * CONC  # when each slot frees
starts, queues, ttfts, itls, lats = [], [], [], [], []
for a in arrivals:
    k = min(range(CONC), key=lambda j: free[j])
    s = max(a, free[k])
    times = [stall(s, s + TTFT + GAP * j) for j in range(TOKENS)]
    end = times[-1]
    free[k] = end
    r = lambda x: round(x, 6)  # microseconds, to keep the file small
    starts.append(r(s))
    queues.append(r(s - a))
    ttfts.append(r(times[0] - s))
    itls.append([r(times[j] - times[j - 1]) for j in range(1, TOKENS)])
    lats.append(r(end - s))

ms = lambda xs: [x * 1000 for x in xs]
tpots = [(l - f) / (TOKENS - 1) for l, f in zip(lats, ttfts)]
pooled = [g for gs in itls for g in gs]
incl = [l + q for l, q in zip(lats, queues)]
duration = max(s + l for s, l in zip(starts, lats))

out = {
    "date": "20261201-093000", "endpoint_type": "openai-chat", "backend": "openai-chat", "label": None,
    "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
    "num_prompts": N, "request_rate": RATE, "burstiness": 1.0, "max_concurrency": CONC,
    "duration": duration, "completed": N, "failed": 0,
    "total_input_tokens": 256 * N, "total_output_tokens": TOKENS * N,
    "request_throughput": N / duration, "request_goodput": None,
    "output_throughput": TOKENS * N / duration, "total_token_throughput": (256 + TOKENS) * N / duration,
    "input_lens": [256] * N, "output_lens": [TOKENS] * N, "ttfts": ttfts, "itls": itls,
    "latencies": lats, "start_times": [round(T0 + s, 6) for s in starts], "queue_times": queues,
    "generated_texts": ["ok " * TOKENS] * N, "errors": [""] * N,
    "max_output_tokens_per_s": 0.0, "max_concurrent_requests": CONC, "rtfx": 0.0,
}
for name, xs in [("ttft", ms(ttfts)), ("tpot", ms(tpots)), ("itl", ms(pooled)), ("e2el", ms(lats)),
                 ("client_queue_time", ms(queues)), ("e2el_including_client_queue", ms(incl))]:
    out[f"mean_{name}_ms"] = mean(xs)
    out[f"median_{name}_ms"] = pct(xs, 50)
    out[f"std_{name}_ms"] = std(xs)
    for p in (50, 90, 99):
        out[f"p{p}_{name}_ms"] = pct(xs, p)

with open("co-stall/openai-chat-8.0qps-concurrency5-Llama-3.1-8B-Instruct-20261201-093000.json", "w") as f:
    json.dump(out, f)
print("E2EL p99 %.1f ms, incl. client queue p99 %.1f ms, queue p99 %.1f ms, late>42.5ms: %d" % (
    pct(ms(lats), 99), pct(ms(incl), 99), pct(ms(queues), 99), sum(q > 0.0425 for q in queues)))
