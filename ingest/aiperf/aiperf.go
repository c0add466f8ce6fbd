// Package aiperf imports the results of AIPerf (github.com/ai-dynamo/aiperf),
// NVIDIA's successor to GenAI-Perf, into tokentrace rows.
//
// # Inputs
//
// An AIPerf run directory holds (ai-dynamo/aiperf@db4f6397d11e:
// aiperf/post_processors/record_export_results_processor.py and the record
// schema common/models/record_models.py lines 61-135; the summaries from
// aiperf/exporters/json_exporter.py lines 56-92 and
// aiperf/exporters/csv_exporter.py lines 111-170):
//
//   - profile_export.jsonl, the per-record export: one JSON object per line,
//     {"metadata": {...}, "metrics": {tag: {"value": v, "unit": u}}, "error":
//     null | {...}}, written in completion order. This is the primary input:
//     each line becomes one Request.
//   - profile_export_aiperf.json, the summary: per-metric statistics
//     {tag: {unit, avg, p1, …, min, max, std[, count, sum]}} plus
//     input_config, error_summary and (0.8+) aiperf_version. Before AIPerf
//     PR #343 (2025-10-10) the statistics sat under "records" with null for
//     absent values. It becomes Run.Reported and the Run's configuration.
//   - profile_export_aiperf.csv, the same statistics rounded to two
//     decimals: Run.Reported when the JSON summary is missing, else only
//     checked against it.
//   - gpu_telemetry_export.jsonl, when GPU telemetry was collected: one
//     JSON object per GPU and scrape, {"timestamp_ns", GPU identity,
//     "telemetry_data": {field: value}}. Its fields become the profiling
//     run's Series (metrics "gpu:<field>", labels the GPU's identity; see
//     readTelemetry); given on its own it is a run with series only.
//
// A summary with no JSONL beside it is imported on its own: a Run row with
// Reported and no requests ("summary only").
//
// # What each record becomes
//
// AIPerf stores no per-message timestamps, but its metrics pin them down:
// time_to_first_token is the first kept response and inter_chunk_latency
// lists the gaps between consecutive kept responses (AIPerf keeps a message
// only when its content or reasoning text is non-empty; role-only, usage
// and [DONE] messages are dropped; inter_chunk_latency_metric.py at
// ai-dynamo/aiperf 58028d5). The importer rebuilds one token-carrying event
// per kept response from them (see rebuildEvents); text, byte sizes and
// per-message token counts are unknown. Times are converted from AIPerf's
// display units (ms) to integer nanoseconds with math.Round(v·1e6). A record
// without inter_chunk_latency (fewer than two kept responses, e.g. a
// one-token reply) gets its offsets straight from the reported metrics and
// no events (see setTiming).
//
// A record with a non-null "error" is "error" (error.code → ErrorCode,
// type → ErrorType, message → ErrorText); one with metadata.was_cancelled,
// or an error of type RequestCancellationError, is "cancelled"; the others
// are "ok" (or "empty" when AIPerf counted no output token). Token counts
// prefer the server's usage (usage_completion_tokens, usage_prompt_tokens:
// server_usage) over AIPerf's re-tokenized counts (output_sequence_length,
// input_sequence_length, error_isl: tool_reported). AIPerf's own
// per-record values stay in the Reported* fields.
//
// Records of a phase other than "profiling" (warmup) are imported into a
// second run, RunLabel(label, 1), so that they never mix with the profiling
// statistics; AIPerf itself filters them out before export
// (records_manager.py 130-141), so real files hold none.
//
// # Summary
//
// The JSON summary gives Run.Reported (every statistic of every metric, under
// AIPerf's tag and stat names and display units), ToolVersion
// (aiperf_version), Model, Endpoint, Streaming, the load settings, Tokenizer
// and ConfigJSON (input_config, redacted). When the CSV summary sits beside
// it, the CSV is checked against it value by value and the outcome noted.
package aiperf

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// Name is the format name accepted by --from.
const Name = "aiperf"

// Suffixes of AIPerf's summary files: <stem>_aiperf.json and
// <stem>_aiperf.csv sit beside <stem>.jsonl (json_exporter.py,
// csv_exporter.py).
const (
	summaryJSONSuffix = "_aiperf.json"
	summaryCSVSuffix  = "_aiperf.csv"
)

// New returns the AIPerf importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

// Name implements ingest.Importer.
func (importer) Name() string { return Name }

// Detect implements ingest.Importer. It answers yes for:
//
//   - a JSONL file whose first line is a JSON object with a "metadata" key
//     and either a "metrics" key or AIPerf metadata keys (request_start_ns,
//     session_num, …) — judged from head alone, so a file cut inside its
//     first line still counts;
//   - an empty or blank file named profile_export*.jsonl (Import then says
//     what is wrong with it);
//   - a summary (<stem>_aiperf.json or .csv, or a JSON object holding
//     "aiperf_version") with no <stem>.jsonl beside it; a CSV summary also
//     needs no JSON summary beside it, since the JSON wins.
func (importer) Detect(path string, head []byte) bool {
	switch sniff(path, head) {
	case kindRaw, kindTelemetry:
		return true
	case kindSummaryJSON, kindSummaryCSV:
		return !hasRawBeside(path) && !(strings.HasSuffix(path, summaryCSVSuffix) && ingest.Exists(strings.TrimSuffix(path, summaryCSVSuffix)+summaryJSONSuffix))
	}
	return false
}

// Companions implements ingest.Importer: for <stem>.jsonl, the summaries
// <stem>_aiperf.json and <stem>_aiperf.csv that exist; for a JSON summary,
// the CSV summary beside it. The JSON summary supplies Run.Reported; the CSV
// does only when the JSON is missing, and otherwise is checked against it
// (see loadSummaries).
func (importer) Companions(path string) []string {
	var out []string
	switch {
	case filepath.Base(path) == TelemetryFile:
	case strings.HasSuffix(path, ".jsonl"):
		jsonPath, csvPath := summaryPaths(path)
		for _, p := range []string{jsonPath, csvPath} {
			if p != "" {
				out = append(out, p)
			}
		}
		if p := filepath.Join(filepath.Dir(path), TelemetryFile); path != ingest.StdinPath && ingest.Exists(p) {
			out = append(out, p)
		}
	case strings.HasSuffix(path, summaryJSONSuffix):
		if p := csvBeside(path); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Import implements ingest.Importer. A JSONL input yields one Run (plus a
// second one for warmup records, if any) with one Request per record; a
// summary input yields a Run with no requests. Errors are *ingest.FormatError
// values positioned at the offending line ("profile_export.jsonl: line 7:
// …"); a last line cut short is not an error (see importRaw).
func (im importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	label := opt.LabelFor(path)
	head := in.Head()
	switch sniff(path, head) {
	case kindSummaryJSON, kindSummaryCSV:
		return importSummaryOnly(in, label, opt, sink)
	case kindRaw:
		return importRaw(in, label, opt, sink)
	case kindTelemetry:
		return importTelemetryOnly(in, label, opt, sink)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return ingest.Errorf(path, "", "empty file: no records")
	}
	return &ingest.FormatError{File: path, Msg: "not an AIPerf profile_export.jsonl or summary", Err: ingest.ErrNotThisFormat}
}

// inputKind is what sniff makes of a file.
type inputKind int

const (
	kindUnknown     inputKind = iota
	kindRaw                   // profile_export.jsonl
	kindSummaryJSON           // profile_export_aiperf.json
	kindSummaryCSV            // profile_export_aiperf.csv
	kindTelemetry             // gpu_telemetry_export.jsonl
)

// sniff classifies a file from its name and first bytes.
func sniff(path string, head []byte) inputKind {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	base := filepath.Base(path)
	if IsAggregate(base) || bytes.Contains(head, []byte(`"aggregation_type"`)) {
		return kindUnknown // statistics across runs, not a run
	}
	switch {
	case strings.HasSuffix(base, summaryCSVSuffix):
		return kindSummaryCSV
	case strings.HasSuffix(base, summaryJSONSuffix):
		return kindSummaryJSON
	}
	if isTelemetry(path, head) {
		return kindTelemetry
	}
	trimmed := bytes.TrimSpace(head)
	if len(trimmed) == 0 {
		if strings.HasPrefix(base, "profile_export") && strings.HasSuffix(base, ".jsonl") {
			return kindRaw
		}
		return kindUnknown
	}
	if trimmed[0] != '{' {
		return kindUnknown
	}
	// the first record's line: the importer skips blank lines before it
	top, meta := firstLineKeys(bytes.TrimLeft(head, " \t\r\n"))
	if slices.Contains(top, "metadata") && (slices.Contains(top, "metrics") || ingest.AnyKey(meta, aiperfMetadataKeys)) {
		return kindRaw
	}
	if strings.HasSuffix(base, ".json") && bytes.Contains(head, []byte(`"aiperf_version"`)) {
		return kindSummaryJSON
	}
	return kindUnknown
}

// IsAggregate reports whether a file name is one of the files AIPerf
// writes across runs in its multi-run trees — the confidence aggregate of
// a configuration's trials (profile_export_aiperf_aggregate.json/.csv),
// the records of all trials pooled (profile_export_aiperf_collated.json)
// and the sweep's cross-value aggregate (profile_export_aiperf_sweep.json/
// .csv); docs/api/sweep-aggregates.md and docs/tutorials/
// multi-run-confidence.md of ai-dynamo/aiperf. They hold no run of their
// own (the runs are the per-trial files): they are not imported.
func IsAggregate(base string) bool {
	for _, suf := range []string{"_aggregate.json", "_aggregate.csv", "_collated.json", "_sweep.json", "_sweep.csv"} {
		if strings.HasSuffix(base, suf) && strings.HasPrefix(base, "profile_export") {
			return true
		}
	}
	return false
}

// aiperfMetadataKeys are record metadata keys that only AIPerf writes
// (record_models.py MetricRecordInfo; timestamp_ns and credit_phase are the
// 0.1.x names).
var aiperfMetadataKeys = []string{"request_start_ns", "session_num", "x_correlation_id", "benchmark_phase", "credit_phase", "record_processor_id", "timestamp_ns"}

// firstLineKeys returns the top-level keys of the JSON object on head's
// first line, and the keys of its "metadata" object, as far as head goes.
// It stops quietly at the first syntax error or at the end of head.
func firstLineKeys(head []byte) (top, meta []string) {
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	if top, meta, ok := firstLineKeysFast(head); ok {
		return top, meta
	}
	return firstLineKeysJSON(head)
}

// firstLineKeysJSON is firstLineKeys on one line by encoding/json's tokens.
func firstLineKeysJSON(head []byte) (top, meta []string) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	for {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return top, meta
		}
		top = append(top, key)
		if key == "metadata" {
			meta, err = objectKeys(dec)
		} else {
			err = ingest.SkipJSONValue(dec)
		}
		if err != nil {
			return top, meta
		}
	}
}

// firstLineKeysFast is firstLineKeys for the usual line: one complete,
// valid object whose member names (its own and its "metadata" object's)
// hold no escapes and only valid UTF-8, scanned by the shared validating
// scanner. ok is false for anything else, which encoding/json then reads
// (its tokens stop at the error or the cut exactly where they did): the
// detection of a folder of 1,000 runs spent 0.35 s in encoding/json on
// the first lines. TestFirstLineKeysFast holds the two to the same keys.
func firstLineKeysFast(line []byte) (top, meta []string, ok bool) {
	s := jsonscan.Scanner{B: line}
	s.WS()
	ok = s.Members(func(key []byte) bool {
		if !utf8.Valid(key) {
			return false
		}
		top = append(top, string(key))
		if string(key) != "metadata" {
			return s.Skip(1)
		}
		meta = nil // the last "metadata" member's keys; none if no object
		if s.Next() != '{' {
			return s.Skip(1)
		}
		return s.Members(func(k []byte) bool {
			meta = append(meta, string(k))
			return utf8.Valid(k) && s.Skip(2)
		})
	})
	return top, meta, ok
}

// objectKeys reads an object value from dec and returns its keys, skipping
// their values. A non-object value yields no keys.
func objectKeys(dec *json.Decoder) ([]string, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if t != json.Delim('{') {
		return nil, ingest.SkipJSONRest(dec, t)
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys, err
		}
		if k, ok := t.(string); ok {
			keys = append(keys, k)
		}
		if err := ingest.SkipJSONValue(dec); err != nil {
			return keys, err
		}
	}
	_, err = dec.Token()
	return keys, err
}

// summaryPaths returns the JSON and CSV summaries that belong to the JSONL
// file path, each "" when it does not exist.
func summaryPaths(path string) (jsonPath, csvPath string) {
	stem := strings.TrimSuffix(path, ".jsonl")
	if p := stem + summaryJSONSuffix; ingest.Exists(p) {
		jsonPath = p
	}
	if p := stem + summaryCSVSuffix; ingest.Exists(p) {
		csvPath = p
	}
	return jsonPath, csvPath
}

// csvBeside returns the CSV summary beside the JSON summary path, or "".
func csvBeside(path string) string {
	stem, ok := strings.CutSuffix(path, summaryJSONSuffix)
	if p := stem + summaryCSVSuffix; ok && ingest.Exists(p) {
		return p
	}
	return ""
}

// hasRawBeside reports whether the summary path has its <stem>.jsonl beside it.
func hasRawBeside(path string) bool {
	for _, suf := range []string{summaryJSONSuffix, summaryCSVSuffix} {
		if strings.HasSuffix(path, suf) {
			return ingest.Exists(strings.TrimSuffix(path, suf) + ".jsonl")
		}
	}
	return false
}
