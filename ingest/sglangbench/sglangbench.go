// Package sglangbench imports the results of SGLang's serving benchmark,
// `python -m sglang.bench_serving` (sgl-project/sglang
// python/sglang/bench_serving.py, later python/sglang/benchmark/), into
// tokentrace rows.
//
// # Inputs
//
// bench_serving appends one JSON line per run to its --output-file (default
// "{backend}_{MMDD}_{num_prompts}_{in}_{out}.jsonl"), so a file holds one run
// per line, RunLabel(label, i) for the i-th (sgl-project/sglang@0033168f0f58
// python/sglang/bench_serving.py). The lines are Python json.dumps output: a
// float("inf") request rate is the bare token Infinity, and NaN may appear;
// both parse (ingest/pybench, which SGLang shares with the vLLM
// script it was adapted from).
//
// Three key sets are read:
//
//   - 2024 (sglang 50a6136): backend, request_rate, total_input_tokens,
//     total_output_tokens, total_output_tokens_retokenized,
//     mean/median_e2e_latency_ms, median_ttft_ms, median_itl_ms,
//     output_throughput, random_*, duration, completed;
//   - 2025 (0033168): adds dataset_name, max_concurrency,
//     sharegpt_output_len, request_throughput, input_throughput and
//     mean/median/std/p99 of ttft, tpot, itl (p95 too) and e2e_latency,
//     concurrency, accept_length;
//   - late 2025 (v0.5.5, python/sglang/benchmark/): adds tag, server_info
//     (the server's arguments, version and internal_states; for a
//     prefill/decode-disaggregated deployment a dict of "prefill" and
//     "decode" lists plus internal_states), total_input_text_tokens,
//     total_input_vision_tokens, total_throughput, *_retokenized rates,
//     max_itl_ms.
//
// # Summary keys
//
// "<stat>_<metric>_ms" keys become Reported Metric "<metric>_ms"
// ("ttft_ms", "itl_ms", "e2e_latency_ms"), Stat "<stat>" ("mean",
// "median", "std", "p95", "p99", "max"), Unit "ms"; the other results keep
// their key as Metric with Stat "value"; null values (accept_length without
// speculative decoding) are not stored, NaN and infinities are Text. The
// rest is configuration: ConfigJSON (redacted), RequestRateRPS (a number or
// Infinity = +Inf), Concurrency (max_concurrency), LoadMode, Endpoint (from
// the backend: /generate for the native backends). Model, Tokenizer and
// ToolVersion come from server_info (served_model_name or model_path,
// tokenizer_path, version; of the decode server in a disaggregated
// layout): they are the server's, as its /get_server_info reported them.
// Keys SGLang does not write are imported (numbers into Reported, the rest
// into ConfigJSON) and named in a note and, once per key and file, a
// warning.
//
// # Conventions
//
// The backends "sglang" and "sglang-native" call the native /generate
// endpoint (ASYNC_REQUEST_FUNCS in bench_serving.py): output_len is the
// server's meta_info.completion_tokens and a chunk adding k tokens gives k
// ITL samples of gap/k. Their runs get Convention "sglang-native"
// (ProfileNative). Every other backend (sglang-oai, sglang-oai-chat,
// vllm, vllm-chat, lmdeploy, trt, truss, …) uses an OpenAI-style or plain
// streaming client — one ITL sample per chunk, output_len from usage when
// seen, else the requested max tokens — and gets "sglang" (Profile).
//
// # Per-request arrays
//
// With --output-details each line also holds index-aligned arrays over
// every request: input_lens, output_lens, ttfts (s), itls (list of lists,
// s), generated_texts, errors. Each index becomes a Request:
//
//   - status "error" when errors[i] is not empty, or when the request has
//     neither a first token nor output (ttfts 0 and output_lens 0: SGLang's
//     values for a failure); "empty" for a request without error and
//     without a first token (SGLang counts it completed with TTFT 0);
//   - no start times (SGLang saves none): start_ns null;
//   - events rebuilt from ttfts and itls: the first content message at
//     TTFT, then one per gap. For the native backends, runs of exactly equal
//     consecutive gaps are SGLang's split of one k-token chunk, so each run
//     becomes one message of k tokens after the whole gap, and the first
//     message carries output_len − len(itls) tokens; every event then has
//     its token count, and the token-split ITL of ProfileNative
//     gives back SGLang's samples. The whole generated text goes on the last
//     event (per-chunk text is not recorded);
//   - stream_end_offset_ns null: SGLang's latency ends at the last stream
//     line ([DONE] included) and is not saved per request, so its E2E and
//     TPOT (which uses that latency) cannot be recomputed;
//   - output_tokens = output_lens: source server_usage for the native
//     backends (meta_info.completion_tokens), tool_reported for the others
//     (usage.completion_tokens if seen, else the requested length: sglang
//     issue #24254); input_tokens = input_lens (the dataset's prompt
//     length, tool_reported). A run whose output_lens are far above its
//     content messages (the data check sglang_output_len_stuck, traps.go)
//     names the check in the affected requests' corrections.
//
// A line without these arrays is summary only: its run has Reported and no
// requests ("summary only: nothing to recompute").
//
// # Memory
//
// A regular, uncompressed file is streamed (pybench.Scan, then
// pybench.Rows): a first pass holds the per-request numbers (8 bytes an
// element), the error strings, the itls' lengths and the other members; each
// run's requests are then built reading itls and generated_texts again
// from the file, one request at a time, decoded ahead in a goroutine.
// What is held, not the file, is capped by --max-value-size; a 740 MB
// --save-detailed file of 100k requests imports in about 120 MB. Inputs
// the streaming reader is not sure to read exactly as the general path —
// damaged or cut JSON, an element of another type (a number written as a
// string), a JSON array, compressed or piped input — are read
// whole as before, and so capped as one value.
//
// # Damage
//
// A line that is not JSON, not an object, or holds a non-number where
// SGLang writes a number is an *ingest.FormatError naming the file and the
// line ("sglang_1129.jsonl: line 2: ttfts[1]: not a number"); arrays of
// different lengths likewise. A last line cut short (no final newline)
// leaves every complete line imported, Run.Truncated and a note and warning
// naming the cut line.
package sglangbench

import (
	"errors"
	"path/filepath"
	"slices"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// Name is the format name accepted by --from, and Run.Tool.
const Name = "sglang"

// Conventions written to Run.Convention (Profile, ProfileNative).
const (
	Convention       = "sglang"
	ConventionNative = "sglang-native"
)

// New returns the SGLang bench_serving importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

// Name implements ingest.Importer.
func (importer) Name() string { return Name }

// sglangKeys are keys only SGLang's results carry among the tools
// tokentrace reads.
var sglangKeys = []string{"total_output_tokens_retokenized", "server_info", "accept_length", "mean_e2e_latency_ms", "median_e2e_latency_ms", "total_input_text_tokens"}

// vllmKeys are keys of vLLM's results that SGLang never writes.
var vllmKeys = []string{"model_id", "tokenizer_id", "endpoint_type", "burstiness", "best_of", "use_beam_search", "label"}

// resultMarks are result keys at least one of which every SGLang line has.
var resultMarks = []string{"duration", "completed", "request_throughput", "output_throughput", "median_ttft_ms", "mean_e2e_latency_ms"}

// Detect implements ingest.Importer: a JSON object (not an array) whose own
// top-level keys, as far as head goes, include "backend" and a result key
// (duration, completed, output_throughput, …), and either one of SGLang's
// own keys (total_output_tokens_retokenized, server_info,
// mean_e2e_latency_ms, …) or none of vLLM's (model_id, tokenizer_id, …).
func (importer) Detect(path string, head []byte) bool {
	keys, inArray := pybench.TopKeys(head)
	return !inArray && isResult(keys)
}

func isResult(keys []string) bool {
	return slices.Contains(keys, "backend") && ingest.AnyKey(keys, resultMarks) && (ingest.AnyKey(keys, sglangKeys) || !ingest.AnyKey(keys, vllmKeys))
}

// Companions implements ingest.Importer: bench_serving writes one file.
func (importer) Companions(string) []string { return nil }

// Import implements ingest.Importer: one Run per line, with its requests
// when the line holds --output-details arrays.
func (importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	label := opt.LabelFor(path)
	if in.Regular() && in.Compression == "" && path != ingest.StdinPath {
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
	vals, cut, err := pybench.ReadValues(path, data, pybench.Lines)
	if errors.Is(err, pybench.ErrEmpty) {
		return ingest.Errorf(path, "", "empty file (expected SGLang bench_serving JSON lines)")
	}
	if err != nil {
		return err
	}
	f := &fileState{path: path, file: filepath.Base(path), opt: opt, warns: ingest.NewNotes(path, opt).Once()}
	var results []*result
	for _, v := range vals {
		r, err := parseResult(f, v)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if len(results) == 0 {
		return ingest.Errorf(path, "", "%s: no complete result line", cut)
	}
	if cut != "" {
		f.warns.WarnOnly(cut)
	}
	for i, r := range results {
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
}
