package synth

import (
	"io"
	"strconv"
)

// WriteInferencePerf writes m's requests as inference-perf's
// per_request_lifecycle_metrics.json in the v0.6+ layout
// (kubernetes-sigs/inference-perf 7de5ef2 reportgen/base.py; as
// ingest/inferenceperf/testdata/head-2stages): a JSON array written with
// json.dumps(indent=2), one record per request with start_time and
// end_time (time.perf_counter() seconds: the stream's end, after [DONE]),
// the request body, the raw SSE response, info.request_metrics and
// info.response_metrics {output_tokens, server_usage, response_chunks (the
// content chunks), chunk_times, output_token_times} and error; and the
// true values to truth (nil: not written).
//
// The stream is vLLM's completions stream (as the fixtures): one chunk per
// token with its text, finish_reason on the last, a usage chunk, [DONE].
// Every token is its own chunk, so output_token_times equal chunk_times
// and output_tokens (the client's re-tokenized count) is N. A failed
// request has response_metrics null and error {error_type, error_msg}:
// "HTTP Error 429" with the error body (no token), or ClientPayloadError
// (stream broken; inference-perf keeps no partial times).
func WriteInferencePerf(out, truth io.Writer, m Model) error {
	// The request body, as Python json.dumps writes it.
	var body []byte
	body = append(body, `{"model": `...)
	body = jsonString(body, m.ModelName)
	body = append(body, `, "prompt": "`...)
	for i := 0; i < m.ISL; i++ {
		body = append(body, vocab[i%len(vocab)]...)
	}
	body = append(body, `", "max_tokens": `...)
	bodyTail := `, "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true}}`
	model := jsonString(nil, m.ModelName)
	var b, raw, chunk []byte
	return streamJSONArray(out, truth, m, func(r *Request) []byte {
		base := vllmEpochNs + r.StartNs - m.StartNs
		id := "cmpl-" + r.ID[len("chatcmpl-"):]
		created := strconv.FormatInt(r.StartNs/1_000_000_000, 10)
		n := r.N()
		b = append(b[:0], "\n  {\n    \"start_time\": "...)
		b = pySec(b, base)
		b = append(b, ",\n    \"end_time\": "...)
		b = pySec(b, base+r.EndNs)
		b = append(b, ",\n    \"request\": "...)
		req := strconv.AppendInt(append([]byte(nil), body...), int64(max(n, 1)), 10)
		b = jsonString(b, string(append(req, bodyTail...)))
		b = append(b, ",\n    \"response\": "...)
		var chunks [][]byte
		switch r.fail {
		case failBefore:
			b = append(b, `"{\"error\": {\"message\": \"Rate limit exceeded\", \"type\": \"RateLimitError\"}}"`...)
		case failMidway:
			b = append(b, `""`...)
		default:
			raw = raw[:0]
			for i, wd := range r.Words {
				chunk = append(chunk[:0], `{"id":"`...)
				chunk = append(chunk, id...)
				chunk = append(chunk, `","object":"text_completion","created":`...)
				chunk = append(chunk, created...)
				chunk = append(chunk, `,"model":`...)
				chunk = append(chunk, model...)
				chunk = append(chunk, `,"choices":[{"index":0,"text":"`...)
				chunk = append(chunk, vocab[wd]...)
				chunk = append(chunk, `","logprobs":null,"finish_reason":`...)
				if i == n-1 {
					chunk = append(chunk, `"length"`...)
				} else {
					chunk = append(chunk, "null"...)
				}
				chunk = append(chunk, `,"stop_reason":null}]}`...)
				raw = append(raw, "data: "...)
				raw = append(raw, chunk...)
				raw = append(raw, "\n\n"...)
				chunks = append(chunks, append([]byte(nil), chunk...))
			}
			raw = append(raw, `data: {"id":"`...)
			raw = append(raw, id...)
			raw = append(raw, `","object":"text_completion","created":`...)
			raw = append(raw, created...)
			raw = append(raw, `,"model":`...)
			raw = append(raw, model...)
			raw = append(raw, `,"choices":[],"usage":{"prompt_tokens":`...)
			raw = strconv.AppendInt(raw, int64(m.ISL), 10)
			raw = append(raw, `,"total_tokens":`...)
			raw = strconv.AppendInt(raw, int64(m.ISL+n), 10)
			raw = append(raw, `,"completion_tokens":`...)
			raw = strconv.AppendInt(raw, int64(n), 10)
			raw = append(raw, "}}\n\ndata: [DONE]\n\n"...)
			b = jsonString(b, string(raw))
		}
		b = append(b, ",\n    \"info\": {\n      \"request_metrics\": {\n        \"text\": {\n          \"input_tokens\": "...)
		b = strconv.AppendInt(b, int64(m.ISL), 10)
		b = append(b, "\n        },\n        \"image\": null,\n        \"video\": null,\n        \"audio\": null\n      },\n      \"response_metrics\": "...)
		if r.fail != failNone {
			b = append(b, "null"...)
		} else {
			b = append(b, "{\n        \"output_tokens\": "...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, ",\n        \"server_usage\": {\n          \"prompt_tokens\": "...)
			b = strconv.AppendInt(b, int64(m.ISL), 10)
			b = append(b, ",\n          \"total_tokens\": "...)
			b = strconv.AppendInt(b, int64(m.ISL+n), 10)
			b = append(b, ",\n          \"completion_tokens\": "...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, "\n        },\n        \"response_chunks\": ["...)
			for i, c := range chunks {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, "\n          "...)
				b = jsonString(b, string(c))
			}
			b = append(b, "\n        ],\n        \"chunk_times\": ["...)
			times := func() {
				for i, t := range r.TokenNs {
					if i > 0 {
						b = append(b, ',')
					}
					b = append(b, "\n          "...)
					b = pySec(b, base+t)
				}
			}
			times()
			b = append(b, "\n        ],\n        \"output_token_times\": ["...)
			times()
			b = append(b, "\n        ]\n      }"...)
		}
		b = append(b, ",\n      \"extra_info\": {},\n      \"lora_adapter\": null,\n      \"labels\": {}\n    },\n    \"error\": "...)
		switch r.fail {
		case failBefore:
			b = append(b, "{\n      \"error_type\": \"HTTP Error 429\",\n      \"error_msg\": \"{\\\"error\\\": {\\\"message\\\": \\\"Rate limit exceeded\\\", \\\"type\\\": \\\"RateLimitError\\\"}}\"\n    }"...)
		case failMidway:
			b = append(b, "{\n      \"error_type\": \"ClientPayloadError\",\n      \"error_msg\": \"Response payload is not completed\"\n    }"...)
		default:
			b = append(b, "null"...)
		}
		b = append(b, "\n  }"...)
		return b
	})
}
