package analyze

import (
	"math"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// RequestMetrics are one request's metrics under a Convention. Times are in
// milliseconds; NaN means undefined (no such event, or the formula does not
// apply), never zero.
type RequestMetrics struct {
	Status string
	// StartNs is the request's start in its clock (0 with HasStart false).
	StartNs  int64
	HasStart bool
	// TTFTMs: start → the convention's TTFT message.
	TTFTMs float64
	// TTFOMs: start → the first content (non-reasoning) message.
	TTFOMs float64
	// TTSTMs: first → second token-carrying message.
	TTSTMs float64
	// E2EMs: start → the convention's E2E message.
	E2EMs float64
	// TPOTMs: the convention's TPOT formula; NaN for N ≤ 1 or unknown N.
	TPOTMs float64
	// OutputTokens is N (NaN when unknown) and OutputSource where it came
	// from.
	OutputTokens float64
	OutputSource string
	// InputTokens is the ISL (NaN when unknown).
	InputTokens float64
	// HasReasoning is true when the request produced reasoning tokens.
	HasReasoning bool
	// TokensPerMessageKnown is true when every gap's token count was known.
	TokensPerMessageKnown bool
	// TokenMessages is the number of token-carrying messages.
	TokenMessages int64
}

func nsToMs(p *int64) float64 {
	if p == nil {
		return math.NaN()
	}
	return float64(*p) / 1e6
}

func optF(p *int64) float64 {
	if p == nil {
		return math.NaN()
	}
	return float64(*p)
}

// ComputeRequest returns r's metrics under c and appends r's ITL samples
// (ms) to itl, returning the extended slice. events are r's events in
// arrival order (nil for sources without per-message data, whose metrics
// then come from r's offsets).
func ComputeRequest(c Convention, r *formats.Request, events []formats.Event, itl []float64) (RequestMetrics, []float64) {
	m := RequestMetrics{
		Status:        r.Status,
		TTFTMs:        math.NaN(),
		TTFOMs:        nsToMs(r.FirstContentOffsetNs),
		TTSTMs:        math.NaN(),
		E2EMs:         math.NaN(),
		TPOTMs:        math.NaN(),
		InputTokens:   optF(r.InputTokens),
		TokenMessages: r.TokenMessageCount,
	}
	if r.StartNs != nil {
		m.StartNs, m.HasStart = *r.StartNs, true
	}
	if r.ReasoningTokens != nil && *r.ReasoningTokens > 0 {
		m.HasReasoning = true
	}
	switch c.TTFTStart {
	case TTFTFirstToken:
		m.TTFTMs = nsToMs(r.FirstTokenOffsetNs)
	case TTFTFirstContent:
		m.TTFTMs = nsToMs(r.FirstContentOffsetNs)
	case TTFTFirstChoices:
		m.TTFTMs = nsToMs(r.FirstTokenOffsetNs)
		for i := range events {
			if events[i].HasChoices {
				m.TTFTMs = float64(events[i].OffsetNs) / 1e6
				break
			}
		}
	}
	if r.FirstTokenOffsetNs != nil && r.SecondTokenOffsetNs != nil {
		m.TTSTMs = float64(*r.SecondTokenOffsetNs-*r.FirstTokenOffsetNs) / 1e6
	}
	switch c.E2EEnd {
	case E2ELastToken:
		m.E2EMs = nsToMs(r.LastTokenOffsetNs)
	case E2EStreamEnd:
		m.E2EMs = nsToMs(r.StreamEndOffsetNs)
	}
	m.OutputTokens, m.OutputSource = outputCount(c, r)

	// ITL samples: gaps between consecutive token-carrying messages.
	m.TokensPerMessageKnown = true
	prev := int64(-1)
	for i := range events {
		e := &events[i]
		if !e.CarriesTokens() {
			continue
		}
		if e.Kind == formats.KindReasoning {
			m.HasReasoning = true
		}
		if prev >= 0 {
			gap := float64(e.OffsetNs-prev) / 1e6
			k := 1
			if e.Tokens != nil && *e.Tokens > 1 {
				k = int(*e.Tokens)
			} else if e.Tokens == nil {
				m.TokensPerMessageKnown = false
			}
			for j := 0; j < k; j++ {
				itl = append(itl, gap/float64(k))
			}
		}
		prev = e.OffsetNs
	}
	if len(events) == 0 {
		m.TokensPerMessageKnown = false
	}
	if c.TPOT == TPOTExcludeFirst && m.OutputTokens > 1 {
		m.TPOTMs = (m.E2EMs - m.TTFTMs) / (m.OutputTokens - 1)
	}
	return m, itl
}

// outputCount picks N by the convention's source order.
func outputCount(c Convention, r *formats.Request) (float64, string) {
	for _, s := range c.OutputTokens {
		switch s {
		case CountServerUsage:
			if r.OutputTokens != nil && r.OutputTokensSource == formats.SourceServerUsage {
				return float64(*r.OutputTokens), string(s)
			}
		case CountToolReported:
			if r.OutputTokens != nil && r.OutputTokensSource == formats.SourceToolReported {
				return float64(*r.OutputTokens), string(s)
			}
		case CountTokenizer:
			if r.OutputTokens != nil && strings.HasPrefix(r.OutputTokensSource, formats.SourceTokenizerPfx) {
				return float64(*r.OutputTokens), r.OutputTokensSource
			}
		case CountMessages:
			if r.OutputTokens != nil && r.OutputTokensSource == formats.SourceChunkCount {
				return float64(*r.OutputTokens), string(s)
			}
			if r.TokenMessageCount > 0 {
				return float64(r.TokenMessageCount), string(s)
			}
		}
	}
	return math.NaN(), ""
}
