package aiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// record is one line of profile_export.jsonl (AIPerf MetricRecordInfo,
// common/models/record_models.py 61-135 at ai-dynamo/aiperf db4f639).
type record struct {
	Metadata *recordMeta       `json:"metadata"`
	Metrics  map[string]metric `json:"metrics"`
	Error    *recordError      `json:"error"`

	// What prepare read, through the shared value checks.
	vals       *ingest.Values
	pos        ingest.Pos
	seen       map[string]checked // scalar metrics by tag
	start, end *int64             // request_start_ns (or timestamp_ns), request_end_ns
	credit     *int64             // credit_issued_ns
	icl        []float64          // inter_chunk_latency (nil: absent, or not a list)
	iclUnit    string
	iclBad     bool       // … holds an offending value: no event can be placed after it
	shape      eventShape // set when the record's events were rebuilt
	offs       []int64    // … and their offsets (reused from record to record)
}

// checked is a scalar metric as the value checks left it: ok false when
// absent, null or offending.
type checked struct {
	v    float64
	unit string
	ok   bool
}

// metaInt is an integer of a record's metadata (session_num,
// turn_index): v is its value, nil when absent or null; bad holds a value
// that is no integer ("1", 1.5, a number past int64), which the record's
// value checks count (the rest of the record is read).
type metaInt struct {
	v   *int64
	bad string
}

// UnmarshalJSON reads an integer, and keeps anything else aside.
func (m *metaInt) UnmarshalJSON(b []byte) error {
	t := strings.TrimSpace(string(b))
	if t == "null" {
		return nil
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		m.v = &n
		return nil
	}
	m.bad = t
	return nil
}

// recordMeta is a record's "metadata" object. Every field may be absent.
type recordMeta struct {
	SessionNum     metaInt `json:"session_num"`
	XRequestID     string  `json:"x_request_id"`
	XCorrelationID string  `json:"x_correlation_id"`
	ConversationID string  `json:"conversation_id"`
	TurnIndex      metaInt `json:"turn_index"`
	// ParentCorrelationID is the x_correlation_id of the conversation that
	// spawned this one in an agent tree (AIPerf 2026 record_models.py
	// MetricRecordMetadata); "" for a root.
	ParentCorrelationID string `json:"parent_correlation_id"`
	// RequestStartNs is the wall-clock send time (time.time_ns()).
	RequestStartNs json.RawMessage `json:"request_start_ns"`
	// TimestampNs is AIPerf 0.1.x's name for the send time.
	TimestampNs json.RawMessage `json:"timestamp_ns"`
	// RequestEndNs is the wall-clock time of the last raw response chunk
	// (usage chunk and [DONE] included) or of the error.
	RequestEndNs json.RawMessage `json:"request_end_ns"`
	// CreditIssuedNs is when AIPerf's timing manager issued the request's
	// credit (its slot in the schedule: a rate's next arrival, a freed
	// concurrency slot), time.time_ns(); AIPerf's effective_latency is
	// request_end_ns − credit_issued_ns (ai-dynamo/aiperf 36c0308
	// docs/reference/effective-vs-active-metrics.md; record_models.py
	// MetricRecordMetadata). Absent before AIPerf 0.4.
	CreditIssuedNs json.RawMessage `json:"credit_issued_ns"`
	BenchmarkPhase string          `json:"benchmark_phase"`
	// CreditPhase is AIPerf 0.1.x's name for BenchmarkPhase.
	CreditPhase  string `json:"credit_phase"`
	WasCancelled bool   `json:"was_cancelled"`
}

// metric is one entry of a record's "metrics": a value in display units
// (a number, or a list for inter_chunk_latency) and its unit.
type metric struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
	// list is Value's numbers when fastDecodeRecord parsed them as it
	// read a plain list (listOK); prepare then does not parse Value again.
	list   []float64
	listOK bool
}

// recordError is a record's "error" object ({code?, type, message, cause?,
// cause_chain?}); code is an HTTP status when there was one.
type recordError struct {
	Code    json.RawMessage `json:"code"`
	Type    string          `json:"type"`
	Message json.RawMessage `json:"message"`
}

// Metric tags read from records (AIPerf metrics/types/*.py). The 0.1.x
// export used "ttft" and "ttst" for the first two.
const (
	tagTTFT      = "time_to_first_token"
	tagTTFTOld   = "ttft"
	tagTTST      = "time_to_second_token"
	tagTTSTOld   = "ttst"
	tagTTFO      = "time_to_first_output_token"
	tagLatency   = "request_latency"
	tagICL       = "inter_chunk_latency"
	tagITL       = "inter_token_latency"
	tagOSL       = "output_sequence_length"
	tagISL       = "input_sequence_length"
	tagOutCount  = "output_token_count"
	tagReasoning = "reasoning_token_count"
	tagUsageOut  = "usage_completion_tokens"
	tagUsageIn   = "usage_prompt_tokens"
	// tagCacheRead is the prompt tokens the server read from its prefix
	// cache (usage.prompt_tokens_details.cached_tokens as AIPerf records it;
	// its overall_usage_prompt_cache_read_pct is Σ of these / Σ
	// usage_prompt_tokens × 100).
	tagCacheRead  = "usage_prompt_cache_read_tokens"
	tagErrorISL   = "error_isl"
	tagPerUserTPS = "output_token_throughput_per_user"
)

// timeTags and countTags are the scalar metrics read as durations (in
// their unit) and token counts: the range of the value checks.
var (
	timeTags  = []string{tagTTFT, tagTTFTOld, tagTTST, tagTTSTOld, tagTTFO, tagLatency, tagITL}
	countTags = []string{tagOSL, tagISL, tagOutCount, tagReasoning, tagUsageOut, tagUsageIn, tagCacheRead, tagErrorISL}
)

// prepare reads what convert uses through the shared value checks (vals,
// the record at p): the metadata's times (request_start_ns in another unit
// than Unix nanoseconds is an error: CheckTimeUnit), the scalar metrics
// (an offending value left absent and counted; a value that is no number
// at all an error) and inter_chunk_latency.
func (r *record) prepare(vals *ingest.Values, p ingest.Pos) error {
	r.vals, r.pos = vals, p
	if r.seen == nil {
		r.seen = make(map[string]checked, 16)
	} else {
		clear(r.seen) // a map the last record left (readRecords)
	}
	md := r.Metadata
	startKey, startRaw := "request_start_ns", md.RequestStartNs
	if len(startRaw) == 0 {
		startKey, startRaw = "timestamp_ns", md.TimestampNs
	}
	if x, st := ingest.ReadJSONNumber(startRaw); st == ingest.JSONNumber || st == ingest.JSONQuoted {
		if why := ingest.EpochMismatch(x, "ns", ingest.Nanoseconds); why != "" {
			return fmt.Errorf("metadata.%s: %s (AIPerf writes time.time_ns())", startKey, why)
		}
	}
	var err error
	if r.start, err = vals.JSONTime(startKey, p, startRaw, ingest.Nanoseconds); err != nil {
		return fmt.Errorf("metadata.%w", err)
	}
	if r.end, err = vals.JSONTime("request_end_ns", p, md.RequestEndNs, ingest.Nanoseconds); err != nil {
		return fmt.Errorf("metadata.%w", err)
	}
	if r.credit, err = vals.JSONTime("credit_issued_ns", p, md.CreditIssuedNs, ingest.Nanoseconds); err != nil {
		return fmt.Errorf("metadata.%w", err)
	}
	for _, f := range []struct {
		name string
		v    *metaInt
	}{{"turn_index", &md.TurnIndex}, {"session_num", &md.SessionNum}} {
		if f.v.bad != "" {
			vals.Record(ingest.CheckNotInteger, "metadata."+f.name, p, f.v.bad)
		} else if f.v.v != nil && *f.v.v < 0 {
			vals.Record(ingest.CheckNegative, "metadata."+f.name, p, strconv.FormatInt(*f.v.v, 10))
			f.v.v = nil
		}
	}
	for _, group := range [][]string{timeTags, countTags, {tagPerUserTPS}} {
		for _, tag := range group {
			m, found := r.Metrics[tag]
			if !found {
				continue
			}
			x, ok, err := vals.JSON(tag, p, m.Value)
			if err != nil {
				return fmt.Errorf("metrics.%w", err)
			}
			maxV := math.MaxFloat64
			if scale, known := nsPerUnit[m.Unit]; known && slices.Contains(timeTags, tag) {
				maxV = ingest.MaxIn(scale)
			} else if slices.Contains(countTags, tag) {
				maxV = ingest.MaxTokens
			}
			ok = ok && vals.Check(tag, p, x, maxV)
			r.seen[tag] = checked{x, m.Unit, ok}
		}
	}
	r.firstTokenNotAfterEnd()
	if m, found := r.Metrics[tagICL]; found {
		r.iclUnit = m.Unit
		// floatList's reference (encoding/json) reads a null element as
		// 0: a list holding null or strings takes slowICL.
		list, ok := m.list, m.listOK
		if !ok && !bytes.Contains(m.Value, []byte("null")) && !bytes.Contains(m.Value, []byte(`"`)) {
			list, ok = floatList(m.Value)
		}
		if !ok {
			if list, ok, err = r.slowICL(m.Value); err != nil {
				return fmt.Errorf("metrics.%s: %w", tagICL, err)
			}
		}
		if ok {
			maxV := math.MaxFloat64
			if scale, known := nsPerUnit[m.Unit]; known {
				maxV = ingest.MaxIn(scale)
			}
			for _, g := range list {
				if !vals.Check(tagICL, p, g, maxV) {
					r.iclBad = true
				}
			}
			r.icl = list
		}
	}
	return nil
}

// slowICL reads an inter_chunk_latency list that floatList did not take:
// elements that are numbers written as strings are read (and counted), a
// null element is NaN (unknown, counted), and anything else but a list of
// numbers is an error. ok is false for null.
func (r *record) slowICL(raw []byte) ([]float64, bool, error) {
	if t := jsonTrim(raw); string(t) == "null" {
		return nil, false, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, false, errors.New("not a list of numbers")
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		x, ok, err := r.vals.JSON(tagICL, r.pos, e)
		if err != nil {
			return nil, false, fmt.Errorf("element %d: not a number: %s", i, jsonTrim(e))
		}
		if !ok {
			x = math.NaN() // null: unknown, counted as not finite
		}
		out[i] = x
	}
	return out, true, nil
}

// scalar returns the numeric value of metric tag (the first of tags
// present) and its unit, as prepare read it; ok is false when absent, null
// or offending.
func (r *record) scalar(tags ...string) (v float64, unit string, ok bool) {
	for _, tag := range tags {
		if _, found := r.Metrics[tag]; !found {
			continue
		}
		c := r.seen[tag]
		return c.v, c.unit, c.ok
	}
	return 0, "", false
}

// firstTokenNotAfterEnd leaves a first-token time later than
// request_latency absent (ingest.CheckTimeOrder: the latency is trusted).
func (r *record) firstTokenNotAfterEnd() {
	lat, ok := r.seen[tagLatency]
	if !ok || !lat.ok || nsPerUnit[lat.unit] == 0 {
		return
	}
	for _, tag := range []string{tagTTFT, tagTTFTOld, tagTTFO} {
		if c := r.seen[tag]; c.ok && nsPerUnit[c.unit] != 0 &&
			!r.vals.NotAfter(tag, r.pos, c.v*nsPerUnit[c.unit]/1e6, tagLatency, lat.v*nsPerUnit[lat.unit]/1e6, ingest.Milliseconds, "ms") {
			c.ok = false
			r.seen[tag] = c
		}
	}
}

// offending reports whether metric tag is present with a value the value
// checks left absent (not null: an offending value).
func (r *record) offending(tag string) bool {
	m, found := r.Metrics[tag]
	return found && !r.seen[tag].ok && string(jsonTrim(m.Value)) != "null"
}

// list returns inter_chunk_latency and its unit; ok is false when the
// metric is absent or not a list of numbers.
func (r *record) list() (v []float64, unit string, ok bool) {
	return r.icl, r.iclUnit, r.icl != nil
}

// floatList parses a JSON array of numbers. The fast path splits on commas
// and calls strconv.ParseFloat (correctly rounded, as encoding/json is); any
// element it does not take as a plain number (null, a string, a nested
// value) sends the whole array through json.Unmarshal instead, which is
// the reference: TestFloatListMatchesJSON and FuzzFloatList hold the two to
// the same results. An inter_chunk_latency list is most of a record's bytes.
func floatList(raw []byte) ([]float64, bool) {
	t := jsonTrim(raw)
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return nil, false
	}
	body := jsonTrim(t[1 : len(t)-1])
	out := make([]float64, 0, bytes.Count(body, []byte(","))+1)
	for len(body) > 0 {
		elem := body
		if i := bytes.IndexByte(body, ','); i >= 0 {
			elem, body = body[:i], body[i+1:]
			if len(jsonTrim(body)) == 0 {
				return slowFloatList(t) // trailing comma: let the reference reject it
			}
		} else {
			body = nil
		}
		f, ok := plainNumber(jsonTrim(elem))
		if !ok {
			return slowFloatList(t)
		}
		out = append(out, f)
	}
	return out, true
}

// jsonTrim trims JSON whitespace (space, tab, CR, LF; not the other
// Unicode spaces bytes.TrimSpace would take).
func jsonTrim(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// plainNumber parses b when it is a JSON number (-?digits[.digits][e±digits]).
func plainNumber(b []byte) (float64, bool) {
	if len(b) == 0 || !jsonscan.ValidNumber(b) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	return f, err == nil
}

// slowFloatList is floatList's reference: encoding/json.
func slowFloatList(raw []byte) ([]float64, bool) {
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil, false
	}
	return v, true
}

// durationNs converts a time value in unit to integer nanoseconds
// (math.Round(v·scale)). ok is false for a unit that is not a time unit.
// AIPerf writes display units (MetricTimeUnit: "ms" for every latency).
func durationNs(v float64, unit string) (int64, bool) {
	scale, ok := nsPerUnit[unit]
	if !ok {
		return 0, false
	}
	return scaledNs(v, scale)
}

// scaledNs is durationNs for a unit of scale nanoseconds.
func scaledNs(v, scale float64) (int64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v*scale) > math.MaxInt64/2 {
		return 0, false
	}
	return int64(math.Round(v * scale)), true
}

// durationMs converts a time value in unit to milliseconds.
func durationMs(v float64, unit string) (float64, bool) {
	scale, ok := nsPerUnit[unit]
	if !ok {
		return 0, false
	}
	if unit == "ms" {
		return v, true
	}
	return v * scale / 1e6, true
}

// nsPerUnit maps AIPerf's MetricTimeUnit display strings to nanoseconds.
var nsPerUnit = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "sec": 1e9}

// count returns a token-count metric as an int64 (rounded; the value
// checks kept it in [0, 10^9]).
func (r *record) count(tag string) (int64, bool) {
	v, _, ok := r.scalar(tag)
	if !ok {
		return 0, false
	}
	return int64(math.Round(v)), true
}

// ms returns a time metric (the first of tags present) in milliseconds.
func (r *record) ms(tags ...string) (float64, bool) {
	v, unit, ok := r.scalar(tags...)
	if !ok {
		return 0, false
	}
	return durationMs(v, unit)
}

// ns returns a time metric (the first of tags present) in nanoseconds.
func (r *record) ns(tags ...string) (int64, bool) {
	v, unit, ok := r.scalar(tags...)
	if !ok {
		return 0, false
	}
	return durationNs(v, unit)
}

// phase is the record's benchmark phase; "" counts as profiling.
func (m *recordMeta) phase() string {
	if m.BenchmarkPhase != "" {
		return m.BenchmarkPhase
	}
	return m.CreditPhase
}

// sourceID is conversation_id + "/" + turn_index, or the conversation id
// alone, or the session number when there is no conversation id.
// session is the record's session: its conversation instance,
// x_correlation_id ("shared across all turns" of one run of a
// conversation: AIPerf's credit and record models), not conversation_id,
// which names the dataset's conversation and repeats when the dataset is
// sent more than once; conversation_id only when there is no
// correlation id (AIPerf 0.1.x).
func (m *recordMeta) session() string {
	if m.XCorrelationID != "" {
		return m.XCorrelationID
	}
	return m.ConversationID
}

func (m *recordMeta) sourceID() string {
	switch {
	case m.ConversationID != "" && m.TurnIndex.v != nil:
		return m.ConversationID + "/" + strconv.FormatInt(*m.TurnIndex.v, 10)
	case m.ConversationID != "":
		return m.ConversationID
	case m.SessionNum.v != nil:
		return strconv.FormatInt(*m.SessionNum.v, 10)
	}
	return ""
}

// stats counts what the conversions saw, for the run's notes.
type stats struct {
	records         int
	rebuilt         int   // records whose events were rebuilt from ICL
	direct          int   // records with TTFT but no ICL: offsets set directly
	noTiming        int   // non-error records with no TTFT at all
	latencyMismatch int   // rebuilt last event ≠ request_latency beyond tolerance
	maxMismatchNs   int64 // largest such difference
	endKnown        int   // records with request_end_ns
	endNotAfter     int   // request_end_ns ≤ request_start_ns: stream end left null
	endBeforeLast   int   // request_end_ns before the last rebuilt event: raised to it
	reasoningSplit  int   // records with TTFO later than TTFT (reasoning events)
	reasoningOnly   int   // records with reasoning tokens, no TTFO and no output tokens
	reasoningBlind  int   // records with reasoning tokens but no TTFO to place them
	unplaced        int   // records whose inter_chunk_latency holds an offending value
	ttftUnknown     int   // records whose time_to_first_token is offending (last token at request_latency)
	outServer       int   // output tokens from usage_completion_tokens
	outTool         int   // output tokens from output_sequence_length
	badUnits        map[string]int
	byStatus        map[string]int
}

func newStats() *stats {
	return &stats{badUnits: map[string]int{}, byStatus: map[string]int{}}
}

// SourceCredit is Request.ScheduledStartSource of AIPerf's intended
// starts.
const SourceCredit = "aiperf:credit_issued_ns"

// convert turns one record into a Request; its rebuilt messages, if any,
// are rec.offs and rec.shape (appendRecord adds both to a batch). runID
// and key place the request; streaming is the run's endpoint.streaming
// when known.
func convert(rec *record, runID string, key int64, streaming *bool, st *stats) formats.Request {
	md := rec.Metadata
	req := formats.Request{
		RunID:      runID,
		RequestKey: key,
		SourceID:   md.sourceID(),
		XRequestID: md.XRequestID,
		TraceID:    md.XCorrelationID,
		SessionID:  md.session(),
		ParentID:   md.ParentCorrelationID,
	}
	if req.SessionID != "" && md.TurnIndex.v != nil {
		req.TurnIndex = ingest.Ptr(*md.TurnIndex.v)
	}
	if s := rec.start; s != nil {
		req.StartNs = ingest.Ptr(*s)
		req.ClockDomain = formats.ClockUnix
		if c := rec.credit; c != nil {
			req.ScheduledStartNs = ingest.Ptr(*c)
			req.ScheduledStartSource = SourceCredit
		}
	}
	setStatus(&req, rec)
	setStreamEnd(&req, rec, st)
	setTokens(&req, rec, st)
	setReported(&req, rec)
	rec.shape = eventShape{}
	setTiming(&req, rec, streaming, st)
	st.records++
	st.byStatus[req.Status]++
	return req
}

// appendRecord appends a converted record to b: its request and, when its
// messages were rebuilt, one message per kept response (rec.offs, of the
// record's shape's kinds, HasChoices set).
func appendRecord(b *formats.Batch, req *formats.Request, rec *record) error {
	if err := b.AppendRow(req, nil); err != nil {
		return err
	}
	if !rec.shape.set {
		return nil
	}
	kind := formats.MsgContent
	if rec.shape.kind == formats.KindReasoning {
		kind = formats.MsgReasoning
	}
	lo := b.AddOffsets(rec.offs, kind, true)
	if until := rec.shape.reasoningUntil; until != math.MinInt64 {
		kinds := b.Msg.Kind[lo:]
		for j, o := range rec.offs {
			if o < until {
				kinds[j] = formats.MsgReasoning
			}
		}
	}
	return nil
}

// noErrorType is AIPerf's placeholder type for an error without a class
// (the HTTP 524 records of the corpus); it becomes ErrorType "".
const noErrorType = "<none>"

// setStatus applies the record's error and cancellation: error non-null →
// "error" (code, type, message kept); metadata.was_cancelled, or an error of
// type RequestCancellationError (AIPerf --request-cancellation-rate,
// code 499), → "cancelled". Other statuses are decided by setTiming.
func setStatus(req *formats.Request, rec *record) {
	if e := rec.Error; e != nil {
		req.Status = formats.StatusError
		if e.Type != noErrorType {
			req.ErrorType = e.Type
		}
		req.ErrorText = ingest.RawText(e.Message)
		if c, ok := rawInt(e.Code); ok {
			req.ErrorCode = ingest.Ptr(c)
		}
	}
	if rec.Metadata.WasCancelled || (rec.Error != nil && rec.Error.Type == "RequestCancellationError") {
		req.Status = formats.StatusCancelled
	}
}

// setStreamEnd sets StreamEndOffsetNs = request_end_ns − request_start_ns:
// AIPerf's request_end_ns is the last raw chunk (usage chunk and [DONE]
// included) or the error time, not the latency end
// (ai-dynamo/aiperf@db4f6397d11e records/record_processor_service.py lines
// 117-152). An end equal to the start (the 524 records of the corpus)
// carries no information and leaves the offset null; an end before the
// start, or more than a day after it, cannot be right: null, and counted
// by the value checks.
func setStreamEnd(req *formats.Request, rec *record, st *stats) {
	start, end := rec.start, rec.end
	if start == nil || end == nil {
		return
	}
	st.endKnown++
	switch d := *end - *start; {
	case d > ingest.MaxDurationNs:
		rec.vals.Record(ingest.CheckOutOfRange, "request_end_ns", rec.pos, fmt.Sprintf("%d (%d ns after request_start_ns)", *end, d))
	case d < 0:
		rec.vals.Record(ingest.CheckNegative, "request_end_ns", rec.pos, fmt.Sprintf("%d (%d ns after request_start_ns)", *end, d))
	case d > 0:
		req.StreamEndOffsetNs = ingest.Ptr(d)
	default:
		st.endNotAfter++
	}
}

// setTokens fills the token counts: output from usage_completion_tokens
// (server_usage) else output_sequence_length (tool_reported: AIPerf's
// re-tokenized content + reasoning, add_special_tokens=False); input from
// usage_prompt_tokens (server_usage) else input_sequence_length, else, for
// failed records, error_isl (both tool_reported).
func setTokens(req *formats.Request, rec *record, st *stats) {
	if n, ok := rec.count(tagUsageOut); ok {
		req.OutputTokens, req.OutputTokensSource = ingest.Ptr(n), formats.SourceServerUsage
		st.outServer++
	} else if n, ok := rec.count(tagOSL); ok {
		req.OutputTokens, req.OutputTokensSource = ingest.Ptr(n), formats.SourceToolReported
		st.outTool++
	}
	if n, ok := rec.count(tagReasoning); ok {
		req.ReasoningTokens = ingest.Ptr(n)
	}
	for _, src := range []struct{ tag, source string }{
		{tagUsageIn, formats.SourceServerUsage},
		{tagISL, formats.SourceToolReported},
		{tagErrorISL, formats.SourceToolReported},
	} {
		if n, ok := rec.count(src.tag); ok {
			req.InputTokens, req.InputTokensSource = ingest.Ptr(n), src.source
			break
		}
	}
	if n, ok := rec.count(tagCacheRead); ok {
		req.CachedInputTokens = ingest.Ptr(n)
	}
}

// setReported copies AIPerf's own per-record values (its definitions, in
// ms, tokens and tokens/s).
func setReported(req *formats.Request, rec *record) {
	msPtr := func(tags ...string) *float64 {
		if v, ok := rec.ms(tags...); ok {
			return ingest.Ptr(v)
		}
		return nil
	}
	numPtr := func(tag string) *float64 {
		if v, _, ok := rec.scalar(tag); ok {
			return ingest.Ptr(v)
		}
		return nil
	}
	req.ReportedTTFTMs = msPtr(tagTTFT, tagTTFTOld)
	req.ReportedTTFOMs = msPtr(tagTTFO)
	req.ReportedTTSTMs = msPtr(tagTTST, tagTTSTOld)
	req.ReportedE2EMs = msPtr(tagLatency)
	req.ReportedITLMs = msPtr(tagITL)
	req.ReportedOutputTokens = numPtr(tagOSL)
	req.ReportedInputTokens = numPtr(tagISL)
	req.ReportedOutputTokensPS = numPtr(tagPerUserTPS)
}

// setTiming sets the key offsets and, where inter_chunk_latency allows, the
// rebuilt events; it also settles the status of records that are neither
// failed nor cancelled.
//
//   - inter_chunk_latency present: events rebuilt (rebuildEvents), then
//     ingest.FillFromEvents derives offsets, counts and status. Without
//     request_end_ns the stream end stays null rather than becoming the
//     last rebuilt event; an end before that event is raised to it.
//   - time_to_first_token present but no inter_chunk_latency (AIPerf omits
//     the list when fewer than two content responses arrived, e.g. a
//     one-token reply): no events are invented; first-token = TTFT,
//     first-content = TTFO (else TTFT), second-token = TTFT + TTST,
//     last-token = request_latency, straight from the metrics; the
//     token-message count stays 0 (unknown).
//   - neither (non-streaming runs, failures): for a run known to be
//     non-streaming the whole body arrived at request_latency, which becomes
//     the first-token, first-content and last-token offset.
func setTiming(req *formats.Request, rec *record, streaming *bool, st *stats) {
	ttft, hasTTFT := rec.ns(tagTTFT, tagTTFTOld)
	latency, hasLatency := rec.ns(tagLatency)
	icl, iclUnit, hasICL := rec.list()
	if hasICL && hasTTFT {
		if _, ok := nsPerUnit[iclUnit]; !ok {
			st.badUnits[iclUnit]++
			hasICL = false
		} else if rec.iclBad || hasLatency && !lastNotAfterEnd(rec, ttft, icl, iclUnit, latency) {
			// A gap is unknown (counted by the value checks), or the
			// last token would come after the request's end: the
			// responses cannot be placed; the offsets come from the
			// metrics, as for a record without the list.
			st.unplaced++
			hasICL = false
		}
	}
	switch {
	case hasTTFT && hasICL:
		rebuildOffsets(rec, ttft, icl, iclUnit, st)
		end := req.StreamEndOffsetNs
		rec.shape.fillRequest(req, rec.offs)
		switch {
		case end == nil:
			// No request_end_ns (0.1.x): the stream's end is unknown, and
			// the last rebuilt event is not it (usage and [DONE] follow).
			req.StreamEndOffsetNs = nil
		case *req.StreamEndOffsetNs != *end:
			st.endBeforeLast++
		}
		st.rebuilt++
		if hasLatency {
			checkLatency(rec.offs, latency, len(icl), st)
		}
	case hasTTFT:
		req.FirstTokenOffsetNs = ingest.Ptr(ttft)
		if ttfo, ok := rec.ns(tagTTFO); ok {
			req.FirstContentOffsetNs = ingest.Ptr(ttfo)
		} else if !reasoningOnly(rec) {
			req.FirstContentOffsetNs = ingest.Ptr(ttft)
		}
		if ttst, ok := rec.ns(tagTTST, tagTTSTOld); ok {
			req.SecondTokenOffsetNs = ingest.Ptr(ttft + ttst)
		}
		if hasLatency {
			req.LastTokenOffsetNs = ingest.Ptr(latency)
		}
		st.direct++
		settle(req, rec)
	default:
		if streaming != nil && !*streaming && hasLatency && req.Status == "" {
			req.FirstTokenOffsetNs = ingest.Ptr(latency)
			req.FirstContentOffsetNs = ingest.Ptr(latency)
			req.LastTokenOffsetNs = ingest.Ptr(latency)
		} else if req.Status == "" && hasLatency && (rec.offending(tagTTFT) || rec.offending(tagTTFTOld)) {
			// The TTFT is unknown (an offending value, counted), the
			// last response is not: request_latency.
			req.LastTokenOffsetNs = ingest.Ptr(latency)
			st.ttftUnknown++
		} else if req.Status == "" {
			st.noTiming++
		}
		settle(req, rec)
	}
}

// settle gives a record without events its status when it has none yet:
// "empty" when AIPerf counted zero output tokens, else "ok" (AIPerf exports a
// record without error only when at least one response carried text;
// record_models.py 582-599).
func settle(req *formats.Request, rec *record) {
	if req.Status != "" {
		return
	}
	if req.OutputTokens != nil && *req.OutputTokens == 0 {
		req.Status = formats.StatusEmpty
		return
	}
	req.Status = formats.StatusOK
}

// rebuildOffsets rebuilds one message per kept response, into rec.offs
// and rec.shape: the first at TTFT, the k-th at offset_{k-1} +
// round(ICL_k·1e6) (ICL in ms). Messages before
// time_to_first_output_token, when that is later than TTFT, are reasoning
// (AIPerf TTFT counts reasoning chunks, TTFO does not:
// time_to_first_output_token_metric.py); without TTFO, a record with
// reasoning tokens and no output tokens is reasoning throughout, any other
// record content throughout (its reasoning/content split is unknown and is
// counted in the notes). Text, byte sizes and token counts are unknown
// (null, 0, null); HasChoices is true since every kept response was a chat
// or completions chunk.
func rebuildOffsets(rec *record, ttft int64, icl []float64, unit string, st *stats) {
	tol := tolerance(len(icl))
	kind, reasoningUntil := formats.KindContent, int64(math.MinInt64)
	if ttfo, ok := rec.ns(tagTTFO); ok {
		if ttfo > ttft+tol {
			reasoningUntil = ttfo - tol
			st.reasoningSplit++
		}
	} else if reasoningOnly(rec) {
		kind = formats.KindReasoning
		st.reasoningOnly++
	} else if n, ok := rec.count(tagReasoning); ok && n > 0 {
		st.reasoningBlind++
	}
	off := ttft
	scale, known := nsPerUnit[unit]
	offs := slices.Grow(rec.offs[:0], len(icl)+1)
	offs = append(offs, off)
	for _, g := range icl {
		gap, ok := scaledNs(g, scale)
		if !known || !ok {
			gap = 0
		}
		off += gap
		offs = append(offs, off)
	}
	rec.offs = offs
	rec.shape = eventShape{kind: kind, reasoningUntil: reasoningUntil, set: true}
}

// eventShape is what a rebuilt record's messages share beside their
// offsets: the kind and when reasoning ends (rebuildOffsets).
type eventShape struct {
	kind           string
	reasoningUntil int64
	set            bool // the record's messages were rebuilt
}

// fillRequest sets the request fields that follow from its rebuilt
// messages (offs, every one carrying tokens, none an error), as
// formats.FillFromEvents does from events: the counts, the first-token,
// first-content, second-token, last-token and stream-end offsets, and
// the status (ok) unless it is error or cancelled.
func (sh eventShape) fillRequest(r *formats.Request, offs []int64) {
	n := len(offs)
	r.MessageCount, r.TokenMessageCount = int64(n), int64(n)
	r.FirstTokenOffsetNs, r.FirstContentOffsetNs, r.SecondTokenOffsetNs, r.LastTokenOffsetNs = nil, nil, nil, nil
	if n == 0 {
		if r.Status != formats.StatusError && r.Status != formats.StatusCancelled {
			r.Status = formats.StatusEmpty
		}
		return
	}
	r.FirstTokenOffsetNs = ingest.Ptr(offs[0])
	if n > 1 {
		r.SecondTokenOffsetNs = ingest.Ptr(offs[1])
	}
	r.LastTokenOffsetNs = ingest.Ptr(offs[n-1])
	if sh.kind == formats.KindContent {
		for _, o := range offs {
			if o >= sh.reasoningUntil {
				r.FirstContentOffsetNs = ingest.Ptr(o)
				break
			}
		}
	}
	if last := offs[n-1]; r.StreamEndOffsetNs == nil || *r.StreamEndOffsetNs < last {
		r.StreamEndOffsetNs = ingest.Ptr(last)
	}
	if r.Status != formats.StatusError && r.Status != formats.StatusCancelled {
		r.Status = formats.StatusOK
	}
}

// reasoningOnly reports whether the record's output was all reasoning: it
// has reasoning tokens and AIPerf counted zero output (content) tokens.
func reasoningOnly(rec *record) bool {
	r, okR := rec.count(tagReasoning)
	o, okO := rec.count(tagOutCount)
	return okR && okO && r > 0 && o == 0
}

// lastNotAfterEnd checks that the last response rebuilt from TTFT and
// the gaps is not after request_latency (beyond the rounding tolerance);
// a later one is recorded (ingest.CheckTimeOrder on inter_chunk_latency:
// the latency is trusted).
func lastNotAfterEnd(rec *record, ttft int64, icl []float64, unit string, latency int64) bool {
	last, scale := float64(ttft), nsPerUnit[unit]
	for _, g := range icl {
		last += g * scale
	}
	if last-float64(latency) <= float64(tolerance(len(icl))) {
		return true
	}
	rec.vals.Record(ingest.CheckTimeOrder, tagICL, rec.pos, fmt.Sprintf("last response at %s ms (time_to_first_token + Σ inter_chunk_latency), after request_latency %s ms",
		ingest.FormatValue(math.Round(last)/1e6), ingest.FormatValue(float64(latency)/1e6)))
	return false
}

// tolerance is how far (ns) the last rebuilt offset may be from
// round(request_latency·1e6): each of the n rounded gaps and the rounded
// TTFT and latency may be off by half a nanosecond.
func tolerance(n int) int64 { return int64(n/2) + 2 }

// checkLatency compares the last rebuilt message with request_latency
// (the last kept response; request_latency_metric.py 35-39).
func checkLatency(offs []int64, latency int64, n int, st *stats) {
	if len(offs) == 0 {
		return
	}
	d := offs[len(offs)-1] - latency
	if d < 0 {
		d = -d
	}
	if d > tolerance(n) {
		st.latencyMismatch++
		st.maxMismatchNs = max(st.maxMismatchNs, d)
	}
}

// rawInt reads an integral JSON number, or a string holding one; null and
// absent values are not numbers.
func rawInt(raw json.RawMessage) (int64, bool) {
	if t := strings.TrimSpace(string(raw)); t == "" || t == "null" {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, false
		}
	}
	if f != math.Trunc(f) || math.Abs(f) > 1e15 {
		return 0, false
	}
	return int64(f), true
}
