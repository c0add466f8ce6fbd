package analyze

import (
	"math"
	"sort"

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

func samplesOf(c Convention, reqs []RequestMetrics, itl []float64, streaming bool) *samples {
	s := &samples{values: map[string][]float64{}, weights: map[string][]float64{}, tokensKnown: true, noEvents: true}
	add := func(q string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s.values[q] = append(s.values[q], v)
		}
	}
	weighted := c.Percentile == PercentileWeightedNearestRank
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
		if c.ITL == ITLPerRequestMean && !math.IsNaN(m.ITLMeanMs) {
			add("itl", m.ITLMeanMs)
			if weighted {
				s.weights["itl"] = append(s.weights["itl"], m.OutputTokens-1)
			}
		}
	}
	if streaming && c.ITL != ITLPerRequestMean {
		s.values["itl"] = itl
	}
	if s.noEvents {
		s.tokensKnown = false
	}
	return s
}

// summary summarizes quantity q under c (weighted when c's percentile
// method is weighted and q has weights).
func (s *samples) summary(q string, c Convention) Summary {
	if w := s.weights[q]; w != nil && c.Percentile == PercentileWeightedNearestRank {
		return SummarizeWeighted(s.values[q], w)
	}
	return Summarize(s.values[q], c.Percentile, c.StdDDOF)
}

// SummarizeWeighted is guidellm's weighted distribution summary: the values
// with their weights form a probability mass function; mean and population
// std come from it, and percentile p is the first value whose cumulative
// probability reaches p (duplicates merged). Source: guidellm v0.4+
// schemas/statistics.py (v0.3 objects/statistics.py).
func SummarizeWeighted(xs, ws []float64) Summary {
	type vw struct{ v, w float64 }
	var pts []vw
	total := 0.0
	for i, x := range xs {
		if i < len(ws) && ws[i] > 0 && !math.IsNaN(x) {
			pts = append(pts, vw{x, ws[i]})
			total += ws[i]
		}
	}
	nan := math.NaN()
	out := Summary{N: len(pts), Mean: nan, Std: nan, Min: nan, Max: nan, P50: nan, P90: nan, P95: nan, P99: nan}
	for i := range out.CI {
		out.CI[i] = [2]float64{nan, nan} // no distribution-free interval for weighted samples
	}
	if len(pts) == 0 {
		return out
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].v < pts[j].v })
	mean := 0.0
	for _, p := range pts {
		mean += p.v * p.w / total
	}
	variance := 0.0
	for _, p := range pts {
		variance += p.w / total * (p.v - mean) * (p.v - mean)
	}
	out.Mean, out.Std, out.Min, out.Max = mean, math.Sqrt(variance), pts[0].v, pts[len(pts)-1].v
	q := func(p float64) float64 {
		cum := 0.0
		for i := 0; i < len(pts); i++ {
			cum += pts[i].w / total
			for i+1 < len(pts) && pts[i+1].v == pts[i].v {
				i++
				cum += pts[i].w / total
			}
			if cum >= p {
				return pts[i].v
			}
		}
		return pts[len(pts)-1].v
	}
	out.P50, out.P90, out.P95, out.P99 = q(0.5), q(0.9), q(0.95), q(0.99)
	return out
}
