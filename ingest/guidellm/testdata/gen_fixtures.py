#!/usr/bin/env python3
"""Writes the hand-made guidellm fixtures of this directory (FIXTURES.md).

The per-request records follow the two documented shapes (guidellm v0.3.0
benchmark/benchmark.py GenerativeTextResponseStats / GenerativeTextErrorStats,
and v0.4.0+ schemas/request_stats.py GenerativeRequestStats with
schemas/info.py RequestTimings). Every summary is computed here from those
records by guidellm's own rules, restated in plain Python (no numpy):

  v0.3 objects/statistics.py DistributionSummary.from_distribution_function:
    pdf = (value, w/Σw) sorted by value (no merging); mean = Σ v·p;
    variance = Σ (v−mean)²·p; percentile p = first value whose cumulative
    probability ≥ p (argmax); count = number of values; total_sum = Σ v.
    Filters (benchmark.py from_stats): TTFT, TPOT, output_token_count over
    requests with output_tokens > 0, ITL over output_tokens > 1; TPOT
    weighted by N, ITL by N − 1.
  v0.4+ schemas/statistics.py DistributionSummary.from_values / from_pdf:
    duplicates merged (weights summed), zero weights dropped; percentile =
    searchsorted(cdf, p, "left"); count = round(Σ all weights);
    total_sum = mean·count. Every request enters (missing values as 0).

Per-request formulas: v0.3 TPOT = 1000·(t_last − t_first)/N, v0.4+ TPOT =
1000·(t_last − t_request)/N, ITL = 1000·(t_last − t_first)/(N − 1) in both.

numpy's sum is pairwise (8 partial sums for 8 ≤ n ≤ 128); np_sum below does
the same so the numbers are the ones guidellm would write. Run from this
directory: python3 gen_fixtures.py
"""

import json
import os
import math

T0 = 1750000000.0


def np_sum(xs):
    xs = list(xs)
    n = len(xs)
    if n < 8:
        s = 0.0
        for x in xs:
            s += x
        return s
    if n <= 128:
        r = xs[:8]
        i = 8
        while i + 8 <= n:
            for j in range(8):
                r[j] += xs[i + j]
            i += 8
        s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            s += xs[i]
            i += 1
        return s
    half = n // 2
    half -= half % 8
    return np_sum(xs[:half]) + np_sum(xs[half:])


def cumsum(ps):
    out, c = [], 0.0
    for p in ps:
        c += p
        out.append(c)
    return out


PCTS = [("p001", 0.001), ("p01", 0.01), ("p05", 0.05), ("p10", 0.1), ("p25", 0.25), ("p50", 0.5),
        ("p75", 0.75), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("p999", 0.999)]


def summary_v03(pairs):
    """v0.3 from_distribution_function over (value, weight) pairs."""
    keys = ["mean", "median", "mode", "variance", "std_dev", "min", "max", "count", "total_sum"]
    if not pairs:
        out = {k: 0.0 for k in keys}
        out["count"] = 0
        out["percentiles"] = {k: 0.0 for k, _ in PCTS}
        out["cumulative_distribution_function"] = None
        return out
    tw = np_sum(w for _, w in pairs)
    pdf = sorted(((v, w / tw) for v, w in pairs), key=lambda t: t[0])
    vals = [v for v, _ in pdf]
    probs = [p for _, p in pdf]
    cdf = cumsum(probs)

    def pct(p):
        for i, c in enumerate(cdf):
            if c >= p:
                return vals[i]
        return vals[0]  # np.argmax of all-False is 0

    mean = np_sum(v * p for v, p in pdf)
    var = np_sum((v - mean) ** 2 * p for v, p in pdf)
    mode = vals[max(range(len(probs)), key=lambda i: (probs[i], -i))]
    return {
        "mean": mean, "median": pct(0.5), "mode": mode, "variance": var, "std_dev": math.sqrt(var),
        "min": vals[0], "max": vals[-1], "count": len(vals), "total_sum": np_sum(vals),
        "percentiles": {k: pct(p) for k, p in PCTS}, "cumulative_distribution_function": None,
    }


def summary_v04(pairs):
    """v0.4+ DistributionSummary.from_values over (value, weight) pairs."""
    zero = {"mean": 0.0, "median": 0.0, "mode": 0.0, "variance": 0.0, "std_dev": 0.0, "min": 0.0, "max": 0.0,
            "count": 0, "total_sum": 0.0, "percentiles": {k: 0.0 for k, _ in PCTS}, "pdf": None}
    if not pairs:
        return zero
    count = round(np_sum(w for _, w in pairs))
    merged = {}
    for v, w in sorted(pairs, key=lambda t: t[0]):
        merged[v] = merged.get(v, 0.0) + w
    vals = [v for v in sorted(merged) if merged[v] > 0]
    ws = [merged[v] for v in vals]
    tw = np_sum(ws)
    if tw <= 1e-6:
        ws = [1.0] * len(vals)
        tw = np_sum(ws)
    if not vals:
        zero["count"] = count
        return zero
    probs = [w / tw for w in ws]
    cdf = cumsum(probs)

    def pct(p):
        for i, c in enumerate(cdf):
            if c >= p:
                return vals[i]
        raise ValueError("searchsorted past the end")

    mean = np_sum(v * p for v, p in zip(vals, probs))
    var = np_sum((v - mean) ** 2 * p for v, p in zip(vals, probs))
    mode = vals[max(range(len(probs)), key=lambda i: (probs[i], -i))]
    pcts = {k: pct(p) for k, p in PCTS}
    return {
        "mean": mean, "median": pcts["p50"], "mode": mode, "variance": var, "std_dev": math.sqrt(var),
        "min": vals[0], "max": vals[-1], "count": count, "total_sum": mean * count,
        "percentiles": pcts, "pdf": None,
    }


def status_summary(fn, by_status, summarize):
    """StatusDistributionSummary: fn(req) -> (value, weight) or None."""
    out = {}
    allpairs = []
    for st in ("successful", "errored", "incomplete"):
        pairs = [p for p in (fn(r) for r in by_status[st]) if p is not None]
        out[st] = pairs
    # total concatenates successful, incomplete, errored (v0.4 _combine_status_arrays;
    # v0.3 from_values keeps the value order of successful + incomplete + error)
    allpairs = out["successful"] + out["incomplete"] + out["errored"]
    return {
        "successful": summarize(out["successful"]),
        "errored": summarize(out["errored"]),
        "incomplete": summarize(out["incomplete"]),
        "total": summarize(allpairs),
    }


# ---------------------------------------------------------------- v0.3 shape

def output_text(rid, n):
    """A reply of n tokens: at least a byte a token, as a real text is (the
    data check guidellm_ttft_after_reasoning counts tokens a text cannot
    hold)."""
    return "hand-made output " + rid + ":" + " word" * (n or 0)


def req_v03(rid, start, ttft, itl, n, prompt, end_gap, kind="ok", error=None, out_tokens=None):
    """A v0.3 record: first token ttft s after start, then n−1 tokens itl s apart."""
    first = None if ttft is None else T0 + start + ttft
    last = None if ttft is None else T0 + start + ttft + (n - 1) * itl
    end = (last if last is not None else T0 + start) + end_gap
    r = {
        "type_": "generative_text_response" if kind == "ok" else "generative_text_error",
        "request_id": rid,
        "request_type": "text_completions",
        "scheduler_info": {
            "requested": True, "completed": kind != "incomplete", "errored": kind == "errored",
            "canceled": kind == "incomplete",
            "targeted_start_time": T0 + start - 0.0005, "queued_time": T0 + start - 0.0004,
            "dequeued_time": T0 + start - 0.0003, "scheduled_time": T0 + start - 0.0002,
            "worker_start": T0 + start - 0.0001, "request_start": T0 + start, "request_end": end,
            "worker_end": end + 0.0001, "process_id": 0,
        },
        "prompt": "hand-made prompt " + rid,
        "output": None if kind == "errored" else output_text(rid, n if out_tokens is None else out_tokens),
        "prompt_tokens": prompt,
        "output_tokens": n if out_tokens is None else out_tokens,
        "start_time": T0 + start,
        "end_time": end,
        "first_token_time": first,
        "last_token_time": last,
    }
    if kind != "ok":
        r["error"] = error
    N = r["output_tokens"]
    s = r["start_time"]
    r["request_latency"] = end - s
    r["time_to_first_token_ms"] = None if first is None else 1000 * (first - s)
    if first is None or last is None:
        r["time_per_output_token_ms"] = None
        r["inter_token_latency_ms"] = None
    else:
        r["time_per_output_token_ms"] = 0.0 if N == 0 else 1000 * (last - first) / N
        r["inter_token_latency_ms"] = 0.0 if N <= 1 else 1000 * (last - first) / (N - 1)
    lat = r["request_latency"]
    r["tokens_per_second"] = 0.0 if lat == 0 else (prompt + N) / lat
    ops = 0.0 if lat == 0 else N / lat
    if kind != "ok" and r["inter_token_latency_ms"] is None:
        ops = None
    r["output_tokens_per_second"] = ops
    if kind != "ok":
        # GenerativeTextErrorStats declares error first after type_; keep keys
        # in pydantic's order: type_, error, then the base fields.
        r = {"type_": r["type_"], "error": r.pop("error"), **{k: v for k, v in r.items() if k != "type_"}}
    return r


def metrics_v03(by_status):
    total = by_status["successful"] + by_status["incomplete"] + by_status["errored"]
    s = summary_v03

    def st(fn):
        return status_summary(fn, by_status, s)

    return {
        "request_latency": st(lambda r: (r["request_latency"], 1.0)),
        "prompt_token_count": st(lambda r: (r["prompt_tokens"], 1.0) if r["prompt"] else None),
        "output_token_count": st(lambda r: (r["output_tokens"], 1.0) if r["output_tokens"] > 0 else None),
        "time_to_first_token_ms": st(lambda r: (r["time_to_first_token_ms"] or 0, 1.0) if r["output_tokens"] > 0 else None),
        "time_per_output_token_ms": st(lambda r: (r["time_per_output_token_ms"] or 0, r["output_tokens"]) if r["output_tokens"] > 0 else None),
        "inter_token_latency_ms": st(lambda r: (r["inter_token_latency_ms"] or 0, r["output_tokens"] - 1) if r["output_tokens"] > 1 else None),
    }, total


def benchmark_v03(idx, strategy, reqs_by_status):
    metrics, total = metrics_v03(reqs_by_status)
    start = min(r["start_time"] for r in total)
    end = max(r["end_time"] for r in total)
    counts = {k: len(v) for k, v in reqs_by_status.items()}
    return {
        "type_": "generative_benchmark",
        "id_": "00000000-0000-4000-8000-00000000000%d" % idx,
        "run_id": "00000000-0000-4000-8000-0000000000aa",
        "args": {
            "profile": {"type_": "sweep", "completed_strategies": 2, "measured_rates": [], "measured_concurrencies": [],
                        "max_concurrency": None, "strategy_type": "constant", "rate": -1.0, "initial_burst": True,
                        "random_seed": 42, "sweep_size": 2, "rate_type": "constant",
                        "strategy_types": ["synchronous", "constant"]},
            "strategy_index": idx,
            "strategy": strategy,
            "max_number": None, "max_duration": 30.0, "max_error": None, "warmup_number": None,
            "warmup_duration": None, "cooldown_number": None, "cooldown_duration": None,
        },
        "run_stats": {
            "start_time": start - 0.1, "end_time": end + 0.1,
            "requests_made": {"successful": counts["successful"], "errored": counts["errored"],
                              "incomplete": counts["incomplete"], "total": sum(counts.values())},
            "queued_time_avg": 0.001, "scheduled_time_delay_avg": 0.0, "scheduled_time_sleep_avg": 0.0,
            "worker_start_delay_avg": 0.0001, "worker_time_avg": 0.5, "worker_start_time_targeted_delay_avg": 0.0005,
            "request_start_time_delay_avg": 0.0001, "request_start_time_targeted_delay_avg": 0.0005,
            "request_time_delay_avg": 0.0001, "request_time_avg": 0.5, "error_rate": 0.0, "window_error_rate": 0.0,
            "status": "success", "termination_reason": "max_seconds_reached",
        },
        "worker": {"type_": "generative_requests_worker", "backend_type": "openai_http",
                   "backend_target": "http://localhost:8000", "backend_model": "example-model",
                   "backend_info": {"max_output_tokens": 16384, "timeout": 300, "http2": True,
                                    "authorization": True, "organization": None, "project": None,
                                    "text_completions_path": "/v1/completions",
                                    "chat_completions_path": "/v1/chat/completions"}},
        "request_loader": {"type_": "generative_request_loader", "data": "prompt_tokens=256,output_tokens=128",
                           "data_args": None, "processor": "example-processor", "processor_args": None},
        "extras": {},
        "metrics": metrics,
        "start_time": start,
        "end_time": end,
        "request_totals": {"successful": counts["successful"], "errored": counts["errored"],
                           "incomplete": counts["incomplete"], "total": sum(counts.values())},
        "request_samples": None,
        "requests": {"successful": reqs_by_status["successful"], "errored": reqs_by_status["errored"],
                     "incomplete": reqs_by_status["incomplete"], "total": None},
        "duration": end - start,
    }


def fixture_v03():
    b1 = {
        "successful": [
            req_v03("s1", 0.000, 0.050, 0.012, 128, 256, 0.002),
            req_v03("s2", 1.600, 0.080, 0.020, 64, 300, 0.001),
            req_v03("s3", 3.000, 0.030, 0.0, 1, 120, 0.001),
            req_v03("s4", 3.100, 0.060, 0.015, 100, 256, 0.005),
            req_v03("s5", 4.700, 0.090, 0.030, 10, 512, 0.001),
        ],
        "incomplete": [
            req_v03("i1", 5.100, 0.070, 0.011, 30, 256, 0.011, kind="incomplete", error=""),
        ],
        "errored": [
            req_v03("e1", 5.510, None, 0.0, 0, 256, 0.020, kind="errored",
                    error="HTTPStatusError: Server error '500 Internal Server Error'", out_tokens=128),
        ],
    }
    b2 = {
        "successful": [
            req_v03("t1", 10.000, 0.045, 0.013, 80, 256, 0.002),
            req_v03("t2", 10.500, 0.060, 0.014, 120, 256, 0.002),
            req_v03("t3", 11.000, 0.070, 0.016, 40, 256, 0.002),
            req_v03("t4", 11.500, 0.040, 0.012, 200, 256, 0.002),
        ],
        "incomplete": [],
        "errored": [],
    }
    return {"benchmarks": [
        benchmark_v03(0, {"type_": "synchronous"}, b1),
        benchmark_v03(1, {"type_": "constant", "rate": 2.0, "initial_burst": True}, b2),
    ]}


# ---------------------------------------------------------------- v0.4 shape

def usage(tokens, text=None):
    return {"text_tokens": tokens, "text_words": None if text is None else len(text.split()),
            "text_characters": None if text is None else len(text), "image_tokens": None, "image_count": None,
            "image_pixels": None, "image_bytes": None, "video_tokens": None, "video_frames": None,
            "video_seconds": None, "video_bytes": None, "audio_tokens": None, "audio_samples": None,
            "audio_seconds": None, "audio_bytes": None, "total_tokens": tokens}


def req_v04(rid, start, ttft, itl, n, prompt, end_gap, status="completed", error=None, iters=None, usage_n=None, text=None):
    """n content tokens, ttft then itl apart; usage_n: the server's count
    when it is not n (a reasoning model's completion_tokens counts the
    reasoning a content-only client never timed); text: the output."""
    s = T0 + 100 + start
    first = None if ttft is None else s + ttft
    last = None if ttft is None else s + ttft + (n - 1) * itl
    end = (last if last is not None else s) + end_gap
    iters = n if iters is None else iters
    out_text = None if status == "errored" else (output_text(rid, n) if text is None else text)
    timings = {
        "targeted_start": s - 0.0005, "queued": s - 0.0004, "dequeued": s - 0.0003, "scheduled_at": s - 0.0002,
        "resolve_start": s - 0.0001, "request_start": s, "first_request_iteration": first,
        "first_token_iteration": first, "last_token_iteration": last, "last_request_iteration": last,
        "request_iterations": 0 if first is None else 2 * iters + 2, "token_iterations": 0 if first is None else iters,
        "request_end": end, "resolve_end": end + 0.0001, "finalized": end + 0.0002,
    }
    # compile_stats clears the request's own counts when the request did not
    # complete, and a cut stream has no usage: output_tokens is None then.
    out_tokens = (n if usage_n is None else usage_n) if status == "completed" else None
    r = {
        "type_": "generative_request_stats",
        "request_id": rid,
        "request_type": "text_completions",
        "request_args": "{'method': 'POST', 'stream': True, 'json_body': {'max_tokens': 256}}",
        "output": out_text,
        "info": {"request_id": rid, "status": status, "scheduler_node_id": 0, "scheduler_process_id": 0,
                 "scheduler_start_time": T0 + 99.9, "timings": timings, "error": error,
                 "started_at": s, "completed_at": end},
        "input_metrics": usage(prompt, "hand-made prompt " + rid),
        "output_metrics": usage(out_tokens, out_text),
    }
    N = out_tokens
    r["request_start_time"] = s
    r["request_end_time"] = end
    r["request_latency"] = end - s
    r["prompt_tokens"] = prompt
    r["input_tokens"] = prompt
    r["output_tokens"] = N
    r["total_tokens"] = prompt + (N or 0)
    r["time_to_first_token_ms"] = None if first is None else 1000 * (first - s)
    lt = last if last is not None else end
    r["time_per_output_token_ms"] = None if not N else 1000 * (lt - s) / N
    r["inter_token_latency_ms"] = None if (first is None or last is None or N is None or N <= 1) else 1000 * (last - first) / (N - 1)
    lat = r["request_latency"]
    r["tokens_per_second"] = None if not lat else r["total_tokens"] / lat
    r["output_tokens_per_second"] = None if (not lat or N is None) else N / lat
    r["iter_tokens_per_iteration"] = None if (N is None or N <= 1 or iters <= 1) else (N - 1.0) / (iters - 1.0)
    r["output_tokens_per_iteration"] = None if (N is None or iters < 1) else N / iters
    return r


def metrics_v04(by):
    s = summary_v04

    def st(fn):
        return status_summary(fn, by, s)

    counts = {k: len(v) for k, v in by.items()}
    return {
        "request_totals": {"successful": counts["successful"], "incomplete": counts["incomplete"],
                           "errored": counts["errored"], "total": sum(counts.values())},
        "request_latency": st(lambda r: (r["request_latency"] or 0.0, 1.0)),
        "request_streaming_iterations_count": st(lambda r: (r["info"]["timings"]["request_iterations"] or 0.0, 1.0)),
        "prompt_token_count": st(lambda r: (r["prompt_tokens"] or 0.0, 1.0)),
        "output_token_count": st(lambda r: (r["output_tokens"] or 0.0, 1.0)),
        "total_token_count": st(lambda r: (r["total_tokens"] or 0.0, 1.0)),
        "time_to_first_token_ms": st(lambda r: (r["time_to_first_token_ms"] or 0.0, 1.0)),
        "time_per_output_token_ms": st(lambda r: (r["time_per_output_token_ms"] or 0.0, r["output_tokens"] or 0.0)),
        "inter_token_latency_ms": st(lambda r: (r["inter_token_latency_ms"] or 0.0, (r["output_tokens"] or 1.0) - 1.0)),
    }


def benchmark_v04(all_by, kept_by, strategy, sample_requests):
    total = all_by["successful"] + all_by["incomplete"] + all_by["errored"]
    start = min(r["request_start_time"] for r in total)
    end = max(r["request_end_time"] for r in total)
    return {
        "type_": "generative_benchmark",
        "config": {
            "id_": "00000000-0000-4000-8000-0000000000b1", "run_id": "00000000-0000-4000-8000-0000000000bb",
            "run_index": 0, "strategy": strategy, "constraints": {"max_seconds": {"max_duration": 30}},
            "sample_requests": sample_requests,
            "warmup": {"percent": None, "value": None, "mode": "prefer_duration"},
            "cooldown": {"percent": None, "value": None, "mode": "prefer_duration"},
            "prefer_response_metrics": True,
            "profile": {"type_": "concurrent", "completed_strategies": [], "streams": [strategy.get("streams", 1)]},
            "requests": {"str": "DataLoader", "type": "DataLoader"},
            "backend": {"target": "http://localhost:8000", "model": "example-model", "timeout": 60.0,
                        "http2": True, "follow_redirects": True, "verify": False,
                        "openai_paths": {"text_completions": "v1/completions"}, "validate_backend": True,
                        "api_key": "sk-handmadefixturekey000"},
            "environment": {"str": "NonDistributedEnvironment"},
        },
        "scheduler_state": {"node_id": 0, "num_processes": 1, "start_time": start - 0.2, "end_time": end + 0.1,
                            "created_requests": len(total), "processed_requests": len(total)},
        "scheduler_metrics": {
            "start_time": start - 0.2, "request_start_time": start - 0.1, "measure_start_time": start - 0.1,
            "measure_end_time": end + 0.05, "request_end_time": end + 0.05, "end_time": end + 0.1,
            "requests_made": {"successful": len(all_by["successful"]), "incomplete": len(all_by["incomplete"]),
                              "errored": len(all_by["errored"]), "total": len(total)},
            "queued_time_avg": 0.0004, "resolve_start_delay_avg": 0.0001, "resolve_targeted_start_delay_avg": 0.0005,
            "request_start_delay_avg": 0.0001, "request_targeted_start_delay_avg": 0.0005, "request_time_avg": 0.8,
            "resolve_end_delay_avg": 0.0001, "resolve_time_avg": 0.8, "finalized_delay_avg": 0.0001,
            "processed_delay_avg": 0.0001,
        },
        "metrics": metrics_v04(all_by),
        "requests": {"successful": kept_by["successful"], "incomplete": kept_by["incomplete"],
                     "errored": kept_by["errored"], "total": None},
        "start_time": start - 0.1,
        "end_time": end + 0.05,
        "duration": (end + 0.05) - (start - 0.1),
        "warmup_duration": 0.0,
        "cooldown_duration": 0.0,
    }


def requests_v04():
    return {
        "successful": [
            req_v04("a1", 0.000, 0.120, 0.020, 64, 256, 0.003),
            req_v04("a2", 0.010, 0.150, 0.018, 128, 256, 0.003, iters=120),
            req_v04("a3", 0.020, 0.200, 0.025, 16, 512, 0.002),
            req_v04("a4", 1.400, 0.090, 0.022, 200, 128, 0.004),
            req_v04("a5", 1.500, 0.110, 0.0, 1, 256, 0.002),
            req_v04("a6", 2.600, 0.130, 0.021, 64, 256, 0.003),
        ],
        "incomplete": [
            req_v04("c1", 4.000, 0.140, 0.020, 20, 256, 0.0, status="cancelled"),
        ],
        "errored": [
            req_v04("x1", 4.100, None, 0.0, 0, 256, 0.015, status="errored",
                    error="HTTPStatusError: Server error '503 Service Unavailable'"),
        ],
    }


def fixture_v04():
    by = requests_v04()
    b = benchmark_v04(by, by, {"type_": "concurrent", "streams": 3}, None)
    return {
        "metadata": {"version": 1, "guidellm_version": "0.5.0", "python_version": "3.12.3",
                     "platform": "Linux-6.8.0-x86_64-with-glibc2.39"},
        "args": {"target": "http://localhost:8000", "data": ["prompt_tokens=256,output_tokens=128"],
                 "profile": "concurrent", "rate": [3.0], "backend": "openai_http", "backend_kwargs": None,
                 "model": "example-model", "processor": "example-processor", "random_seed": 42,
                 "outputs": ["json"], "sample_requests": None, "warmup": None, "cooldown": None,
                 "prefer_response_metrics": True, "max_seconds": 30, "max_requests": None},
        "benchmarks": [b],
    }


def fixture_v04_sampled():
    by = requests_v04()
    kept = {"successful": [by["successful"][i] for i in (4, 1)], "incomplete": by["incomplete"][:1],
            "errored": by["errored"][:1]}
    b = benchmark_v04(by, kept, {"type_": "concurrent", "streams": 3}, 2)
    return {
        "args": {"target": "http://localhost:8000", "data": ["prompt_tokens=256,output_tokens=128"],
                 "profile": "concurrent", "rate": [3.0], "backend": "openai_http", "model": "example-model",
                 "processor": "example-processor", "sample_requests": 2},
        "benchmarks": [b],
    }


def fixture_trap_reasoning():
    """guidellm 0.6.1 (content-only TTFT, issue #737) against a reasoning
    model: the server's completion_tokens count the reasoning, the client
    saw and timed the content only."""
    by = {
        "successful": [
            # 590 reasoning tokens unseen, then 10 content tokens
            req_v04("r1", 0.000, 8.000, 0.020, 10, 128, 0.003, usage_n=600, text="The answer is 42."),
            req_v04("r2", 0.010, 4.000, 0.025, 2, 128, 0.003, usage_n=300, text="Yes."),
            # a long answer after a short thought: the count does not exceed
            # the text's bytes, nothing to see
            req_v04("r3", 0.020, 0.500, 0.020, 40, 128, 0.003, usage_n=45,
                    text="Paris is the capital of France, and it has been for a very long time; "
                         "the city sits on the Seine and is known for its museums."),
        ],
        "incomplete": [],
        "errored": [],
    }
    b = benchmark_v04(by, by, {"type_": "concurrent", "streams": 3}, None)
    return {
        "metadata": {"version": 1, "guidellm_version": "0.6.1", "python_version": "3.12.3",
                     "platform": "Linux-6.8.0-x86_64-with-glibc2.39"},
        "args": {"target": "http://localhost:8000", "data": ["prompt_tokens=128,output_tokens=1024"],
                 "profile": "concurrent", "rate": [3.0], "backend": "openai_http", "backend_kwargs": None,
                 "model": "example-reasoning-model", "processor": "example-processor", "random_seed": 42,
                 "outputs": ["json"], "sample_requests": None, "warmup": None, "cooldown": None,
                 "prefer_response_metrics": True, "max_seconds": 30, "max_requests": None},
        "benchmarks": [b],
    }


def fixture_v07_schedule():
    """guidellm after v0.7.3 (PR #1053, merged 2026-08-26), constant 2 req/s:
    each request's targeted_start is its slot on the schedule (every 0.5 s),
    and the benchmark's metrics carry request_dispatch_delay = request_start
    − targeted_start and request_scheduled_latency = request_end −
    targeted_start (seconds, as request_latency; unweighted summaries by the
    v0.4+ rules). The client falls behind from the fourth request on."""
    slots = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    late = [0.0005, 0.0005, 0.0005, 0.400, 0.700, 0.300]
    ok = []
    for i, (slot, d) in enumerate(zip(slots, late)):
        r = req_v04("s%d" % (i + 1), slot + d, 0.100, 0.020, 32, 256, 0.003)
        r["info"]["timings"]["targeted_start"] = T0 + 100 + slot
        ok.append(r)
    by = {"successful": ok, "incomplete": [], "errored": []}
    b = benchmark_v04(by, by, {"type_": "constant", "rate": 2.0}, None)
    b["config"]["profile"] = {"type_": "constant", "completed_strategies": [], "rate": [2.0]}

    def delay(r):
        t = r["info"]["timings"]
        return (t["request_start"] - t["targeted_start"], 1.0)

    def sched(r):
        t = r["info"]["timings"]
        return (t["request_end"] - t["targeted_start"], 1.0)

    b["metrics"]["request_dispatch_delay"] = status_summary(delay, by, summary_v04)
    b["metrics"]["request_scheduled_latency"] = status_summary(sched, by, summary_v04)
    return {
        "metadata": {"version": 1, "guidellm_version": "0.7.4.dev0", "python_version": "3.12.3",
                     "platform": "Linux-6.8.0-x86_64-with-glibc2.39"},
        "args": {"target": "http://localhost:8000", "data": ["prompt_tokens=256,output_tokens=32"],
                 "profile": "constant", "rate": [2.0], "backend": "openai_http", "backend_kwargs": None,
                 "model": "example-model", "processor": "example-processor", "random_seed": 42,
                 "outputs": ["json"], "sample_requests": None, "warmup": None, "cooldown": None,
                 "prefer_response_metrics": True, "max_seconds": 30, "max_requests": None},
        "benchmarks": [b],
    }


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    write("v03-requests/benchmarks.json", fixture_v03())
    write("v04-requests/benchmarks.json", fixture_v04())
    write("v04-sampled/benchmarks.json", fixture_v04_sampled())
    os.makedirs("v07-schedule", exist_ok=True)
    write("v07-schedule/benchmarks.json", fixture_v07_schedule())
    os.makedirs("trap-reasoning", exist_ok=True)
    write("trap-reasoning/benchmarks.json", fixture_trap_reasoning())
    try:
        import yaml  # guidellm writes YAML with yaml.dump (sorted keys)

        with open("v04-yaml/benchmarks.yaml", "w") as f:
            f.write(yaml.dump(fixture_v04()))
    except ImportError:
        pass
