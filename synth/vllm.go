package synth

import (
	"bufio"
	"io"
	"path"
	"slices"
	"strconv"
	"time"
)

// vllmEpochNs is the time.perf_counter() reading (ns) of the first request
// in the files of WriteVLLM and WriteInferencePerf: a monotonic clock with
// an arbitrary origin (the machine's uptime on Linux).
const vllmEpochNs = 4_000_000_000_000

// vllmTraceback is the error text vLLM keeps for a request whose stream
// broke after some tokens (traceback.format_exception of aiohttp's error).
const vllmTraceback = "Traceback (most recent call last):\n  File \"/usr/lib/python3/dist-packages/vllm/benchmarks/lib/endpoint_request_func.py\", line 330, in async_request_openai_chat_completions\n    async for chunk_bytes in response.content:\naiohttp.client_exceptions.ClientPayloadError: Response payload is not completed\n"

// VLLMFileName is the name `vllm bench serve --save-result` gives the
// file of WriteVLLM: {backend}-{rate}qps[-concurrency{N}]-{model
// basename}-{date}.json.
func VLLMFileName(m Model) string {
	rate := "inf"
	conc := "-concurrency" + strconv.Itoa(m.Concurrency)
	if m.RateRPS > 0 {
		rate, conc = strconv.FormatFloat(m.RateRPS, 'f', 1, 64), ""
	}
	return "openai-chat-" + rate + "qps" + conc + "-" + path.Base(m.ModelName) + "-" + vllmDate(m) + ".json"
}

// vllmDate is the run's local date as vLLM writes it (YYYYMMDD-HHMMSS, UTC here).
func vllmDate(m Model) string {
	return time.Unix(0, m.StartNs).UTC().Format("20060102-150405")
}

// WriteVLLM writes m's requests as a `vllm bench serve --save-result
// --save-detailed` result (vllm-project/vllm 009e6d4 vllm/benchmarks/serve.py,
// the newest key set as in ingest/vllmbench/testdata/detailed-appended
// object 1): one json.dump object of run metadata, totals, the per-request
// arrays — input_lens, output_lens, ttfts (s), itls (lists of s),
// latencies (s), start_times (perf_counter s), queue_times, generated_texts,
// errors — then max_output_tokens_per_s, max_concurrent_requests, rtfx and
// the default statistics (mean, median, std, p99 of TTFT, TPOT and ITL in
// ms, by numpy's rules up to the rounding of sums), and the true values to
// truth (nil: not written).
//
// The run is the chat backend against a server that sends the role chunk
// with the first token, so vLLM's TTFT (first message with choices) is the
// first token's. Each token is one message: ttft + Σ itls = latency, to the
// ns. A failed request has output_lens 0 and latency 0.0 as vLLM writes
// them, errors "Too Many Requests" (an HTTP 429's reason, no token) or a
// traceback (stream broken after the ttft and itls it keeps). Closed-loop
// runs are written as --max-concurrency C with request_rate "inf" (queue
// times = start − first start), Poisson runs as --request-rate.
//
// Memory: a few numbers per request and the pooled gaps of completed
// requests (8 bytes each, for the ITL statistics); the arrays are written
// by re-running the generator.
func WriteVLLM(out, truth io.Writer, m Model) error {
	c, err := gatherColumns(m)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	rate, conc := `"inf"`, strconv.Itoa(m.Concurrency)
	if m.RateRPS > 0 {
		rate, conc = pyFloatString(m.RateRPS), "null"
	}
	durS := float64(c.maxEndNs-c.firstNs+1_000_000) / 1e9
	var b []byte
	b = append(b, `{"date": "`+vllmDate(m)+`", "endpoint_type": "openai-chat", "backend": "openai-chat", "label": null, "model_id": `...)
	b = jsonString(b, m.ModelName)
	b = append(b, `, "tokenizer_id": `...)
	b = jsonString(b, m.ModelName)
	b = append(b, `, "num_prompts": `...)
	b = strconv.AppendInt(b, int64(m.Requests), 10)
	b = append(b, `, "request_rate": `+rate+`, "burstiness": 1.0, "max_concurrency": `+conc+`, "duration": `...)
	b = pyFloat(b, durS)
	b = append(b, `, "completed": `...)
	b = strconv.AppendInt(b, int64(c.completed), 10)
	b = append(b, `, "failed": `...)
	b = strconv.AppendInt(b, int64(c.failed), 10)
	inTok := c.completed * m.ISL
	b = append(b, `, "total_input_tokens": `...)
	b = strconv.AppendInt(b, int64(inTok), 10)
	b = append(b, `, "total_output_tokens": `...)
	b = strconv.AppendInt(b, int64(c.outTokens), 10)
	b = append(b, `, "request_throughput": `...)
	b = pyFloat(b, float64(c.completed)/durS)
	b = append(b, `, "request_goodput": null, "output_throughput": `...)
	b = pyFloat(b, float64(c.outTokens)/durS)
	b = append(b, `, "total_token_throughput": `...)
	b = pyFloat(b, float64(inTok+c.outTokens)/durS)
	w.Write(b)

	c.requestColumns(w, m)
	pyKey(w, "latencies", false)
	pyList(w, c.n, func(b []byte, i int) []byte {
		if c.fail[i] != failNone {
			return append(b, "0.0"...)
		}
		return pySec(b, c.lastNs[i])
	})
	pyKey(w, "start_times", false)
	pyList(w, c.n, func(b []byte, i int) []byte { return pySec(b, vllmEpochNs+c.startNs[i]-m.StartNs) })
	pyKey(w, "queue_times", false)
	pyList(w, c.n, func(b []byte, i int) []byte {
		if m.RateRPS > 0 {
			return append(b, "0.0"...)
		}
		return pySec(b, c.startNs[i]-c.firstNs)
	})
	pyKey(w, "generated_texts", false)
	c.textsColumn(w, m)
	pyKey(w, "errors", false)
	pyList(w, c.n, func(b []byte, i int) []byte {
		switch c.fail[i] {
		case failBefore:
			return append(b, `"Too Many Requests"`...)
		case failMidway:
			return jsonString(b, vllmTraceback)
		}
		return append(b, `""`...)
	})

	// max_output_tokens_per_s: one token per message at start + ttft +
	// Σ itl, in 1 s bins from the first start; max_concurrent_requests: the
	// peak of [start, start + latency) over completed requests.
	var bins []int
	type edge struct {
		t int64
		d int
	}
	var edges []edge
	c.each(m, func(r *Request) {
		if r.fail != failNone {
			return
		}
		for _, t := range r.TokenNs {
			k := int((r.StartNs + t - c.firstNs) / 1_000_000_000)
			for len(bins) <= k {
				bins = append(bins, 0)
			}
			bins[k]++
		}
		edges = append(edges, edge{r.StartNs, 1}, edge{r.StartNs + r.E2ENs(), -1})
	})
	slices.SortFunc(edges, func(a, b edge) int {
		if a.t != b.t {
			return int(min(max(a.t-b.t, -1), 1))
		}
		return a.d - b.d // ends first
	})
	peak, cur := 0, 0
	for _, e := range edges {
		cur += e.d
		peak = max(peak, cur)
	}
	b = append(b[:0], `, "max_output_tokens_per_s": `...)
	b = pyFloat(b, float64(slices.Max(append(bins, 0))))
	b = append(b, `, "max_concurrent_requests": `...)
	b = strconv.AppendInt(b, int64(peak), 10)
	b = append(b, `, "rtfx": 0.0`...)
	w.Write(b)

	var ttft, tpot []float64
	for i := 0; i < c.n; i++ {
		if c.fail[i] != failNone {
			continue
		}
		ttft = append(ttft, float64(c.ttftNs[i])/1e6)
		if c.tokens[i] > 1 {
			tpot = append(tpot, float64(c.lastNs[i]-c.ttftNs[i])/1e6/float64(c.tokens[i]-1))
		}
	}
	statKeys(w, "ttft", ttft, 99)
	statKeys(w, "tpot", tpot, 99)
	statKeys(w, "itl", msOf(c.gapsOKNs), 99)
	w.WriteByte('}')
	if err := w.Flush(); err != nil {
		return err
	}
	return writeTruth(truth, m)
}

// writeTruth writes truth.csv for m (nothing when truth is nil).
func writeTruth(truth io.Writer, m Model) error {
	if truth == nil {
		return nil
	}
	g, err := NewGenerator(m)
	if err != nil {
		return err
	}
	tw := newTruthWriter(truth)
	for {
		r, ok := g.Next()
		if !ok {
			break
		}
		if err := tw.write(r); err != nil {
			return err
		}
	}
	return tw.flush()
}

// pyFloatString is Python's repr of v.
func pyFloatString(v float64) string { return string(pyFloat(nil, v)) }
