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

// TrapStreamErrorAsSuccess: guidellm before v0.7 recorded a stream that
// carried only an error event, on HTTP 200, as a successful generation.
const TrapStreamErrorAsSuccess = "guidellm_stream_error_as_success"

// StreamErrorType is the error type of such a record once corrected.
const StreamErrorType = "stream_error"

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
}, {
	Code:  TrapStreamErrorAsSuccess,
	Title: "guidellm recorded a stream that carried only an error event as a successful generation",
	Tools: "guidellm before v0.7 (the OpenAI backend read choices and delta only: a server's data: {\"error\": …} then [DONE] on HTTP 200 passed as success; PR #795, in v0.7.0, raises on it)",
	Signature: "a record in the successful list of a file before v0.7 with no output text, no first-token time (or one at the request's start) and a positive output_tokens " +
		"(the requested count, not output: guidellm#743 lists TTFT and ITL 0, words and characters 0, token counts the requested ones)",
	Action: convention.ActionCorrect,
	Effect: "the request is a failure (status error, error type stream_error): it leaves the latency statistics, counts in the error rate and in goodput's denominator, " +
		"and its output count (the requested one) is null; guidellm's own statistics counted it as a success, so their reproduction differs by these requests",
	Metrics: []string{"error_rate", "goodput", "ttft_ms", "itl_ms", "output_throughput"},
	Source:  "https://github.com/vllm-project/guidellm/issues/743, fixed by https://github.com/vllm-project/guidellm/pull/795 (v0.7.0)",
	Test:    "ingest/guidellm TestTrapStreamErrorAsSuccess",
}}

// streamError corrects a successful record of a version before v0.7 that
// was a stream's error event (TrapStreamErrorAsSuccess), counting it in
// rs. outputLen is the output text's length in bytes.
func (rs *requestStats) streamError(version string, req *formats.Request, outputLen int) {
	if versionAtLeast(version, 0, 7) || req.Status != formats.StatusOK || outputLen != 0 ||
		req.OutputTokens == nil || *req.OutputTokens <= 0 || req.FirstTokenOffsetNs != nil && *req.FirstTokenOffsetNs > 0 {
		return
	}
	if rs.streamErr == 0 {
		rs.streamFirst = fmt.Sprintf("request %s: successful, no output text, no first token, output_tokens %d", req.SourceID, *req.OutputTokens)
	}
	rs.streamErr++
	req.Status, req.ErrorType = formats.StatusError, StreamErrorType
	req.ErrorText = "the stream carried an error event, not a generation (guidellm before v0.7 recorded it as a success: guidellm#743)"
	req.FirstTokenOffsetNs, req.FirstContentOffsetNs, req.SecondTokenOffsetNs, req.LastTokenOffsetNs = nil, nil, nil, nil
	req.OutputTokens, req.OutputTokensSource = nil, ""
	req.AddCorrection(TrapStreamErrorAsSuccess)
}

// streamErrorCheck is the run's check, nil when no record showed it.
func (rs *requestStats) streamErrorCheck() *formats.DataCheck {
	if rs.streamErr == 0 {
		return nil
	}
	return &formats.DataCheck{Code: TrapStreamErrorAsSuccess, Field: "status", Requests: int64(rs.streamErr), Corrected: true,
		Detail: rs.streamFirst + "; now failures (error type " + StreamErrorType + ")"}
}

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
