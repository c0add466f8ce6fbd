#!/usr/bin/env python3
"""Writes the hand-made inference-perf fixtures under this directory.

The requests (times, chunk texts, token counts) are chosen by hand; the
reports beside them are computed here the way inference-perf computes them
(reportgen/base.py summarize_requests at kubernetes-sigs/inference-perf
7de5ef2 for the v0.6+ layout, at v0.2.0 for the v0.2 layout), with numpy's
default percentile rule written out (linear, h = (n-1)p). Pure Python, no
numpy: a calculator for the hand-chosen inputs, independent of the Go code
under test. The tokenizer of these fixtures is a whitespace word count
(len(text.split())): the Go test gives tokentrace the same one.

Run from this directory: python3 make_fixtures.py
"""
import json
import math
import os

PCTS = [0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9]
PCTS_V02 = [0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9]


def pct(xs, p):
    s = sorted(xs)
    n = len(s)
    h = (n - 1) * p / 100.0
    lo = math.floor(h)
    if lo >= n - 1:
        return float(s[-1])
    t = h - lo
    a, b = s[lo], s[lo + 1]
    d = b - a
    return float(b - d * (1 - t)) if t >= 0.5 else float(a + d * t)


def mean(xs):
    return float(sum(xs) / len(xs))


def summarize(xs):  # v0.4+ (mean, min, max, then percentiles)
    if not xs:
        return None
    r = {"mean": mean(xs), "min": float(min(xs)), "max": float(max(xs))}
    for p in PCTS:
        r["median" if p == 50 else "p%s" % format(p, "g")] = pct(xs, p)
    return r


def summarize_v02(xs):  # v0.2.0 fixed order
    if not xs:
        return None
    r = {"mean": mean(xs), "min": float(min(xs))}
    for p in PCTS_V02:
        r["median" if p == 50 else "p%s" % format(p, "g")] = pct(xs, p)
    r["max"] = float(max(xs))
    return r


def words(text):
    return len(text.split())


# ---------------------------------------------------------------- v0.6+ --


def chunk_json(rid, text, finish=None):
    return json.dumps({"id": "cmpl-%s" % rid, "object": "text_completion", "created": 1767225600,
                       "model": "meta-llama/Llama-3.1-8B-Instruct",
                       "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish, "stop_reason": None}]},
                      separators=(",", ":"))


def head_record(r):
    """One v0.6+ record (reportgen/base.py generate_reports per_request)."""
    body = {"model": "meta-llama/Llama-3.1-8B-Instruct", "prompt": r["prompt"], "max_tokens": 8,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    req = json.dumps(body)
    if r.get("error"):
        info = {"request_metrics": {"text": {"input_tokens": r["input"]}, "image": None, "video": None, "audio": None},
                "response_metrics": None, "extra_info": {}, "lora_adapter": None, "labels": {}}
        rec = {"start_time": r["start"], "end_time": r["end"], "request": req, "response": r["error"][1],
               "info": info, "error": {"error_type": r["error"][0], "error_msg": r["error"][1]}}
        rec.update(r.get("extra", {}))
        return rec
    chunks, chunk_times, token_times = [], [], []
    raw = ""
    for i, (t, text) in enumerate(r["chunks"]):
        finish = "length" if i == len(r["chunks"]) - 1 and r.get("finish") else None
        c = chunk_json(r["id"], text, finish)
        raw += "data: " + c + "\n\n"
        if text:  # parse_sse_stream keeps content-bearing chunks only
            chunks.append(c)
            chunk_times.append(t)
            # summarize_requests: every token of a chunk gets its time
            token_times += [t] * words(text)
    usage = r.get("usage")
    if usage:
        raw += "data: " + json.dumps({"id": "cmpl-%s" % r["id"], "choices": [], "usage": usage}, separators=(",", ":")) + "\n\n"
    raw += "data: [DONE]\n\n"
    text = "".join(t for _, t in r["chunks"])
    # v0.6.0 counted the whole reply with count_tokens(text), special tokens
    # added: one BOS with Llama-style tokenizers (PR #644, fixed in v0.6.1)
    rm = {"output_tokens": words(text) + (1 if r.get("bos") else 0), "server_usage": usage, "response_chunks": chunks,
          "chunk_times": chunk_times, "output_token_times": token_times}
    info = {"request_metrics": {"text": {"input_tokens": r["input"]}, "image": None, "video": None, "audio": None},
            "response_metrics": rm, "extra_info": {}, "lora_adapter": None, "labels": {}}
    info.update(r.get("info_extra", {}))
    rec = {"start_time": r["start"], "end_time": r["end"], "request": req, "response": raw, "info": info, "error": None}
    rec.update(r.get("extra", {}))
    return rec


def head_summary(recs, rate=None, sched=None):
    """summarize_requests at 7de5ef2 (v0.6+), no goodput, default percentiles."""
    ok = [r for r in recs if r["error"] is None]
    bad = [r for r in recs if r["error"] is not None]
    total_time = max(r["end_time"] for r in recs) - min(r["start_time"] for r in recs)
    starts = [r["start_time"] for r in recs]
    send = max(starts) - min(starts)
    load = {"count": len(recs), "schedule_delay": summarize([r["start_time"] - s for r, s in zip(recs, sched)])}
    if rate is not None:
        load.update({"send_duration": send, "requested_rate": rate, "achieved_rate": len(recs) / send if send > 0 else 0.0})
    e2e, ntpot, tpot, ttft, itl = [], [], [], [], []
    mismatches = 0
    for r in ok:
        rm = r["info"]["response_metrics"]
        e2e.append(r["end_time"] - r["start_time"])
        acc = len(rm["output_token_times"])
        if rm["response_chunks"] and rm["server_usage"] is not None and acc != rm["server_usage"].get("completion_tokens"):
            mismatches += 1
        n = rm["output_tokens"]
        ntpot.append((r["end_time"] - r["start_time"]) / n if n > 0 else 0.0)
        times = rm["output_token_times"]
        if len(times) > 1:
            ttft.append(times[0] - r["start_time"])
            tpot.append((times[-1] - times[0]) / (n - 1) if n > 1 else None)
            itl += [b - a for a, b in zip(times, times[1:])]
    tpot = [v for v in tpot if v is not None]
    inp = [r["info"]["request_metrics"]["text"]["input_tokens"] for r in ok]
    out = [r["info"]["response_metrics"]["output_tokens"] for r in ok]

    def out_usage(r):
        rm = r["info"]["response_metrics"]
        if rm is None:
            return 0.0
        return float(rm["server_usage"]["completion_tokens"] if rm["server_usage"] else rm["output_tokens"])

    def prompt_tokens(rs):
        vals = [float(r["info"]["request_metrics"]["text"]["input_tokens"]) for r in rs]
        res = {"total": sum(vals), "cached": 0.0, "uncached": sum(vals)}
        d = summarize(vals)
        if d:
            res.update(d)
        return res

    ou = [out_usage(r) for r in ok]
    out_tokens = {"total": sum(ou)}
    if summarize(ou):
        out_tokens.update(summarize(ou))
    zeros = [0.0] * len(ok)
    labels = {}
    for r in bad:
        et, em = r["error"]["error_type"], r["error"]["error_msg"]
        msg = json.loads(em)["error"]["message"]
        code = et.split()[-1]
        lab = "%s - %s" % (code, {"429": "Rate Limit"}.get(code, "other"))
        labels.setdefault(lab, {"count": 0, "messages": []})
        labels[lab]["count"] += 1
        if {"message": msg} not in labels[lab]["messages"]:
            labels[lab]["messages"].append({"message": msg})
    return {
        "benchmark_time_seconds": total_time,
        "load_summary": load,
        "successes": {
            "count": len(ok),
            "latency": {"request_latency": summarize(e2e), "normalized_time_per_output_token": summarize(ntpot),
                        "time_per_output_token": summarize(tpot), "time_to_first_token": summarize(ttft),
                        "inter_token_latency": summarize(itl)},
            "throughput": {"input_tokens_per_sec": sum(inp) / total_time, "output_tokens_per_sec": sum(out) / total_time,
                           "total_tokens_per_sec": (sum(inp) + sum(out)) / total_time, "requests_per_sec": len(ok) / total_time,
                           "images_per_sec": 0.0, "videos_per_sec": 0.0, "audios_per_sec": 0.0},
            "request_size_bytes": summarize([float(len(r["request"].encode())) for r in ok]),
            "image": {"count": summarize(zeros), "pixels": None, "bytes": None, "aspect_ratio": None},
            "video": {"count": summarize(zeros), "frames": None, "pixels": None, "bytes": None, "aspect_ratio": None},
            "audio": {"count": summarize(zeros), "seconds": None, "bytes": None},
            "prompt_tokens": prompt_tokens(ok),
            "output_len": summarize([float(v) for v in out]),
            "output_tokens": out_tokens,
            "token_count_mismatches": mismatches,
        },
        "failures": {"count": len(bad), "request_latency": summarize([r["end_time"] - r["start_time"] for r in bad]),
                     "prompt_tokens": prompt_tokens(bad), "by_label": labels},
    }


def dump(path, obj, indent=2):
    with open(path, "w") as f:
        f.write(json.dumps(obj, indent=indent))


HEAD_CONFIG = """api:
  type: completion
  streaming: true
  headers: null
data:
  type: shared_prefix
  shared_prefix:
    num_groups: 1
    num_prompts_per_group: 7
    system_prompt_len: 8
    question_len: 4
    output_len: 8
load:
  type: constant
  interval: 1.0
  stages:
  - rate: 2.0
    duration: 1
  - rate: 4.0
    duration: 1
  num_workers: 1
  worker_max_concurrency: 10
metrics: null
report:
  request_lifecycle:
    summary: true
    per_stage: true
    per_request: true
    per_adapter: true
    per_adapter_stage: false
    percentiles:
    - 0.1
    - 1.0
    - 5.0
    - 10.0
    - 25.0
    - 50.0
    - 75.0
    - 90.0
    - 95.0
    - 99.0
    - 99.9
    use_server_output_tokens: false
  prometheus:
    summary: true
    per_stage: true
server:
  type: vllm
  model_name: meta-llama/Llama-3.1-8B-Instruct
  base_url: http://vllm.example:8000
  ignore_eos: true
  api_key: sk-fixturefixturefixture
tokenizer:
  pretrained_model_name_or_path: whitespace  # the fixtures' word-count tokenizer
  trust_remote_code: false
  token: hf_fixturetokenfixturetoken
"""


def head_two_stages(d):
    """Two constant-rate stages of a v0.6+ run; stage 1 has one HTTP 429."""
    os.makedirs(d, exist_ok=True)
    reqs = [
        # stage 0, rate 2/s: scheduled 1000.000, 1000.499, 1000.998
        {"id": "r0", "start": 1000.000, "end": 1000.160, "input": 10, "prompt": "p0",
         "chunks": [(1000.100, " The"), (1000.120, " quick brown"), (1000.150, " fox")],
         "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}},
        {"id": "r1", "start": 1000.500, "end": 1000.650, "input": 12, "prompt": "p1",
         "chunks": [(1000.580, " jumps"), (1000.600, " over"), (1000.640, " the lazy dog")], "finish": True,
         "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}},
        {"id": "r2", "start": 1001.000, "end": 1001.100, "input": 8, "prompt": "p2",
         "chunks": [(1001.050, " Hello"), (1001.090, " world")],
         "usage": {"prompt_tokens": 8, "completion_tokens": 2, "total_tokens": 10}},
        # stage 1, rate 4/s: scheduled 1002.000, 1002.250, 1002.500, 1002.750
        {"id": "r3", "start": 1002.000, "end": 1002.120, "input": 9, "prompt": "p3",
         "chunks": [(1002.070, " a"), (1002.100, " b c"), (1002.110, " d")],
         "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}},
        {"id": "r4", "start": 1002.250, "end": 1002.260, "input": 11, "prompt": "p4",
         "error": ("HTTP Error 429", json.dumps({"error": {"message": "rate limited", "type": "RateLimitError"}}))},
        {"id": "r5", "start": 1002.500, "end": 1002.610, "input": 7, "prompt": "p5",
         "chunks": [(1002.540, " x"), (1002.600, " y z w")],
         # the server counts 5 tokens where the word count finds 4
         "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}},
        {"id": "r6", "start": 1002.750, "end": 1002.880, "input": 10, "prompt": "p6",
         "chunks": [(1002.800, " one"), (1002.830, " two"), (1002.870, " three")],
         "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}},
    ]
    sched = [1000.000, 1000.499, 1000.998, 1002.000, 1002.250, 1002.500, 1002.750]
    recs = [head_record(r) for r in reqs]
    dump(os.path.join(d, "per_request_lifecycle_metrics.json"), recs)
    dump(os.path.join(d, "stage_0_lifecycle_metrics.json"), head_summary(recs[:3], 2.0, sched[:3]))
    dump(os.path.join(d, "stage_1_lifecycle_metrics.json"), head_summary(recs[3:], 4.0, sched[3:]))
    dump(os.path.join(d, "summary_lifecycle_metrics.json"), head_summary(recs, None, sched))
    prom = {"benchmark_time_seconds": 0.0, "load_summary": {}, "successes": {
        "count": 3, "rate": 2.5, "prompt_len": {"mean": 10.0, "rate": 25.0}, "output_len": {"mean": 3.67, "rate": 9.2},
        "queue_len": {"mean": 0.0},
        "request_latency": {"mean": 0.13, "median": 0.14, "p90": 0.158, "p99": 0.1598},
        "time_to_first_token": {"mean": 0.07, "median": 0.075, "p90": 0.095, "p99": 0.0995},
        "time_per_output_token": {"mean": 0.02, "median": 0.02, "p90": 0.03, "p99": 0.039},
        "kv_cache_usage_percentage": {"mean": 0.01, "median": 0.01, "p90": 0.02, "p99": 0.02},
        "num_requests_swapped": {"mean": 0.0}, "num_preemptions_total": {"mean": 0.0},
        "prefix_cache_hit_percent": {"mean": 0.0},
        "inter_token_latency": {"mean": 0.02, "median": 0.02, "p90": 0.03, "p99": 0.039},
        "request_success_count": 3.0}, "failures": {}}
    dump(os.path.join(d, "stage_0_prometheus_metrics.json"), prom)
    with open(os.path.join(d, "config.yaml"), "w") as f:
        f.write(HEAD_CONFIG)


def edge_v06(d):
    """One v0.6+ stage holding the cases where tokentrace's InferencePerf
    profile and inference-perf part ways (see the Go test)."""
    os.makedirs(d, exist_ok=True)
    reqs = [
        # an ordinary request
        {"id": "e0", "start": 2000.000, "end": 2000.100, "input": 5, "prompt": "q0",
         "chunks": [(2000.040, " alpha"), (2000.060, " beta"), (2000.090, " gamma")],
         "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}},
        # first chunk carries two tokens: inference-perf pools a zero gap
        # inside it
        {"id": "e1", "start": 2000.200, "end": 2000.300, "input": 6, "prompt": "q1",
         "chunks": [(2000.250, " two words"), (2000.280, " more")],
         "usage": {"prompt_tokens": 6, "completion_tokens": 3, "total_tokens": 9}},
        # a one-token reply: one token time, so no TTFT in inference-perf
        {"id": "e2", "start": 2000.400, "end": 2000.450, "input": 4, "prompt": "q2",
         "chunks": [(2000.430, " solo")],
         "usage": {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}},
        # an empty reply (a chunk with no text is not recorded): a success
        # for inference-perf, status empty for tokentrace
        {"id": "e3", "start": 2000.500, "end": 2000.520, "input": 3, "prompt": "q3",
         "chunks": [(2000.510, "")],
         "usage": {"prompt_tokens": 3, "completion_tokens": 0, "total_tokens": 3}},
        # no server usage; an unknown record key and an unknown info key
        {"id": "e4", "start": 2000.600, "end": 2000.700, "input": 7, "prompt": "q4",
         "chunks": [(2000.640, " x"), (2000.660, " y"), (2000.690, " z")], "usage": None,
         "extra": {"trace_id": "abc"}, "info_extra": {"debug": True}},
    ]
    sched = [2000.000, 2000.200, 2000.400, 2000.500, 2000.600]
    recs = [head_record(r) for r in reqs]
    dump(os.path.join(d, "per_request_lifecycle_metrics.json"), recs)
    dump(os.path.join(d, "stage_0_lifecycle_metrics.json"), head_summary(recs, 5.0, sched))


# ----------------------------------------------------------------- v0.2 --


def v02_lines(d):
    """inference-perf v0.2 (one time per SSE line): each message's data line,
    its blank separator 4 µs later, and [DONE] with its blank line."""
    os.makedirs(d, exist_ok=True)
    sep = 0.000004
    reqs = [
        {"start": 3000.000, "msgs": [3000.050, 3000.070, 3000.095], "done": 3000.100, "end": 3000.101, "input": 20, "text": " one two three"},
        {"start": 3000.500, "msgs": [3000.530, 3000.560, 3000.580, 3000.610], "done": 3000.611, "end": 3000.612, "input": 22, "text": " a b c d e"},
        {"start": 3001.000, "msgs": [3001.020, 3001.045], "done": 3001.046, "end": 3001.047, "input": 18, "text": " hi there"},
    ]
    recs = []
    for r in reqs:
        times = []
        for t in r["msgs"] + [r["done"]]:
            times += [t, t + sep]
        body = json.dumps({"model": "meta-llama/Meta-Llama-3-8B-Instruct", "prompt": "p", "max_tokens": 8, "ignore_eos": True, "stream": True})
        recs.append({"start_time": r["start"], "end_time": r["end"], "request": body, "response": "",
                     "info": {"input_tokens": r["input"], "output_tokens": words(r["text"]), "output_token_times": times},
                     "error": None})
    dump(os.path.join(d, "per_request_lifecycle_metrics.json"), recs)
    sched = [3000.000, 3000.500, 3001.000]
    ok = recs
    total_time = max(r["end_time"] for r in recs) - min(r["start_time"] for r in recs)
    streamable = [x for x in ok if len(x["info"]["output_token_times"]) > 1]
    starts = [r["start_time"] for r in recs]
    send = max(starts) - min(starts)
    summ = {
        "load_summary": {"count": len(recs), "schedule_delay": summarize_v02([r["start_time"] - s for r, s in zip(recs, sched)]),
                         "send_duration": send, "requested_rate": 2.0, "achieved_rate": len(recs) / send},
        "successes": {
            "count": len(ok),
            "latency": {
                "request_latency": summarize_v02([x["end_time"] - x["start_time"] for x in ok]),
                "normalized_time_per_output_token": summarize_v02([(x["end_time"] - x["start_time"]) / x["info"]["output_tokens"] for x in ok]),
                "time_per_output_token": summarize_v02([(x["info"]["output_token_times"][-1] - x["info"]["output_token_times"][0]) / (len(x["info"]["output_token_times"]) - 1) for x in streamable]),
                "time_to_first_token": summarize_v02([x["info"]["output_token_times"][0] - x["start_time"] for x in streamable]),
                "inter_token_latency": summarize_v02([b - a for x in streamable for a, b in zip(x["info"]["output_token_times"], x["info"]["output_token_times"][1:])]),
            },
            "throughput": {
                "input_tokens_per_sec": sum(x["info"]["input_tokens"] for x in ok) / total_time,
                "output_tokens_per_sec": sum(x["info"]["output_tokens"] for x in ok) / total_time,
                "total_tokens_per_sec": sum(x["info"]["input_tokens"] + x["info"]["output_tokens"] for x in ok) / total_time,
                "requests_per_sec": len(ok) / total_time,
            },
            "prompt_len": summarize_v02([float(x["info"]["input_tokens"]) for x in ok]),
            "output_len": summarize_v02([float(x["info"]["output_tokens"]) for x in ok]),
        },
        "failures": {"count": 0, "request_latency": None, "prompt_len": None},
    }
    # GCS/S3 storage writes compact JSON (json.dumps without indent)
    dump(os.path.join(d, "stage_0_lifecycle_metrics.json"), summ, indent=None)


# ------------------------------------------------------- trap fixtures --


def v04_summary(recs, rate, sched):
    """summarize_requests at v0.4.0 (e3e690ba): one time per SSE message;
    TPOT = (t_last - t_first)/(len(times) - 1), ITL pools the time gaps."""
    ok = [r for r in recs if r["error"] is None]
    total_time = max(r["end_time"] for r in recs) - min(r["start_time"] for r in recs)
    streamable = [x for x in ok if len(x["info"]["output_token_times"]) > 1]
    starts = [r["start_time"] for r in recs]
    send = max(starts) - min(starts)
    times = lambda x: x["info"]["output_token_times"]
    return {
        "load_summary": {"count": len(recs), "schedule_delay": summarize([r["start_time"] - s for r, s in zip(recs, sched)]),
                         "send_duration": send, "requested_rate": rate, "achieved_rate": len(recs) / send},
        "successes": {
            "count": len(ok),
            "latency": {
                "request_latency": summarize([x["end_time"] - x["start_time"] for x in ok]),
                "normalized_time_per_output_token": summarize([(x["end_time"] - x["start_time"]) / x["info"]["output_tokens"] for x in ok]),
                "time_per_output_token": summarize([(times(x)[-1] - times(x)[0]) / (len(times(x)) - 1) for x in streamable]),
                "time_to_first_token": summarize([times(x)[0] - x["start_time"] for x in streamable]),
                "inter_token_latency": summarize([b - a for x in streamable for a, b in zip(times(x), times(x)[1:])]),
            },
            "throughput": {
                "input_tokens_per_sec": sum(x["info"]["input_tokens"] for x in ok) / total_time,
                "output_tokens_per_sec": sum(x["info"]["output_tokens"] for x in ok) / total_time,
                "total_tokens_per_sec": sum(x["info"]["input_tokens"] + x["info"]["output_tokens"] for x in ok) / total_time,
                "requests_per_sec": len(ok) / total_time,
            },
            "prompt_len": summarize([float(x["info"]["input_tokens"]) for x in ok]),
            "output_len": summarize([float(x["info"]["output_tokens"]) for x in ok]),
        },
        "failures": {"count": 0, "request_latency": None, "prompt_len": None},
    }


def trap_v04_messages(d):
    """inference-perf v0.4 chat (apis/chat.py at e3e690ba): one time per SSE
    message, appended before the message is parsed: the role-only first
    chunk, one content chunk per token, and [DONE], 4 µs after the last
    token (the role chunk 4 µs before the first)."""
    os.makedirs(d, exist_ok=True)
    sep = 0.000004
    reqs = [
        {"start": 4000.000, "tokens": [4000.0601, 4000.0801, 4000.1001, 4000.1201], "end": 4000.1212, "input": 12},
        {"start": 4000.500, "tokens": [4000.54002, 4000.560, 4000.585, 4000.600, 4000.630], "end": 4000.631, "input": 14},
        {"start": 4001.000, "tokens": [4001.03001, 4001.050], "end": 4001.051, "input": 10},
    ]
    recs = []
    for r in reqs:
        times = [r["tokens"][0] - sep] + r["tokens"] + [r["tokens"][-1] + sep]
        text = " ".join("w%d" % i for i in range(len(r["tokens"])))
        body = json.dumps({"model": "meta-llama/Llama-3.1-8B-Instruct", "messages": [{"role": "user", "content": "q"}],
                           "max_tokens": 8, "ignore_eos": True, "stream": True})
        recs.append({"start_time": r["start"], "end_time": r["end"], "request": body, "response": "",
                     "info": {"input_tokens": r["input"], "output_tokens": words(text), "output_token_times": times,
                              "extra_info": {}, "lora_adapter": None},
                     "error": None})
    dump(os.path.join(d, "per_request_lifecycle_metrics.json"), recs)
    dump(os.path.join(d, "stage_0_lifecycle_metrics.json"), v04_summary(recs, 2.0, [4000.000, 4000.500, 4001.000]))


def v05_record(r):
    """One v0.5 record (apis/completion.py and reportgen/base.py at v0.5.0
    e250731): the chunks and their times as parse_sse_stream kept them, the
    server's usage, and what summarize_requests wrote back before the
    per-request file was dumped: output_token_times, every token of a chunk
    at the chunk's time, counted with count_tokens(text) — which adds a BOS
    (words + 1 with these fixtures' tokenizer) — and output_tokens their
    sum."""
    chunks, chunk_times, token_times = [], [], []
    for t, text in r["chunks"]:
        chunks.append(json.dumps({"id": "cmpl-%s" % r["id"], "object": "text_completion", "created": 1777000000,
                                  "model": "meta-llama/Llama-3.1-8B-Instruct",
                                  "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": None}]},
                                 separators=(",", ":")))
        chunk_times.append(t)
        token_times += [t] * (words(text) + 1)
    body = json.dumps({"model": "meta-llama/Llama-3.1-8B-Instruct", "prompt": "p", "max_tokens": 8, "ignore_eos": True,
                       "stream": True, "stream_options": {"include_usage": True}})
    ri = {"response_chunks": chunks, "chunk_times": chunk_times, "output_tokens": len(token_times),
          "output_token_times": token_times, "server_usage": r["usage"]}
    return {"start_time": r["start"], "end_time": r["end"], "request": body, "response": "",
            "info": {"input_tokens": r["input"], "extra_info": {}, "lora_adapter": None, "response_info": ri},
            "error": None}


def v05_summary(recs, rate, sched):
    """summarize_requests at v0.5.0: TTFT = first token time - start, TPOT =
    (last - first)/(output_tokens - 1), ITL pools every token-time gap,
    token_count_mismatches counts requests whose per-chunk sum is not the
    server's completion_tokens."""
    ok = [r for r in recs if r["error"] is None]
    total_time = max(r["end_time"] for r in recs) - min(r["start_time"] for r in recs)
    starts = [r["start_time"] for r in recs]
    send = max(starts) - min(starts)
    ri = lambda x: x["info"]["response_info"]
    e2e = [x["end_time"] - x["start_time"] for x in ok]
    ntpot = [(x["end_time"] - x["start_time"]) / ri(x)["output_tokens"] for x in ok]
    ttft, tpot, itl = [], [], []
    mismatches = 0
    for x in ok:
        t = ri(x)["output_token_times"]
        u = ri(x)["server_usage"]
        if u is not None and len(t) != u["completion_tokens"]:
            mismatches += 1
        if len(t) > 1:
            ttft.append(t[0] - x["start_time"])
            if ri(x)["output_tokens"] > 1:
                tpot.append((t[-1] - t[0]) / (ri(x)["output_tokens"] - 1))
            itl += [b - a for a, b in zip(t, t[1:])]
    inp = [x["info"]["input_tokens"] for x in ok]
    out = [ri(x)["output_tokens"] for x in ok]
    return {
        "benchmark_time_seconds": total_time,
        "load_summary": {"count": len(recs), "schedule_delay": summarize([r["start_time"] - s for r, s in zip(recs, sched)]),
                         "send_duration": send, "requested_rate": rate, "achieved_rate": len(recs) / send},
        "successes": {
            "count": len(ok),
            "latency": {"request_latency": summarize(e2e), "normalized_time_per_output_token": summarize(ntpot),
                        "time_per_output_token": summarize(tpot), "time_to_first_token": summarize(ttft),
                        "inter_token_latency": summarize(itl)},
            "throughput": {"input_tokens_per_sec": sum(inp) / total_time, "output_tokens_per_sec": sum(out) / total_time,
                           "total_tokens_per_sec": (sum(inp) + sum(out)) / total_time, "requests_per_sec": len(ok) / total_time},
            "prompt_len": summarize([float(v) for v in inp]),
            "output_len": summarize([float(v) for v in out]),
            "token_count_mismatches": mismatches,
        },
        "failures": {"count": 0, "request_latency": None, "prompt_len": None},
    }


def trap_v05_bos(d):
    """inference-perf v0.5 completions with a BOS-prepending tokenizer: one
    BOS counted per chunk (issue #564)."""
    os.makedirs(d, exist_ok=True)
    reqs = [
        {"id": "b0", "start": 5000.000, "end": 5000.101, "input": 9,
         "chunks": [(5000.040, " The"), (5000.060, " quick"), (5000.100, " brown fox")],
         "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}},
        {"id": "b1", "start": 5000.200, "end": 5000.291, "input": 8,
         "chunks": [(5000.230, " a"), (5000.250, " b"), (5000.270, " c"), (5000.290, " d")],
         "usage": {"prompt_tokens": 8, "completion_tokens": 4, "total_tokens": 12}},
        # a server that sent no usage
        {"id": "b2", "start": 5000.400, "end": 5000.471, "input": 7,
         "chunks": [(5000.430, " x y"), (5000.470, " z")], "usage": None},
    ]
    recs = [v05_record(r) for r in reqs]
    dump(os.path.join(d, "per_request_lifecycle_metrics.json"), recs)
    dump(os.path.join(d, "stage_0_lifecycle_metrics.json"), v05_summary(recs, 5.0, [5000.000, 5000.200, 5000.400]))


def trap_v060_bos(d):
    """inference-perf v0.6.0 (apis/completion.py count_tokens(output_text)
    with special tokens, before PR #644): every whole-reply count one more
    than the text's words; two records with the server's usage, one
    without."""
    os.makedirs(d, exist_ok=True)
    reqs = [
        {"id": "w0", "start": 6000.000, "end": 6000.101, "input": 9, "prompt": "q0", "bos": True,
         "chunks": [(6000.040, " one"), (6000.060, " two"), (6000.100, " three")],
         "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}},
        {"id": "w1", "start": 6000.200, "end": 6000.251, "input": 8, "prompt": "q1", "bos": True,
         "chunks": [(6000.230, " yes"), (6000.250, " no")],
         "usage": {"prompt_tokens": 8, "completion_tokens": 2, "total_tokens": 10}},
        {"id": "w2", "start": 6000.400, "end": 6000.491, "input": 7, "prompt": "q2", "bos": True,
         "chunks": [(6000.430, " a"), (6000.450, " b"), (6000.470, " c"), (6000.490, " d")], "usage": None},
    ]
    sched = [6000.000, 6000.200, 6000.400]
    recs = [head_record(r) for r in reqs]
    dump(os.path.join(d, "per_request_lifecycle_metrics.json"), recs)
    dump(os.path.join(d, "stage_0_lifecycle_metrics.json"), head_summary(recs, 5.0, sched))


def v03_summary(recs, rate, sched, conc):
    """summarize_requests at v0.3.0 for a concurrent stage
    (summarize_requests(metrics, stage_rate, concurrency_level): rate is
    the stage's num_requests, load_summary gains concurrency)."""
    s = v04_summary(recs, rate, sched)
    s["load_summary"]["concurrency"] = conc
    return s


def trap_v03_overshoot(d):
    """inference-perf v0.3.0, concurrent load type, concurrency_level 2 with
    2 workers: each worker got 2 // 2 + 1 = 2 slots (issue #319), so up to
    4 requests ran at once. v0.3 chat records as trap_v04_messages (one
    time per SSE message: the role chunk, one per token, [DONE])."""
    os.makedirs(d, exist_ok=True)
    sep = 0.000004
    reqs = [
        {"start": 5000.000, "tokens": [5000.100, 5000.200, 5000.399], "end": 5000.400, "input": 12},
        {"start": 5000.001, "tokens": [5000.100, 5000.200, 5000.299], "end": 5000.300, "input": 10},
        {"start": 5000.002, "tokens": [5000.150, 5000.300, 5000.499], "end": 5000.500, "input": 14},
        {"start": 5000.003, "tokens": [5000.150, 5000.250, 5000.349], "end": 5000.350, "input": 11},
        # each starts the instant a slot is freed
        {"start": 5000.300, "tokens": [5000.400, 5000.500, 5000.599], "end": 5000.600, "input": 13},
        {"start": 5000.350, "tokens": [5000.450, 5000.550, 5000.699], "end": 5000.700, "input": 9},
    ]
    recs = []
    for r in reqs:
        times = [r["tokens"][0] - sep] + r["tokens"] + [r["tokens"][-1] + sep]
        text = " ".join("w%d" % i for i in range(len(r["tokens"])))
        body = json.dumps({"model": "meta-llama/Llama-3.1-8B-Instruct", "messages": [{"role": "user", "content": "q"}],
                           "max_tokens": 3, "ignore_eos": True, "stream": True})
        recs.append({"start_time": r["start"], "end_time": r["end"], "request": body, "response": "",
                     "info": {"input_tokens": r["input"], "output_tokens": words(text), "output_token_times": times,
                              "extra_info": {}},
                     "error": None})
    # a concurrent stage's requests are scheduled when a slot frees: the
    # schedule is the start
    dump(os.path.join(d, "per_request_lifecycle_metrics.json"), recs)
    dump(os.path.join(d, "stage_0_lifecycle_metrics.json"), v03_summary(recs, 6, [r["start"] for r in reqs], 2))


def goodput_errors(d):
    """A v0.6+ stage run with a goodput constraint (config goodput:
    constraints: ttft: 0.05) and a failure: calculate_goodput_metrics at
    7de5ef2 judges the successful requests only, so goodput_percentage is
    good / successes (2 of 3), while 1 of the 4 requests failed."""
    os.makedirs(d, exist_ok=True)
    err429 = ("429 Too Many Requests", json.dumps({"error": {"message": "rate limited", "type": "rate_limit", "code": 429}}))
    reqs = [
        {"id": "g0", "start": 7000.000, "end": 7000.100, "input": 5, "prompt": "q0",
         "chunks": [(7000.040, " alpha"), (7000.060, " beta"), (7000.090, " gamma")],
         "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}},
        # TTFT 80 ms > 50 ms: successful, not good
        {"id": "g1", "start": 7000.200, "end": 7000.320, "input": 6, "prompt": "q1",
         "chunks": [(7000.280, " one"), (7000.300, " two"), (7000.310, " three")],
         "usage": {"prompt_tokens": 6, "completion_tokens": 3, "total_tokens": 9}},
        {"id": "g2", "start": 7000.400, "end": 7000.480, "input": 4, "prompt": "q2",
         "chunks": [(7000.430, " x"), (7000.450, " y"), (7000.470, " z")],
         "usage": {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}},
        {"id": "g3", "start": 7000.500, "end": 7000.510, "input": 7, "prompt": "q3", "error": err429},
    ]
    sched = [7000.000, 7000.200, 7000.400, 7000.500]
    recs = [head_record(r) for r in reqs]
    summary = head_summary(recs, 5.0, sched)
    ok = [r for r in recs if r["error"] is None]
    slo = 0.05
    good = [r for r in ok if r["info"]["response_metrics"]["output_token_times"][0] - r["start_time"] <= slo]
    span = max(r["end_time"] for r in ok) - min(r["start_time"] for r in ok)
    tokens = sum(r["info"]["request_metrics"]["text"]["input_tokens"] + r["info"]["response_metrics"]["server_usage"]["completion_tokens"] for r in good)
    summary["successes"]["goodput_metrics"] = {
        "goodput_percentage": len(good) / len(ok) * 100, "request_goodput": len(good) / span,
        "token_goodput": tokens / span, "good_requests": len(good), "total_requests": len(ok),
        "ttft_attainment_percentage": len(good) / len(ok) * 100}
    dump(os.path.join(d, "per_request_lifecycle_metrics.json"), recs)
    dump(os.path.join(d, "stage_0_lifecycle_metrics.json"), summary)


if __name__ == "__main__":
    head_two_stages("head-2stages")
    edge_v06("edge-v06")
    trap_v04_messages("trap-v04-messages")
    trap_v05_bos("trap-v05-bos")
    trap_v060_bos("trap-v060-bos")
    v02_lines("v02-lines")
    goodput_errors("goodput-errors")
    trap_v03_overshoot("trap-v03-overshoot")
