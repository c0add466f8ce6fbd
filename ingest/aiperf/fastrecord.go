package aiperf

import (
	"encoding/json"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// fastDecodeRecord decodes one profile_export.jsonl line as decodeRecord
// does, in one pass: the object's members are scanned by hand, the small
// metadata and error objects handed to encoding/json, and the numbers of
// inter_chunk_latency's list — most of a record's bytes — parsed as they
// are scanned (no RawMessage copy, no second pass). ok is false for any
// line it does not take exactly as encoding/json would (escapes in names,
// a member name matching a field only case-insensitively, a missing
// metadata object, anything that is not valid JSON, data after the
// object): the caller then decodes it with decodeRecord, the reference,
// which also gives the errors. FuzzFastRecord holds the two to the same
// records. The record's raw values point into line: use it before the
// next line is read.
//
// BenchmarkDecodeRecord, a record of 400 inter-chunk values: 156 µs with
// encoding/json and floatList, 45 µs here (2-core machine under load);
// with the numbers parsed in the scan (number) and the metadata read by
// meta, 30 µs against encoding/json's 300–450 µs in the same run (a
// machine under heavier load).
func fastDecodeRecord(line []byte) (*record, bool) {
	return fastDecodeInto(line, nil)
}

// fastDecodeInto is fastDecodeRecord reusing what the previous record
// left in re (nil: nothing), taking it: the record's first list of
// numbers goes into re's list, its metrics into re's map, emptied.
func fastDecodeInto(line []byte, re *reuse) (*record, bool) {
	s := scanner{Scanner: jsonscan.Scanner{B: line}}
	if re != nil {
		s.spare, s.spareMetrics = re.icl, re.metrics
		re.icl, re.metrics = nil, nil
	}
	var rec record
	s.WS()
	if s.Next() != '{' {
		return nil, false
	}
	ok := s.members(func(key string) bool {
		switch key {
		case "metadata":
			start := s.I
			if s.meta(&rec.Metadata) {
				return true
			}
			s.I = start // not one meta takes: encoding/json decides
			raw, ok := s.Value(0)
			return ok && json.Unmarshal(raw, &rec.Metadata) == nil
		case "metrics":
			return s.metrics(&rec)
		case "error":
			raw, ok := s.Value(0)
			return ok && json.Unmarshal(raw, &rec.Error) == nil
		}
		if foldsTo(key, "metadata", "metrics", "error") {
			return false // encoding/json matches names case-insensitively
		}
		_, ok := s.Value(0)
		return ok
	})
	if !ok {
		return nil, false
	}
	s.WS()
	if s.I != len(s.B) || rec.Metadata == nil {
		return nil, false
	}
	return &rec, true
}

// knownNames are the member names and units of a record, handed out by
// str without allocating.
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, group := range [][]string{timeTags, countTags, metaNames, {tagPerUserTPS, tagICL,
		"metadata", "metrics", "error", "value", "unit", "ms", "tokens", "tokens/sec", "profiling", "warmup"}} {
		for _, n := range group {
			m[n] = n
		}
	}
	return m
}()

// metaNames are recordMeta's JSON names.
var metaNames = []string{"session_num", "x_request_id", "x_correlation_id", "conversation_id", "turn_index", "parent_correlation_id",
	"request_start_ns", "timestamp_ns", "request_end_ns", "credit_issued_ns", "benchmark_phase", "credit_phase", "was_cancelled"}

// meta reads the "metadata" object into *m (allocated when nil; a second
// "metadata" object adds to the first, as in encoding/json) when every
// member is one it takes exactly as encoding/json would: a string without
// escapes for a string field, an integer for an *int64, true or false for
// the bool, any valid value for a raw one, and names that are recordMeta's
// exactly or match none of them case-insensitively. False otherwise (*m
// may then hold part of the object: the caller decodes it again, whole,
// with encoding/json, which sets every field the object names).
func (s *scanner) meta(m **recordMeta) bool {
	if s.Next() != '{' {
		return false
	}
	if *m == nil {
		*m = &recordMeta{}
	}
	md := *m
	return s.members(func(key string) bool {
		switch key {
		case "x_request_id":
			return s.plainString(&md.XRequestID)
		case "x_correlation_id":
			return s.plainString(&md.XCorrelationID)
		case "conversation_id":
			return s.plainString(&md.ConversationID)
		case "parent_correlation_id":
			return s.plainString(&md.ParentCorrelationID)
		case "benchmark_phase":
			return s.plainString(&md.BenchmarkPhase)
		case "credit_phase":
			return s.plainString(&md.CreditPhase)
		case "session_num":
			return s.integer(&md.SessionNum.v)
		case "turn_index":
			return s.integer(&md.TurnIndex.v)
		case "request_start_ns":
			return s.raw(&md.RequestStartNs)
		case "timestamp_ns":
			return s.raw(&md.TimestampNs)
		case "request_end_ns":
			return s.raw(&md.RequestEndNs)
		case "credit_issued_ns":
			return s.raw(&md.CreditIssuedNs)
		case "was_cancelled":
			switch {
			case s.Lit("true"):
				md.WasCancelled = true
			case s.Lit("false"):
				md.WasCancelled = false
			default:
				return false
			}
			return true
		}
		if foldsTo(key, metaNames...) {
			return false
		}
		_, ok := s.Value(0)
		return ok
	})
}

// plainString reads a string without escapes into *dst.
func (s *scanner) plainString(dst *string) bool {
	v, ok := s.str()
	if ok {
		*dst = v
	}
	return ok
}

// integer reads a JSON integer that fits an int64 into *dst (a new
// value, as encoding/json allocates one).
func (s *scanner) integer(dst **int64) bool {
	start := s.I
	if s.Next() == '-' {
		s.I++
	}
	for s.I < len(s.B) && s.B[s.I] >= '0' && s.B[s.I] <= '9' {
		s.I++
	}
	tok := s.B[start:s.I]
	if c := s.Next(); c == '.' || c == 'e' || c == 'E' || len(tok) == 0 || !jsonscan.ValidNumber(tok) {
		return false
	}
	v, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		return false
	}
	*dst = &v
	return true
}

// raw reads any valid value into *dst (a copy: the line's buffer is
// reused), null included, as json.RawMessage decodes.
func (s *scanner) raw(dst *json.RawMessage) bool {
	v, ok := s.Value(0)
	if ok {
		*dst = append(json.RawMessage(nil), v...)
	}
	return ok
}

// foldsTo reports whether key equals one of names case-insensitively
// (but is not one of them exactly).
func foldsTo(key string, names ...string) bool {
	for _, n := range names {
		if key != n && strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// metrics reads the "metrics" object into rec.Metrics.
func (s *scanner) metrics(rec *record) bool {
	if s.Lit("null") {
		rec.Metrics = nil
		return true
	}
	if s.Next() != '{' {
		return false
	}
	if rec.Metrics == nil {
		// a second "metrics" adds to the first, as encoding/json does
		if rec.Metrics = s.spareMetrics; rec.Metrics != nil {
			s.spareMetrics = nil
			clear(rec.Metrics)
		} else {
			rec.Metrics = make(map[string]metric, 16)
		}
	}
	return s.members(func(name string) bool {
		var m metric
		if !s.Lit("null") && !s.metric(&m) {
			return false
		}
		rec.Metrics[name] = m
		return true
	})
}

// metric reads one {"value": …, "unit": "…"} object.
func (s *scanner) metric(m *metric) bool {
	if s.Next() != '{' {
		return false
	}
	return s.members(func(key string) bool {
		switch key {
		case "value":
			start := s.I
			m.list, m.listOK = nil, false
			if s.Next() == '[' {
				if list, ok := s.numbers(); ok {
					m.list, m.listOK = list, true
				} else {
					s.I = start // not a plain list of numbers: validate it whole
					if _, ok := s.Value(0); !ok {
						return false
					}
				}
			} else if _, ok := s.Value(0); !ok {
				return false
			}
			m.Value = json.RawMessage(s.B[start:s.I])
			return true
		case "unit":
			if s.Lit("null") {
				m.Unit = ""
				return true
			}
			u, ok := s.str()
			m.Unit = u
			return ok
		}
		if foldsTo(key, "value", "unit") {
			return false
		}
		_, ok := s.Value(0)
		return ok
	})
}

// members reads the object at s.I (its '{' next), calling member with
// each name once the scanner stands at its value; member reads the value.
// False when the object is not one members takes (escapes or invalid
// UTF-8 in a name: the reference decodes those) or member returns false.
func (s *scanner) members(member func(key string) bool) bool {
	return s.Members(func(raw []byte) bool {
		key, ok := jsonscan.Name(raw, knownNames)
		return ok && member(key)
	})
}

// numbers reads a list of plain JSON numbers into s.spare (reused, when
// the caller gave one; a new slice otherwise); ok is false (s.I anywhere)
// when an element is anything else.
func (s *scanner) numbers() ([]float64, bool) {
	s.I++ // '['
	s.WS()
	out := s.spare[:0]
	s.spare = nil // one list per buffer: a second list gets its own
	if out == nil {
		out = make([]float64, 0, 64)
	}
	if s.Eat(']') {
		return out, true
	}
	for {
		f, ok := s.number()
		if !ok {
			return nil, false
		}
		out = append(out, f)
		s.WS()
		if s.Eat(']') {
			return out, true
		}
		if !s.Eat(',') {
			return nil, false
		}
		s.WS()
	}
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number reads one JSON number at s.I, as strconv.ParseFloat reads it
// (correctly rounded; encoding/json's own parser). Numbers whose digits
// fit in 2^53 with a power of ten of at most 22 either way — every
// inter-chunk value AIPerf writes (milliseconds with up to 6 decimals) —
// are the exact integer of their digits times or divided by an exact
// power of ten: one IEEE operation on exact operands, so the correctly
// rounded result, which is what ParseFloat's own exact fast path
// computes. Any other number goes to strconv.ParseFloat. ok is false for
// a token that is not a JSON number, or that a number character follows
// (the list is then validated whole by the caller).
func (s *scanner) number() (float64, bool) {
	b, start := s.B, s.I
	i := start
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var mant uint64
	digits, exp := 0, 0 // significant digits read into mant; the power of ten
	intStart := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		if digits < 19 {
			mant = mant*10 + uint64(b[i]-'0')
			if mant != 0 {
				digits++
			}
		} else {
			digits++ // beyond 19 digits: ParseFloat decides
		}
		i++
	}
	if n := i - intStart; n == 0 || n > 1 && b[intStart] == '0' {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		fracStart := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if digits < 19 {
				mant = mant*10 + uint64(b[i]-'0')
				exp--
				if mant != 0 {
					digits++
				}
			} else {
				digits++
			}
			i++
		}
		if i == fracStart {
			return 0, false
		}
	}
	simple := digits <= 19
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		expStart := i
		e := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
			i++
		}
		if i == expStart {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i < len(b) {
		if c := b[i]; c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' {
			return 0, false // e.g. 1.5-3: not one number
		}
	}
	s.I = i
	if simple && mant < 1<<53 && exp >= -22 && exp <= 22 {
		f := float64(mant)
		if exp < 0 {
			f /= pow10[-exp]
		} else {
			f *= pow10[exp]
		}
		if neg {
			f = -f
		}
		return f, true
	}
	if simple {
		// 16 to 19 digits (76.81288099999999: Python's ns / 1e6 at full
		// precision, about one value in eight of a real export)
		if f, ok := jsonscan.Float(mant, exp, neg); ok {
			return f, true
		}
	}
	tok := b[start:i]
	// the string does not outlive the call (an error is discarded)
	f, err := strconv.ParseFloat(unsafe.String(&tok[0], len(tok)), 64)
	return f, err == nil
}

// scanner reads JSON from B at I: the shared validating scanner
// (jsonscan), plus the buffers a record may reuse and the readers above.
type scanner struct {
	jsonscan.Scanner
	// spare is a buffer the first list numbers reads may reuse, and
	// spareMetrics a map the first metrics object may (nil: none).
	spare        []float64
	spareMetrics map[string]metric
}

// reuse is what one record leaves the next line's (readRecords): its
// inter-chunk list, its metrics map, its checked values and its rebuilt
// offsets, once the record is done with (converted; nothing of it is
// kept).
type reuse struct {
	icl     []float64
	metrics map[string]metric
	seen    map[string]checked
	offs    []int64
}

// keep takes rec's buffers for the next record.
func (re *reuse) keep(rec *record) {
	if cap(rec.icl) > cap(re.icl) {
		re.icl = rec.icl[:0]
	}
	if rec.Metrics != nil {
		re.metrics = rec.Metrics
	}
	if rec.seen != nil {
		re.seen = rec.seen
	}
	if rec.offs != nil {
		re.offs = rec.offs[:0]
	}
}

// str reads a string without escapes (ok false for one with escapes,
// control characters or invalid UTF-8: the reference decodes those).
func (s *scanner) str() (string, bool) {
	lit, esc, ok := s.Str()
	if !ok || esc {
		return "", false
	}
	return jsonscan.Name(lit[1:len(lit)-1], knownNames)
}
