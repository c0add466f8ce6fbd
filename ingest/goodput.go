package ingest

import (
	"fmt"
	"strings"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// CheckGoodputDenominator: a run reports a tool's goodput while some of
// its requests failed, and the tool divides its goodput by something else
// than tokentrace does (every request).
const CheckGoodputDenominator = "goodput_denominator"

// GoodputTraps is the catalogue entry of CheckGoodputDenominator (ingest/
// registry lists it with the other shared checks). Each importer says how
// its tool divides (a GoodputRule); the check is the same for all.
var GoodputTraps = []convention.Trap{{
	Code:  CheckGoodputDenominator,
	Title: "the tool's goodput divides by something else than tokentrace's, and the run has failed requests",
	Tools: "vLLM bench serve request_goodput (good / duration; only successful requests are compared with the SLO), " +
		"AIPerf good_request_fraction (good / (request_count + error_request_count); cancelled requests in neither) and goodput (good / duration), " +
		"inference-perf goodput_percentage (100 · good / the successful requests) and request_goodput (good / the successes' time span)",
	Signature: "a run that reports one of those goodput values and whose requests include failures (error rate > 0, from the per-request data or the tool's own counts)",
	Action:    convention.ActionExplain,
	Effect: "not a bug, a definition: tokentrace's goodput (--slo) is the good requests over every request of the run, a failure never good; " +
		"one line names the tool's value, its denominator and the failures: inference-perf's percentage leaves them out of its denominator, so it is above tokentrace's fraction; " +
		"AIPerf's fraction counts them as tokentrace does; a rate over the duration (vLLM, AIPerf, inference-perf's request_goodput) is no fraction and is compared with tokentrace's good requests per second",
	Metrics: []string{"goodput"},
	Source: "https://github.com/vllm-project/vllm/blob/def9ce85ba1079af970a58ed3d42dd861ae35d58/vllm/benchmarks/serve.py (calculate_metrics: the SLO check runs over the successes' ttfts, tpots and e2els; request_goodput = good_completed / dur_s), " +
		"https://github.com/ai-dynamo/aiperf/blob/5a6db6c297df6f091d7462fa606d1a5590d582b9/src/aiperf/metrics/types/good_request_fraction_metric.py, " +
		"https://github.com/kubernetes-sigs/inference-perf/blob/7de5ef2ed6f7934e0ecbc8297e593f79e68430c0/inference_perf/reportgen/base.py (calculate_goodput_metrics over all_successful)",
	Test: "ingest/registry TestGoodputDenominator",
}}

// GoodputRule is how a tool divides one goodput value it reports: the
// reported statistic (Metric, Stat) and its definition in words ("good /
// duration").
type GoodputRule struct {
	Metric, Stat string
	Rule         string
}

// GoodputDenominator is the CheckGoodputDenominator explanation of a run
// whose reported values hold one of rules' goodputs, failed of its total
// requests having failed; nil when none is reported or nothing failed.
func GoodputDenominator(tool string, reported []formats.ReportedStat, rules []GoodputRule, failed, total int64) *formats.DataCheck {
	if failed <= 0 || total <= 0 {
		return nil
	}
	var what []string
	field := ""
	for _, g := range rules {
		for _, r := range reported {
			if r.Metric == g.Metric && r.Stat == g.Stat && r.Value != nil {
				what = append(what, fmt.Sprintf("%s %.4g = %s", g.Metric, *r.Value, g.Rule))
				if field == "" {
					field = g.Metric
				}
				break
			}
		}
	}
	if len(what) == 0 {
		return nil
	}
	return &formats.DataCheck{Code: CheckGoodputDenominator, Field: field, Requests: failed,
		Detail: fmt.Sprintf("%s's %s; %d of %d requests failed: tokentrace's goodput is good / all %d requests, a failure never good", tool, strings.Join(what, ", "), failed, total, total)}
}
