package ingest

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sync"

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
}}

// runChecks holds one run's state for the checks across its requests.
type runChecks struct {
	ids                  map[uint64]uint64 // hash of the id → fingerprint of the first request
	identical, differing int64
	firstDup, dupField   string
	held                 []heldRow
	heldEvents           int
	arena                *[]formats.Event // the held requests' events (heldArenas)
	refSet               bool
	ref                  int64
	domain               string
	far                  int64
	firstFar             string
	refFrom              int
}

type heldRow struct {
	req      formats.Request
	from, to int // its events in the run's arena
}

// heldArenas are the arrays held events are copied into, reused from run
// to run: a folder of a thousand 20-request runs holds every request of
// each (fewer than FarStartSample), and a fresh copy per request was 0.9
// GB allocated for 100 MB of input.
var heldArenas = sync.Pool{New: func() any { return new([]formats.Event) }}

var seed = maphash.MakeSeed()

// idHash is the hash of the request's id, false when it has none.
func idHash(r *formats.Request) (h uint64, field, id string, ok bool) {
	if r.XRequestID == "" {
		return 0, "", "", false
	}
	return maphash.String(seed, r.XRequestID), "x_request_id", r.XRequestID, true
}

// fingerprint hashes every imported field of r and its events but the
// request key (and the events' run and key). Each field goes in as one
// 64-bit word (a string as its seeded maphash, an optional value as a
// presence word and its value) through a SplitMix64 mixing step:
// a repetition is told from a retry by equal fingerprints, so the hash
// must tell any change apart, and it runs on every message of a run
// with request ids (41M on AIPerf's 100k-request bench file), which
// maphash.Hash's byte writes made a quarter of the import's CPU.
func fingerprint(r *formats.Request, events []formats.Event) uint64 {
	f := fpHash{h: seedWord}
	for _, s := range []string{r.SourceID, r.XRequestID, r.ResponseID, r.TraceID, r.Status, r.ErrorType, r.ErrorText,
		r.ClockDomain, r.InputTokensSource, r.OutputTokensSource, r.ServerKind, r.ServerSource, r.ServerRequestID,
		r.ServerClockDomain, r.MatchQuality, r.ServerFinishReason, r.Corrections, r.EndBoundRule} {
		f.str(s)
	}
	for _, p := range []*int64{r.ErrorCode, r.StartNs, r.FirstTokenOffsetNs, r.FirstContentOffsetNs, r.SecondTokenOffsetNs,
		r.LastTokenOffsetNs, r.StreamEndOffsetNs, r.InputTokens, r.OutputTokens, r.ReasoningTokens, r.MaxTokens,
		r.ServerArrivalNs, r.ServerQueueNs, r.ServerPrefillNs, r.ServerDecodeNs, r.ServerInferenceNs, r.ServerTTFTNs,
		r.ServerE2ENs, r.ServerTimePerTokenNs, r.InFlightAtStart, r.EndBoundOffsetNs, &r.MessageCount, &r.TokenMessageCount} {
		f.opt(p != nil, func() uint64 { return uint64(*p) })
	}
	for _, p := range []*float64{r.ReportedTTFTMs, r.ReportedTTFOMs, r.ReportedTTSTMs, r.ReportedE2EMs, r.ReportedITLMs,
		r.ReportedOutputTokens, r.ReportedInputTokens, r.ReportedOutputTokensPS} {
		f.opt(p != nil, func() uint64 { return math.Float64bits(*p) })
	}
	f.word(uint64(len(events)))
	// the messages' words go through four lanes, each its own chain of
	// mixing steps, so the processor runs them side by side (a chain of
	// seven steps per message was 1 s of 41M messages), and the lanes
	// are mixed in at the end
	lanes := [4]fpHash{{seedWord ^ 1}, {seedWord ^ 2}, {seedWord ^ 3}, {seedWord ^ 4}}
	var kind, finish string
	var kindH, finishH uint64 = strWord(""), strWord("")
	for i := range events {
		e := &events[i]
		var tokens, flags uint64
		if e.Tokens != nil {
			tokens, flags = uint64(uint32(*e.Tokens)), 1
		}
		if e.HasChoices {
			flags |= 2
		}
		// a message's kind and finish reason repeat from message to
		// message: their hashes are kept
		if e.Kind != kind {
			kind, kindH = e.Kind, strWord(e.Kind)
		}
		if e.FinishReason != finish {
			finish, finishH = e.FinishReason, strWord(e.FinishReason)
		}
		lanes[0].word(uint64(uint32(e.Index)) | uint64(uint32(e.ReadIndex))<<32)
		lanes[1].word(uint64(e.OffsetNs))
		lanes[2].word(uint64(uint32(e.Bytes)) | tokens<<32)
		lanes[3].word(kindH)
		lanes[0].word(finishH)
		lanes[1].word(flags)
		for j, t := range [2]*string{e.Text, e.ReasoningText} {
			if t == nil {
				lanes[2+j].word(0)
			} else {
				lanes[2+j].word(1)
				lanes[2+j].str(*t)
			}
		}
	}
	for _, l := range lanes {
		f.word(l.h)
	}
	return f.h
}

// seedWord starts every fingerprint: the process's random seed, so two
// inputs cannot be built to collide.
var seedWord = maphash.Comparable(seed, 0)

// fpHash is fingerprint's state.
type fpHash struct{ h uint64 }

// word mixes one 64-bit word in: xor, then SplitMix64's finalizer (two
// odd multiplications and xor-shifts: a bijection of the state, so two
// states that differ stay different through any later words).
func (f *fpHash) word(v uint64) {
	x := (f.h ^ v) * 0x9e3779b97f4a7c15
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	f.h = x ^ x>>32
}

// str mixes in a string's seeded hash (maphash covers its length).
func (f *fpHash) str(s string) { f.word(strWord(s)) }

// opt mixes in an optional value: a presence word, then the value.
func (f *fpHash) opt(ok bool, v func() uint64) {
	if !ok {
		f.word(0)
		return
	}
	f.word(1)
	f.word(v())
}

// strWord is s's seeded hash.
func strWord(s string) uint64 { return maphash.String(seed, s) }

// request runs the checks on one request of the run and sends it on
// (or holds it, or drops a repetition).
func (s *importSink) request(rc *runChecks, r *formats.Request, events []formats.Event) error {
	if h, field, id, ok := idHash(r); ok {
		fp := fingerprint(r, events)
		if prev, seen := rc.ids[h]; seen {
			if rc.firstDup == "" {
				rc.firstDup, rc.dupField = fmt.Sprintf("request %d: %s %s", r.RequestKey, field, safeID(id)), field
			}
			if prev == fp {
				rc.identical++
				return nil
			}
			rc.differing++
		} else {
			rc.ids[h] = fp
		}
	}
	if !rc.refSet {
		if rc.heldEvents+len(events) > farStartHeldEvents {
			// the sample so far and this request give the reference;
			// this one goes on without a copy
			if err := s.flush(rc, r); err != nil {
				return err
			}
			return s.forward(rc, r, events)
		}
		if rc.arena == nil {
			rc.arena = heldArenas.Get().(*[]formats.Event)
		}
		from := len(*rc.arena)
		*rc.arena = append(*rc.arena, events...)
		rc.held = append(rc.held, heldRow{*r, from, len(*rc.arena)})
		rc.heldEvents += len(events)
		if len(rc.held) < FarStartSample && rc.heldEvents < farStartHeldEvents {
			return nil
		}
		return s.flush(rc, nil)
	}
	return s.forward(rc, r, events)
}

// flush sets the run's reference start from the held requests (and extra,
// not nil: a request the caller sends on itself) and sends them on.
func (s *importSink) flush(rc *runChecks, extra *formats.Request) error {
	rc.refSet = true
	sample := make([]*formats.Request, 0, len(rc.held)+1)
	for i := range rc.held {
		sample = append(sample, &rc.held[i].req)
	}
	if extra != nil {
		sample = append(sample, extra)
	}
	domains := map[string]int{}
	for _, r := range sample {
		if r.StartNs != nil && !r.IsServerRow() {
			domains[r.ClockDomain]++
		}
	}
	for d, n := range domains {
		if n > domains[rc.domain] || n == domains[rc.domain] && d < rc.domain {
			rc.domain = d
		}
	}
	var starts []int64
	for _, r := range sample {
		if r.StartNs != nil && !r.IsServerRow() && r.ClockDomain == rc.domain {
			starts = append(starts, *r.StartNs)
		}
	}
	if len(starts) > 0 {
		slices.Sort(starts)
		rc.ref, rc.refFrom = starts[(len(starts)-1)/2], len(starts)
	}
	held, arena := rc.held, rc.arena
	rc.held, rc.arena = nil, nil
	for i := range held {
		if err := s.forward(rc, &held[i].req, (*arena)[held[i].from:held[i].to]); err != nil {
			return err
		}
	}
	if arena != nil {
		clear(*arena) // nothing of the run's messages is kept alive
		*arena = (*arena)[:0]
		heldArenas.Put(arena)
	}
	return nil
}

// forward sends r on, its start nulled when it is far from the reference.
func (s *importSink) forward(rc *runChecks, r *formats.Request, events []formats.Event) error {
	if rc.refFrom > 0 && r.StartNs != nil && r.ClockDomain == rc.domain && !r.IsServerRow() {
		if d := float64(*r.StartNs) - float64(rc.ref); math.Abs(d) > FarStartNs {
			rc.far++
			if rc.firstFar == "" {
				rc.firstFar = fmt.Sprintf("request %d: start %d ns, %s the median start %d ns of %d requests",
					r.RequestKey, *r.StartNs, farSpan(d), rc.ref, rc.refFrom)
			}
			c := *r
			c.StartNs = nil
			return s.Sink.Request(&c, events)
		}
	}
	return s.Sink.Request(r, events)
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
		if err := s.flush(rc, nil); err != nil {
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
	return checks, nil
}

// safeID quotes and shortens an id for a check's detail.
func safeID(id string) string {
	if r := []rune(id); len(r) > 64 {
		id = string(r[:64]) + "…"
	}
	return fmt.Sprintf("%q", id)
}
