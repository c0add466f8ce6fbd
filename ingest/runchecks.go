package ingest

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// The checks across the requests of a run that every import gets
// (Input.ImportWith runs them on the rows an importer sends).
const (
	// CheckDuplicateRequest: two requests of a run with the same id.
	CheckDuplicateRequest = "duplicate_request"
	// CheckStartFar: a request's start far outside the run's span.
	CheckStartFar = "start_time_far"
	// CheckClockStep: the run's clock stepped (NTP): requests start before
	// the run began, or an idle span dwarfs every request.
	CheckClockStep = "clock_step"
)

// Clock-step thresholds (CheckClockStep).
const (
	// ClockStepMinNs is the least backward step judged: 1 s (and at
	// least twice the run's longest request, by which a file in
	// completion order puts a start before an earlier record's).
	ClockStepMinNs = 1e9
	// IdleSpanMinNs is the least idle span judged: 60 s (and at least
	// 100 times the longest request).
	IdleSpanMinNs = 60e9
)

// FarStartNs is how far from the run's reference start (the median of its
// first FarStartSample starts) a request's start may be: 30 days. No
// benchmark run lasts a month (the tools' runs last minutes to hours; a
// soak test days), while the starts this catches are clock or unit
// accidents: a 0 or a Unix-epoch start beside monotonic ones, a start 71
// years out that made a 10-request run last 2.24e9 s (4.46e-09 req/s)
// and its timeline plot 57 MB.
const FarStartNs = 30 * 24 * 3600 * 1e9

// FarStartSample is how many requests of a run are held (with their
// events, copied) to find its reference start before they go on: the
// median of up to 64 starts stands unless more than half of them are far.
// Fewer are held when their messages pass FarStartHeldEvents: the copies
// then stay within about 110 MB (112 bytes an event) however long the
// replies.
const FarStartSample = 64

// FarStartHeldEvents bounds the events held with the sample: 1M.
const FarStartHeldEvents = 1 << 20

// farStartHeldEvents is FarStartHeldEvents (tests lower it).
var farStartHeldEvents = FarStartHeldEvents

// RunTraps are the catalogue entries of the checks across a run's
// requests (analyze/TRAPS.md); ingest/registry lists them with
// ValueTraps.
var RunTraps = []convention.Trap{{
	Code:  CheckDuplicateRequest,
	Title: "two requests of a run have the same id",
	Tools: "every importer whose requests carry the client's request id (x_request_id): aiperf (a uuid4 per request); " +
		"the other tools' files carry no id that must be unique (a response id is the server's, and some servers repeat it; " +
		"AIPerf's conversation ids repeat when a dataset is reused)",
	Signature: "a request's x_request_id is that of an earlier request of the same run",
	Action:    convention.ActionFlag,
	Effect: "a record repeated identically (every imported field, its messages included; a file concatenated with itself, a writer that " +
		"flushed a record twice) is one request: it is counted once, the repetition dropped and counted (run.request_count " +
		"too); requests with the same id and different contents (a retry that reused the id, failed or not) are all kept and counted: " +
		"which one is right cannot be told",
	Metrics: []string{"ttft_ms", "e2e_ms", "request_throughput"},
	Source:  "tokentrace: a request id names one request (AIPerf's x_request_id is a uuid4 per request); a repeated record used to count twice (11 requests from 10)",
	Test:    "ingest/registry TestDuplicateRequest",
}, {
	Code:  CheckStartFar,
	Title: "a request starts far outside its run's span",
	Tools: "every importer with per-request start times (all but MLPerf)",
	Signature: fmt.Sprintf("a request's start is more than %d days from the median start of the run's first %d requests (same clock)",
		int(FarStartNs/(24*3600*1e9)), FarStartSample),
	Threshold: "|start − median start| > 30 days",
	Action:    convention.ActionNull,
	Effect: "the start is null (unknown): the request leaves the run's span, so its duration and the throughputs over it are the other " +
		"requests'; its latencies (offsets from its own start) and counts stay, and it is counted among the requests",
	Metrics: []string{"request_throughput", "output_throughput"},
	Source:  "tokentrace: no benchmark run lasts a month; one start 71 years out made a run of 10 requests last 2.24e9 s",
	Test:    "ingest/registry TestStartFar",
}, {
	Code:  CheckClockStep,
	Title: "the run's clock stepped: requests start before the run began, or an idle span dwarfs every request",
	Tools: "every importer with per-request start times on a wall clock or a monotonic one (aiperf, genai-perf, guidellm, vllm-bench, sglang-bench, inference-perf, server logs)",
	Signature: fmt.Sprintf("in the file's order, a request starts more than max(2 × the longest request, %d s) before every earlier request "+
		"(a wall clock stepped back: NTP; a file in completion order puts a start before an earlier one's by less than a request), or, in start order, "+
		"nothing is in flight for more than max(100 × the longest request, %d s) (a clock stepped forward, or a pause that is not the benchmark's)",
		int(ClockStepMinNs/1e9), int(IdleSpanMinNs/1e9)),
	Threshold: "backward: > max(2 × longest, 1 s); idle: > max(100 × longest, 60 s)",
	Action:    convention.ActionFlag,
	Effect: "flagged, with the step's size and the requests after it: the run's duration, and every throughput over it, includes the step " +
		"(a clock that stepped back one hour made a 2 s run last 3,600 s, its throughput 1,800× too low); latencies, offsets from each request's own start, are unaffected",
	Metrics: []string{"request_throughput", "output_throughput", "duration_s"},
	Source:  "tokentrace: time.time() and time.time_ns() (AIPerf, guidellm, GenAI-Perf) follow the system clock, which NTP may step (docs.python.org/3/library/time.html#time.time)",
	Test:    "ingest/registry TestClockStep",
}, {
	Code:      formats.CheckSeriesTimeUnit,
	Title:     "a server series on the Unix clock is stamped in seconds, ms or µs",
	Tools:     "every series a run carries (AIPerf GPU telemetry, Prometheus query results, server logs' load lines), and tables read back: formats.CheckSeries",
	Signature: "a series point on the Unix clock at a time below 1e17 (before 1973 as ns)",
	Threshold: "< 1e11: seconds; < 1e14: ms; < 1e17: µs",
	Action:    convention.ActionCorrect,
	Effect:    "the time is scaled to ns by its magnitude, as a request's start is read: the series lines up with the requests instead of 55 years before them",
	Metrics:   []string{"series"},
	Source:    "tokentrace: AIPerf writes timestamp_ns (time.time_ns()); a rewritten or hand-made export in seconds was attached 55 years off",
	Test:      "ingest/registry TestSeriesEntryCheck",
}, {
	Code:      formats.CheckSeriesPercentAsFraction,
	Title:     "a series defined as a 0–1 fraction holds percents",
	Tools:     "vLLM's vllm:gpu_cache_usage_perc and vllm:kv_cache_usage_perc, SGLang's sglang:token_usage (formats.FractionMetrics), from any source",
	Signature: "the series' (metric and labels) largest value is over 1 and at most 100",
	Threshold: "1 < max ≤ 100",
	Action:    convention.ActionCorrect,
	Effect:    "every value of the series is divided by 100, so the KV cache reads 85 %, not 8500 % (vLLM defines the gauge as a fraction: 1 means 100 percent)",
	Metrics:   []string{"series", "kv_cache_pct"},
	Source:    "vllm/v1/metrics/loggers.py (kv_cache_usage_perc: \"KV-cache usage. 1 means 100 percent usage.\"); a relabelling exporter or a rewritten file in percent",
	Test:      "ingest/registry TestSeriesEntryCheck",
}, {
	Code:      formats.CheckSeriesRange,
	Title:     "a series value no such series can hold",
	Tools:     "every series a run carries, and tables read back: formats.CheckSeries",
	Signature: "a negative power or energy (unit W, J, kJ, MJ, Wh, kWh, or a name with power or energy), or a value in % below 0 or over 100",
	Threshold: "power, energy < 0; % < 0 or > 100",
	Action:    convention.ActionNull,
	Effect:    "the point's value is NaN (unknown), never clamped, counted per metric",
	Metrics:   []string{"series"},
	Source:    "tokentrace: a GPU draws power, and DCGM's utilisations are percentages of 0–100",
	Test:      "ingest/registry TestSeriesEntryCheck",
}, {
	Code:      formats.CheckSeriesDuplicate,
	Title:     "two samples of one series at one time differ",
	Tools:     "every series a run carries (Prometheus query results refuse them at import), and tables read back: formats.CheckSeries",
	Signature: "two points with the same metric, labels, clock and time and different values",
	Action:    convention.ActionFlag,
	Effect:    "both are kept and counted: which one is right cannot be told (two exporters scraping one GPU, a file appended to twice)",
	Metrics:   []string{"series"},
	Source:    "tokentrace: one gauge has one value at one time",
	Test:      "ingest/registry TestSeriesEntryCheck",
}, {
	Code:  formats.CheckCountBelowMessages,
	Title: "a request's output token count is far below the messages that carried its tokens",
	Tools: "every importer whose requests have both an output count and token messages (the entry check, formats.EntryCheck: " +
		"genai-perf, aiperf, vllm-bench, sglang-bench, guidellm, inference-perf, server logs; tables read back too)",
	Signature: "output_tokens 0 beside one or more token messages, or fewer than half of 4 or more token messages " +
		"(each content, reasoning or tool-call message carries at least one token), in a request no tool's trap corrected " +
		"(inference-perf's line times are lines, not tokens: inference_perf_line_times judges them)",
	Threshold: "n = 0 < messages, or messages ≥ 4 and 2·n < messages (a retokenized count, vLLM's output_lens, may fall a few tokens short of the chunks)",
	Action:    convention.ActionCorrect,
	Effect: "N is the token messages (their tokens where every message says), source chunk_count; the file's count is kept in " +
		"reported_output_tokens (when unset) and restored by --no-corrections and the tools' own conventions: TPOT, NTPOT, OSL and output " +
		"throughput count the tokens the stream delivered (99 gaps for 10 tokens gave TPOT 11 ms against ITL 1 ms, explained as no error)",
	Fix:     convention.FixCountFromImport,
	Metrics: []string{"tpot_ms", "ntpot_ms", "osl_tokens", "output_throughput"},
	Source:  "tokentrace: a streamed message with generated text carries at least one token, so a run's count cannot be below its messages",
	Test:    "ingest/registry TestCountBelowMessages",
}}

// runChecks holds one run's state for the checks across its requests.
type runChecks struct {
	ids                  map[uint64]uint64 // hash of the id → fingerprint of the first request
	identical, differing int64
	firstDup, dupField   string
	// held are the run's first requests, copied, until the reference
	// start is known (fewer than FarStartSample arrived, their messages
	// under farStartHeldEvents); heldEvents counts their messages
	held       *formats.Batch
	heldEvents int
	refSet     bool
	ref        int64
	domain     string
	far        int64
	firstFar   string
	refFrom    int
	keep       []bool
	// spans are the run's requests' (start, end) on the run's clock, in
	// file order, for the clock-step check
	spans [][2]int64
}

var seed = maphash.MakeSeed()

// checkDuplicates drops the identical repetitions among b's requests
// (counted) and counts the requests that share an id with an earlier one
// but differ.
func (rc *runChecks) checkDuplicates(b *formats.Batch) {
	ids := &b.Req.XRequestID
	if !ids.Any() {
		return
	}
	rc.keep = rc.keep[:0]
	dropped := false
	for i := range b.Len() {
		id := ids.Get(i)
		keep := true
		if id != "" {
			h := maphash.String(seed, id)
			fp := b.Fingerprint(i)
			if prev, seen := rc.ids[h]; seen {
				if rc.firstDup == "" {
					rc.firstDup, rc.dupField = fmt.Sprintf("request %d: %s %s", b.Req.Key[i], "x_request_id", safeID(id)), "x_request_id"
				}
				if prev == fp {
					rc.identical++
					keep, dropped = false, true
				} else {
					rc.differing++
				}
			} else {
				rc.ids[h] = fp
			}
		}
		rc.keep = append(rc.keep, keep)
	}
	if dropped {
		b.Compact(func(i int) bool { return rc.keep[i] })
	}
}

// batch runs the checks on one batch of the run and sends it on (or
// holds its requests until the run's reference start is known).
func (s *importSink) batch(rc *runChecks, b *formats.Batch) error {
	rc.checkDuplicates(b)
	if b.Len() == 0 {
		return nil
	}
	if rc.refSet {
		return s.forward(rc, b)
	}
	// The sample: the held requests, then b's until FarStartSample of
	// them, or until their messages pass farStartHeldEvents (the request
	// that passes it is the sample's last).
	held := 0
	if rc.held != nil {
		held = rc.held.Len()
	}
	t, complete := 0, false
	for t < b.Len() {
		lo, hi := b.Messages(t)
		n := hi - lo
		if rc.heldEvents+n > farStartHeldEvents {
			t++
			complete = true
			break
		}
		rc.heldEvents += n
		t++
		if held+t >= FarStartSample || rc.heldEvents >= farStartHeldEvents {
			complete = true
			break
		}
	}
	if !complete {
		// all of b joins the sample, held until the run ends or more
		// requests come
		if rc.held == nil {
			rc.held = formats.NewBatch(b.RunID)
		}
		for i := range b.Len() {
			rc.held.AppendFrom(b, i)
		}
		return nil
	}
	rc.setRef(rc.held, b, t)
	if err := s.flushHeld(rc); err != nil {
		return err
	}
	return s.forward(rc, b)
}

// setRef sets the run's reference start from the sample: the held
// requests and b's first t.
func (rc *runChecks) setRef(held, b *formats.Batch, t int) {
	rc.refSet = true
	type part struct {
		b *formats.Batch
		n int
	}
	var parts []part
	if held != nil {
		parts = append(parts, part{held, held.Len()})
	}
	if b != nil {
		parts = append(parts, part{b, t})
	}
	domains := map[string]int{}
	for _, p := range parts {
		for i := range p.n {
			if p.b.Req.StartNs.Has(i) && !p.b.IsServerRow(i) {
				domains[p.b.Req.ClockDomain.Get(i)]++
			}
		}
	}
	for d, n := range domains {
		if n > domains[rc.domain] || n == domains[rc.domain] && d < rc.domain {
			rc.domain = d
		}
	}
	var starts []int64
	for _, p := range parts {
		for i := range p.n {
			if v, ok := p.b.Req.StartNs.Get(i); ok && !p.b.IsServerRow(i) && p.b.Req.ClockDomain.Get(i) == rc.domain {
				starts = append(starts, v)
			}
		}
	}
	if len(starts) > 0 {
		slices.Sort(starts)
		rc.ref, rc.refFrom = starts[(len(starts)-1)/2], len(starts)
	}
}

// flushHeld sends the held requests on (the reference being set).
func (s *importSink) flushHeld(rc *runChecks) error {
	held := rc.held
	rc.held = nil
	if held == nil || held.Len() == 0 {
		return nil
	}
	return s.forward(rc, held)
}

// flush sets the run's reference start from the held requests alone and
// sends them on: the run ended, or another run's rows came.
func (s *importSink) flush(rc *runChecks) error {
	rc.setRef(rc.held, nil, 0)
	return s.flushHeld(rc)
}

// forward sends b on, the starts far from the reference nulled.
func (s *importSink) forward(rc *runChecks, b *formats.Batch) error {
	if rc.refFrom > 0 {
		q := &b.Req
		for i := range b.Len() {
			start, ok := q.StartNs.Get(i)
			if !ok || q.ClockDomain.Get(i) != rc.domain || b.IsServerRow(i) {
				continue
			}
			if d := float64(start) - float64(rc.ref); math.Abs(d) > FarStartNs {
				rc.far++
				if rc.firstFar == "" {
					rc.firstFar = fmt.Sprintf("request %d: start %d ns, %s the median start %d ns of %d requests",
						q.Key[i], start, farSpan(d), rc.ref, rc.refFrom)
				}
				q.StartNs.Null(i)
			}
		}
	}
	for i := range b.Len() {
		start, ok := b.Req.StartNs.Get(i)
		if !ok || b.IsServerRow(i) || b.Req.ClockDomain.Get(i) != rc.domain {
			continue
		}
		end, ok := b.RequestEnd(i)
		if !ok || end < start {
			end = start
		}
		rc.spans = append(rc.spans, [2]int64{start, end})
	}
	return s.Sink.Batch(b)
}

// clockStep judges the run's spans (CheckClockStep); ok is false when its
// clock shows no step.
func (rc *runChecks) clockStep() (formats.DataCheck, bool) {
	sp := rc.spans
	if len(sp) < 2 {
		return formats.DataCheck{}, false
	}
	var longest int64
	for _, s := range sp {
		longest = max(longest, s[1]-s[0])
	}
	// A file in completion order puts a start before an earlier record's
	// by less than a request's duration; one before every earlier
	// record's by more is a clock that stepped back. ref is the earliest
	// start before the step.
	back := max(2*float64(longest), ClockStepMinNs)
	var n int64
	first, deepest := -1, int64(0)
	ref := sp[0][0]
	for i, s := range sp {
		if first < 0 && float64(ref-s[0]) > back {
			first = i
		}
		if first >= 0 && float64(ref-s[0]) > back {
			n++
			deepest = max(deepest, ref-s[0])
		}
		if first < 0 {
			ref = min(ref, s[0])
		}
	}
	if n > 0 {
		return formats.DataCheck{Code: CheckClockStep, Field: "start", Requests: n, Detail: fmt.Sprintf(
			"request %d of the file's order starts %s before every earlier request (the clock stepped back; %d request(s) start so early, "+
				"the earliest %s before); the run's duration includes the step", first, seconds(ref-sp[first][0]), n, seconds(deepest))}, true
	}
	sorted := slices.Clone(sp)
	slices.SortFunc(sorted, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	idle := max(100*float64(longest), IdleSpanMinNs)
	maxEnd := sorted[0][1]
	for i := 1; i < len(sorted); i++ {
		if gap := sorted[i][0] - maxEnd; float64(gap) > idle {
			return formats.DataCheck{Code: CheckClockStep, Field: "start", Requests: int64(len(sorted) - i), Detail: fmt.Sprintf(
				"nothing in flight for %s before the %d request(s) that start last (the longest request takes %s): the clock stepped forward, "+
					"or the run paused; the run's duration includes the span", seconds(gap), len(sorted)-i, seconds(longest))}, true
		}
		maxEnd = max(maxEnd, sorted[i][1])
	}
	return formats.DataCheck{}, false
}

// seconds renders ns as seconds, 3 significant digits ("3.60e+03 s" as
// "3600 s").
func seconds(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64) + " s"
}

// farSpan renders a distance in ns in days or years.
func farSpan(d float64) string {
	days := math.Abs(d) / (24 * 3600 * 1e9)
	sign := "after"
	if d < 0 {
		sign = "before"
	}
	if days >= 365.25 {
		return fmt.Sprintf("%.1f years %s", days/365.25, sign)
	}
	return fmt.Sprintf("%.1f days %s", days, sign)
}

// runDone flushes the run's held requests and adds its checks to the Run
// row (a copy of r); nil when no check fired.
func (s *importSink) runDone(rc *runChecks, r *formats.Run) ([]formats.DataCheck, error) {
	if !rc.refSet {
		if err := s.flush(rc); err != nil {
			return nil, err
		}
	}
	var checks []formats.DataCheck
	if n := rc.identical + rc.differing; n > 0 {
		d := "first " + rc.firstDup
		if rc.identical > 0 {
			d += fmt.Sprintf("; identical repetitions counted once (dropped): %d", rc.identical)
		}
		if rc.differing > 0 {
			d += fmt.Sprintf("; same id, different contents, all kept: %d", rc.differing)
		}
		checks = append(checks, formats.DataCheck{Code: CheckDuplicateRequest, Field: rc.dupField, Requests: n, Detail: d})
	}
	if rc.far > 0 {
		checks = append(checks, formats.DataCheck{Code: CheckStartFar, Field: "start", Requests: rc.far,
			Detail: "first " + rc.firstFar + "; start left null"})
	}
	if c, ok := rc.clockStep(); ok {
		checks = append(checks, c)
	}
	rc.spans = nil
	return checks, nil
}

// safeID quotes and shortens an id for a check's detail.
func safeID(id string) string {
	return fmt.Sprintf("%q", formats.CutRunes(id, 64))
}
