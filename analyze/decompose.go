package analyze

import (
	"fmt"
	"math"
	"sort"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// ServerJoin is the report's server_join section (analyze --server-log):
// how client requests were matched with server records, the clock offset
// between the two sides, and the decomposition of TTFT and E2E of the
// matched requests. REPORT.md documents it.
type ServerJoin struct {
	// ClientRequests and ServerRecords are the records on each side.
	ClientRequests int `json:"client_requests"`
	ServerRecords  int `json:"server_records"`
	// Matched counts pairs by match quality (trace_id, request_id,
	// time_tokens, time).
	Matched          map[string]int `json:"matched"`
	UnmatchedClients int            `json:"unmatched_clients"`
	UnmatchedServers int            `json:"unmatched_servers"`
	// AmbiguousKeys counts id keys shared by several records of one side
	// (not used for matching).
	AmbiguousKeys int `json:"ambiguous_keys"`
	// ClockOffsets: per (client clock, server clock), server arrival −
	// client send over the matched pairs (median, and the interval of
	// offsets consistent with every pair).
	ClockOffsets  []ClockOffset  `json:"clock_offsets"`
	Decomposition *Decomposition `json:"decomposition"`
	Notes         []string       `json:"notes"`
}

// ClockOffset is the offset between a client clock and a server clock
// (ms; package join, Offsets). MedianMs = median(server arrival − client
// send): the clock offset PLUS the client→server delay, so it is not an
// estimate of the offset and may lie above HiMs. LoMs ≤ θ ≤ HiMs bounds the
// offsets θ (server clock − client clock) allowed by every pair: θ ≤
// arrival + ResolutionMs − send, θ ≥ server end − client end (LoMs null
// when no pair has both ends). ResolutionMs is the coarsest resolution of
// the server's arrival stamps (1000 for vLLM's request-log seconds; 0 when
// exact), included in HiMs. Consistent is false when the interval is empty
// (clock drift, or a wrong pair).
type ClockOffset struct {
	ClientClock  string `json:"client_clock"`
	ServerClock  string `json:"server_clock"`
	N            int    `json:"n"`
	MedianMs     F      `json:"median_ms"`
	LoMs         F      `json:"lo_ms"`
	HiMs         F      `json:"hi_ms"`
	ResolutionMs F      `json:"resolution_ms"`
	Consistent   bool   `json:"consistent"`
}

// Decomposition splits the client's TTFT of each joined request into the
// server's queue and prefill and the remainder, and its E2E into TTFT and
// decode (ms):
//
//	remainder = client TTFT − server queue − server prefill
//	decode    = client E2E − client TTFT
//
// Client TTFT and E2E are this report's convention's (ComputeRequest);
// queue and prefill are the server's own (Request.ServerQueueNs,
// ServerPrefillNs, by ServerKind's definition). The remainder is network
// both ways, tokenization and the server's frontend (for vLLM: its span
// TTFT − queue − prefill), and the client. It needs no clock alignment.
// A negative remainder — the server's parts exceed what the client saw,
// from clock skew between the server's timers and the client's, or a wrong
// match — is kept as is in the percentiles (never clamped) and counted in
// NegativeRemainder.
type Decomposition struct {
	// N requests were decomposed; NotDecomposable joined requests lack the
	// server's queue or prefill (TGI, Ollama, llama.cpp logs), a client
	// TTFT (failed requests), or were not streamed (fewer than two
	// token-carrying messages: the client's TTFT is the whole response).
	N                 int           `json:"n"`
	NotDecomposable   int           `json:"not_decomposable"`
	NegativeRemainder int           `json:"negative_remainder"`
	TTFTMs            stats.Summary `json:"ttft_ms"`
	QueueMs           stats.Summary `json:"queue_ms"`
	PrefillMs         stats.Summary `json:"prefill_ms"`
	RemainderMs       stats.Summary `json:"remainder_ms"`
	E2EMs             stats.Summary `json:"e2e_ms"`
	DecodeMs          stats.Summary `json:"decode_ms"`
	ServerDecodeMs    stats.Summary `json:"server_decode_ms"`
	// Tail says which part drives the TTFT tail.
	Tail *TailShare `json:"ttft_tail"`
}

// TailShare is, over the decomposed requests whose TTFT is at or above the
// P99 TTFT (ThresholdMs; at least one request), the share of their summed
// TTFT spent queued, in prefill and in the remainder (the three sum to 1),
// and the largest of the three (Driver: "queue", "prefill", "remainder").
type TailShare struct {
	ThresholdMs    F      `json:"threshold_ms"`
	N              int    `json:"n"`
	QueueShare     F      `json:"queue_share"`
	PrefillShare   F      `json:"prefill_share"`
	RemainderShare F      `json:"remainder_share"`
	Driver         string `json:"driver"`
}

// DecomposedRequest is one joined request's parts (ms).
type DecomposedRequest struct {
	RunID                                   string
	Key                                     int64
	TTFTMs, QueueMs, PrefillMs, RemainderMs float64
	E2EMs, DecodeMs, ServerDecodeMs         float64
	NegativeRemainder                       bool
	MatchQuality, ServerKind, ServerSource  string
}

// Decomposer is a formats.Sink that decomposes every joined client row
// (MatchQuality set, not a server row) as rows stream by.
type Decomposer struct {
	conv      convention.Convention
	rows      []DecomposedRequest
	notDecomp int
}

// NewDecomposer returns a Decomposer computing client TTFT and E2E under c.
func NewDecomposer(c convention.Convention) *Decomposer { return &Decomposer{conv: c} }

// Request implements formats.Sink.
// Batch implements formats.Sink.
func (d *Decomposer) Batch(b *formats.Batch) error { return b.EachRow(d.Request) }

// Request decomposes one request row.
func (d *Decomposer) Request(r *formats.Request, events []formats.Event) error {
	if r.MatchQuality == "" || r.IsServerRow() {
		return nil
	}
	m, _ := ComputeRequest(d.conv, r, events, nil, nil)
	// a whole (non-streamed) response's TTFT is its E2E: the remainder
	// would hold the decode, so it is not decomposed
	if r.ServerQueueNs == nil || r.ServerPrefillNs == nil || math.IsNaN(m.TTFTMs) || r.TokenMessageCount < 2 {
		d.notDecomp++
		return nil
	}
	q, p := float64(*r.ServerQueueNs)/1e6, float64(*r.ServerPrefillNs)/1e6
	row := DecomposedRequest{RunID: r.RunID, Key: r.RequestKey, TTFTMs: m.TTFTMs, QueueMs: q, PrefillMs: p,
		RemainderMs: m.TTFTMs - q - p, E2EMs: m.E2EMs, DecodeMs: m.E2EMs - m.TTFTMs, ServerDecodeMs: ptrMs(r.ServerDecodeNs),
		MatchQuality: r.MatchQuality, ServerKind: r.ServerKind, ServerSource: r.ServerSource}
	row.NegativeRemainder = row.RemainderMs < 0
	d.rows = append(d.rows, row)
	return nil
}

// Run implements formats.Sink.
func (d *Decomposer) Run(*formats.Run) error { return nil }

// Rows returns the decomposed requests in arrival order.
func (d *Decomposer) Rows() []DecomposedRequest { return d.rows }

// Result summarizes the decomposed requests; nil when no request was
// joined.
func (d *Decomposer) Result() *Decomposition {
	if len(d.rows) == 0 && d.notDecomp == 0 {
		return nil
	}
	pm := d.conv.Percentile
	if pm == "" {
		pm = convention.PercentileLinear
	}
	col := func(f func(*DecomposedRequest) float64) stats.Summary {
		xs := make([]float64, 0, len(d.rows))
		for i := range d.rows {
			xs = append(xs, f(&d.rows[i]))
		}
		return stats.Summarize(xs, nil, stats.Method(pm), 1)
	}
	out := &Decomposition{N: len(d.rows), NotDecomposable: d.notDecomp,
		TTFTMs:         col(func(r *DecomposedRequest) float64 { return r.TTFTMs }),
		QueueMs:        col(func(r *DecomposedRequest) float64 { return r.QueueMs }),
		PrefillMs:      col(func(r *DecomposedRequest) float64 { return r.PrefillMs }),
		RemainderMs:    col(func(r *DecomposedRequest) float64 { return r.RemainderMs }),
		E2EMs:          col(func(r *DecomposedRequest) float64 { return r.E2EMs }),
		DecodeMs:       col(func(r *DecomposedRequest) float64 { return r.DecodeMs }),
		ServerDecodeMs: col(func(r *DecomposedRequest) float64 { return r.ServerDecodeMs }),
	}
	for _, r := range d.rows {
		if r.NegativeRemainder {
			out.NegativeRemainder++
		}
	}
	if len(d.rows) > 0 {
		th := out.TTFTMs.Value(0.99)
		var q, p, rem, tot float64
		n := 0
		for _, r := range d.rows {
			if r.TTFTMs >= th {
				n++
				q += r.QueueMs
				p += r.PrefillMs
				rem += r.RemainderMs
				tot += r.TTFTMs
			}
		}
		t := &TailShare{ThresholdMs: F(th), N: n, QueueShare: F(q / tot), PrefillShare: F(p / tot), RemainderShare: F(rem / tot)}
		parts := []struct {
			name string
			v    float64
		}{{"queue", q}, {"prefill", p}, {"remainder", rem}}
		sort.SliceStable(parts, func(i, j int) bool { return parts[i].v > parts[j].v })
		t.Driver = parts[0].name
		out.Tail = t
	}
	return out
}

// Warnings returns the decomposition's caveats for the report.
func (d *Decomposition) Warnings() []string {
	var w []string
	if d == nil {
		return nil
	}
	if d.NegativeRemainder > 0 {
		w = append(w, fmt.Sprintf("%d of %d decomposed requests have a negative remainder (server queue + prefill exceed the client's TTFT): clock skew between the server's timers and the client's, or a wrong match; kept negative, not clamped", d.NegativeRemainder, d.N))
	}
	if d.NotDecomposable > 0 {
		w = append(w, fmt.Sprintf("%d joined requests not decomposed: the server record lacks queue or prefill, the client has no TTFT, or the response was not streamed", d.NotDecomposable))
	}
	return w
}
