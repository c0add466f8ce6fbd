package analyze

import "github.com/tokentrace/tokentrace/convention"

// Canonical is tokentrace's own convention: the definitions its reports use
// unless told otherwise. CONVENTIONS.md states each choice and its reason.
var Canonical = convention.Convention{
	Name:               "tokentrace",
	Completed:          convention.CompletedOK,
	Responses:          convention.ResponsesTokens,
	ResponseUnit:       convention.UnitMessage,
	E2EEnd:             convention.E2ELastResponse,
	LatencyFrom:        convention.LatencyFromSend,
	FailedLatency:      convention.FailedExcluded,
	OutputTokens:       []convention.CountSource{convention.CountServerUsage, convention.CountToolReported, convention.CountTokenizer, convention.CountResponses},
	TokenizeReasoning:  true,
	TPOTFrom:           convention.TPOTFromFirstResponse,
	TPOTDivisor:        convention.DivideNMinus1,
	TPOTRounding:       convention.RoundNone,
	ITL:                convention.ITLPooledTokenSplit,
	Percentile:         convention.PercentileLinear,
	StdDDOF:            1,
	Duration:           convention.DurationFirstStartToLastResponse,
	ThroughputRequests: convention.ThroughputCompleted,
	Goodput:            convention.GoodputFractionAndRate,
	Corrections:        true,
	Sources: map[string]string{
		"completed":           "tokentrace: no error and at least one generated token; every status still counted",
		"responses":           "tokentrace: the user waits for the first generated token, reasoning included (= AIPerf time_to_first_token)",
		"response_unit":       "tokentrace: SSE messages, as the server sent them",
		"e2e_end":             "tokentrace: the last generated token; usage/[DONE] are transport, kept as stream_end",
		"failed_requests":     "tokentrace: latencies are over completed requests; failures are counted apart (error rate, goodput); tokentrace-adjusted counts them as +∞",
		"latency_from":        "tokentrace: the request's send, as every tool's headline numbers; tokentrace-schedule measures from the intended start",
		"output_count":        "tokentrace: the server's count is exact; tool counts and re-tokenization are fallbacks",
		"tokenize_reasoning":  "tokentrace: reasoning tokens are generated tokens",
		"special_tokens":      "tokentrace: BOS is not generated",
		"tpot_from":           "tokentrace: decode cost after the first token, so E2E = TTFT + TPOT·(N−1)",
		"tpot_divisor":        "tokentrace: N − 1 gaps follow the first token",
		"tpot_count":          "tokentrace: same N as the output count",
		"tpot_rounding":       "tokentrace: none",
		"itl":                 "tokentrace: pooled gaps show stalls a per-request mean hides; k-token chunks split",
		"percentile":          "numpy default (linear, h=(n−1)p), shared by GenAI-Perf, AIPerf, vLLM, SGLang, LLMPerf",
		"std":                 "tokentrace: a benchmark is a sample of the deployment",
		"duration":            "tokentrace: first request sent → last token received",
		"throughput_requests": "tokentrace: completed requests",
		"goodput":             "tokentrace: share of all requests meeting every SLO, and good requests/s",
		"corrections":         "tokentrace: a tool's known per-request bugs are corrected from the raw fields (TRAPS.md); the raw values stay in the tables",
	},
}

// Scheduled is the canonical convention measured from each request's
// intended start (formats.Request.ScheduledStartNs) where the file records
// one: TTFT and E2E free of coordinated omission, the numbers a user
// arriving on the load generator's schedule saw (= AIPerf
// effective_latency, guidellm request_scheduled_latency, vLLM
// e2el_including_client_queue). A request without an intended start is
// measured from its send, so on a file without a schedule it equals
// Canonical. reconcile --to-convention tokentrace-schedule names the step.
var Scheduled = func() convention.Convention {
	c := convention.WithName(Canonical, "tokentrace-schedule", map[string]string{
		"latency_from": "tokentrace: from the intended start, so a load generator that fell behind its schedule cannot hide the wait (coordinated omission)",
	})
	c.LatencyFrom = convention.LatencyFromSchedule
	return c
}()

// Adjusted is the canonical convention with failed and cancelled requests
// counted as +∞ in every latency from the start (TTFT, TTFO, E2E and
// their schedule-relative forms): AIPerf's error-adjusted adj_* metrics
// (PERCENTILE_INCLUDES_FAILED_REQUESTS, ai-dynamo/aiperf#688). A P99 is
// then +∞ once 1% of the requests failed: a tail that failures cannot
// flatter.
var Adjusted = func() convention.Convention {
	c := convention.WithName(Canonical, "tokentrace-adjusted", map[string]string{
		"failed_requests": "AIPerf adj_* (ai-dynamo/aiperf 36c0308 docs/reference/effective-vs-active-metrics.md, Failed requests): the success-only distribution plus one +inf per errored record",
	})
	c.FailedLatency = convention.FailedInfinite
	return c
}()

// Variants are tokentrace's conventions besides Canonical
// (convention.Set.WithProfiles).
var Variants = []convention.Convention{Scheduled, Adjusted}
