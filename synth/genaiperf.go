package synth

import (
	"bufio"
	"io"
	"strconv"
	"unicode/utf8"
)

// WriteGenAIPerf writes m's requests as a GenAI-Perf raw export
// (profile_export.json) to out and their true values (see WriteTruth) to
// truth (nil: not written), streaming: memory does not grow with the
// number of requests.
//
// The layout is perf_analyzer's (profile_data_exporter.cc, perf_analyzer
// 263c5f6; testdata/genai-perf real files): compact JSON, one experiment
// ({"mode":"concurrency","value":C} or "request_rate"), requests with
// "timestamp", "request_inputs" {"payload": "<the request JSON>"},
// "response_timestamps" and "response_outputs" [{"response": "<bytes of
// one read>"}], then "window_boundaries", "version", "service_kind",
// "endpoint". Each read holds one SSE message in vLLM's chat chunk shape:
// a role chunk (at the first token's time), one content chunk per token, a
// finish_reason chunk, a usage chunk (completion_tokens = N) and "[DONE]".
// A request failing before its first token has one read holding an error
// body ({"error":{"message":…,"code":429}}); one failing mid-stream ends
// with "data: {\"error\":…}" after its tokens.
func WriteGenAIPerf(out, truth io.Writer, m Model) error {
	var b genaiBuf
	b.model = jsonString(nil, m.ModelName)
	b.payloadHead = payloadHead(m)
	b.isl = m.ISL
	return writeGenAIPerfExport(out, truth, m, b.request)
}

// writeGenAIPerfExport writes the export's frame — one experiment of m's
// load mode, the requests (each from request), window_boundaries from the
// first start to the last end, perf_analyzer's version fields — streaming.
func writeGenAIPerfExport(out, truth io.Writer, m Model, request func(r *Request) []byte) error {
	first, last := int64(-1), int64(0)
	return streamRun(out, truth, m, func(w *bufio.Writer) {
		mode, value := "concurrency", strconv.Itoa(m.Concurrency)
		if m.RateRPS > 0 {
			mode, value = "request_rate", strconv.FormatFloat(m.RateRPS, 'g', -1, 64)
		}
		w.WriteString(`{"experiments":[{"experiment":{"mode":"` + mode + `","value":` + value + `},"requests":[`)
	}, func(w *bufio.Writer, r *Request) error {
		if r.Key > 0 {
			w.WriteByte(',')
		}
		if first < 0 {
			first = r.StartNs
		}
		last = max(last, r.StartNs+r.EndNs)
		_, err := w.Write(request(r))
		return err
	}, func(w *bufio.Writer) {
		w.WriteString(`],"window_boundaries":[`)
		if first >= 0 {
			w.WriteString(strconv.FormatInt(first, 10) + "," + strconv.FormatInt(last, 10))
		}
		w.WriteString(`]}],"version":"2.54.0","service_kind":"openai","endpoint":"v1/chat/completions"}`)
	})
}

// genaiBuf builds one request's JSON, reusing its buffers.
type genaiBuf struct {
	model       []byte // the model name as a JSON string
	payloadHead []byte // the payload JSON up to max_tokens' value
	out, inner  []byte
	ts          []int64
	isl         int // usage.prompt_tokens
}

func payloadHead(m Model) []byte {
	p := []byte(`{"model":`)
	p = jsonString(p, m.ModelName)
	p = append(p, `,"messages":[{"role":"user","content":"`...)
	for i := 0; i < m.ISL; i++ {
		p = append(p, vocab[i%len(vocab)]...)
	}
	p = append(p, `"}],"max_tokens":`...)
	return p
}

func (b *genaiBuf) request(r *Request) []byte {
	o := b.out[:0]
	o = append(o, `{"timestamp":`...)
	o = strconv.AppendInt(o, r.StartNs, 10)
	o = append(o, `,"request_inputs":{"payload":`...)
	p := append(b.inner[:0], b.payloadHead...)
	p = strconv.AppendInt(p, int64(max(r.N(), 1)), 10)
	p = append(p, `,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`...)
	o = jsonString(o, string(p))
	o = append(o, `},"response_timestamps":[`...)
	ts := b.ts[:0]
	if r.fail != failBefore && r.N() > 0 {
		ts = append(ts, r.TokenNs[0]) // the role chunk arrives with the first token
	}
	ts = append(ts, r.TokenNs...)
	switch r.fail {
	case failNone:
		ts = append(ts, r.FinishNs, r.UsageNs, r.DoneNs)
	default:
		ts = append(ts, r.EndNs)
	}
	for i, t := range ts {
		if i > 0 {
			o = append(o, ',')
		}
		o = strconv.AppendInt(o, r.StartNs+t, 10)
	}
	b.ts = ts
	o = append(o, `],"response_outputs":[`...)
	created := strconv.FormatInt(r.StartNs/1_000_000_000, 10)
	chunk := func(o []byte, delta, finish string) []byte {
		c := append(b.inner[:0], `data: {"id":"`...)
		c = append(c, r.ID...)
		c = append(c, `","object":"chat.completion.chunk","created":`...)
		c = append(c, created...)
		c = append(c, `,"model":`...)
		c = append(c, b.model...)
		c = append(c, `,"choices":[{"index":0,"delta":`...)
		c = append(c, delta...)
		c = append(c, `,"logprobs":null,"finish_reason":`...)
		c = append(c, finish...)
		c = append(c, "}]}\n\n"...)
		b.inner = c
		o = append(o, `{"response":`...)
		o = jsonString(o, string(c))
		return append(o, '}')
	}
	n := 0
	if r.fail != failBefore && r.N() > 0 {
		o = chunk(o, `{"role":"assistant"}`, "null")
		n++
	}
	for _, w := range r.Words {
		o = append(o, ',')
		o = chunk(o, `{"content":"`+vocab[w]+`"}`, "null")
		n++
	}
	switch r.fail {
	case failNone:
		o = append(o, ',')
		o = chunk(o, `{"content":""}`, `"length"`)
		c := append(b.inner[:0], `data: {"id":"`...)
		c = append(c, r.ID...)
		c = append(c, `","object":"chat.completion.chunk","created":`...)
		c = append(c, created...)
		c = append(c, `,"model":`...)
		c = append(c, b.model...)
		c = append(c, `,"choices":[],"usage":{"prompt_tokens":`...)
		c = strconv.AppendInt(c, int64(b.isl), 10)
		c = append(c, `,"total_tokens":`...)
		c = strconv.AppendInt(c, int64(b.isl+r.N()), 10)
		c = append(c, `,"completion_tokens":`...)
		c = strconv.AppendInt(c, int64(r.N()), 10)
		c = append(c, "}}\n\n"...)
		b.inner = c
		o = append(o, `,{"response":`...)
		o = jsonString(o, string(c))
		o = append(o, `},{"response":"data: [DONE]\n\n"}`...)
	case failBefore:
		o = append(o, `{"response":"{\"error\":{\"message\":\"Rate limit exceeded\",\"code\":429}}"}`...)
	case failMidway:
		if n > 0 {
			o = append(o, ',')
		}
		o = append(o, `{"response":"data: {\"error\":{\"message\":\"upstream connection reset\",\"type\":\"server_error\",\"code\":502}}\n\n"}`...)
	}
	o = append(o, "]}"...)
	b.out = o
	return o
}

// jsonString appends s as a JSON string (quotes included), escaping as
// RapidJSON's Writer does (perf_analyzer's JSON library): '"', '\\' and
// control characters; non-ASCII UTF-8 is written as is.
func jsonString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, `\u00`...)
			dst = append(dst, "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
