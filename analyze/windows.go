package analyze

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// MaxWindows bounds the number of windows one run's report may have
// (report --window): a width that cuts the run into more is an error.
const MaxWindows = 100_000

// WindowsReport is a run cut into fixed time windows (report --window):
// per window, the requests attributed to it and their statistics.
//
// Attribution: a request belongs to the window holding its start (By
// "start"), or its end (By "end": its recorded end, or for a request
// without one the bound of its in_flight columns). Windows are aligned on
// the clock: on a Unix clock, for a width that divides a day (1s, 10s, 5m,
// 1h, 24h …), their edges are multiples of the width since the Unix epoch
// (a 10m window starts at 22:40:00 UTC); for other widths, and on another
// clock, multiples of the width from the first request's start. They run
// from the first attributed request to the last end of one (tokens still
// arriving count in the windows they arrive in), so the first and last
// windows may be partly before the first start or after the last end.
// Windows without requests are kept, so the time axis has no holes.
//
// A percentile p of a window is given only over at least ⌈1/(1−p)⌉
// values (P50 over 2, P90 over 10, P99 over 100: fewer cannot show a
// 1-in-(1/(1−p)) tail; the report's few_samples warning uses the same
// 100 for P99); with fewer it is null and the window's maximum stands
// beside it, and Few marks the window.
//
// Memory: the report's own per-request metrics and pooled gaps are all it
// reads (no event is held); it adds the windows themselves (one entry
// each) and, while one window is computed, a copy of that window's
// values and gaps (8 bytes each).
type WindowsReport struct {
	WidthS float64  `json:"width_s"`
	By     string   `json:"by"`
	Rule   string   `json:"rule"`
	Items  []Window `json:"windows"`
}

// Window is one time window of a run.
type Window struct {
	// StartNs is the window's start in the run's clock; Start the same as
	// RFC 3339 UTC on a Unix clock; OffsetS seconds from the run's first
	// request start (negative for a window that starts before it).
	StartNs int64  `json:"start_ns"`
	Start   string `json:"start,omitempty"`
	OffsetS F      `json:"offset_s"`
	// Started counts the requests attributed to the window; Completed,
	// Failed (status error), Cancelled and Empty split them by status.
	Started   int `json:"started"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Empty     int `json:"empty"`
	// TTFT, TPOT and E2E are over the window's counted requests.
	TTFT WindowStat `json:"ttft_ms"`
	TPOT WindowStat `json:"tpot_ms"`
	E2E  WindowStat `json:"e2e_ms"`
	// ITLP99Ms is the P99 of the pooled token gaps of the window's
	// counted requests (ITLN gaps; null under 100).
	ITLP99Ms F   `json:"itl_p99_ms"`
	ITLN     int `json:"itl_n"`
	// CoveredS is the part of the window within the run (from the first
	// attributed request to the last end of one): the width, except for
	// a first or last window that reaches past the run.
	CoveredS F `json:"covered_s"`
	// OutputTokensPerS is the output tokens that arrived within the window
	// over CoveredS: each counted request's N spread evenly over its
	// responses' arrival times (first token, then each pooled gap), as
	// SGLang's steady-state mode counts tokens in a window.
	OutputTokensPerS F `json:"output_tokens_per_s"`
	// Goodput is the SLO's good requests among those attributed (null
	// without --slo): their share and their rate over CoveredS.
	Goodput *WindowGoodput `json:"goodput"`
	// InFlightMean is the time-weighted mean of requests in flight over the
	// window's covered part (every request of the run; unrecorded ends
	// bounded), and InFlightMax the largest count.
	InFlightMean F   `json:"in_flight_mean"`
	InFlightMax  int `json:"in_flight_max"`
	// Few is true when a percentile of the window rests on too few values
	// and is null.
	Few bool `json:"few"`
}

// WindowStat is one metric over a window's requests.
type WindowStat struct {
	N   int `json:"n"`
	P50 F   `json:"p50"`
	P90 F   `json:"p90"`
	P99 F   `json:"p99"`
	Max F   `json:"max"`
}

// WindowGoodput is one window's goodput.
type WindowGoodput struct {
	Good     int `json:"good"`
	Fraction F   `json:"fraction"`
	RateS    F   `json:"requests_per_s"`
}

// minForPercentile is the fewest values percentile p is given over:
// ⌈1/(1−p)⌉.
func minForPercentile(p float64) int { return int(math.Ceil(1/(1-p) - 1e-9)) }

// windowRule is WindowsReport.Rule.
const windowRule = "a percentile p is given over at least ⌈1/(1−p)⌉ values (P50: 2, P90: 10, P99: 100); with fewer it is null and few is set, the window's max beside it"

// windowStat summarizes vals (scratch: reordered) by method m.
func windowStat(vals []float64, m convention.PercentileMethod) (WindowStat, bool) {
	s := WindowStat{N: len(vals), P50: F(math.NaN()), P90: F(math.NaN()), P99: F(math.NaN()), Max: F(math.NaN())}
	sorted := sortedFinite(vals)
	s.N = len(sorted)
	few := false
	if s.N == 0 {
		return s, false
	}
	s.Max = F(sorted[s.N-1])
	for _, q := range []struct {
		p   float64
		dst *F
	}{{0.5, &s.P50}, {0.9, &s.P90}, {0.99, &s.P99}} {
		if s.N >= minForPercentile(q.p) {
			*q.dst = F(stats.Percentile(sorted, q.p, stats.Method(m)))
		} else {
			few = true
		}
	}
	return s, few
}

// sortedFinite sorts xs in place after moving NaN and ±Inf out; it returns
// the finite prefix.
func sortedFinite(xs []float64) []float64 {
	n := 0
	for _, v := range xs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs[n] = v
			n++
		}
	}
	xs = xs[:n]
	sort.Float64s(xs)
	return xs
}

// windows cuts a run's requests (reqs, with their pooled gaps itl, and
// keep marking the selected ones; nil: all) into windows of widthNs.
func windows(c convention.Convention, reqs []RequestMetrics, itl []float64, keep []bool, rt *runTimes, widthNs int64, byEnd bool, slo SLO) (*WindowsReport, error) {
	by := "start"
	if byEnd {
		by = "end"
	}
	rep := &WindowsReport{WidthS: float64(widthNs) / 1e9, By: by, Rule: windowRule, Items: []Window{}}
	if !rt.hasStart {
		return rep, nil
	}
	// the requests' gap offsets in itl
	gapOff := make([]int, len(reqs)+1)
	for i := range reqs {
		gapOff[i+1] = gapOff[i] + reqs[i].ITLSamples
	}
	if gapOff[len(reqs)] != len(itl) {
		gapOff = nil // per-request gaps unknown: no window ITL
	}
	// attribution
	first, last, lastEnd := int64(math.MaxInt64), int64(math.MinInt64), int64(math.MinInt64)
	type att struct {
		w int64
		i int
	}
	var atts []att
	for i := range reqs {
		if keep != nil && !keep[i] {
			continue
		}
		t, ok := rt.at(i, byEnd)
		if !ok {
			continue
		}
		first, last = min(first, t), max(last, t)
		if e, ok := rt.at(i, true); ok {
			lastEnd = max(lastEnd, e) // the windows run on while its tokens arrive
		}
		atts = append(atts, att{0, i})
	}
	if len(atts) == 0 {
		return rep, nil
	}
	origin := rt.t0
	if rt.clock == formats.ClockUnix && dayNs%widthNs == 0 {
		origin = 0
	}
	idx := func(t int64) int64 { return floorDiv(t-origin, widthNs) }
	spanEnd := max(last, lastEnd) + 1 // the last instant inside
	w0, w1 := idx(first), idx(spanEnd-1)
	if w1-w0+1 > MaxWindows {
		return nil, fmt.Errorf("--window %s cuts the run into %d windows (at most %d): give a wider window", fmtDurNs(widthNs), w1-w0+1, MaxWindows)
	}
	for k := range atts {
		t, _ := rt.at(atts[k].i, byEnd)
		atts[k].w = idx(t)
	}
	sort.SliceStable(atts, func(a, b int) bool { return atts[a].w < atts[b].w })
	// token arrivals, for output tok/s: each counted request's N spread
	// over its responses; accumulated per window as they fall
	tokens := make([]float64, w1-w0+1)
	for _, a := range atts {
		m := &reqs[a.i]
		if !m.Counted || math.IsNaN(m.OutputTokens) || !m.HasStart {
			continue
		}
		spreadTokens(m, itl, gapOff, a.i, func(tNs int64, n float64) {
			if k := idx(tNs) - w0; k >= 0 && k < int64(len(tokens)) {
				tokens[k] += n
			}
		})
	}
	var ttft, tpot, e2e, gaps []float64
	j := 0
	for w := w0; w <= w1; w++ {
		start := origin + w*widthNs
		win := Window{StartNs: start, OffsetS: F(float64(start-rt.t0) / 1e9)}
		if rt.clock == formats.ClockUnix {
			win.Start = rfc3339(start)
		}
		ttft, tpot, e2e, gaps = ttft[:0], tpot[:0], e2e[:0], gaps[:0]
		var group []RequestMetrics
		for ; j < len(atts) && atts[j].w == w; j++ {
			i := atts[j].i
			m := &reqs[i]
			win.Started++
			switch m.Status {
			case formats.StatusOK:
				win.Completed++
			case formats.StatusEmpty:
				win.Empty++
			case formats.StatusCancelled:
				win.Cancelled++
			default:
				win.Failed++
			}
			if slo.Constraints != nil {
				group = append(group, *m)
			}
			if !m.Counted {
				continue
			}
			ttft = append(ttft, m.TTFTMs)
			tpot = append(tpot, m.TPOTMs)
			e2e = append(e2e, m.E2EMs)
			if gapOff != nil {
				gaps = append(gaps, itl[gapOff[i]:gapOff[i+1]]...)
			}
		}
		var few [4]bool
		win.TTFT, few[0] = windowStat(ttft, c.Percentile)
		win.TPOT, few[1] = windowStat(tpot, c.Percentile)
		win.E2E, few[2] = windowStat(e2e, c.Percentile)
		win.ITLP99Ms = F(math.NaN())
		if gapOff != nil {
			g := sortedFinite(gaps)
			win.ITLN = len(g)
			if len(g) >= minForPercentile(0.99) {
				win.ITLP99Ms = F(stats.Percentile(g, 0.99, stats.Method(c.Percentile)))
			} else if len(g) > 0 {
				few[3] = true
			}
		}
		win.Few = few[0] || few[1] || few[2] || few[3]
		covFrom, covTo := max(start, first), min(addSat(start, widthNs), spanEnd)
		covS := math.NaN()
		if covTo > covFrom {
			covS = float64(covTo-covFrom) / 1e9
		}
		win.CoveredS = F(covS)
		win.OutputTokensPerS = F(tokens[w-w0] / covS)
		if slo.Constraints != nil {
			good, _ := countGood(slo, group)
			win.Goodput = &WindowGoodput{Good: good, Fraction: F(div(float64(good), float64(win.Started))), RateS: F(float64(good) / covS)}
		}
		win.InFlightMean, win.InFlightMax = inFlightOver(rt.steps, covFrom, covTo)
		rep.Items = append(rep.Items, win)
	}
	return rep, nil
}

// spreadTokens calls add(t, n) for each response arrival of a counted
// request m (index i): its first token at start + TTFT, then one arrival
// after each pooled gap (itl[gapOff[i]:gapOff[i+1]]), the request's N
// shared equally among them; without gaps (non-streaming, per-request ITL
// conventions) all N at start + E2E (else + TTFT).
func spreadTokens(m *RequestMetrics, itl []float64, gapOff []int, i int, add func(tNs int64, n float64)) {
	n := m.OutputTokens
	first := m.TTFTMs
	var g []float64
	if gapOff != nil && !math.IsNaN(first) {
		g = itl[gapOff[i]:gapOff[i+1]]
	}
	if len(g) == 0 {
		at := m.E2EMs
		if math.IsNaN(at) {
			at = first
		}
		if !math.IsNaN(at) {
			add(m.StartNs+int64(math.Round(at*1e6)), n)
		}
		return
	}
	share := n / float64(len(g)+1)
	t := first
	add(m.StartNs+int64(math.Round(t*1e6)), share)
	for _, d := range g {
		t += d
		add(m.StartNs+int64(math.Round(t*1e6)), share)
	}
}

// inFlightOver is the time-weighted mean and the maximum of the step
// function over [from, to).
func inFlightOver(steps []formats.Step, from, to int64) (F, int) {
	if to <= from {
		return F(math.NaN()), 0
	}
	// the count holding at from
	k := sort.Search(len(steps), func(i int) bool { return steps[i].TimeNs > from })
	cur := 0
	if k > 0 {
		cur = steps[k-1].Count
	}
	mx := cur
	var area float64
	t := from
	for ; k < len(steps) && steps[k].TimeNs < to; k++ {
		area += float64(cur) * float64(steps[k].TimeNs-t)
		t, cur = steps[k].TimeNs, steps[k].Count
		mx = max(mx, cur)
	}
	area += float64(cur) * float64(to-t)
	return F(area / float64(to-from)), mx
}

// dayNs is a day in ns: widths that divide it align on the epoch.
const dayNs = int64(24 * 3600 * 1e9)

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// fmtDurNs writes a duration in ns the way Go parses it back ("30s").
func fmtDurNs(ns int64) string { return time.Duration(ns).String() }
