package aiperf

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TrapIncompleteResults: AIPerf's summary says its results cover only part
// of the run (is_complete false, a runtime reason that invalidates the
// run), or the run measured no request at all.
const TrapIncompleteResults = "aiperf_incomplete_results"

// traps are AIPerf's entries of the data-check catalogue (analyze/TRAPS.md).
var traps = []convention.Trap{{
	Code:  TrapIncompleteResults,
	Title: "AIPerf's results do not cover the whole run: it said so, or the run measured no request",
	Tools: "AIPerf 2026 (profile_export_aiperf.json with is_complete and incomplete_reason, written from ProfileResults; " +
		"runtime_submission_invalid_reasons, summary schema 1.5); the zero-request case in every version",
	Signature: "the JSON summary has is_complete false (incomplete_reason says why: the record-stall watchdog gave up waiting, or finalization failed; " +
		"AIPerf: its metrics are over a subset of the run and must not be compared with complete runs), " +
		"or a non-empty runtime_submission_invalid_reasons (a runtime condition, such as too little metric coverage of the profiling duration, invalidates the run), " +
		"or the summary counts no request (no request_count and no error_request_count above 0) and the file has no profiling record",
	Action: convention.ActionFlag,
	Effect: "the run's values stay as imported and the warning names AIPerf's reason; gate fails the run with a \"results complete\" result whatever gates it was given " +
		"(a run that covers part of its schedule, or none of it, is no evidence), and data_warnings counts it",
	Incomplete: true,
	Metrics:    []string{"request_throughput", "output_throughput", "ttft_ms", "e2e_ms", "error_rate"},
	Source: "https://github.com/ai-dynamo/aiperf/blob/main/src/aiperf/common/models/record_models.py (ProfileResults.is_complete, incomplete_reason), " +
		"https://github.com/ai-dynamo/aiperf/blob/main/src/aiperf/exporters/metrics_json_exporter.py, " +
		"https://github.com/ai-dynamo/aiperf/blob/1554b478d4eec073cb23365b2c1e1b6dbece2e62/docs/reference/json-export-schema.md (runtime_submission_invalid_reasons, schema 1.5)",
	Test: "ingest/aiperf TestTrapIncompleteResults",
}}

// resultsComplete is what a summary says of its own completeness.
type resultsComplete struct {
	incomplete bool     // is_complete: false
	reason     string   // incomplete_reason
	invalid    []string // runtime_submission_invalid_reasons
}

// read takes one of the summary's top-level keys.
func (c *resultsComplete) read(key string, raw json.RawMessage) {
	switch key {
	case "is_complete":
		c.incomplete = strings.TrimSpace(string(raw)) == "false"
	case "incomplete_reason":
		c.reason = ingest.RawText(raw)
	case "runtime_submission_invalid_reasons":
		var r []string
		if json.Unmarshal(raw, &r) == nil {
			c.invalid = r
		}
	}
}

// counted reports whether the summary counts at least one request,
// successful or failed.
func (s *summary) counted() bool {
	for _, r := range s.reported {
		if (r.Metric == "request_count" || r.Metric == "error_request_count") && r.Stat == "avg" && r.Value != nil && *r.Value > 0 {
			return true
		}
	}
	return false
}

// incompleteCheck is the run's TrapIncompleteResults check, nil when the
// summary (nil: none) says its results are whole. records is the number of
// profiling records read, -1 when there is no JSONL (a summary alone).
func incompleteCheck(s *summary, records int) *formats.DataCheck {
	if s == nil || !s.fromJSON {
		return nil
	}
	var field string
	var why []string
	add := func(f, w string) {
		if field == "" {
			field = f
		}
		why = append(why, w)
	}
	if c := s.complete; c.incomplete {
		w := "is_complete false"
		if c.reason != "" {
			w += fmt.Sprintf(" (incomplete_reason %q)", c.reason)
		}
		add("is_complete", w)
	}
	if len(s.complete.invalid) > 0 {
		add("runtime_submission_invalid_reasons", "runtime_submission_invalid_reasons "+strings.Join(s.complete.invalid, ", "))
	}
	if records <= 0 && !s.counted() {
		w := "the summary counts no request (no request_count or error_request_count above 0)"
		if records == 0 {
			w += " and the file has no profiling record"
		}
		add("request_count", w)
	}
	if field == "" {
		return nil
	}
	return &formats.DataCheck{Code: TrapIncompleteResults, Field: field, Detail: filepath.Base(s.src.Path) + ": " + strings.Join(why, "; ")}
}

// goodputRules are how AIPerf divides its goodputs: good_request_fraction
// (good_request_fraction_metric.py: good / (request_count +
// error_request_count), cancelled requests in neither) and goodput
// (goodput_metric.py: good / the benchmark duration).
var goodputRules = []ingest.GoodputRule{
	{Metric: "good_request_fraction", Stat: "avg", Rule: "good / (request_count + error_request_count), failures counted"},
	{Metric: "goodput", Stat: "avg", Rule: "good / benchmark duration"},
}

// goodputCheck is the shared goodput_denominator explanation of a summary
// (nil: none) that reports a goodput and counts failed requests
// (error_request_count).
func goodputCheck(s *summary) *formats.DataCheck {
	if s == nil {
		return nil
	}
	var ok, failed float64
	for _, r := range s.reported {
		if r.Stat != "avg" || r.Value == nil {
			continue
		}
		switch r.Metric {
		case "request_count":
			ok = *r.Value
		case "error_request_count":
			failed = *r.Value
		}
	}
	return ingest.GoodputDenominator("AIPerf", s.reported, goodputRules, int64(failed), int64(ok+failed))
}
