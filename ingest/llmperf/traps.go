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

// bosCounter counts the requests whose count the importer corrected
// (the BOS dropped: output_tokens below reported_output_tokens, marked
// TrapBOSInCount) and keeps the first one's detail.
type bosCounter struct {
	n      int64
	detail string
}

// add counts b's corrected requests.
func (c *bosCounter) add(b *formats.Batch) {
	q := &b.Req
	for i := range b.Len() {
		if q.Corrections.Get(i) != TrapBOSInCount {
			continue
		}
		if c.n == 0 {
			out, _ := q.OutputTokens.Get(i)
			rep, _ := q.ReportedOutputTokens.Get(i)
			c.detail = fmt.Sprintf("row %d: number_output_tokens %g → output_tokens %d", q.Key[i], rep, out)
		}
		c.n++
	}
}

// check is the run's check; ok is false when no request was corrected.
func (c *bosCounter) check() (formats.DataCheck, bool) {
	return formats.DataCheck{Code: TrapBOSInCount, Field: "number_output_tokens", Requests: c.n, Corrected: true, Detail: c.detail}, c.n > 0
}
