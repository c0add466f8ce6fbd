package guidellm

import "github.com/tokentrace/tokentrace/convention"

// srcGuideLLM is the repository the profiles were read from.
const srcGuideLLM = "vllm-project/guidellm"

// Profile03 is guidellm v0.2–v0.3.
var Profile03 = convention.Convention{
	Name: Convention03, Tool: Name,
	Completed: convention.CompletedOK, Responses: convention.ResponsesTokens, ResponseUnit: convention.UnitMessage, E2EEnd: convention.E2EStreamEnd,
	OutputTokens: []convention.CountSource{convention.CountToolReported, convention.CountServerUsage, convention.CountRequested, convention.CountTokenizer}, TPOTFrom: convention.TPOTFromFirstResponse, TPOTDivisor: convention.DivideN,
	TPOTRounding: convention.RoundNone, ITL: convention.ITLPerRequestMean, Percentile: convention.PercentileWeightedNearestRank, StdDDOF: 0,
	Duration: convention.DurationAllSpan, ThroughputRequests: convention.ThroughputCompleted, Goodput: convention.GoodputNone,
	Sources: map[string]string{
		"completed":           srcGuideLLM + " v0.3.0 benchmark.py: successful requests; N=0 dropped from TTFT/TPOT",
		"responses":           srcGuideLLM + " v0.3.0: first streamed iteration carrying tokens",
		"response_unit":       srcGuideLLM + ": iterations (SSE messages)",
		"e2e_end":             srcGuideLLM + ": request_latency = request_end − request_start",
		"latency_from":        srcGuideLLM + ": from request_start; request_scheduled_latency (from targeted_start, PR #1053) is a separate metric",
		"failed_requests":     srcGuideLLM + ": per status (successful, errored, incomplete, total); the successful distribution is the headline",
		"output_count":        srcGuideLLM + " v0.3.0 benchmark/aggregator.py _compile_tokens_count: the record's output_tokens (usage, else the request's count, else tokenizer)",
		"tokenize_reasoning":  srcGuideLLM + " v0.3: content text",
		"special_tokens":      srcGuideLLM + " v0.3: none",
		"tpot_from":           srcGuideLLM + " v0.3.0 benchmark.py GenerativeTextResponseStats: (t_last − t_first)",
		"tpot_divisor":        srcGuideLLM + " v0.3.0: / N (docstring says TTFT included; code does not)",
		"tpot_count":          srcGuideLLM + ": output tokens",
		"tpot_rounding":       srcGuideLLM + ": none",
		"itl":                 srcGuideLLM + " v0.3.0: per request (t_last − t_first)/(N − 1), weighted by N − 1",
		"percentile":          srcGuideLLM + " v0.3 objects/statistics.py: weighted nearest rank (argmax cdf ≥ p)",
		"std":                 srcGuideLLM + ": from the weighted pmf (population)",
		"duration":            srcGuideLLM + " v0.3: max(end) − min(start) over all requests",
		"throughput_requests": srcGuideLLM + ": time-weighted rate distribution of request ends",
		"goodput":             srcGuideLLM + ": none",
		"corrections":         "the tool computes from its data as written, its known bugs included: reproducing its numbers needs them uncorrected",
	},
}

// Profile04 is guidellm v0.4 and later: TPOT includes TTFT.
var Profile04 = func() convention.Convention {
	c := convention.WithName(Profile03, Convention04, map[string]string{
		"tpot_from":    srcGuideLLM + " 31e2630 schemas/request_stats.py: (t_last − t_request)/N, includes TTFT",
		"output_count": srcGuideLLM + " v0.4–v0.5 schemas/response.py compile_stats: the record's output_tokens (usage, else the request's target count; v0.6+ ef589a01: else token_iterations)",
		"duration":     srcGuideLLM + " v0.4+: scheduler measure window (measure_end − measure_start), in the file",
		"percentile":   srcGuideLLM + " v0.4+ schemas/statistics.py: weighted nearest rank (searchsorted left)",
		"completed":    srcGuideLLM + " v0.4+: no filter; missing values enter as 0 (trap)",
	})
	c.TPOTFrom = convention.TPOTFromRequestStart
	c.OutputTokens = []convention.CountSource{convention.CountToolReported, convention.CountServerUsage, convention.CountResponses}
	c.Duration = convention.DurationNotRecorded
	return c
}()

// guidellm's reported metrics as this package stores them: Metric
// "<metric>.<status>" with status successful, incomplete, errored or
// total; Stat the tool's statistic name, percentiles as "p0.1" … "p99.9".

const (
	whyGuideRate   = "guidellm's rate and concurrency metrics are time-weighted distributions over event timelines (request ends, token iterations it spreads evenly between first and last token), which tokentrace does not rebuild"
	whyGuideStatus = "tokentrace computes latency statistics over successful requests only; guidellm's incomplete, errored and total summaries include unfinished and failed requests (with missing values as 0)"
	whyGuideIter   = "guidellm's iteration counts per request (request_iterations, tokens per iteration) are not a tokentrace quantity"
	whyGuideTotal  = "prompt + output tokens per request is not a tokentrace quantity"
	whyGuideCancel = "tokentrace has no scalar for cancelled requests alone"
	whyUnixSeconds = "guidellm subtracts two Unix times in float seconds (about 0.24 µs apart near 1.75e9 s) where tokentrace subtracts whole nanoseconds: a delay of a fraction of a millisecond differs in its fifth digit"
	whyGuideWindow = "guidellm v0.4+ measures duration as the scheduler's measurement window (measure_end − measure_start, minus warm-up and cool-down), not a span of request times"
)

// guidellmPerRequest maps guidellm's per-request distributions to
// quantities (over successful requests).
var guidellmPerRequest = map[string]convention.ReportedMetric{
	"time_to_first_token_ms":        convention.Map("ttft", 1),
	"time_to_first_output_token_ms": convention.Map("ttfo", 1),
	"time_per_output_token_ms":      convention.Map("tpot", 1),
	"inter_token_latency_ms":        convention.Map("itl", 1),
	"request_latency":               convention.Map("e2e", 1e-3),
	// request_start − targeted_start and request_end − targeted_start,
	// null for strategies without a schedule (vllm-project/guidellm PR
	// #1053, merged 2026-08-26, after v0.7.3); seconds, as guidellm's
	// other unsuffixed times (request_latency) — no released file checked.
	"request_dispatch_delay":             convention.Map("dispatch_delay", 1e-3),
	"request_scheduled_latency":          convention.Map("sched_e2e", 1e-3),
	"output_token_count":                 convention.Map("osl", 1),
	"prompt_token_count":                 convention.Map("isl", 1),
	"total_token_count":                  convention.Unmapped(whyGuideTotal),
	"request_streaming_iterations_count": convention.Unmapped(whyGuideIter),
	"output_tokens_per_iteration":        convention.Unmapped(whyGuideIter),
	"iter_tokens_per_iteration":          convention.Unmapped(whyGuideIter),
	"requests_per_second":                convention.Unmapped(whyGuideRate),
	"request_concurrency":                convention.Unmapped(whyGuideRate),
	"prompt_tokens_per_second":           convention.Unmapped(whyGuideRate),
	"output_tokens_per_second":           convention.Unmapped(whyGuideRate),
	"tokens_per_second":                  convention.Unmapped(whyGuideRate),
}

func metrics(c convention.Convention) map[string]convention.ReportedMetric {
	m := map[string]convention.ReportedMetric{
		"request_totals.successful": convention.Map("scalar:counted", 1),
		"request_totals.errored":    convention.Map("scalar:errors", 1),
		"request_totals.total":      convention.Map("scalar:total", 1),
		"request_totals.incomplete": convention.Unmapped(whyGuideCancel),
		"duration":                  convention.Map("scalar:duration_s", 1),
		"warmup_duration":           convention.Unmapped(whyGuideWindow),
		"cooldown_duration":         convention.Unmapped(whyGuideWindow),
	}
	if c.Duration == convention.DurationNotRecorded {
		m["duration"] = convention.Unmapped(whyGuideWindow)
	}
	for name, tm := range guidellmPerRequest {
		for _, st := range []string{"successful", "incomplete", "errored", "total"} {
			if st == "successful" || tm.Reason != "" {
				m[name+"."+st] = tm
			} else {
				m[name+"."+st] = convention.Unmapped(whyGuideStatus)
			}
		}
	}
	return m
}

// Tool is what tokentrace knows of guidellm's numbers: its distributions'
// statistics come from a weighted probability mass function, computed
// by v0.2–v0.3 and v0.4+ rules (analyze/stats.PMFStat).
var Tool = convention.Tool{
	Name:     Name,
	Profiles: []convention.Convention{Profile03, Profile04},
	Aliases:  map[string]string{Name: Convention04},
	Metrics:  metrics,
	Traps:    traps,
	// What the text report shows today: the one metric guidellm shares
	// its name with another tool's headline (its others are per status).
	Headline: []string{"duration"},
	Differences: []convention.Difference{{
		RunNote: "sampled:",
		Reason:  "the file keeps only a sample of the run's requests (guidellm --sample-requests); the tool's statistics cover them all",
	}, {
		Metric: "request_dispatch_delay.successful",
		Reason: whyUnixSeconds,
	}, {
		Metric: "request_scheduled_latency.successful",
		Reason: whyUnixSeconds,
	}},
	Stats: map[string]convention.StatsRule{Convention03: convention.StatsPMF, Convention04: convention.StatsPMFMerged},
}
