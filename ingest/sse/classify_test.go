package sse

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

func i64(v int64) *int64 { return &v }

// vLLM chat chunks as in the openai-sse-vllm-issue6083 capture
// (testdata/server-logs), plus the documented usage chunk.
const (
	vllmRole    = `{"id":"cmpl-8403","object":"chat.completion.chunk","created":1719969577,"model":"Qwen-v","choices":[{"index":0,"delta":{"role":"assistant"},"logprobs":null,"finish_reason":null}]}`
	vllmContent = `{"id":"cmpl-8403","object":"chat.completion.chunk","created":1719969577,"model":"Qwen-v","choices":[{"index":0,"delta":{"content":"我是"},"logprobs":null,"finish_reason":null}]}`
	vllmFinish  = `{"id":"cmpl-8403","object":"chat.completion.chunk","created":1719969577,"model":"Qwen-v","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}`
	vllmUsage   = `{"id":"cmpl-8403","object":"chat.completion.chunk","created":1719969577,"model":"Qwen-v","choices":[],"usage":{"prompt_tokens":12,"total_tokens":17,"completion_tokens":5}}`
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want Payload
	}{
		{"vLLM role-only first chunk", Message{HasData: true, Data: vllmRole},
			Payload{Kind: formats.KindRole, HasChoices: true, ID: "cmpl-8403", Role: "assistant"}},
		{"a tool-call delta is generated output",
			Message{HasData: true, Data: `{"choices":[{"delta":{"tool_calls":[{"id":"call_1","type":"function","index":0,"function":{"name":"get_weather","arguments":"{\"c"}}]}}]}`},
			Payload{Kind: formats.KindToolCall, HasChoices: true, ToolCall: true, ToolText: `get_weather{"c`}},
		{"a tool-call fragment after the role",
			Message{HasData: true, Data: `{"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":0,"function":{"arguments":"ity\"}"}}]}}]}`},
			Payload{Kind: formats.KindToolCall, HasChoices: true, Role: "assistant", ToolCall: true, ToolText: `ity"}`}},
		{"an empty tool_calls list is no call",
			Message{HasData: true, Data: `{"choices":[{"delta":{"tool_calls":[]},"finish_reason":"stop"}]}`},
			Payload{Kind: formats.KindEmpty, HasChoices: true, FinishReason: "stop"}},
		{"role with empty content is still role",
			Message{HasData: true, Data: `{"choices":[{"delta":{"role":"assistant","content":""}}]}`},
			Payload{Kind: formats.KindRole, HasChoices: true, Role: "assistant"}},
		{"content chunk", Message{HasData: true, Data: vllmContent},
			Payload{Kind: formats.KindContent, HasChoices: true, ID: "cmpl-8403", Content: "我是"}},
		{"finish chunk with empty content", Message{HasData: true, Data: vllmFinish},
			Payload{Kind: formats.KindEmpty, HasChoices: true, ID: "cmpl-8403", FinishReason: "stop"}},
		{"empty delta", Message{HasData: true, Data: `{"choices":[{"index":0,"delta":{},"finish_reason":null}]}`},
			Payload{Kind: formats.KindEmpty, HasChoices: true}},
		{"usage-only chunk", Message{HasData: true, Data: vllmUsage},
			Payload{Kind: formats.KindUsage, ID: "cmpl-8403", Usage: &Usage{PromptTokens: i64(12), CompletionTokens: i64(5)}}},
		{"usage with reasoning details",
			Message{HasData: true, Data: `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":4}}}`},
			Payload{Kind: formats.KindUsage, Usage: &Usage{PromptTokens: i64(3), CompletionTokens: i64(9), ReasoningTokens: i64(4)}}},
		{"continuous usage on a content chunk",
			Message{HasData: true, Data: `{"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`},
			Payload{Kind: formats.KindContent, HasChoices: true, Content: "x", Usage: &Usage{PromptTokens: i64(3), CompletionTokens: i64(1)}}},
		{"done", Message{HasData: true, Data: "[DONE]"}, Payload{Kind: formats.KindDone}},
		{"done with spaces", Message{HasData: true, Data: " [DONE] "}, Payload{Kind: formats.KindDone}},
		{"reasoning_content only", Message{HasData: true, Data: `{"choices":[{"delta":{"reasoning_content":"Let me think"}}]}`},
			Payload{Kind: formats.KindReasoning, HasChoices: true, Reasoning: "Let me think"}},
		{"reasoning (OpenRouter/newer vLLM name)", Message{HasData: true, Data: `{"choices":[{"delta":{"content":null,"reasoning":"hmm"}}]}`},
			Payload{Kind: formats.KindReasoning, HasChoices: true, Reasoning: "hmm"}},
		{"content and reasoning together is content",
			Message{HasData: true, Data: `{"choices":[{"delta":{"content":"A","reasoning_content":"r"}}]}`},
			Payload{Kind: formats.KindContent, HasChoices: true, Content: "A", Reasoning: "r"}},
		{"completions text", Message{HasData: true, Data: `{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" I","finish_reason":null}]}`},
			Payload{Kind: formats.KindContent, HasChoices: true, ID: "cmpl-1", Content: " I"}},
		{"completions empty text with finish", Message{HasData: true, Data: `{"choices":[{"text":"","finish_reason":"length"}]}`},
			Payload{Kind: formats.KindEmpty, HasChoices: true, FinishReason: "length"}},
		{"content given as parts", Message{HasData: true, Data: `{"choices":[{"delta":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`},
			Payload{Kind: formats.KindContent, HasChoices: true, Content: "ab"}},
		{"event: error with text data", Message{HasData: true, Event: "error", Data: "upstream timeout"},
			Payload{Kind: formats.KindError, Error: &APIError{Message: "upstream timeout"}}},
		{"event: error without data", Message{Event: "Error"},
			Payload{Kind: formats.KindError, Error: &APIError{}}},
		{"JSON error object", Message{HasData: true, Data: `{"error":{"message":"Rate limit","type":"rate_limit","code":429}}`},
			Payload{Kind: formats.KindError, Error: &APIError{Message: "Rate limit", Type: "rate_limit", Code: i64(429)}}},
		{"JSON error string", Message{HasData: true, Data: `{"error":"boom"}`},
			Payload{Kind: formats.KindError, Error: &APIError{Message: "boom"}}},
		{"vLLM ErrorResponse", Message{HasData: true, Data: `{"object":"error","message":"too long","type":"BadRequestError","param":null,"code":400}`},
			Payload{Kind: formats.KindError, Error: &APIError{Message: "too long", Type: "BadRequestError", Code: i64(400)}}},
		{"error null is not an error", Message{HasData: true, Data: `{"error":null,"choices":[{"delta":{"content":"x"}}]}`},
			Payload{Kind: formats.KindContent, HasChoices: true, Content: "x"}},
		{"comment", Message{Comment: true}, Payload{Kind: formats.KindOther}},
		{"empty data", Message{HasData: true}, Payload{Kind: formats.KindOther}},
		{"not JSON", Message{HasData: true, Data: "hello"}, Payload{Kind: formats.KindOther}},
		{"broken JSON", Message{HasData: true, Data: `{"choices":[`}, Payload{Kind: formats.KindOther}},
		{"JSON array", Message{HasData: true, Data: `[1,2]`}, Payload{Kind: formats.KindOther}},
		{"no choices, no usage", Message{HasData: true, Data: `{"id":"x","choices":[]}`}, Payload{Kind: formats.KindOther, ID: "x"}},
		{"wrong-typed field still classifies the rest", Message{HasData: true, Data: `{"id":7,"choices":[{"delta":{"content":"x"}}]}`},
			Payload{Kind: formats.KindContent, HasChoices: true, Content: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(&tt.msg)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Classify:\n got %s\nwant %s", show(got), show(tt.want))
			}
		})
	}
}

func TestClassifyBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Payload
	}{
		{"OpenRouter body with keep-alive padding",
			"\n         \n\n         \n" + `{"id":"gen-1","choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"Hi","refusal":null,"reasoning":null}}],"usage":{"prompt_tokens":53,"completion_tokens":135,"total_tokens":188,"completion_tokens_details":{"reasoning_tokens":0}}}`,
			Payload{Kind: formats.KindContent, HasChoices: true, ID: "gen-1", Role: "assistant", Content: "Hi", FinishReason: "stop",
				Usage: &Usage{PromptTokens: i64(53), CompletionTokens: i64(135), ReasoningTokens: i64(0)}}},
		{"null completion details",
			`{"choices":[{"message":{"content":"Hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"completion_tokens_details":null}}`,
			Payload{Kind: formats.KindContent, HasChoices: true, Content: "Hi", Usage: &Usage{PromptTokens: i64(1), CompletionTokens: i64(2)}}},
		{"reasoning only", `{"choices":[{"message":{"role":"assistant","content":"","reasoning_content":"think"}}]}`,
			Payload{Kind: formats.KindReasoning, HasChoices: true, Role: "assistant", Reasoning: "think"}},
		{"role only is empty for a body", `{"choices":[{"message":{"role":"assistant","content":null}}]}`,
			Payload{Kind: formats.KindEmpty, HasChoices: true, Role: "assistant"}},
		{"error body", `  {"error":{"message":"Provider returned error","code":502}}`,
			Payload{Kind: formats.KindError, Error: &APIError{Message: "Provider returned error", Code: i64(502)}}},
		{"error with string code", `{"error":{"message":"m","code":"503"}}`,
			Payload{Kind: formats.KindError, Error: &APIError{Message: "m", Code: i64(503)}}},
		{"error without message", `{"error":{"code":"bad"}}`,
			Payload{Kind: formats.KindError, Error: &APIError{Message: `{"error":{"code":"bad"}}`}}},
		{"comment keep-alives before the body", ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n" + `{"choices":[{"message":{"content":"ok"}}]}`,
			Payload{Kind: formats.KindContent, HasChoices: true, Content: "ok"}},
		{"empty body", "", Payload{Kind: formats.KindOther}},
		{"html", "<html>502</html>", Payload{Kind: formats.KindOther}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClassifyBody(tt.body)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ClassifyBody:\n got %s\nwant %s", show(got), show(tt.want))
			}
		})
	}
}

// show prints a Payload with its pointers followed.
func show(p Payload) string {
	s := formatValue(reflect.ValueOf(p))
	return s
}

func formatValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return "&" + formatValue(v.Elem())
	case reflect.Struct:
		s := "{"
		for i := 0; i < v.NumField(); i++ {
			if i > 0 {
				s += " "
			}
			s += v.Type().Field(i).Name + ":" + formatValue(v.Field(i))
		}
		return s + "}"
	}
	return fmt.Sprintf("%#v", v.Interface())
}
