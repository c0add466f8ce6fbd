package formats

import (
	"math"
	"sort"
)

// End-bound rules (Request.EndBoundRule): how the end of a request that has
// a start but no recorded end (an HTTP 524 whose tool wrote end = start, a
// dropped connection) is bounded when counting requests in flight.
const (
	// EndRecorded: the request's end is in the tables (no bound needed).
	EndRecorded = ""
	// EndSlotReused: a closed-loop run (LoadMode "concurrency" with a
	// configured Concurrency C) sends a request only into a free slot, so
	// when a later request starts while C requests would otherwise be in
	// flight, one of the open requests without a recorded end must have
	// ended by then: the earliest-started of them is taken to end at that
	// start (an upper bound on its end).
	EndSlotReused = "slot_reused"
	// EndTimeout: start + the request timeout the analysis was given.
	EndTimeout = "timeout"
	// EndLongestRequest: start + the longest recorded duration among the
	// run's requests (an assumption, not a bound: used when the run is not
	// closed-loop and no timeout is known).
	EndLongestRequest = "longest_request"
	// EndRunEnd: the run's last recorded time (its last start or end),
	// when nothing earlier bounds it.
	EndRunEnd = "run_end"
)

// Span is one request's stay in flight, in its run's clock (ns).
type Span struct {
	// StartNs is the request's start; HasStart is false when the source
	// has none (the span is then left out).
	StartNs  int64
	HasStart bool
	// EndNs is the recorded end when EndKnown (RequestEnd), else unset:
	// InFlight bounds it.
	EndNs    int64
	EndKnown bool
}

// RequestEnd returns when the client was done with r, in r's clock: start
// + the stream's end, else the last token, else the first token; ok is
// false without a start or without any of them. A stream end equal to the
// start (AIPerf writes request_end_ns = request_start_ns on an HTTP error
// it did not time) is not an end: ok false.
func RequestEnd(r *Request) (endNs int64, ok bool) {
	if r.StartNs == nil {
		return 0, false
	}
	for _, off := range []*int64{r.StreamEndOffsetNs, r.LastTokenOffsetNs, r.FirstTokenOffsetNs} {
		if off != nil && *off > 0 {
			return *r.StartNs + *off, true
		}
	}
	return 0, false
}

// SpanOf is r's Span (RequestEnd).
func SpanOf(r *Request) Span {
	var s Span
	if r.StartNs != nil {
		s.StartNs, s.HasStart = *r.StartNs, true
		s.EndNs, s.EndKnown = RequestEnd(r)
	}
	return s
}

// InFlightOptions are what InFlight knows of the run beyond its spans.
type InFlightOptions struct {
	// Concurrency is the closed-loop concurrency C (Run.Concurrency when
	// Run.LoadMode is "concurrency"); 0 when the run is not closed-loop or
	// C is unknown.
	Concurrency int
	// TimeoutNs is the client's request timeout (0: unknown).
	TimeoutNs int64
}

// InFlightOptionsOf reads the closed-loop concurrency from run (nil: none).
func InFlightOptionsOf(run *Run) InFlightOptions {
	var o InFlightOptions
	if run != nil && run.LoadMode == "concurrency" && run.Concurrency != nil && *run.Concurrency >= 1 && *run.Concurrency < 1e9 &&
		*run.Concurrency == math.Trunc(*run.Concurrency) {
		o.Concurrency = int(*run.Concurrency)
	}
	return o
}

// InFlightResult is InFlight's answer, one entry per span (index-aligned;
// spans without a start get AtStart 0, EndNs 0, Rule "").
type InFlightResult struct {
	// AtStart is the number of the run's requests in flight just after the
	// request was sent, itself included: those started before it (or at
	// the same ns and earlier in the input) and not yet ended. A request
	// ending at the very ns another starts is no longer in flight then.
	AtStart []int64
	// EndNs is the end used for each request: its recorded end, or the
	// bound of Rule.
	EndNs []int64
	// Rule is EndRecorded ("") or the bound used (EndSlotReused,
	// EndTimeout, EndLongestRequest, EndRunEnd).
	Rule []string
	// Unknown counts the spans with a start but no recorded end.
	Unknown int
}

// InFlight counts, for each request of one run, how many of the run's
// requests were in flight at its start, bounding the ends the tables do not
// record so that such requests still count (they hold a connection, and in
// a closed-loop run a slot) instead of vanishing:
//
//  1. closed loop (opt.Concurrency C > 0): EndSlotReused — sweeping starts
//     in time order, when a start would make more than C requests in
//     flight, the earliest-started open request without a recorded end is
//     taken to end at that start (repeated while needed);
//  2. then, for those still open, EndTimeout (start + opt.TimeoutNs) when
//     a timeout is known, else EndLongestRequest (start + the longest
//     recorded duration among the run's requests; EndRunEnd when no
//     request has one),
//
// each capped at the run's last recorded time (EndRunEnd when the cap
// applies). The closed-loop bound is the only one the data proves; the
// others are documented assumptions, which the caller shows as such.
// Memory: O(len(spans)).
func InFlight(spans []Span, opt InFlightOptions) InFlightResult {
	n := len(spans)
	res := InFlightResult{AtStart: make([]int64, n), EndNs: make([]int64, n), Rule: make([]string, n)}
	order := make([]int, 0, n)
	var last int64
	var longest int64 = -1
	first := true
	for i, s := range spans {
		if !s.HasStart {
			continue
		}
		order = append(order, i)
		if first || s.StartNs > last {
			last = s.StartNs
		}
		first = false
		if s.EndKnown {
			last = max(last, s.EndNs)
			longest = max(longest, s.EndNs-s.StartNs)
			res.EndNs[i] = s.EndNs
		} else {
			res.Unknown++
		}
	}
	// starts in time order; input order among equal starts
	sort.SliceStable(order, func(a, b int) bool { return spans[order[a]].StartNs < spans[order[b]].StartNs })

	// Pass 1 (closed loop): slot reuse bounds.
	open := map[int]bool{} // unknown-end requests still open, by span index
	if opt.Concurrency > 0 && res.Unknown > 0 {
		var queue []int // open unknown-end requests, earliest start first
		ends := &endHeap{}
		for _, i := range order {
			s := spans[i]
			for ends.Len() > 0 && ends.min() <= s.StartNs {
				ends.pop()
			}
			for ends.Len()+len(queue)+1 > opt.Concurrency && len(queue) > 0 {
				j := queue[0]
				queue = queue[1:]
				res.EndNs[j], res.Rule[j] = s.StartNs, EndSlotReused
			}
			if s.EndKnown {
				ends.push(s.EndNs)
			} else {
				queue = append(queue, i)
			}
		}
		for _, j := range queue {
			open[j] = true
		}
	} else {
		for _, i := range order {
			if !spans[i].EndKnown {
				open[i] = true
			}
		}
	}
	// Pass 2: timeout, longest request, run end.
	for i := range open {
		s := spans[i]
		switch {
		case opt.TimeoutNs > 0:
			res.EndNs[i], res.Rule[i] = s.StartNs+opt.TimeoutNs, EndTimeout
		case longest >= 0:
			res.EndNs[i], res.Rule[i] = s.StartNs+longest, EndLongestRequest
		default:
			res.EndNs[i], res.Rule[i] = last, EndRunEnd
		}
		if res.EndNs[i] > last {
			res.EndNs[i], res.Rule[i] = last, EndRunEnd
		}
	}
	// Pass 3: the count at each start (ends at a start's ns come first).
	ends := &endHeap{}
	for _, i := range order {
		s := spans[i]
		for ends.Len() > 0 && ends.min() <= s.StartNs {
			ends.pop()
		}
		res.AtStart[i] = int64(ends.Len() + 1)
		if res.EndNs[i] > s.StartNs {
			ends.push(res.EndNs[i])
		}
	}
	return res
}

// endHeap is a min-heap of end times.
type endHeap []int64

func (h *endHeap) Len() int     { return len(*h) }
func (h *endHeap) min() int64   { return (*h)[0] }
func (h *endHeap) push(v int64) { *h = append(*h, v); h.up(len(*h) - 1) }
func (h *endHeap) pop() int64 {
	old := *h
	v := old[0]
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	if n > 0 {
		h.down(0)
	}
	return v
}
func (h endHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}
func (h endHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// Step is one change of an in-flight step function: from TimeNs on (until
// the next step), Count requests are in flight, of which Bounded are
// counted only through a bound on their end (InFlightResult.Rule ≠ "").
type Step struct {
	TimeNs         int64
	Count, Bounded int
}

// InFlightSteps is the step function of res over spans: one Step per time
// at which the count changes (ends at a time applied before starts), in
// time order, ending with a step to 0. A request is in flight on [start,
// end); one whose end equals its start is never counted.
func InFlightSteps(spans []Span, res InFlightResult) []Step {
	type ev struct {
		t       int64
		d, b    int
		isStart bool
	}
	evs := make([]ev, 0, 2*len(spans))
	for i, s := range spans {
		if !s.HasStart || res.EndNs[i] <= s.StartNs {
			continue
		}
		b := 0
		if res.Rule[i] != EndRecorded {
			b = 1
		}
		evs = append(evs, ev{s.StartNs, 1, b, true}, ev{res.EndNs[i], -1, -b, false})
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return !evs[a].isStart && evs[b].isStart
	})
	var out []Step
	cur, bnd := 0, 0
	for i := 0; i < len(evs); {
		t := evs[i].t
		for i < len(evs) && evs[i].t == t {
			cur += evs[i].d
			bnd += evs[i].b
			i++
		}
		if n := len(out); n > 0 && out[n-1].Count == cur && out[n-1].Bounded == bnd {
			continue
		}
		out = append(out, Step{TimeNs: t, Count: cur, Bounded: bnd})
	}
	return out
}
