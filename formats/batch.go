package formats

import "slices"

// Batch is tokentrace's core type: some requests of one run, in arrival
// order, as columns — every importer fills batches, every analysis and
// table writer reads them. A request's token timeline is a range of the
// message columns (Messages): one entry per message the client received,
// its arrival offset, kind and token count, plus, for the formats that
// record them (SSE captures), the message's read, bytes, text and finish
// reason. Gap-list formats (AIPerf inter-chunk latencies, vLLM's and
// SGLang's itls, inference-perf's token times) fill the offsets straight
// from their numbers (an offset is the previous one plus a gap); no
// per-message struct is ever built.
//
// The row types (Request, Event) are the same data one row at a time,
// with pointers for null: the tables' contract as SCHEMA.md documents it,
// the golden dumps' format, and what a slow producer or a test writes
// (AppendRow, Row, AppendEvents). Each column of Requests holds the
// Request field of the same name; each column of Messages the Event field.
//
// A Batch is reused by its producer once a Sink call returns: a Sink
// copies what it keeps.
type Batch struct {
	// RunID is the run every request of the batch belongs to.
	RunID string
	// Req holds the requests' columns; Req.Len() requests.
	Req Requests
	// Msg holds the messages of every request, request after request;
	// Messages(i) gives request i's range.
	Msg Messages
	// msgStart[i] is request i's first message; msgStart[Req.Len()] is
	// the number of messages (len Req.Len()+1, or 0 for no request).
	msgStart []int32
}

// Requests are a batch's request columns (Request's fields, one entry per
// request). Key, Status, MessageCount and TokenMessageCount have an entry
// for every request; the optional columns grow as values are set (a
// column no request set is empty).
type Requests struct {
	Key               []int64
	Status            []StatusCode
	MessageCount      []int64
	TokenMessageCount []int64

	SourceID, XRequestID, ResponseID, TraceID Strings
	ErrorCode                                 Int64s
	ErrorType, ErrorText                      Strings
	StartNs                                   Int64s
	ClockDomain                               Strings
	ScheduledStartNs                          Int64s
	ScheduledStartSource                      Strings
	FirstTokenOffsetNs, FirstContentOffsetNs  Int64s
	SecondTokenOffsetNs, LastTokenOffsetNs    Int64s
	StreamEndOffsetNs                         Int64s
	InputTokens                               Int64s
	InputTokensSource                         Strings
	OutputTokens                              Int64s
	OutputTokensSource                        Strings
	ReasoningTokens                           Int64s
	CachedInputTokens                         Int64s
	SessionID                                 Strings
	TurnIndex                                 Int64s
	ParentID                                  Strings
	SpecSteps, DraftTokens, AcceptedTokens    Int64s
	MaxTokens                                 Int64s

	ReportedTTFTMs, ReportedTTFOMs, ReportedTTSTMs, ReportedE2EMs Float64s
	ReportedITLMs, ReportedOutputTokens, ReportedInputTokens      Float64s
	ReportedOutputTokensPS                                        Float64s

	ServerKind, ServerSource, ServerRequestID, ServerClockDomain Strings
	ServerArrivalNs, ServerQueueNs, ServerPrefillNs              Int64s
	ServerDecodeNs, ServerInferenceNs, ServerTTFTNs              Int64s
	ServerE2ENs, ServerTimePerTokenNs                            Int64s
	MatchQuality, ServerFinishReason, Corrections                Strings

	InFlightAtStart, EndBoundOffsetNs Int64s
	EndBoundRule                      Strings
}

// Len returns the number of requests.
func (r *Requests) Len() int { return len(r.Key) }

// Messages are a batch's message columns (Event's fields but the run id
// and request key, which the batch and its requests give, and the index,
// which is the message's position in its request).
type Messages struct {
	// OffsetNs is the arrival time minus the request's start (Event.OffsetNs).
	OffsetNs []int64
	// Kind is the message's kind (Event.Kind).
	Kind []MsgKind
	// Tokens is the tokens the message carried, where the source says.
	Tokens Int32s
	// ReadIndex is the network read the message arrived in; empty when
	// every message is its own read (ReadIndex = index), else one entry
	// per message.
	ReadIndex []int32
	// Choices has bit i set when message i had a non-empty choices array
	// (Event.HasChoices).
	Choices Bits
	// Bytes is each message's size as received; empty when unknown (0).
	Bytes []int32
	// Text, ReasoningText and FinishReason are the message's generated
	// texts and finish reason (null: none, or dropped).
	Text, ReasoningText, FinishReason Texts
	// kinds names the kinds past the fixed ones (MsgDict + i): "server.*"
	// and any other kind a table holds.
	kinds []string
}

// Len returns the number of messages.
func (m *Messages) Len() int { return len(m.OffsetNs) }

// StatusCode is a request's Status as a small integer (the batch's
// column); String gives the table's value.
type StatusCode uint8

// Status codes; CodeUnset is "" (an importer still deciding).
const (
	CodeUnset StatusCode = iota
	CodeOK
	CodeEmpty
	CodeError
	CodeCancelled
)

var statusNames = [...]string{"", StatusOK, StatusEmpty, StatusError, StatusCancelled}

// String returns the status as the tables write it ("ok", …).
func (s StatusCode) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return ""
}

// Failed reports whether the status is error or cancelled.
func (s StatusCode) Failed() bool { return s == CodeError || s == CodeCancelled }

// StatusCodeOf returns the code of a Status string; ok is false for a
// value that is none of the Status* constants.
func StatusCodeOf(s string) (StatusCode, bool) {
	switch s {
	case "":
		return CodeUnset, true
	case StatusOK:
		return CodeOK, true
	case StatusEmpty:
		return CodeEmpty, true
	case StatusError:
		return CodeError, true
	case StatusCancelled:
		return CodeCancelled, true
	}
	return CodeUnset, false
}

// MsgKind is a message's Kind as a small integer. The fixed kinds are the
// Kind* constants; a batch names any other kind ("server.*") in its own
// dictionary (Batch.KindCode, Batch.KindName), from MsgDict on.
type MsgKind uint8

// Message kinds (Event.Kind).
const (
	MsgContent MsgKind = iota
	MsgReasoning
	MsgToolCall
	MsgRole
	MsgEmpty
	MsgUsage
	MsgDone
	MsgError
	MsgOther
	// MsgDict is the first kind of a batch's dictionary.
	MsgDict
)

var kindNames = [...]string{KindContent, KindReasoning, KindToolCall, KindRole, KindEmpty, KindUsage, KindDone, KindError, KindOther}

// CarriesTokens reports whether the kind carries generated tokens
// (content, reasoning or a tool call: Event.CarriesTokens).
func (k MsgKind) CarriesTokens() bool { return k <= MsgToolCall }

// FixedKind returns the code of one of the Kind* constants; ok false for
// any other kind.
func FixedKind(kind string) (MsgKind, bool) {
	for i, n := range kindNames {
		if n == kind {
			return MsgKind(i), true
		}
	}
	return 0, false
}

// KindCode returns the code of kind in this batch, adding it to the
// batch's dictionary when it is not a fixed kind. It panics past 247
// dictionary kinds in one batch (a table with more distinct kinds is
// refused by its reader first).
func (b *Batch) KindCode(kind string) MsgKind {
	if k, ok := FixedKind(kind); ok {
		return k
	}
	for i, n := range b.Msg.kinds {
		if n == kind {
			return MsgDict + MsgKind(i)
		}
	}
	if len(b.Msg.kinds) >= 256-int(MsgDict) {
		panic("formats: more than 247 distinct event kinds in one batch")
	}
	b.Msg.kinds = append(b.Msg.kinds, kind)
	return MsgDict + MsgKind(len(b.Msg.kinds)-1)
}

// KindName returns the name of kind code k in this batch.
func (b *Batch) KindName(k MsgKind) string {
	if k < MsgDict {
		return kindNames[k]
	}
	if i := int(k - MsgDict); i < len(b.Msg.kinds) {
		return b.Msg.kinds[i]
	}
	return KindOther
}

// IsServer reports whether code k names a server-side kind ("server.*").
func (b *Batch) IsServer(k MsgKind) bool { return k >= MsgDict && IsServerKind(b.KindName(k)) }

// DictKinds returns the batch's dictionary kinds (MsgDict on), shared.
func (b *Batch) DictKinds() []string { return b.Msg.kinds }

// NewBatch returns an empty batch of run runID.
func NewBatch(runID string) *Batch { return &Batch{RunID: runID} }

// Reset empties b for run runID, keeping its memory.
func (b *Batch) Reset(runID string) {
	b.RunID = runID
	q := &b.Req
	q.Key, q.Status, q.MessageCount, q.TokenMessageCount = q.Key[:0], q.Status[:0], q.MessageCount[:0], q.TokenMessageCount[:0]
	for _, s := range q.strings() {
		s.reset()
	}
	for _, c := range q.int64s() {
		c.reset()
	}
	for _, c := range q.float64s() {
		c.reset()
	}
	m := &b.Msg
	m.OffsetNs, m.Kind, m.ReadIndex, m.Bytes, m.Choices = m.OffsetNs[:0], m.Kind[:0], m.ReadIndex[:0], m.Bytes[:0], m.Choices[:0]
	m.Tokens.reset()
	m.Text.reset()
	m.ReasoningText.reset()
	m.FinishReason.reset()
	m.kinds = m.kinds[:0]
	b.msgStart = b.msgStart[:0]
}

// Len returns the number of requests.
func (b *Batch) Len() int { return len(b.Req.Key) }

// Messages returns request i's messages: the range [lo, hi) of the
// message columns.
func (b *Batch) Messages(i int) (lo, hi int) {
	if i+1 >= len(b.msgStart) {
		return 0, 0
	}
	return int(b.msgStart[i]), int(b.msgStart[i+1])
}

// AddRequest appends a request with the given key and status unset, no
// messages and every optional column null, and returns its row.
func (b *Batch) AddRequest(key int64) int {
	if len(b.msgStart) == 0 {
		b.msgStart = append(b.msgStart, int32(len(b.Msg.OffsetNs)))
	}
	q := &b.Req
	q.Key = append(q.Key, key)
	q.Status = append(q.Status, CodeUnset)
	q.MessageCount = append(q.MessageCount, 0)
	q.TokenMessageCount = append(q.TokenMessageCount, 0)
	b.msgStart = append(b.msgStart, int32(len(b.Msg.OffsetNs)))
	return len(q.Key) - 1
}

// AddMessage appends a message of the last request (AddRequest) at
// offsetNs, of kind k, its other columns null or zero (HasChoices false),
// and returns its row in the message columns. MessageCount and the
// derived offsets are not updated: FillFromMessages does that.
func (b *Batch) AddMessage(offsetNs int64, k MsgKind) int {
	m := &b.Msg
	m.OffsetNs = append(m.OffsetNs, offsetNs)
	m.Kind = append(m.Kind, k)
	b.msgStart[len(b.msgStart)-1] = int32(len(m.OffsetNs))
	return len(m.OffsetNs) - 1
}

// AddOffsets appends messages of the last request, one per offset, all of
// kind k with HasChoices set to choices: the shape of a gap-list
// format's timeline. It returns the first new message's row.
func (b *Batch) AddOffsets(offsets []int64, k MsgKind, choices bool) int {
	m := &b.Msg
	lo := len(m.OffsetNs)
	m.OffsetNs = append(m.OffsetNs, offsets...)
	n := len(m.OffsetNs)
	m.Kind = slices.Grow(m.Kind, len(offsets))[:n]
	for j := lo; j < n; j++ {
		m.Kind[j] = k
	}
	if choices {
		m.Choices.SetRange(lo, n)
	}
	b.msgStart[len(b.msgStart)-1] = int32(n)
	return lo
}

// SetReadIndex sets message j's read index (ReadIndex), materializing the
// column (every earlier message its own read) the first time.
func (b *Batch) SetReadIndex(j int, read int32) {
	m := &b.Msg
	if len(m.ReadIndex) < len(m.OffsetNs) {
		m.ReadIndex = b.identityReads(m.ReadIndex, len(m.OffsetNs))
	}
	m.ReadIndex[j] = read
}

// identityReads extends reads to n entries, each message its own read.
func (b *Batch) identityReads(reads []int32, n int) []int32 {
	from := len(reads)
	reads = grow(reads, n)
	for i := 0; i < len(b.msgStart)-1; i++ {
		lo, hi := int(b.msgStart[i]), int(b.msgStart[i+1])
		for j := max(lo, from); j < hi && j < n; j++ {
			reads[j] = int32(j - lo)
		}
	}
	// messages of no request yet (none: AddMessage keeps msgStart current)
	return reads
}

// ReadOf returns message j's read index; lo is the first message of its
// request (Messages).
func (b *Batch) ReadOf(j, lo int) int32 {
	if j < len(b.Msg.ReadIndex) {
		return b.Msg.ReadIndex[j]
	}
	return int32(j - lo)
}

// BytesOf returns message j's size in bytes (0 when unknown).
func (b *Batch) BytesOf(j int) int32 {
	if j < len(b.Msg.Bytes) {
		return b.Msg.Bytes[j]
	}
	return 0
}

// SetBytes sets message j's size in bytes.
func (b *Batch) SetBytes(j int, n int32) {
	if j >= len(b.Msg.Bytes) {
		b.Msg.Bytes = grow(b.Msg.Bytes, len(b.Msg.OffsetNs))
	}
	b.Msg.Bytes[j] = n
}

// TruncateMessages drops the last request's messages from its k-th on.
func (b *Batch) TruncateMessages(k int) {
	i := b.Len() - 1
	lo, hi := b.Messages(i)
	n := lo + k
	if n >= hi {
		return
	}
	m := &b.Msg
	m.OffsetNs, m.Kind = m.OffsetNs[:n], m.Kind[:n]
	if len(m.ReadIndex) > n {
		m.ReadIndex = m.ReadIndex[:n]
	}
	if len(m.Bytes) > n {
		m.Bytes = m.Bytes[:n]
	}
	m.Tokens.V = m.Tokens.V[:min(len(m.Tokens.V), n)]
	m.Tokens.Valid.truncate(n)
	m.Choices.truncate(n)
	m.Text.Truncate(n)
	m.ReasoningText.Truncate(n)
	m.FinishReason.Truncate(n)
	b.msgStart[i+1] = int32(n)
}

// strings lists the optional string columns of Requests; int64s and
// float64s the optional numeric ones (Reset, compaction).
func (q *Requests) strings() []*Strings {
	return []*Strings{&q.SourceID, &q.XRequestID, &q.ResponseID, &q.TraceID, &q.ErrorType, &q.ErrorText,
		&q.ClockDomain, &q.ScheduledStartSource, &q.InputTokensSource, &q.OutputTokensSource, &q.ServerKind, &q.ServerSource,
		&q.ServerRequestID, &q.ServerClockDomain, &q.MatchQuality, &q.ServerFinishReason, &q.Corrections, &q.EndBoundRule,
		&q.SessionID, &q.ParentID}
}

func (q *Requests) int64s() []*Int64s {
	return []*Int64s{&q.ErrorCode, &q.StartNs, &q.ScheduledStartNs, &q.FirstTokenOffsetNs, &q.FirstContentOffsetNs, &q.SecondTokenOffsetNs,
		&q.LastTokenOffsetNs, &q.StreamEndOffsetNs, &q.InputTokens, &q.OutputTokens, &q.ReasoningTokens, &q.MaxTokens,
		&q.CachedInputTokens, &q.TurnIndex, &q.SpecSteps, &q.DraftTokens, &q.AcceptedTokens, &q.ServerArrivalNs, &q.ServerQueueNs, &q.ServerPrefillNs, &q.ServerDecodeNs, &q.ServerInferenceNs,
		&q.ServerTTFTNs, &q.ServerE2ENs, &q.ServerTimePerTokenNs, &q.InFlightAtStart, &q.EndBoundOffsetNs}
}

func (q *Requests) float64s() []*Float64s {
	return []*Float64s{&q.ReportedTTFTMs, &q.ReportedTTFOMs, &q.ReportedTTSTMs, &q.ReportedE2EMs, &q.ReportedITLMs,
		&q.ReportedOutputTokens, &q.ReportedInputTokens, &q.ReportedOutputTokensPS}
}

// FillFromMessages sets request i's fields that follow from its messages,
// as FillFromEvents does for a row: MessageCount, TokenMessageCount, the
// first-token, first-content, second-token, last-token and stream-end
// offsets, and Status unless it is error or cancelled.
func (b *Batch) FillFromMessages(i int) {
	lo, hi := b.Messages(i)
	q := &b.Req
	q.MessageCount[i] = int64(hi - lo)
	var tokens int64
	q.FirstTokenOffsetNs.Null(i)
	q.FirstContentOffsetNs.Null(i)
	q.SecondTokenOffsetNs.Null(i)
	q.LastTokenOffsetNs.Null(i)
	sawError := false
	last := int64(-1)
	content := false
	kinds, offs := b.Msg.Kind[lo:hi], b.Msg.OffsetNs[lo:hi]
	for j, k := range kinds {
		if k == MsgError {
			sawError = true
		}
		if !k.CarriesTokens() {
			continue
		}
		tokens++
		off := offs[j]
		switch tokens {
		case 1:
			q.FirstTokenOffsetNs.Set(i, off)
		case 2:
			q.SecondTokenOffsetNs.Set(i, off)
		}
		if k == MsgContent && !content {
			q.FirstContentOffsetNs.Set(i, off)
			content = true
		}
		last = off
	}
	q.TokenMessageCount[i] = tokens
	if tokens > 0 {
		q.LastTokenOffsetNs.Set(i, last)
	}
	if n := len(offs); n > 0 {
		end := offs[n-1]
		if v, ok := q.StreamEndOffsetNs.Get(i); !ok || v < end {
			q.StreamEndOffsetNs.Set(i, end)
		}
	}
	if q.Status[i].Failed() {
		return
	}
	switch {
	case sawError:
		q.Status[i] = CodeError
	case tokens > 0:
		q.Status[i] = CodeOK
	default:
		q.Status[i] = CodeEmpty
	}
}

// FillOutputCount is FillOutputCount of request i.
func (b *Batch) FillOutputCount(i int) {
	q := &b.Req
	if !q.OutputTokens.Has(i) && q.Status[i] == CodeOK && q.TokenMessageCount[i] > 0 {
		q.OutputTokens.Set(i, q.TokenMessageCount[i])
		q.OutputTokensSource.Set(i, SourceChunkCount)
	}
}

// IsServerRow is Request.IsServerRow of request i.
func (b *Batch) IsServerRow(i int) bool {
	q := &b.Req
	return q.ServerKind.Get(i) != "" && !q.StartNs.Has(i) && !q.FirstTokenOffsetNs.Has(i) &&
		!q.StreamEndOffsetNs.Has(i) && q.MessageCount[i] == 0
}

// RequestEnd is RequestEnd of request i.
func (b *Batch) RequestEnd(i int) (int64, bool) {
	q := &b.Req
	start, ok := q.StartNs.Get(i)
	if !ok {
		return 0, false
	}
	for _, c := range [...]*Int64s{&q.StreamEndOffsetNs, &q.LastTokenOffsetNs, &q.FirstTokenOffsetNs} {
		if off, ok := c.Get(i); ok && off > 0 {
			return start + off, true
		}
	}
	return 0, false
}

// HasCorrection is Request.HasCorrection of request i.
func (b *Batch) HasCorrection(i int, code string) bool {
	r := Request{Corrections: b.Req.Corrections.Get(i)}
	return r.HasCorrection(code)
}

// AddCorrection is Request.AddCorrection of request i.
func (b *Batch) AddCorrection(i int, code string) {
	r := Request{Corrections: b.Req.Corrections.Get(i)}
	r.AddCorrection(code)
	b.Req.Corrections.Set(i, r.Corrections)
}

// ApproxBytes is about the bytes the batch holds, at no cost: 48 per
// message and 256 per request besides the messages' texts.
func (b *Batch) ApproxBytes() int {
	return 256*b.Len() + 48*b.Msg.Len() + len(b.Msg.Text.Data) + len(b.Msg.ReasoningText.Data)
}
