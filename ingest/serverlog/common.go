package serverlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// record is one server-side request record before it becomes a
// formats.Request: the server's own values, in ns, nil when absent.
type record struct {
	kind      string // Request.ServerKind
	where     string // "line 12" / "record 3"
	id        string // server request id
	traceID   string
	clock     string // clock of arrival
	arrival   *int64
	queue     *int64
	prefill   *int64
	decode    *int64
	inference *int64
	ttft      *int64
	e2e       *int64
	tpt       *int64
	in, out   *int64
	maxTokens *int64
	status    string // "" → ok
	errText   string
	errCode   *int64
	finish    string // the server's finish reason ("" if none)
	// events are the server's own timestamps for the request (Triton trace
	// timestamps, span phase boundaries and span events), in the clock of
	// arrival, in source order; written as "server.*" event rows.
	events []srvEvent
	// bad are the offending values the readers left null (the shared
	// value checks, recorded with the request's position when the rows are
	// made: checkValues).
	bad []badValue
}

// badValue is one offending value of a record: its check code, the log's
// field name and the value as written.
type badValue struct{ code, field, value string }

// val is a number read from a log: ok is false when the field is absent,
// null or no number (the readers' "no value"); a NaN or an infinity the
// log wrote is ok, for the value checks to judge.
type val struct {
	v  float64
	ok bool
}

// numV reads a JSON value as a number (see num).
func numV(raw json.RawMessage) val {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return val{}
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return val{f, true}
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		return atofV(str)
	}
	return val{}
}

// atofV parses a float field ("nan" and "inf" are numbers: Python prints
// them so).
func atofV(s string) val {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return val{v, err == nil}
}

// dur converts x, field's value in units of scale ns, to whole ns: nil
// when absent; a NaN, infinite, negative or over-a-day value is recorded
// in r.bad and nil.
func (r *record) dur(field string, x val, scale float64) *int64 {
	if !x.ok {
		return nil
	}
	if c := ingest.Classify(x.v, ingest.MaxIn(scale)); c != ingest.Valid {
		r.bad = append(r.bad, badValue{c.Code(), field, ingest.FormatValue(x.v)})
		return nil
	}
	return scaleNs(x.v, scale)
}

// sec is dur in seconds, ms in milliseconds.
func (r *record) sec(field string, x val) *int64 { return r.dur(field, x, ingest.Seconds) }
func (r *record) ms(field string, x val) *int64  { return r.dur(field, x, ingest.Milliseconds) }

// checkValues records r's offending values in vals at p: those the
// readers left null (r.bad), and the durations and counts of the row q,
// made from r, that cannot be right — a negative duration or one over a
// day (a time the log wrote, or one derived from two: arrival = end −
// total), a negative arrival, a token count outside [0, 10^9] — which are
// set to null in q. The fields are q's columns.
func (r *record) checkValues(q *formats.Request, vals *ingest.Values, p ingest.Pos) {
	for _, b := range r.bad {
		vals.Record(b.code, b.field, p, b.value)
	}
	for _, d := range []struct {
		field string
		v     **int64
	}{{"server_queue_ns", &q.ServerQueueNs}, {"server_prefill_ns", &q.ServerPrefillNs}, {"server_decode_ns", &q.ServerDecodeNs},
		{"server_inference_ns", &q.ServerInferenceNs}, {"server_ttft_ns", &q.ServerTTFTNs}, {"server_e2e_ns", &q.ServerE2ENs},
		{"server_time_per_token_ns", &q.ServerTimePerTokenNs}} {
		if *d.v != nil && !vals.Check(d.field, p, float64(**d.v), ingest.MaxDurationNs) {
			*d.v = nil
		}
	}
	if q.ServerArrivalNs != nil && !vals.Check("server_arrival_ns", p, float64(*q.ServerArrivalNs), ingest.MaxTimeNs) {
		q.ServerArrivalNs, q.ServerClockDomain = nil, ""
	}
	for _, c := range []struct {
		field string
		v     **int64
		src   *string
	}{{"input_tokens", &q.InputTokens, &q.InputTokensSource}, {"output_tokens", &q.OutputTokens, &q.OutputTokensSource}} {
		if *c.v != nil && !vals.Check(c.field, p, float64(**c.v), ingest.MaxTokens) {
			*c.v, *c.src = nil, ""
		}
	}
}

// srvEvent is one server-side timestamp: name is the server's own name
// (the event kind is "server." + its lower case), ns in the clock of the
// record's arrival.
type srvEvent struct {
	name string
	ns   int64
}

// eventRows returns r's server-side events as event rows (RunID and
// RequestKey unset): kind "server.<name in lower case, spaces as _>",
// OffsetNs = time − arrival, Index (and ReadIndex) in time order (ties in
// source order), Tokens and Text null. None when r has no arrival.
func (r *record) eventRows() []formats.Event {
	if r.arrival == nil || len(r.events) == 0 {
		return nil
	}
	ev := make([]formats.Event, len(r.events))
	for i, e := range r.events {
		name := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(e.name)), " ", "_")
		if name == "" {
			name = "event"
		}
		ev[i] = formats.Event{OffsetNs: e.ns - *r.arrival, Kind: formats.KindServerPrefix + name}
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].OffsetNs < ev[j].OffsetNs })
	for i := range ev {
		ev[i].Index, ev[i].ReadIndex = int32(i), int32(i)
	}
	return ev
}

// request converts r into a server row of run runID.
func (r *record) request(runID string, key int64, file string) formats.Request {
	q := formats.Request{
		RunID: runID, RequestKey: key, Status: formats.StatusOK,
		ServerKind: r.kind, ServerSource: file + ":" + r.where, ServerRequestID: r.id, TraceID: r.traceID,
		ServerArrivalNs: r.arrival, ServerQueueNs: r.queue, ServerPrefillNs: r.prefill, ServerDecodeNs: r.decode,
		ServerInferenceNs: r.inference, ServerTTFTNs: r.ttft, ServerE2ENs: r.e2e, ServerTimePerTokenNs: r.tpt,
		InputTokens: r.in, OutputTokens: r.out, MaxTokens: r.maxTokens,
		ErrorText: r.errText, ErrorCode: r.errCode, ServerFinishReason: r.finish,
	}
	if r.arrival != nil {
		q.ServerClockDomain = r.clock
	}
	if r.in != nil {
		q.InputTokensSource = formats.SourceServerUsage
	}
	if r.out != nil {
		q.OutputTokensSource = formats.SourceServerUsage
	}
	if r.status != "" {
		q.Status = r.status
	}
	return q
}

// secNs converts seconds to ns (rounded); nil for NaN/Inf or out of range.
func secNs(s float64) *int64 {
	return scaleNs(s, 1e9)
}

// epochSecNs converts a decimal string of seconds since the epoch to ns
// exactly (a float64 keeps only ~0.2 µs of an epoch-seconds value); other
// spellings (exponents) go through secNs.
func epochSecNs(s string) *int64 {
	s = strings.TrimSpace(s)
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" || len(ip) > 10 || len(fp) > 9 || strings.Trim(ip, "0123456789") != "" || strings.Trim(fp, "0123456789") != "" {
		return secNs(atof(s))
	}
	sec, _ := strconv.ParseInt(ip, 10, 64)
	frac, _ := strconv.ParseInt((fp + "000000000")[:9], 10, 64)
	return ingest.Ptr(sec*1e9 + frac)
}

func scaleNs(v, f float64) *int64 {
	x := v * f
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 9e18 {
		return nil
	}
	return ingest.Ptr(int64(math.Round(x)))
}

// parseDuration parses a Rust Duration Debug string (TGI: "986.532642ms",
// "681.374µs", "4.065504959s") or a Go time.Duration String (Ollama GIN:
// "32.779561288s", "29m59s", "1h0m0s"). Micro may be written "µs" (U+00B5),
// "μs" (U+03BC) or "us". Both grammars are subsets of time.ParseDuration's,
// which keeps every digit down to the ns.
func parseDuration(s string) (int64, error) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"`))
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("not a duration: %q", s)
	}
	return int64(d), nil
}

// lineReader reads a text log line by line, whatever the line length, with
// "\r\n" and "\n" endings mixed (vLLM tracebacks end in CRLF) and a final
// line without a newline reported through lastCut.
type lineReader struct {
	r       *bufio.Reader
	max     int64 // the longest line accepted (ingest.Options.MaxValue)
	n       int   // number of the line last returned (1-based)
	start   int64 // byte offset of the line last returned
	off     int64 // bytes read
	lastCut bool  // the last line returned had no newline
	// lastComplete: that line, without its newline, is nonetheless a
	// whole JSON document (a one-line OTLP export written without a final
	// newline): complete, not cut.
	lastComplete bool
	crlf         int // lines that ended in "\r\n"
}

func newLineReader(r *bufio.Reader, max int64) *lineReader { return &lineReader{r: r, max: max} }

// next returns the next line without its ending; io.EOF at the end. A line
// longer than max is an *ingest.CapError.
func (l *lineReader) next() (string, error) {
	b, complete, err := ingest.ReadLine(l.r, l.max)
	if err != nil {
		return "", err
	}
	l.n++
	l.start = l.off
	l.off += int64(len(b))
	if complete {
		l.off++
	}
	l.lastCut = !complete
	if l.lastCut {
		t := bytes.TrimSpace(b)
		l.lastComplete = len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t)
	}
	s := string(b)
	if strings.HasSuffix(s, "\r") {
		l.crlf++
		s = strings.TrimSuffix(s, "\r")
	}
	return s, nil
}

// Log-line prefixes that wrap a server's own line: vLLM's process tag
// "(APIServer pid=1) ", a journald prefix "janv. 20 23:15:37 host
// ollama[1232]: " (any locale's month name), a docker compose prefix
// "vllm-1  | ". They are removed before the line is matched.
var (
	reProcTag  = regexp.MustCompile(`^\((?:APIServer|EngineCore[\w]*|Worker[\w]*|VllmWorker[\w]*|[A-Za-z_]+)(?: pid=\d+)?\) `)
	reJournald = regexp.MustCompile(`^\S+\.? {1,2}\d{1,2} \d\d:\d\d:\d\d \S+ [\w.@-]+\[\d+\]: `)
	reCompose  = regexp.MustCompile(`^[\w.-]+-\d+\s+\| `)
)

// reANSI matches terminal color escapes (TGI's and vLLM's loggers color
// their output when attached to a terminal; `docker logs` keeps them).
var reANSI = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// stripPrefixes removes color escapes and wrapping prefixes from line.
func stripPrefixes(line string) string {
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = reANSI.ReplaceAllString(line, "")
	}
	for i := 0; i < 3; i++ {
		var m string
		switch {
		case strings.HasPrefix(line, "("):
			m = reProcTag.FindString(line)
		case strings.Contains(line, "]: "):
			m = reJournald.FindString(line)
		}
		if m == "" && strings.Contains(line, " | ") {
			m = reCompose.FindString(line)
		}
		if m == "" {
			return line
		}
		line = line[len(m):]
	}
	return line
}

// atoi64 parses an integer field; nil on failure.
func atoi64(s string) *int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// atof parses a float field; NaN on failure.
func atof(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// localNs encodes a wall-clock time of an unknown zone as ns since
// 1970-01-01 as if it were UTC (ClockLocal).
func localNs(year int, month time.Month, day, h, m, s, ns int) int64 {
	return time.Date(year, month, day, h, m, s, ns, time.UTC).UnixNano()
}

func sub(a, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	return ingest.Ptr(*a - *b)
}

func add(a, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	return ingest.Ptr(*a + *b)
}
