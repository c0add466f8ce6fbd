package analyze

import (
	"fmt"
	"math"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// FluidityIndex is Etalon's fluidity-index of one request: the share of
// per-token deadlines met, 1 − missed/total (1 when there are no
// deadlines), with missed and total the deadline counts.
//
// gapsNs is the request's per-token gap list in ns (TokenGaps): gapsNs[0]
// is the TTFT, each later entry the gap since the previous token, with the
// extra tokens of a multi-token chunk as zero gaps. The first token has
// deadline D_p = d.PrefillNs, each later one D_d = d.DecodeNs. Slack from
// tokens that beat their deadline carries over without a cap; a late token
// is charged one missed deadline for every D_d period its lateness spans
// (the first token: 1 + ⌊(g − slack − D_p)/D_d⌋, a later one:
// ⌊(g − slack)/D_d⌋), and slack resets to 0 after any miss.
//
// Source: project-etalon/etalon etalon/metrics/metric_utils.py,
// get_request_level_deadline_miss_rate (commit c238821a, 2024; the 2025
// paper arXiv 2507.09019, "fluidity-index computation"). Etalon's docs
// describe it as the fraction of *tokens* meeting deadlines; its code
// counts *deadlines*, as here. Integer ns arithmetic makes the floor
// divisions exact where Etalon's float seconds round.
func FluidityIndex(gapsNs []int64, d Deadlines) (index float64, missed, total int64) {
	var slack int64
	for i, g := range gapsNs {
		deadline := d.DecodeNs
		if i == 0 {
			deadline = d.PrefillNs
		}
		if g <= deadline+slack {
			slack += deadline - g
			total++
			continue
		}
		var k int64
		if i == 0 {
			k = 1 + (g-slack-d.PrefillNs)/d.DecodeNs
		} else {
			k = (g - slack) / d.DecodeNs
		}
		missed += k
		total += k
		slack = 0
	}
	if total == 0 {
		return 1, 0, 0
	}
	return 1 - float64(missed)/float64(total), missed, total
}

// TokenGaps appends to out (reset) the request's per-token gap list in ns
// as Etalon's client builds it (etalon/core/llm_clients/
// openai_chat_completions_client.py): for each response of the
// convention, in order, the time since the previous response (since the
// request's start for the first), then k − 1 zeros when the response
// carried k tokens. k is the message's token count when the source
// records it (AIPerf per-chunk counts, per-chunk usage), else 1 — Etalon
// re-tokenizes each chunk's text, which tokentrace does not. Nil when the
// request has no responses (failed, or no per-message data).
func TokenGaps(c convention.Convention, events []formats.Event, out []int64) []int64 {
	r := formats.Request{RunID: "r"}
	b := formats.NewBatch("r")
	ev := make([]formats.Event, len(events))
	for j := range events {
		ev[j] = events[j]
		ev[j].RunID, ev[j].RequestKey, ev[j].Index = "r", 0, int32(j)
	}
	if err := b.AppendRow(&r, ev); err != nil {
		panic(err)
	}
	return tokenGaps(c, newMsgs(b, 0, serverKinds(b)), out)
}

// tokenGaps is TokenGaps of a request's messages in a batch.
func tokenGaps(c convention.Convention, ms msgs, out []int64) []int64 {
	out = out[:0]
	var resp resps
	responses(c, ms, &resp, false)
	prev := int64(0)
	for j, off := range resp.off {
		out = append(out, off-prev)
		for k := 1; k < resp.tok(j); k++ {
			out = append(out, 0)
		}
		prev = off
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// FluidityValue is a request's fluidity-index under one pair of deadlines.
type FluidityValue struct {
	Deadlines Deadlines
	Index     float64
}

// fluidity returns m's fluidity-index under d (NaN when not computed:
// the Analyzer computes it for the deadlines given to SetFluidity).
func (m *RequestMetrics) fluidity(d Deadlines) float64 {
	for _, f := range m.Fluidity {
		if f.Deadlines == d {
			return f.Index
		}
	}
	return math.NaN()
}

// Deadlines are the per-token deadlines of the fluidity-index: Prefill
// (D_p, the first token's) and Decode (D_d, each later token's), in ns.
type Deadlines struct {
	PrefillNs int64
	DecodeNs  int64
}

func (d Deadlines) String() string {
	return fmt.Sprintf("fluidity(%s,%s)", fmtNs(d.PrefillNs), fmtNs(d.DecodeNs))
}

func fmtNs(ns int64) string {
	switch {
	case ns%1e9 == 0:
		return fmt.Sprintf("%ds", ns/1e9)
	case ns%1e6 == 0:
		return fmt.Sprintf("%dms", ns/1e6)
	case ns%1e3 == 0:
		return fmt.Sprintf("%dus", ns/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}
