"""The Python side of `make bench`: a GenAI-Perf raw export parsed the way
GenAI-Perf's LLMProfileDataParser does (perf_analyzer 263c5f6,
genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py:
json.load of the whole file, the "data:" prefix removed from each response,
[DONE] dropped, each chunk json.loads'ed, responses with empty content
dropped), minus tokenization: N is usage.completion_tokens. Per request
TTFT, E2E, TPOT = (E2E - TTFT)/(N - 1), then numpy percentiles (linear,
GenAI-Perf's). Prints one JSON line. Run with /usr/bin/python3 and Debian's
python3-numpy.

usage: /usr/bin/python3 genaiperf_parse.py profile_export.json
"""
import json
import sys

import numpy as np


def main(path):
    with open(path, "rb") as f:
        data = json.load(f)
    ttft, e2e, tpot = [], [], []
    tokens = 0
    for exp in data["experiments"]:
        for req in exp["requests"]:
            t0 = req["timestamp"]
            times = []
            n = None
            for ts, out in zip(req["response_timestamps"], req["response_outputs"]):
                r = out.get("response", "")
                for part in r.split("\n\n"):
                    part = part.strip()
                    if not part.startswith("data:"):
                        continue
                    part = part[len("data:"):].strip()
                    if part == "[DONE]":
                        continue
                    chunk = json.loads(part)
                    if "error" in chunk:
                        continue
                    usage = chunk.get("usage")
                    if usage and usage.get("completion_tokens") is not None:
                        n = usage["completion_tokens"]
                    choices = chunk.get("choices") or []
                    if choices and (choices[0].get("delta") or {}).get("content"):
                        times.append(ts)
            if n is None or not times:
                continue  # failed request
            tokens += len(times)
            a, b = (times[0] - t0) / 1e6, (times[-1] - t0) / 1e6
            ttft.append(a)
            e2e.append(b)
            if n > 1:
                tpot.append((b - a) / (n - 1))
    p = [50, 90, 99]
    t, e, o = np.percentile(ttft, p), np.percentile(e2e, p), np.percentile(tpot, p)
    print(json.dumps({
        "requests": len(ttft), "token_events": tokens,
        "ttft_p50_ms": t[0], "ttft_p90_ms": t[1], "ttft_p99_ms": t[2],
        "e2e_p50_ms": e[0], "e2e_p90_ms": e[1], "e2e_p99_ms": e[2],
        "tpot_p50_ms": o[0], "tpot_p90_ms": o[1], "tpot_p99_ms": o[2],
    }))


if __name__ == "__main__":
    main(sys.argv[1])
