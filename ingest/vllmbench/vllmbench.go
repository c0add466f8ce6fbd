// Package vllmbench imports the result files of vLLM's serving benchmark —
// benchmarks/benchmark_serving.py and its successor `vllm bench serve`
// (vllm-project/vllm vllm/benchmarks/serve.py) — into tokentrace rows.
//
// # Inputs
//
// A result file (vllm-project/vllm@009e6d4a1cd6 vllm/benchmarks/serve.py) is
// one JSON object written by json.dump with --save-result; --append-result
// writes a newline and another object into the same file, so a file holds one
// run per object (RunLabel(label, i) for the i-th). `vllm bench sweep serve`
// writes one such object per run as run=<n>.json (indented, with the sweep's
// run_number and parameter keys added) and all of them as a JSON array in
// summary.json; the array is read as one run per element and the run=<n>.json
// files beside it are its companions, checked against their elements.
// Python's bare NaN/Infinity tokens are accepted (ingest/pybench).
//
// # Summary keys
//
// Every statistic lands in Run.Reported under vLLM's own names:
//
//   - "<stat>_<metric>_ms" keys (mean_ttft_ms, median_itl_ms, std_tpot_ms,
//     p99_e2el_ms, p99.9_ttft_ms — any --metric-percentiles value, its
//     decimal kept) become Metric "<metric>_ms" ("ttft_ms", "e2el_ms",
//     "client_queue_time_ms"), Stat "<stat>" ("mean", "median", "std",
//     "p99", "p99.9"), Unit "ms";
//   - scalars (duration, completed, failed, total_input_tokens,
//     total_output_tokens, request_throughput, output_throughput,
//     total_token_throughput, max_output_tokens_per_s,
//     max_concurrent_requests, rtfx, request_goodput, spec_decode_*,
//     diffusion_*, probe_*) keep their key as Metric with Stat "value";
//     the list spec_decode_per_position_acceptance_rates gives Stat
//     "position_<i>" per position;
//   - the old spelling "request_goodput:" (benchmark_serving.py before the
//     typo was fixed) is stored as request_goodput, with a note and a
//     warning; a null goodput (no --goodput given) is not stored;
//   - NaN and infinities are kept as Text.
//
// The configuration keys give Run fields: Model (model_id), Tokenizer
// (tokenizer_id), RequestRateRPS (request_rate, a number or the string
// "inf" = +Inf), Concurrency (max_concurrency), LoadMode ("concurrency"
// when max_concurrency is set and the rate is unlimited, else
// "request_rate"), Endpoint (inferred from backend: the file does not keep
// --endpoint) and Streaming (vLLM's generation clients always stream).
// Every key that is not a statistic or a per-request array is kept in
// ConfigJSON (redacted). Keys vLLM does not write — user --metadata
// KEY=VALUE pairs, a sweep's parameters, a modified script's extras — are
// imported and named in a note and, once per key and file, a warning: in
// a sweep's objects (those with run_number) they are the sweep's
// parameters and go to ConfigJSON; elsewhere numbers go to Reported (Stat
// "value": moguizhizi's accuracy_rate) and the rest to ConfigJSON.
//
// # Per-request arrays
//
// With --save-detailed (or any benchmark_serving.py before vLLM PR #14879,
// 2025-03), the object holds index-aligned arrays over every request sent,
// failed ones included: ttfts (s), itls (list of lists, s), input_lens,
// output_lens, errors, generated_texts, and in newer versions start_times
// (time.perf_counter, s), latencies and queue_times (s). Each index becomes
// a Request (see rows.go for the rules):
//
//   - status "error" when errors[i] is not empty, or when the request has
//     neither a first token nor output (ttfts[i] 0 and output_lens[i] 0:
//     vLLM's placeholders for a failure whose reason was empty); ErrorCode
//     from an HTTP reason phrase, ErrorType from a traceback's exception;
//   - events rebuilt from ttfts and itls: one per message with non-empty
//     choices (vLLM's TTFT is the first such message and every later one
//     adds one ITL gap; one gap per message, not per token: issue #27485),
//     kind content, has_choices true; the whole generated text goes on the
//     last event, since what each message carried is not recorded; a chat
//     run's first message may really be the role-only chunk (issue
//     #15106), which the file cannot tell apart;
//   - start_ns from start_times, clock "monotonic"; without start_times
//     (before vLLM PR #32667) start_ns is null;
//   - stream_end_offset_ns null: the usage message and [DONE] after the
//     last choices message are not timed;
//   - output_tokens = output_lens (source tool_reported: vLLM's
//     usage.completion_tokens when the server sent usage, else its
//     re-tokenized generated text), input_tokens = input_lens (usage
//     prompt_tokens when sent, else the dataset's length, tool_reported);
//   - reported_ttft_ms, reported_e2e_ms (latencies), reported_*_tokens.
//
// A file without these arrays is summary only: the run has Reported and no
// requests, and its notes say "summary only: nothing to recompute".
//
// # Memory
//
// A regular, uncompressed file is streamed (pybench.Scan, then
// pybench.Rows): a first pass holds the per-request numbers (8 bytes an
// element), the error strings, the itls' lengths and the traps'
// summaries of them (24 bytes a request) and the other members; each
// run's requests are then built reading itls and generated_texts again
// from the file, one request at a time, decoded ahead in a goroutine.
// What is held, not the file, is capped by --max-value-size; a 740 MB
// --save-detailed file of 100k requests imports in about 120 MB. Inputs
// the streaming reader is not sure to read exactly as the general path —
// damaged or cut JSON, an element of another type (a number written as a
// string), a JSON array (a sweep summary), compressed or piped input — are read
// whole as before, and so capped as one value.
//
// # Damage
//
// Unparseable JSON, an object where none belongs, a non-number where vLLM
// writes a number, and arrays of different lengths are *ingest.FormatError
// values naming the file and the object ("object 2 (line 3): ttfts[4]: not
// a number"). A file cut inside an object yields every complete object
// before it, Run.Truncated and a note and warning saying where it was cut.
package vllmbench

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// Name is the format name accepted by --from, and Run.Tool.
const Name = "vllm"

// Convention is the metric convention of every vLLM run (Profile).
const Convention = "vllm"

// New returns the vLLM bench serve importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

// Name implements ingest.Importer.
func (importer) Name() string { return Name }

// vllmKeys are keys only vLLM's result objects carry among the tools
// tokentrace reads (SGLang's bench_serving writes none of them).
var vllmKeys = []string{"model_id", "tokenizer_id", "endpoint_type", "burstiness", "best_of", "use_beam_search", "label"}

// resultMarks are result keys at least one of which every vLLM result
// object has.
var resultMarks = []string{"duration", "completed", "request_throughput", "mean_ttft_ms", "median_ttft_ms", "mean_e2el_ms"}

// sglangKeys are keys of SGLang's bench_serving results that vLLM never
// writes.
var sglangKeys = []string{"total_output_tokens_retokenized", "server_info", "accept_length", "mean_e2e_latency_ms", "median_e2e_latency_ms"}

// Detect implements ingest.Importer: a JSON object (or an array whose first
// element is an object) whose own top-level keys, as far as head goes,
// include "backend", one of vLLM's configuration keys (model_id,
// tokenizer_id, endpoint_type, …) and a result key (duration, completed,
// request_throughput, mean_ttft_ms, …), and none of SGLang's. Files named
// *.pytorch.json (vLLM's PyTorch-benchmark side file, which repeats the
// keys inside "extra_info") are not results.
func (importer) Detect(path string, head []byte) bool {
	if strings.HasSuffix(filepath.Base(path), ".pytorch.json") {
		return false
	}
	keys, _ := pybench.TopKeys(head)
	return isResult(keys)
}

func isResult(keys []string) bool {
	return slices.Contains(keys, "backend") && ingest.AnyKey(keys, vllmKeys) && ingest.AnyKey(keys, resultMarks) && !ingest.AnyKey(keys, sglangKeys)
}

// Companions implements ingest.Importer: beside a sweep's summary.json (an
// array of results), the run=<n>.json files of the same runs.
func (importer) Companions(path string) []string {
	if filepath.Base(path) != "summary.json" {
		return nil
	}
	head, err := ingest.ReadHead(path)
	if err != nil {
		return nil
	}
	if keys, inArray := pybench.TopKeys(head); !inArray || !isResult(keys) {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "run=*.json"))
	sort.Strings(files)
	return files
}

// Import implements ingest.Importer: one Run per result object, with its
// requests when the object holds per-request arrays.
func (importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	label := opt.LabelFor(path)
	if streamable(in) {
		err := importStream(in, label, opt, sink)
		if !pybench.IsUnsure(err) {
			return err
		}
		// Read again the general way, which positions any damage.
		in, err = ingest.Open(path, opt)
		if err != nil {
			return err
		}
		defer in.Close()
	}
	src, data, err := in.ReadFile(path, "summary", opt)
	if err != nil {
		return err
	}
	return importData(path, label, src, data, opt, sink)
}

// importData imports the bytes of the file at path (already read and
// hashed as src).
func importData(path, label string, src formats.SourceFile, data []byte, opt ingest.Options, sink formats.Sink) error {
	layout := pybench.Objects
	if t := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))); len(t) > 0 && t[0] == '[' {
		layout = pybench.Array
	}
	vals, cut, err := pybench.ReadValues(path, data, layout)
	if errors.Is(err, pybench.ErrEmpty) {
		return ingest.Errorf(path, "", "empty file (expected a vLLM bench serve result object)")
	}
	if err != nil {
		return err
	}
	f := &fileState{path: path, file: filepath.Base(path), opt: opt, warns: ingest.NewNotes(path, opt).Once(), multi: len(vals) > 1}
	var results []*result
	for _, v := range vals {
		r, err := parseResult(f, v)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if len(results) == 0 {
		return ingest.Errorf(path, "", "%s: no complete result object", cut)
	}
	if cut != "" {
		f.warns.WarnOnly(cut)
	}
	var extra []*result
	if layout == pybench.Array {
		extra = f.checkCompanions(results)
	}
	for i, r := range append(results, extra...) {
		if err := r.emit(f, ingest.RunLabel(label, i), src, cut, sink); err != nil {
			return err
		}
	}
	return nil
}

// fileState is what one Import knows of its file across runs.
type fileState struct {
	path, file string
	opt        ingest.Options
	warns      *ingest.Notes // warnings only, each once per file; the runs' notes are built apart
	multi      bool          // the file holds more than one result: positions name it
}
