package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A Metric is one entry of tokentrace's metric table (Table): what a
// number is called in every place it appears — the SLO and gate grammars
// and the reproduction mappings (Name), the report's JSON (Key), text and
// plots (Label, Unit) — and how it is computed from a request under a
// Convention (Value), pooled over a run's gaps, or read off a run's
// report (Run). The report's rows, JSON keys, SLO and gate names,
// reconciliation, plots' axes and REPORT.md's generated metric list all
// come from the table, so that adding a metric is one entry and its
// hand-computed test.
type Metric struct {
	// Name is the metric's name in the grammars and the importers'
	// mappings (convention.ReportedMetric.Quantity): "ttft", "itl".
	Name string
	// Key is its key in the report's JSON "metrics" object ("ttft_ms");
	// "" when the report has no summary of it.
	Key string
	// Label is its name in text tables and on plot axes ("TTFT").
	Label string
	// Unit is the unit of its values: "ms", "tokens", "tok/s", "req/s" or
	// "fraction" or "count".
	Unit string
	// Scope says what one value is: one per request, one per token gap
	// pooled over the run's requests, or one per run.
	Scope Scope
	// Doc says what the metric is, in one line; Source where its
	// definition comes from.
	Doc, Source string

	// Value is the metric of one request (per-request metrics, and pooled
	// ones under conventions that take one value per request); NaN where
	// undefined. d holds the deadlines of a parametrised metric
	// (fluidity), zero otherwise.
	Value func(m *RequestMetrics, d Deadlines) float64
	// Weight is a per-request value's weight under a weighted percentile
	// method (guidellm's token weights); nil: unweighted.
	Weight func(m *RequestMetrics) float64
	// FailedRequests: the values come from failed and cancelled requests
	// instead of the convention's completed ones.
	FailedRequests bool
	// Streaming: the metric is defined for streaming runs only (a
	// non-streaming response is one message: no decode gaps).
	Streaming bool
	// WithReasoning: reported only where some request produced reasoning
	// (otherwise it equals TTFT).
	WithReasoning bool
	// FromStart: a latency from the request's start (TTFT, TTFO, E2E and
	// their schedule-relative forms): under a convention that counts
	// failed requests as +∞ (convention.FailedInfinite, AIPerf adj_*) each
	// failed or cancelled request adds one +∞ value.
	FromStart bool
	// Scheduled: the metric is measured from the request's intended start
	// (formats.Request.ScheduledStartNs) and reported only where some
	// completed request has one; a run whose file records no schedule has
	// no such row, JSON key, SLO value or plot.
	Scheduled bool
	// Vacuous says when a request without a value still meets an SLO
	// bound on the metric (nothing to constrain: TPOT with N ≤ 1).
	Vacuous func(m *RequestMetrics) bool
	// Run is a run-level metric's value from the run's report.
	Run func(rr *RunReport) RunValue
	// SQL is a report metric's value as an SQL expression over one row of
	// canonical_requests (analyze/sql/canonical.sql) — over canonical_itl
	// for a pooled metric — from which the file's canonical_samples view
	// is generated (CanonicalSamplesSQL), so that the SQL check compares
	// every report metric.
	SQL string

	// Roles. Report: a row of the report's metric table (and a JSON
	// summary). Tail: a tail metric — its P99 interval is printed, few
	// samples are warned about, its P99 spread over pooled runs is shown
	// and its CCDF is drawn. SLO: an SLO may bound it per request. Gate: a
	// gate may take a statistic of it (per request and pooled) or bound
	// it (run level). Reconcile: reconcile walks it.
	Report, Tail, SLO, Gate, Reconcile bool
	// AtLeast: bounds on it are lower bounds (fluidity, goodput); others
	// are upper bounds.
	AtLeast bool
	// Parametrised: the metric takes deadlines, fluidity(D_p, D_d).
	Parametrised bool
	// Aliases are other names the gate grammar accepts for a run-level
	// metric: its JSON path in the report ("goodput.fraction").
	Aliases []string
	// NeedsSLO: the metric is defined by an SLO (goodput).
	NeedsSLO bool
	// Condition: a gate may restrict its requests by the metric's value
	// ("p99(e2e | osl<300)"): request lengths.
	Condition bool
	// Proportion: a run-level value that is a share of requests
	// (RunValue.Successes of Trials), compared by a proportion test.
	Proportion bool
}

// Scope is what one value of a metric is.
type Scope int

const (
	// PerRequest: one value per request.
	PerRequest Scope = iota
	// Pooled: one value per token gap, pooled over the run's requests.
	Pooled
	// RunLevel: one value per run.
	RunLevel
)

// RunValue is a run-level metric's value, with what a significance test
// needs: for a Proportion metric (goodput, error rate) Successes out of
// Trials (also given for the goodput rate: the good requests).
type RunValue struct {
	Value             float64
	Successes, Trials int
	// N is the number of requests behind the value.
	N int
	// Reported: the value is the tool's own (no start times to recompute
	// it from), and Note says so.
	Reported bool
	Note     string
	// Why explains an undefined (NaN) value.
	Why string
}

// The metrics, in the order of the report's metric table. Each is
// documented in REPORT.md's metric list, which TestMetricsDoc generates
// from this table; CONVENTIONS.md gives each convention choice they rest
// on.
var (
	TTFT = &Metric{Name: "ttft", Key: "ttft_ms", Label: "TTFT", Unit: "ms", Scope: PerRequest,
		Doc:       "time to first token: request start → first response (a message carrying generated tokens, reasoning included, under the canonical convention)",
		Source:    "CONVENTIONS.md responses; = AIPerf time_to_first_token",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return m.TTFTMs },
		SQL:       "ttft_ms",
		FromStart: true, Report: true, Tail: true, SLO: true, Gate: true, Reconcile: true}
	TTFO = &Metric{Name: "ttfo", Key: "ttfo_ms", Label: "TTFO", Unit: "ms", Scope: PerRequest,
		Doc:           "time to first output token: request start → first content message (after any reasoning); reported only where some request produced reasoning",
		Source:        "AIPerf time_to_first_output_token",
		Value:         func(m *RequestMetrics, _ Deadlines) float64 { return m.TTFOMs },
		WithReasoning: true, SQL: "ttfo_ms",
		FromStart: true, Report: true, SLO: true, Gate: true}
	TTST = &Metric{Name: "ttst", Key: "ttst_ms", Label: "TTST", Unit: "ms", Scope: PerRequest,
		Doc:       "time to second token: first → second response",
		Source:    "GenAI-Perf and AIPerf time_to_second_token",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return m.TTSTMs },
		Streaming: true, SQL: "ttst_ms",
		Report: true, Gate: true, Reconcile: true}
	TPOT = &Metric{Name: "tpot", Key: "tpot_ms", Label: "TPOT", Unit: "ms", Scope: PerRequest,
		Doc:       "time per output token: (last response − first response)/(N − 1) per request under the canonical convention, so E2E = TTFT + TPOT·(N − 1); undefined for N ≤ 1",
		Source:    "CONVENTIONS.md tpot_from, tpot_divisor; = GenAI-Perf/AIPerf inter_token_latency, vLLM tpot",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return m.TPOTMs },
		Weight:    func(m *RequestMetrics) float64 { return m.TPOTTokens },
		Vacuous:   func(m *RequestMetrics) bool { return !(m.OutputTokens > 1) && !math.IsNaN(m.OutputTokens) },
		Streaming: true, SQL: "tpot_ms",
		Report: true, Tail: true, SLO: true, Gate: true, Reconcile: true}
	ITL = &Metric{Name: "itl", Key: "itl_ms", Label: "ITL", Unit: "ms", Scope: Pooled,
		Doc:       "inter-token latency: every gap between consecutive responses, pooled over the run's completed requests (a k-token message's gap split into k gaps under the canonical convention); one (last − first)/(N − 1) per request under per-request conventions",
		Source:    "CONVENTIONS.md itl; = vLLM itl, AIPerf inter_chunk_latency",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return m.ITLMeanMs },
		Weight:    func(m *RequestMetrics) float64 { return m.OutputTokens - 1 },
		Streaming: true, SQL: "itl_ms",
		Report: true, Tail: true, Gate: true, Reconcile: true}
	E2E = &Metric{Name: "e2e", Key: "e2e_ms", Label: "E2E", Unit: "ms", Scope: PerRequest,
		Doc:       "end-to-end latency: request start → the convention's end (the last generated token under the canonical convention)",
		Source:    "CONVENTIONS.md e2e_end; = AIPerf request_latency",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return m.E2EMs },
		SQL:       "e2e_ms",
		FromStart: true, Report: true, Tail: true, SLO: true, Gate: true, Reconcile: true}
	DispatchDelay = &Metric{Name: "dispatch_delay", Key: "dispatch_delay_ms", Label: "dispatch delay", Unit: "ms", Scope: PerRequest,
		Doc:       "actual start − intended start: how late the load generator sent the request against its schedule (its coordinated omission); slightly negative where a tool sends early; reported only where the file records intended starts",
		Source:    "formats/SCHEMA.md requests.scheduled_start_ns; = guidellm request_dispatch_delay (PR #1053), vLLM client_queue_time (PR #54136), inference-perf load_summary.schedule_delay",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return m.DispatchDelayMs },
		Scheduled: true, SQL: "dispatch_delay_ms",
		Report: true, Tail: true, SLO: true, Gate: true, Reconcile: true}
	SchedTTFT = &Metric{Name: "sched_ttft", Key: "sched_ttft_ms", Label: "sched TTFT", Unit: "ms", Scope: PerRequest,
		Doc:       "time to first token from the intended start: dispatch delay + TTFT, the first-token latency a user arriving on schedule saw",
		Source:    "formats/SCHEMA.md requests.scheduled_start_ns; MLCommons endpoints TTFT from sample.issued",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return fromSchedule(m, m.TTFTMs) },
		Scheduled: true, SQL: "dispatch_delay_ms + ttft_ms",
		FromStart: true, Report: true, Tail: true, SLO: true, Gate: true, Reconcile: true}
	SchedE2E = &Metric{Name: "sched_e2e", Key: "sched_e2e_ms", Label: "sched E2E", Unit: "ms", Scope: PerRequest,
		Doc:       "end-to-end latency from the intended start: dispatch delay + E2E, the latency free of coordinated omission",
		Source:    "formats/SCHEMA.md requests.scheduled_start_ns; = AIPerf effective_latency, guidellm request_scheduled_latency (PR #1053), vLLM e2el_including_client_queue (PR #54136)",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return fromSchedule(m, m.E2EMs) },
		Scheduled: true, SQL: "dispatch_delay_ms + e2e_ms",
		FromStart: true, Report: true, Tail: true, SLO: true, Gate: true, Reconcile: true}
	OSL = &Metric{Name: "osl", Key: "osl_tokens", Label: "OSL", Unit: "tokens", Scope: PerRequest,
		Doc:    "output sequence length N: generated tokens, reasoning included, from the convention's first available count source",
		Source: "CONVENTIONS.md output_count",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.OutputTokens },
		SQL:    "osl::DOUBLE",
		Report: true, Gate: true, Reconcile: true, Condition: true}
	ISL = &Metric{Name: "isl", Key: "isl_tokens", Label: "ISL", Unit: "tokens", Scope: PerRequest,
		Doc:    "input sequence length: prompt tokens (server usage, else the tool's count)",
		Source: "formats/SCHEMA.md requests.input_tokens",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.InputTokens },
		SQL:    "isl::DOUBLE",
		Report: true, Gate: true, Condition: true}
	NTPOT = &Metric{Name: "ntpot", Key: "ntpot_ms", Label: "NTPOT", Unit: "ms", Scope: PerRequest,
		Doc:    "normalized time per output token: E2E / N per request, prefill and decode spread over the output, to compare latency across output lengths and models; undefined for N < 1",
		Source: "kubernetes-sigs/inference-perf inference_perf/reportgen/base.py normalized_time_per_output_token (0 for N = 0 there); Metron (project-etalon) normalized_end_to_end_latency",
		Value: func(m *RequestMetrics, _ Deadlines) float64 {
			if !(m.OutputTokens >= 1) {
				return math.NaN()
			}
			return m.E2EMs / m.OutputTokens
		},
		SQL:    "CASE WHEN osl >= 1 THEN e2e_ms / osl END",
		Report: true, SLO: true, Gate: true}
	MaxITL = &Metric{Name: "max_itl", Label: "max ITL", Unit: "ms", Scope: PerRequest,
		Doc:       "a request's largest gap between two consecutive responses: the worst stall its reader saw",
		Source:    "tokentrace",
		Value:     func(m *RequestMetrics, _ Deadlines) float64 { return m.MaxITLMs },
		Vacuous:   func(m *RequestMetrics) bool { return m.Responses == 1 },
		Streaming: true, SLO: true, Gate: true}
	Fluidity = &Metric{Name: "fluidity", Label: "fluidity", Unit: "fraction", Scope: PerRequest,
		Doc:       "Etalon's fluidity-index under deadlines (D_p, D_d): the share of per-token deadlines met (FluidityIndex)",
		Source:    "project-etalon/etalon c238821a etalon/metrics/metric_utils.py get_request_level_deadline_miss_rate",
		Value:     func(m *RequestMetrics, d Deadlines) float64 { return m.fluidity(d) },
		Streaming: true, SLO: true, Gate: true, AtLeast: true, Parametrised: true}

	StreamEnd = &Metric{Name: "stream_end_ms", Label: "stream end", Unit: "ms", Scope: PerRequest,
		Doc:    "request start → the stream's end (its last message of any kind, or the close the tool recorded)",
		Source: "formats/SCHEMA.md requests.stream_end_offset_ns",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.StreamEndMs }}
	TPOTRate = &Metric{Name: "tpot_tokens_per_s", Label: "per-user tok/s", Unit: "tok/s", Scope: PerRequest,
		Doc:    "1000 / TPOT: a user's decode rate",
		Source: "GenAI-Perf and AIPerf output_token_throughput_per_user",
		Value: func(m *RequestMetrics, _ Deadlines) float64 {
			if math.IsNaN(m.TPOTMs) {
				return math.NaN()
			}
			return 1e3 / m.TPOTMs
		},
		Streaming: true}
	OutputRate = &Metric{Name: "osl_per_e2e_s", Label: "OSL / E2E", Unit: "tok/s", Scope: PerRequest,
		Doc:    "N / E2E in seconds: a request's output rate",
		Source: "AIPerf e2e_output_token_throughput, LLMPerf request_output_throughput_token_per_s",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.OutputTokens / (m.E2EMs / 1e3) }}
	PrefillRate = &Metric{Name: "isl_per_ttft_s", Label: "ISL / TTFT", Unit: "tok/s", Scope: PerRequest,
		Doc:    "ISL / TTFT in seconds: a request's prefill rate as the client saw it",
		Source: "AIPerf prefill_throughput_per_user",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.InputTokens / (m.TTFTMs / 1e3) }}
	OSLUsage = &Metric{Name: "osl_usage", Label: "usage completion tokens", Unit: "tokens", Scope: PerRequest,
		Doc:    "the server's usage.completion_tokens",
		Source: "OpenAI usage object",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.OutputUsage }}
	ISLUsage = &Metric{Name: "isl_usage", Label: "usage prompt tokens", Unit: "tokens", Scope: PerRequest,
		Doc:    "the server's usage.prompt_tokens",
		Source: "OpenAI usage object",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.InputUsage }}
	ISLReported = &Metric{Name: "isl_reported", Label: "tool's ISL", Unit: "tokens", Scope: PerRequest,
		Doc:    "the tool's own per-request prompt count",
		Source: "formats/SCHEMA.md requests.reported_input_tokens",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.InputReported }}
	UsageTotal = &Metric{Name: "usage_total", Label: "usage total tokens", Unit: "tokens", Scope: PerRequest,
		Doc:    "the server's prompt + completion tokens",
		Source: "OpenAI usage object",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.InputUsage + m.OutputUsage }}
	CachedInput = &Metric{Name: "cached_input", Label: "cached input tokens", Unit: "tokens", Scope: PerRequest,
		Doc:    "prompt tokens the server read from its prefix cache (the report's cache block sums them over the input)",
		Source: "formats/SCHEMA.md requests.cached_input_tokens; = AIPerf usage_prompt_cache_read_tokens",
		Value:  func(m *RequestMetrics, _ Deadlines) float64 { return m.CachedInputTokens }}
	AcceptanceLength = &Metric{Name: "acceptance_length", Label: "acceptance length", Unit: "tokens", Scope: PerRequest,
		Doc:    "tokens a speculative-decoding step emitted on average for the request: 1 + accepted draft tokens / verification steps (the bonus token included); undefined without the server's counts",
		Source: "vLLM response metrics.speculative_decoding mean_acceptance_length (PR #48915); formats/SCHEMA.md requests.accepted_tokens, spec_steps",
		Value: func(m *RequestMetrics, _ Deadlines) float64 {
			if !(m.SpecSteps > 0) || math.IsNaN(m.AcceptedTokens) {
				return math.NaN()
			}
			return 1 + m.AcceptedTokens/m.SpecSteps
		}}
	ErrorISL = &Metric{Name: "error_isl", Label: "ISL of failures", Unit: "tokens", Scope: PerRequest,
		Doc:            "input tokens of failed and cancelled requests",
		Source:         "AIPerf error_isl",
		Value:          func(m *RequestMetrics, _ Deadlines) float64 { return m.InputTokens },
		FailedRequests: true}

	GoodputFraction = &Metric{Name: "goodput", Label: "goodput", Unit: "fraction", Scope: RunLevel,
		Doc:     "the share of all requests that completed and met every SLO constraint at once (needs --slo)",
		Source:  "DistServe (Zhong et al., OSDI 2024) goodput; REPORT.md goodput",
		Aliases: []string{"goodput.fraction"}, Gate: true, AtLeast: true, NeedsSLO: true, Proportion: true,
		Run: func(rr *RunReport) RunValue {
			if rr.Goodput == nil {
				return RunValue{Value: math.NaN(), Why: "no goodput (no SLO)"}
			}
			return RunValue{Value: float64(rr.Goodput.Fraction), Successes: rr.Goodput.Good, Trials: rr.Goodput.Total, N: rr.Goodput.Total, Why: "undefined: no requests, or no duration"}
		}}
	GoodputRate = &Metric{Name: "goodput_rate", Label: "goodput rate", Unit: "req/s", Scope: RunLevel,
		Doc:     "good requests per second over the run's duration (needs --slo)",
		Source:  "vLLM request_goodput, GenAI-Perf request_goodput",
		Aliases: []string{"goodput.requests_per_s"}, Gate: true, AtLeast: true, NeedsSLO: true,
		Run: func(rr *RunReport) RunValue {
			if rr.Goodput == nil {
				return RunValue{Value: math.NaN(), Why: "no goodput (no SLO)"}
			}
			return RunValue{Value: float64(rr.Goodput.RequestsPerS), Successes: rr.Goodput.Good, Trials: rr.Goodput.Total, N: rr.Goodput.Total, Why: "undefined: no requests, or no duration"}
		}}
	OutputThroughput = &Metric{Name: "throughput", Label: "output throughput", Unit: "tok/s", Scope: RunLevel,
		Doc:     "output tokens of completed requests per second of the run's duration",
		Source:  "CONVENTIONS.md duration",
		Aliases: []string{"throughput.output_tokens_per_s"}, Gate: true, AtLeast: true,
		Run: func(rr *RunReport) RunValue { return throughputValue(rr, float64(rr.Throughput.OutputTokensPerS)) }}
	RequestRate = &Metric{Name: "request_rate", Label: "request rate", Unit: "req/s", Scope: RunLevel,
		Doc:     "completed requests per second of the run's duration",
		Source:  "CONVENTIONS.md throughput_requests",
		Aliases: []string{"throughput.requests_per_s"}, Gate: true, AtLeast: true,
		Run: func(rr *RunReport) RunValue { return throughputValue(rr, float64(rr.Throughput.RequestsPerS)) }}
	ErrorRate = &Metric{Name: "error_rate", Label: "error rate", Unit: "fraction", Scope: RunLevel,
		Doc:     "(failed + cancelled) / all requests",
		Source:  "REPORT.md requests.error_rate",
		Aliases: []string{"requests.error_rate"}, Gate: true, Proportion: true,
		Run: func(rr *RunReport) RunValue {
			return RunValue{Value: float64(rr.Requests.ErrorRate), Successes: rr.Requests.Failed + rr.Requests.Cancelled, Trials: rr.Requests.Total, N: rr.Requests.Total, Why: "undefined: the run has no per-request rows"}
		}}
)

// DataWarnings counts the data checks that found a run's data wrong or
// impossible (TRAPS.md): the warnings marked DataCheck; explanations
// (itl_below_tpot) are not counted. A gate data_warnings<=0 fails CI on
// data that disagrees with itself.
var DataWarnings = &Metric{Name: "data_warnings", Label: "data warnings", Unit: "count", Scope: RunLevel,
	Doc:     "data checks that found the run's data wrong or impossible (TRAPS.md; explanations and routine corrections not counted)",
	Source:  "TRAPS.md",
	Aliases: []string{"warnings.data_check"}, Gate: true,
	Run: func(rr *RunReport) RunValue {
		n := 0
		for _, w := range rr.Warnings {
			if w.DataCheck && !w.Routine {
				n++
			}
		}
		return RunValue{Value: float64(n)}
	}}

// fromSchedule is a latency v of m measured from the intended start: v
// itself when the convention already measures from it, else the dispatch
// delay + v (NaN without an intended start).
func fromSchedule(m *RequestMetrics, v float64) float64 {
	if m.FromSchedule {
		return v
	}
	return m.DispatchDelayMs + v
}

// throughputValue is a throughput's RunValue: recomputed, or the tool's
// own where the source has no start times.
func throughputValue(rr *RunReport, v float64) RunValue {
	out := RunValue{Value: v, N: rr.Requests.Completed, Why: "undefined: no duration or token counts"}
	if rr.Throughput.Reported {
		out.Reported = true
		out.Note = "the source has no request start times: the value is the tool's own reported throughput"
	}
	return out
}

// Table is every metric, in the order of the report's metric table.
var Table = []*Metric{
	TTFT, TTFO, TTST, TPOT, ITL, E2E, NTPOT, DispatchDelay, SchedTTFT, SchedE2E, MaxITL, OSL, ISL, Fluidity,
	StreamEnd, TPOTRate, OutputRate, PrefillRate, OSLUsage, ISLUsage, ISLReported, UsageTotal, CachedInput, AcceptanceLength, ErrorISL,
	GoodputFraction, GoodputRate, OutputThroughput, RequestRate, ErrorRate, DataWarnings,
}

// LookupMetric returns the metric called name (its Name or one of its
// Aliases), or nil.
func LookupMetric(name string) *Metric {
	for _, m := range Table {
		if m.Name == name {
			return m
		}
		for _, a := range m.Aliases {
			if a == name {
				return m
			}
		}
	}
	return nil
}

// MetricsTable renders the Table as Markdown: a row per metric with its
// name, JSON key, unit, scope, where it is used, definition and source.
// REPORT.md embeds it between MetricsBegin and MetricsEnd
// (TestMetricsDoc keeps it current).
func MetricsTable() string {
	var b strings.Builder
	b.WriteString("| name | JSON key | unit | one value per | used in | definition | source |\n|---|---|---|---|---|---|---|\n")
	scope := map[Scope]string{PerRequest: "request", Pooled: "token gap (pooled)", RunLevel: "run"}
	for _, m := range Table {
		var uses []string
		for _, u := range []struct {
			on   bool
			name string
		}{{m.Report, "report"}, {m.Tail, "tail"}, {m.SLO, "slo"}, {m.Gate, "gate"}, {m.Condition, "gate condition"}, {m.Reconcile, "reconcile"}} {
			if u.on {
				uses = append(uses, u.name)
			}
		}
		if len(uses) == 0 {
			uses = []string{"reproduction"}
		}
		name := "`" + m.Name + "`"
		if m.Parametrised {
			name = "`" + m.Name + "(D_p, D_d)`"
		}
		for _, a := range m.Aliases {
			name += ", `" + a + "`"
		}
		key := "–"
		if m.Key != "" {
			key = "`" + m.Key + "`"
		}
		cell := strings.NewReplacer("|", "\\|", "\n", " ").Replace
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", name, key, m.Unit, scope[m.Scope], strings.Join(uses, ", "), cell(m.Doc), cell(m.Source))
	}
	return b.String()
}

// Markers around the generated metric table in REPORT.md.
const (
	MetricsBegin = "<!-- metrics-table:begin (generated by go test ./analyze -run TestMetricsDoc -update) -->"
	MetricsEnd   = "<!-- metrics-table:end -->"
)

// FormatValue writes v in a metric's unit for messages and reports: "25.00
// ms", "3.2/s", "1000 tok/s", "300 tok", a fraction with 4 significant
// digits; "∞" for +∞ (a statistic failed requests reached under
// failed_requests infinite), "null" when v is NaN or −∞.
func FormatValue(v float64, unit string) string {
	if math.IsInf(v, 1) {
		return "∞" // a statistic failed requests reached (failed_requests infinite)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "null"
	}
	n := shortNum(v)
	switch unit {
	case "fraction":
		return strconv.FormatFloat(v, 'g', 4, 64)
	case "req/s":
		return n + "/s"
	case "tok/s":
		return n + " tok/s"
	case "tokens":
		return n + " tok"
	case "count":
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return n + " ms"
}

// shortNum writes x with 2 decimals between 1 and 100, fewer above, 4
// significant digits below 1 and from 1e7.
func shortNum(x float64) string {
	a := math.Abs(x)
	switch {
	case a == 0:
		return "0"
	case a >= 1e7:
		return strconv.FormatFloat(x, 'g', 4, 64)
	case a >= 1000:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// CanonicalSamplesSQL is the canonical_samples view of
// analyze/sql/canonical.sql, generated from the Table: for every report
// metric, (run_id, metric key, value) over the convention's completed
// requests (streaming runs only for streaming metrics; runs with reasoning
// only for WithReasoning ones), the pooled ones from canonical_itl.
// canonical.sql embeds it between SamplesBegin and SamplesEnd
// (TestCanonicalSQLMetrics keeps it current), and canonical_stats lists the
// same metrics (its metric list is CanonicalMetricsSQL).
func CanonicalSamplesSQL() string {
	var b strings.Builder
	b.WriteString("CREATE OR REPLACE VIEW canonical_samples AS\n")
	first := true
	for _, m := range Table {
		if !m.Report {
			continue
		}
		if first {
			b.WriteString("          ")
			first = false
		} else {
			b.WriteString("UNION ALL ")
		}
		if m.Scope == Pooled {
			fmt.Fprintf(&b, "SELECT run_id, '%s' AS metric, %s AS v FROM canonical_itl\n", m.Key, m.SQL)
			continue
		}
		where := "counted"
		if m.Streaming {
			where += " AND streaming"
		}
		if m.WithReasoning {
			where += " AND run_has_reasoning"
		}
		if m.Scheduled {
			where += " AND dispatch_delay_ms IS NOT NULL"
		}
		fmt.Fprintf(&b, "SELECT run_id, '%s' AS metric, %s AS v FROM canonical_requests WHERE %s\n", m.Key, m.SQL, where)
	}
	return strings.TrimSuffix(b.String(), "\n") + ";"
}

// CanonicalMetricsSQL is the VALUES list of the report metrics' keys that
// canonical_stats crosses every run with.
func CanonicalMetricsSQL() string {
	var keys []string
	for _, m := range Table {
		if m.Report {
			keys = append(keys, "('"+m.Key+"')")
		}
	}
	return "(VALUES " + strings.Join(keys, ", ") + ") m(metric)"
}

// Markers around the generated parts of analyze/sql/canonical.sql.
const (
	SamplesBegin     = "-- canonical-samples:begin (generated from analyze/metric.go by go test ./analyze -run TestCanonicalSQLMetrics -update)"
	SamplesEnd       = "-- canonical-samples:end"
	MetricsListBegin = "-- canonical-metrics:begin (generated likewise)"
	MetricsListEnd   = "-- canonical-metrics:end"
)
