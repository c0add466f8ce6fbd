package analyze

import (
	"fmt"
	"math"
	"sort"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// The request dimensions the 2026 tools added: the prefix cache and
// sessions of turns (formats.Request.CachedInputTokens, SessionID,
// TurnIndex). Each block of the report is present only where the run has
// the data.

// CacheHitShare is the share of a request's input read from the prefix
// cache from which ttft_by_cache calls it a hit; below it, a request with
// some cached tokens is partial, one with none a miss.
const CacheHitShare = 0.9

// CacheReport is runs[].cache: the prefix cache over the run's completed
// requests whose input and cached counts are both known.
type CacheReport struct {
	// CachedInputTokens and InputTokens are their sums; HitFraction the
	// token-weighted share Σ cached / Σ input (AIPerf's
	// overall_usage_prompt_cache_read_pct / 100: ai-dynamo/aiperf
	// usage_prompt_cache_read_tokens over usage_prompt_tokens).
	CachedInputTokens int64 `json:"cached_input_tokens"`
	InputTokens       int64 `json:"input_tokens"`
	HitFraction       F     `json:"hit_fraction"`
	// Requests are the requests counted; Unknown the completed requests
	// without a cached or an input count (no usage details: unknown, not
	// misses).
	Requests int `json:"requests"`
	Unknown  int `json:"unknown"`
	// OverInput counts requests whose cached count exceeds their input
	// count (the cached_exceeds_input check); they are left out.
	OverInput int `json:"over_input"`
}

// CacheBucket is one class of ttft_by_cache: "miss" (no cached token),
// "partial" or "hit" (cached ≥ CacheHitShare of the input), with the TTFT
// percentiles of its requests.
type CacheBucket struct {
	Bucket string `json:"bucket"`
	N      int    `json:"n"`
	P50    F      `json:"p50_ms"`
	P90    F      `json:"p90_ms"`
	P99    F      `json:"p99_ms"`
}

// cacheReport is the run's cache block and TTFT by cache class; nil, nil
// when no completed request has a cached count.
func cacheReport(reqs []RequestMetrics, c convention.Convention) (*CacheReport, []CacheBucket) {
	rep := &CacheReport{}
	by := map[string][]float64{}
	for i := range reqs {
		m := &reqs[i]
		if !m.Counted {
			continue
		}
		if math.IsNaN(m.CachedInputTokens) || math.IsNaN(m.InputTokens) {
			rep.Unknown++
			continue
		}
		if m.CachedInputTokens > m.InputTokens {
			rep.OverInput++
			continue
		}
		rep.Requests++
		rep.CachedInputTokens += int64(m.CachedInputTokens)
		rep.InputTokens += int64(m.InputTokens)
		class := "partial"
		switch {
		case m.CachedInputTokens == 0:
			class = "miss"
		case m.CachedInputTokens >= CacheHitShare*m.InputTokens:
			class = "hit"
		}
		if !math.IsNaN(m.TTFTMs) {
			by[class] = append(by[class], m.TTFTMs)
		}
	}
	if rep.Requests == 0 && rep.OverInput == 0 {
		return nil, nil
	}
	rep.HitFraction = F(div(float64(rep.CachedInputTokens), float64(rep.InputTokens)))
	var out []CacheBucket
	for _, class := range []string{"miss", "partial", "hit"} {
		s := stats.SortedCopy(by[class])
		if len(s) == 0 {
			continue
		}
		b := CacheBucket{Bucket: class, N: len(s)}
		b.P50, b.P90, b.P99 = tailPercentiles(s, c)
		out = append(out, b)
	}
	return rep, out
}

// SessionsReport is runs[].sessions: the run's sessions of turns
// (Request.SessionID), present when some session has more than one
// request. A session fails when any of its turns fails or is cancelled.
type SessionsReport struct {
	Count     int `json:"count"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// TurnsMean is the mean number of requests per session.
	TurnsMean F `json:"turns_mean"`
	// Duration is the sessions' span, first turn's start → last turn's
	// end (sessions with every turn timed).
	Duration SessionDuration `json:"duration_ms"`
}

// SessionDuration holds the session spans' percentiles.
type SessionDuration struct {
	N   int `json:"n"`
	P50 F   `json:"p50_ms"`
	P99 F   `json:"p99_ms"`
}

// TurnBucket is one turn index of ttft_by_turn: the TTFT percentiles of
// the completed requests at that turn (the later turns of a chat re-send
// the history: their prefill grows, or the cache absorbs it).
type TurnBucket struct {
	Turn int64 `json:"turn"`
	N    int   `json:"n"`
	P50  F     `json:"p50_ms"`
	P90  F     `json:"p90_ms"`
	P99  F     `json:"p99_ms"`
}

// sessionsReport is the run's sessions and TTFT by turn; nil, nil when no
// session has more than one request.
func sessionsReport(reqs []RequestMetrics, c convention.Convention) (*SessionsReport, []TurnBucket) {
	type sess struct {
		n              int
		failed, untime bool
		from, to       int64
	}
	by := map[string]*sess{}
	var order []string
	multi := false
	for i := range reqs {
		m := &reqs[i]
		if m.SessionID == "" {
			continue
		}
		s := by[m.SessionID]
		if s == nil {
			s = &sess{from: math.MaxInt64, to: math.MinInt64}
			by[m.SessionID] = s
			order = append(order, m.SessionID)
		}
		s.n++
		if s.n > 1 {
			multi = true
		}
		if m.Status == formats.StatusError || m.Status == formats.StatusCancelled {
			s.failed = true
		}
		if !m.HasStart || m.EndOffsetNs < 0 {
			s.untime = true
			continue
		}
		s.from, s.to = min(s.from, m.StartNs), max(s.to, m.StartNs+m.EndOffsetNs)
	}
	if !multi {
		return nil, nil
	}
	rep := &SessionsReport{Count: len(order)}
	var durs []float64
	turns := 0
	for _, id := range order {
		s := by[id]
		turns += s.n
		if s.failed {
			rep.Failed++
		} else {
			rep.Completed++
		}
		if !s.untime {
			durs = append(durs, float64(s.to-s.from)/1e6)
		}
	}
	rep.TurnsMean = F(float64(turns) / float64(len(order)))
	meth := stats.Method(c.Percentile)
	sorted := stats.SortedCopy(durs)
	rep.Duration = SessionDuration{N: len(sorted), P50: F(stats.Percentile(sorted, 0.5, meth)), P99: F(stats.Percentile(sorted, 0.99, meth))}
	byTurn := map[int64][]float64{}
	for i := range reqs {
		m := &reqs[i]
		if m.Counted && m.SessionID != "" && m.TurnIndex >= 0 && !math.IsNaN(m.TTFTMs) {
			byTurn[m.TurnIndex] = append(byTurn[m.TurnIndex], m.TTFTMs)
		}
	}
	keys := make([]int64, 0, len(byTurn))
	for k := range byTurn {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	var out []TurnBucket
	for _, k := range keys {
		s := stats.SortedCopy(byTurn[k])
		b := TurnBucket{Turn: k, N: len(s)}
		b.P50, b.P90, b.P99 = tailPercentiles(s, c)
		out = append(out, b)
	}
	return rep, out
}

// tailPercentiles are P50, P90 and P99 of sorted under c's percentile
// method (the buckets' statistics).
func tailPercentiles(sorted []float64, c convention.Convention) (p50, p90, p99 F) {
	m := stats.Method(c.Percentile)
	return F(stats.Percentile(sorted, 0.5, m)), F(stats.Percentile(sorted, 0.9, m)), F(stats.Percentile(sorted, 0.99, m))
}

// cacheWarning is the cached_exceeds_input data check of a run's cache
// block (nil when it holds).
func cacheWarning(rep *CacheReport) *Warning {
	if rep == nil || rep.OverInput == 0 {
		return nil
	}
	return &Warning{Code: TrapCachedExceedsInput, DataCheck: true, Count: int64(rep.OverInput), Source: trapSource(TrapCachedExceedsInput),
		Message: fmt.Sprintf("%d completed request(s) report more cached prompt tokens than prompt tokens: left out of the cache block (cached tokens are part of the prompt)", rep.OverInput)}
}

// SpecDecodeReport is runs[].spec_decode: speculative decoding over the
// completed requests whose response carried the server's counts.
type SpecDecodeReport struct {
	// AcceptanceLengthMean is 1 + Σ accepted / Σ steps (tokens per
	// verification step, the bonus token included); DraftAcceptanceRate Σ
	// accepted / Σ draft tokens (vLLM's mean_acceptance_length and
	// draft_acceptance_rate, pooled over the run).
	AcceptanceLengthMean F `json:"acceptance_length_mean"`
	DraftAcceptanceRate  F `json:"draft_acceptance_rate"`
	// Requests are the requests counted; Steps, DraftTokens and
	// AcceptedTokens their sums.
	Requests       int   `json:"requests"`
	Steps          int64 `json:"steps"`
	DraftTokens    int64 `json:"draft_tokens"`
	AcceptedTokens int64 `json:"accepted_tokens"`
}

// specDecodeReport is the run's spec_decode block; nil when no completed
// request has the counts. ITL and TPOT stay per token: a step that emits
// k tokens in one message is k gaps under the canonical convention.
func specDecodeReport(reqs []RequestMetrics) *SpecDecodeReport {
	rep := &SpecDecodeReport{}
	for i := range reqs {
		m := &reqs[i]
		if !m.Counted || !(m.SpecSteps > 0) || math.IsNaN(m.AcceptedTokens) {
			continue
		}
		rep.Requests++
		rep.Steps += int64(m.SpecSteps)
		rep.AcceptedTokens += int64(m.AcceptedTokens)
		if !math.IsNaN(m.DraftTokens) {
			rep.DraftTokens += int64(m.DraftTokens)
		}
	}
	if rep.Requests == 0 {
		return nil
	}
	rep.AcceptanceLengthMean = F(1 + float64(rep.AcceptedTokens)/float64(rep.Steps))
	rep.DraftAcceptanceRate = F(div(float64(rep.AcceptedTokens), float64(rep.DraftTokens)))
	return rep
}
