package analyze

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokentrace/tokentrace/formats"
)

// TimeRef is a point on a run's time axis as a user gives it: a wall-clock
// time (RFC 3339, for runs on the Unix clock) or an offset from the run's
// first request start ("+300s", "+5m", any clock).
type TimeRef struct {
	// Set is false for the zero value (no bound).
	Set bool
	// Wall is true for an RFC 3339 time (UnixNs); false for an offset
	// (OffsetNs from the first start).
	Wall     bool
	UnixNs   int64
	OffsetNs int64
	// Text is the value as given.
	Text string
}

// ParseTimeRef reads "+DURATION" (Go durations: +300s, +5m, +1h30m; an
// offset from the run's first request start) or an RFC 3339 time
// ("2026-07-29T22:44:00Z", fractional seconds and zones allowed). "" is
// no bound.
func ParseTimeRef(s string) (TimeRef, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return TimeRef{}, nil
	}
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return TimeRef{}, fmt.Errorf("%q: want +DURATION (an offset from the run's first request, e.g. +300s, +5m) or an RFC 3339 time", s)
		}
		return TimeRef{Set: true, OffsetNs: int64(d), Text: s}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return TimeRef{}, fmt.Errorf("%q: want an RFC 3339 time (2026-07-29T22:44:00Z) or +DURATION from the run's first request (+300s)", s)
	}
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return TimeRef{}, fmt.Errorf("%q: outside the times tokentrace can hold (Unix nanoseconds: 1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z)", s)
	}
	return TimeRef{Set: true, Wall: true, UnixNs: t.UnixNano(), Text: s}, nil
}

// resolve places r on a run's clock: t0 is the run's first start, clock
// its clock domain.
func (r TimeRef) resolve(t0 int64, clock, runID, flag string) (int64, error) {
	if !r.Wall {
		return addSat(t0, r.OffsetNs), nil
	}
	if clock != formats.ClockUnix {
		return 0, fmt.Errorf("%s %s: run %q has no wall clock (its start times are on a %q clock): give an offset from its first request, e.g. +300s", flag, r.Text, runID, clock)
	}
	return r.UnixNs, nil
}

// Trim asks for the run's steady state only.
type Trim struct {
	// Set is false for no trimming.
	Set bool
	// Auto finds the steady window from the run's in-flight requests
	// (SteadyWindow) with Ratio; otherwise HeadNs and TailNs are cut from
	// the run's first start and last end.
	Auto           bool
	Ratio          float64
	HeadNs, TailNs int64
	Text           string
}

// DefaultSteadyRatio is the share of the peak in-flight count --trim auto
// requires (SGLang's steady-state benchmark mode takes the ratio as a
// required flag; its documentation's example is 0.8).
const DefaultSteadyRatio = 0.8

// ParseTrim reads "auto", "auto:RATIO" (0 < RATIO ≤ 1) or "HEAD,TAIL"
// (durations: "30s,10s"; "30s" alone trims the head only). "" is no
// trimming.
func ParseTrim(s string) (Trim, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Trim{}, nil
	}
	if rest, ok := strings.CutPrefix(s, "auto"); ok {
		t := Trim{Set: true, Auto: true, Ratio: DefaultSteadyRatio, Text: s}
		if rest != "" {
			v, err := strconv.ParseFloat(strings.TrimPrefix(rest, ":"), 64)
			if !strings.HasPrefix(rest, ":") || err != nil || !(v > 0 && v <= 1) {
				return Trim{}, fmt.Errorf("--trim %q: want auto, auto:RATIO with 0 < RATIO ≤ 1, or HEAD,TAIL durations (30s,10s)", s)
			}
			t.Ratio = v
		}
		return t, nil
	}
	head, tail, _ := strings.Cut(s, ",")
	t := Trim{Set: true, Text: s}
	for i, p := range []string{head, tail} {
		if strings.TrimSpace(p) == "" && i == 1 {
			continue
		}
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return Trim{}, fmt.Errorf("--trim %q: want auto, auto:RATIO, or HEAD,TAIL durations (30s,10s)", s)
		}
		if i == 0 {
			t.HeadNs = int64(d)
		} else {
			t.TailNs = int64(d)
		}
	}
	return t, nil
}

// Selection chooses which of a run's requests a report covers, by time.
type Selection struct {
	// Since and Until bound the requests' start (or end, with ByEnd):
	// Since ≤ t < Until.
	Since, Until TimeRef
	// ByEnd selects by the request's end (its recorded end, or the bound
	// InFlight gives one without) instead of its start.
	ByEnd bool
	// Trim keeps the steady state only.
	Trim Trim
}

// Active reports whether s selects anything.
func (s Selection) Active() bool { return s.Since.Set || s.Until.Set || s.Trim.Set }

// SelectionReport says which requests a report covers and which it left
// out, and why.
type SelectionReport struct {
	// By is "start" or "end": the request time the bounds apply to.
	By string `json:"by"`
	// FromNs and ToNs are the kept interval [from, to) in the run's clock
	// (null: unbounded); From and To the same as RFC 3339 UTC on a Unix
	// clock; FromS and ToS as seconds from the run's first start.
	FromNs *int64 `json:"from_ns"`
	ToNs   *int64 `json:"to_ns"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	FromS  F      `json:"from_s"`
	ToS    F      `json:"to_s"`
	// Trim describes --trim when given.
	Trim *TrimReport `json:"trim,omitempty"`
	// Kept is the number of requests kept; LeftOut the others, grouped by
	// reason.
	Kept    int           `json:"kept"`
	LeftOut []LeftOutKind `json:"left_out"`
}

// TrimReport is how --trim found its window.
type TrimReport struct {
	// Mode is "auto" or "manual"; Rule states the rule and its source.
	Mode string `json:"mode"`
	Rule string `json:"rule"`
	// Ratio, PeakInFlight and Threshold are auto's: the window is the
	// longest interval with at least Threshold = max(1, ⌈Ratio·peak⌉)
	// requests in flight.
	Ratio        F   `json:"ratio,omitempty"`
	PeakInFlight int `json:"peak_in_flight,omitempty"`
	Threshold    int `json:"threshold,omitempty"`
	// HeadS and TailS are the trimmed durations in seconds (from the
	// first start to the window, from the window to the last end).
	HeadS F `json:"head_s"`
	TailS F `json:"tail_s"`
	// WarmupExcluded is set when the tool already left its warm-up out
	// (the head is then not trimmed again), with why.
	WarmupExcluded string `json:"warmup_excluded,omitempty"`
}

// LeftOutKind is a group of requests left out for one reason.
type LeftOutKind struct {
	// Reason: "before_since", "after_until", "warm_up", "cool_down",
	// "no_start_time".
	Reason string `json:"reason"`
	Count  int    `json:"count"`
	// Keys are the requests' request_key values, in start order (at most
	// MaxListed).
	Keys []int64 `json:"request_keys"`
	// FirstNs and LastNs are the earliest and latest of their times (start
	// or end, by Selection.ByEnd); null for no_start_time.
	FirstNs *int64 `json:"first_ns"`
	LastNs  *int64 `json:"last_ns"`
}

// MaxListed caps the request lists of a report (left-out keys, failures):
// past it, the list stops and a count says how many more there are.
const MaxListed = 1000

// runTimes is a run's requests on its time axis: what selection, windows,
// failures and the timeline need, computed once per report from the
// requests' metrics (index-aligned with them).
type runTimes struct {
	clock     string
	t0, tLast int64 // first start; last recorded start or end
	hasStart  bool
	spans     []formats.Span
	inflight  formats.InFlightResult
	steps     []formats.Step
}

// newRunTimes places reqs on run's clock and counts them in flight
// (formats.InFlight with run's closed-loop concurrency and timeoutNs).
// runSpan is reqs' first start and last recorded time (a start, or an end
// where the request records one); ok false without start times. It is
// runTimes' t0 and tLast without the in-flight sweep.
func runSpan(reqs []RequestMetrics) (t0, tLast int64, ok bool) {
	for i := range reqs {
		m := &reqs[i]
		if !m.HasStart {
			continue
		}
		if !ok || m.StartNs < t0 {
			t0 = m.StartNs
		}
		if !ok || m.StartNs > tLast {
			tLast = m.StartNs
		}
		if m.EndOffsetNs >= 0 && m.StartNs+m.EndOffsetNs > tLast {
			tLast = m.StartNs + m.EndOffsetNs
		}
		ok = true
	}
	return t0, tLast, ok
}

func newRunTimes(run *formats.Run, reqs []RequestMetrics, timeoutNs int64) *runTimes {
	rt := &runTimes{clock: run.ClockDomain, spans: make([]formats.Span, len(reqs))}
	for i := range reqs {
		m := &reqs[i]
		if !m.HasStart {
			continue
		}
		s := formats.Span{StartNs: m.StartNs, HasStart: true}
		if m.EndOffsetNs >= 0 {
			s.EndNs, s.EndKnown = m.StartNs+m.EndOffsetNs, true
		}
		rt.spans[i] = s
	}
	rt.t0, rt.tLast, rt.hasStart = runSpan(reqs)
	opt := formats.InFlightOptionsOf(run)
	opt.TimeoutNs = timeoutNs
	rt.inflight = formats.InFlight(rt.spans, opt)
	rt.steps = formats.InFlightSteps(rt.spans, rt.inflight)
	if rt.clock == "" {
		rt.clock = formats.ClockMonotonic
	}
	return rt
}

// at returns request i's selection time (start, or end with byEnd); ok
// false without a start.
func (rt *runTimes) at(i int, byEnd bool) (int64, bool) {
	s := rt.spans[i]
	if !s.HasStart {
		return 0, false
	}
	if byEnd {
		return rt.inflight.EndNs[i], true
	}
	return s.StartNs, true
}

// SteadyDipNs is how long the count may fall below the threshold without
// ending a steady interval: a closed-loop client sends the next request a
// few microseconds to milliseconds after one ends, and that handover is not
// a ramp.
const SteadyDipNs = int64(1e9)

// SteadyWindow is the steady-state rule of --trim auto: over the step
// function of requests in flight (every status; ends the data does not
// record bounded as formats.InFlight says), the longest interval during
// which at least max(1, ⌈ratio·peak⌉) requests are in flight, where peak
// is the largest count; the first such interval when two are equally long.
// It is the rule of SGLang's steady-state serving benchmark
// (sgl-project/sglang PR #30918, python/sglang/benchmark/steady_state.py
// find_steady_state_window), with two differences: SGLang counts
// successful requests only, tokentrace every request in flight (a failing
// request holds its connection, and its slot, too); and a fall below the
// threshold shorter than SteadyDipNs does not end the interval (with the
// threshold at the peak, as in a closed loop of 2 at ratio 0.8, SGLang's
// rule would end it at every handover between two requests). ok is false
// when no request is in flight.
func SteadyWindow(steps []formats.Step, ratio float64) (from, to int64, peak, threshold int, ok bool) {
	for _, s := range steps {
		peak = max(peak, s.Count)
	}
	if peak == 0 {
		return 0, 0, 0, 0, false
	}
	threshold = max(1, int(math.Ceil(float64(peak)*ratio-1e-9)))
	var best int64 = -1
	consider := func(f, t int64) {
		if t-f > best {
			best, from, to = t-f, f, t
		}
	}
	open := false
	var start, below int64 // the open interval's start; when it fell below (−1: it is above)
	below = -1
	for _, s := range steps {
		switch {
		case s.Count >= threshold && !open:
			open, start, below = true, s.TimeNs, -1
		case s.Count >= threshold && below >= 0:
			if s.TimeNs-below < SteadyDipNs {
				below = -1 // a handover dip: the interval goes on
			} else {
				consider(start, below)
				start, below = s.TimeNs, -1
			}
		case s.Count < threshold && open && below < 0:
			below = s.TimeNs
		}
	}
	if open && below >= 0 {
		consider(start, below)
	}
	return from, to, peak, threshold, best > 0
}

// warmupExcluded says why a run's tool already left its warm-up out of the
// run ("" when it did not): AIPerf imports its warmup-phase records into a
// separate run (ingest/aiperf), and MLPerf LoadGen's performance run has
// no warm-up queries in its log.
func warmupExcluded(run *formats.Run) string {
	switch run.Tool {
	case "mlperf":
		return "MLPerf LoadGen's performance run holds no warm-up queries"
	case "aiperf":
		for _, n := range run.Notes {
			if strings.HasPrefix(n, "records of phase(s) ") && strings.Contains(n, "imported into run") {
				return "AIPerf's warm-up records were imported into a run of their own"
			}
		}
	}
	return ""
}

// selectRequests applies sel to a run: the mask of kept requests (by index)
// and the report saying what was left out. It fails for a wall-clock
// bound on a run without a wall clock, or when the run has no start times.
func selectRequests(run *formats.Run, reqs []RequestMetrics, rt *runTimes, sel Selection) ([]bool, *SelectionReport, error) {
	if !rt.hasStart {
		return nil, nil, fmt.Errorf("run %q has no request start times: --since, --until and --trim cannot place its requests", run.RunID)
	}
	by := "start"
	if sel.ByEnd {
		by = "end"
	}
	rep := &SelectionReport{By: by, LeftOut: []LeftOutKind{}, FromS: F(math.NaN()), ToS: F(math.NaN())}
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	fromWhy, toWhy := "before_since", "after_until"
	if sel.Since.Set {
		v, err := sel.Since.resolve(rt.t0, rt.clock, run.RunID, "--since")
		if err != nil {
			return nil, nil, err
		}
		from = v
	}
	if sel.Until.Set {
		v, err := sel.Until.resolve(rt.t0, rt.clock, run.RunID, "--until")
		if err != nil {
			return nil, nil, err
		}
		to = v
	}
	if sel.Since.Set && sel.Until.Set && from >= to {
		return nil, nil, fmt.Errorf("run %q: --since %s is not before --until %s: no request can be selected", run.RunID, sel.Since.Text, sel.Until.Text)
	}
	if t := sel.Trim; t.Set {
		tr := &TrimReport{}
		var ws, we int64
		if t.Auto {
			f, e, peak, thr, ok := SteadyWindow(rt.steps, t.Ratio)
			if !ok {
				return nil, nil, fmt.Errorf("--trim auto: run %q has no requests in flight to find a steady state in", run.RunID)
			}
			ws, we = f, e
			tr.Mode, tr.Ratio, tr.PeakInFlight, tr.Threshold = "auto", F(t.Ratio), peak, thr
			tr.Rule = fmt.Sprintf("the longest interval with at least max(1, ⌈%g × peak⌉) = %d of the peak %d requests in flight (every status; unrecorded ends bounded), as SGLang's steady-state mode (sgl-project/sglang PR #30918) finds it; requests whose %s falls in it are kept", t.Ratio, thr, peak, by)
		} else {
			ws, we = addSat(rt.t0, t.HeadNs), addSat(rt.tLast, -t.TailNs)
			tr.Mode = "manual"
			tr.Rule = fmt.Sprintf("%s from the first request's start and %s before the run's last recorded time are left out; requests whose %s falls between are kept",
				time.Duration(t.HeadNs), time.Duration(t.TailNs), by)
		}
		if why := warmupExcluded(run); why != "" {
			ws = rt.t0
			tr.WarmupExcluded = why + ": the head is not trimmed again"
		}
		tr.HeadS, tr.TailS = F(float64(ws-rt.t0)/1e9), F(float64(rt.tLast-we)/1e9)
		rep.Trim = tr
		if ws > from {
			from, fromWhy = ws, "warm_up"
		}
		if we < to {
			to, toWhy = we, "cool_down"
		}
	}
	if from != math.MinInt64 {
		rep.FromNs = &from
		rep.FromS = F(float64(from-rt.t0) / 1e9)
	}
	if to != math.MaxInt64 {
		rep.ToNs = &to
		rep.ToS = F(float64(to-rt.t0) / 1e9)
	}
	if rt.clock == formats.ClockUnix {
		if rep.FromNs != nil {
			rep.From = rfc3339(from)
		}
		if rep.ToNs != nil {
			rep.To = rfc3339(to)
		}
	}
	keep := make([]bool, len(reqs))
	groups := map[string]*LeftOutKind{}
	type item struct {
		t   int64
		key int64
	}
	lists := map[string][]item{}
	for i := range reqs {
		t, ok := rt.at(i, sel.ByEnd)
		why := ""
		switch {
		case !ok:
			why = "no_start_time"
		case t < from:
			why = fromWhy
			if sel.Since.Set && fromWhy != "before_since" && t < mustResolve(sel.Since, rt) {
				why = "before_since"
			}
		case t >= to:
			why = toWhy
			if sel.Until.Set && toWhy != "after_until" && t >= mustResolve(sel.Until, rt) {
				why = "after_until"
			}
		}
		if why == "" {
			keep[i] = true
			rep.Kept++
			continue
		}
		g := groups[why]
		if g == nil {
			g = &LeftOutKind{Reason: why, Keys: []int64{}}
			groups[why] = g
		}
		g.Count++
		lists[why] = append(lists[why], item{t, reqs[i].Key})
		if ok {
			if g.FirstNs == nil || t < *g.FirstNs {
				g.FirstNs = i64ptr(t)
			}
			if g.LastNs == nil || t > *g.LastNs {
				g.LastNs = i64ptr(t)
			}
		}
	}
	for _, why := range []string{"before_since", "warm_up", "cool_down", "after_until", "no_start_time"} {
		g := groups[why]
		if g == nil {
			continue
		}
		l := lists[why]
		sort.SliceStable(l, func(a, b int) bool { return l[a].t < l[b].t })
		for _, it := range l {
			if len(g.Keys) == MaxListed {
				break
			}
			g.Keys = append(g.Keys, it.key)
		}
		rep.LeftOut = append(rep.LeftOut, *g)
	}
	return keep, rep, nil
}

func mustResolve(r TimeRef, rt *runTimes) int64 {
	v, _ := r.resolve(rt.t0, rt.clock, "", "")
	return v
}

func i64ptr(v int64) *int64 { return &v }

// addSat is a + d, held at the int64 range instead of wrapping around (an
// offset of +2562047h from a 2026 start is past the last time a Unix ns
// holds: every request is before it).
func addSat(a, d int64) int64 {
	s := a + d
	switch {
	case d > 0 && s < a:
		return math.MaxInt64
	case d < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// rfc3339 writes a Unix ns time as RFC 3339 UTC with milliseconds.
func rfc3339(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// filterAcc returns a copy of acc holding only the requests keep marks,
// under every convention (the requests of all conventions are index-
// aligned), with their pooled ITL samples. The copy shares nothing it
// could modify.
func filterAcc(acc *runAcc, keep []bool) *runAcc {
	out := &runAcc{id: acc.id, run: acc.run, tok: acc.tok, tokErr: acc.tokErr, per: make([]convAcc, len(acc.per)), skip: acc.skip, part: true}
	for ci := range acc.per {
		p := &acc.per[ci]
		itl := p.gaps()
		q := &out.per[ci]
		q.applied = p.applied
		off := 0
		for i := range p.reqs {
			n := p.reqs[i].ITLSamples
			if keep[i] {
				q.reqs = append(q.reqs, p.reqs[i])
				if off+n <= len(itl) {
					q.itl = append(q.itl, itl[off:off+n]...)
				}
			}
			off += n
		}
	}
	return out
}
