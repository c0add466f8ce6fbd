package llmperf

import (
	"fmt"
	"math"
	"time"
)

// Convention names written to Run.Convention (see analyze/CONVENTIONS.md).
const (
	// Convention2023 is LLMPerf from 1eac866 ("LLMPerfV2", 2023-12-05) up to
	// afd137a: request_output_throughput_token_per_s = SSE chunks / e2e,
	// inter_token_latency_s = (t_last_content − st) / N_tok.
	Convention2023 = "llmperf@2023-12"
	// Convention2024Apr is afd137a (2024-04-07) up to f1d6bed:
	// throughput = N_tok / e2e, ITL as before.
	Convention2024Apr = "llmperf@2024-04"
	// Convention2024Dec is f1d6bed (2024-12-09, the final code): throughput
	// = N_tok / e2e, ITL = (t_last_content − st) / client chunk count.
	Convention2024Dec = "llmperf@2024-12"
	// ConventionUnknown is used when nothing tells the version apart (no
	// successful row and no summary timestamp).
	ConventionUnknown = "llmperf"
)

// Commit dates that bound the versions (UTC midnight; a run's summary
// timestamp is never earlier than the code it ran).
var (
	afd137aDate = time.Date(2024, 4, 7, 0, 0, 0, 0, time.UTC).Unix()  // 1712448000
	f1d6bedDate = time.Date(2024, 12, 9, 0, 0, 0, 0, time.UTC).Unix() // 1733702400
)

// version is the detected LLMPerf version and what follows from it.
type version struct {
	name string
	// divideByTokens: inter_token_latency_s = (t_last − st) / N_tok, so
	// ITL·number_output_tokens recovers t_last. Known true for 2023-12 and,
	// with a summary timestamp before f1d6bed, for 2024-04.
	divideByTokens bool
	evidence       string
	// noLastToken says why no last-token offset is recovered when
	// divideByTokens is false.
	noLastToken string
}

// detectConvention tells the LLMPerf version from the rows' throughput rule
// and the summary timestamp (unix seconds; nil without a summary):
//
//   - request_output_throughput_token_per_s · end_to_end_latency_s differs
//     from number_output_tokens (by more than 1e-6 relative) on most
//     successful rows: the throughput counts SSE chunks → 2023-12. A
//     timestamp before afd137a also means 2023-12, whatever the rows say.
//   - it equals number_output_tokens: 2024-04, or 2024-12 when the
//     timestamp is on or after f1d6bed's date. Without a timestamp the two
//     cannot be told apart: the label is 2024-04, but no last-token offset
//     is recovered.
//   - no successful row with timings: the timestamp alone decides, and
//     without it the convention is "llmperf".
func detectConvention(rows []row, timestamp *int64) version {
	match, differ := 0, 0
	for i := range rows {
		r := &rows[i]
		if r.is(isFailed) || !r.is(hasThr) || !r.is(hasE2E) || r.e2e <= 0 || !r.is(hasOut) {
			continue
		}
		n := float64(r.nOut)
		if math.Abs(r.thr*r.e2e-n) <= 1e-6*math.Max(1, n) {
			match++
		} else {
			differ++
		}
	}
	rule := fmt.Sprintf("request_output_throughput_token_per_s × end_to_end_latency_s equals number_output_tokens on %d of %d successful rows", match, match+differ)
	ts := ""
	if timestamp != nil {
		ts = fmt.Sprintf("; summary timestamp %d (%s)", *timestamp, time.Unix(*timestamp, 0).UTC().Format("2006-01-02"))
	}
	switch {
	case match+differ > 0 && differ*2 > match+differ:
		return version{Convention2023, true, rule + " (it counts SSE chunks: LLMPerf before afd137a)" + ts, ""}
	case timestamp != nil && *timestamp < afd137aDate:
		return version{Convention2023, true, rule + ts + ", before afd137a (2024-04-07)", ""}
	case timestamp != nil && *timestamp >= f1d6bedDate:
		return version{Convention2024Dec, false, rule + ts + ", on or after f1d6bed (2024-12-09)",
			"f1d6bed divides inter_token_latency_s by the client's SSE chunk count, which the file does not keep"}
	case timestamp != nil && match > 0:
		return version{Convention2024Apr, true, rule + ts + ", before f1d6bed (2024-12-09)", ""}
	case timestamp != nil:
		return version{Convention2024Apr, true, "no successful row to test the throughput rule" + ts + ", between afd137a and f1d6bed", ""}
	case match > 0:
		return version{Convention2024Apr, false, rule + "; no summary timestamp, so 2024-04 and 2024-12 (f1d6bed) cannot be told apart",
			"without the summary's timestamp 2024-04 (ITL divided by tokens) and 2024-12 (divided by SSE chunks) cannot be told apart"}
	}
	return version{ConventionUnknown, false, "no successful row and no summary timestamp: LLMPerf version unknown",
		"the LLMPerf version, which decides what inter_token_latency_s is divided by, is unknown"}
}
