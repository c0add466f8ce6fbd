// Package synth generates synthetic benchmark runs in peer tools' file
// formats — GenAI-Perf raw export (WriteGenAIPerf, and
// WriteGenAIPerfVaried with chunks as real servers vary them), AIPerf
// profile_export.jsonl, LLMPerf individual_responses.json, vLLM bench serve
// --save-detailed results, SGLang bench_serving --output-details lines,
// guidellm benchmarks.json (v0.4+) and inference-perf
// per_request_lifecycle_metrics.json (v0.6+) — from a seeded model of an
// inference server's latency distributions, together with a file of the
// true per-request values (truth.csv), so that an importer's and analyzer's
// output can be checked against what was generated. Every format draws the
// same requests from the same Model.
//
// # Model
//
//   - TTFT is lognormal: exp(N(ln TTFTMedian, TTFTSigma²)).
//   - Decode gaps (token i−1 → token i) are gamma with mean GapMean and shape
//     GapShape; with probability StallProb a gap additionally gets an
//     exponential stall of mean StallMean (a preemption, a long prefill of
//     another request).
//   - Output lengths N are lognormal (median OSLMedian, σ OSLSigma), rounded
//     and clamped to [OSLMin, OSLMax].
//   - Load is closed-loop with Concurrency workers (perf_analyzer's
//     concurrency mode: a worker sends its next request when the previous one
//     ended), or open-loop Poisson arrivals at RateRPS when RateRPS > 0.
//   - A request fails with probability FailureRate: half of the failures are
//     an error body before any token (HTTP 429), half an SSE error message
//     after some tokens.
//
// Every time is a whole nanosecond. The same Model (Seed included) gives the
// same bytes.
//
// # True values
//
// For each completed request: TTFT = first token − start, E2E = last token −
// start, N = number of tokens, TPOT = (E2E − TTFT)/(N − 1) (undefined for
// N = 1): the canonical convention of analyze (analyze/CONVENTIONS.md). Each
// token is one SSE message, and the server's usage.completion_tokens is N,
// so these are what an importer must recover exactly.
package synth

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Model is the seeded latency model (see the package documentation).
type Model struct {
	Seed        uint64
	Requests    int
	Concurrency int     // closed-loop workers; used when RateRPS is 0
	RateRPS     float64 // Poisson arrival rate (requests/s); 0 = closed loop

	TTFTMedian time.Duration
	TTFTSigma  float64 // σ of ln TTFT
	GapMean    time.Duration
	GapShape   float64 // gamma shape k; the gap's coefficient of variation is 1/√k
	StallProb  float64 // probability that a decode gap has a stall added
	StallMean  time.Duration

	OSLMedian float64
	OSLSigma  float64 // σ of ln N
	OSLMin    int     // at least 1
	OSLMax    int

	ISL         int     // prompt tokens (usage.prompt_tokens)
	FailureRate float64 // probability that a request fails

	ModelName string
	StartNs   int64 // Unix ns of the first request
}

// Default is the model `tokentrace synth` uses unless told otherwise: an
// 8B model on one GPU at concurrency 8, ~400-token answers.
func Default() Model {
	return Model{
		Seed: 1, Requests: 100, Concurrency: 8,
		TTFTMedian: 180 * time.Millisecond, TTFTSigma: 0.5,
		GapMean: 22 * time.Millisecond, GapShape: 4,
		StallProb: 0.002, StallMean: 250 * time.Millisecond,
		OSLMedian: 400, OSLSigma: 0.3, OSLMin: 1, OSLMax: 4096,
		ISL: 128, FailureRate: 0.01,
		ModelName: "meta-llama/Llama-3.1-8B-Instruct",
		StartNs:   1_760_000_000_000_000_000,
	}
}

// Validate reports the first invalid field.
func (m *Model) Validate() error {
	switch {
	case m.Requests < 0:
		return fmt.Errorf("requests %d < 0", m.Requests)
	case m.RateRPS < 0 || math.IsNaN(m.RateRPS) || math.IsInf(m.RateRPS, 0):
		return fmt.Errorf("rate %v: want a finite value ≥ 0", m.RateRPS)
	case m.RateRPS == 0 && m.Concurrency < 1:
		return fmt.Errorf("concurrency %d < 1", m.Concurrency)
	case m.TTFTMedian <= 0 || m.GapMean <= 0:
		return fmt.Errorf("ttft median and gap mean must be > 0")
	case m.TTFTSigma < 0 || m.OSLSigma < 0:
		return fmt.Errorf("σ must be ≥ 0")
	case m.GapShape <= 0:
		return fmt.Errorf("gap shape %v ≤ 0", m.GapShape)
	case m.StallProb < 0 || m.StallProb > 1 || m.FailureRate < 0 || m.FailureRate > 1:
		return fmt.Errorf("probabilities must be in [0, 1]")
	case m.StallProb > 0 && m.StallMean <= 0:
		return fmt.Errorf("stall mean must be > 0")
	case m.OSLMin < 1 || m.OSLMax < m.OSLMin || m.OSLMedian <= 0:
		return fmt.Errorf("need 1 ≤ osl min ≤ osl max and osl median > 0")
	case m.ISL < 0:
		return fmt.Errorf("isl %d < 0", m.ISL)
	}
	return nil
}

// Status of a generated request.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Failure kinds.
const (
	failNone   = iota
	failBefore // error body, no token
	failMidway // SSE error message after some tokens
)

// Request is one generated request. Offsets are ns from StartNs.
type Request struct {
	Key     int    // 0-based, in start order
	StartNs int64  // Unix ns
	Status  string // StatusOK or StatusError
	// TokenNs are the arrival offsets of the token messages, one per token;
	// for a failed request the tokens received before the error.
	TokenNs []int64
	// EndNs is the offset of the last message (usage chunk / [DONE] for an
	// ok request, the error for a failed one): the stream's end.
	EndNs int64
	// FinishNs, UsageNs, DoneNs are the trailing messages' offsets (ok
	// requests only).
	FinishNs, UsageNs, DoneNs int64
	fail                      int
	ID                        string // "chatcmpl-…" id, 32 hex digits
	Words                     []int  // per token, an index into vocab
}

// N is the number of tokens received.
func (r *Request) N() int { return len(r.TokenNs) }

// TTFTNs is the first token's offset; -1 when there is none.
func (r *Request) TTFTNs() int64 {
	if len(r.TokenNs) == 0 {
		return -1
	}
	return r.TokenNs[0]
}

// E2ENs is the last token's offset; -1 when there is none.
func (r *Request) E2ENs() int64 {
	if len(r.TokenNs) == 0 {
		return -1
	}
	return r.TokenNs[len(r.TokenNs)-1]
}

// TPOTNs is (E2E − TTFT)/(N − 1) in ns; ok is false for N ≤ 1.
func (r *Request) TPOTNs() (ns float64, ok bool) {
	n := len(r.TokenNs)
	if n <= 1 {
		return 0, false
	}
	return float64(r.E2ENs()-r.TTFTNs()) / float64(n-1), true
}

// Generator draws requests one at a time, in start order.
type Generator struct {
	m      Model
	rng    *rand.Rand
	ttft   distuv.LogNormal
	gap    distuv.Gamma
	stall  distuv.Exponential
	osl    distuv.LogNormal
	next   int
	free   workers // closed loop: when each worker is free (ns offset)
	arrive int64   // open loop: the last arrival offset
	req    Request
}

// NewGenerator returns a generator for m (which must Validate).
func NewGenerator(m Model) (*Generator, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	src := rand.NewPCG(m.Seed, m.Seed^0x9e3779b97f4a7c15)
	g := &Generator{m: m, rng: rand.New(src)}
	g.ttft = distuv.LogNormal{Mu: math.Log(float64(m.TTFTMedian)), Sigma: m.TTFTSigma, Src: src}
	g.gap = distuv.Gamma{Alpha: m.GapShape, Beta: m.GapShape / float64(m.GapMean), Src: src}
	if m.StallProb > 0 {
		g.stall = distuv.Exponential{Rate: 1 / float64(m.StallMean), Src: src}
	}
	g.osl = distuv.LogNormal{Mu: math.Log(m.OSLMedian), Sigma: m.OSLSigma, Src: src}
	if m.RateRPS == 0 {
		// perf_analyzer starts its workers a few µs apart.
		for i := 0; i < m.Concurrency; i++ {
			g.free = append(g.free, int64(i)*int64(g.rng.IntN(20_000)+5_000))
		}
		heap.Init(&g.free)
	}
	return g, nil
}

// Next returns the next request, valid until the following call; false
// when all were drawn.
func (g *Generator) Next() (*Request, bool) {
	if g.next >= g.m.Requests {
		return nil, false
	}
	m := &g.m
	r := &g.req
	*r = Request{Key: g.next, TokenNs: r.TokenNs[:0], Words: r.Words[:0], Status: StatusOK}
	g.next++
	var start int64
	if m.RateRPS > 0 {
		if r.Key > 0 {
			g.arrive += int64(math.Round(g.rng.ExpFloat64() / m.RateRPS * 1e9))
		}
		start = g.arrive
	} else {
		start = g.free[0]
	}
	r.StartNs = m.StartNs + start
	r.ID = fmt.Sprintf("chatcmpl-%016x%016x", g.rng.Uint64(), g.rng.Uint64())

	n := int(math.Round(g.osl.Rand()))
	n = max(m.OSLMin, min(m.OSLMax, n))
	if g.rng.Float64() < m.FailureRate {
		r.Status = StatusError
		if g.rng.IntN(2) == 0 {
			r.fail = failBefore
			n = 0
		} else {
			r.fail = failMidway
			n = g.rng.IntN(n + 1)
		}
	}
	t := max(int64(math.Round(g.ttft.Rand())), 1_000_000)
	for i := 0; i < n; i++ {
		if i > 0 {
			d := g.gap.Rand()
			if m.StallProb > 0 && g.rng.Float64() < m.StallProb {
				d += g.stall.Rand()
			}
			t += max(int64(math.Round(d)), 1_000)
		}
		r.TokenNs = append(r.TokenNs, t)
		r.Words = append(r.Words, g.rng.IntN(len(vocab)))
	}
	switch r.fail {
	case failNone:
		r.FinishNs = t + 40_000 + int64(g.rng.IntN(20_000))
		r.UsageNs = r.FinishNs + 30_000 + int64(g.rng.IntN(10_000))
		r.DoneNs = r.UsageNs + 20_000 + int64(g.rng.IntN(10_000))
		r.EndNs = r.DoneNs
	case failBefore:
		r.EndNs = t
	case failMidway:
		r.EndNs = t + max(int64(math.Round(g.gap.Rand())), 1_000)
	}
	if m.RateRPS == 0 {
		// The worker sends its next request ~100 µs after this one ended.
		g.free[0] = start + r.EndNs + 80_000 + int64(g.rng.IntN(40_000))
		heap.Fix(&g.free, 0)
	}
	return r, true
}

// workers is a min-heap of worker free times.
type workers []int64

func (w workers) Len() int           { return len(w) }
func (w workers) Less(i, j int) bool { return w[i] < w[j] }
func (w workers) Swap(i, j int)      { w[i], w[j] = w[j], w[i] }
func (w *workers) Push(x any)        { *w = append(*w, x.(int64)) }
func (w *workers) Pop() any {
	old := *w
	x := old[len(old)-1]
	*w = old[:len(old)-1]
	return x
}

// vocab is the generated text's words: plain ASCII, nothing to escape.
var vocab = [...]string{
	" the", " model", " token", " latency", " of", " a", " server", " and", " to", " in",
	" decode", " prefill", " batch", " is", " with", " request", " first", " time", ",", ".",
	" GPU", " cache", " it", " that", " on", " for", " as", " throughput", " we", " this",
	" queue", " for",
}
