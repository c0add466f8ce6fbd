package formats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The entry check. Every batch of requests that enters tokentrace — from
// an importer (ingest.Input.ImportWith) or from tables read back
// (Checked around ReadTables' sink) — passes Batch.CheckValid (the
// contract: lengths, offsets, codes; a violation is an error, a
// producer's bug or a corrupt table) and an EntryCheck (the values: one
// that cannot be right is left null and counted under a named code, as
// pprof's Profile.CheckValid guards a profile before any report reads
// it). The raw importers null such values already when they read them
// (in the tool's own units and field names, ingest.Values); the entry
// check is what holds for every source, tables a notebook edited
// included.

// Value check codes (analyze/TRAPS.md, "shared value checks"; ingest
// lists them as ingest.ValueTraps).
const (
	// CheckNotFinite: NaN or ±Inf where a number must be finite.
	CheckNotFinite = "value_not_finite"
	// CheckNegative: a negative time, duration or count.
	CheckNegative = "value_negative"
	// CheckOutOfRange: a duration over a day, a count over a billion, a
	// time past 2^62 ns.
	CheckOutOfRange = "value_out_of_range"
	// CheckNotInteger: a token count with a fraction.
	CheckNotInteger = "value_not_integer"
	// CheckCountBelowMessages: a request's output token count far below
	// the messages that carried its tokens (0 beside ten content
	// messages): a consistency check of the entry check, corrected.
	CheckCountBelowMessages = "output_count_below_messages"
)

// countBelowMessages reports whether an output count of n tokens cannot
// be right beside tm messages that each carried at least one token: 0
// beside any, or fewer than half of 4 or more (a retokenized count, as
// vLLM's output_lens, may fall a few tokens short of the chunks; a
// multi-token chunk only raises the count).
func countBelowMessages(n, tm int64) bool {
	return n == 0 && tm > 0 || tm >= 4 && 2*n < tm
}

// Limits of the value checks.
const (
	// MaxDurationNs is the longest duration a request's time can be: a
	// day (analyze's implausible_values uses the same bound).
	MaxDurationNs = 24 * 3600 * 1e9
	// MaxTokens is the largest token count of one request: no model reads
	// or writes a billion tokens in one request (context windows are at
	// most a few million).
	MaxTokens = 1e9
	// MaxEarlySendNs is how much earlier than its intended start a request
	// may be sent (a second: far beyond any timer's jitter).
	MaxEarlySendNs = 1e9
	// MaxTimeNs bounds an absolute time in nanoseconds (2^62 ns, year
	// 2116 on the Unix clock): room for offsets without int64 overflow.
	MaxTimeNs = 1 << 62
)

// CheckValid reports whether b keeps the core type's contract: every
// per-request column as long as Key, every optional column no longer,
// message ranges that start at 0, never decrease and end at the message
// count, message columns no longer than the messages, status and kind
// codes that name a value. It returns the first violation (a producer's
// bug, or a table whose columns disagree), nil when b holds.
func (b *Batch) CheckValid() error {
	n := b.Len()
	q := &b.Req
	if len(q.Status) != n || len(q.MessageCount) != n || len(q.TokenMessageCount) != n {
		return fmt.Errorf("batch of run %q: %d keys, %d statuses, %d message counts, %d token message counts",
			b.RunID, n, len(q.Status), len(q.MessageCount), len(q.TokenMessageCount))
	}
	for i, s := range q.Status {
		if s > CodeCancelled {
			return fmt.Errorf("batch of run %q: request %d: status code %d", b.RunID, q.Key[i], s)
		}
	}
	m := b.Msg.Len()
	if n == 0 {
		if len(b.msgStart) > 1 || m > 0 {
			return fmt.Errorf("batch of run %q: %d messages and no request", b.RunID, m)
		}
	} else {
		if len(b.msgStart) != n+1 || b.msgStart[0] != 0 || int(b.msgStart[n]) != m {
			return fmt.Errorf("batch of run %q: message ranges (%d) do not cover the %d messages of %d requests", b.RunID, len(b.msgStart), m, n)
		}
		for i := range n {
			if b.msgStart[i+1] < b.msgStart[i] {
				return fmt.Errorf("batch of run %q: request %d: message range ends before it starts", b.RunID, q.Key[i])
			}
		}
	}
	if len(b.Msg.Kind) != m || len(b.Msg.Tokens.V) > m || len(b.Msg.Bytes) > m ||
		len(b.Msg.ReadIndex) != 0 && len(b.Msg.ReadIndex) != m ||
		b.Msg.Text.Len() > m || b.Msg.ReasoningText.Len() > m || b.Msg.FinishReason.Len() > m {
		return fmt.Errorf("batch of run %q: message columns longer than its %d messages", b.RunID, m)
	}
	for i, k := range b.Msg.Kind {
		if k >= MsgDict && int(k-MsgDict) >= len(b.Msg.kinds) {
			return fmt.Errorf("batch of run %q: message %d: kind code %d names no kind", b.RunID, i, k)
		}
	}
	for _, c := range b.int64Columns() {
		if len(c.col.V) > n {
			return fmt.Errorf("batch of run %q: column %s holds %d values for %d requests", b.RunID, c.name, len(c.col.V), n)
		}
	}
	return nil
}

// int64Column is one checked column of a batch: its table name, the
// column, and its limit (the largest valid value).
type int64Column struct {
	name string
	col  *Int64s
	max  float64
}

// int64Columns lists the request columns the entry check bounds, by
// their names in the requests table (SCHEMA.md).
func (b *Batch) int64Columns() []int64Column {
	q := &b.Req
	return []int64Column{
		{"start_ns", &q.StartNs, MaxTimeNs},
		{"scheduled_start_ns", &q.ScheduledStartNs, MaxTimeNs},
		{"first_token_offset_ns", &q.FirstTokenOffsetNs, MaxDurationNs},
		{"first_content_offset_ns", &q.FirstContentOffsetNs, MaxDurationNs},
		{"second_token_offset_ns", &q.SecondTokenOffsetNs, MaxDurationNs},
		{"last_token_offset_ns", &q.LastTokenOffsetNs, MaxDurationNs},
		{"stream_end_offset_ns", &q.StreamEndOffsetNs, MaxDurationNs},
		{"input_tokens", &q.InputTokens, MaxTokens},
		{"output_tokens", &q.OutputTokens, MaxTokens},
		{"reasoning_tokens", &q.ReasoningTokens, MaxTokens},
		{"cached_input_tokens", &q.CachedInputTokens, MaxTokens},
		{"turn_index", &q.TurnIndex, MaxTokens},
		{"spec_steps", &q.SpecSteps, MaxTokens},
		{"draft_tokens", &q.DraftTokens, MaxTokens},
		{"accepted_tokens", &q.AcceptedTokens, MaxTokens},
		{"max_tokens", &q.MaxTokens, MaxTokens},
		{"server_arrival_ns", &q.ServerArrivalNs, MaxTimeNs},
		{"server_queue_ns", &q.ServerQueueNs, MaxDurationNs},
		{"server_prefill_ns", &q.ServerPrefillNs, MaxDurationNs},
		{"server_decode_ns", &q.ServerDecodeNs, MaxDurationNs},
		{"server_inference_ns", &q.ServerInferenceNs, MaxDurationNs},
		{"server_ttft_ns", &q.ServerTTFTNs, MaxDurationNs},
		{"server_e2e_ns", &q.ServerE2ENs, MaxDurationNs},
		{"server_time_per_token_ns", &q.ServerTimePerTokenNs, MaxDurationNs},
		{"in_flight_at_start", &q.InFlightAtStart, MaxTokens},
	}
}

// EntryCheck is the value half of the entry check: it nulls the values of
// a batch that cannot be right and counts them per run, code and column.
// The zero value is ready; it is not safe for concurrent use.
type EntryCheck struct {
	runs map[string]*entryRun
}

type entryRun struct {
	list  []*entryCount
	index map[[2]string]*entryCount
}

type entryCount struct {
	code, field      string
	values, requests int64
	lastReq          int64
	first            string
}

// Batch checks b's values, in place: a negative or out-of-range time,
// duration or count (the limits above) is set null and counted; a message
// offset (not of a "server.*" kind) below 0 or over a day is counted
// under the column "offset_ns" and kept (the importer that wrote it
// dropped or kept the timeline knowingly; analyze's checks read it). It
// returns b.CheckValid's error first.
func (e *EntryCheck) Batch(b *Batch) error {
	if err := b.CheckValid(); err != nil {
		return err
	}
	var r *entryRun
	record := func(code, field string, key int64, value string) {
		if r == nil {
			if e.runs == nil {
				e.runs = map[string]*entryRun{}
			}
			if r = e.runs[b.RunID]; r == nil {
				r = &entryRun{index: map[[2]string]*entryCount{}}
				e.runs[b.RunID] = r
			}
		}
		k := [2]string{code, field}
		c := r.index[k]
		if c == nil {
			c = &entryCount{code: code, field: field, lastReq: math.MinInt64,
				first: "request " + strconv.FormatInt(key, 10) + ": " + value}
			r.index[k] = c
			r.list = append(r.list, c)
		}
		c.values++
		if key != c.lastReq {
			c.requests++
			c.lastReq = key
		}
	}
	for _, c := range b.int64Columns() {
		col := c.col
		for i, v := range col.V {
			if v >= 0 && float64(v) <= c.max || !col.Valid.Get(i) {
				continue
			}
			code := CheckNegative
			if v >= 0 {
				code = CheckOutOfRange
			}
			record(code, c.name, b.Req.Key[i], strconv.FormatInt(v, 10))
			col.Null(i)
		}
	}
	// Consistency: an intended start more than a day from the actual
	// one is not a schedule of this request (a field of another clock),
	// nor one more than MaxEarlySendNs after it (a tool sends a little
	// early at most: inference-perf's timer by under a millisecond); it
	// is nulled, its source with it.
	for i, k := range b.Req.Key {
		sched, ok := b.Req.ScheduledStartNs.Get(i)
		start, ok2 := b.Req.StartNs.Get(i)
		if !ok || !ok2 || math.Abs(float64(start-sched)) <= MaxDurationNs && sched-start <= MaxEarlySendNs {
			continue
		}
		record(CheckOutOfRange, "scheduled_start_ns", k, fmt.Sprintf("scheduled_start_ns %d is %.3f s from start_ns %d", sched, float64(start-sched)/1e9, start))
		b.Req.ScheduledStartNs.Null(i)
		b.Req.ScheduledStartSource.Set(i, "")
	}
	// Consistency: speculative decoding cannot accept more draft tokens
	// than it drafted, nor than the request generated; such counts are
	// nulled together.
	for i, k := range b.Req.Key {
		acc, ok := b.Req.AcceptedTokens.Get(i)
		if !ok {
			continue
		}
		draft, hasDraft := b.Req.DraftTokens.Get(i)
		out, hasOut := b.Req.OutputTokens.Get(i)
		if !(hasDraft && acc > draft || hasOut && acc > out) {
			continue
		}
		record(CheckOutOfRange, "accepted_tokens", k, fmt.Sprintf("accepted_tokens %d beside draft_tokens %s and output_tokens %s", acc, optStr(draft, hasDraft), optStr(out, hasOut)))
		b.Req.AcceptedTokens.Null(i)
		b.Req.DraftTokens.Null(i)
		b.Req.SpecSteps.Null(i)
	}
	// Consistency: the output count against the token messages. The
	// count is corrected to the messages (their tokens where every one
	// says), the file's count kept in reported_output_tokens when that
	// is unset, and the code added to corrections: the catalogue's fix
	// (FixCountFromImport) restores the file's count under
	// --no-corrections and the tools' conventions. A request another
	// trap corrected is left to that trap.
	for i, k := range b.Req.Key {
		n, ok := b.Req.OutputTokens.Get(i)
		tm := b.Req.TokenMessageCount[i]
		if !ok || !countBelowMessages(n, tm) || b.IsServerRow(i) || b.Req.Corrections.Get(i) != "" {
			// (a request a tool's trap already corrected has had its
			// messages judged: inference-perf's line times are 8 lines
			// for 3 tokens, not 8 tokens)
			continue
		}
		if sum, all := b.messageTokens(i); all && sum > tm {
			tm = sum
		}
		record(CheckCountBelowMessages, "output_tokens", k, fmt.Sprintf("output_tokens %d (%s) beside %d token messages; N from the messages",
			n, b.Req.OutputTokensSource.Get(i), b.Req.TokenMessageCount[i]))
		if !b.Req.ReportedOutputTokens.Has(i) {
			b.Req.ReportedOutputTokens.Set(i, float64(n))
		}
		b.Req.OutputTokens.Set(i, tm)
		b.Req.OutputTokensSource.Set(i, SourceChunkCount)
		b.addCorrection(i, CheckCountBelowMessages)
	}
	for i, k := range b.Req.Key {
		for _, c := range [...]struct {
			name string
			v    int64
		}{{"message_count", b.Req.MessageCount[i]}, {"token_message_count", b.Req.TokenMessageCount[i]}} {
			if c.v < 0 {
				record(CheckNegative, c.name, k, strconv.FormatInt(c.v, 10))
			}
		}
	}
	if b.Msg.Len() > 0 {
		for i := range b.Len() {
			lo, hi := b.Messages(i)
			for j := lo; j < hi; j++ {
				off := b.Msg.OffsetNs[j]
				if off >= 0 && off <= MaxDurationNs || b.Msg.Kind[j] >= MsgDict && IsServerKind(b.KindName(b.Msg.Kind[j])) {
					continue
				}
				code := CheckNegative
				if off >= 0 {
					code = CheckOutOfRange
				}
				record(code, "offset_ns", b.Req.Key[i], fmt.Sprintf("message %d at %d ns from the start", j-lo, off))
				break
			}
		}
		for j, t := range b.Msg.Tokens.V {
			if t < 0 && b.Msg.Tokens.Valid.Get(j) {
				record(CheckNegative, "tokens", b.requestOf(j), strconv.FormatInt(int64(t), 10))
				b.Msg.Tokens.Null(j)
			}
		}
	}
	return nil
}

// messageTokens returns the tokens request i's token messages carried
// and whether every one of them says.
func (b *Batch) messageTokens(i int) (sum int64, all bool) {
	lo, hi := b.Messages(i)
	for j := lo; j < hi; j++ {
		if !b.Msg.Kind[j].CarriesTokens() {
			continue
		}
		t, ok := b.Msg.Tokens.Get(j)
		if !ok {
			return 0, false
		}
		sum += int64(t)
	}
	return sum, true
}

// addCorrection adds code to request i's corrections (Request.AddCorrection).
func (b *Batch) addCorrection(i int, code string) {
	cur := b.Req.Corrections.Get(i)
	for c := range strings.SplitSeq(cur, ",") {
		if c == code {
			return
		}
	}
	if cur != "" {
		cur += ","
	}
	b.Req.Corrections.Set(i, cur+code)
}

// requestOf returns the key of the request message j belongs to.
func (b *Batch) requestOf(j int) int64 {
	lo, hi := 0, b.Len()
	for lo < hi {
		mid := (lo + hi) / 2
		if int(b.msgStart[mid+1]) <= j {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < b.Len() {
		return b.Req.Key[lo]
	}
	return -1
}

// Checks returns run id's data checks, one per code and column in the
// order first seen, and forgets the run; nil when no value was caught.
func (e *EntryCheck) Checks(run string) []DataCheck {
	r := e.runs[run]
	if r == nil {
		return nil
	}
	delete(e.runs, run)
	out := make([]DataCheck, 0, len(r.list))
	for _, c := range r.list {
		d := "first " + c.first
		if c.values > 1 {
			d += fmt.Sprintf("; %d values in %d request(s)", c.values, c.requests)
		}
		switch {
		case c.code == CheckCountBelowMessages:
			d += "; corrected"
		case c.field == "offset_ns" || c.field == "message_count" || c.field == "token_message_count":
			d += "; kept"
		default:
			d += "; left null"
		}
		out = append(out, DataCheck{Code: c.code, Field: c.field, Requests: c.requests, Detail: d, Corrected: c.code == CheckCountBelowMessages})
	}
	return out
}

// Checked returns a Sink that passes every batch through an EntryCheck
// before s gets it and adds each run's checks to its Run row (a copy;
// the run's own checks first). ReadTables wraps its sink in it: a table
// is input too, and a hand-edited negative token count must not print
// a negative throughput. RunStarter, ToolHinter and EventColumnSelector
// are forwarded to s.
func Checked(s Sink) Sink { return &checkedSink{Sink: s} }

type checkedSink struct {
	Sink
	entry EntryCheck
}

func (c *checkedSink) Batch(b *Batch) error {
	if err := c.entry.Batch(b); err != nil {
		return err
	}
	return c.Sink.Batch(b)
}

func (c *checkedSink) Run(r *Run) error {
	checks := append(c.entry.Checks(r.RunID), CheckSeries(r.Series)...)
	if len(checks) == 0 {
		return c.Sink.Run(r)
	}
	m := *r
	m.Checks = append(r.Checks[:len(r.Checks):len(r.Checks)], checks...)
	return c.Sink.Run(&m)
}

func (c *checkedSink) StartRun(r *Run) error            { return StartRun(c.Sink, r) }
func (c *checkedSink) ToolHint(tool string)             { ToolHint(c.Sink, tool) }
func (c *checkedSink) EventColumns(r *Run) EventColumns { return EventColumnsOf(c.Sink, r) }

// optStr writes an optional count ("null" when absent).
func optStr(v int64, ok bool) string {
	if !ok {
		return "null"
	}
	return strconv.FormatInt(v, 10)
}
