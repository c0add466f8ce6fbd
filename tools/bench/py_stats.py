"""The Python side of `make bench`: per-request TTFT, E2E and TPOT of a
benchmark run under tokentrace's canonical convention (analyze/CONVENTIONS.md),
then their P50/P90/P99 and the pooled ITL's P99, written the way a skilled
user would write it for speed: the image's python3 with orjson (the fastest
C JSON parser; Debian's python3-ujson only where orjson is absent) and
Debian's python3-numpy on PYTHONPATH, substring tests where they spare a
parse, numpy for the percentiles (linear rule, as tokentrace's). Prints one
JSON line.

Canonical convention, per format (what tokentrace's importers recover):
  - completed: no error and at least one token message;
  - TTFT = first token message (content or reasoning) − start,
    E2E = last token message − start, N = the server's completion_tokens
    (the tool's count where it keeps no usage), TPOT = (E2E − TTFT)/(N − 1)
    for N > 1;
  - ITL = every gap between consecutive token messages of completed
    requests, pooled (one token per message in these files).

usage: PYTHONPATH=/usr/lib/python3/dist-packages python3 py_stats.py FORMAT PATH
  FORMAT: genai-perf (both variants), aiperf, llmperf, vllm, sglang,
  guidellm, inference-perf, aiperf-runs (PATH a directory of run
  directories, pooled)
"""
import glob
import json
import os
import sys

import numpy as np

try:
    import orjson

    def loads(b):
        try:
            return orjson.loads(b)
        except orjson.JSONDecodeError:
            # Python's json.dumps writes NaN and Infinity bare (SGLang's
            # results), which orjson refuses and the standard parser reads
            return json.loads(b)
except ImportError:
    import ujson
    loads = ujson.loads

P = [50, 90, 99]


def out(ttft, e2e, tpot, itl=None, **extra):
    res = {"requests": len(ttft)}
    for name, v in (("ttft", ttft), ("e2e", e2e), ("tpot", tpot)):
        q = np.percentile(np.asarray(v, dtype=np.float64), P)
        for p, x in zip(P, q):
            res[f"{name}_p{p}_ms"] = float(x)
    if itl is not None:
        res["itl_n"] = int(itl.size)
        res["itl_p99_ms"] = float(np.percentile(itl, 99))
    res.update(extra)
    print(json.dumps(res))


def tpots(ttft, e2e, n):
    ttft, e2e, n = np.asarray(ttft), np.asarray(e2e), np.asarray(n)
    m = n > 1
    return (e2e[m] - ttft[m]) / (n[m] - 1)


# GenAI-Perf raw export: one JSON object; each response is one SSE read.
# A token message has a non-empty content or reasoning string (the key
# followed by a quote that is not the closing one) or a non-empty
# tool_calls list (a tool-call delta is generated output). Inside a JSON
# string every quote is escaped, so `"content":"` cannot occur in text.
TOKEN_KEYS = (('"content":"', '"'), ('"reasoning_content":"', '"'), ('"reasoning":"', '"'), ('"tool_calls":[', ']'))


def carries_token(r):
    for k, empty in TOKEN_KEYS:
        i = r.find(k)
        if i >= 0 and r[i + len(k)] != empty:
            return True
    return False


def genai_perf(path):
    with open(path, "rb") as f:
        doc = loads(f.read())
    ttft, e2e, n_out, gaps = [], [], [], []
    for exp in doc["experiments"]:
        for req in exp["requests"]:
            t0 = req["timestamp"]
            times, n, failed = [], None, False
            for ts, o in zip(req["response_timestamps"], req["response_outputs"]):
                r = o.get("response", "")
                if r.startswith("data: [DONE]"):
                    continue
                if '"error"' in r:
                    failed = True
                    break
                if not r.startswith("data:"):
                    if '"object":"error"' in r:
                        failed = True
                        break
                    continue
                if '"completion_tokens"' in r:
                    u = loads(r[5:]).get("usage") or {}
                    if u.get("completion_tokens") is not None:
                        n = u["completion_tokens"]
                if carries_token(r):
                    times.append(ts)
            if failed or not times:
                continue
            ttft.append((times[0] - t0) / 1e6)
            e2e.append((times[-1] - t0) / 1e6)
            n_out.append(n if n is not None else len(times))
            gaps.append(np.diff(np.asarray(times, dtype=np.int64)))
    itl = np.concatenate(gaps) / 1e6 if gaps else np.zeros(0)
    out(ttft, e2e, tpots(ttft, e2e, n_out), itl)


# AIPerf profile_export.jsonl: one record a line; an error record has an
# "error" object and empty metrics.
def aiperf_lines(paths, ttft, e2e, n_out, gaps):
    for path in paths:
        with open(path, "rb") as f:
            for line in f:
                if b'"error":{' in line or not line.strip():
                    continue
                m = loads(line)["metrics"]
                if "time_to_first_token" not in m:
                    continue
                ttft.append(m["time_to_first_token"]["value"])
                e2e.append(m["request_latency"]["value"])
                u = m.get("usage_completion_tokens") or m.get("output_sequence_length")
                n_out.append(u["value"])
                icl = m.get("inter_chunk_latency")
                if icl:
                    gaps.append(icl["value"])


def aiperf(path):
    ttft, e2e, n_out, gaps = [], [], [], []
    aiperf_lines([path], ttft, e2e, n_out, gaps)
    itl = np.fromiter((g for l in gaps for g in l), dtype=np.float64)
    out(ttft, e2e, tpots(ttft, e2e, n_out), itl)


def aiperf_runs(root):
    paths = sorted(glob.glob(os.path.join(root, "*", "profile_export.jsonl")))
    ttft, e2e, n_out, gaps = [], [], [], []
    aiperf_lines(paths, ttft, e2e, n_out, gaps)
    itl = np.fromiter((g for l in gaps for g in l), dtype=np.float64)
    out(ttft, e2e, tpots(ttft, e2e, n_out), itl, runs=len(paths))


# LLMPerf individual_responses.json: no last-token time; the 2024 rows'
# inter_token_latency_s is (t_last − start)/number_output_tokens, which
# counts a BOS token: E2E = ITL·N_tok, N = N_tok − 1.
def llmperf(path):
    with open(path, "rb") as f:
        rows = loads(f.read())
    ok = [r for r in rows if r["error_code"] is None]
    ttft = np.array([r["ttft_s"] for r in ok]) * 1e3
    ntok = np.array([r["number_output_tokens"] for r in ok], dtype=np.float64)
    e2e = np.array([r["inter_token_latency_s"] for r in ok]) * ntok * 1e3
    out(ttft, e2e, tpots(ttft, e2e, ntok - 1))


# vLLM bench serve / SGLang bench_serving: index-aligned arrays over every
# request; failed ones have a non-empty error. E2E is the last message:
# ttft + Σ itls (vLLM's latencies hold the same).
def arrays(doc):
    errs = doc["errors"]
    ttfts, itls, outs = doc["ttfts"], doc["itls"], doc["output_lens"]
    ttft, e2e, n_out, gaps = [], [], [], []
    for i, e in enumerate(errs):
        if e or not ttfts[i] > 0:
            continue
        g = itls[i]
        ttft.append(ttfts[i] * 1e3)
        e2e.append((ttfts[i] + sum(g)) * 1e3)
        n_out.append(outs[i])
        gaps.extend(g)
    itl = np.array(gaps) * 1e3
    out(ttft, e2e, tpots(ttft, e2e, n_out), itl)


def vllm(path):
    with open(path, "rb") as f:
        arrays(loads(f.read()))


def sglang(path):
    with open(path, "rb") as f:
        arrays(loads(f.readline()))


# guidellm benchmarks.json (v0.4+): successful records' timings, epoch s.
def guidellm(path):
    with open(path, "rb") as f:
        doc = loads(f.read())
    ttft, e2e, n_out = [], [], []
    for b in doc["benchmarks"]:
        for r in b["requests"]["successful"]:
            t = r["info"]["timings"]
            if t["first_token_iteration"] is None:
                continue
            s = t["request_start"]
            ttft.append((t["first_token_iteration"] - s) * 1e3)
            e2e.append((t["last_token_iteration"] - s) * 1e3)
            n_out.append(r["output_tokens"])
    out(ttft, e2e, tpots(ttft, e2e, n_out))


# inference-perf per_request_lifecycle_metrics.json: content chunks' times.
def inference_perf(path):
    with open(path, "rb") as f:
        recs = loads(f.read())
    ttft, e2e, n_out, gaps = [], [], [], []
    for r in recs:
        rm = r["info"].get("response_metrics")
        if r["error"] is not None or not rm or not rm["chunk_times"]:
            continue
        ct, s = rm["chunk_times"], r["start_time"]
        ttft.append((ct[0] - s) * 1e3)
        e2e.append((ct[-1] - s) * 1e3)
        u = rm.get("server_usage") or {}
        n_out.append(u.get("completion_tokens") or rm["output_tokens"])
        gaps.append(np.diff(ct))
    itl = np.concatenate(gaps) * 1e3 if gaps else np.zeros(0)
    out(ttft, e2e, tpots(ttft, e2e, n_out), itl)


FORMATS = {
    "genai-perf": genai_perf, "aiperf": aiperf, "aiperf-runs": aiperf_runs, "llmperf": llmperf,
    "vllm": vllm, "sglang": sglang, "guidellm": guidellm, "inference-perf": inference_perf,
}

if __name__ == "__main__":
    FORMATS[sys.argv[1]](sys.argv[2])
