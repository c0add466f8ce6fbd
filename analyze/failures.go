package analyze

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// ListedRequest is one request named in a report's lists (failures, the
// slowest): who it was, when, what happened, and the load at its start.
type ListedRequest struct {
	// Key is its request_key; ID its source id (or X-Request-Id, response
	// id, server id), sanitized.
	Key int64  `json:"request_key"`
	ID  string `json:"id"`
	// StartNs is its start in the run's clock (null: none); Start the same
	// as RFC 3339 UTC on a Unix clock; OffsetS seconds from the run's
	// first start.
	StartNs *int64 `json:"start_ns"`
	Start   string `json:"start,omitempty"`
	OffsetS F      `json:"offset_s"`
	// Status, Code, Type and Message describe its outcome (Message: the
	// first line of the error text, sanitized; an HTML error page is its
	// <title>).
	Status  string `json:"status"`
	Code    string `json:"code,omitempty"`
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
	// DurationMs is how long the client waited, up to its recorded end
	// (null when the source records none); HeldBoundMs and HeldBoundRule
	// are then the bound it was counted in flight until
	// (formats.InFlight).
	DurationMs    F      `json:"duration_ms"`
	HeldBoundMs   F      `json:"held_bound_ms"`
	HeldBoundRule string `json:"held_bound_rule,omitempty"`
	// TTFTMs and E2EMs under the report's convention (null when
	// undefined).
	TTFTMs F `json:"ttft_ms"`
	E2EMs  F `json:"e2e_ms"`
	// InFlightAtStart is the requests in flight just after it was sent,
	// itself included (formats.InFlight).
	InFlightAtStart int64 `json:"in_flight_at_start"`
	// EngineWaiting and EngineKVCachePct are the engine's queue (requests
	// waiting) and GPU KV-cache usage (%) at its start, from the server
	// series beside the run (null without them; see EngineState).
	EngineWaiting    F `json:"engine_waiting_at_start"`
	EngineKVCachePct F `json:"engine_kv_cache_pct_at_start"`
}

// FailureReport lists a run's failed, cancelled and empty requests on the
// clock, and groups them into bursts.
type FailureReport struct {
	// Requests are the failed (error), cancelled and empty requests in
	// start order (those without a start last), at most MaxListed;
	// Omitted counts the rest.
	Requests []ListedRequest `json:"requests"`
	Omitted  int             `json:"omitted"`
	// Bursts group them: a burst is a maximal sequence of such requests,
	// in start order, with no completed (ok) request starting between two
	// of them.
	Bursts []Burst `json:"bursts"`
}

// Burst is failures that came together.
type Burst struct {
	Count int `json:"count"`
	// FromNs and ToNs are its first and last start; From and To the same
	// as RFC 3339 UTC on a Unix clock; FromS and ToS seconds from the
	// run's first start.
	FromNs int64  `json:"from_ns"`
	ToNs   int64  `json:"to_ns"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	FromS  F      `json:"from_s"`
	ToS    F      `json:"to_s"`
	// Kind is its most frequent outcome (status, code, type and the
	// first line of the message), with OtherKinds counting the requests
	// of other kinds.
	Kind       string `json:"kind"`
	OtherKinds int    `json:"other_kinds"`
	// Keys are its requests' request_key values (at most MaxListed).
	Keys []int64 `json:"request_keys"`
}

// SlowestReport lists a run's slowest completed requests (report --top).
type SlowestReport struct {
	ByTTFT []ListedRequest `json:"by_ttft"`
	ByE2E  []ListedRequest `json:"by_e2e"`
}

// InFlightReport is the run's load over time: requests in flight (every
// status), with the ends the source does not record bounded.
type InFlightReport struct {
	// Max is the largest count; MeanOverRun its time-weighted mean from
	// the first start to the last recorded time.
	Max         int `json:"max"`
	MeanOverRun F   `json:"mean"`
	// P50, P90 and P99 are duration-weighted percentiles of the count over
	// the same span: the count that held for that share of the run's time
	// (AIPerf's effective_concurrency percentiles: the (count, duration)
	// pairs sorted by count, the first whose cumulative duration reaches p).
	P50 F `json:"p50"`
	P90 F `json:"p90"`
	P99 F `json:"p99"`
	// ActiveMean is the time-weighted mean over the time at least one
	// request was in flight (AIPerf's "active" restriction), and BusyShare
	// that time's share of the run.
	ActiveMean F `json:"active_mean"`
	BusyShare  F `json:"busy_share"`
	// Concurrency is the run's closed-loop concurrency when it has one
	// (0: none).
	Concurrency int `json:"concurrency"`
	// UnknownEnd counts requests with a start and no recorded end; Bounds
	// counts them by the bound used (slot_reused, timeout,
	// longest_request, run_end).
	UnknownEnd int            `json:"unknown_end"`
	Bounds     map[string]int `json:"bounds"`
}

// listed describes request i of reqs.
func listed(m *RequestMetrics, i int, rt *runTimes, eng *EngineState) ListedRequest {
	l := ListedRequest{Key: m.Key, ID: formats.SafeText(m.ID), Status: m.Status, OffsetS: F(math.NaN()),
		DurationMs: F(math.NaN()), HeldBoundMs: F(math.NaN()), TTFTMs: F(m.TTFTMs), E2EMs: F(m.E2EMs),
		EngineWaiting: F(math.NaN()), EngineKVCachePct: F(math.NaN())}
	if m.Status != formats.StatusOK {
		l.Code, l.Type, l.Message = m.Error.Code, formats.SafeText(m.Error.Type), formats.SafeText(m.ErrorText)
	}
	if !m.HasStart {
		return l
	}
	l.StartNs = i64ptr(m.StartNs)
	l.OffsetS = F(float64(m.StartNs-rt.t0) / 1e9)
	if rt.clock == formats.ClockUnix {
		l.Start = rfc3339(m.StartNs)
	}
	if m.EndOffsetNs >= 0 {
		l.DurationMs = F(float64(m.EndOffsetNs) / 1e6)
	} else if rule := rt.inflight.Rule[i]; rule != "" {
		l.HeldBoundMs = F(float64(rt.inflight.EndNs[i]-m.StartNs) / 1e6)
		l.HeldBoundRule = rule
	}
	l.InFlightAtStart = rt.inflight.AtStart[i]
	if eng != nil {
		w, kv := eng.At(m.StartNs)
		l.EngineWaiting, l.EngineKVCachePct = F(w), F(kv)
	}
	return l
}

// failures lists reqs' failed, cancelled and empty requests (keep marks
// those selected; nil: all) and their bursts.
func failures(reqs []RequestMetrics, keep []bool, rt *runTimes, eng *EngineState) *FailureReport {
	rep := &FailureReport{Requests: []ListedRequest{}, Bursts: []Burst{}}
	var order []int
	for i := range reqs {
		if keep == nil || keep[i] {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		ma, mb := &reqs[order[a]], &reqs[order[b]]
		if ma.HasStart != mb.HasStart {
			return ma.HasStart
		}
		return ma.StartNs < mb.StartNs
	})
	var cur *Burst
	kinds := map[string]int{}
	closeBurst := func() {
		if cur == nil {
			return
		}
		best, bestN := "", 0
		for k, n := range kinds {
			if n > bestN || n == bestN && k < best {
				best, bestN = k, n
			}
		}
		cur.Kind, cur.OtherKinds = best, cur.Count-bestN
		rep.Bursts = append(rep.Bursts, *cur)
		cur, kinds = nil, map[string]int{}
	}
	for _, i := range order {
		m := &reqs[i]
		switch m.Status {
		case formats.StatusOK:
			closeBurst()
			continue
		case formats.StatusError, formats.StatusCancelled, formats.StatusEmpty:
		default:
			continue
		}
		if len(rep.Requests) < MaxListed {
			rep.Requests = append(rep.Requests, listed(m, i, rt, eng))
		} else {
			rep.Omitted++
		}
		if !m.HasStart {
			continue
		}
		if cur == nil {
			cur = &Burst{FromNs: m.StartNs, Keys: []int64{}}
		}
		cur.Count++
		cur.ToNs = m.StartNs
		if len(cur.Keys) < MaxListed {
			cur.Keys = append(cur.Keys, m.Key)
		}
		kinds[kindOf(m)]++
	}
	closeBurst()
	for k := range rep.Bursts {
		b := &rep.Bursts[k]
		b.FromS, b.ToS = F(float64(b.FromNs-rt.t0)/1e9), F(float64(b.ToNs-rt.t0)/1e9)
		if rt.clock == formats.ClockUnix {
			b.From, b.To = rfc3339(b.FromNs), rfc3339(b.ToNs)
		}
	}
	return rep
}

// kindOf names a request's outcome as the report's errors group them.
func kindOf(m *RequestMetrics) string {
	if m.Status == formats.StatusEmpty {
		return "empty"
	}
	k := m.Error
	desc := k.Status
	if k.Code != "" {
		desc += " " + k.Code
	}
	if k.Type != "" {
		desc += " " + k.Type
	}
	if m.ErrorText != "" {
		desc += ": " + m.ErrorText
	}
	return formats.SafeText(desc)
}

// slowest lists the top completed (counted) requests by TTFT and by E2E.
func slowest(reqs []RequestMetrics, keep []bool, rt *runTimes, eng *EngineState, top int) *SlowestReport {
	rep := &SlowestReport{ByTTFT: []ListedRequest{}, ByE2E: []ListedRequest{}}
	for _, by := range []struct {
		dst *[]ListedRequest
		v   func(m *RequestMetrics) float64
	}{{&rep.ByTTFT, func(m *RequestMetrics) float64 { return m.TTFTMs }}, {&rep.ByE2E, func(m *RequestMetrics) float64 { return m.E2EMs }}} {
		var idx []int
		for i := range reqs {
			if (keep == nil || keep[i]) && reqs[i].Counted && !math.IsNaN(by.v(&reqs[i])) {
				idx = append(idx, i)
			}
		}
		sort.SliceStable(idx, func(a, b int) bool { return by.v(&reqs[idx[a]]) > by.v(&reqs[idx[b]]) })
		for k, i := range idx {
			if k == top {
				break
			}
			*by.dst = append(*by.dst, listed(&reqs[i], i, rt, eng))
		}
	}
	return rep
}

// inFlightReport summarizes rt.
func inFlightReport(run *formats.Run, rt *runTimes) *InFlightReport {
	rep := &InFlightReport{Bounds: map[string]int{}, Concurrency: formats.InFlightOptionsOf(run).Concurrency, UnknownEnd: rt.inflight.Unknown}
	for _, s := range rt.steps {
		rep.Max = max(rep.Max, s.Count)
	}
	for _, r := range rt.inflight.Rule {
		if r != "" {
			rep.Bounds[r]++
		}
	}
	tw := TimeWeighted(rt.steps, rt.t0, rt.tLast, []float64{0.5, 0.9, 0.99})
	rep.MeanOverRun = F(tw.Mean)
	rep.P50, rep.P90, rep.P99 = F(tw.Quantiles[0]), F(tw.Quantiles[1]), F(tw.Quantiles[2])
	rep.ActiveMean, rep.BusyShare = F(tw.ActiveMean), F(tw.BusyShare)
	return rep
}

// TimeWeightedStats are a step function's statistics over a span of time.
type TimeWeightedStats struct {
	// Mean is the time-weighted mean over the span; ActiveMean over the
	// part of it where the count is above 0, whose share of the span is
	// BusyShare.
	Mean, ActiveMean, BusyShare float64
	// Quantiles are the duration-weighted percentiles at the asked
	// probabilities: for p, the smallest count c such that the count was
	// ≤ c for at least the share p of the span.
	Quantiles []float64
}

// TimeWeighted summarizes the count of steps (formats.InFlightSteps: the
// count from each step's time to the next) over [from, to); NaN values
// for an empty span. Source of the percentile rule: ai-dynamo/aiperf
// 36c0308 docs/reference/effective-vs-active-metrics.md (effective
// metrics).
func TimeWeighted(steps []formats.Step, from, to int64, ps []float64) TimeWeightedStats {
	nan := math.NaN()
	out := TimeWeightedStats{Mean: nan, ActiveMean: nan, BusyShare: nan, Quantiles: make([]float64, len(ps))}
	for i := range out.Quantiles {
		out.Quantiles[i] = nan
	}
	if to <= from {
		return out
	}
	// one sweep in time order (the area summed as inFlightOver sums it, so
	// the mean is the same number): time spent at each count, area, busy
	dur := map[int]float64{} // count → time spent at it
	var area, busy float64
	k := sort.Search(len(steps), func(i int) bool { return steps[i].TimeNs > from })
	cur, t := 0, from
	if k > 0 {
		cur = steps[k-1].Count
	}
	hold := func(until int64) {
		d := float64(until - t)
		dur[cur] += d
		area += float64(cur) * d
		if cur > 0 {
			busy += d
		}
	}
	for ; k < len(steps) && steps[k].TimeNs < to; k++ {
		hold(steps[k].TimeNs)
		t, cur = steps[k].TimeNs, steps[k].Count
	}
	hold(to)
	total := float64(to - from)
	counts := make([]int, 0, len(dur))
	for c := range dur {
		counts = append(counts, c)
	}
	sort.Ints(counts)
	out.Mean, out.BusyShare = area/total, busy/total
	if busy > 0 {
		out.ActiveMean = area / busy
	}
	for i, p := range ps {
		cum := 0.0
		for _, c := range counts {
			cum += dur[c]
			if cum >= p*total-1e-9*total {
				out.Quantiles[i] = float64(c)
				break
			}
		}
	}
	return out
}

// DescribeBounds writes bounds as "slot_reused 10, timeout 2", in the
// order of the rules.
func DescribeBounds(b map[string]int) string {
	var parts []string
	for _, k := range []string{formats.EndSlotReused, formats.EndTimeout, formats.EndLongestRequest, formats.EndRunEnd} {
		if n := b[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	return strings.Join(parts, ", ")
}
