package inferenceperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// generation is the layout of a per-request record's "info" object
// (apis/base.py InferenceInfo and its successors).
type generation int

const (
	// genNoInfo: no "info" (v0.1.0 wrote start, end, request, response and
	// error only).
	genNoInfo generation = iota
	// genTimes: info{input_tokens, output_tokens, output_token_times[]}
	// (v0.1.1–v0.2.x), plus extra_info (v0.3.0+, from 4ec6bfd 2025-11-24)
	// and lora_adapter (v0.4).
	genTimes
	// genResponseInfo: info{input_tokens, extra_info, lora_adapter,
	// response_info{response_chunks, chunk_times, output_tokens,
	// output_token_times, server_usage} | {output_tokens}} (v0.5.x).
	genResponseInfo
	// genMetrics: info{request_metrics{text{input_tokens}, image, video,
	// audio}, response_metrics{output_tokens, server_usage[,
	// response_chunks, chunk_times, output_token_times]}, extra_info,
	// lora_adapter, labels} (v0.6+).
	genMetrics
)

func (g generation) String() string {
	switch g {
	case genTimes:
		return "info.output_token_times (v0.1.1–v0.4)"
	case genResponseInfo:
		return "info.response_info (v0.5)"
	case genMetrics:
		return "info.request_metrics/response_metrics (v0.6+)"
	}
	return "no info (v0.1.0)"
}

// record is one element of per_request_lifecycle_metrics.json, parsed.
// Times are time.perf_counter() seconds: a monotonic clock with an
// arbitrary origin, comparable within one run only.
type record struct {
	start, end float64
	// sched is scheduled_time (RequestLifecycleMetric: when the load
	// generator's schedule meant the request to be sent; start_time −
	// scheduled_time is load_summary.schedule_delay in reportgen/base.py
	// summarize_requests, kubernetes-sigs/inference-perf 7de5ef2), nil
	// where the record has none — every per-request file upstream at
	// 7de5ef2; forks and later versions may write it.
	sched     *float64
	stageID   *int
	gen       generation
	extraInfo bool // info.extra_info present (v0.3+)
	failed    bool
	errType   string
	errMsg    string
	// the tool's counts (client re-tokenization; v0.5: the per-chunk sum)
	inputTokens, outputTokens *float64
	// server usage (v0.5+ with stream_options.include_usage or unary)
	serverPrompt, serverCompletion *float64
	streamed                       bool // response metrics of the streamed kind
	tokenTimes                     []float64
	chunkTimes                     []float64
	// chunks are response_chunks: decoded strings (the reference decoder),
	// or the string literals as the fast path found them (chunkLits,
	// quotes and escapes included, pointing into the reader's buffer:
	// valid only during the scan's callback); see nChunks and chunk.
	chunks      []string
	chunkLits   [][]byte
	hasResponse bool // response metrics present (not None)
	model       string
	maxTokens   *int64
	stream      *bool
	chat        *bool
	multimodal  bool
	unknown     []string
	// quoted are the numeric fields written as strings (path: raw), for
	// the value checks of the pass that emits the record (checkValues).
	quoted [][2]string
	// timesBad: a time of the record is an offending value (checkValues):
	// no offset and no event can be placed.
	timesBad bool
	// the "response" value's offset in the record, length and hash
	// (respHints; respLen 0: not known)
	respOff, respLen int
	respHash         uint64
}

// Keys inference-perf writes in a per-request record (v0.1.0 … 7de5ef2).
// The RequestLifecycleMetric fields it does not write (stage_id,
// scheduled_time, session_id, SLO headers) are accepted too, for forks and
// future versions; stage_id is used when every record has one.
var (
	recordKeys   = setOf("start_time", "end_time", "request", "response", "info", "error", "stage_id", "scheduled_time", "session_id", "ttft_slo_sec", "tpot_slo_sec")
	infoKeys     = setOf("input_tokens", "output_tokens", "output_token_times", "extra_info", "lora_adapter", "response_info", "request_metrics", "response_metrics", "labels")
	responseKeys = setOf("output_tokens", "server_usage", "response_chunks", "chunk_times", "output_token_times")
	errorKeys    = setOf("error_type", "error_msg")
)

// fieldErr is an error at a key path of a record.
type fieldErr struct {
	path string
	msg  string
}

func (e *fieldErr) Error() string { return e.path + ": " + e.msg }

// parseRecord reads one record. Wrong types where inference-perf writes a
// number (times, token counts) are errors naming the key; a number written
// as a string is read (and counted by checkValues).
func parseRecord(fields *obj) (*record, error) {
	r := &record{}
	var err error
	number := func(m *obj, key, at string, required bool) (*float64, error) {
		return r.number(m, key, at, required)
	}
	start, err := number(fields, "start_time", "start_time", true)
	if err != nil {
		return nil, err
	}
	end, err := number(fields, "end_time", "end_time", true)
	if err != nil {
		return nil, err
	}
	r.start, r.end = *start, *end
	if r.sched, err = number(fields, "scheduled_time", "scheduled_time", false); err != nil {
		return nil, err
	}
	if raw, ok := fields.m["stage_id"]; ok && !isNull(raw) {
		v, err := number(fields, "stage_id", "stage_id", false)
		if err != nil {
			return nil, err
		}
		if v != nil && *v == math.Trunc(*v) && math.Abs(*v) < 1<<20 {
			r.stageID = ingest.Ptr(int(*v))
		}
	}
	for k := range fields.m {
		if !recordKeys[k] {
			r.unknown = append(r.unknown, k)
		}
	}
	r.parseRequest(fields.m["request"])
	if raw, ok := fields.m["error"]; ok && !isNull(raw) {
		var e map[string]json.RawMessage
		if json.Unmarshal(raw, &e) != nil || e == nil {
			return nil, &fieldErr{"error", "not an object"}
		}
		r.failed = true
		r.errType, r.errMsg = ingest.RawText(e["error_type"]), ingest.RawText(e["error_msg"])
		for k := range e {
			if !errorKeys[k] {
				r.unknown = append(r.unknown, "error."+k)
			}
		}
	}
	if raw, ok := fields.m["info"]; ok && !isNull(raw) {
		info, ok := fields.object("info")
		if !ok {
			return nil, &fieldErr{"info", "not an object"}
		}
		if err := r.parseInfo(info); err != nil {
			return nil, err
		}
	}
	sort.Strings(r.unknown)
	return r, nil
}

// parseInfo reads the info object of any generation.
func (r *record) parseInfo(info *obj) error {
	for k := range info.m {
		if !infoKeys[k] {
			r.unknown = append(r.unknown, "info."+k)
		}
	}
	_, r.extraInfo = info.m["extra_info"]
	var err error
	switch {
	case has(info, "request_metrics") || has(info, "response_metrics"):
		r.gen = genMetrics
		if raw := info.m["request_metrics"]; !isNull(raw) {
			rm, ok := info.object("request_metrics")
			if !ok {
				return &fieldErr{"info.request_metrics", "not an object"}
			}
			if t := rm.m["text"]; !isNull(t) {
				text, ok := rm.object("text")
				if !ok {
					return &fieldErr{"info.request_metrics.text", "not an object"}
				}
				if r.inputTokens, err = r.number(text, "input_tokens", "info.request_metrics.text.input_tokens", false); err != nil {
					return err
				}
			}
			for _, m := range []string{"image", "video", "audio"} {
				if !isNull(rm.m[m]) {
					r.multimodal = true
				}
			}
		}
		return r.parseResponse(info, "response_metrics", "info.response_metrics")
	case has(info, "response_info"):
		r.gen = genResponseInfo
		if r.inputTokens, err = r.number(info, "input_tokens", "info.input_tokens", false); err != nil {
			return err
		}
		return r.parseResponse(info, "response_info", "info.response_info")
	default:
		r.gen = genTimes
		if r.inputTokens, err = r.number(info, "input_tokens", "info.input_tokens", false); err != nil {
			return err
		}
		if r.outputTokens, err = r.number(info, "output_tokens", "info.output_tokens", false); err != nil {
			return err
		}
		if r.tokenTimes, err = r.floats(info, "output_token_times", "info.output_token_times"); err != nil {
			return err
		}
		r.hasResponse = true
		r.streamed = len(r.tokenTimes) > 0
	}
	return nil
}

// parseResponse reads a v0.5 response_info or v0.6+ response_metrics
// object (null for a request that got no response).
func (r *record) parseResponse(info *obj, key, at string) error {
	if isNull(info.m[key]) {
		return nil
	}
	m, ok := info.object(key)
	if !ok {
		return &fieldErr{at, "not an object"}
	}
	r.hasResponse = true
	for k := range m.m {
		if !responseKeys[k] {
			r.unknown = append(r.unknown, at+"."+k)
		}
	}
	var err error
	if r.outputTokens, err = r.number(m, "output_tokens", at+".output_tokens", false); err != nil {
		return err
	}
	if u := m.m["server_usage"]; !isNull(u) {
		usage, ok := m.object("server_usage")
		if !ok {
			return &fieldErr{at + ".server_usage", "not an object"}
		}
		if r.serverPrompt, err = r.number(usage, "prompt_tokens", at+".server_usage.prompt_tokens", false); err != nil {
			return err
		}
		if r.serverCompletion, err = r.number(usage, "completion_tokens", at+".server_usage.completion_tokens", false); err != nil {
			return err
		}
	}
	_, hasChunks := m.m["chunk_times"]
	_, hasTimes := m.m["output_token_times"]
	r.streamed = hasChunks || hasTimes || has(m, "response_chunks")
	if r.chunkTimes, err = r.floats(m, "chunk_times", at+".chunk_times"); err != nil {
		return err
	}
	if r.tokenTimes, err = r.floats(m, "output_token_times", at+".output_token_times"); err != nil {
		return err
	}
	if raw := m.m["response_chunks"]; !isNull(raw) {
		if lits, ok := m.strs["response_chunks"]; ok {
			r.chunkLits = lits
		} else if json.Unmarshal(raw, &r.chunks) != nil {
			return &fieldErr{at + ".response_chunks", "not a list of strings"}
		}
	}
	if n := r.nChunks(); n > 0 && n != len(r.chunkTimes) {
		return &fieldErr{at, fmt.Sprintf("%d response_chunks for %d chunk_times (inference-perf writes them 1:1)", n, len(r.chunkTimes))}
	}
	return nil
}

// parseRequest reads the request body (a JSON string of the payload sent)
// for the model, max_tokens, stream and the API kind. An unreadable body is
// not an error: it is the tool's echo, not a measurement.
func (r *record) parseRequest(raw json.RawMessage) {
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return
	}
	var body map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &body) != nil {
		return
	}
	r.model = ingest.RawText(body["model"])
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		var v float64
		if json.Unmarshal(body[k], &v) == nil && v >= 0 && v < 1<<40 {
			r.maxTokens = ingest.Ptr(int64(v))
			break
		}
	}
	var st bool
	if json.Unmarshal(body["stream"], &st) == nil {
		r.stream = &st
	}
	if _, ok := body["messages"]; ok {
		r.chat = ingest.Ptr(true)
	} else if _, ok := body["prompt"]; ok {
		r.chat = ingest.Ptr(false)
	}
}

func has(o *obj, k string) bool {
	_, ok := o.m[k]
	return ok
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// number reads a numeric field: null and absent are nil (an error when
// required); a number, or a string spelling one (noted in r.quoted), is
// its value, NaN and infinities included (checkValues judges them);
// anything else is an error naming at.
func (r *record) number(m *obj, key, at string, required bool) (*float64, error) {
	return r.numberRaw(m.m[key], at, required)
}

// numberRaw is number for the raw value raw.
func (r *record) numberRaw(raw json.RawMessage, at string, required bool) (*float64, error) {
	if isNull(raw) {
		if required {
			return nil, &fieldErr{at, "missing (a number is required)"}
		}
		return nil, nil
	}
	x, st := ingest.ReadJSONNumber(raw)
	switch st {
	case ingest.JSONQuoted:
		r.quoted = append(r.quoted, [2]string{at, string(bytes.TrimSpace(raw))})
	case ingest.JSONOther:
		return nil, &fieldErr{at, "not a number: " + clip(string(bytes.TrimSpace(raw)), 40)}
	}
	return &x, nil
}

// floats reads a list of numbers (null or absent: nil); an element is read
// as number reads a field.
func (r *record) floats(m *obj, key, at string) ([]float64, error) {
	raw := m.m[key]
	if isNull(raw) {
		return nil, nil
	}
	if v, ok := m.nums[key]; ok {
		return v, nil
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err == nil {
		return v, nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil, &fieldErr{at, "not a list of numbers"}
	}
	v = make([]float64, len(elems))
	for i, e := range elems {
		x, err := r.numberRaw(e, at, false)
		if err != nil || x == nil {
			return nil, &fieldErr{at, "not a list of numbers"}
		}
		v[i] = *x
	}
	return v, nil
}

// checkValues applies the shared value checks to the record, request key
// of its run at p: a number written as a string is counted; a time that is
// not a perf_counter reading (NaN, negative, past 2^62 ns), an end or a
// token or chunk time before the start or more than a day after it, marks
// the record's times unknown (timesBad: no offset, no event); a token
// count outside [0, 10^9] is counted and left null.
func (r *record) checkValues(vals *ingest.Values, p ingest.Pos) {
	for _, q := range r.quoted {
		vals.Record(ingest.CheckNumberAsString, q[0], p, q[1])
	}
	maxTime := float64(ingest.MaxTimeNs) / ingest.Seconds
	if !vals.Check("start_time", p, r.start, maxTime) {
		r.timesBad = true
	}
	if r.sched != nil && !vals.Check("scheduled_time", p, *r.sched, maxTime) {
		r.sched = nil
	}
	after := func(field string, t float64) bool {
		if r.timesBad {
			return false
		}
		if !vals.Check(field, p, t, maxTime) {
			return false
		}
		d := t - r.start
		if c := ingest.Classify(d, ingest.MaxIn(ingest.Seconds)); c != ingest.Valid {
			vals.Record(c.Code(), field, p, fmt.Sprintf("%s (%s s from start_time)", ingest.FormatValue(t), ingest.FormatValue(d)))
			return false
		}
		return true
	}
	if !after("end_time", r.end) {
		r.timesBad = true
	}
	for _, l := range []struct {
		field string
		times []float64
	}{{"output_token_times", r.tokenTimes}, {"chunk_times", r.chunkTimes}} {
		for _, t := range l.times {
			if !after(l.field, t) {
				r.timesBad = true
				break
			}
		}
	}
	for _, c := range []struct {
		field string
		n     **float64
	}{{"input_tokens", &r.inputTokens}, {"output_tokens", &r.outputTokens},
		{"server_usage.prompt_tokens", &r.serverPrompt}, {"server_usage.completion_tokens", &r.serverCompletion}} {
		if *c.n != nil && !vals.Check(c.field, p, **c.n, ingest.MaxTokens) {
			*c.n = nil
		}
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// refScan is scanRecords by encoding/json, the reference: it reads dec
// from before the array's '[', skips the first skip elements (records the
// caller has had already), and numbers the rest from n. offset is added
// to the decoder's byte offsets for the file's.
func refScan(path string, dec *json.Decoder, offset int64, n, skip, limit int, fn func(i int, r *record) error) (int, string, error) {
	t, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return 0, "", ingest.Errorf(path, "", "empty file (expected a JSON array)")
	}
	if err != nil || t != json.Delim('[') {
		if err == nil {
			err = fmt.Errorf("starts with %v", t)
		}
		return 0, "", &ingest.FormatError{File: path, Where: "byte 0", Msg: "not a JSON array", Err: err}
	}
	for dec.More() {
		if skip > 0 {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return 0, "", err // decoded before: cannot happen
			}
			skip--
			continue
		}
		if limit >= 0 && n >= limit {
			return n, "", nil
		}
		where := fmt.Sprintf("record %d", n+1)
		var fields map[string]json.RawMessage
		if err := dec.Decode(&fields); err != nil {
			if errors.Is(err, io.EOF) {
				return n, fmt.Sprintf("the array ends after record %d without its closing ']' (file cut)", n), nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return n, where + " is incomplete (file cut)", nil
			}
			return 0, "", &ingest.FormatError{File: path, Where: where, Msg: "invalid JSON", Err: err}
		}
		if fields == nil {
			return 0, "", ingest.Errorf(path, where, "null instead of an object")
		}
		r, err := parseRecord(&obj{m: fields})
		if err != nil {
			return 0, "", ingest.Wrap(path, where, err)
		}
		if err := fn(n, r); err != nil {
			return 0, "", err
		}
		n++
	}
	if limit >= 0 {
		return n, "", nil
	}
	t, err = dec.Token()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return n, fmt.Sprintf("the array ends after record %d without its closing ']' (file cut)", n), nil
	case err != nil:
		return 0, "", &ingest.FormatError{File: path, Where: fmt.Sprintf("record %d", n+1), Msg: "invalid JSON", Err: err}
	case t != json.Delim(']'):
		return 0, "", ingest.Errorf(path, fmt.Sprintf("record %d", n+1), "unexpected %v", t)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return 0, "", ingest.Errorf(path, fmt.Sprintf("byte %d", offset+dec.InputOffset()), "data after the JSON array")
	}
	return n, "", nil
}

// toNs converts a perf_counter time (s) to integer ns; ok is false for
// values beyond int64 ns.
func toNs(s float64) (int64, bool) {
	v := math.Round(s * 1e9)
	if math.IsNaN(v) || math.Abs(v) > 9e18 {
		return 0, false
	}
	return int64(v), true
}

// chunkTokens returns the number of output-token times that carry each
// chunk's time: inference-perf's report step (summarize_requests, v0.5+)
// re-tokenizes each content chunk and gives every one of its tokens the
// chunk's arrival time, then stores that list back into the record before
// the per-request file is written. ok is false when the lists do not fit
// together (a token time no chunk has, or two chunks sharing one time).
func chunkTokens(chunkTimes, tokenTimes []float64) ([]int32, bool) {
	out := make([]int32, len(chunkTimes))
	j := 0
	for i, c := range chunkTimes {
		if i+1 < len(chunkTimes) && chunkTimes[i+1] == c {
			return nil, false
		}
		n := int32(0)
		for j < len(tokenTimes) && tokenTimes[j] == c {
			j++
			n++
		}
		out[i] = n
	}
	if j != len(tokenTimes) {
		return nil, false
	}
	return out, true
}

// sameTimes reports whether the token times are the chunk times, one each
// (the report step did not split chunks, or found one token in each).
func sameTimes(chunkTimes, tokenTimes []float64) bool {
	if len(chunkTimes) != len(tokenTimes) {
		return false
	}
	for i := range chunkTimes {
		if chunkTimes[i] != tokenTimes[i] {
			return false
		}
	}
	return true
}

// chunkJSON is the part of a streamed chunk the importer reads: OpenAI
// completions (choices[0].text), chat (choices[0].delta.content, reasoning)
// and Anthropic messages (delta.text).
type chunkJSON struct {
	ID      string `json:"id"`
	Choices []struct {
		Text  *string `json:"text"`
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Delta struct {
		Text *string `json:"text"`
	} `json:"delta"`
}

// chunkEvent describes one recorded chunk: its kind, whether it had
// choices, its content and reasoning text, finish reason and response id.
func chunkEvent(s string) (kind string, hasChoices bool, text, reasoning, finish, id string) {
	var c chunkJSON
	if json.Unmarshal([]byte(s), &c) != nil {
		return formats.KindOther, false, "", "", "", ""
	}
	id = c.ID
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if len(c.Choices) > 0 {
		hasChoices = true
		ch := c.Choices[0]
		text = deref(ch.Text)
		if text == "" {
			text = deref(ch.Delta.Content)
		}
		reasoning = deref(ch.Delta.ReasoningContent)
		if reasoning == "" {
			reasoning = deref(ch.Delta.Reasoning)
		}
		finish = deref(ch.FinishReason)
	} else {
		text = deref(c.Delta.Text)
	}
	switch {
	case text != "":
		kind = formats.KindContent
	case reasoning != "":
		kind = formats.KindReasoning
	case hasChoices:
		kind = formats.KindEmpty
	default:
		kind = formats.KindOther
	}
	return kind, hasChoices, text, reasoning, finish, id
}

var httpErrorType = regexp.MustCompile(`^HTTP Error (\d{3})$`)

// eventsOf builds the record's events. Streamed v0.5+ records give one
// event per recorded content chunk (chunk_times, response_chunks), with its
// token count when the report step's per-token times tell it
// (tokensKnown); v0.1.1–v0.4 records give one event per recorded time
// (output_token_times), kind content, with no text or count: the tool did
// not keep what arrived at each time. No other event is invented.
func (r *record) eventsOf(tokensKnown, noText bool, cm *chunkMemo) ([]formats.Event, bool) {
	var events []formats.Event
	if r.timesBad {
		return nil, true
	}
	offset := func(t float64) int64 {
		ns, _ := toNs(t - r.start)
		return ns
	}
	switch {
	case r.gen == genTimes:
		for i, t := range r.tokenTimes {
			events = append(events, formats.Event{Index: int32(i), ReadIndex: int32(i), OffsetNs: offset(t), Kind: formats.KindContent})
		}
		return events, true
	case len(r.chunkTimes) > 0:
		var toks []int32
		consistent := true
		if tokensKnown && len(r.tokenTimes) > 0 {
			toks, consistent = chunkTokens(r.chunkTimes, r.tokenTimes)
		}
		for i, t := range r.chunkTimes {
			e := formats.Event{Index: int32(i), ReadIndex: int32(i), OffsetNs: offset(t), Kind: formats.KindContent}
			if i < r.nChunks() {
				c, size := cm.chunk(r, i)
				e.Kind, e.HasChoices, e.FinishReason = c.kind, c.hasChoices, c.finish
				e.Bytes = int32(min(size, math.MaxInt32))
				if !noText && c.text != "" {
					e.Text = ingest.Ptr(c.text)
				}
				if !noText && c.reasoning != "" {
					e.ReasoningText = ingest.Ptr(c.reasoning)
				}
			}
			if toks != nil {
				e.Tokens = ingest.Ptr(toks[i])
			}
			events = append(events, e)
		}
		return events, consistent
	case len(r.tokenTimes) > 0:
		// Token times without chunk times (a fork, or a hand-trimmed file).
		for i, t := range r.tokenTimes {
			events = append(events, formats.Event{Index: int32(i), ReadIndex: int32(i), OffsetNs: offset(t), Kind: formats.KindContent})
		}
	}
	return events, true
}

// SourceScheduledTime is Request.ScheduledStartSource of inference-perf's
// intended starts.
const SourceScheduledTime = "inference-perf:scheduled_time"

// toRequest builds the Request of record key in run runID.
func (r *record) toRequest(runID string, key int64, events []formats.Event, cm *chunkMemo) formats.Request {
	req := formats.Request{RunID: runID, RequestKey: key, ClockDomain: formats.ClockMonotonic}
	if ns, ok := toNs(r.start); ok && !r.timesBad {
		req.StartNs = ingest.Ptr(ns)
		if r.sched != nil {
			if s, ok := toNs(*r.sched); ok {
				req.ScheduledStartNs, req.ScheduledStartSource = ingest.Ptr(s), SourceScheduledTime
			}
		}
	} else {
		req.ClockDomain = ""
	}
	if d, ok := toNs(r.end - r.start); ok && !r.timesBad {
		req.StreamEndOffsetNs = ingest.Ptr(d)
	}
	req.MaxTokens = r.maxTokens
	for i := range r.nChunks() {
		if c, _ := cm.chunk(r, i); c.id != "" {
			req.ResponseID = c.id
			break
		}
	}
	if r.failed {
		req.Status = formats.StatusError
		req.ErrorType, req.ErrorText = r.errType, r.errMsg
		if m := httpErrorType.FindStringSubmatch(r.errType); m != nil {
			code, _ := strconv.ParseInt(m[1], 10, 64)
			req.ErrorCode = ingest.Ptr(code)
		}
	}
	// Token counts: the server's usage first, then the tool's count.
	if r.serverPrompt != nil {
		req.InputTokens, req.InputTokensSource = ingest.Ptr(int64(math.Round(*r.serverPrompt))), formats.SourceServerUsage
	} else if r.inputTokens != nil {
		req.InputTokens, req.InputTokensSource = ingest.Ptr(int64(math.Round(*r.inputTokens))), formats.SourceToolReported
	}
	if r.serverCompletion != nil {
		req.OutputTokens, req.OutputTokensSource = ingest.Ptr(int64(math.Round(*r.serverCompletion))), formats.SourceServerUsage
	} else if r.outputTokens != nil && r.hasResponse {
		req.OutputTokens, req.OutputTokensSource = ingest.Ptr(int64(math.Round(*r.outputTokens))), formats.SourceToolReported
	}
	req.ReportedInputTokens = r.inputTokens
	if r.hasResponse {
		req.ReportedOutputTokens = r.outputTokens
	}
	if len(events) > 0 {
		formats.FillFromEvents(&req, events)
		return req
	}
	if !r.failed {
		switch {
		case r.gen == genNoInfo:
			// v0.1.0 keeps no output data: the tool counted the request
			// as a success, and so does the importer.
			req.Status = formats.StatusOK
		case req.OutputTokens != nil && *req.OutputTokens > 0:
			req.Status = formats.StatusOK
		default:
			req.Status = formats.StatusEmpty
		}
	}
	return req
}

// errorLabel is a record's error for the notes ("HTTP Error 429").
func (r *record) errorLabel() string {
	if r.errType != "" {
		return r.errType
	}
	return strings.TrimSpace(clip(r.errMsg, 40))
}
