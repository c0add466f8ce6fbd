package genaiperf

// Hand-made raw exports. No public streaming GenAI-Perf export was found (the
// real runs in testdata/genai-perf, see their SOURCE.md, are non-streaming),
// so these are built from the documented shapes: perf_analyzer's file layout
// (triton-inference-server/perf_analyzer@263c5f6e0c7a
// src/profile_data_exporter.cc, lines 80-360) and vLLM's chat chunks as
// captured in testdata/server-logs/openai-sse-vllm-issue6083 (role-only
// first chunk, "cmpl-" ids, created identical on every chunk), with the usage
// chunk of stream_options.include_usage. Each fixture is written to
// testdata/<name>/profile_export.json by `go test -update`;
// TestFixturesUpToDate keeps the files equal to these definitions.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// t0 is the first request's start: 2023-11-14T22:13:20Z in Unix ns.
const t0 = int64(1_700_000_000_000_000_000)

func ms(v float64) int64 { return int64(v * 1e6) }

// read is one network read: its offset from the request start and its bytes.
type read struct {
	at   int64
	body string
}

type fxRequest struct {
	start  int64          // absolute Unix ns
	inputs map[string]any // request_inputs; nil: an OpenAI payload from payload
	body   map[string]any // OpenAI request body, marshalled into "payload"
	reads  []read
	triton bool // reads are text_output tensors
}

type fxExperiment struct {
	mode     string
	value    any
	requests []fxRequest
	windows  []int64
}

type fixture struct {
	name        string
	serviceKind string
	endpoint    string
	experiments []fxExperiment
	// cut, when set, truncates the encoded file (a run killed mid-write).
	cut func([]byte) []byte
}

// The perf_analyzer layout, in its key order.
type paFile struct {
	Experiments []paExperiment `json:"experiments"`
	Version     string         `json:"version"`
	ServiceKind string         `json:"service_kind"`
	Endpoint    string         `json:"endpoint"`
}

type paExperiment struct {
	Experiment struct {
		Mode  string `json:"mode"`
		Value any    `json:"value"`
	} `json:"experiment"`
	Requests         []paRequest `json:"requests"`
	WindowBoundaries []int64     `json:"window_boundaries"`
}

type paRequest struct {
	Timestamp          int64               `json:"timestamp"`
	RequestInputs      map[string]any      `json:"request_inputs"`
	ResponseTimestamps []int64             `json:"response_timestamps"`
	ResponseOutputs    []map[string]string `json:"response_outputs"`
}

// encode writes the fixture compactly, as perf_analyzer does (rapidjson
// Writer, no HTML escaping, no trailing newline).
func (f *fixture) encode() []byte {
	pf := paFile{Version: "2.54.0", ServiceKind: f.serviceKind, Endpoint: f.endpoint}
	for _, x := range f.experiments {
		var pe paExperiment
		pe.Experiment.Mode, pe.Experiment.Value = x.mode, x.value
		pe.WindowBoundaries = x.windows
		if pe.WindowBoundaries == nil {
			pe.WindowBoundaries = []int64{}
		}
		for _, r := range x.requests {
			pr := paRequest{Timestamp: r.start, RequestInputs: r.inputs, ResponseTimestamps: []int64{}, ResponseOutputs: []map[string]string{}}
			if r.inputs == nil {
				pr.RequestInputs = map[string]any{"payload": marshal(r.body)}
			}
			key := "response"
			if r.triton {
				key = "text_output"
			}
			for _, rd := range r.reads {
				pr.ResponseTimestamps = append(pr.ResponseTimestamps, r.start+rd.at)
				pr.ResponseOutputs = append(pr.ResponseOutputs, map[string]string{key: rd.body})
			}
			pe.Requests = append(pe.Requests, pr)
		}
		pf.Experiments = append(pf.Experiments, pe)
	}
	b := []byte(marshal(pf))
	if f.cut != nil {
		b = f.cut(b)
	}
	return b
}

func marshal(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// SSE helpers in vLLM's chunk shape.

const chunkHead = `{"id":"cmpl-840312ff78664572bb504e606140b952","object":"chat.completion.chunk","created":1719969577,"model":"Qwen-v",`

// ev frames one SSE data message.
func ev(data string) string { return "data: " + data + "\n\n" }

func delta(d, finish string) string {
	return chunkHead + `"choices":[{"index":0,"delta":` + d + `,"logprobs":null,"finish_reason":` + finish + `}]}`
}

func roleChunk() string            { return ev(delta(`{"role":"assistant"}`, "null")) }
func contentChunk(s string) string { return ev(delta(`{"content":`+marshal(s)+`}`, "null")) }
func finishChunk(r string) string  { return ev(delta(`{"content":""}`, `"`+r+`"`)) }
func usageChunk(prompt, completion int) string {
	return ev(fmt.Sprintf(`%s"choices":[],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d}}`,
		chunkHead, prompt, prompt+completion, completion))
}

const done = "data: [DONE]\n\n"

// withUsage adds vLLM's per-chunk usage (stream_options.
// continuous_usage_stats: every chunk carries the running counts) to a
// chunk made by roleChunk, contentChunk or finishChunk.
func withUsage(chunk string, prompt, completion int) string {
	return strings.Replace(chunk, "]}\n\n", fmt.Sprintf(`],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", prompt, prompt+completion, completion), 1)
}

func chatBody(maxTokens int, usage bool) map[string]any {
	b := map[string]any{
		"model":      "Qwen-v",
		"messages":   []map[string]string{{"role": "user", "content": "Say hello."}},
		"max_tokens": maxTokens,
		"stream":     true,
	}
	if usage {
		b["stream_options"] = map[string]bool{"include_usage": true}
	}
	return b
}

// continuousBody is a chat request asking for per-chunk usage
// (vLLM's stream_options.continuous_usage_stats).
func continuousBody() map[string]any {
	b := chatBody(16, true)
	b["stream_options"] = map[string]bool{"include_usage": true, "continuous_usage_stats": true}
	return b
}

// classicReads is the worked example: role at +480 ms, 100 one-token content
// chunks from +500 ms to +1200 ms evenly (integer ns), then usage
// (completion_tokens 100) and [DONE] in one read at +1201 ms.
func classicReads() []read {
	rs := []read{{ms(480), roleChunk()}}
	for i := int64(0); i < 100; i++ {
		rs = append(rs, read{ms(500) + i*ms(700)/99, contentChunk(fmt.Sprintf("t%d ", i))})
	}
	rs = append(rs, read{ms(1200), finishChunk("length")})
	return append(rs, read{ms(1201), usageChunk(25, 100) + done})
}

// cutInside truncates b inside the n-th (0-based) occurrence of marker,
// keeping keep bytes of it.
func cutInside(marker string, n, keep int) func([]byte) []byte {
	return func(b []byte) []byte {
		off := 0
		for i := 0; ; i++ {
			j := bytes.Index(b[off:], []byte(marker))
			if j < 0 {
				panic("marker not found")
			}
			if i == n {
				return b[:off+j+keep]
			}
			off += j + len(marker)
		}
	}
}

var fixtures = []fixture{
	{
		// (a) vLLM chat stream with include_usage, and one without.
		name: "vllm-chat-stream", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: chatBody(16, true), reads: []read{
				{ms(120), roleChunk()},
				{ms(150), contentChunk("Hello")},
				{ms(180), contentChunk(",")},
				{ms(210), contentChunk(" world")},
				{ms(240), finishChunk("stop")},
				{ms(241), usageChunk(12, 3)},
				{ms(242), done},
			}},
			{start: t0 + ms(300), body: chatBody(16, false), reads: []read{
				{ms(100), roleChunk()},
				{ms(130), contentChunk("A")},
				{ms(170), contentChunk("B")},
				{ms(171), finishChunk("stop")},
				{ms(172), done},
			}},
		}}},
	},
	{
		// (b) one read holding several events, an event split across
		// reads; then CRLF endings, a comment keep-alive, whitespace
		// padding, a CRLF split between reads and a final [DONE] with no
		// blank line.
		name: "split-and-merged-reads", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: chatBody(8, true), reads: func() []read {
				b := contentChunk("b")
				fin := finishChunk("stop")
				return []read{
					{ms(100), roleChunk() + contentChunk("a")},
					{ms(130), b[:40]},
					{ms(160), b[40:] + contentChunk("c") + fin[:25]},
					{ms(190), fin[25:] + usageChunk(7, 3) + done},
				}
			}()},
			{start: t0 + ms(1000), body: chatBody(8, false), reads: func() []read {
				crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
				y := crlf(contentChunk("y"))
				return []read{
					{ms(50), ": OPENROUTER PROCESSING\r\n\r\n"},
					{ms(300), crlf(contentChunk("x")) + y[:len(y)-3]},
					{ms(350), y[len(y)-3:]},
					{ms(400), "   \n" + "data: [DONE]"},
				}
			}()},
		}}},
	},
	{
		// (c) reasoning before content (vLLM reasoning parser:
		// delta.reasoning_content; newer servers: delta.reasoning).
		name: "reasoning-then-content", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: chatBody(64, true), reads: []read{
				{ms(100), roleChunk()},
				{ms(200), ev(delta(`{"reasoning_content":"Let"}`, "null"))},
				{ms(250), ev(delta(`{"reasoning":" me think"}`, "null"))},
				{ms(900), contentChunk("42")},
				{ms(950), finishChunk("stop")},
				{ms(951), ev(chunkHead + `"choices":[],"usage":{"prompt_tokens":20,"total_tokens":60,"completion_tokens":40,"completion_tokens_details":{"reasoning_tokens":35}}}`)},
				{ms(952), done},
			}},
		}}},
	},
	{
		// (d) errors: an "event: error" mid-stream; a JSON error body
		// instead of a stream; vLLM's {"object":"error"} as a data event.
		name: "error-mid-stream", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: chatBody(16, true), reads: []read{
				{ms(100), roleChunk()},
				{ms(200), contentChunk("Hi")},
				{ms(300), "event: error\ndata: {\"error\":{\"message\":\"upstream connection reset\",\"type\":\"server_error\",\"code\":502}}\n\n"},
			}},
			{start: t0 + ms(500), body: chatBody(16, true), reads: []read{
				{ms(40), `{"error":{"message":"Rate limit exceeded","code":429}}`},
			}},
			{start: t0 + ms(600), body: chatBody(16, true), reads: []read{
				{ms(30), ev(`{"object":"error","message":"This model's maximum context length is 4096 tokens","type":"BadRequestError","param":null,"code":400}`)},
			}},
		}}},
	},
	{
		// (e) no generated content at all.
		name: "no-content", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: chatBody(16, true), reads: []read{
				{ms(100), roleChunk()},
				{ms(150), finishChunk("stop")},
				{ms(151), usageChunk(5, 0)},
				{ms(152), done},
			}},
			{start: t0 + ms(200), body: chatBody(16, false), reads: []read{
				{ms(90), roleChunk()},
				{ms(95), done},
			}},
		}}},
	},
	{
		// a reply that is a tool call only (vLLM's streamed tool_calls
		// deltas: the call's id, type and name first, then the arguments
		// in fragments; finish_reason tool_calls): generated output, no
		// content.
		name: "tool-call-only", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: chatBody(16, true), reads: []read{
				{ms(100), roleChunk()},
				{ms(150), ev(delta(`{"tool_calls":[{"id":"chatcmpl-tool-7f3a","type":"function","index":0,"function":{"name":"get_weather","arguments":""}}]}`, "null"))},
				{ms(170), ev(delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]}`, "null"))},
				{ms(190), ev(delta(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`, "null"))},
				{ms(200), ev(delta(`{"content":""}`, `"tool_calls"`))},
				{ms(201), usageChunk(16, 8)},
				{ms(202), done},
			}},
		}}},
	},
	{
		// (f) completions endpoint: choices[0].text.
		name: "completions-stream", serviceKind: "openai", endpoint: "v1/completions",
		experiments: []fxExperiment{{mode: "request_rate", value: 2.5, requests: []fxRequest{
			{start: t0, body: map[string]any{"model": "gpt2", "prompt": "I", "max_tokens": 3, "stream": true}, reads: []read{
				{ms(100), ev(`{"id":"cmpl-1","object":"text_completion","created":1719969577,"model":"gpt2","choices":[{"index":0,"text":" I","logprobs":null,"finish_reason":null}]}`)},
				{ms(140), ev(`{"id":"cmpl-1","object":"text_completion","created":1719969577,"model":"gpt2","choices":[{"index":0,"text":" like","logprobs":null,"finish_reason":null}]}`)},
				{ms(180), ev(`{"id":"cmpl-1","object":"text_completion","created":1719969577,"model":"gpt2","choices":[{"index":0,"text":" dogs","logprobs":null,"finish_reason":null}]}`)},
				{ms(200), ev(`{"id":"cmpl-1","object":"text_completion","created":1719969577,"model":"gpt2","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}]}`)},
				{ms(201), done},
			}},
		}}},
	},
	{
		// (g) a file cut inside its third request.
		name: "truncated", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: chatBody(4, false), reads: []read{{ms(100), roleChunk()}, {ms(150), contentChunk("one")}, {ms(160), done}}},
			{start: t0 + ms(200), body: chatBody(4, false), reads: []read{{ms(100), roleChunk()}, {ms(150), contentChunk("two")}, {ms(160), done}}},
			{start: t0 + ms(400), body: chatBody(4, false), reads: []read{{ms(100), roleChunk()}, {ms(150), contentChunk("three")}, {ms(160), done}}},
		}}},
		cut: cutInside(`"response_outputs"`, 2, 60),
	},
	{
		// (h) two experiments (concurrency 1, then 2); the summary
		// beside it is for concurrency 2.
		name: "two-experiments", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{
			{mode: "concurrency", value: 1, windows: []int64{t0, t0 + ms(1000)}, requests: []fxRequest{
				{start: t0, body: chatBody(4, false), reads: []read{{ms(100), roleChunk() + contentChunk("a")}, {ms(120), contentChunk("b") + done}}},
				{start: t0 + ms(200), body: chatBody(4, false), reads: []read{{ms(90), roleChunk()}, {ms(110), contentChunk("c")}, {ms(111), done}}},
			}},
			{mode: "concurrency", value: 2, requests: []fxRequest{
				{start: t0 + ms(2000), body: chatBody(4, false), reads: []read{{ms(300), contentChunk("d")}, {ms(350), done}}},
				{start: t0 + ms(2001), body: chatBody(4, false), reads: []read{{ms(310), contentChunk("e")}, {ms(360), contentChunk("f")}, {ms(361), done}}},
			}},
		},
	},
	{
		// (i) Triton text_output tensors, streamed.
		name: "triton-text-output", serviceKind: "triton", endpoint: "",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, inputs: map[string]any{"text_input": "This is test", "max_tokens": 8, "stream": true}, triton: true, reads: []read{
				{ms(100), "I"}, {ms(130), " like"}, {ms(170), " dogs"}, {ms(171), ""},
			}},
		}}},
	},
	{
		// coalesced_token_chunks (vLLM issue #27485): vLLM with
		// continuous_usage_stats, every chunk carrying the running usage;
		// request 0's second content message carries 3 tokens (a parser
		// released them together), the others one each.
		name: "trap-coalesced-usage", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: continuousBody(), reads: []read{
				{ms(100), withUsage(roleChunk(), 9, 0)},
				{ms(120), withUsage(contentChunk("Hello"), 9, 1)},
				{ms(200), withUsage(contentChunk(" wonderful new world"), 9, 4)},
				{ms(220), withUsage(contentChunk("!"), 9, 5)},
				{ms(230), withUsage(finishChunk("stop"), 9, 5)},
				{ms(231), usageChunk(9, 5) + done},
			}},
			{start: t0 + ms(400), body: continuousBody(), reads: []read{
				{ms(50), withUsage(roleChunk(), 9, 0)},
				{ms(70), withUsage(contentChunk("A"), 9, 1)},
				{ms(90), withUsage(contentChunk("B"), 9, 2)},
				{ms(91), withUsage(finishChunk("stop"), 9, 2)},
				{ms(92), usageChunk(9, 2) + done},
			}},
		}}},
	},
	{
		// The classic example: first content at +500 ms, 100 one-token
		// chunks, last at +1200 ms, usage completion_tokens 100.
		name: "classic-100-tokens", serviceKind: "openai", endpoint: "v1/chat/completions",
		experiments: []fxExperiment{{mode: "concurrency", value: 1, requests: []fxRequest{
			{start: t0, body: chatBody(100, true), reads: classicReads()},
		}}},
	},
}
