package guidellm

import (
	"fmt"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// TrapTTFTAfterReasoning: guidellm before v0.7 timed its first token at
// the first content chunk, after a reasoning model's reasoning (the
// data-check catalogue, analyze/TRAPS.md).
const TrapTTFTAfterReasoning = "guidellm_ttft_after_reasoning"

// traps are guidellm's entries of the catalogue.
var traps = []convention.Trap{{
	Code:  TrapTTFTAfterReasoning,
	Title: "guidellm timed the first token at the first content chunk, after the reasoning it did not see",
	Tools: "guidellm before v0.7 (the OpenAI backend read delta.content only; PR #742 and PR #760, in v0.7.0, time reasoning and add time_to_first_output_token_ms)",
	Signature: "a successful record's output_tokens (the server's completion_tokens, reasoning included) exceed the UTF-8 bytes of its output text by more than one: " +
		"tokens the client never saw, reasoning before the content",
	Threshold: "output_tokens > bytes(output) + 1 (a token decodes to at least one byte; one for the end-of-sequence token)",
	Action:    convention.ActionFlag,
	Effect: "the record's first-token time is the first content's (its TTFT is a time to first output, inflated by the reasoning) and its TPOT divides the content phase by every token, reasoning included: " +
		"the values stay as recorded (the reasoning's times are not in the file) and the warning counts the requests",
	Metrics: []string{"ttft_ms", "tpot_ms", "itl_ms"},
	Source:  "https://github.com/vllm-project/guidellm/issues/737, fixed by https://github.com/vllm-project/guidellm/pull/742 and https://github.com/vllm-project/guidellm/pull/760",
	Test:    "ingest/guidellm TestTrapTTFTAfterReasoning",
}}

// hiddenTokens reports whether a successful record of a version before
// v0.7 counted tokens its output text cannot hold (reasoning it did not
// time), and counts it in rs.
// outputLen is the output text's length in bytes (0: none).
func (rs *requestStats) hiddenTokens(version string, req *formats.Request, outputLen int) {
	if versionAtLeast(version, 0, 7) || req.Status != formats.StatusOK || req.OutputTokens == nil || outputLen == 0 {
		return
	}
	if n := *req.OutputTokens; n > int64(outputLen)+1 {
		if rs.hidden == 0 {
			rs.hiddenFirst = fmt.Sprintf("request %s: output_tokens %d for %d bytes of output text", req.SourceID, n, outputLen)
		}
		rs.hidden++
	}
}

// hiddenCheck is the run's data check, nil when no record showed it.
func (rs *requestStats) hiddenCheck() *formats.DataCheck {
	if rs.hidden == 0 {
		return nil
	}
	return &formats.DataCheck{Code: TrapTTFTAfterReasoning, Field: "output_tokens", Requests: int64(rs.hidden), Detail: rs.hiddenFirst}
}
