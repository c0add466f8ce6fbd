package synth

import (
	"bufio"
	"io"
	"strconv"
	"time"
)

// sglangTraceback is the error text SGLang keeps for a request whose stream
// broke after some tokens.
const sglangTraceback = "Traceback (most recent call last):\n  File \"/sgl-workspace/sglang/python/sglang/bench_serving.py\", line 418, in async_request_openai_chat_completions\n    async for chunk_bytes in response.content:\naiohttp.client_exceptions.ClientPayloadError: Response payload is not completed\n"

// SGLangFileName is bench_serving's default --output-file name for a
// random-dataset run: {backend}_{MMDD}_{num_prompts}_{in}_{out}.jsonl.
func SGLangFileName(m Model) string {
	return "sglang-oai-chat_" + time.Unix(0, m.StartNs).UTC().Format("0102") + "_" + strconv.Itoa(m.Requests) + "_" +
		strconv.Itoa(m.ISL) + "_" + strconv.Itoa(int(m.OSLMedian)) + ".jsonl"
}

// WriteSGLang writes m's requests as one line of `python -m
// sglang.bench_serving --output-details` (sgl-project/sglang 0033168
// python/sglang/bench_serving.py, the 2025 key set as in
// ingest/sglangbench/testdata/output-details line 2): run configuration,
// totals and statistics (E2E, TTFT, TPOT mean/median/std/p99, ITL also
// p95, in ms by numpy's rules up to the rounding of sums; concurrency =
// Σ latency / duration), then the per-request arrays input_lens,
// output_lens, ttfts (s), itls (lists of s), generated_texts, errors; and
// the true values to truth (nil: not written).
//
// The backend is sglang-oai-chat (OpenAI chat client: TTFT at the first
// content chunk, one ITL sample per chunk, output_len from usage); SGLang's
// per-request latency, which ends at the last stream line ([DONE]), feeds
// only its E2E, TPOT and concurrency statistics and is not saved per
// request, so a reader recovers E2E as ttft + Σ itls (the last token, to
// the ns). No start times are saved. A failed request has output_lens 0,
// errors "Too Many Requests" (no token: ttft 0.0, itls []) or a traceback
// (stream broken: the ttft and itls received kept). Closed-loop runs are
// --max-concurrency C with request_rate Infinity (Python's bare token).
func WriteSGLang(out, truth io.Writer, m Model) error {
	c, err := gatherColumns(m)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	rate, conc := "Infinity", strconv.Itoa(m.Concurrency)
	if m.RateRPS > 0 {
		rate, conc = pyFloatString(m.RateRPS), "null"
	}
	durS := float64(c.maxEndNs-c.firstNs+1_000_000) / 1e9
	inTok := c.completed * m.ISL
	var e2e, ttft, tpot []float64
	var sumLatS float64
	for i := 0; i < c.n; i++ {
		if c.fail[i] != failNone {
			continue
		}
		lat := float64(c.endNs[i]) / 1e6 // the last line, [DONE]
		e2e = append(e2e, lat)
		sumLatS += lat / 1e3
		ttft = append(ttft, float64(c.ttftNs[i])/1e6)
		if c.tokens[i] > 1 {
			tpot = append(tpot, (lat-float64(c.ttftNs[i])/1e6)/float64(c.tokens[i]-1))
		}
	}
	var b []byte
	b = append(b, `{"backend": "sglang-oai-chat", "dataset_name": "random", "request_rate": `+rate+`, "max_concurrency": `+conc+
		`, "sharegpt_output_len": null, "random_input_len": `...)
	b = strconv.AppendInt(b, int64(m.ISL), 10)
	b = append(b, `, "random_output_len": `...)
	b = strconv.AppendInt(b, int64(m.OSLMedian), 10)
	b = append(b, `, "random_range_ratio": 0.0, "duration": `...)
	b = pyFloat(b, durS)
	b = append(b, `, "completed": `...)
	b = strconv.AppendInt(b, int64(c.completed), 10)
	b = append(b, `, "total_input_tokens": `...)
	b = strconv.AppendInt(b, int64(inTok), 10)
	b = append(b, `, "total_output_tokens": `...)
	b = strconv.AppendInt(b, int64(c.outTokens), 10)
	b = append(b, `, "total_output_tokens_retokenized": `...)
	b = strconv.AppendInt(b, int64(c.outTokens), 10)
	b = append(b, `, "request_throughput": `...)
	b = pyFloat(b, float64(c.completed)/durS)
	b = append(b, `, "input_throughput": `...)
	b = pyFloat(b, float64(inTok)/durS)
	b = append(b, `, "output_throughput": `...)
	b = pyFloat(b, float64(c.outTokens)/durS)
	w.Write(b)
	statKeys(w, "e2e_latency", e2e, 99)
	statKeys(w, "ttft", ttft, 99)
	statKeys(w, "tpot", tpot, 99)
	statKeys(w, "itl", msOf(c.gapsOKNs), 95, 99)
	b = append(b[:0], `, "concurrency": `...)
	b = pyFloat(b, sumLatS/durS)
	b = append(b, `, "accept_length": null`...)
	w.Write(b)

	c.requestColumns(w, m)
	pyKey(w, "generated_texts", false)
	c.textsColumn(w, m)
	pyKey(w, "errors", false)
	pyList(w, c.n, func(b []byte, i int) []byte {
		switch c.fail[i] {
		case failBefore:
			return append(b, `"Too Many Requests"`...)
		case failMidway:
			return jsonString(b, sglangTraceback)
		}
		return append(b, `""`...)
	})
	w.WriteString("}\n")
	if err := w.Flush(); err != nil {
		return err
	}
	return writeTruth(truth, m)
}
