// Package genaiperf imports GenAI-Perf runs (NVIDIA perf_analyzer's LLM
// front end, github.com/triton-inference-server/perf_analyzer, genai-perf/)
// into tokentrace rows.
//
// # Inputs
//
// A GenAI-Perf artifact directory holds
// (triton-inference-server/perf_analyzer@263c5f6e0c7a, the files and lines
// named below):
//
//   - <stem>.json (default profile_export.json), perf_analyzer's raw export
//     (src/profile_data_exporter.cc, perf_analyzer 263c5f6, lines 80-360):
//     one compact JSON object {"experiments": [{"experiment": {"mode",
//     "value"}, "requests": [...], "window_boundaries": [...]}], "version",
//     "service_kind", "endpoint"}. Each request has "timestamp" (send time,
//     Unix ns), "request_inputs" (for service_kind openai: {"payload":
//     "<the JSON request body as a string>"}; for triton: the input tensors),
//     and two parallel arrays, "response_timestamps" (Unix ns, one per
//     network read) and "response_outputs" ({"response": "<the bytes of that
//     read>"} for openai, {"text_output": "…"} for triton). This is the
//     primary input. It is streamed: one request is decoded at a time, so
//     memory does not grow with the file.
//   - <stem>_genai_perf.json, GenAI-Perf's summary: {metric: {"unit", "avg",
//     "p1"…"p99", "min", "max", "std"}, …, "input_config": {…}}. Its
//     statistics become Run.Reported (in file order, under GenAI-Perf's own
//     names and units) and its input_config, with secrets redacted, becomes
//     Run.ConfigJSON.
//   - <stem>_genai_perf.csv, the same statistics rounded to two decimals,
//     read for its values only when the JSON summary is missing (it is
//     always hashed into Run.SourceFiles).
//
// A summary with no raw file beside it is imported on its own: one Run row
// with Reported and no requests ("summary only: nothing to recompute").
//
// # Runs
//
// Each experiment (perf_analyzer load level) is its own run, with RunID
// ingest.RunLabel(label, i) for the i-th experiment. Run rows are sent
// after the whole file is read, because perf_analyzer writes "version",
// "service_kind" and "endpoint" after the experiments. The summary describes
// one load level: it is attached to the experiment whose mode and value
// match input_config's concurrency or request_rate (or to the only
// experiment).
//
// # Requests and events
//
// Request.StartNs is "timestamp" (ClockDomain "unix"). Each
// response_outputs[k] is paired with response_timestamps[k] as one network
// read (ReadIndex k):
//
//   - Streaming (past whitespace and ":" comment keep-alives, the reads
//     start with an SSE field line such as "data:"; sse.LooksLikeSSE): the
//     reads are fed to the SSE parser; each SSE
//     message is one Event at the time of the read that completed it,
//     classified by sse.Classify. perf_analyzer records network reads, not
//     SSE events (src/profile_data_exporter.cc lines 152-163 record one
//     timestamp per received response), so one read may hold several
//     events (same OffsetNs) and an event may span reads.
//   - Non-streaming: all the request's "response" reads together are one
//     body, one Event arriving with the last read, classified by
//     sse.ClassifyBody (keep-alive padding before the JSON — whitespace, as
//     OpenRouter sends in the corpus, or comment lines — is part of the
//     body and of Event.Bytes).
//   - Triton ({"text_output": …}): each read is one Event, KindContent with
//     the text (KindEmpty when the text is empty).
//
// Token counts: a usage object (a usage-only chunk, a chunk with usage, or a
// non-streaming body; the last one seen wins) gives OutputTokens
// (completion_tokens), InputTokens (prompt_tokens) and ReasoningTokens
// (completion_tokens_details.reasoning_tokens), source "server_usage".
// Without one, a streamed request's OutputTokens is its token-message count
// (source "chunk_count") and a non-streamed request's is null. GenAI-Perf
// itself ignores server usage and re-tokenizes the text
// (triton-inference-server/perf_analyzer@263c5f6e0c7a
// genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py lines
// 435-459); its numbers are in Run.Reported. When every content message of
// a streamed request carries usage.completion_tokens (a running total: vLLM's
// stream_options.continuous_usage_stats), each content Event's Tokens is
// its increase, and the run records the data check coalesced_token_chunks
// (traps.go) when some message carried more than one token.
//
// Other request fields: SourceID is "sequence_id" (present only for
// sequence models); ResponseID the first "id" of a chunk or body; MaxTokens
// the payload's max_completion_tokens, else max_tokens (for Triton, the
// max_tokens input tensor); an error message (see sse.Classify) makes the
// request's Status "error" with its text, type and code. Events carry no
// per-message token count (Event.Tokens is null).
//
// # Errors and remarks
//
// A raw file that ends mid-way (a run killed while writing) is imported up
// to the last complete request: the runs are marked Truncated, a note says
// where the file was cut (file size, experiment, request index and the byte
// where that request began), opt.Warn is called and Import returns nil.
//
// A request whose response_timestamps and response_outputs differ in
// length (perf_analyzer writes them from the same record, so this means a
// damaged file) is imported from the pairs at equal indices, with a
// warning; the same goes for a payload that is not JSON (its max_tokens,
// stream and model are then unknown) and for a response output with
// neither "response" nor "text_output" (an event of kind other). Such
// remarks are counted per experiment: one note names how many requests had
// it and the first of them.
//
// A response that cannot be read — a non-streaming body that, after its
// keep-alive preamble, is not JSON or is JSON but not an object, or an SSE
// message whose data is neither a JSON object nor [DONE] — is kept as an
// event of kind other (its bytes counted), and its request is kept and
// counted with Status "error", ErrorType "unparseable_response"
// (ErrorTypeUnparseable) and an ErrorText naming the response output (or
// SSE message) and the byte where the JSON broke, e.g. "response_outputs[0]:
// the response body is not JSON (byte 55 of the body: invalid character '@'
// …)". An error the server reported in the same request takes precedence
// for ErrorText, ErrorType and ErrorCode. Status "error" rather than
// "empty": "empty" says the server answered with no output, which an
// unreadable response does not show (it is often a proxy's HTML or
// plain-text error page, or a damaged file), and the tokens it may have
// carried are unknown. A warning names the file, experiment, request,
// response output or message, and byte, like the remarks above. A JSON
// object of an unknown shape is not unreadable: it stays a silent event of
// kind other.
//
// Any other malformed input is an *ingest.FormatError positioned as
// "experiment 0, request 12 (byte 1234)" (the byte where the decoder
// stopped); input that is not a JSON object with an "experiments" array
// wraps ingest.ErrNotThisFormat. An error from the Sink is returned as is.
//
// Warnings passed to opt.Warn are the warning notes prefixed with the path
// of the file read ("…/profile_export.json: experiment 0, request 17: …");
// a remark about the whole file is passed once, not once per experiment.
package genaiperf

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Name is the format name accepted by --from, and Run.Tool and
// Run.Convention of the runs this package produces.
const Name = "genai-perf"

// Suffixes of GenAI-Perf's summary files: <stem>_genai_perf.json and
// <stem>_genai_perf.csv sit beside the raw export <stem>.json
// (triton-inference-server/perf_analyzer@263c5f6e0c7a
// genai-perf/genai_perf/export_data/json_exporter.py lines 59-66 and
// csv_exporter.py lines 73-82).
const (
	summaryJSONSuffix = "_genai_perf.json"
	summaryCSVSuffix  = "_genai_perf.csv"
)

// New returns the GenAI-Perf importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

// Name implements ingest.Importer.
func (importer) Name() string { return Name }

// Detect implements ingest.Importer. It answers yes for:
//
//   - a raw export: head, after leading whitespace, starts with "{" and
//     contains the key "experiments" and either a request field
//     ("request_inputs", "response_timestamps", "response_outputs") or the
//     "experiment" key; or the file is named profile_export*.json and head
//     contains "experiments". Judged from head alone, so a truncated or
//     broken export still counts and Import can say what is wrong;
//   - a <stem>_genai_perf.json summary with no <stem>.json beside it;
//   - a <stem>_genai_perf.csv summary with neither <stem>.json nor
//     <stem>_genai_perf.json beside it (the JSON, when present, is the
//     primary input and the CSV its companion).
func (importer) Detect(path string, head []byte) bool {
	base := filepath.Base(path)
	switch {
	case base == AnalyzeSummary:
		return false // the analyze subcommand's table across runs
	case strings.HasSuffix(base, summaryJSONSuffix):
		return !ingest.Exists(rawBeside(path, summaryJSONSuffix))
	case strings.HasSuffix(base, summaryCSVSuffix):
		stem := strings.TrimSuffix(path, summaryCSVSuffix)
		return !ingest.Exists(stem+".json") && !ingest.Exists(stem+summaryJSONSuffix)
	}
	return detectRaw(base, head)
}

// AnalyzeSummary is the CSV `genai-perf analyze` writes beside its
// artifact directories (one per swept value, named
// <model>-<service-kind>-<backend>-<sweep_type><value>): P99s of every
// scenario, not a run of its own (genai-perf docs/analyze.md). The
// scenarios' own files are the runs.
const AnalyzeSummary = "analyze_export_genai_perf.csv"

func detectRaw(base string, head []byte) bool {
	h := bytes.TrimLeft(head, " \t\r\n")
	if len(h) == 0 || h[0] != '{' || !bytes.Contains(h, []byte(`"experiments"`)) {
		return false
	}
	if strings.HasPrefix(base, "profile_export") && strings.HasSuffix(base, ".json") {
		return true
	}
	for _, k := range []string{`"experiment"`, `"request_inputs"`, `"response_timestamps"`, `"response_outputs"`} {
		if bytes.Contains(h, []byte(k)) {
			return true
		}
	}
	return false
}

// Companions implements ingest.Importer: for a raw export <stem>.json, the
// summaries <stem>_genai_perf.json and <stem>_genai_perf.csv that exist; for
// a JSON summary, the CSV beside it; for a CSV summary, the JSON beside it.
func (importer) Companions(path string) []string {
	var cands []string
	base := filepath.Base(path)
	switch {
	case strings.HasSuffix(base, summaryJSONSuffix):
		cands = []string{strings.TrimSuffix(path, summaryJSONSuffix) + summaryCSVSuffix}
	case strings.HasSuffix(base, summaryCSVSuffix):
		cands = []string{strings.TrimSuffix(path, summaryCSVSuffix) + summaryJSONSuffix}
	default:
		stem := strings.TrimSuffix(path, filepath.Ext(path))
		cands = []string{stem + summaryJSONSuffix, stem + summaryCSVSuffix}
	}
	var out []string
	for _, c := range cands {
		if ingest.Exists(c) {
			out = append(out, c)
		}
	}
	return out
}

// Import implements ingest.Importer. A path ending in _genai_perf.json or
// _genai_perf.csv is imported as a summary-only run; anything else as a raw
// export with its companions (see the package documentation).
func (importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	label := opt.LabelFor(path)
	base := filepath.Base(path)
	switch {
	case strings.HasSuffix(base, summaryJSONSuffix):
		return importSummaryOnly(in, path, "", label, opt, sink)
	case strings.HasSuffix(base, summaryCSVSuffix):
		js := strings.TrimSuffix(path, summaryCSVSuffix) + summaryJSONSuffix
		if ingest.Exists(js) {
			return importSummaryOnly(in, js, path, label, opt, sink)
		}
		return importSummaryOnly(in, "", path, label, opt, sink)
	}
	return importRaw(in, label, opt, sink)
}

// rawBeside returns <stem>.json for a summary path <stem><suffix>.
func rawBeside(path, suffix string) string {
	return strings.TrimSuffix(path, suffix) + ".json"
}
