package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// The value checks every importer shares: the data-check catalogue's
// entries for a per-request value that cannot be right, whatever the tool
// (analyze/TRAPS.md). An importer reads each per-request number through a
// Values, which classifies it, leaves an offending one null and counts it;
// Values.Checks gives the run's formats.DataCheck rows.
const (
	// CheckNotFinite, CheckNegative, CheckOutOfRange, CheckNotInteger:
	// the entry check's codes (formats.CheckNegative, …), which a raw
	// importer records in the tool's own field names and units.
	CheckNotFinite  = formats.CheckNotFinite
	CheckNegative   = formats.CheckNegative
	CheckOutOfRange = formats.CheckOutOfRange
	CheckNotInteger = formats.CheckNotInteger
	// CheckNumberAsString: a number written as a JSON string ("91.1").
	CheckNumberAsString = "value_number_as_string"
	// CheckTimeOrder: a request's time after its end (a first token after
	// the request's latency).
	CheckTimeOrder = "time_order"
	// CheckSeriesNegative: a negative value of a server series that
	// cannot be negative (a queue length, a counter).
	CheckSeriesNegative = "series_value_negative"
	// CheckTimeUnit: a time column whose magnitude is not the unit the
	// tool writes (Unix seconds where it writes nanoseconds).
	CheckTimeUnit = "time_unit_mismatch"
)

// Limits of the shared value checks: the entry check's (formats).
const (
	MaxDurationNs = formats.MaxDurationNs
	MaxTokens     = formats.MaxTokens
	MaxTimeNs     = formats.MaxTimeNs
)

// Units of time values, in nanoseconds per unit.
const (
	Nanoseconds  = 1.0
	Microseconds = 1e3
	Milliseconds = 1e6
	Seconds      = 1e9
)

// valueMetrics are the report metrics a per-request value can feed.
var valueMetrics = []string{"ttft_ms", "ttst_ms", "tpot_ms", "itl_ms", "e2e_ms", "osl_tokens", "isl_tokens"}

// valueTools names where the shared value checks run.
const valueTools = `every importer's per-request fields: aiperf, genai-perf (the SSE usage counts included), guidellm, inference-perf, llmperf, server logs (server and client rows), sglang-bench, vllm-bench; MLPerf's logs hold no per-request values; ` +
	"and, for negative and out-of-range values, every batch that enters tokentrace: the entry check (formats.EntryCheck) runs on " +
	"every importer's output and on tables read back (a table edited by hand: column names of the requests table, output_tokens, stream_end_offset_ns)"

// ValueTraps are the catalogue entries of the shared value checks
// (analyze/TRAPS.md); ingest/registry lists them with the tools' own.
var ValueTraps = []convention.Trap{{
	Code:  CheckNotFinite,
	Title: "a per-request number is NaN or infinite",
	Tools: valueTools + " (Python tools write NaN and Infinity bare; a number past a double's range, 1e999, reads as infinite)",
	Signature: "a per-request time, duration, gap or count is NaN, Infinity or -Infinity (bare, or the strings \"NaN\", \"inf\"), " +
		"or a number too large for a double",
	Action: convention.ActionNull,
	Effect: "the value is null (unknown), never 0 and never a 0-ns gap; the request is kept with its other fields and counted per field. " +
		"A bad per-message gap or time leaves its request without rebuilt messages (the later ones cannot be placed): " +
		"TTFT, E2E and TPOT then come from the request's own fields where the file has them, and its gaps leave pooled ITL",
	Metrics: valueMetrics,
	Source:  "tokentrace: a measured time or count is a finite number (read as a 0 ms gap, one NaN in the itls of the vLLM fixture detailed-appended lowered its TPOT mean from 22.5 to 19.83 ms)",
	Test:    "ingest/registry TestValueNotFinite",
}, {
	Code:      CheckNegative,
	Title:     "a per-request time, duration or count is negative",
	Tools:     valueTools,
	Signature: "a latency, gap, token count or absolute time below 0, or a message time before its request's start on the same clock",
	Action:    convention.ActionNull,
	Effect: "the value is null (unknown), never 0 (LLMPerf's number_output_tokens −7 became 0 tokens) and never left in the statistics; " +
		"the request is kept and counted per field; a negative per-message time leaves its request without rebuilt messages, as for NaN",
	Metrics: valueMetrics,
	Source:  "tokentrace: a duration or a count cannot be negative",
	Test:    "ingest/registry TestValueNegative",
}, {
	Code:      CheckOutOfRange,
	Title:     "a per-request value beyond any possible one",
	Tools:     valueTools,
	Signature: "a duration (TTFT, latency, gap, offset from the request's start) over a day, a token count over 10^9, an absolute time past 2^62 ns",
	Threshold: "duration > 86400 s; tokens > 1e9; time ≥ 2^62 ns",
	Action:    convention.ActionNull,
	Effect:    "the value is null (unknown) and counted per field, never clamped; the request is kept (1e308 ms is no TTFT, and would swamp every mean)",
	Metrics:   valueMetrics,
	Source:    "tokentrace: no request takes a day (analyze's implausible_values uses the same bound on computed latencies) and none holds a billion tokens",
	Test:      "ingest/registry TestValueOutOfRange",
}, {
	Code:      CheckNotInteger,
	Title:     "a per-request token count is not a whole number",
	Tools:     valueTools,
	Signature: "a token count (input, output, reasoning, usage counts) with a fraction: 2.5 tokens",
	Threshold: "a count x with x ≠ ⌊x⌋ (4.0 is a count; 4.5 is not)",
	Action:    convention.ActionNull,
	Effect: "the count is null (unknown) and counted per field, never truncated or rounded (2.5 read as 2 used to pass silently): " +
		"the report's N then comes from the next source the convention ranks (usage, the tool's count, the tokenizer, the chunk count)",
	Metrics: []string{"tpot_ms", "osl_tokens", "isl_tokens"},
	Source:  "tokentrace: a tokenizer counts whole tokens; a fraction means the file was computed or rewritten (an average, a spreadsheet)",
	Test:    "ingest/registry TestValueNotInteger",
}, {
	Code:  CheckNumberAsString,
	Title: "a per-request number written as a string",
	Tools: "the JSON files of aiperf, guidellm, inference-perf, llmperf, sglang-bench and vllm-bench, whose writers write numbers as JSON numbers " +
		"(not server logs: OTLP writes int64 values as strings, text logs are text; not GenAI-Perf's integer timestamps, where a string is an error)",
	Signature: "a JSON string that spells a number (\"91.1\", \" 12 \") where the tool writes a number",
	Action:    convention.ActionCorrect,
	Effect: "read as the number it spells (then checked like any number) and counted per field: the file was rewritten by something " +
		"(a spreadsheet, pandas with object columns) that may have changed more; a string that spells no number is an error naming its position",
	Metrics: valueMetrics,
	Source:  "tokentrace: the tools' writers (pydantic, json.dumps, perf_analyzer's RapidJSON) write numbers as numbers",
	Test:    "ingest/registry TestValueNumberAsString",
}, {
	Code:  CheckTimeOrder,
	Title: "a request's token comes after its end",
	Tools: "aiperf (time_to_first_token and time_to_first_output_token against request_latency; the last response, " +
		"time_to_first_token + Σ inter_chunk_latency, against request_latency: field inter_chunk_latency), vllm-bench (ttfts against latencies; " +
		"the last token, ttfts + Σ itls, against latencies: field itls); an end before the start is value_negative (AIPerf request_end_ns, every offset from the start); " +
		"a vLLM request that failed mid-stream (an error, latency left 0.0 by vLLM) is a failure, not a time_order",
	Signature: "a first-token or last-token time (from the request's start) later than the request's end-to-end latency, in the same record",
	Threshold: "ttft > latency + 1 µs (rounding of the tools' float milliseconds and seconds)",
	Action:    convention.ActionNull,
	Effect: "the latency is trusted and the first-token time is null: AIPerf's request_latency is request_end_ns − request_start_ns, " +
		"two timestamps that agree with each other, and vLLM's latencies is the wall time its own E2E statistics use; " +
		"the request keeps its E2E (= the latency), a first-token time after it is unknown, and no messages are rebuilt (AIPerf: TTFT is kept when only the gaps overrun) " +
		"(they would place the last token after the end: E2E 100.6 s from a 741 ms request)",
	Metrics: []string{"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"},
	Source:  "tokentrace: the first token of a request cannot arrive after its last byte",
	Test:    "ingest/registry TestTimeOrder",
}, {
	Code:  CheckSeriesNegative,
	Title: "a server metric that cannot be negative is negative",
	Tools: "prometheus (query results): counters and histogram or summary parts (names ending _total, _count, _sum, _bucket, _created) " +
		"and every metric of an inference server (vllm:, sglang:, tgi_, nv_, trtllm_, lmcache: prefixes); other gauges (a temperature) may be negative and are kept",
	Signature: "a sample value below 0 of such a metric",
	Action:    convention.ActionNull,
	Effect:    "the point's value is NaN (unknown) in the run's series, never 0, and counted per metric with the first one's response, series and sample",
	Metrics:   []string{"series"},
	Source:    "tokentrace: Prometheus counters only increase from 0 (prometheus.io/docs/concepts/metric_types); a queue length or a cache usage is a count or a fraction",
	Test:      "ingest/prometheus TestSeriesChecks",
}, {
	Code:  CheckTimeUnit,
	Title: "a time column is not in the unit the tool writes",
	Tools: "genai-perf (timestamp: Unix ns), aiperf (request_start_ns: Unix ns), guidellm (start_time, request_start, resolve_start: Unix s); " +
		"the other times of a request are checked against its start (value_negative, value_out_of_range), and the perf_counter clocks of vLLM, SGLang and inference-perf have no magnitude to judge",
	Signature: "a Unix timestamp's magnitude is that of another unit (GenAI-Perf's ns written as seconds: every latency 0), " +
		"or a timestamp the tool writes as an integer has a fraction",
	Threshold: "as Unix time: < 1e11 is seconds, < 1e14 ms, < 1e17 µs, ≥ 1e17 ns (each a date from 1973 on); values below 1e8 are not judged",
	Action:    convention.ActionReject,
	Effect: "the import fails with an error naming the file, the request and its byte or line, the value and the unit its magnitude shows; " +
		"nothing is converted: whole seconds have a 1 s resolution (every TTFT 0 or 1000 ms), and a file rewritten in another unit may have more rewritten",
	Metrics: []string{"ttft_ms", "ttst_ms", "tpot_ms", "itl_ms", "e2e_ms"},
	Source:  "perf_analyzer src/request_record.h (system_clock ns since the epoch); AIPerf time.time_ns() (record_processor_service.py); guidellm time.time()",
	Test:    "ingest/registry TestTimeUnit",
}}

// Values accumulates one run's shared value checks: per code and field,
// the number of offending values, of requests holding them, and the first
// with its position. A nil *Values classifies and records nothing.
type Values struct {
	list  []*valueCheck
	index map[[2]string]*valueCheck
}

type valueCheck struct {
	code, field      string
	values, requests int64
	lastReq          int64
	first            string
}

// Pos is where a value is: its request's key in the run
// (Request.RequestKey; −1 for a value of no request) and, when the file
// has them, its line or byte ("line 12", "byte 4096").
type Pos struct {
	Request int64
	At      string
}

// String renders p: "request 3 (line 12)".
func (p Pos) String() string {
	s := "request " + strconv.FormatInt(p.Request, 10)
	if p.Request < 0 {
		s = ""
	}
	switch {
	case p.At == "":
	case s == "":
		s = p.At
	default:
		s += " (" + p.At + ")"
	}
	return s
}

// Record counts one offending value of field (the tool's own name:
// "ttfts", "itls[3]" is named "itls"), at p, written as value.
func (v *Values) Record(code, field string, p Pos, value string) {
	if v == nil {
		return
	}
	if v.index == nil {
		v.index = map[[2]string]*valueCheck{}
	}
	k := [2]string{code, field}
	c := v.index[k]
	if c == nil {
		c = &valueCheck{code: code, field: field, lastReq: math.MinInt64, first: p.String() + ": " + value}
		v.index[k] = c
		v.list = append(v.list, c)
	}
	c.values++
	if p.Request != c.lastReq || p.Request < 0 {
		c.requests++
		c.lastReq = p.Request
	}
}

// Any reports whether a value was recorded.
func (v *Values) Any() bool { return v != nil && len(v.list) > 0 }

// Checks are the run's data checks, one per code and field in the order
// first seen: Requests is the number of requests that held such a value
// (a value of no request counts one), Detail the first with its position
// and the counts.
func (v *Values) Checks() []formats.DataCheck {
	if v == nil {
		return nil
	}
	out := make([]formats.DataCheck, 0, len(v.list))
	for _, c := range v.list {
		d := "first " + c.first
		if c.values > 1 {
			d += fmt.Sprintf("; %d values in %d request(s)", c.values, c.requests)
		}
		switch {
		case c.code == CheckNumberAsString && c.values == 1:
			d += "; read as the number it spells"
		case c.code == CheckNumberAsString:
			d += "; read as the numbers they spell"
		default:
			d += "; left null"
		}
		out = append(out, formats.DataCheck{Code: c.code, Field: c.field, Requests: c.requests, Detail: d})
	}
	return out
}

// Warn passes one warning per check to warn (Notes.WarnOnly: to
// Options.Warn without a note, since the run's Checks hold them); run, when
// not "", names the run in each.
func (v *Values) Warn(warn func(string), run string) {
	WarnChecks(warn, run, v.Checks())
}

// WarnChecks passes one warning per shared value check of checks to warn
// (see Values.Warn).
func WarnChecks(warn func(string), run string, checks []formats.DataCheck) {
	for _, c := range checks {
		what := ""
		for _, t := range append(append(ValueTraps[:len(ValueTraps):len(ValueTraps)], RunTraps...), ModelTraps...) {
			if t.Code == c.Code {
				what = t.Title
			}
		}
		if what == "" {
			continue
		}
		prefix := ""
		if run != "" {
			prefix = "run " + run + ": "
		}
		count := fmt.Sprintf("%d request(s), ", c.Requests)
		if c.Requests == 0 { // a check of the run's series, not of requests
			count = ""
		}
		warn(fmt.Sprintf("%s%s (%s, field %s): %s%s", prefix, what, c.Code, c.Field, count, c.Detail))
	}
}

// Class is what a number is against the range of its field.
type Class uint8

const (
	// Valid: a finite number in range.
	Valid Class = iota
	// NotFinite: NaN or ±Inf.
	NotFinite
	// Negative: below 0.
	Negative
	// OutOfRange: above the field's maximum.
	OutOfRange
	// NotInteger: a token count (a value checked against MaxTokens) with
	// a fraction.
	NotInteger
)

// Classify says what x is against [0, maxV]. A maximum of MaxTokens
// marks a token count, which must also be a whole number (NotInteger).
func Classify(x, maxV float64) Class {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return NotFinite
	case x < 0:
		return Negative
	case x > maxV:
		return OutOfRange
	case maxV == MaxTokens && x != math.Trunc(x):
		return NotInteger
	}
	return Valid
}

// Code is the check code of an offending class ("" for Valid).
func (c Class) Code() string {
	switch c {
	case NotFinite:
		return CheckNotFinite
	case Negative:
		return CheckNegative
	case OutOfRange:
		return CheckOutOfRange
	case NotInteger:
		return CheckNotInteger
	}
	return ""
}

// FormatValue renders a number as a check's detail shows it: NaN,
// Infinity, -Infinity, else the shortest form ("-7", "1e+308").
func FormatValue(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case x == 0 || math.Abs(x) >= 1e-6 && math.Abs(x) < 1e21:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// MaxIn is the longest duration in a unit of nsPerUnit nanoseconds
// (MaxDurationNs / nsPerUnit: 86400 for seconds).
func MaxIn(nsPerUnit float64) float64 { return MaxDurationNs / nsPerUnit }

// Check classifies x, a value of field at p, against [0, maxV] (Classify:
// a token count, checked against MaxTokens, must be whole): a valid value
// returns true; an offending one is recorded under its code and returns
// false (the caller leaves the value null).
func (v *Values) Check(field string, p Pos, x, maxV float64) bool {
	c := Classify(x, maxV)
	if c == Valid {
		return true
	}
	v.Record(c.Code(), field, p, FormatValue(x))
	return false
}

// Duration checks a duration x in units of nsPerUnit nanoseconds (a
// latency, TTFT, gap) against [0, a day] and returns it in whole
// nanoseconds (math.Round(x·nsPerUnit)); nil for an offending value, which
// is recorded.
func (v *Values) Duration(field string, p Pos, x, nsPerUnit float64) *int64 {
	if !v.Check(field, p, x, MaxIn(nsPerUnit)) {
		return nil
	}
	return Ptr(int64(math.Round(x * nsPerUnit)))
}

// Count checks a token count against [0, MaxTokens] (a whole number) and
// returns it; nil for an offending value, which is recorded.
func (v *Values) Count(field string, p Pos, x float64) *int64 {
	if !v.Check(field, p, x, MaxTokens) {
		return nil
	}
	return Ptr(int64(math.Round(x)))
}

// Time checks an absolute time x in units of nsPerUnit nanoseconds against
// [0, MaxTimeNs] and returns it in whole nanoseconds; nil for an offending
// value, which is recorded.
func (v *Values) Time(field string, p Pos, x, nsPerUnit float64) *int64 {
	if !v.Check(field, p, x, MaxTimeNs/nsPerUnit) {
		return nil
	}
	return Ptr(int64(math.Round(x * nsPerUnit)))
}

// JSONState is what a JSON value read as a number holds.
type JSONState uint8

const (
	// JSONAbsent: null, or no value.
	JSONAbsent JSONState = iota
	// JSONNumber: a JSON number (possibly ±Inf: 1e999).
	JSONNumber
	// JSONQuoted: a string that spells a number ("91.1", "NaN", "-inf").
	JSONQuoted
	// JSONOther: anything else (a string that is no number, a bool, a
	// list, an object): a format error for the caller.
	JSONOther
)

// ReadJSONNumber reads raw as a number: a JSON number; null or empty
// (JSONAbsent); a string whose trimmed text strconv.ParseFloat accepts —
// "NaN", "Infinity", "inf" and "-inf" included, and case-insensitively —
// (JSONQuoted, x its value); anything else is JSONOther. A number beyond a
// double's range is ±Inf (as Python reads it).
func ReadJSONNumber(raw []byte) (x float64, st JSONState) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return 0, JSONAbsent
	}
	if t[0] == '"' {
		return readQuotedNumber(t)
	}
	if t[0] != '-' && (t[0] < '0' || t[0] > '9') {
		return 0, JSONOther
	}
	// (string(t) does not escape here, so a short number is converted on
	// the stack: no allocation per value)
	v, err := strconv.ParseFloat(string(t), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, JSONOther
		}
	}
	return v, JSONNumber
}

// readQuotedNumber is ReadJSONNumber for a JSON string t.
func readQuotedNumber(t []byte) (float64, JSONState) {
	var s string
	if json.Unmarshal(t, &s) != nil {
		return 0, JSONOther
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, JSONOther
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, JSONOther
		}
	}
	return v, JSONQuoted
}

// JSON reads raw, the value of field at p, as a number: it returns the
// number and true, or false for null or absent; a number written as a
// string is read and recorded (CheckNumberAsString); another value is an
// error (not a number). The number is not range-checked: pass it to
// Duration, Count, Time or Check.
func (v *Values) JSON(field string, p Pos, raw []byte) (float64, bool, error) {
	x, st := ReadJSONNumber(raw)
	switch st {
	case JSONAbsent:
		return 0, false, nil
	case JSONQuoted:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v.Record(CheckNumberAsString, field, p, string(bytes.TrimSpace(raw)))
		}
	case JSONOther:
		return 0, false, fmt.Errorf("%s: not a number: %s", field, excerpt(raw))
	}
	return x, true, nil
}

// excerpt is a short rendering of a JSON value for errors.
func excerpt(raw []byte) string {
	return formats.CutRunes(strings.TrimSpace(string(raw[:min(len(raw), 400)])), 40)
}

// EpochUnit names the unit a Unix timestamp's magnitude shows, and its
// nanoseconds per unit: below 1e11 seconds, below 1e14 milliseconds,
// below 1e17 microseconds, else nanoseconds (each a date from 1973 to
// 5138); "" for a value below 1e8 (no date after 1973 in any unit: a
// monotonic clock, or a hand-made file), for a negative one, for NaN and
// for one from MaxTimeNs on (no time in any unit: the range check's).
func EpochUnit(x float64) (name string, nsPerUnit float64) {
	switch {
	case !(x >= 1e8) || x >= MaxTimeNs:
		return "", 0
	case x < 1e11:
		return "s", Seconds
	case x < 1e14:
		return "ms", Milliseconds
	case x < 1e17:
		return "µs", Microseconds
	}
	return "ns", Nanoseconds
}

// EpochMismatch checks that x, a Unix timestamp the tool writes in units
// of wantNsPerUnit (wantName: "ns"), has the magnitude of that unit; it
// returns "" when it does or cannot tell (EpochUnit ""), else the reason
// for a CheckTimeUnit error: "1700000000 is Unix seconds by its magnitude
// (2023-11-14T22:13:20Z), not ns".
func EpochMismatch(x float64, wantName string, wantNsPerUnit float64) string {
	name, scale := EpochUnit(x)
	if name == "" || scale == wantNsPerUnit {
		return ""
	}
	when := time.Unix(0, int64(x*scale)).UTC().Format(time.RFC3339)
	return fmt.Sprintf("%s is Unix %s by its magnitude (%s as such), not %s: every time read from it would be off by a factor of 10^%.0f",
		FormatValue(x), unitWord(name), when, unitWord(wantName), math.Abs(math.Log10(scale/wantNsPerUnit)))
}

func unitWord(name string) string {
	switch name {
	case "s":
		return "seconds"
	case "ms":
		return "milliseconds"
	case "µs":
		return "microseconds"
	}
	return "nanoseconds"
}

// JSONTime reads raw, the value of field at p, as an absolute time in
// units of nsPerUnit nanoseconds (an integer of nanoseconds read exactly,
// not through a double): its nanoseconds, or nil for null, absent and an
// offending value (recorded: NaN, negative, past MaxTimeNs). A number
// written as a string is read and recorded; another value is an error.
func (v *Values) JSONTime(field string, p Pos, raw []byte, nsPerUnit float64) (*int64, error) {
	t := bytes.TrimSpace(raw)
	if nsPerUnit == Nanoseconds && len(t) > 0 && t[0] >= '0' && t[0] <= '9' {
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			if n > MaxTimeNs {
				v.Record(CheckOutOfRange, field, p, string(t))
				return nil, nil
			}
			return &n, nil
		}
	}
	x, ok, err := v.JSON(field, p, raw)
	if err != nil || !ok {
		return nil, err
	}
	return v.Time(field, p, x, nsPerUnit), nil
}

// TimeOrderTolNs is the tolerance of NotAfter: 1 µs, the rounding of a
// time written in float milliseconds or seconds.
const TimeOrderTolNs = 1e3

// NotAfter checks that a request's time x (field, from its start) is not
// after its end (endField, from the same start), both in units of
// nsPerUnit nanoseconds, named unit in the check's detail ("ms"): a later x (by more than TimeOrderTolNs) is
// recorded under CheckTimeOrder and false is returned (the caller leaves
// x null and trusts the end). NaN on either side is not judged (true).
func (v *Values) NotAfter(field string, p Pos, x float64, endField string, end, nsPerUnit float64, unit string) bool {
	if !((x-end)*nsPerUnit > TimeOrderTolNs) {
		return true
	}
	v.Record(CheckTimeOrder, field, p, fmt.Sprintf("%s %s, after %s %s %s", FormatValue(x), unit, endField, FormatValue(end), unit))
	return false
}

// EventsPlaced checks a request's event offsets (from its start: an event
// before the start, or more than a day after it, cannot be right; server
// events, kind "server.*", are not the client's and are skipped). It
// reports whether every offset is in range; the first offending one is
// recorded under field and the caller drops the request's events and
// offsets, keeping its status and counts.
func (v *Values) EventsPlaced(field string, p Pos, events []formats.Event) bool {
	for i := range events {
		e := &events[i]
		if formats.IsServerKind(e.Kind) {
			continue
		}
		if c := Classify(float64(e.OffsetNs), MaxDurationNs); c != Valid {
			q := p
			q.At = strings.TrimPrefix(q.At+fmt.Sprintf(", event %d", i), ", ")
			v.Record(c.Code(), field, q, fmt.Sprintf("%d ns from the start", e.OffsetNs))
			return false
		}
	}
	return true
}

// Unplace clears what a request's times said once they are found wrong
// (EventsPlaced false, or a start that is no time): its start and every
// offset. Status, counts and errors stand.
func Unplace(r *formats.Request) {
	r.StartNs, r.ClockDomain = nil, ""
	r.FirstTokenOffsetNs, r.FirstContentOffsetNs, r.SecondTokenOffsetNs = nil, nil, nil
	r.LastTokenOffsetNs, r.StreamEndOffsetNs = nil, nil
}
