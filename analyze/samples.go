package analyze

import (
	"math"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// Samples are a run's per-metric values under one convention (Sample):
// one value per counted request for each per-request metric of the Table,
// the pooled ITL gaps, and the weights of weighted conventions (nil except
// where the convention weights samples by tokens). Values are in each
// metric's unit; the slices are shared with the Analyzer (do not modify).
type Samples struct {
	Values  map[*Metric][]float64
	Weights map[*Metric][]float64
	// Counted is the number of requests in the convention's completed
	// set; AnyReasoning is true when one of them produced reasoning.
	Counted      int
	AnyReasoning bool
	// Failed is the number of failed and cancelled requests counted as +∞
	// in the latencies from the start (convention.FailedInfinite); 0
	// otherwise.
	Failed int
	// AnyScheduled is true when one of them has an intended start (the
	// Scheduled metrics are reported).
	AnyScheduled bool
	// anyStart: one of them has a start time.
	anyStart bool

	pairOSL, pairE2E, pairISL, pairTTFT []float64

	tokensKnown bool
	noEvents    bool
	sumN        float64
	sumMsgs     float64
	tokErr      string
	// retokBelow counts the counted requests whose re-tokenized N was
	// below their token messages; the first one's numbers follow.
	retokBelow     int
	retokFirstN    float64
	retokFirstMsgs int
	// ttstJudged counts the counted streaming requests with a positive
	// TTFT and a TTST; ttstHigh those whose TTST exceeds ttstFactor × TTFT
	// (TrapTTSTExceedsTTFT), the first one's key and values following.
	ttstJudged, ttstHigh   int
	ttstFirst              int64
	ttstFirstTTFT, ttstFst float64
}

// Sample collects, for every per-request metric of the Table, its
// values over the convention's counted requests (over failed and
// cancelled ones for FailedRequests metrics; streaming-only metrics over
// streaming requests only), and the pooled ITL: itl as given, or each
// request's mean gap under ITLPerRequestMean conventions. NaN and infinite
// values are left out.
func Sample(c convention.Convention, reqs []RequestMetrics, itl []float64, streaming bool) *Samples {
	s := &Samples{Values: map[*Metric][]float64{}, Weights: map[*Metric][]float64{}, tokensKnown: true, noEvents: true}
	weighted := c.Percentile == convention.PercentileWeightedNearestRank
	perRequestITL := c.ITL == convention.ITLPerRequestMean
	failedInf := c.FailedLatency == convention.FailedInfinite
	add := func(x *Metric, m *RequestMetrics) {
		v := x.Value(m, Deadlines{})
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		s.Values[x] = append(s.Values[x], v)
		if weighted && x.Weight != nil {
			s.Weights[x] = append(s.Weights[x], x.Weight(m))
		}
	}
	for i := range reqs {
		m := &reqs[i]
		if m.Messages > 0 {
			s.noEvents = false
		}
		if !m.Counted {
			if m.Status == formats.StatusError || m.Status == formats.StatusCancelled {
				for _, x := range Table {
					if x.FailedRequests {
						add(x, m)
					}
				}
				if failedInf {
					// AIPerf adj_*: one +∞ per failure in every latency
					// from the start (the schedule-relative ones where the
					// request had an intended start)
					for _, x := range Table {
						if x.FromStart && (!x.Scheduled || !math.IsNaN(m.DispatchDelayMs)) && (!x.WithReasoning || m.HasReasoning) {
							s.Values[x] = append(s.Values[x], math.Inf(1))
						}
					}
					s.Failed++
				}
			}
			continue
		}
		s.Counted++
		if m.HasReasoning {
			s.AnyReasoning = true
		}
		if !math.IsNaN(m.DispatchDelayMs) {
			s.AnyScheduled = true
		}
		if m.HasStart {
			s.anyStart = true
		}
		if !m.TokensPerMessageKnown {
			s.tokensKnown = false
		}
		if !math.IsNaN(m.OutputTokens) && m.Responses > 0 {
			s.sumN += m.OutputTokens
			s.sumMsgs += float64(m.Responses)
		}
		if m.RetokenizedBelow {
			if s.retokBelow == 0 {
				s.retokFirstN, s.retokFirstMsgs = m.RetokenizedN, m.Responses
			}
			s.retokBelow++
		}
		if m.TokenizerErr != "" && s.tokErr == "" {
			s.tokErr = m.TokenizerErr
		}
		if streaming && !m.NonStreaming && m.TTFTMs > 0 && !math.IsNaN(m.TTSTMs) && !math.IsInf(m.TTSTMs, 0) && !math.IsInf(m.TTFTMs, 0) {
			s.ttstJudged++
			if m.TTSTMs > ttstFactor*m.TTFTMs {
				if s.ttstHigh == 0 {
					s.ttstFirst, s.ttstFirstTTFT, s.ttstFst = m.RequestKey, m.TTFTMs, m.TTSTMs
				}
				s.ttstHigh++
			}
		}
		s.pairOSL = append(s.pairOSL, m.OutputTokens)
		s.pairE2E = append(s.pairE2E, m.E2EMs)
		s.pairISL = append(s.pairISL, m.InputTokens)
		s.pairTTFT = append(s.pairTTFT, m.TTFTMs)
		for _, x := range Table {
			switch {
			case x.Value == nil || x.FailedRequests || x.Parametrised || x.Scope == RunLevel:
			case x.Streaming && (!streaming || m.NonStreaming):
			case x.Scope == Pooled && !perRequestITL:
			default:
				add(x, m)
			}
		}
	}
	if streaming && !perRequestITL {
		s.Values[ITL] = itl
	}
	if s.noEvents {
		s.tokensKnown = false
	}
	return s
}

// Summary summarizes metric x under c at the percentiles ps (nil: the
// defaults), weighted when c's percentile method is weighted and x has
// weights.
func (s *Samples) Summary(x *Metric, c convention.Convention, ps []float64) stats.Summary {
	if w := s.Weights[x]; w != nil && c.Percentile == convention.PercentileWeightedNearestRank {
		return stats.SummarizeWeighted(s.Values[x], w, ps)
	}
	return stats.Summarize(s.Values[x], ps, stats.Method(c.Percentile), c.StdDDOF)
}
