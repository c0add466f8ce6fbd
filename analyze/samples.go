package analyze

import (
	"math"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// samples are a run's per-quantity values under one convention: one value
// per counted request (ttft, tpot, …), the pooled ITL gaps, and values
// derived from them the way peer tools derive per-request rates. Weights
// are nil except where the convention weights samples by tokens.
type samples struct {
	values  map[string][]float64
	weights map[string][]float64

	pairOSL, pairE2E, pairISL, pairTTFT []float64

	anyReasoning bool
	tokensKnown  bool
	noEvents     bool
	sumN         float64
	sumMsgs      float64
	counted      int
	tokErr       string
}

// Quantities are the per-request and pooled sample names samplesOf
// produces, in milliseconds for times and tokens for counts:
//
//	ttft ttfo ttst e2e tpot itl osl isl           the report's metrics
//	max_itl                                       each streaming request's largest gap
//	stream_end_ms                                 start → stream end
//	tpot_tokens_per_s                             1000 / tpot (AIPerf, GenAI-Perf per-user rate)
//	osl_per_e2e_s                                 osl / e2e in seconds (per-request output rate)
//	isl_per_ttft_s                                isl / ttft in seconds (prefill rate)
//	osl_usage isl_usage isl_reported usage_total  server and tool counts
//	error_isl                                     input tokens of failed requests
var Quantities = []string{"ttft", "ttfo", "ttst", "e2e", "tpot", "itl", "max_itl", "osl", "isl", "stream_end_ms",
	"tpot_tokens_per_s", "osl_per_e2e_s", "isl_per_ttft_s", "osl_usage", "isl_usage", "isl_reported", "usage_total", "error_isl"}

func samplesOf(c convention.Convention, reqs []RequestMetrics, itl []float64, streaming bool) *samples {
	s := &samples{values: map[string][]float64{}, weights: map[string][]float64{}, tokensKnown: true, noEvents: true}
	add := func(q string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s.values[q] = append(s.values[q], v)
		}
	}
	weighted := c.Percentile == convention.PercentileWeightedNearestRank
	for i := range reqs {
		m := &reqs[i]
		if m.Messages > 0 {
			s.noEvents = false
		}
		if !m.Counted {
			if m.Status == formats.StatusError || m.Status == formats.StatusCancelled {
				add("error_isl", m.InputTokens)
			}
			continue
		}
		s.counted++
		if m.HasReasoning {
			s.anyReasoning = true
		}
		if !m.TokensPerMessageKnown {
			s.tokensKnown = false
		}
		if !math.IsNaN(m.OutputTokens) && m.Responses > 0 {
			s.sumN += m.OutputTokens
			s.sumMsgs += float64(m.Responses)
		}
		if m.TokenizerErr != "" && s.tokErr == "" {
			s.tokErr = m.TokenizerErr
		}
		add("ttft", m.TTFTMs)
		add("ttfo", m.TTFOMs)
		add("e2e", m.E2EMs)
		add("stream_end_ms", m.StreamEndMs)
		add("osl", m.OutputTokens)
		add("isl", m.InputTokens)
		add("osl_usage", m.OutputUsage)
		add("isl_usage", m.InputUsage)
		add("isl_reported", m.InputReported)
		add("usage_total", m.InputUsage+m.OutputUsage)
		add("osl_per_e2e_s", m.OutputTokens/(m.E2EMs/1e3))
		add("isl_per_ttft_s", m.InputTokens/(m.TTFTMs/1e3))
		s.pairOSL = append(s.pairOSL, m.OutputTokens)
		s.pairE2E = append(s.pairE2E, m.E2EMs)
		s.pairISL = append(s.pairISL, m.InputTokens)
		s.pairTTFT = append(s.pairTTFT, m.TTFTMs)
		if !streaming || m.NonStreaming {
			continue
		}
		add("ttst", m.TTSTMs)
		add("max_itl", m.MaxITLMs)
		if !math.IsNaN(m.TPOTMs) {
			add("tpot", m.TPOTMs)
			add("tpot_tokens_per_s", 1e3/m.TPOTMs)
			if weighted {
				s.weights["tpot"] = append(s.weights["tpot"], m.TPOTTokens)
			}
		}
		if c.ITL == convention.ITLPerRequestMean && !math.IsNaN(m.ITLMeanMs) {
			add("itl", m.ITLMeanMs)
			if weighted {
				s.weights["itl"] = append(s.weights["itl"], m.OutputTokens-1)
			}
		}
	}
	if streaming && c.ITL != convention.ITLPerRequestMean {
		s.values["itl"] = itl
	}
	if s.noEvents {
		s.tokensKnown = false
	}
	return s
}

// summary summarizes quantity q under c at the percentiles ps (weighted
// when c's percentile method is weighted and q has weights).
func (s *samples) summary(q string, c convention.Convention, ps []float64) stats.Summary {
	if w := s.weights[q]; w != nil && c.Percentile == convention.PercentileWeightedNearestRank {
		return stats.SummarizeWeighted(s.values[q], w, ps)
	}
	return stats.Summarize(s.values[q], ps, stats.Method(c.Percentile), c.StdDDOF)
}
