package analyze

import (
	"container/heap"
	"math"
	"sort"
)

// InterferenceReport attributes the ITL tail to prefills: for every gap
// between two responses of a request at or above the run's ITL P99, did
// another request's first token (its prefill finishing) arrive inside it?
// Beside the share that did, the share expected by chance: for a gap of
// length L, the fraction of the run's span in which an interval of length
// L would hold at least one first token (from the sorted first-token
// times, (L + Σ min(dᵢ, L)) / span over their successive differences dᵢ),
// averaged over the tail gaps; and, for reference, the share among all of
// the run's gaps. A share well above the chance share says the tail is
// prefill interference (new requests' prompts processed between this
// request's decode steps: sarathi-serve's "generation stalls", Agrawal et
// al., OSDI 2024); near it, the stalls have another cause.
//
// Gap times are rebuilt from the report's own numbers: a request's first
// response at start + TTFT, then each pooled ITL sample after the last
// (k-token chunks split, as the convention pools them). First tokens count
// from every request of the run with one (every status, selected or not);
// gaps from the report's counted requests.
type InterferenceReport struct {
	ThresholdMs F `json:"threshold_ms"`
	// TailGaps are the gaps ≥ ThresholdMs; WithPrefill those holding
	// another request's first token; Share = WithPrefill / TailGaps.
	TailGaps    int `json:"tail_gaps"`
	WithPrefill int `json:"tail_gaps_with_prefill"`
	Share       F   `json:"share"`
	// ExpectedShare is the chance share for gaps of the tail gaps' lengths.
	ExpectedShare F `json:"expected_share"`
	// AllGaps, AllWithPrefill and AllShare are the same over every gap
	// (zero gaps, between tokens of one message, included: they hold
	// nothing).
	AllGaps        int `json:"all_gaps"`
	AllWithPrefill int `json:"all_gaps_with_prefill"`
	AllShare       F   `json:"all_share"`
	// Longest are the longest gaps (at most 10) with the requests whose
	// first token arrived inside each.
	Longest []LongGap `json:"longest"`
}

// LongGap is one long gap of a request.
type LongGap struct {
	Key int64 `json:"request_key"`
	// Gap is its 1-based position among the request's pooled gaps.
	Gap     int     `json:"gap"`
	StartNs int64   `json:"start_ns"`
	Start   string  `json:"start,omitempty"`
	Ms      F       `json:"ms"`
	Prefill []int64 `json:"prefills_inside"`
}

// interference computes the report over the counted requests of reqs
// (their gaps in itl, ITLSamples each), with first tokens from all (every
// request of the run). thresholdMs is the run's ITL P99. nil when there is
// nothing to attribute (no gap, no start time, per-request gaps unknown).
func interference(reqs []RequestMetrics, itl []float64, all []RequestMetrics, thresholdMs float64, rt *runTimes) *InterferenceReport {
	if math.IsNaN(thresholdMs) || !rt.hasStart || len(itl) == 0 {
		return nil
	}
	total := 0
	for i := range reqs {
		total += reqs[i].ITLSamples
	}
	if total != len(itl) {
		return nil
	}
	type ft struct {
		t   int64
		key int64
	}
	var firsts []ft
	for i := range all {
		m := &all[i]
		if m.HasStart && !math.IsNaN(m.TTFTMs) {
			firsts = append(firsts, ft{m.StartNs + int64(math.Round(m.TTFTMs*1e6)), m.Key})
		}
	}
	if len(firsts) == 0 {
		return nil
	}
	sort.Slice(firsts, func(a, b int) bool { return firsts[a].t < firsts[b].t })
	// chance: successive differences of the first-token times
	diffs := make([]float64, 0, len(firsts))
	for k := 1; k < len(firsts); k++ {
		diffs = append(diffs, float64(firsts[k].t-firsts[k-1].t))
	}
	sort.Float64s(diffs)
	prefix := make([]float64, len(diffs)+1)
	for k, d := range diffs {
		prefix[k+1] = prefix[k] + d
	}
	span := float64(rt.tLast - rt.t0)
	chance := func(L float64) float64 {
		if span <= 0 {
			return math.NaN()
		}
		k := sort.SearchFloat64s(diffs, L) // diffs[:k] < L
		cover := L + prefix[k] + L*float64(len(diffs)-k)
		return math.Min(1, cover/span)
	}
	rep := &InterferenceReport{ThresholdMs: F(thresholdMs), Longest: []LongGap{}}
	var chanceSum float64
	top := &gapHeap{}
	off := 0
	for i := range reqs {
		m := &reqs[i]
		n := m.ITLSamples
		g := itl[off : off+n]
		off += n
		if n == 0 || !m.HasStart || math.IsNaN(m.TTFTMs) {
			continue
		}
		tMs := m.TTFTMs
		a := m.StartNs + int64(math.Round(tMs*1e6))
		p := sort.Search(len(firsts), func(k int) bool { return firsts[k].t > a })
		for gi, d := range g {
			tMs += d
			b := m.StartNs + int64(math.Round(tMs*1e6))
			for p < len(firsts) && firsts[p].t <= a {
				p++
			}
			// (a, b]: empty for a zero gap (tokens of one chunk)
			inside := b > a && p < len(firsts) && firsts[p].t <= b
			rep.AllGaps++
			if inside {
				rep.AllWithPrefill++
			}
			if d >= thresholdMs {
				rep.TailGaps++
				if inside {
					rep.WithPrefill++
				}
				chanceSum += chance(float64(b - a))
				if top.Len() < 10 || F(d) > (*top)[0].Ms {
					lg := longGap{LongGap: LongGap{Key: m.Key, Gap: gi + 1, StartNs: a, Ms: F(d)}, p: p, b: b}
					if top.Len() == 10 {
						heap.Pop(top)
					}
					heap.Push(top, lg)
				}
			}
			a = b
		}
	}
	if rep.AllGaps == 0 {
		return nil
	}
	rep.Share = F(div(float64(rep.WithPrefill), float64(rep.TailGaps)))
	rep.ExpectedShare = F(div(chanceSum, float64(rep.TailGaps)))
	rep.AllShare = F(div(float64(rep.AllWithPrefill), float64(rep.AllGaps)))
	lg := []longGap(*top)
	sort.Slice(lg, func(x, y int) bool { return lg[x].Ms > lg[y].Ms })
	for _, g := range lg {
		out := g.LongGap
		out.Prefill = []int64{}
		for k := g.p; k < len(firsts) && firsts[k].t <= g.b; k++ {
			if len(out.Prefill) == 10 {
				break
			}
			out.Prefill = append(out.Prefill, firsts[k].key)
		}
		if rt.clock == "unix" {
			out.Start = rfc3339(out.StartNs)
		}
		rep.Longest = append(rep.Longest, out)
	}
	return rep
}

// longGap is a LongGap with where its prefills start in the first-token
// list (p) and its end (b).
type longGap struct {
	LongGap
	p int
	b int64
}

// gapHeap is a min-heap of the longest gaps seen.
type gapHeap []longGap

func (h gapHeap) Len() int           { return len(h) }
func (h gapHeap) Less(i, j int) bool { return h[i].Ms < h[j].Ms }
func (h gapHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *gapHeap) Push(x any)        { *h = append(*h, x.(longGap)) }
func (h *gapHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }
