// Package llmperf imports the results of LLMPerf
// (github.com/ray-project/llmperf, token_benchmark_ray.py) into tokentrace
// rows.
//
// # Inputs
//
// LLMPerf writes two files per run into --results-dir
// (ray-project/llmperf@f1d6bed47e45 token_benchmark_ray.py; keys in
// src/llmperf/common_metrics.py): <stem>_individual_responses.json, a JSON
// array with one object per kept request, and <stem>_summary.json, a flat
// object of configuration keys and results_* statistics (both
// json.dump(indent=4)). The leaderboard repository renamed them
// individual_responses.json and summary.json; both namings are recognized.
// The array is the primary input; a summary with no array beside it is
// imported on its own as a Run with Reported and no requests.
//
// # What a row becomes
//
// LLMPerf keeps no per-message times and no start time (its clock is
// time.monotonic), so requests have no events, StartNs is null and the
// ClockDomain is "". Offsets come from the row's durations (seconds,
// converted with math.Round(v·1e9)):
//
//   - first_token_offset_ns = first_content_offset_ns = ttft_s: the first SSE
//     chunk with non-empty delta.content (openai_chat_completions_client.py);
//   - stream_end_offset_ns = end_to_end_latency_s: after [DONE] and the
//     body's close;
//   - last_token_offset_ns = t_last_content, recovered from
//     inter_token_latency_s where the version allows it (see lastToken).
//
// A duration of 0 (LLMPerf's initial value, left on requests that failed
// before any chunk) means "no timing" and leaves the offset null.
//
// # Status and tokens
//
// A row whose error_code is not null is "error" (error_code → ErrorCode,
// or ErrorType when it is not a number; error_msg → ErrorText); its
// timings are kept when it has any. Other rows are "ok", or "empty" when no
// content arrived. number_output_tokens is a Llama-2 tokenizer count that
// includes the BOS token (llmperf issue #35), so OutputTokens =
// number_output_tokens − 1 (tool_reported); number_input_tokens is the
// sampled target prompt length. The raw values stay in the Reported*
// fields. Keys LLMPerf does not write (GEN_TEXT, …) are ignored and noted.
//
// # Versions
//
// The per-row throughput and ITL definitions changed twice
// (token_benchmark_ray.py in ray-project/llmperf at 1eac866 "LLMPerfV2",
// 2023-12-05; afd137ae21b4, 2024-04-07; f1d6bed47e45, 2024-12-09);
// detectConvention names the version in Run.Convention: "llmperf@2023-12",
// "llmperf@2024-04" or "llmperf@2024-12", with its evidence in a note. Only
// the first two divide inter_token_latency_s by the token count, so only
// they give last-token offsets: f1d6bed (2024-12) divides by the client's
// SSE chunk count, which the file does not keep. (f1d6bed's final-sweep
// path divides by tokens too; in f1d6bed that
// sweep reads from a fresh launcher with nothing pending and appends a
// dict's keys instead of the dict, so no row of a 2024-12 file comes from
// it — token_benchmark_ray.py at f1d6bed, lines 147-164.)
//
// # Summary
//
// summary.json becomes Run.Reported under LLMPerf's own names (results_
// prefix dropped, see parseSummary), Run.Model, ToolVersion (LLMPerf's
// RESULTS_VERSION "2023-08-31"), Concurrency, and ConfigJSON (every key
// that is not a result, redacted).
package llmperf

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Name is the format name accepted by --from.
const Name = "llmperf"

// File name endings of LLMPerf's two outputs (token_benchmark_ray.py
// run_token_benchmark: f"{filename}_summary", f"{filename}_individual_responses").
const (
	rowsSuffix    = "individual_responses.json"
	summarySuffix = "summary.json"
)

// New returns the LLMPerf importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

// Name implements ingest.Importer.
func (importer) Name() string { return Name }

// Detect implements ingest.Importer. It answers yes for:
//
//   - a JSON array whose first object has a ttft_s, end_to_end_latency_s,
//     inter_token_latency_s or request_output_throughput_token_per_s key, or
//     both error_code and error_msg (LLMPerf's first two keys), or
//     error_code alone when the file is named *individual_responses.json —
//     judged from head alone, so a file cut inside its first object still
//     counts; an empty array or an empty file so named also counts;
//   - a JSON object holding results_ttft_s_* keys, or LLMPerf's
//     configuration keys (num_concurrent_requests with mean_input_tokens),
//     when no individual-responses file sits beside it.
func (importer) Detect(path string, head []byte) bool {
	switch sniff(path, head) {
	case kindRows:
		return true
	case kindSummary:
		return rowsPath(path) == "" || !ingest.Exists(rowsPath(path))
	}
	return false
}

// Companions implements ingest.Importer: the summary beside an
// individual-responses file — summary.json beside individual_responses.json,
// <stem>_summary.json beside <stem>_individual_responses.json — when it
// exists.
func (importer) Companions(path string) []string {
	if s := summaryPath(path); s != "" && ingest.Exists(s) {
		return []string{s}
	}
	return nil
}

// Import implements ingest.Importer: an individual-responses array yields
// one Run with one Request per element; a summary yields a Run without
// requests. Errors are *ingest.FormatError values positioned at the
// offending element ("individual_responses.json: record 3: …"); an array
// cut short is not an error (see importRows).
func (importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	label := opt.LabelFor(path)
	head := in.Head()
	switch sniff(path, head) {
	case kindRows:
		return importRows(in, label, opt, sink)
	case kindSummary:
		return importSummaryOnly(in, label, opt, sink)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return ingest.Errorf(path, "", "empty file (expected a JSON array)")
	}
	return &ingest.FormatError{File: path, Msg: "not an LLMPerf individual_responses or summary file", Err: ingest.ErrNotThisFormat}
}

// inputKind is what sniff makes of a file.
type inputKind int

const (
	kindUnknown inputKind = iota
	kindRows              // *individual_responses.json
	kindSummary           // *summary.json
)

// rowKeys are keys only LLMPerf's per-request objects carry
// (common_metrics.py).
var rowKeys = []string{"ttft_s", "end_to_end_latency_s", "inter_token_latency_s", "request_output_throughput_token_per_s"}

// sniff classifies a file from its name and first bytes.
func sniff(path string, head []byte) inputKind {
	head = bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	named := strings.HasSuffix(filepath.Base(path), rowsSuffix)
	if len(head) == 0 {
		if named {
			return kindRows
		}
		return kindUnknown
	}
	switch head[0] {
	case '[':
		keys, _, empty := ingest.HeadKeys(head) // head starts with '['
		if ingest.AnyKey(keys, rowKeys) || (slices.Contains(keys, "error_code") && slices.Contains(keys, "error_msg")) ||
			(named && (empty || slices.Contains(keys, "error_code"))) {
			return kindRows
		}
	case '{':
		if bytes.Contains(head, []byte(`"results_ttft_s_`)) ||
			(bytes.Contains(head, []byte(`"num_concurrent_requests"`)) && bytes.Contains(head, []byte(`"mean_input_tokens"`))) {
			return kindSummary
		}
	}
	return kindUnknown
}

// summaryPath is the summary's path for an individual-responses path
// (whether or not it exists), or "" for other names.
func summaryPath(path string) string {
	dir, base := filepath.Split(path)
	stem, ok := strings.CutSuffix(base, rowsSuffix)
	if !ok {
		return ""
	}
	return filepath.Join(dir, stem+summarySuffix)
}

// rowsPath is the individual-responses path for a summary path, or "" for
// other names.
func rowsPath(path string) string {
	dir, base := filepath.Split(path)
	stem, ok := strings.CutSuffix(base, summarySuffix)
	if !ok {
		return ""
	}
	return filepath.Join(dir, stem+rowsSuffix)
}
