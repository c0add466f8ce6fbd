package llmperf

import (
	"fmt"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// TrapBOSInCount: LLMPerf's number_output_tokens counts the BOS token its
// Llama-2 tokenizer prepends (the data-check catalogue, analyze/TRAPS.md).
const TrapBOSInCount = "llmperf_bos_in_count"

// traps are LLMPerf's entries of the catalogue.
var traps = []convention.Trap{{
	Code:  TrapBOSInCount,
	Title: "LLMPerf's number_output_tokens counts the BOS token its Llama-2 tokenizer prepends to the generated text",
	Tools: "LLMPerf, every version (token_benchmark_ray.py counts len(LlamaTokenizerFast.encode(generated_text)) with hf-internal-testing/llama-tokenizer, 1eac866 … f1d6bed)",
	Signature: "every successful row: the count is encode() with its default add_special_tokens=True, so one token more than was generated " +
		"(a one-token reply has number_output_tokens 2); exact, not a heuristic",
	Action: convention.ActionCorrect,
	Effect: "output_tokens = number_output_tokens − 1 (the importer's correction; reported_output_tokens keeps the raw count, which --no-corrections uses): " +
		"N, TPOT, NTPOT and output throughput count the generated tokens only",
	Fix:     convention.FixCountFromImport,
	Routine: true, // every LLMPerf file: data_warnings would fail them all
	Metrics: []string{"osl_tokens", "tpot_ms", "ntpot_ms", "output_throughput"},
	Reproduction: "LLMPerf's own statistics use its raw count (BOS included), which its profiles read (reported_output_tokens): " +
		"they are reproduced; only tokentrace's convention drops the BOS",
	Source: "https://github.com/ray-project/llmperf/issues/35",
	Test:   "ingest/llmperf TestTrapBOSInCount",
}}

// bosCheck marks the requests whose count the importer corrected (the BOS
// dropped: output_tokens below reported_output_tokens) and returns the
// run's check; ok is false when no request was corrected.
func bosCheck(reqs []formats.Request) (formats.DataCheck, bool) {
	n, detail := int64(0), ""
	for i := range reqs {
		r := &reqs[i]
		if r.OutputTokens == nil || r.ReportedOutputTokens == nil || float64(*r.OutputTokens) >= *r.ReportedOutputTokens {
			continue
		}
		r.AddCorrection(TrapBOSInCount)
		if n == 0 {
			detail = fmt.Sprintf("row %d: number_output_tokens %g → output_tokens %d", r.RequestKey, *r.ReportedOutputTokens, *r.OutputTokens)
		}
		n++
	}
	return formats.DataCheck{Code: TrapBOSInCount, Field: "number_output_tokens", Requests: n, Corrected: true, Detail: detail}, n > 0
}
