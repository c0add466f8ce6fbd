package sse

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// Payload is what a message (or a whole non-streaming body) says, in the
// terms formats.Event needs.
type Payload struct {
	// Kind is one of formats.Kind* (see Classify for the rules).
	Kind string
	// HasChoices is true when the JSON had a non-empty "choices" array.
	HasChoices bool
	// ID is the JSON's top-level "id" ("chatcmpl-…", "cmpl-…", "gen-…");
	// "" if absent or not a string.
	ID string
	// Role is choices[0].delta.role (or .message.role); "" if none.
	Role string
	// Content is the generated content text of choices[0]: chat
	// delta.content or message.content, else completions text. Content given
	// as an array of parts is the concatenation of the parts' "text".
	Content string
	// Reasoning is choices[0]'s delta (or message) reasoning_content, or its
	// reasoning when reasoning_content is empty.
	Reasoning string
	// ToolCall is true when choices[0]'s delta (or message) carries a
	// non-empty tool_calls array; ToolText is what the model generated in
	// it: each call's function name and arguments, concatenated.
	ToolCall bool
	ToolText string
	// FinishReason is choices[0].finish_reason; "" when null or absent.
	FinishReason string
	// Usage is the JSON's "usage" object; nil when absent or null.
	Usage *Usage
	// Spec is the message's root metrics.speculative_decoding (vLLM 0.28+
	// puts the request's speculative-decoding counts in the last chunk,
	// PRs #46768/#48915); nil when absent.
	Spec *SpecDecoding
	// Error describes an error message (Kind == formats.KindError); nil
	// otherwise.
	Error *APIError
}

// Usage is an OpenAI usage object (token counts as the server reported
// them). A nil field was absent, null or not an integer.
type Usage struct {
	// PromptTokens is usage.prompt_tokens: the prompt length (ISL).
	PromptTokens *int64 `json:"prompt_tokens"`
	// CompletionTokens is usage.completion_tokens: the generated length
	// (OSL), reasoning included. On a chunk of a stream with vLLM's
	// continuous_usage_stats it is the running total so far.
	CompletionTokens *int64 `json:"completion_tokens"`
	// ReasoningTokens is completion_tokens_details.reasoning_tokens: the
	// reasoning part of CompletionTokens.
	ReasoningTokens *int64 `json:"-"`
	// CachedTokens is prompt_tokens_details.cached_tokens: the part of
	// PromptTokens read from the server's prefix cache (OpenAI; vLLM with
	// prefix caching and --enable-prompt-tokens-details; SGLang).
	CachedTokens *int64 `json:"-"`
}

// SpecDecoding is a response's speculative-decoding counts (vLLM's
// metrics.speculative_decoding): verification steps, draft tokens
// proposed and accepted. A nil field was absent or not an integer.
type SpecDecoding struct {
	SpecSteps      *int64 `json:"num_spec_steps"`
	DraftTokens    *int64 `json:"num_draft_tokens"`
	AcceptedTokens *int64 `json:"num_accepted_draft_tokens"`
}

// APIError is an error reported in the stream or body.
type APIError struct {
	// Message is the error's text: error.message (or the error value itself
	// when it is a string, or the top-level message of a vLLM
	// {"object":"error",…} body), else the raw data.
	Message string
	// Type is error.type (OpenAI "invalid_request_error"), or the top-level
	// type of a vLLM {"object":"error",…} body ("BadRequestError"); "" if
	// none.
	Type string
	// Code is error.code (or the top-level code) when it is an integer or a
	// string of digits (OpenRouter and vLLM put the HTTP status there); nil
	// otherwise.
	Code *int64
}

// Classify classifies one SSE message. Rules, first match wins:
//
//   - an "event:" value containing "error" (case-insensitive): KindError,
//     Error.Message = Data (or the JSON error's message). GenAI-Perf's test
//     is looser — a response that starts with "event:" and contains "error"
//     anywhere (triton-inference-server/perf_analyzer@263c5f6e0c7a:
//     sse_error_occurred, genai-perf/genai_perf/utils.py lines 65-66, and
//     its use in
//     genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py
//     lines 340-346) — so "event: message" with "error" in its text is an
//     error there and not here;
//   - no data line (comments, a bare event or id): KindOther;
//   - Data is "[DONE]" (spaces trimmed): KindDone;
//   - otherwise the rules of ClassifyJSON, with Data as the JSON.
func Classify(m *Message) Payload {
	if strings.Contains(strings.ToLower(m.Event), "error") {
		p := ClassifyJSON(m.Data)
		if p.Error == nil {
			p.Error = &APIError{Message: m.Data}
		}
		p.Kind = formats.KindError
		return p
	}
	if !m.HasData {
		return Payload{Kind: formats.KindOther}
	}
	if strings.TrimSpace(m.Data) == "[DONE]" {
		return Payload{Kind: formats.KindDone}
	}
	return ClassifyJSON(m.Data)
}

// ClassifyBody classifies a whole non-streaming response body: leading
// keep-alive padding (whitespace and ":" comment lines, see SkipPreamble)
// is dropped and the rest read as by ClassifyJSON, except that a body whose
// message has only a role is KindEmpty (KindRole is for stream deltas).
func ClassifyBody(body string) Payload {
	p := ClassifyJSON(SkipPreamble(body))
	if p.Kind == formats.KindRole {
		p.Kind = formats.KindEmpty
	}
	return p
}

// ClassifyJSON classifies an OpenAI-style JSON object (a chat or completions
// chunk, or a whole response). Rules, first match wins:
//
//   - not a JSON object: KindOther;
//   - a non-null "error" key, or "object":"error" (vLLM's ErrorResponse):
//     KindError;
//   - a non-empty "choices" array: from choices[0] (later choices, n > 1,
//     are ignored, as GenAI-Perf does): KindContent when Content is
//     non-empty, else KindReasoning when Reasoning is non-empty, else
//     KindToolCall when it carries tool calls (generated output: vLLM
//     counts it), else KindRole when a delta carries a role, else
//     KindEmpty (e.g. the finish_reason chunk);
//   - no or empty "choices" with a "usage" object: KindUsage
//     (stream_options.include_usage's last chunk);
//   - anything else: KindOther.
//
// Decoding uses encoding/json, so key matching is case-insensitive and a
// field of the wrong type is left empty while the rest still decodes.
// Usage, ID and FinishReason are filled whatever the kind.
//
// Common chunks take a hand-written fast path (classifyFast) that answers
// only when it is sure to agree with encoding/json; everything else is
// decoded by encoding/json (classifySlow).
func ClassifyJSON(data string) Payload {
	if p, ok := classifyFast(data); ok {
		return p
	}
	return classifySlow(data)
}

// classifySlow is ClassifyJSON by encoding/json.
func classifySlow(data string) Payload {
	b := []byte(data)
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Payload{Kind: formats.KindOther}
	}
	var c chunk
	if err := json.Unmarshal(b, &c); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return Payload{Kind: formats.KindOther}
		}
	}
	return c.payload(data)
}

// chunk is the part of an OpenAI chunk or response that Classify reads.
type chunk struct {
	ID      any             `json:"id"`
	Object  any             `json:"object"`
	Message any             `json:"message"`
	Type    any             `json:"type"`
	Code    json.RawMessage `json:"code"`
	Error   json.RawMessage `json:"error"`
	Choices []choice        `json:"choices"`
	Usage   *usageJSON      `json:"usage"`
	Metrics *struct {
		Spec *specJSON `json:"speculative_decoding"`
	} `json:"metrics"`
}

type choice struct {
	Delta        *messageJSON    `json:"delta"`
	Message      *messageJSON    `json:"message"`
	Text         json.RawMessage `json:"text"`
	FinishReason any             `json:"finish_reason"`
}

type messageJSON struct {
	Role             any             `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        []toolCallJSON  `json:"tool_calls"`
}

// toolCallJSON is one element of tool_calls: what the model generated is
// the function's name and arguments (a streamed call sends them in
// fragments).
type toolCallJSON struct {
	Function *struct {
		Name      any `json:"name"`
		Arguments any `json:"arguments"`
	} `json:"function"`
}

type usageJSON struct {
	PromptTokens     count `json:"prompt_tokens"`
	CompletionTokens count `json:"completion_tokens"`
	Details          *struct {
		ReasoningTokens count `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptDetails *struct {
		CachedTokens count `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// count is a token count as a response gives it: a JSON integer that fits
// an int64. Anything else — a fraction, an exponent, a string, a bool, an
// out-of-range number — is no count (nil), never the 0 encoding/json
// leaves in a *int64 it could not fill; the fast scanner declines the
// same values.
type count struct{ v *int64 }

func (c *count) UnmarshalJSON(b []byte) error {
	if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil {
		c.v = &n
	}
	return nil
}

// specJSON is metrics.speculative_decoding with tolerant counts.
type specJSON struct {
	SpecSteps      count `json:"num_spec_steps"`
	DraftTokens    count `json:"num_draft_tokens"`
	AcceptedTokens count `json:"num_accepted_draft_tokens"`
}

func (c *chunk) payload(data string) Payload {
	p := Payload{ID: str(c.ID), HasChoices: len(c.Choices) > 0}
	if c.Usage != nil {
		u := Usage{PromptTokens: c.Usage.PromptTokens.v, CompletionTokens: c.Usage.CompletionTokens.v}
		if c.Usage.Details != nil {
			u.ReasoningTokens = c.Usage.Details.ReasoningTokens.v
		}
		if c.Usage.PromptDetails != nil {
			u.CachedTokens = c.Usage.PromptDetails.CachedTokens.v
		}
		p.Usage = &u
	}
	if c.Metrics != nil && c.Metrics.Spec != nil {
		sp := c.Metrics.Spec
		p.Spec = &SpecDecoding{SpecSteps: sp.SpecSteps.v, DraftTokens: sp.DraftTokens.v, AcceptedTokens: sp.AcceptedTokens.v}
	}
	if p.HasChoices {
		c.Choices[0].fill(&p)
	}
	switch {
	case c.isError():
		p.Kind = formats.KindError
		p.Error = c.apiError(data)
	case p.HasChoices && p.Content != "":
		p.Kind = formats.KindContent
	case p.HasChoices && p.Reasoning != "":
		p.Kind = formats.KindReasoning
	case p.HasChoices && p.ToolCall:
		p.Kind = formats.KindToolCall
	case p.HasChoices && p.Role != "" && c.Choices[0].Delta != nil:
		p.Kind = formats.KindRole
	case p.HasChoices:
		p.Kind = formats.KindEmpty
	case p.Usage != nil:
		p.Kind = formats.KindUsage
	default:
		p.Kind = formats.KindOther
	}
	return p
}

func (c *chunk) isError() bool {
	return (len(c.Error) > 0 && string(c.Error) != "null") || str(c.Object) == "error"
}

// apiError extracts the error's message, type and code.
func (c *chunk) apiError(data string) *APIError {
	e := &APIError{Message: str(c.Message), Type: str(c.Type), Code: intOf(c.Code)}
	var obj struct {
		Message any             `json:"message"`
		Type    any             `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	switch {
	case len(c.Error) > 0 && c.Error[0] == '{':
		_ = json.Unmarshal(c.Error, &obj)
		e.Message, e.Type = str(obj.Message), str(obj.Type)
		if code := intOf(obj.Code); code != nil {
			e.Code = code
		}
	case len(c.Error) > 0 && c.Error[0] == '"':
		_ = json.Unmarshal(c.Error, &e.Message)
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(data)
	}
	return e
}

func (ch *choice) fill(p *Payload) {
	p.FinishReason = str(ch.FinishReason)
	m := ch.Delta
	if m == nil {
		m = ch.Message
	}
	if m != nil {
		p.Role = str(m.Role)
		p.Content = text(m.Content)
		p.Reasoning = text(m.ReasoningContent)
		if p.Reasoning == "" {
			p.Reasoning = text(m.Reasoning)
		}
		if len(m.ToolCalls) > 0 {
			p.ToolCall = true
			var b strings.Builder
			for _, tc := range m.ToolCalls {
				if tc.Function != nil {
					b.WriteString(str(tc.Function.Name))
					b.WriteString(str(tc.Function.Arguments))
				}
			}
			p.ToolText = b.String()
		}
	}
	if p.Content == "" {
		p.Content = text(ch.Text)
	}
}

// text reads a content value: a string, or an array of parts whose "text"
// fields (or string elements) are concatenated; anything else is "".
func text(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		var b strings.Builder
		for _, part := range parts {
			if len(part) > 0 && part[0] == '{' {
				var t struct {
					Text json.RawMessage `json:"text"`
				}
				_ = json.Unmarshal(part, &t)
				part = t.Text
			}
			if len(part) > 0 && part[0] == '"' {
				b.WriteString(text(part))
			}
		}
		return b.String()
	}
	return ""
}

// str returns v when it is a string, else "".
func str(v any) string {
	s, _ := v.(string)
	return s
}

// intOf reads an integer or a string of digits; nil otherwise.
func intOf(raw json.RawMessage) *int64 {
	s := strings.Trim(string(raw), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}
