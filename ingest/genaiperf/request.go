package genaiperf

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/sse"
)

// rawRequest is one element of experiments[i].requests
// (profile_data_exporter.cc, perf_analyzer 263c5f6, lines 113-163).
type rawRequest struct {
	Timestamp          *int64                     `json:"timestamp"`
	SequenceID         json.Number                `json:"sequence_id"`
	RequestInputs      map[string]json.RawMessage `json:"request_inputs"`
	ResponseTimestamps []int64                    `json:"response_timestamps"`
	ResponseOutputs    []responseOutput           `json:"response_outputs"`

	// inputs is RequestInputs read by readInputs (on the decoding
	// goroutine, so the converting one has less to do).
	inputs requestInputs `json:"-"`
}

// requestInputs is what request_inputs says: for openai the fields of the
// JSON body in "payload", for triton the tensors themselves.
type requestInputs struct {
	read   bool
	fields map[string]json.RawMessage
	bad    string // why payload could not be read ("" if it could)
}

// readInputs decodes the request body in request_inputs.payload (or takes
// the tensors as they are).
func (rr *rawRequest) readInputs() {
	in := &rr.inputs
	*in = requestInputs{read: true, fields: rr.RequestInputs}
	p, ok := rr.RequestInputs["payload"]
	if !ok {
		return
	}
	in.fields = nil
	var s string
	if json.Unmarshal(p, &s) != nil {
		in.bad = "request_inputs.payload is not a string; max_tokens, stream and model unknown"
		return
	}
	if json.Unmarshal([]byte(s), &in.fields) != nil {
		in.fields = nil
		in.bad = "request_inputs.payload is not a JSON object; max_tokens, stream and model unknown"
	}
}

// responseOutput is one element of response_outputs: {"response": "<raw
// bytes of one read>"} for service_kind openai, {"text_output": …} for
// triton.
type responseOutput struct {
	Response   *string         `json:"response"`
	TextOutput json.RawMessage `json:"text_output"`
}

// converter turns raw requests into Request and Event rows. It reuses its
// buffers from request to request (the Sink contract allows it).
type converter struct {
	label  string
	noText bool
	opt    ingest.Options // MaxMessages
	parser sse.Parser
	memo   sse.Memo // classifies the SSE messages of all requests
	msgs   []sse.Message
	texts  []string // the slab of Event.Text targets (see text)
	events []formats.Event
	req    formats.Request

	// per request, from the messages
	chunks   chunkUsage // per-chunk usage (continuous_usage_stats)
	usage    *sse.Usage
	spec     *sse.SpecDecoding // the server's speculative-decoding counts
	apiErr   *sse.APIError
	respID   string
	streamed bool
	badText  string // the first unreadable response (ErrorText); "" if none
	badCount int    // unreadable responses (bodies or SSE messages)
}

// ErrorTypeUnparseable is Request.ErrorType of a request whose response
// (a non-streaming body, or the data of an SSE message) could not be read:
// not JSON, or JSON but not an object, and not "[DONE]".
const ErrorTypeUnparseable = "unparseable_response"

// request converts request key of experiment exp. The returned rows are
// valid until the next call.
func (c *converter) request(exp, key int, rr *rawRequest, x *experiment) (*formats.Request, []formats.Event, error) {
	where := fmt.Sprintf("experiment %d, request %d", exp, key)
	if rr.Timestamp == nil {
		return nil, nil, errors.New(`request has no "timestamp"`)
	}
	if why := ingest.EpochMismatch(float64(*rr.Timestamp), "ns", ingest.Nanoseconds); why != "" {
		return nil, nil, fmt.Errorf("timestamp %s (perf_analyzer writes Unix nanoseconds, %s)", why, ingest.CheckTimeUnit)
	}
	if n := max(len(rr.ResponseTimestamps), len(rr.ResponseOutputs)); n > 0 {
		if err := c.opt.CheckMessages(int64(n), fmt.Sprintf("%d responses", n)); err != nil {
			return nil, nil, err
		}
	}
	c.req = formats.Request{
		RunID:       ingest.RunLabel(c.label, exp),
		RequestKey:  int64(key),
		SourceID:    string(rr.SequenceID),
		StartNs:     rr.Timestamp,
		ClockDomain: formats.ClockUnix,
	}
	c.usage, c.spec, c.apiErr, c.respID, c.streamed = nil, nil, nil, "", false
	c.badText, c.badCount = "", 0
	c.chunks.reset()
	if !rr.inputs.read {
		rr.readInputs()
	}
	streamAsked := c.inputs(&rr.inputs, x, where)

	n := min(len(rr.ResponseTimestamps), len(rr.ResponseOutputs))
	if len(rr.ResponseTimestamps) != len(rr.ResponseOutputs) {
		x.notes.addAt(fmt.Sprintf("%s (%d response_timestamps, %d response_outputs)", where, len(rr.ResponseTimestamps), len(rr.ResponseOutputs)),
			true, "response_timestamps and response_outputs differ in length; only the pairs at equal indices were imported")
	}
	c.events = c.events[:0]
	c.texts = nil // a new slab: the sink may keep the last request's pointers
	c.buildEvents(rr.ResponseOutputs[:n], rr.ResponseTimestamps[:n], *rr.Timestamp, streamAsked, x, where)
	if n == 0 {
		x.notes.addAt(where, false, "no responses recorded")
	}
	if c.badCount > 0 {
		// Not known to have succeeded: an error, unless the server's own
		// error (below) says more.
		c.req.Status = formats.StatusError
		c.req.ErrorText, c.req.ErrorType = c.badText, ErrorTypeUnparseable
		if c.badCount > 1 {
			c.req.ErrorText += fmt.Sprintf(" (and %d more unreadable)", c.badCount-1)
		}
	}
	if !c.streamed {
		c.chunks.complete = false // a body's usage is the whole reply's, not a message's
	}
	if largest, multi := c.chunks.finish(c.events); multi > 0 {
		x.coalesced.messages += int64(multi)
		if x.coalesced.requests == 0 {
			x.coalesced.first = fmt.Sprintf("%s: %d of %d content messages carried more than one token (up to %d)", where, multi, len(c.chunks.set), largest)
		}
		x.coalesced.requests++
	}
	formats.FillFromEvents(&c.req, c.events)
	if !c.timesKnown(rr, key, x) {
		// A time is unknown (counted by the value checks): the status,
		// the counts and the usage stand; no offset, and no event, since
		// an event needs one.
		c.req.StartNs, c.req.ClockDomain = nil, ""
		c.req.FirstTokenOffsetNs, c.req.FirstContentOffsetNs, c.req.SecondTokenOffsetNs = nil, nil, nil
		c.req.LastTokenOffsetNs, c.req.StreamEndOffsetNs = nil, nil
		c.events = c.events[:0]
		x.unplaced++
	}
	c.setTokens(key, x)
	c.req.ResponseID = c.respID
	if e := c.apiErr; e != nil {
		c.req.ErrorText, c.req.ErrorType, c.req.ErrorCode = e.Message, e.Type, e.Code
	}
	return &c.req, c.events, nil
}

// unreadable says why doc (a response body after its keep-alive preamble,
// or an SSE message's data) cannot be read as an OpenAI-style response:
// kind is "not JSON" (at: "byte 45", counted from base; detail:
// encoding/json's "invalid character …") or "JSON but not an object"; kind
// is "" when doc can be read — a JSON object (whatever its keys), "[DONE]"
// or only whitespace.
func unreadable(doc string, base int) (kind, at, detail string) {
	t := strings.TrimLeft(doc, " \t\r\n")
	base += len(doc) - len(t)
	t = strings.TrimRight(t, " \t\r\n")
	if t == "" || t == "[DONE]" {
		return "", "", ""
	}
	if off, err := ingest.JSONSyntaxError([]byte(t)); err != nil {
		return "not JSON", fmt.Sprintf("byte %d", int64(base)+off), err.Error()
	}
	if t[0] != '{' {
		return "JSON but not an object", fmt.Sprintf("byte %d", base), fmt.Sprintf("it starts %q", t[:min(len(t), 20)])
	}
	return "", "", ""
}

// unreadableBody notes response output k (the last read of a whole body)
// when the body cannot be read; see unreadable. Byte positions count from
// the start of the body (all "response" reads joined).
func (c *converter) unreadableBody(k int, body string, x *experiment, where string) {
	pre := len(body) - len(sse.SkipPreamble(body))
	kind, at, detail := unreadable(body[pre:], pre)
	if kind == "" {
		return
	}
	c.badCount++
	if c.badText == "" {
		c.badText = fmt.Sprintf("response_outputs[%d]: the response body is %s (%s of the body: %s)", k, kind, at, detail)
	}
	x.notes.addAt(fmt.Sprintf("%s, response_outputs[%d] (%s of the body: %s)", where, k, at, detail), true,
		"the response body is "+kind+"; the request is kept with status error, error_type "+ErrorTypeUnparseable)
}

// unreadableMessage notes SSE message i of the request when it holds a
// line that is not SSE (sse.Message.Unknown), or data that cannot be read
// (see unreadable; byte positions count from the start of the message's
// data).
func (c *converter) unreadableMessage(i int, m *sse.Message, x *experiment, where string) {
	var what, detail string // "has data that is not JSON", "byte 32 of the data: invalid character …"
	if m.Unknown != "" {
		name := m.Unknown
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		what, detail = "is not SSE", fmt.Sprintf("a line %q is not an SSE field or comment", name)
	} else {
		kind, at, msg := unreadable(m.Data, 0)
		if kind == "" {
			return
		}
		what, detail = "has data that is "+kind+" (nor [DONE])", at+" of the data: "+msg
	}
	c.badCount++
	if c.badText == "" {
		c.badText = fmt.Sprintf("SSE message %d (ending in response_outputs[%d]) %s (%s)", i, m.ReadIndex, what, detail)
	}
	x.notes.addAt(fmt.Sprintf("%s, SSE message %d ending in response_outputs[%d] (%s)", where, i, m.ReadIndex, detail), true,
		"an SSE message "+what+"; the request is kept with status error, error_type "+ErrorTypeUnparseable)
}

// inputs reads request_inputs: for openai the JSON body in "payload", for
// triton the tensors themselves. It sets MaxTokens (max_completion_tokens,
// else max_tokens), notes the model and the stream flag on x, and returns
// the request's stream flag (nil if not given).
func (c *converter) inputs(in *requestInputs, x *experiment, where string) *bool {
	if in.bad != "" {
		x.notes.addAt(where, true, in.bad)
		return nil
	}
	fields := in.fields
	if v := jsonInt(fields["max_completion_tokens"]); v != nil {
		c.req.MaxTokens = v
	} else {
		c.req.MaxTokens = jsonInt(fields["max_tokens"])
	}
	x.models.Add(jsonString(fields["model"]))
	stream := jsonBool(unwrap1(fields["stream"]))
	if stream != nil && (x.stream == nil || *stream) {
		x.stream = stream
	}
	return stream
}

// buildEvents turns the request's reads into events (see the package
// documentation for the three shapes).
func (c *converter) buildEvents(outs []responseOutput, ts []int64, start int64, streamAsked *bool, x *experiment, where string) {
	switch shapeOf(outs) {
	case shapeSSE:
		c.streamed = true
		c.sseEvents(outs, ts, start, x, where)
	case shapeBody:
		c.bodyEvent(outs, ts, start, x, where)
	case shapeTriton:
		c.streamed = len(outs) > 1 || (streamAsked != nil && *streamAsked)
		c.tritonEvents(outs, ts, start)
	}
	if len(outs) > 0 {
		x.streamed = x.streamed || c.streamed
		x.whole = x.whole || !c.streamed
	}
	for _, o := range outs {
		if o.Response == nil && o.TextOutput == nil {
			x.notes.addAt(where, true, `a response output has neither "response" nor "text_output"; imported as kind other`)
			break
		}
	}
}

type shape int

const (
	shapeNone   shape = iota // no outputs
	shapeSSE                 // "response" reads holding an SSE stream
	shapeBody                // "response" reads holding one whole body
	shapeTriton              // "text_output" tensors
)

// shapeOf decides how a request's outputs are read: Triton when no output
// has "response" but one has "text_output"; otherwise SSE or a whole body
// as sse.LooksLikeSSE says of the "response" reads joined, looking no
// further than needed.
func shapeOf(outs []responseOutput) shape {
	var head strings.Builder
	s := shapeNone
	for _, o := range outs {
		switch {
		case o.Response != nil:
			head.WriteString(*o.Response)
			if isSSE, sure := sse.LooksLikeSSE(head.String()); sure {
				return pick(isSSE)
			}
			s = shapeBody
		case o.TextOutput != nil && s == shapeNone:
			s = shapeTriton
		}
	}
	if s == shapeBody {
		isSSE, _ := sse.LooksLikeSSE(head.String())
		return pick(isSSE)
	}
	if s == shapeNone && len(outs) > 0 {
		return shapeBody
	}
	return s
}

func pick(isSSE bool) shape {
	if isSSE {
		return shapeSSE
	}
	return shapeBody
}

// sseEvents feeds the reads to the SSE parser: one event per message. A
// message with data that is not JSON (an event of kind other) or with a
// line that is not SSE is noted by unreadableMessage.
func (c *converter) sseEvents(outs []responseOutput, ts []int64, start int64, x *experiment, where string) {
	c.msgs = c.msgs[:0]
	for k, o := range outs {
		var s string
		if o.Response != nil {
			s = *o.Response
		}
		c.msgs = c.parser.Feed(c.msgs, k, ts[k], s)
	}
	c.msgs = c.parser.End(c.msgs)
	for i := range c.msgs {
		m := &c.msgs[i]
		p := c.memo.Classify(m)
		if m.Unknown != "" || (p.Kind == formats.KindOther && m.HasData) {
			c.unreadableMessage(i, m, x, where)
		}
		c.add(m.ReadIndex, m.TimeNs-start, m.Bytes, p)
	}
}

// bodyEvent reads all "response" reads as one non-streaming body arriving
// with the last of them. Outputs without "response" are kind other; so is
// a body that is not JSON, noted by unreadableBody.
func (c *converter) bodyEvent(outs []responseOutput, ts []int64, start int64, x *experiment, where string) {
	var b strings.Builder
	last := -1
	for k, o := range outs {
		if o.Response == nil {
			c.add(k, ts[k]-start, 0, sse.Payload{Kind: formats.KindOther})
			continue
		}
		b.WriteString(*o.Response)
		last = k
	}
	if last >= 0 {
		body := b.String()
		p := sse.ClassifyBody(body)
		if p.Kind == formats.KindOther {
			c.unreadableBody(last, body, x, where)
		}
		c.add(last, ts[last]-start, len(body), p)
	}
}

// tritonEvents makes one event per text_output: KindContent with the text,
// KindEmpty for an empty text, KindOther for an output without it.
func (c *converter) tritonEvents(outs []responseOutput, ts []int64, start int64) {
	for k, o := range outs {
		p := sse.Payload{Kind: formats.KindOther}
		if o.TextOutput != nil {
			p.Content = tensorText(o.TextOutput)
			p.Kind = formats.KindEmpty
			if p.Content != "" {
				p.Kind = formats.KindContent
			}
		}
		c.add(k, ts[k]-start, len(p.Content), p)
	}
}

// add appends one event and keeps its usage, id and error.
func (c *converter) add(read int, offset int64, nbytes int, p sse.Payload) {
	e := formats.Event{
		RunID:        c.req.RunID,
		RequestKey:   c.req.RequestKey,
		Index:        int32(len(c.events)),
		ReadIndex:    int32(read),
		OffsetNs:     offset,
		Kind:         p.Kind,
		HasChoices:   p.HasChoices,
		Bytes:        int32(min(nbytes, math.MaxInt32)),
		FinishReason: p.FinishReason,
	}
	if !c.noText {
		if p.Content != "" {
			e.Text = c.text(p.Content)
		}
		if p.Reasoning != "" {
			e.ReasoningText = c.text(p.Reasoning)
		}
		if p.Kind == formats.KindToolCall && p.ToolText != "" {
			e.Text = c.text(p.ToolText)
		}
	}
	c.events = append(c.events, e)
	c.chunks.observe(len(c.events)-1, &c.events[len(c.events)-1], p.Usage)
	if p.Spec != nil {
		c.spec = p.Spec
	}
	if p.Usage != nil {
		c.usage = p.Usage
	}
	if c.respID == "" {
		c.respID = p.ID
	}
	if c.apiErr == nil && p.Error != nil {
		c.apiErr = p.Error
	}
}

// text returns a pointer to a copy of s (the header, not the bytes) in a
// slab of strings allocated per request: one allocation for the request's
// texts, not one per event. A slab is never reused, so the pointers stay
// valid for a sink that keeps them.
func (c *converter) text(s string) *string {
	if len(c.texts) == cap(c.texts) {
		c.texts = make([]string, 0, max(16, len(c.msgs), 2*cap(c.texts)))
	}
	c.texts = append(c.texts, s)
	return &c.texts[len(c.texts)-1]
}

// timesKnown checks the request's times (the shared value checks, in
// x.vals): its timestamp must be a time (not negative, before 2^62 ns) and
// every response must arrive after it and within a day of it (perf_analyzer
// takes both on the same clock). It reports whether they all are.
func (c *converter) timesKnown(rr *rawRequest, key int, x *experiment) bool {
	p := ingest.Pos{Request: int64(key)}
	ok := x.vals.Time("timestamp", p, float64(*rr.Timestamp), ingest.Nanoseconds) != nil
	if !ok {
		return false
	}
	start := *rr.Timestamp
	for k, t := range rr.ResponseTimestamps {
		d := t - start
		if d < 0 || d > ingest.MaxDurationNs {
			p.At = fmt.Sprintf("response_timestamps[%d]", k)
			x.vals.Check("response_timestamps", p, float64(d), ingest.MaxDurationNs)
			return false
		}
	}
	return true
}

// setTokens sets the token counts: server usage when a message carried it,
// else the token-message count for a streamed request. A usage count that
// is negative or over 10^9 is left null (the value checks count it).
func (c *converter) setTokens(key int, x *experiment) {
	r := &c.req
	if sp := c.spec; sp != nil {
		p := ingest.Pos{Request: int64(key)}
		count := func(field string, n *int64) *int64 {
			if n == nil || !x.vals.Check(field, p, float64(*n), ingest.MaxTokens) {
				return nil
			}
			return n
		}
		r.SpecSteps = count("metrics.speculative_decoding.num_spec_steps", sp.SpecSteps)
		r.DraftTokens = count("metrics.speculative_decoding.num_draft_tokens", sp.DraftTokens)
		r.AcceptedTokens = count("metrics.speculative_decoding.num_accepted_draft_tokens", sp.AcceptedTokens)
	}
	if u := c.usage; u != nil {
		p := ingest.Pos{Request: int64(key)}
		count := func(field string, n *int64) *int64 {
			if n == nil || !x.vals.Check(field, p, float64(*n), ingest.MaxTokens) {
				return nil
			}
			return n
		}
		if n := count("usage.prompt_tokens", u.PromptTokens); n != nil {
			r.InputTokens, r.InputTokensSource = n, formats.SourceServerUsage
			r.CachedInputTokens = count("usage.prompt_tokens_details.cached_tokens", u.CachedTokens)
		}
		if n := count("usage.completion_tokens", u.CompletionTokens); n != nil {
			r.OutputTokens, r.OutputTokensSource = n, formats.SourceServerUsage
			r.ReasoningTokens = count("usage.completion_tokens_details.reasoning_tokens", u.ReasoningTokens)
			return
		}
	}
	if c.streamed {
		r.OutputTokens, r.OutputTokensSource = ingest.Ptr(r.TokenMessageCount), formats.SourceChunkCount
	}
}

// tensorText reads a Triton text tensor: a string, or the concatenation of
// an array of strings (a multi-element BYTES tensor); anything else is its
// JSON text.
func tensorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil {
		return strings.Join(l, "")
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// unwrap1 returns the element of a one-element JSON array (a Triton tensor
// with one element may be written either way), else raw.
func unwrap1(raw json.RawMessage) json.RawMessage {
	var l []json.RawMessage
	if len(raw) > 0 && raw[0] == '[' && json.Unmarshal(raw, &l) == nil && len(l) == 1 {
		return l[0]
	}
	return raw
}

// jsonInt reads an integer (or an integral float, or a one-element array of
// one); nil otherwise.
func jsonInt(raw json.RawMessage) *int64 {
	f := jsonFloat(unwrap1(raw))
	if f == nil || *f != math.Trunc(*f) || math.Abs(*f) > 1<<53 {
		return nil
	}
	return ingest.Ptr(int64(*f))
}
