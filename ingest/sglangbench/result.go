package sglangbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// configKeys are the configuration keys of SGLang's result lines (the
// arguments echoed by bench_serving.py, the refactored package's tag and
// server_info).
var configKeys = map[string]bool{
	"backend": true, "dataset_name": true, "request_rate": true, "max_concurrency": true,
	"sharegpt_output_len": true, "sharegpt_context_len": true, "fixed_output_len": true,
	"random_input_len": true, "random_output_len": true, "random_range_ratio": true,
	"tag": true, "server_info": true, "num_prompts": true,
}

// scalarKeys are the run-level results SGLang writes (all three key sets,
// and the refactored package's metrics dump).
var scalarKeys = map[string]bool{
	"duration": true, "completed": true, "total_input_tokens": true, "total_input_text_tokens": true,
	"total_input_vision_tokens": true, "total_output_tokens": true, "total_output_tokens_retokenized": true,
	"request_throughput": true, "input_throughput": true, "output_throughput": true,
	"output_throughput_retokenized": true, "total_throughput": true, "total_throughput_retokenized": true,
	"concurrency": true, "accept_length": true,
}

// arrayKeys are the --output-details arrays.
var arrayKeys = map[string]bool{
	"input_lens": true, "output_lens": true, "ttfts": true, "itls": true, "generated_texts": true, "errors": true,
}

// nativeBackends call SGLang's /generate (async_request_sglang_generate).
var nativeBackends = map[string]bool{"sglang": true, "sglang-native": true}

// result is one result line, parsed.
type result struct {
	v          pybench.Value
	backend    string
	rate       *float64
	conc       *float64
	server     serverInfo
	completed  *float64
	config     []ingest.Entry
	reported   []formats.ReportedStat
	arrays     map[string]json.RawMessage
	unknownNum []string
	unknownCfg []string
	keySet     string
	stream     *pybench.SecondPass // streamed: where itls and texts are read again
}

// serverInfo is what a run learns from server_info.
type serverInfo struct {
	model, tokenizer, version string
	layout                    string // "aggregated", "disaggregated (prefill/decode)", ""
}

// parseResult classifies the members of one line.
func parseResult(f *fileState, v pybench.Value) (*result, error) {
	r := &result{v: v, arrays: map[string]json.RawMessage{}}
	keys := make([]string, len(v.Entries))
	for i, e := range v.Entries {
		keys[i] = e.Key
	}
	if !slices.Contains(keys, "backend") && !ingest.AnyKey(keys, resultMarks) {
		fe := &ingest.FormatError{File: f.path, Where: v.Where, Msg: "not an SGLang bench_serving result (no backend, duration, completed or output_throughput key)"}
		if v.Index == 0 {
			fe.Err = ingest.ErrNotThisFormat
		}
		return nil, fe
	}
	r.keySet = keySet(keys)
	fail := func(key string, err error) error {
		return ingest.Errorf(f.path, v.Where, "%s: %v", key, err)
	}
	for _, e := range v.Entries {
		switch k := e.Key; {
		case arrayKeys[k]:
			if t := bytes.TrimSpace(e.Value); string(t) == "null" {
				continue
			} else if len(t) == 0 || t[0] != '[' {
				return nil, fail(k, fmt.Errorf("not a list"))
			}
			r.arrays[k] = e.Value
		case configKeys[k]:
			r.config = append(r.config, e)
			if err := r.applyConfig(k, e.Value); err != nil {
				return nil, fail(k, err)
			}
		default:
			if metric, stat, ok := pybench.StatKey(k); ok {
				if err := r.addStat(f.file, metric, stat, "ms", e.Value); err != nil {
					return nil, fail(k, err)
				}
				continue
			}
			if scalarKeys[k] {
				if err := r.addStat(f.file, k, "value", unitOf(k), e.Value); err != nil {
					return nil, fail(k, err)
				}
				continue
			}
			if _, kind := pybench.Number(e.Value); kind == pybench.Finite || kind == pybench.NonFiniteNumber {
				r.unknownNum = append(r.unknownNum, k)
				_ = r.addStat(f.file, k, "value", unitOf(k), e.Value)
			} else {
				r.unknownCfg = append(r.unknownCfg, k)
				r.config = append(r.config, e)
			}
		}
	}
	return r, nil
}

// client2024 reports whether the line is the 2024 script's, whose every
// backend, "sglang" included, used the OpenAI completions client with
// output_len = the requested length (sgl-project/sglang 50a6136
// bench_serving.py ASYNC_REQUEST_FUNCS).
func (r *result) client2024() bool { return strings.HasPrefix(r.keySet, "2024") }

// keySet names the era of a line's keys (package doc).
func keySet(keys []string) string {
	switch {
	case slices.Contains(keys, "server_info") || slices.Contains(keys, "tag") || slices.Contains(keys, "total_input_text_tokens"):
		return "late-2025 (server_info, tag, total_input_text_tokens)"
	case slices.Contains(keys, "mean_ttft_ms") || slices.Contains(keys, "request_throughput"):
		return "2025 (mean/median/std/p99 statistics, request_throughput)"
	}
	return "2024 (median_ttft_ms, median_itl_ms, mean/median_e2e_latency_ms only)"
}

// applyConfig reads the Run fields among the configuration keys.
func (r *result) applyConfig(key string, raw json.RawMessage) error {
	switch key {
	case "backend":
		r.backend = ingest.RawText(raw)
	case "request_rate":
		rate, err := pybench.RequestRate(raw)
		if err != nil {
			return err
		}
		r.rate = rate
	case "max_concurrency":
		conc, err := pybench.Concurrency(raw)
		if err != nil {
			return err
		}
		r.conc = conc
	case "server_info":
		r.server = parseServerInfo(raw)
	}
	return nil
}

// parseServerInfo reads model, tokenizer and version from server_info: the
// server's arguments at top level (aggregated), or lists of them under
// "decode" and "prefill" (disaggregated; bench_serving itself reads
// server_info["decode"][0]).
func parseServerInfo(raw json.RawMessage) serverInfo {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return serverInfo{}
	}
	args := top
	layout := "aggregated"
	for _, part := range []string{"decode", "prefill"} {
		var list []map[string]json.RawMessage
		if json.Unmarshal(top[part], &list) == nil && len(list) > 0 {
			args, layout = list[0], "disaggregated (prefill/decode; model, tokenizer and version of the "+part+" server)"
			break
		}
	}
	s := serverInfo{layout: layout}
	text := func(k string) string {
		var v string
		if json.Unmarshal(args[k], &v) != nil {
			return ""
		}
		return v
	}
	s.model = text("served_model_name")
	if s.model == "" {
		s.model = text("model_path")
	}
	s.tokenizer = text("tokenizer_path")
	s.version = text("version")
	return s
}

// addStat appends one reported statistic (Value for numbers, Text for NaN
// and infinities, nothing for null); other types are errors.
func (r *result) addStat(file, metric, stat, unit string, raw json.RawMessage) error {
	rs, ok, err := pybench.Stat(file, metric, stat, unit, raw)
	if err != nil || !ok {
		return err
	}
	r.reported = append(r.reported, rs)
	if metric == "completed" && rs.Value != nil {
		r.completed = rs.Value
	}
	return nil
}

// unitOf names a scalar's unit from SGLang's key.
func unitOf(key string) string {
	switch {
	case key == "duration":
		return "s"
	case key == "request_throughput":
		return "req/s"
	case strings.Contains(key, "throughput"):
		return "tokens/s"
	case strings.HasPrefix(key, "total_") && strings.Contains(key, "_tokens"):
		return "tokens"
	case strings.HasSuffix(key, "_ms"):
		return "ms"
	case key == "concurrency":
		return "requests"
	}
	return ""
}

// endpointOf is the API path of a backend (bench_serving.py run_benchmark).
func endpointOf(backend string) string {
	switch {
	case nativeBackends[backend]:
		return "generate"
	case strings.HasSuffix(backend, "-chat"):
		return "v1/chat/completions"
	case backend == "sglang-oai" || backend == "vllm" || backend == "lmdeploy":
		return "v1/completions"
	case backend == "trt":
		return "v2/models/ensemble/generate_stream"
	case backend == "truss":
		return "v1/models/model:predict"
	}
	return ""
}

// emit sends the run's requests and its Run row to sink.
func (r *result) emit(f *fileState, runID string, src formats.SourceFile, cut string, out formats.Sink) error {
	sink := formats.NewRowWriter(out)
	native := nativeBackends[r.backend]
	run := formats.Run{
		RunID:             runID,
		Tool:              Name,
		ToolVersion:       r.server.version,
		Model:             r.server.model,
		Endpoint:          endpointOf(r.backend),
		Tokenizer:         r.server.tokenizer,
		Convention:        Convention,
		RequestRateRPS:    r.rate,
		Concurrency:       r.conc,
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
		Reported:          r.reported,
		Truncated:         cut != "",
	}
	if native {
		run.Convention = ConventionNative
	}
	switch {
	case r.conc != nil && (r.rate == nil || math.IsInf(*r.rate, 1)):
		run.LoadMode = "concurrency"
	case r.rate != nil:
		run.LoadMode = "request_rate"
	}
	cfg, redacted := pybench.ConfigJSON(r.config)
	run.ConfigJSON = cfg

	vals := &ingest.Values{}
	var d *details
	var err error
	if r.stream != nil {
		d, err = streamDetails(r.v.Arrays, r.stream, vals, r.v.Where)
	} else {
		d, err = parseDetails(r.arrays, vals, r.v.Where)
	}
	if err != nil {
		return ingest.Wrap(f.path, r.v.Where, err)
	}
	var notes []string
	if cut != "" {
		notes = append(notes, cut+"; every complete line before it was imported")
	}
	notes = append(notes, "key set: "+r.keySet)
	if native {
		notes = append(notes, fmt.Sprintf("convention %s: backend %q calls SGLang's native /generate (server completion_tokens; a chunk of k tokens gives k ITL samples of gap/k)", ConventionNative, r.backend))
	} else {
		notes = append(notes, fmt.Sprintf("convention %s: backend %q uses an OpenAI-style or plain streaming client (one ITL sample per chunk; output_len from usage when seen, else the requested length)", Convention, r.backend))
	}
	if r.server.layout != "" {
		notes = append(notes, "server_info layout: "+r.server.layout+"; model, tokenizer and tool_version are the server's")
	}
	if len(redacted) > 0 {
		notes = append(notes, "redacted from config_json: "+strings.Join(redacted, ", "))
	}
	if d == nil {
		if ch := summaryStuck(native && !r.client2024(), r.reported); ch != nil {
			run.Checks = append(run.Checks, *ch)
		}
		src.Role = "summary"
		notes = append([]string{"summary only: nothing to recompute"}, notes...)
		f.warns.WarnOnly("summary only: nothing to recompute")
		if n := pybench.UnimportedArraysNote(r.arrays); n != "" {
			notes = append(notes, n)
		}
	} else {
		src.Role = "raw"
		stuck := d.findStuck(native && !r.client2024(), r.reported)
		if stuck.check != nil {
			run.Checks = append(run.Checks, *stuck.check)
		}
		if err := formats.StartRun(sink, &run); err != nil {
			return err
		}
		st := &rowStats{}
		var events []formats.Event
		next, done, err := d.rows(f.opt.NoText, vals, r.v.Where)
		if err != nil {
			return err
		}
		defer done()
		for i := 0; i < d.n; i++ {
			gaps, text, err := next(i)
			if err != nil {
				return err
			}
			if err := f.opt.CheckMessages(int64(len(gaps))+1, fmt.Sprintf("itls[%d] of %d gaps", i, len(gaps))); err != nil {
				return ingest.Wrap(f.path, r.v.Where, err)
			}
			var req formats.Request
			req, events = d.request(runID, i, gaps, text, native, st, events)
			if stuck.byRequest[i] {
				req.AddCorrection(TrapOutputLenStuck)
			}
			if err := sink.Request(&req, events); err != nil {
				return err
			}
		}
		run.RequestCount = int64(d.n)
		notes = append(notes, d.notes(st, native)...)
		if ch := concurrencyCheck(r.reported, st.failed, d.n); ch != nil {
			run.Checks = append(run.Checks, *ch)
		}
		run.Checks = append(run.Checks, vals.Checks()...)
		vals.Warn(f.warns.WarnOnly, runID)
	}
	if r.completed != nil && *r.completed == 0 {
		notes = append(notes, "completed 0: the latency statistics are numpy's values for an empty list replaced by 0, not measurements")
	}
	notes = append(notes, r.unknownNotes(f)...)
	run.Notes = notes
	run.SourceFiles = []formats.SourceFile{src}
	return sink.Run(&run)
}

// unknownNotes names the keys SGLang does not write, warning once per key
// and file.
func (r *result) unknownNotes(f *fileState) []string {
	var notes []string
	for _, k := range r.unknownNum {
		f.warns.WarnOnly(fmt.Sprintf("key %q is not one SGLang bench_serving writes: imported into reported", k))
	}
	for _, k := range r.unknownCfg {
		f.warns.WarnOnly(fmt.Sprintf("key %q is not one SGLang bench_serving writes: kept in config_json", k))
	}
	if len(r.unknownNum) > 0 {
		notes = append(notes, "keys SGLang does not write, numeric, imported into reported (Stat \"value\"): "+strings.Join(r.unknownNum, ", "))
	}
	if len(r.unknownCfg) > 0 {
		notes = append(notes, "keys SGLang does not write (a fork's or a newer version's), kept in config_json: "+strings.Join(r.unknownCfg, ", "))
	}
	return notes
}
