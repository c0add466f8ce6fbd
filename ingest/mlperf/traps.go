package mlperf

import (
	"fmt"
	"strings"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// TrapFirstTokenNotMeasured: LoadGen wrote first-token statistics for
// first tokens it never received (the data-check catalogue,
// analyze/TRAPS.md).
const TrapFirstTokenNotMeasured = "mlperf_first_token_not_measured"

// traps are MLPerf LoadGen's entries of the catalogue.
var traps = []convention.Trap{{
	Code:  TrapFirstTokenNotMeasured,
	Title: "LoadGen reported first-token latencies the system under test never measured (0, or its invalid-latency sentinel)",
	Tools: "MLPerf Inference LoadGen with token latencies (v4.0 on: llama2-70b, mixtral, llama3.1 Server and Interactive) when the SUT does not call FirstTokenComplete for every sample",
	Signature: "every first-token latency statistic of the log (min, max, mean, percentiles) is 0 — a latency counted from the query's scheduled time cannot be — " +
		"or one is negative (LoadGen's kInvalidLatency, INT64_MIN, for a sample whose first token was never recorded); exact, not a heuristic",
	Action: convention.ActionNull,
	Effect: "those statistics are imported as null (the check's detail keeps the log's values), never 0; the run's verdict lines " +
		"(Result is, constraints satisfied, the early-stopping results) stay in its notes and reported text: a TTFT constraint 'satisfied' against 0 says nothing",
	Metrics: []string{"ttft_ms", "tpot_ms"},
	Source:  "https://github.com/mlcommons/inference/issues/1788",
	Test:    "ingest/mlperf TestTrapFirstTokenNotMeasured",
}}

// firstTokenNotMeasured finds first-token statistics that are no
// measurement in vals (the run's merged statistics): all of them 0, or a
// negative one. It sets them to null in vals and returns the run's check
// (nil when the statistics are real).
func firstTokenNotMeasured(vals []value) *formats.DataCheck {
	var idx []int
	zero, negative := 0, 0
	for i := range vals {
		if vals[i].metric != mFirstTok || vals[i].v == nil {
			continue
		}
		idx = append(idx, i)
		switch v := *vals[i].v; {
		case v == 0:
			zero++
		case v < 0:
			negative++
		}
	}
	if len(idx) == 0 || zero < len(idx) && negative == 0 {
		return nil
	}
	var what []string
	var nulled []int
	for _, i := range idx {
		if zero == len(idx) || *vals[i].v < 0 {
			what = append(what, vals[i].stat+" "+vals[i].raw)
			nulled = append(nulled, i)
		}
	}
	detail := fmt.Sprintf("first-token statistics as written (%s): ", vals[nulled[0]].file) + strings.Join(what, ", ")
	if zero == len(idx) {
		detail = "every first-token statistic is 0: the SUT reported no first token; " + detail
	} else {
		detail = "negative first-token statistics (LoadGen's invalid-latency sentinel: a sample completed without a first token); " + detail
	}
	for _, i := range nulled {
		vals[i].v = nil
	}
	return &formats.DataCheck{Code: TrapFirstTokenNotMeasured, Field: mFirstTok, Detail: detail}
}
