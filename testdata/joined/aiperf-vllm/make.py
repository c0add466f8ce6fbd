#!/usr/bin/env python3
"""Builds the constructed joined example (see SOURCE.md). Deterministic:
python3 make.py rewrites profile_export.jsonl, vllm-spans.json and
vllm-request.log."""
import json

T0 = 1790000000000000000  # 2026-09-21T14:13:20Z, ns
MS = 1_000_000
# id, start offset ms, client TTFT ms, server queue ms, server prefill ms, ISL, OSL
REQS = [
    ("req-0001", 0, 120, 10, 80, 100, 5),
    ("req-0002", 500, 250, 150, 60, 200, 5),
    ("req-0003", 1000, 90, 30, 70, 300, 5),   # queue + prefill > TTFT: negative remainder
    ("", 1500, 100, 5, 60, 400, 5),           # no X-Request-Id: joined on time + tokens
    ("req-0005", 3000, 110, 0, 0, 500, 5),    # no server record: unmatched client
]
ICL_MS = 20  # every inter-chunk gap
NET_MS = 2   # client send -> server arrival, and last server output -> client

def client():
    out = []
    for i, (rid, off, ttft, q, p, isl, osl) in enumerate(REQS):
        start = T0 + off * MS
        e2e = ttft + ICL_MS * (osl - 1)
        md = {"session_num": i, "x_request_id": rid or None, "x_correlation_id": f"corr-{i:04d}",
              "conversation_id": f"session_{i:06d}", "turn_index": 0,
              "request_start_ns": start, "request_end_ns": start + e2e * MS,
              "benchmark_phase": "profiling", "was_cancelled": False}
        if not rid:
            del md["x_request_id"]
        metrics = {
            "time_to_first_token": {"value": float(ttft), "unit": "ms"},
            "request_latency": {"value": float(e2e), "unit": "ms"},
            "inter_chunk_latency": {"value": [float(ICL_MS)] * (osl - 1), "unit": "ms"},
            "usage_prompt_tokens": {"value": isl, "unit": "tokens"},
            "usage_completion_tokens": {"value": osl, "unit": "tokens"},
            "output_sequence_length": {"value": osl, "unit": "tokens"},
        }
        out.append(json.dumps({"metadata": md, "metrics": metrics, "error": None}, separators=(",", ":")))
    return "\n".join(out) + "\n"

def attr(k, v):
    if isinstance(v, str):
        return {"key": k, "value": {"stringValue": v}}
    if isinstance(v, int):
        return {"key": k, "value": {"intValue": str(v)}}
    return {"key": k, "value": {"doubleValue": v}}

def spans():
    sp = []
    for i, (rid, off, ttft, q, p, isl, osl) in enumerate(REQS):
        if i == 4:
            continue
        e2e = ttft + ICL_MS * (osl - 1)
        arrival = T0 + (off + NET_MS) * MS
        sid = f"chatcmpl-{rid}" if rid else "chatcmpl-0c1d2e3f4a5b6c7d"
        decode = ICL_MS * (osl - 1)
        span_ttft = ttft - 2 * NET_MS
        span_e2e = e2e - 2 * NET_MS
        sp.append({"traceId": f"{i+1:032x}", "spanId": f"{i+1:016x}", "parentSpanId": "", "name": "llm_request", "kind": 2,
                   "startTimeUnixNano": str(arrival), "endTimeUnixNano": str(arrival + span_e2e * MS),
                   "attributes": [attr("gen_ai.latency.time_to_first_token", span_ttft / 1000),
                                  attr("gen_ai.latency.e2e", span_e2e / 1000),
                                  attr("gen_ai.latency.time_in_queue", q / 1000),
                                  attr("gen_ai.latency.time_in_model_prefill", p / 1000),
                                  attr("gen_ai.latency.time_in_model_decode", decode / 1000),
                                  attr("gen_ai.latency.time_in_model_inference", (p + decode) / 1000),
                                  attr("gen_ai.usage.prompt_tokens", isl), attr("gen_ai.usage.completion_tokens", osl),
                                  attr("gen_ai.request.id", sid), attr("gen_ai.request.max_tokens", 64),
                                  attr("gen_ai.response.finish_reasons", '["length"]')],
                   "status": {}})
    # a server record no client sent (another client's request)
    arrival = T0 + 10_000 * MS
    sp.append({"traceId": f"{99:032x}", "spanId": f"{99:016x}", "parentSpanId": "", "name": "llm_request", "kind": 2,
               "startTimeUnixNano": str(arrival), "endTimeUnixNano": str(arrival + 300 * MS),
               "attributes": [attr("gen_ai.latency.time_to_first_token", 0.1), attr("gen_ai.latency.e2e", 0.3),
                              attr("gen_ai.latency.time_in_queue", 0.001), attr("gen_ai.latency.time_in_model_prefill", 0.05),
                              attr("gen_ai.latency.time_in_model_decode", 0.2), attr("gen_ai.usage.prompt_tokens", 999),
                              attr("gen_ai.usage.completion_tokens", 11), attr("gen_ai.request.id", "chatcmpl-req-0099")],
               "status": {}})
    doc = {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "vllm"), attr("vllm.instrumenting_module_name", "vllm.llm_engine")]},
                              "scopeSpans": [{"scope": {"name": "vllm.tracing.otel"}, "spans": sp}]}]}
    return json.dumps(doc, indent=1) + "\n"

def reqlog():
    # vLLM V1 request log (INFO, --enable-log-requests), local time = UTC here
    import datetime
    lines = []
    for i, (rid, off, ttft, q, p, isl, osl) in enumerate(REQS):
        if i in (3, 4):
            continue
        t = datetime.datetime.fromtimestamp((T0 + (off + NET_MS) * MS) / 1e9, datetime.timezone.utc)
        ts = t.strftime("%m-%d %H:%M:%S")
        lines.append(f"(APIServer pid=7) INFO {ts} [logger.py:49] Received request chatcmpl-{rid}: params: SamplingParams(n=1, temperature=0.0, max_tokens=64), lora_request: None.")
        lines.append(f"(APIServer pid=7) INFO {ts} [async_llm.py:382] Added request chatcmpl-{rid}-{0xa8a65d10 + i:08x}.")
        lines.append('(APIServer pid=7) INFO:     127.0.0.1:51408 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    return "\r\n".join(lines[:3]) + "\r\n" + "\n".join(lines[3:]) + "\n"

open("profile_export.jsonl", "w").write(client())
open("vllm-spans.json", "w").write(spans())
open("vllm-request.log", "w", newline="").write(reqlog())
