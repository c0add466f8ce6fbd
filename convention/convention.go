// Package convention defines what a metric convention is — the explicit
// choices behind TTFT, TPOT, ITL, E2E, output counts, percentiles and
// throughput — and what an importer tells the analysis about its tool: the
// tool's convention profiles and version rules, the mapping of its reported
// statistics to tokentrace's metrics, its headline statistics and the
// known reasons its numbers differ (Tool). It is a leaf: importers (package
// ingest and its sub-packages) fill these values in, analyze reads them,
// and neither imports the other. cmd hands the registry's Tools to analyze
// through a Set.
//
// analyze/CONVENTIONS.md tabulates every profile's choices and their
// sources (Table).
package convention

import (
	"fmt"
	"strings"
)

// A Convention is a named set of explicit metric-definition choices: which
// requests count, which messages are the "responses" that start TTFT and
// delimit ITL gaps, where E2E ends, where the output-token count N comes
// from, how TPOT is formed, how percentiles and the standard deviation are
// computed and what the run's duration is. Every metric tokentrace reports
// is computed under one Convention; reproducing a peer tool's numbers is
// computing under that tool's Convention (its importer's profile.go), and reconciling two
// numbers is changing one choice at a time (Reconcile).
//
// Conventions are plain values: copy one, change a field, compare. Each
// choice's source (tool, file, version, commit) is in Sources, keyed by the
// choice names of ChoiceNames; analyze/CONVENTIONS.md tabulates them.
type Convention struct {
	// Name identifies the convention: "tokentrace", "genai-perf",
	// "llmperf@2023-12", …
	Name string
	// Tool is the tool whose definitions these are ("" for tokentrace).
	Tool string
	// Completed selects the requests latency statistics are computed over.
	Completed RequestFilter
	// Responses selects the messages that count as responses: TTFT is the
	// first, TTST the gap from first to second, ITL samples the gaps
	// between consecutive ones, and (with E2ELastResponse) E2E the last.
	Responses ResponseRule
	// ResponseUnit says whether a response is one SSE message or one network
	// read (GenAI-Perf merges the events of one read into one response).
	ResponseUnit ResponseUnit
	// E2EEnd is where E2E ends.
	E2EEnd E2ERule
	// FailedLatency is whether failed and cancelled requests enter the
	// latency statistics: left out (every tool's headline numbers) or as
	// one +∞ sample each (AIPerf's error-adjusted adj_* metrics,
	// PERCENTILE_INCLUDES_FAILED_REQUESTS, ai-dynamo/aiperf#688): a P99
	// becomes +∞ once 1% of the requests failed. "" is FailedExcluded.
	FailedLatency FailedRule
	// LatencyFrom is where a request's TTFT and E2E start: its actual send
	// (every tool's headline numbers) or its intended start, where the file
	// records one (AIPerf effective_latency, guidellm
	// request_scheduled_latency, vLLM e2el_including_client_queue): the
	// latency free of coordinated omission. "" is LatencyFromSend.
	LatencyFrom LatencyStart
	// OutputTokens lists the sources of N in order of preference.
	OutputTokens []CountSource
	// TokenizeReasoning: a re-tokenized N counts reasoning text as well as
	// content.
	TokenizeReasoning bool
	// SpecialTokens: a re-tokenized N adds the tokenizer's special tokens
	// (BOS), as HF add_special_tokens=True does.
	SpecialTokens bool
	// TPOTFrom is where the TPOT numerator starts (it ends at the last
	// response).
	TPOTFrom TPOTStart
	// TPOTDivisor is N − 1 or N.
	TPOTDivisor TPOTDivisor
	// TPOTCount lists the sources of the TPOT divisor's N, when they differ
	// from OutputTokens (LLMPerf 2024-12 divides by its chunk count); nil:
	// OutputTokens.
	TPOTCount []CountSource
	// TPOTRounding rounds per-request TPOT.
	TPOTRounding Rounding
	// ITL is how inter-token-latency samples are formed.
	ITL ITLRule
	// Percentile is the percentile method.
	Percentile PercentileMethod
	// StdDDOF is the standard deviation's divisor offset: 1 for the sample
	// std (n − 1), 0 for the population std (n).
	StdDDOF int
	// Duration is the span throughput is measured over.
	Duration DurationRule
	// ThroughputRequests is which requests request throughput counts.
	ThroughputRequests ThroughputCount
	// Goodput is how goodput is expressed.
	Goodput GoodputForm
	// Corrections: the data checks' corrections apply (a request whose
	// Corrections name a trap of the catalogue is corrected by the trap's
	// Fix). tokentrace's own conventions correct; a tool's profile
	// computes the tool's numbers from its data as written, bugs included.
	Corrections bool
	// Sources gives, per choice name, where the choice comes from.
	Sources map[string]string
}

// FailedInfSuffix ends a reported metric's quantity ("e2e@failed_inf")
// whose statistics count each failed or cancelled request as one +∞ value
// beside the completed ones (AIPerf adj_*), whatever the convention's
// FailedLatency.
const FailedInfSuffix = "@failed_inf"

// FailedRule is how failed requests enter latency statistics
// (Convention.FailedLatency).
type FailedRule string

const (
	// FailedExcluded: latency statistics are over completed requests.
	FailedExcluded FailedRule = "excluded"
	// FailedInfinite: each failed or cancelled request adds one +∞ sample
	// to every latency from the request's start (TTFT, TTFO, E2E and
	// their schedule-relative forms): AIPerf adj_*.
	FailedInfinite FailedRule = "infinite"
)

// LatencyStart is where a request's latencies start (Convention.LatencyFrom).
type LatencyStart string

const (
	// LatencyFromSend: the request's actual start (start_ns).
	LatencyFromSend LatencyStart = "request_start"
	// LatencyFromSchedule: the request's intended start
	// (scheduled_start_ns) where it has one, else its actual start.
	LatencyFromSchedule LatencyStart = "intended_start"
)

// RequestFilter selects the requests latency statistics are computed over.
type RequestFilter string

const (
	// CompletedOK: status ok (no error, at least one token message).
	CompletedOK RequestFilter = "status_ok"
	// CompletedWithContent: status ok with at least one content message
	// (reasoning-only replies are left out: GenAI-Perf, SGLang).
	CompletedWithContent RequestFilter = "ok_with_content"
	// CompletedNoError: every request without an error, empty ones included
	// (LLMPerf: rows whose error_code is null).
	CompletedNoError RequestFilter = "no_error"
)

// ResponseRule selects which received messages count as responses.
type ResponseRule string

const (
	// ResponsesTokens: messages carrying generated tokens: content,
	// reasoning or a tool call (canonical, AIPerf).
	ResponsesTokens ResponseRule = "token_messages"
	// ResponsesContent: messages with non-empty content (GenAI-Perf,
	// LLMPerf, SGLang).
	ResponsesContent ResponseRule = "content_messages"
	// ResponsesChoices: messages with a non-empty choices array, role-only
	// and finish chunks included (vLLM bench serve).
	ResponsesChoices ResponseRule = "choices_messages"
)

// ResponseUnit is what one response is.
type ResponseUnit string

const (
	// UnitMessage: one SSE message.
	UnitMessage ResponseUnit = "sse_message"
	// UnitRead: one network read; the qualifying messages of a read are one
	// response at the read's time (perf_analyzer/GenAI-Perf).
	UnitRead ResponseUnit = "network_read"
)

// E2ERule chooses where E2E ends.
type E2ERule string

const (
	// E2ELastResponse: the last response (canonical: the last token).
	E2ELastResponse E2ERule = "last_response"
	// E2EStreamEnd: the last message of any kind, or the stream's close as
	// the tool recorded it (LLMPerf, SGLang).
	E2EStreamEnd E2ERule = "stream_end"
)

// CountSource is one source of a request's output-token count N.
type CountSource string

const (
	// CountServerUsage: the server's usage.completion_tokens.
	CountServerUsage CountSource = "server_usage"
	// CountToolReported: the tool's count as tokentrace normalizes it
	// (LLMPerf's without its BOS token).
	CountToolReported CountSource = "tool_reported"
	// CountToolRaw: the tool's per-request count exactly as written
	// (reported_output_tokens: LLMPerf's with BOS, AIPerf's
	// output_sequence_length).
	CountToolRaw CountSource = "tool_reported_raw"
	// CountTokenizer: the responses' text re-tokenized by tokentrace.
	CountTokenizer CountSource = "tokenizer"
	// CountResponses: the number of responses (chunk count).
	CountResponses CountSource = "chunk_count"
	// CountSSEMessages: every message except [DONE] and SSE comments
	// (LLMPerf's client counter tokens_received).
	CountSSEMessages CountSource = "sse_messages"
	// CountRequested: the request's max_tokens (SGLang OpenAI backends when
	// usage is missing).
	CountRequested CountSource = "requested_max_tokens"
)

// TPOTStart is where the TPOT numerator starts.
type TPOTStart string

const (
	TPOTFromFirstResponse TPOTStart = "first_response"
	TPOTFromRequestStart  TPOTStart = "request_start"
)

// TPOTDivisor is the TPOT denominator.
type TPOTDivisor string

const (
	DivideNMinus1 TPOTDivisor = "n-1"
	DivideN       TPOTDivisor = "n"
)

// Rounding of per-request values.
type Rounding string

const (
	RoundNone Rounding = "none"
	// RoundWholeNs: to whole nanoseconds, half to even (Python round()).
	RoundWholeNs Rounding = "whole_ns_half_even"
)

// ITLRule is how inter-token-latency samples are formed.
type ITLRule string

const (
	// ITLPooledGaps: every gap between consecutive responses, pooled over
	// requests, one sample per gap (vLLM, SGLang OpenAI backends, AIPerf
	// inter_chunk_latency).
	ITLPooledGaps ITLRule = "pooled_response_gaps"
	// ITLPooledTokenSplit: the same, but a gap before a response known to
	// carry k tokens counts as k samples of gap/k (canonical, SGLang native).
	ITLPooledTokenSplit ITLRule = "pooled_token_split_gaps"
)

// DurationRule is the span a run's throughput is measured over.
type DurationRule string

const (
	// DurationFirstStartToLastResponse: earliest start of any request →
	// latest last response of a completed request (canonical).
	DurationFirstStartToLastResponse DurationRule = "first_start_to_last_response"
	// DurationCompletedSpan: earliest start → latest last response, both over
	// completed requests (GenAI-Perf, AIPerf).
	DurationCompletedSpan DurationRule = "completed_span"
	// DurationNotRecorded: the tool measured a span its files do not record
	// (LLMPerf's request loop, vLLM's dispatch loop): throughput cannot be
	// recomputed, only read from the summary.
	DurationNotRecorded DurationRule = "not_recorded"
)

// ThroughputCount is which requests request throughput counts.
type ThroughputCount string

const (
	ThroughputCompleted   ThroughputCount = "completed"
	ThroughputAllRequests ThroughputCount = "all_requests"
)

// GoodputForm is how goodput is expressed.
type GoodputForm string

const (
	// GoodputFractionAndRate: fraction of all requests and good requests/s
	// (canonical).
	GoodputFractionAndRate GoodputForm = "fraction_and_per_second"
	// GoodputPerSecond: good requests per second only, -1 for an invalid SLO
	// (GenAI-Perf), or null (vLLM).
	GoodputPerSecond GoodputForm = "per_second"
	// GoodputNone: the tool reports no goodput.
	GoodputNone GoodputForm = "none"
)

// choice is one named choice of a Convention: how to show it and how to
// copy it from another convention (the steps of a reconciliation).
type choice struct {
	name string
	get  func(c *Convention) string
	set  func(dst, src *Convention)
}

func joinSources(s []CountSource) string {
	if s == nil {
		return "(output count)"
	}
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = string(x)
	}
	return strings.Join(parts, " > ")
}

// ChoiceCorrections is the name of the choice whether the data checks'
// corrections apply (Convention.Corrections): a reconciliation step that
// flips it is a data correction.
const ChoiceCorrections = "corrections"

// choices lists every choice in reconciliation order: whether the data's
// known bugs are corrected, which requests, which messages, where E2E
// ends, how tokens are counted, the TPOT formula, ITL, then the statistics
// and the run-level rules.
var choices = []choice{
	{ChoiceCorrections, func(c *Convention) string { return fmt.Sprint(c.Corrections) }, func(d, s *Convention) { d.Corrections = s.Corrections }},
	{"completed", func(c *Convention) string { return string(c.Completed) }, func(d, s *Convention) { d.Completed = s.Completed }},
	{"responses", func(c *Convention) string { return string(c.Responses) }, func(d, s *Convention) { d.Responses = s.Responses }},
	{"response_unit", func(c *Convention) string { return string(c.ResponseUnit) }, func(d, s *Convention) { d.ResponseUnit = s.ResponseUnit }},
	{"e2e_end", func(c *Convention) string { return string(c.E2EEnd) }, func(d, s *Convention) { d.E2EEnd = s.E2EEnd }},
	{"failed_requests", func(c *Convention) string {
		if c.FailedLatency == "" {
			return string(FailedExcluded)
		}
		return string(c.FailedLatency)
	}, func(d, s *Convention) { d.FailedLatency = s.FailedLatency }},
	{"latency_from", func(c *Convention) string {
		if c.LatencyFrom == "" {
			return string(LatencyFromSend)
		}
		return string(c.LatencyFrom)
	}, func(d, s *Convention) { d.LatencyFrom = s.LatencyFrom }},
	{"output_count", func(c *Convention) string { return joinSources(c.OutputTokens) }, func(d, s *Convention) { d.OutputTokens = s.OutputTokens }},
	{"tokenize_reasoning", func(c *Convention) string { return fmt.Sprint(c.TokenizeReasoning) }, func(d, s *Convention) { d.TokenizeReasoning = s.TokenizeReasoning }},
	{"special_tokens", func(c *Convention) string { return fmt.Sprint(c.SpecialTokens) }, func(d, s *Convention) { d.SpecialTokens = s.SpecialTokens }},
	{"tpot_from", func(c *Convention) string { return string(c.TPOTFrom) }, func(d, s *Convention) { d.TPOTFrom = s.TPOTFrom }},
	{"tpot_divisor", func(c *Convention) string { return string(c.TPOTDivisor) }, func(d, s *Convention) { d.TPOTDivisor = s.TPOTDivisor }},
	{"tpot_count", func(c *Convention) string { return joinSources(c.TPOTCount) }, func(d, s *Convention) { d.TPOTCount = s.TPOTCount }},
	{"tpot_rounding", func(c *Convention) string { return string(c.TPOTRounding) }, func(d, s *Convention) { d.TPOTRounding = s.TPOTRounding }},
	{"itl", func(c *Convention) string { return string(c.ITL) }, func(d, s *Convention) { d.ITL = s.ITL }},
	{"percentile", func(c *Convention) string { return string(c.Percentile) }, func(d, s *Convention) { d.Percentile = s.Percentile }},
	{"std", func(c *Convention) string { return map[int]string{0: "population (n)", 1: "sample (n-1)"}[c.StdDDOF] }, func(d, s *Convention) { d.StdDDOF = s.StdDDOF }},
	{"duration", func(c *Convention) string { return string(c.Duration) }, func(d, s *Convention) { d.Duration = s.Duration }},
	{"throughput_requests", func(c *Convention) string { return string(c.ThroughputRequests) }, func(d, s *Convention) { d.ThroughputRequests = s.ThroughputRequests }},
	{"goodput", func(c *Convention) string { return string(c.Goodput) }, func(d, s *Convention) { d.Goodput = s.Goodput }},
}

// Choice returns the value of the choice called name as shown in reports
// ("" for an unknown name).
func (c Convention) Choice(name string) string {
	for _, ch := range choices {
		if ch.name == name {
			return ch.get(&c)
		}
	}
	return ""
}

// CountsFrom reports whether the convention may take N from src.
func (c Convention) CountsFrom(src CountSource) bool {
	for _, x := range c.OutputTokens {
		if x == src {
			return true
		}
	}
	return false
}

// WithName copies c under a new name with some of its sources replaced
// (the caller then changes the choices the new sources describe).
func WithName(c Convention, name string, sources map[string]string) Convention {
	c.Name = name
	src := make(map[string]string, len(c.Sources))
	for k, v := range c.Sources {
		src[k] = v
	}
	for k, v := range sources {
		src[k] = v
	}
	c.Sources = src
	return c
}

// ChoiceNames returns the names of every choice, in reconciliation order.
func ChoiceNames() []string {
	out := make([]string, len(choices))
	for i, ch := range choices {
		out[i] = ch.name
	}
	return out
}

// Choices returns the convention's choices by name, as shown in reports
// ("convention": {"choices": {...}}).
func (c Convention) Choices() map[string]string {
	out := make(map[string]string, len(choices))
	for _, ch := range choices {
		out[ch.name] = ch.get(&c)
	}
	return out
}

// Further rule values used by peer tools' profiles.
const (
	// ITLPerRequestMean: one ITL value per request, (t_last − t_first)/(N − 1)
	// (guidellm inter_token_latency_ms), weighted by N − 1 when
	// TokenWeighted.
	ITLPerRequestMean ITLRule = "per_request_mean"
	// ITLTokenZeroGaps: every token of a chunk gets the chunk's arrival time,
	// so a k-token chunk adds its gap and k − 1 zero gaps (inference-perf).
	ITLTokenZeroGaps ITLRule = "pooled_token_gaps_zero_within_chunk"

	// RoundFloorNs: to whole nanoseconds, truncated (MLPerf integer ns
	// division).
	RoundFloorNs Rounding = "whole_ns_floor"

	// DurationAllSpan: earliest start → latest end (stream end) over all
	// requests, failed ones included (guidellm v0.3, inference-perf).
	DurationAllSpan DurationRule = "all_requests_span"
)

// PercentileMethod is how a convention reads a percentile from a sample;
// each value is the name of the analyze/stats Method that computes it
// (stats documents the rules and their sources).
type PercentileMethod string

const (
	// PercentileLinear: numpy's default (stats.Linear).
	PercentileLinear PercentileMethod = "linear"
	// PercentileFloorRank: MLPerf LoadGen's x[⌊n·p⌋] (stats.FloorRank).
	PercentileFloorRank PercentileMethod = "floor_rank"
	// PercentileWeightedNearestRank: guidellm's weighted nearest rank
	// (stats.WeightedNearestRank).
	PercentileWeightedNearestRank PercentileMethod = "weighted_nearest_rank"
)
