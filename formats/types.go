// Package formats defines tokentrace's three tables — runs, requests and
// events — and their file I/O (Parquet through parquet-go, Arrow IPC through
// arrow/go, and a readable text dump for golden tests).
//
// The three row types are the whole contract between importers (package
// ingest and its sub-packages), which produce them, and analyzers (package
// analyze) and plots, which consume them. Nothing downstream of this package
// knows which tool a row came from except through the rows' own fields
// (Run.Tool, Run.ToolVersion, Run.Convention, Request.OutputTokensSource, the
// Reported* values).
//
// Units live in names: every time column ends in _ns (nanoseconds, INT64) or,
// for a tool's own floating-point values, _ms (milliseconds, DOUBLE).
// Offsets (…_offset_ns) are measured from the request's start in the same
// clock as the start; they are meaningful even when the start itself is null.
// The files also hold, beside a wall-clock start, the same instant as a
// TIMESTAMP (requests.start_time; see requestRow).
//
// Strings: a Go string field tagged `parquet:",optional"` is one whose value
// may be unknown or absent; it is "" in Go and null in the files (a null
// read back is ""). The other string fields always hold a value.
//
// SCHEMA.md in this directory documents every column; TestSchemaDocumented
// keeps it in step with these types.
package formats

import "strings"

// SchemaVersion is the version of the table layout written to Parquet
// key-value metadata ("tokentrace.schema_version") and to the runs table.
// It changes when a column is removed, renamed or changes meaning; adding a
// nullable column does not change it.
//
// Version 2: a string column whose value is unknown or absent (a field
// tagged `parquet:",optional"` on a Go string, "" in Go) is null in the
// files, where version 1 wrote ""; requests gained the TIMESTAMP columns
// start_time and server_arrival_time (requestRow); every Parquet file
// carries its Arrow schema (ARROW:schema). Tables of version 1 are read as
// before (formats/SCHEMA.md "Schema version").
const SchemaVersion = 2

// Request status values (Request.Status).
const (
	// StatusOK: no error and at least one message carrying generated tokens.
	StatusOK = "ok"
	// StatusEmpty: no error, but no generated output (no content or
	// reasoning token message, and no tool-reported output).
	StatusEmpty = "empty"
	// StatusError: the tool or the server reported an error (HTTP error,
	// timeout, error SSE event, tool-side validity check).
	StatusError = "error"
	// StatusCancelled: the tool cancelled the request (e.g. AIPerf
	// was_cancelled at the end of a duration-bounded run).
	StatusCancelled = "cancelled"
)

// Clock domains (Run.ClockDomain, Request.ClockDomain).
const (
	// ClockUnix: nanoseconds since the Unix epoch (wall clock).
	ClockUnix = "unix"
	// ClockMonotonic: a monotonic clock with an arbitrary epoch (e.g. Python
	// time.perf_counter); comparable within one run only.
	ClockMonotonic = "monotonic"
)

// Event kinds (Event.Kind). One event is one SSE message (or one whole
// non-streaming response body) as the client received it.
const (
	// KindContent: a message carrying generated content text (chat
	// delta.content, completions text, Triton text_output, or a
	// non-streaming body's message.content). May also carry reasoning.
	KindContent = "content"
	// KindReasoning: a message carrying only reasoning text
	// (delta.reasoning_content or delta.reasoning).
	KindReasoning = "reasoning"
	// KindToolCall: a message carrying a tool call and no content or
	// reasoning text (chat delta.tool_calls, or a non-streaming body's
	// message.tool_calls): generated output, as vLLM counts it; Text
	// holds the call's function name and arguments as generated.
	KindToolCall = "tool_call"
	// KindRole: a message with choices whose delta carries only the role
	// (vLLM's and OpenAI's first chat chunk).
	KindRole = "role"
	// KindEmpty: a message with choices but no text and no role, e.g. the
	// finish_reason chunk.
	KindEmpty = "empty"
	// KindUsage: a message with no choices that carries usage counts
	// (stream_options.include_usage).
	KindUsage = "usage"
	// KindDone: the "data: [DONE]" terminator.
	KindDone = "done"
	// KindError: an error event ("event: error" or a JSON body with an
	// "error" object).
	KindError = "error"
	// KindOther: any other message (SSE comment or keep-alive, unparseable
	// data, unknown JSON).
	KindOther = "other"
	// KindServerPrefix starts the kinds of server-side events ("server.*"):
	// the timestamps a server log records for one request, on server rows
	// only (ingest/serverlog). The rest of the kind is the server's own name
	// in lower case: Triton trace timestamps ("server.request_start",
	// "server.queue_start", "server.compute_start",
	// "server.infer_response_complete", "server.http_send_end", …), vLLM's
	// and SGLang's span phase boundaries derived from gen_ai.latency.*
	// ("server.arrival", "server.queued", "server.scheduled",
	// "server.first_token", "server.last_token"), and OTLP span events by
	// their name. Their OffsetNs is from the row's ServerArrivalNs (not
	// StartNs), in ServerClockDomain; Tokens and Text are null. They carry
	// no generated tokens: analyzers skip them (ClientEvents).
	KindServerPrefix = "server."
)

// IsServerKind reports whether kind is a server-side event kind
// (KindServerPrefix).
func IsServerKind(kind string) bool {
	return len(kind) > len(KindServerPrefix) && kind[:len(KindServerPrefix)] == KindServerPrefix
}

// ClientEvents returns ev without its server-side events (IsServerKind): ev
// itself when it holds none, else a new slice.
func ClientEvents(ev []Event) []Event {
	for i := range ev {
		if IsServerKind(ev[i].Kind) {
			out := append([]Event(nil), ev[:i]...)
			for _, e := range ev[i+1:] {
				if !IsServerKind(e.Kind) {
					out = append(out, e)
				}
			}
			return out
		}
	}
	return ev
}

// Token-count sources (Request.InputTokensSource, Request.OutputTokensSource).
// A re-tokenized count is written "tokenizer:<name>".
const (
	SourceServerUsage  = "server_usage"  // the server's usage object
	SourceToolReported = "tool_reported" // the benchmark tool's own count
	SourceChunkCount   = "chunk_count"   // number of generated-token messages
	SourceTokenizerPfx = "tokenizer:"    // prefix: re-tokenized by tokentrace
)

// Run is one load level of one tool run: its provenance, configuration and
// the tool's own summary statistics. One row of runs.parquet.
type Run struct {
	// RunID identifies the run within an import; requests and events refer
	// to it. Set by the importer from the input's label (default: the name of
	// the directory holding the file, plus "#<n>" for the n-th experiment of a
	// multi-experiment file). Never empty.
	RunID string `parquet:"run_id" json:"run_id"`
	// Tool is the producing tool: "genai-perf", "aiperf", "llmperf", ….
	Tool string `parquet:"tool" json:"tool"`
	// ToolVersion is the tool's version as recorded in its files
	// (perf_analyzer "version", aiperf_version, LLMPerf summary "version");
	// empty when the files do not say.
	ToolVersion string `parquet:"tool_version,optional" json:"tool_version"`
	// Model is the served model name as the tool recorded it; empty if unknown.
	Model string `parquet:"model,optional" json:"model"`
	// Endpoint is the API path or URL the tool called ("v1/chat/completions");
	// empty if unknown.
	Endpoint string `parquet:"endpoint,optional" json:"endpoint"`
	// Streaming is true for streamed (SSE) responses, false for whole
	// responses, null when the source does not say.
	Streaming *bool `parquet:"streaming,optional" json:"streaming"`
	// LoadMode is "concurrency", "request_rate" or "" (unknown).
	LoadMode string `parquet:"load_mode,optional" json:"load_mode"`
	// Concurrency is the configured number of concurrent requests; null if
	// not configured or unknown.
	Concurrency *float64 `parquet:"concurrency,optional" json:"concurrency"`
	// RequestRateRPS is the configured request rate in requests/s (+Inf for
	// "send all at once"); null if not configured or unknown.
	RequestRateRPS *float64 `parquet:"request_rate_rps,optional" json:"request_rate_rps"`
	// ClockDomain is the clock of Request.StartNs for this run: "unix",
	// "monotonic", or "" when the source has no start times.
	ClockDomain string `parquet:"clock_domain,optional" json:"clock_domain"`
	// Tokenizer is the tokenizer the tool used to count tokens, as recorded
	// in its config (GenAI-Perf input_config.tokenizer, AIPerf
	// tokenizer.name); empty if not recorded.
	Tokenizer string `parquet:"tokenizer,optional" json:"tokenizer"`
	// Convention names the metric convention the tool applied, as detected
	// by the importer ("genai-perf", "aiperf", "llmperf@2023-12", …); see
	// analyze/CONVENTIONS.md.
	Convention string `parquet:"convention" json:"convention"`
	// SourceFiles lists every file read for this run, with its SHA-256.
	SourceFiles []SourceFile `parquet:"source_files,list" json:"source_files"`
	// TokentraceVersion is the version of tokentrace that wrote the row.
	TokentraceVersion string `parquet:"tokentrace_version" json:"tokentrace_version"`
	// SchemaVersion is formats.SchemaVersion at write time.
	SchemaVersion int32 `parquet:"schema_version" json:"schema_version"`
	// RequestCount is the number of request rows imported for the run (all
	// statuses).
	RequestCount int64 `parquet:"request_count" json:"request_count"`
	// Truncated is true when an input file ended mid-record; every complete
	// request before the cut was imported (see Notes).
	Truncated bool `parquet:"truncated" json:"truncated"`
	// Notes are import remarks a reader must know: truncation points,
	// skipped records, redactions, facts about the tool's definitions.
	Notes []string `parquet:"notes,list" json:"notes"`
	// ConfigJSON is the tool's configuration echo (GenAI-Perf/AIPerf
	// input_config, LLMPerf metadata), as compact JSON with secrets
	// (Authorization headers, API keys) replaced by "REDACTED"; "" if none.
	ConfigJSON string `parquet:"config_json,optional" json:"config_json"`
	// Reported holds the tool's own summary statistics, under the tool's own
	// metric names, in the tool's own units. Empty when no summary was read.
	Reported []ReportedStat `parquet:"reported,list" json:"reported"`
	// Load is the server's periodic load series (vLLM's engine-stats
	// line, ingest/serverlog), one sample per line in file order; empty for
	// client runs and for server logs without such lines.
	Load []LoadSample `parquet:"load,list" json:"load,omitempty"`
	// Series are named time series that came with the run: the server's
	// or the GPUs' state over time (AIPerf gpu_telemetry_export.jsonl, a
	// Prometheus range-query dump), one point per sample and metric, in
	// file order. Load (vLLM's engine-stats lines) is the older fixed
	// shape of the same kind of data; AllSeries returns both as points.
	// Empty when the run has none.
	Series []SeriesPoint `parquet:"series,list" json:"series,omitempty"`
	// Checks are the data checks (traps) the importer found in the run's
	// data: a tool's known per-request bug, a value that cannot be right.
	// Each names its catalogue code (analyze/TRAPS.md), how many requests
	// it affected and whether the requests' values were corrected (their
	// codes then in Request.Corrections; the raw values stay in the
	// tables). Empty when nothing was found.
	Checks []DataCheck `parquet:"checks,list" json:"checks,omitempty"`
}

// DataCheck is one data check an importer found in a run's data (a trap of
// the catalogue in analyze/TRAPS.md).
type DataCheck struct {
	// Code is the trap's catalogue code ("vllm_ttft_in_itls").
	Code string `parquet:"code" json:"code"`
	// Field is the field or metric concerned ("itls", "ttft_ms").
	Field string `parquet:"field" json:"field"`
	// Requests is the number of requests it affected (0: the run as a
	// whole, e.g. a summary statistic).
	Requests int64 `parquet:"requests" json:"requests"`
	// Corrected is true when the affected requests' canonical values were
	// corrected (Request.Corrections names the code); false when the
	// values were only flagged, or set to null.
	Corrected bool `parquet:"corrected" json:"corrected"`
	// Detail gives the evidence: the first affected request and the
	// numbers that show the trap.
	Detail string `parquet:"detail" json:"detail"`
}

// LoadSample is one periodic load line of a server log (vLLM
// vllm/v1/metrics/loggers.py LoggingStatLogger.log, V0 engine/metrics.py):
// the server's windowed throughputs and its scheduler snapshot at the
// line's time. A null field is one the line's vLLM version does not print.
type LoadSample struct {
	// TimeNs is the line's timestamp in ClockDomain; null when the line has
	// no usable timestamp. vLLM's prefix has 1 s resolution, no year and no
	// zone ("local"; the year as for the run's server rows).
	TimeNs *int64 `parquet:"time_ns,optional" json:"time_ns"`
	// ClockDomain is the clock of TimeNs ("local", …); "" when TimeNs is
	// null.
	ClockDomain string `parquet:"clock_domain,optional" json:"clock_domain"`
	// Running is the number of requests being processed ("Running: N reqs").
	Running *int64 `parquet:"running,optional" json:"running"`
	// Waiting is the number of queued requests (V1 "Waiting", V0
	// "Pending").
	Waiting *int64 `parquet:"waiting,optional" json:"waiting"`
	// Swapped is the number of requests swapped to CPU (V0 only).
	Swapped *int64 `parquet:"swapped,optional" json:"swapped"`
	// GPUKVCachePct is the GPU KV-cache usage in percent.
	GPUKVCachePct *float64 `parquet:"gpu_kv_cache_pct,optional" json:"gpu_kv_cache_pct"`
	// CPUKVCachePct is the CPU KV-cache usage in percent (V0 only).
	CPUKVCachePct *float64 `parquet:"cpu_kv_cache_pct,optional" json:"cpu_kv_cache_pct"`
	// PrefixCacheHitPct is the prefix-cache hit rate in percent (V1 only).
	PrefixCacheHitPct *float64 `parquet:"prefix_cache_hit_pct,optional" json:"prefix_cache_hit_pct"`
	// PromptTokensPerS is the average prompt throughput over the logging
	// interval, tokens/s.
	PromptTokensPerS *float64 `parquet:"prompt_tokens_per_s,optional" json:"prompt_tokens_per_s"`
	// GenerationTokensPerS is the average generation throughput over the
	// logging interval, tokens/s.
	GenerationTokensPerS *float64 `parquet:"generation_tokens_per_s,optional" json:"generation_tokens_per_s"`
}

// SeriesPoint is one sample of one named time series (Run.Series).
type SeriesPoint struct {
	// Metric is the series' name: Prometheus metric names as the server
	// exposes them ("vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"),
	// AIPerf telemetry fields prefixed "gpu:" ("gpu:gpu_power_usage").
	Metric string `parquet:"metric" json:"metric"`
	// Labels are the series' labels in Prometheus text form, sorted by
	// name: `gpu_index="0",hostname="node1"`; "" for none.
	Labels string `parquet:"labels" json:"labels"`
	// Unit is the value's unit as the source defines it ("W", "%", "GB",
	// "requests"); "" when the source does not say (a Prometheus gauge).
	Unit string `parquet:"unit" json:"unit"`
	// TimeNs is the sample's time in ClockDomain.
	TimeNs int64 `parquet:"time_ns" json:"time_ns"`
	// ClockDomain is the clock of TimeNs ("unix", "local", …).
	ClockDomain string `parquet:"clock_domain" json:"clock_domain"`
	// Value is the sample (NaN and ±Inf kept as the source wrote them).
	Value float64 `parquet:"value" json:"value"`
}

// SourceFile is one input file of a run.
type SourceFile struct {
	// Path as given on the command line (or found in a given directory).
	Path string `parquet:"path" json:"path"`
	// Role is the file's part in the run: "raw" (per-request data),
	// "summary" (the tool's aggregate statistics), "summary_csv",
	// "server_summary" (server-side metrics the tool scraped), "config"
	// (the tool's configuration file), "detail" (MLPerf's detail log),
	// "yaml_twin" (a YAML copy of a summary).
	Role string `parquet:"role" json:"role"`
	// SHA256 is the lowercase hex digest of the whole file.
	SHA256 string `parquet:"sha256" json:"sha256"`
	// Bytes is the file size.
	Bytes int64 `parquet:"bytes" json:"bytes"`
}

// ReportedStat is one statistic a tool reported in its summary file.
type ReportedStat struct {
	// Metric is the tool's own metric name ("time_to_first_token",
	// "ttft_s", "request_throughput").
	Metric string `parquet:"metric" json:"metric"`
	// Stat is the statistic under the tool's own name: "avg", "mean",
	// "p50", "p99", "min", "max", "std", "stddev", "count", "sum". A scalar
	// keeps the tool's key too: GenAI-Perf and AIPerf write system metrics
	// as {"avg": v} (stat "avg", also for their CSV "Value" column); LLMPerf
	// writes flat results_* scalars (stat "value").
	Stat string `parquet:"stat" json:"stat"`
	// Unit is the tool's unit string ("ms", "s", "tokens/sec"); "" if none.
	Unit string `parquet:"unit,optional" json:"unit"`
	// Value is the number; null when the tool wrote a non-numeric value
	// (then Text holds it).
	Value *float64 `parquet:"value,optional" json:"value"`
	// Text holds a non-numeric reported value verbatim ("" otherwise).
	Text string `parquet:"text,optional" json:"text,omitempty"`
	// File is the base name of the summary file the value came from.
	File string `parquet:"file" json:"file"`
}

// Request is one request of a run, whatever its outcome. One row of
// requests.parquet. Offsets are from StartNs, in nanoseconds; a null offset
// means the event did not happen or the source does not record it.
type Request struct {
	// RunID is the Run this request belongs to.
	RunID string `parquet:"run_id" json:"run_id"`
	// RequestKey is the request's 0-based position in its run, in source
	// order; with RunID it keys the request and joins events to it.
	RequestKey int64 `parquet:"request_key" json:"request_key"`
	// SourceID is the id the source gives the record (AIPerf
	// conversation_id/turn, GenAI-Perf sequence_id); "" if none.
	SourceID string `parquet:"source_id,optional" json:"source_id"`
	// XRequestID is the X-Request-Id header the client sent; "" if unknown.
	XRequestID string `parquet:"x_request_id,optional" json:"x_request_id"`
	// ResponseID is the response's or SSE chunks' "id" ("chatcmpl-…");
	// "" if unknown.
	ResponseID string `parquet:"response_id,optional" json:"response_id"`
	// TraceID is a distributed-trace id (W3C traceparent trace-id or the
	// tool's correlation id); "" if unknown.
	TraceID string `parquet:"trace_id,optional" json:"trace_id"`
	// Status is "ok", "empty", "error" or "cancelled" (Status* constants).
	Status string `parquet:"status" json:"status"`
	// ErrorCode is the HTTP status or API error code of a failed request;
	// null if none.
	ErrorCode *int64 `parquet:"error_code,optional" json:"error_code"`
	// ErrorType is the error's class ("TimeoutError", "http"); "" if none.
	ErrorType string `parquet:"error_type,optional" json:"error_type"`
	// ErrorText is the error message as the source gave it; "" if none.
	ErrorText string `parquet:"error_text,optional" json:"error_text"`
	// StartNs is when the client sent the request, in ClockDomain; null when
	// the source has no start time (LLMPerf).
	StartNs *int64 `parquet:"start_ns,optional" json:"start_ns"`
	// ClockDomain is the clock of StartNs ("unix", "monotonic"); "" when
	// StartNs is null.
	ClockDomain string `parquet:"clock_domain,optional" json:"clock_domain"`
	// ScheduledStartNs is when the load generator intended to send the
	// request — its slot in the arrival schedule — in ClockDomain: AIPerf
	// metadata.credit_issued_ns, guidellm targeted_start, vLLM bench
	// start_time − queue_times (the --max-concurrency semaphore wait),
	// inference-perf scheduled_time. Null, never 0 and never StartNs, where
	// the source records no schedule (closed-loop tools, LLMPerf) or the
	// field is not one (guidellm's synchronous strategy). StartNs −
	// ScheduledStartNs is the dispatch delay (analyze: dispatch_delay,
	// sched_ttft, sched_e2e); it may be slightly negative where a tool
	// sends early.
	ScheduledStartNs *int64 `parquet:"scheduled_start_ns,optional" json:"scheduled_start_ns"`
	// ScheduledStartSource names the field ScheduledStartNs came from, as
	// "<tool>:<field>" ("aiperf:credit_issued_ns", "guidellm:targeted_start",
	// "vllm:queue_times", "inference-perf:scheduled_time"); "" when null.
	ScheduledStartSource string `parquet:"scheduled_start_source,optional" json:"scheduled_start_source"`
	// FirstTokenOffsetNs: first message carrying generated tokens (content
	// or reasoning).
	FirstTokenOffsetNs *int64 `parquet:"first_token_offset_ns,optional" json:"first_token_offset_ns"`
	// FirstContentOffsetNs: first message carrying content (non-reasoning)
	// text.
	FirstContentOffsetNs *int64 `parquet:"first_content_offset_ns,optional" json:"first_content_offset_ns"`
	// SecondTokenOffsetNs: second message carrying generated tokens.
	SecondTokenOffsetNs *int64 `parquet:"second_token_offset_ns,optional" json:"second_token_offset_ns"`
	// LastTokenOffsetNs: last message carrying generated tokens.
	LastTokenOffsetNs *int64 `parquet:"last_token_offset_ns,optional" json:"last_token_offset_ns"`
	// StreamEndOffsetNs: last message of any kind ([DONE], usage) or the
	// stream's close as the tool recorded it.
	StreamEndOffsetNs *int64 `parquet:"stream_end_offset_ns,optional" json:"stream_end_offset_ns"`
	// InputTokens is the prompt length (ISL) in tokens; null if unknown.
	InputTokens *int64 `parquet:"input_tokens,optional" json:"input_tokens"`
	// InputTokensSource says where InputTokens came from (Source* values).
	InputTokensSource string `parquet:"input_tokens_source,optional" json:"input_tokens_source"`
	// OutputTokens is the generated length (OSL) in tokens, reasoning
	// included, per the canonical source order (server usage, tool count
	// without BOS, tokenizer, message count); null if unknown.
	OutputTokens *int64 `parquet:"output_tokens,optional" json:"output_tokens"`
	// OutputTokensSource says where OutputTokens came from (Source* values).
	OutputTokensSource string `parquet:"output_tokens_source,optional" json:"output_tokens_source"`
	// ReasoningTokens is the reasoning part of OutputTokens when known.
	ReasoningTokens *int64 `parquet:"reasoning_tokens,optional" json:"reasoning_tokens"`
	// CachedInputTokens is the part of InputTokens the server read from its
	// prefix cache: OpenAI usage prompt_tokens_details.cached_tokens (in
	// the response, or the SSE usage chunk), AIPerf's record metric
	// usage_prompt_cache_read_tokens. 0 where the server reported 0; null
	// where the response carried no such count (unknown, not a miss).
	CachedInputTokens *int64 `parquet:"cached_input_tokens,optional" json:"cached_input_tokens"`
	// SessionID names the session (one run of a conversation) the request
	// is a turn of: AIPerf metadata x_correlation_id (else
	// conversation_id); "" when the source has no sessions.
	SessionID string `parquet:"session_id,optional" json:"session_id"`
	// TurnIndex is the request's 0-based turn within SessionID (AIPerf
	// metadata turn_index); null when unknown.
	TurnIndex *int64 `parquet:"turn_index,optional" json:"turn_index"`
	// SpecSteps, DraftTokens and AcceptedTokens are the request's
	// speculative decoding as the server counted it: verification steps,
	// draft tokens proposed, draft tokens accepted (vLLM's response
	// metrics.speculative_decoding num_spec_steps, num_draft_tokens,
	// num_accepted_draft_tokens, PR #48915); null when the response has
	// none. Acceptance length = 1 + accepted / steps.
	SpecSteps      *int64 `parquet:"spec_steps,optional" json:"spec_steps"`
	DraftTokens    *int64 `parquet:"draft_tokens,optional" json:"draft_tokens"`
	AcceptedTokens *int64 `parquet:"accepted_tokens,optional" json:"accepted_tokens"`
	// ParentID is the session that spawned this request's session in an
	// agent tree (AIPerf metadata parent_correlation_id); "" when none.
	ParentID string `parquet:"parent_id,optional" json:"parent_id"`
	// MessageCount is the number of messages received (all event kinds).
	MessageCount int64 `parquet:"message_count" json:"message_count"`
	// TokenMessageCount is the number of messages carrying generated tokens
	// (kinds content and reasoning).
	TokenMessageCount int64 `parquet:"token_message_count" json:"token_message_count"`
	// MaxTokens is the max_tokens the request asked for; null if unknown.
	MaxTokens *int64 `parquet:"max_tokens,optional" json:"max_tokens"`

	// The tool's own per-request values, as it computed them (its
	// definitions, not tokentrace's), converted to the named unit.
	ReportedTTFTMs         *float64 `parquet:"reported_ttft_ms,optional" json:"reported_ttft_ms"`
	ReportedTTFOMs         *float64 `parquet:"reported_ttfo_ms,optional" json:"reported_ttfo_ms"`
	ReportedTTSTMs         *float64 `parquet:"reported_ttst_ms,optional" json:"reported_ttst_ms"`
	ReportedE2EMs          *float64 `parquet:"reported_e2e_ms,optional" json:"reported_e2e_ms"`
	ReportedITLMs          *float64 `parquet:"reported_itl_ms,optional" json:"reported_itl_ms"`
	ReportedOutputTokens   *float64 `parquet:"reported_output_tokens,optional" json:"reported_output_tokens"`
	ReportedInputTokens    *float64 `parquet:"reported_input_tokens,optional" json:"reported_input_tokens"`
	ReportedOutputTokensPS *float64 `parquet:"reported_output_tokens_per_s,optional" json:"reported_output_tokens_per_s"`

	// Server-side values (ingest/serverlog). On a row imported from a
	// server log (a "server row") they are the server's own record; on a
	// client row joined to a server record (analyze --server-log) they are
	// copied from the matched server row and MatchQuality says how it was
	// matched. Durations keep the server's own definitions, named by
	// ServerKind (ingest/serverlog/README.md): e.g. TGI has no TTFT and its
	// time per token includes prefill; vLLM's span TTFT starts at frontend
	// arrival but its queue and prefill come from the engine core's clock.

	// ServerKind is the kind of server record ("vllm.otlp_span",
	// "tgi.success", "sglang.finish", "triton.trace", …); "" on a client
	// row that is not joined.
	ServerKind string `parquet:"server_kind,optional" json:"server_kind"`
	// ServerSource locates the server record: "<file name>:<line N>" or
	// "<file name>:record N".
	ServerSource string `parquet:"server_source,optional" json:"server_source"`
	// ServerRequestID is the server's id for the request (vLLM
	// gen_ai.request.id / request-log id, SGLang rid, Triton request_id);
	// "" when the server logs none (TGI, llama.cpp, Ollama).
	ServerRequestID string `parquet:"server_request_id,optional" json:"server_request_id"`
	// ServerClockDomain is the clock of ServerArrivalNs: "unix", "monotonic",
	// "elapsed" (since the server process started) or "local" (wall clock of
	// an unknown zone, encoded as if UTC); "" when ServerArrivalNs is null.
	ServerClockDomain string `parquet:"server_clock_domain,optional" json:"server_clock_domain"`
	// ServerArrivalNs is when the server received the request, in
	// ServerClockDomain (derived as end − total where the server logs only
	// its end; see ServerKind's definition).
	ServerArrivalNs *int64 `parquet:"server_arrival_ns,optional" json:"server_arrival_ns"`
	// ServerQueueNs is the server's queue time (waiting for a batch slot).
	ServerQueueNs *int64 `parquet:"server_queue_ns,optional" json:"server_queue_ns"`
	// ServerPrefillNs is the server's prefill time (prompt processing up to
	// the first token).
	ServerPrefillNs *int64 `parquet:"server_prefill_ns,optional" json:"server_prefill_ns"`
	// ServerDecodeNs is the server's decode time (first to last token).
	ServerDecodeNs *int64 `parquet:"server_decode_ns,optional" json:"server_decode_ns"`
	// ServerInferenceNs is prefill + decode as the server measured it (TGI
	// inference_time, vLLM time_in_model_inference, Triton compute).
	ServerInferenceNs *int64 `parquet:"server_inference_ns,optional" json:"server_inference_ns"`
	// ServerTTFTNs is the server's own time to first token.
	ServerTTFTNs *int64 `parquet:"server_ttft_ns,optional" json:"server_ttft_ns"`
	// ServerE2ENs is the server's own request latency (arrival to end).
	ServerE2ENs *int64 `parquet:"server_e2e_ns,optional" json:"server_e2e_ns"`
	// ServerTimePerTokenNs is the server's own per-token time (TGI
	// time_per_token = inference / generated tokens, prefill included;
	// llama.cpp predicted_per_token_ms).
	ServerTimePerTokenNs *int64 `parquet:"server_time_per_token_ns,optional" json:"server_time_per_token_ns"`
	// MatchQuality says how a client row was joined to its server record:
	// "trace_id" (W3C traceparent), "request_id" (X-Request-Id / response
	// id / rid), "time_tokens" (time window and equal token counts),
	// "time" (time window only); "" when not joined. Server rows carry the
	// quality of their match too.
	MatchQuality string `parquet:"match_quality,optional" json:"match_quality"`
	// ServerFinishReason is the server's finish reason for the request as
	// it wrote it ("stop", "length", "abort", …: vLLM span
	// gen_ai.response.finish_reasons, SGLang meta_info.finish_reason type,
	// Ollama done_reason, llama.cpp stop type); "" when the record has none.
	ServerFinishReason string `parquet:"server_finish_reason,optional" json:"server_finish_reason"`
	// Corrections lists, comma-separated, the codes of the data checks
	// (Run.Checks; analyze/TRAPS.md) whose correction applies to this
	// request: the analysis corrects its canonical metrics accordingly
	// (report --no-corrections does not), from the raw values the tables
	// keep — the messages as the tool recorded them, and the file's own
	// counts in reported_* (corrected counts in output_tokens). "" when
	// none applies.
	Corrections string `parquet:"corrections,optional" json:"corrections"`
	// InFlightAtStart is the number of the run's requests in flight just
	// after this one was sent, itself included (InFlight: requests without
	// a recorded end count until the bound EndBoundRule names); null when
	// the request has no start time. The table writers fill it when the
	// run's rows are complete; the analysis computes the same.
	InFlightAtStart *int64 `parquet:"in_flight_at_start,optional" json:"in_flight_at_start"`
	// EndBoundOffsetNs is, for a request with a start but no recorded end
	// (RequestEnd), the offset from StartNs until which it was counted in
	// flight; null when its end is recorded or it has no start.
	EndBoundOffsetNs *int64 `parquet:"end_bound_offset_ns,optional" json:"end_bound_offset_ns"`
	// EndBoundRule names that bound (EndSlotReused, EndTimeout,
	// EndLongestRequest, EndRunEnd); "" when the end is recorded.
	EndBoundRule string `parquet:"end_bound_rule,optional" json:"end_bound_rule"`
}

// HasCorrection reports whether the request's Corrections name code.
func (r *Request) HasCorrection(code string) bool {
	for c := range strings.SplitSeq(r.Corrections, ",") {
		if c == code {
			return true
		}
	}
	return false
}

// AddCorrection adds code to the request's Corrections (once).
func (r *Request) AddCorrection(code string) {
	if r.HasCorrection(code) {
		return
	}
	if r.Corrections != "" {
		r.Corrections += ","
	}
	r.Corrections += code
}

// Server clock domains (Request.ServerClockDomain) besides ClockUnix and
// ClockMonotonic.
const (
	// ClockElapsed: nanoseconds since the server process started
	// (llama.cpp's log prefix).
	ClockElapsed = "elapsed"
	// ClockLocal: wall-clock time of an unknown zone, encoded as
	// nanoseconds since 1970-01-01 as if it were UTC (vLLM's and SGLang's
	// log prefixes, Ollama's GIN line).
	ClockLocal = "local"
)

// Match qualities (Request.MatchQuality).
const (
	MatchTraceID    = "trace_id"
	MatchRequestID  = "request_id"
	MatchTimeTokens = "time_tokens"
	MatchTime       = "time"
)

// Event is one message the client received for a request: an SSE message,
// or a whole non-streaming response body. One row of events.parquet.
// Sources without per-message times (LLMPerf) produce no events. Server rows
// (ingest/serverlog) carry server-side events instead (kind "server.*",
// KindServerPrefix).
type Event struct {
	RunID      string `parquet:"run_id" json:"run_id"`
	RequestKey int64  `parquet:"request_key,delta" json:"request_key"`
	// Index is the message's 0-based position within its request.
	Index int32 `parquet:"index,delta" json:"index"`
	// ReadIndex is the 0-based index of the network read (GenAI-Perf
	// response) the message arrived in; messages of one read share its
	// arrival time. Equal to Index when each read held one message.
	ReadIndex int32 `parquet:"read_index,delta" json:"read_index"`
	// OffsetNs is the arrival time minus the request's start, in ns; for a
	// server-side event (kind "server.*"), its time minus the row's
	// ServerArrivalNs.
	OffsetNs int64 `parquet:"offset_ns,delta" json:"offset_ns"`
	// Kind is one of the Kind* constants, or "server.<name>" for a
	// server-side event (KindServerPrefix).
	Kind string `parquet:"kind" json:"kind"`
	// HasChoices is true when the message's JSON had a non-empty "choices"
	// array (vLLM bench starts TTFT at the first such message).
	HasChoices bool `parquet:"has_choices" json:"has_choices"`
	// Tokens is the number of generated tokens the message carried when the
	// source says so (per-chunk usage, AIPerf per-chunk counts); null
	// otherwise.
	Tokens *int32 `parquet:"tokens,optional" json:"tokens"`
	// Bytes is the message's length in bytes as received.
	Bytes int32 `parquet:"bytes" json:"bytes"`
	// Text is the generated content text the message carried; null when
	// dropped (--no-text) or when the message had none.
	Text *string `parquet:"text,optional" json:"text"`
	// ReasoningText is the generated reasoning text the message carried;
	// null when dropped or absent.
	ReasoningText *string `parquet:"reasoning_text,optional" json:"reasoning_text"`
	// FinishReason is the choice's finish_reason when the message had one.
	FinishReason string `parquet:"finish_reason,optional" json:"finish_reason"`
}

// IsServerRow reports whether r is a server row, imported from a server
// log (ingest/serverlog): its server kind is set and it has no client
// timing (no start, no first token, no stream end, no messages).
func (r *Request) IsServerRow() bool {
	return r.ServerKind != "" && r.StartNs == nil && r.FirstTokenOffsetNs == nil && r.StreamEndOffsetNs == nil && r.MessageCount == 0
}

// CarriesTokens reports whether the event carries generated tokens (content
// or reasoning).
func (e *Event) CarriesTokens() bool {
	return e.Kind == KindContent || e.Kind == KindReasoning || e.Kind == KindToolCall
}
