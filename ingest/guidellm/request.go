package guidellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// knownV3 are the keys of v0.3's GenerativeTextResponseStats and
// GenerativeTextErrorStats (stored and computed fields).
var knownV3 = keySet("type_", "error", "request_id", "request_type", "scheduler_info", "prompt", "output",
	"prompt_tokens", "output_tokens", "start_time", "end_time", "first_token_time", "last_token_time",
	"request_latency", "time_to_first_token_ms", "time_per_output_token_ms", "inter_token_latency_ms",
	"tokens_per_second", "output_tokens_per_second")

// knownV4 are the keys of GenerativeRequestStats from v0.4 to v0.7.
var knownV4 = keySet("type_", "request_id", "response_id", "request_type", "request_args", "output",
	"reasoning_output", "tool_calls", "info", "input_metrics", "output_metrics", "request_start_time",
	"request_end_time", "request_latency", "prompt_tokens", "input_tokens", "output_tokens", "total_tokens",
	"time_to_first_token_ms", "time_to_first_output_token_ms", "time_per_output_token_ms",
	"inter_token_latency_ms", "tokens_per_second", "output_tokens_per_second", "iter_tokens_per_iteration",
	"output_tokens_per_iteration")

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// requestStats counts what the notes of a run report about its records.
type requestStats struct {
	byStatus     map[string]int // formats status → rows
	empty        int            // successful records without a token
	placeholder  int            // v0.3 first/last_token_time −1.0 read as missing
	noStart      int            // records without a start time
	startResolve int            // v0.4+ records started at resolve_start
	endResolve   int            // v0.4+ records ended at resolve_end
	chunkCount   int            // v0.6+ output_tokens = token_iterations fallback
	failedCounts int            // v0.3 failed records whose output_tokens were kept aside
	unknown      map[string]int // unknown record keys
	unknownLists []string       // unknown request-list keys
	ttfo         int            // records whose first content time came from time_to_first_output_token_ms
	multiIter    int            // v0.4+ records with more than one token iteration
	spans        []span         // v0.4+ (start, end) of each record, for the window check
	hidden       int            // records counting tokens their output cannot hold (traps.go)
	hiddenFirst  string
	streamErr    int // successful records that were a stream's error event (traps.go)
	streamFirst  string
	scheduled    int // records given an intended start (targeted_start)
	notSchedule  int // records whose targeted_start is no schedule (the strategy has none)
}

// SourceTargetedStart is Request.ScheduledStartSource of guidellm's
// intended starts: info.timings.targeted_start (v0.4+), or
// scheduler_info.targeted_start_time (v0.2–v0.3).
const SourceTargetedStart = "guidellm:targeted_start"

// scheduleStrategies are the guidellm strategies whose targeted_start is
// a schedule: the rate's arrival times (constant: evenly spaced; poisson:
// exponential gaps). The others target no time of their own —
// synchronous and concurrent start when a request (or a stream's last
// one) ends, throughput sends everything at its start — so their
// targeted_start measures the wait for the previous request, not lateness
// against a schedule: guidellm's request_dispatch_delay and
// request_scheduled_latency are null for them (vllm-project/guidellm PR
// #1053, issue #1048: a synchronous run's "delay" grew to minutes).
var scheduleStrategies = map[string]bool{"constant": true, "poisson": true}

// strategy is the benchmark's strategy type_ as far as the entries read
// before its requests say ("" when they do not: guidellm writes config
// and args before requests).
func (b *benchmark) strategy() string {
	if b.strategyRead {
		return b.strategyType
	}
	b.strategyRead = true
	for _, e := range b.entries {
		switch e.Key {
		case "config", "args":
			if t := objOf(objOf(e.Value)["strategy"]).str("type_"); t != "" {
				b.strategyType = t
			}
		}
	}
	return b.strategyType
}

// schedule sets req's intended start from a targeted_start of t seconds
// (nil: absent) when the benchmark's strategy has a schedule.
func (b *benchmark) schedule(req *formats.Request, t *float64) {
	if t == nil || req.StartNs == nil {
		return
	}
	if !scheduleStrategies[b.strategy()] {
		b.rs.notSchedule++
		return
	}
	ns, err := unixNs("targeted_start", t)
	if err != nil || ns == nil {
		return
	}
	req.ScheduledStartNs, req.ScheduledStartSource = ns, SourceTargetedStart
	b.rs.scheduled++
}

type span struct{ start, end *float64 }

// obj is one JSON object's members.
type obj map[string]json.RawMessage

func (o obj) has(key string) bool {
	v, ok := o[key]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// num reads o[key] as a number: nil when absent or null; an error naming
// the key when it is anything but a finite number. For the run's
// configuration (rates, concurrency); a record's numbers go through
// reading.num.
func (o obj) num(key string) (*float64, error) {
	v, ok := o[key]
	if !ok {
		return nil, nil
	}
	return number(key, v)
}

func number(key string, v json.RawMessage) (*float64, error) {
	s := strings.TrimSpace(string(v))
	if s == "null" || s == "" {
		return nil, nil
	}
	if s[0] == '"' {
		var str string
		if json.Unmarshal(v, &str) == nil {
			switch str {
			case "NaN", "Infinity", "-Infinity":
				return nil, fmt.Errorf("%s: %s is not a finite number", key, str)
			}
		}
		return nil, fmt.Errorf("%s: not a number", key)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && errors.Is(ne.Err, strconv.ErrRange) {
			return nil, fmt.Errorf("%s: %s is out of range", key, s)
		}
		return nil, fmt.Errorf("%s: not a number", key)
	}
	return &f, nil
}

// reading is the record being read, for the shared value checks: its
// run's Values and its position.
type reading struct {
	vals *ingest.Values
	pos  ingest.Pos
}

// Ranges of the value checks: absolute times in Unix seconds, durations
// in seconds and milliseconds up to a day, rates.
var (
	maxTimeS  = float64(ingest.MaxTimeNs) / ingest.Seconds
	maxDurS   = ingest.MaxIn(ingest.Seconds)
	maxDurMs  = ingest.MaxIn(ingest.Milliseconds)
	maxAnyNum = math.MaxFloat64
)

// num reads o[key] (named name: "info.timings.request_start") as a number
// in [0, maxV] through the value checks: nil when absent or null, and for
// an offending value — NaN, ±Infinity (Python's bare tokens, quoted by
// nonFiniteReader), negative, above maxV — which is counted; a number
// written as a string is read and counted; any other value is an error
// naming the key.
func (r reading) num(o obj, name, key string, maxV float64) (*float64, error) {
	v, ok := o[key]
	if !ok {
		return nil, nil
	}
	x, present, err := r.vals.JSON(name, r.pos, v)
	if err != nil {
		return nil, fmt.Errorf("%s: not a number", name)
	}
	if !present || !r.vals.Check(name, r.pos, x, maxV) {
		return nil, nil
	}
	return &x, nil
}

// count reads o[key] as a token count: a whole number in [0, 10^9] (else
// counted, value_not_integer or out of range, and nil).
func (r reading) count(o obj, name, key string) (*int64, error) {
	f, err := r.num(o, name, key, ingest.MaxTokens)
	if err != nil || f == nil {
		return nil, err
	}
	n := int64(*f)
	return &n, nil
}

// start reads a record's start time (Unix seconds, time.time()): a
// magnitude of another unit is an error (CheckTimeUnit), else as num.
func (r reading) start(o obj, name, key string) (*float64, error) {
	if x, st := ingest.ReadJSONNumber(o[key]); st == ingest.JSONNumber || st == ingest.JSONQuoted {
		if why := ingest.EpochMismatch(x, "s", ingest.Seconds); why != "" {
			return nil, fmt.Errorf("%s: %s (guidellm writes time.time() seconds; %s)", name, why, ingest.CheckTimeUnit)
		}
	}
	return r.num(o, name, key, maxTimeS)
}

// offset is t − start in whole ns (nil when either is missing): a time
// before the start, or more than a day after it, is counted under name
// and nil.
func (r reading) offset(name string, start, t *float64) *int64 {
	if start == nil || t == nil {
		return nil
	}
	d := *t - *start
	if ingest.Classify(d, maxDurS) != ingest.Valid {
		r.vals.Record(ingest.Classify(d, maxDurS).Code(), name, r.pos, fmt.Sprintf("%s (%s s from the request's start)", ingest.FormatValue(*t), ingest.FormatValue(d)))
		return nil
	}
	return ingest.Ptr(int64(math.Round(d * 1e9)))
}

func (o obj) str(key string) string {
	return stringOf(o[key])
}

// strLen is len(o.str(key)), without the copy for a string literal
// without escapes in valid UTF-8 (it decodes to itself).
func (o obj) strLen(key string) int {
	raw := o[key]
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return len(raw) - 2
	}
	return len(stringOf(raw))
}

// sub is o.sub(key), taken from the objects the fast path split while
// reading the record (d.subs) when it holds this one: the same bytes,
// split the same way.
func (d *decoder) sub(o obj, key string) (obj, error) {
	if raw := o[key]; len(raw) > 0 && d.subs != nil {
		if s, ok := d.subs[&raw[0]]; ok {
			return s, nil
		}
	}
	return o.sub(key)
}

func (o obj) sub(key string) (obj, error) {
	if !o.has(key) {
		return obj{}, nil
	}
	m, err := unmarshalObject(o[key])
	if err != nil {
		return nil, fmt.Errorf("%s: not an object", key)
	}
	return m, nil
}

// maxEpochS bounds epoch seconds so that nanoseconds fit an int64.
const maxEpochS = 9.2e9

// unixNs converts epoch seconds to unix nanoseconds.
func unixNs(key string, s *float64) (*int64, error) {
	if s == nil {
		return nil, nil
	}
	if math.Abs(*s) >= maxEpochS {
		return nil, fmt.Errorf("%s: %v s is out of range", key, *s)
	}
	return ingest.Ptr(int64(math.Round(*s * 1e9))), nil
}

func msToNs(ms *float64) *int64 {
	if ms == nil || math.Abs(*ms) >= maxEpochS*1e3 {
		return nil
	}
	return ingest.Ptr(int64(math.Round(*ms * 1e6)))
}

func mul(p *float64, k float64) *float64 {
	if p == nil {
		return nil
	}
	return ingest.Ptr(*p * k)
}

func toF(p *int64) *float64 {
	if p == nil {
		return nil
	}
	return ingest.Ptr(float64(*p))
}

// request converts one record, at p; shape is 3 or 4. Its numbers go
// through the shared value checks of b's run.
func (d *decoder) request(b *benchmark, raw json.RawMessage, status string, p ingest.Pos) (formats.Request, int, error) {
	o, err := unmarshalObject(raw)
	if err != nil || o == nil {
		return formats.Request{}, 0, errors.New("not an object")
	}
	return d.requestObj(b, o, status, p)
}

// requestObj is request for the record's members.
func (d *decoder) requestObj(b *benchmark, o obj, status string, p ingest.Pos) (formats.Request, int, error) {
	var err error
	if b.rs.byStatus == nil {
		b.rs.byStatus = map[string]int{}
		b.rs.unknown = map[string]int{}
	}
	var (
		req   formats.Request
		shape int
	)
	switch typ := o.str("type_"); {
	case o.has("info") || typ == "generative_request_stats":
		shape = 4
		req, err = d.requestV4(b, o, status, reading{&b.vals, p})
	case typ == "generative_text_response" || typ == "generative_text_error" || o.has("start_time") || o.has("first_token_time"):
		shape = 3
		req, err = requestV3(b, o, status, reading{&b.vals, p})
	default:
		return req, 0, errors.New("neither a v0.3 response record (start_time, first_token_time) nor a v0.4+ request record (info.timings)")
	}
	if err != nil {
		return req, shape, err
	}
	known := knownV3
	if shape == 4 {
		known = knownV4
	}
	for k := range o {
		if !known[k] {
			b.rs.unknown[k]++
		}
	}
	b.rs.byStatus[req.Status]++
	b.rs.hiddenTokens(d.version, &req, o.strLen("output"))
	return req, shape, nil
}

// requestV3 reads a v0.2–v0.3 record.
func requestV3(b *benchmark, o obj, status string, r reading) (formats.Request, error) {
	req := formats.Request{SourceID: o.str("request_id"), Status: status}
	f := map[string]*float64{}
	// A successful record without a streamed token has first/last_token_time
	// −1.0 (v0.3.0 aggregator.py: first_iter_time or −1.0): no value.
	for _, k := range []string{"first_token_time", "last_token_time"} {
		if x, st := ingest.ReadJSONNumber(o[k]); st == ingest.JSONNumber && x == -1 {
			o[k] = json.RawMessage("null")
			b.rs.placeholder++
		}
	}
	var err error
	if f["start_time"], err = r.start(o, "start_time", "start_time"); err != nil {
		return req, err
	}
	for _, k := range []struct {
		key  string
		maxV float64
	}{{"end_time", maxTimeS}, {"first_token_time", maxTimeS}, {"last_token_time", maxTimeS}, {"request_latency", maxDurS},
		{"time_to_first_token_ms", maxDurMs}, {"inter_token_latency_ms", maxDurMs}, {"output_tokens_per_second", maxAnyNum}} {
		if f[k.key], err = r.num(o, k.key, k.key, k.maxV); err != nil {
			return req, err
		}
	}
	nOut, err := r.count(o, "output_tokens", "output_tokens")
	if err != nil {
		return req, err
	}
	nIn, err := r.count(o, "prompt_tokens", "prompt_tokens")
	if err != nil {
		return req, err
	}
	start := f["start_time"]
	if req.StartNs, err = unixNs("start_time", start); err != nil {
		return req, err
	}
	if start != nil {
		req.ClockDomain = formats.ClockUnix
	} else {
		b.rs.noStart++
	}
	if si := objOf(o["scheduler_info"]); si.has("targeted_start_time") {
		ts, err := r.num(si, "scheduler_info.targeted_start_time", "targeted_start_time", maxTimeS)
		if err != nil {
			return req, err
		}
		b.schedule(&req, ts)
	}
	req.FirstTokenOffsetNs = r.offset("first_token_time", start, f["first_token_time"])
	// v0.3 timed the first streamed text delta: the first token is content.
	req.FirstContentOffsetNs = req.FirstTokenOffsetNs
	req.LastTokenOffsetNs = r.offset("last_token_time", start, f["last_token_time"])
	req.StreamEndOffsetNs = r.offset("end_time", start, f["end_time"])
	req.InputTokens, req.ReportedInputTokens = nIn, toF(nIn)
	if nIn != nil {
		req.InputTokensSource = formats.SourceToolReported
	}
	req.ReportedOutputTokens = toF(nOut)
	if status == formats.StatusOK {
		req.OutputTokens = nOut
		if nOut != nil {
			req.OutputTokensSource = formats.SourceToolReported
		}
	} else if nOut != nil {
		b.rs.failedCounts++
	}
	req.ReportedTTFTMs = f["time_to_first_token_ms"]
	req.ReportedE2EMs = mul(f["request_latency"], 1e3)
	req.ReportedITLMs = f["inter_token_latency_ms"]
	req.ReportedOutputTokensPS = f["output_tokens_per_second"]
	if status != formats.StatusOK {
		req.ErrorText = o.str("error")
	}
	b.rs.streamError("0.3", &req, o.strLen("output")) // v0.2–v0.3: before v0.7
	if req.Status == formats.StatusOK && (req.FirstTokenOffsetNs == nil || nOut != nil && *nOut == 0) {
		req.Status = formats.StatusEmpty
		b.rs.empty++
	}
	return req, nil
}

// requestV4 reads a v0.4+ record.
func (d *decoder) requestV4(b *benchmark, o obj, status string, r reading) (formats.Request, error) {
	req := formats.Request{SourceID: o.str("request_id"), ResponseID: o.str("response_id"), Status: status}
	info, err := d.sub(o, "info")
	if err != nil {
		return req, err
	}
	tm, err := d.sub(info, "timings")
	if err != nil {
		return req, fmt.Errorf("info.%w", err)
	}
	t := map[string]*float64{}
	for _, k := range []string{"request_start", "resolve_start"} {
		if t[k], err = r.start(tm, "info.timings."+k, k); err != nil {
			return req, err
		}
	}
	for _, k := range []string{"first_token_iteration", "last_token_iteration", "request_end", "resolve_end", "targeted_start"} {
		if t[k], err = r.num(tm, "info.timings."+k, k, maxTimeS); err != nil {
			return req, err
		}
	}
	iters, err := r.count(tm, "info.timings.token_iterations", "token_iterations")
	if err != nil {
		return req, err
	}
	f := map[string]*float64{}
	for _, k := range []struct {
		key  string
		maxV float64
	}{{"request_latency", maxDurS}, {"time_to_first_token_ms", maxDurMs}, {"time_to_first_output_token_ms", maxDurMs},
		{"inter_token_latency_ms", maxDurMs}, {"output_tokens_per_second", maxAnyNum}} {
		if f[k.key], err = r.num(o, k.key, k.key, k.maxV); err != nil {
			return req, err
		}
	}
	nOut, err := r.count(o, "output_tokens", "output_tokens")
	if err != nil {
		return req, err
	}
	outMetrics, err := d.sub(o, "output_metrics")
	if err != nil {
		return req, err
	}
	usageOut, err := r.count(outMetrics, "output_metrics.total_tokens", "total_tokens")
	if err != nil {
		return req, err
	}
	if !o.has("output_tokens") {
		nOut = usageOut // a record without computed fields
	}
	nIn, err := r.count(o, "prompt_tokens", "prompt_tokens")
	if err != nil {
		return req, err
	}
	if !o.has("prompt_tokens") {
		inMetrics, err := d.sub(o, "input_metrics")
		if err != nil {
			return req, err
		}
		if nIn, err = r.count(inMetrics, "input_metrics.text_tokens", "text_tokens"); err != nil {
			return req, err
		}
	}

	start := t["request_start"]
	if start == nil && t["resolve_start"] != nil {
		start = t["resolve_start"]
		b.rs.startResolve++
	}
	end := t["request_end"]
	if end == nil && t["resolve_end"] != nil {
		end = t["resolve_end"]
		b.rs.endResolve++
	}
	b.rs.spans = append(b.rs.spans, span{start, end})
	if req.StartNs, err = unixNs("info.timings.request_start", start); err != nil {
		return req, err
	}
	if start != nil {
		req.ClockDomain = formats.ClockUnix
	} else {
		b.rs.noStart++
	}
	b.schedule(&req, t["targeted_start"])
	req.FirstTokenOffsetNs = r.offset("info.timings.first_token_iteration", start, t["first_token_iteration"])
	req.LastTokenOffsetNs = r.offset("info.timings.last_token_iteration", start, t["last_token_iteration"])
	req.StreamEndOffsetNs = r.offset("info.timings.request_end", start, end)
	// The first token is content text up to v0.6; v0.7 also times reasoning
	// and gives the first content time as time_to_first_output_token_ms.
	switch {
	case f["time_to_first_output_token_ms"] != nil && start != nil:
		req.FirstContentOffsetNs = msToNs(f["time_to_first_output_token_ms"])
		b.rs.ttfo++
	case !versionAtLeast(d.version, 0, 7):
		req.FirstContentOffsetNs = req.FirstTokenOffsetNs
	}
	if iters != nil {
		req.TokenMessageCount = *iters
		if *iters > 1 {
			b.rs.multiIter++
		}
	}
	req.InputTokens, req.ReportedInputTokens = nIn, toF(nIn)
	if nIn != nil {
		req.InputTokensSource = formats.SourceToolReported
	}
	req.OutputTokens, req.ReportedOutputTokens = nOut, toF(nOut)
	if nOut != nil {
		req.OutputTokensSource = formats.SourceToolReported
		// v0.6+: no usage → output_tokens = token_iterations
		if usageOut == nil && iters != nil && *iters == *nOut {
			req.OutputTokensSource = formats.SourceChunkCount
			b.rs.chunkCount++
		}
	}
	req.ReportedTTFTMs = f["time_to_first_token_ms"]
	req.ReportedE2EMs = mul(f["request_latency"], 1e3)
	req.ReportedITLMs = f["inter_token_latency_ms"]
	req.ReportedOutputTokensPS = f["output_tokens_per_second"]
	if status != formats.StatusOK {
		req.ErrorText = info.str("error")
	}
	b.rs.streamError(d.version, &req, o.strLen("output"))
	if req.Status == formats.StatusOK && (req.FirstTokenOffsetNs == nil || nOut != nil && *nOut == 0) {
		req.Status = formats.StatusEmpty
		b.rs.empty++
	}
	return req, nil
}

// versionAtLeast reports whether a version string "0.7.1" is at least
// major.minor; false when it cannot be read.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || a == major && b >= minor
}
