package synth

import (
	"io"
	"math/rand/v2"
	"strconv"
)

// WriteGenAIPerfVaried writes m's requests as a GenAI-Perf raw export like
// WriteGenAIPerf — the same requests, times and truth.csv for the same
// Model — but with SSE chunks that vary the way real servers' streams do,
// instead of chunks that differ only in their token:
//
//   - four server styles, drawn per request: vLLM (chatcmpl- id and
//     created fixed per request, role chunk {"role":"assistant",
//     "content":""}, reasoning in delta.reasoning_content, a usage chunk
//     with empty choices); OpenAI (service_tier, system_fingerprint,
//     "usage":null on every chunk, a per-chunk "obfuscation" string of
//     random length, a trailing usage chunk); OpenRouter (gen- id, provider,
//     created taken per chunk from its arrival second, reasoning in
//     delta.reasoning, usage on the finish chunk with native_finish_reason);
//     a gateway (a fresh id on every chunk, Python json.dumps escaping of
//     non-ASCII text as \uXXXX, vLLM's continuous_usage_stats: a running
//     usage object on every chunk, then the final usage chunk);
//   - reasoning: 30% of the requests of the vLLM, OpenRouter and gateway
//     styles with N ≥ 2 send their first 20–60% tokens as reasoning, the
//     rest as content; usage reports completion_tokens_details.reasoning_tokens;
//   - tool calls: 5% of the completed requests with at least four content
//     tokens send their last three tokens as tool-call delta chunks (the
//     call's id and name, then two argument fragments) instead of content,
//     and finish_reason "tool_calls";
//   - token texts of 1–3 words from a vocabulary with quotes, backslashes,
//     newlines, tabs and non-ASCII text (accents, CJK, an emoji), which the
//     file's JSON-in-JSON strings escape twice;
//   - errors before the first token as vLLM's {"object":"error",…} body or
//     OpenAI's {"error":{…}} body.
//
// Every token is still one SSE message in one read, each counted in
// usage.completion_tokens (tool-call tokens included: they are generated
// output, as vLLM counts them, and under the canonical convention a
// tool-call delta is a token message), so the truth of WriteGenAIPerf
// holds unchanged: TTFT and E2E at the first and last token message. The variations are drawn from their
// own random stream: the requests are those of WriteGenAIPerf.
func WriteGenAIPerfVaried(out, truth io.Writer, m Model) error {
	var b variedBuf
	b.rng = rand.New(rand.NewPCG(m.Seed, 0x7a71ed))
	b.model = jsonString(nil, m.ModelName)
	b.payloadHead = payloadHead(m)
	b.isl = m.ISL
	return writeGenAIPerfExport(out, truth, m, b.request)
}

// Server styles of WriteGenAIPerfVaried.
const (
	styleVLLM = iota
	styleOpenAI
	styleOpenRouter
	styleGateway
	numStyles
)

// variedVocab are the varied stream's token texts: quotes, backslashes,
// newlines, tabs and non-ASCII runes among plain words.
var variedVocab = [...]string{
	" the", " model", " token", " latency", "\n", "\n\n", " \"quoted\"", " C:\\tmp\\x",
	" café", " naïve", " 中文", " 🙂", "\t", " decode", " prefill", ",", ".", " Straße",
	" {\"k\": 1}", " α", " GPU", " cache", " we", " queue", " and", " of", " a", " to",
}

// variedBuf builds one request's JSON, reusing its buffers.
type variedBuf struct {
	rng         *rand.Rand
	model       []byte
	payloadHead []byte
	isl         int
	out, inner  []byte
	text        []byte
	ts          []int64
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func (b *variedBuf) alnum(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, base62[b.rng.IntN(len(base62))])
	}
	return dst
}

func (b *variedBuf) hex(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, "0123456789abcdef"[b.rng.IntN(16)])
	}
	return dst
}

// pyString appends s as Python's json.dumps writes it (ensure_ascii):
// non-ASCII as \uXXXX (surrogate pairs above U+FFFF).
func pyString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"':
			dst = append(dst, '\\', '"')
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20 || c >= 0x7f:
			if c > 0xffff {
				c -= 0x10000
				dst = appendU(dst, 0xd800+(c>>10))
				dst = appendU(dst, 0xdc00+(c&0x3ff))
				continue
			}
			dst = appendU(dst, c)
		default:
			dst = append(dst, byte(c))
		}
	}
	return append(dst, '"')
}

func appendU(dst []byte, c rune) []byte {
	const hx = "0123456789abcdef"
	return append(dst, '\\', 'u', hx[c>>12&15], hx[c>>8&15], hx[c>>4&15], hx[c&15])
}

func (b *variedBuf) request(r *Request) []byte {
	rng := b.rng
	style := rng.IntN(numStyles)
	n := r.N()
	reasoning := 0
	if style != styleOpenAI && n >= 2 && rng.Float64() < 0.3 {
		reasoning = max(1, min(n-1, int(float64(n)*(0.2+0.4*rng.Float64()))))
	}
	tools := r.fail == failNone && rng.Float64() < 0.05 && n-reasoning >= 4
	finish := `"length"`
	if tools {
		finish = `"tool_calls"`
	} else if rng.IntN(2) == 0 {
		finish = `"stop"`
	}
	// Per-request identity.
	var id, fp, provider []byte
	created := r.StartNs / 1_000_000_000
	switch style {
	case styleVLLM:
		id = append(id, r.ID...)
	case styleOpenAI:
		id = b.alnum(append(id, "chatcmpl-"...), 29)
		fp = b.hex(append(fp, "fp_"...), 10)
	case styleOpenRouter:
		id = strconv.AppendInt(append(id, "gen-"...), created, 10)
		id = b.alnum(append(id, '-'), 20)
		provider = append(provider, [...]string{"DeepInfra", "Together", "Fireworks", "Novita"}[rng.IntN(4)]...)
	}

	o := b.out[:0]
	o = append(o, `{"timestamp":`...)
	o = strconv.AppendInt(o, r.StartNs, 10)
	o = append(o, `,"request_inputs":{"payload":`...)
	p := append(b.inner[:0], b.payloadHead...)
	p = strconv.AppendInt(p, int64(max(n, 1)), 10)
	p = append(p, `,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`...)
	o = jsonString(o, string(p))
	o = append(o, `},"response_timestamps":[`...)

	// The messages' times, in order: role chunk (with the first token),
	// tokens (the last three tool-call deltas with tools), finish (with usage for OpenRouter), usage,
	// [DONE]; or the error.
	ts := b.ts[:0]
	if r.fail != failBefore && n > 0 {
		ts = append(ts, r.TokenNs[0])
	}
	ts = append(ts, r.TokenNs...)
	switch r.fail {
	case failNone:
		ts = append(ts, r.FinishNs)
		if style != styleOpenRouter {
			ts = append(ts, r.UsageNs)
		}
		ts = append(ts, r.DoneNs)
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

	sent := 0 // token messages so far (the gateway's running usage)
	// chunk appends one SSE chunk as a "response" string: head fields by
	// style, then choices with delta (a JSON object) and finish_reason,
	// then the style's trailing fields; usage (if not nil) replaces them.
	chunk := func(o []byte, at int64, delta []byte, fin string, usage []byte, noChoices bool) []byte {
		c := append(b.inner[:0], "data: {"...)
		c = append(c, `"id":"`...)
		if style == styleGateway {
			c = b.hex(append(c, "chatcmpl-"...), 32)
		} else {
			c = append(c, id...)
		}
		c = append(c, `","object":"chat.completion.chunk","created":`...)
		if style == styleOpenRouter {
			c = strconv.AppendInt(c, (r.StartNs+at)/1_000_000_000, 10)
		} else {
			c = strconv.AppendInt(c, created, 10)
		}
		c = append(c, `,"model":`...)
		c = append(c, b.model...)
		switch style {
		case styleOpenAI:
			c = append(c, `,"service_tier":"default","system_fingerprint":"`...)
			c = append(c, fp...)
			c = append(c, '"')
		case styleOpenRouter:
			c = append(c, `,"provider":"`...)
			c = append(c, provider...)
			c = append(c, '"')
		}
		if noChoices {
			c = append(c, `,"choices":[]`...)
		} else {
			c = append(c, `,"choices":[{"index":0,"delta":`...)
			c = append(c, delta...)
			c = append(c, `,"logprobs":null,"finish_reason":`...)
			c = append(c, fin...)
			if style == styleOpenRouter && fin != "null" {
				c = append(c, `,"native_finish_reason":`...)
				c = append(c, fin...)
			}
			if style == styleVLLM || style == styleGateway {
				c = append(c, `,"stop_reason":null`...)
			}
			c = append(c, "}]"...)
		}
		switch {
		case usage != nil:
			c = append(c, `,"usage":`...)
			c = append(c, usage...)
		case style == styleOpenAI:
			c = append(c, `,"usage":null`...)
		case style == styleGateway:
			c = append(c, `,"usage":{"prompt_tokens":`...)
			c = strconv.AppendInt(c, int64(b.isl), 10)
			c = append(c, `,"total_tokens":`...)
			c = strconv.AppendInt(c, int64(b.isl+sent), 10)
			c = append(c, `,"completion_tokens":`...)
			c = strconv.AppendInt(c, int64(sent), 10)
			c = append(c, '}')
		}
		if style == styleOpenAI {
			c = b.alnum(append(c, `,"obfuscation":"`...), 1+rng.IntN(16))
			c = append(c, '"')
		}
		c = append(c, "}\n\n"...)
		b.inner = c
		o = append(o, `{"response":`...)
		o = jsonString(o, string(c))
		return append(o, '}')
	}
	// Non-ASCII text as is (vLLM, OpenAI, OpenRouter) or \u-escaped.
	str := jsonString
	if style == styleGateway {
		str = pyString
	}
	var delta []byte
	k := 0 // index into ts
	if r.fail != failBefore && n > 0 {
		switch style {
		case styleOpenAI:
			delta = append(delta[:0], `{"role":"assistant","content":"","refusal":null}`...)
		case styleOpenRouter:
			delta = append(delta[:0], `{"role":"assistant","content":""}`...)
		default:
			delta = append(delta[:0], `{"role":"assistant","content":""}`...)
		}
		o = chunk(o, ts[k], delta, "null", nil, false)
		k++
	}
	var toolDeltas []string
	if tools {
		call := b.alnum([]byte(`call_`), 24)
		toolDeltas = []string{
			`{"tool_calls":[{"index":0,"id":"` + string(call) + `","type":"function","function":{"name":"get_weather","arguments":""}}]}`,
			`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]}`,
			`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`,
		}
	}
	for i := range r.Words {
		t := b.text[:0]
		words := 1 // 80% one word, 15% two, 5% three
		if u := rng.Float64(); u >= 0.95 {
			words = 3
		} else if u >= 0.8 {
			words = 2
		}
		for ; words > 0; words-- {
			t = append(t, variedVocab[rng.IntN(len(variedVocab))]...)
		}
		b.text = t
		sent++
		delta = delta[:0]
		if j := i - (len(r.Words) - len(toolDeltas)); j >= 0 {
			// the reply ends in a tool call: its last tokens are the call
			o = append(o, ',')
			o = chunk(o, ts[k], []byte(toolDeltas[j]), "null", nil, false)
			k++
			continue
		}
		if i < reasoning {
			if style == styleOpenRouter {
				delta = append(delta, `{"role":"assistant","content":"","reasoning":`...)
			} else {
				delta = append(delta, `{"reasoning_content":`...)
			}
		} else {
			delta = append(delta, `{"content":`...)
		}
		delta = str(delta, string(t))
		delta = append(delta, '}')
		o = append(o, ',')
		o = chunk(o, ts[k], delta, "null", nil, false)
		k++
	}
	usage := func() []byte {
		u := []byte(`{"prompt_tokens":`)
		u = strconv.AppendInt(u, int64(b.isl), 10)
		u = append(u, `,"total_tokens":`...)
		u = strconv.AppendInt(u, int64(b.isl+n), 10)
		u = append(u, `,"completion_tokens":`...)
		u = strconv.AppendInt(u, int64(n), 10)
		if reasoning > 0 {
			u = append(u, `,"completion_tokens_details":{"reasoning_tokens":`...)
			u = strconv.AppendInt(u, int64(reasoning), 10)
			u = append(u, '}')
		}
		return append(u, '}')
	}
	switch r.fail {
	case failNone:
		o = append(o, ',')
		if style == styleOpenRouter {
			o = chunk(o, ts[k], []byte(`{"role":"assistant","content":""}`), finish, usage(), false)
		} else {
			o = chunk(o, ts[k], []byte(`{}`), finish, nil, false)
			k++
			o = append(o, ',')
			o = chunk(o, ts[k], nil, "", usage(), true)
		}
		o = append(o, `,{"response":"data: [DONE]\n\n"}`...)
	case failBefore:
		if style == styleVLLM || style == styleGateway {
			o = append(o, `{"response":"{\"object\":\"error\",\"message\":\"The server is overloaded, retry later.\",\"type\":\"ServiceUnavailableError\",\"param\":null,\"code\":503}"}`...)
		} else {
			o = append(o, `{"response":"{\"error\":{\"message\":\"Rate limit exceeded\",\"type\":\"rate_limit_exceeded\",\"code\":429}}"}`...)
		}
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
