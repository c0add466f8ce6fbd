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
