package genaiperf

import (
	"fmt"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest/sse"
)

// TrapCoalescedChunks: a stream's messages carried several tokens each
// (the data-check catalogue, analyze/TRAPS.md), as the server's per-chunk
// usage shows.
const TrapCoalescedChunks = "coalesced_token_chunks"

// traps are the entries of the catalogue this importer detects.
var traps = []convention.Trap{{
	Code:  TrapCoalescedChunks,
	Title: "stream messages carried several tokens each (coalesced by the server): one ITL sample per message is not one per token",
	Tools: "any client that takes one ITL sample per chunk (vLLM bench, AIPerf, SGLang's OpenAI backends, …) against a server that coalesces tokens " +
		"(speculative decoding, tool and reasoning parsers, stream intervals); seen by tokentrace in GenAI-Perf raw exports whose server sent per-chunk usage " +
		"(vLLM stream_options.continuous_usage_stats)",
	Signature: "usage.completion_tokens on every content chunk (a running total): a content message's tokens are the increase since the previous chunk; " +
		"the check fires when some content message carried more than one",
	Action: convention.ActionExplain,
	Effect: "events.tokens holds each content message's count from the usage deltas (all or nothing per request), so tokentrace's ITL splits each gap over the tokens " +
		"the message carried (pooled_token_split_gaps); without per-chunk usage the report's itl_per_message warning says each message is one sample",
	Metrics: []string{"itl_ms"},
	Reproduction: "the tool pools one gap per message, so a message of k tokens is one long gap where tokentrace counts k short ones; " +
		"the events keep the counts, and a per-message convention gives the tool's number",
	Source: "https://github.com/vllm-project/vllm/issues/27485, https://github.com/vllm-project/vllm/pull/28183",
	Test:   "ingest/genaiperf TestTrapCoalescedChunks",
}}

// chunkUsage follows a request's per-chunk usage: the running
// completion_tokens and whether every content message had one.
type chunkUsage struct {
	cum      int64
	seen     bool // a message carried usage.completion_tokens
	complete bool // every content message so far did, with an increase
	set      []int
}

// reset starts a request.
func (u *chunkUsage) reset() { *u = chunkUsage{complete: true, set: u.set[:0]} }

// observe takes message e (at index i of the request's events) with its
// payload's usage.
func (u *chunkUsage) observe(i int, e *formats.Event, usage *sse.Usage) {
	if usage == nil || usage.CompletionTokens == nil {
		if e.CarriesTokens() {
			u.complete = false
		}
		return
	}
	n := *usage.CompletionTokens
	u.seen = true
	if e.CarriesTokens() {
		if d := n - u.cum; d >= 1 && d < 1<<31 {
			k := int32(d)
			e.Tokens = &k
			u.set = append(u.set, i)
		} else {
			u.complete = false
		}
	}
	u.cum = n
}

// finish keeps the counts when every content message had one (else clears
// them: a partial split would mix units) and returns the request's largest
// count and its number of multi-token messages.
func (u *chunkUsage) finish(events []formats.Event) (largest int32, multi int) {
	if !u.complete || len(u.set) == 0 {
		for _, i := range u.set {
			events[i].Tokens = nil
		}
		return 0, 0
	}
	for _, i := range u.set {
		k := *events[i].Tokens
		largest = max(largest, k)
		if k > 1 {
			multi++
		}
	}
	return largest, multi
}

// coalesced tallies an experiment's requests with multi-token messages.
type coalesced struct {
	requests, messages int64
	first              string
}

// check is the run's data check, nil when no message carried more than
// one token.
func (c *coalesced) check() *formats.DataCheck {
	if c.requests == 0 {
		return nil
	}
	return &formats.DataCheck{Code: TrapCoalescedChunks, Field: "usage.completion_tokens", Requests: c.requests,
		Detail: fmt.Sprintf("%s; %d multi-token messages in all (per-chunk usage: continuous_usage_stats)", c.first, c.messages)}
}
