package synth

import (
	"io"
	"strconv"
)

// WriteLLMPerf writes m's requests as an LLMPerf individual_responses.json
// (a JSON array, json.dump(indent=4) layout, the keys and order of
// testdata/llmperf; token_benchmark_ray.py) and their true values to truth
// (nil: not written), streaming.
//
// LLMPerf keeps durations in float seconds and no per-token times or start
// times: ttft_s and end_to_end_latency_s (the stream's end, after [DONE])
// are float64(ns)/1e9, which still round back to the ns; the last token's
// time survives only as inter_token_latency_s = (t_last − start)/N_tok
// (LLMPerf afd137a..f1d6bed, time_to_next_token summed from the request
// start, divided by number_output_tokens), so an importer recovers E2E and
// TPOT through a float product (ITL·N_tok·1e9, rounded: exact in practice,
// the error being ~1e-6 ns for runs of minutes, but not guaranteed), and
// request start times not at all (no start, no throughput, no ITL). The
// summary.json beside it (WriteLLMPerfSummary) dates the run so that
// importers know that version. number_output_tokens counts a BOS token, as LLMPerf's Llama
// tokenizer does: N + 1. A failed request has error_code 429 (before any
// token: all durations 0) or 502 (mid-stream: TTFT kept when a token
// arrived).
func WriteLLMPerf(out, truth io.Writer, m Model) error {
	var b []byte
	return streamJSONArray(out, truth, m, func(r *Request) []byte {
		b = llmperfRow(b[:0], r, m.ISL)
		return b
	})
}

func pySec(b []byte, ns int64) []byte { return pyFloat(b, float64(ns)/1e9) }

func llmperfRow(b []byte, r *Request, isl int) []byte {
	n := r.N()
	nTok := n + 1 // the BOS token LLMPerf's tokenizer adds
	b = append(b, "\n    {\n        \"error_code\": "...)
	switch {
	case r.Status == StatusOK:
		b = append(b, "null,\n        \"error_msg\": \"\",\n"...)
	case r.fail == failBefore:
		b = append(b, "429,\n        \"error_msg\": \"Rate limit exceeded\",\n"...)
	default:
		b = append(b, "502,\n        \"error_msg\": \"upstream connection reset\",\n"...)
	}
	var itlNs, ttftNs, e2eNs int64
	if n > 0 {
		ttftNs, e2eNs = r.TTFTNs(), r.EndNs
		itlNs = r.E2ENs()
	}
	b = append(b, "        \"inter_token_latency_s\": "...)
	if n > 0 {
		b = pyFloat(b, float64(itlNs)/1e9/float64(nTok))
	} else {
		b = append(b, '0')
	}
	b = append(b, ",\n        \"ttft_s\": "...)
	if n > 0 {
		b = pySec(b, ttftNs)
	} else {
		b = append(b, '0')
	}
	b = append(b, ",\n        \"end_to_end_latency_s\": "...)
	if n > 0 {
		b = pySec(b, e2eNs)
	} else {
		b = append(b, '0')
	}
	b = append(b, ",\n        \"request_output_throughput_token_per_s\": "...)
	if n > 0 {
		b = pyFloat(b, float64(nTok)/(float64(e2eNs)/1e9))
	} else {
		b = append(b, '0')
	}
	outTok := nTok
	if n == 0 {
		outTok = 0
	}
	b = append(b, ",\n        \"number_total_tokens\": "...)
	b = strconv.AppendInt(b, int64(isl+outTok), 10)
	b = append(b, ",\n        \"number_output_tokens\": "...)
	b = strconv.AppendInt(b, int64(outTok), 10)
	b = append(b, ",\n        \"number_input_tokens\": "...)
	b = strconv.AppendInt(b, int64(isl), 10)
	return append(b, "\n    }"...)
}

// LLMPerfTimestamp is the summary timestamp WriteLLMPerfSummary writes:
// 2024-06-01, between LLMPerf commits afd137a and f1d6bed, whose rows the
// rows of WriteLLMPerf follow (inter_token_latency_s divided by
// number_output_tokens).
const LLMPerfTimestamp = 1717200000

// WriteLLMPerfSummary writes the summary.json that goes beside
// individual_responses.json: the configuration keys LLMPerf writes first
// and its timestamp (which tells importers the LLMPerf version), without
// results_* statistics.
func WriteLLMPerfSummary(out io.Writer, m Model) error {
	b := []byte("{\n    \"version\": \"2023-08-31\",\n    \"name\": ")
	name := "synthetic_" + strconv.Itoa(m.ISL) + "_" + strconv.Itoa(int(m.OSLMedian)) + "_summary"
	b = jsonString(b, name)
	b = append(b, ",\n    \"model\": "...)
	b = jsonString(b, m.ModelName)
	b = append(b, ",\n    \"mean_input_tokens\": "...)
	b = strconv.AppendInt(b, int64(m.ISL), 10)
	b = append(b, ",\n    \"stddev_input_tokens\": 0,\n    \"mean_output_tokens\": "...)
	b = strconv.AppendInt(b, int64(m.OSLMedian), 10)
	b = append(b, ",\n    \"stddev_output_tokens\": 0,\n    \"num_concurrent_requests\": "...)
	b = strconv.AppendInt(b, int64(max(m.Concurrency, 1)), 10)
	b = append(b, ",\n    \"timestamp\": "...)
	b = strconv.AppendInt(b, LLMPerfTimestamp, 10)
	b = append(b, "\n}"...)
	_, err := out.Write(b)
	return err
}
