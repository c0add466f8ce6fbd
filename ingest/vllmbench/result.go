package vllmbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// configKeys are the configuration keys vLLM writes (serve.py main_async,
// benchmark_serving.py before it) and the sweep's run_number.
var configKeys = map[string]bool{
	"date": true, "endpoint_type": true, "backend": true, "label": true, "model_id": true, "tokenizer_id": true,
	"num_prompts": true, "request_rate": true, "burstiness": true, "max_concurrency": true,
	"ramp_up_strategy": true, "ramp_up_start_rps": true, "ramp_up_end_rps": true,
	"best_of": true, "use_beam_search": true, "rps_change_events": true, "run_number": true,
}

// scalarKeys are the run-level results vLLM writes (serve.py benchmark();
// input_throughput in benchmark_serving.py of 2024; the pooling keys of
// embedding runs).
var scalarKeys = map[string]bool{
	"duration": true, "completed": true, "failed": true, "total_input_tokens": true, "total_output_tokens": true,
	"request_throughput": true, "request_goodput": true, "output_throughput": true, "total_token_throughput": true,
	"input_throughput": true, "max_output_tokens_per_s": true, "max_concurrent_requests": true, "rtfx": true,
	"total_input_sequences": true, "input_sequence_throughput": true,
	"spec_decode_acceptance_rate": true, "spec_decode_acceptance_length": true, "spec_decode_num_drafts": true,
	"spec_decode_draft_tokens": true, "spec_decode_accepted_tokens": true, "spec_decode_per_position_acceptance_rates": true,
	"diffusion_committed_throughput": true, "diffusion_steps_per_canvas": true, "diffusion_committed_per_step": true,
	"diffusion_committed_tokens": true, "diffusion_denoising_steps": true, "diffusion_canvas_positions": true,
	"probe_completed": true, "probe_failed": true, "probe_median_e2el_ms": true, "probe_p99_e2el_ms": true, "probe_max_e2el_ms": true,
}

// arrayKeys are the per-request arrays.
var arrayKeys = map[string]bool{
	"input_lens": true, "output_lens": true, "ttfts": true, "itls": true, "start_times": true,
	"errors": true, "generated_texts": true, "latencies": true, "queue_times": true,
}

// typoGoodput is the old spelling of request_goodput, written by older
// vllm-project/vllm benchmarks/benchmark_serving.py (commit not recorded;
// testdata/vllm-bench/moguizhizi-qwen25vl72b-ascend-32req has it).
const typoGoodput = "request_goodput:"

// result is one result object, parsed.
type result struct {
	v          pybench.Value
	backend    string
	model      string
	tokenizer  string
	rate       *float64
	conc       *float64
	runNumber  *int64
	completed  *float64
	config     []ingest.Entry
	reported   []formats.ReportedStat
	arrays     map[string]json.RawMessage
	unknownNum []string   // keys vLLM does not write, numeric (in Reported)
	unknownCfg []string   // the same, other values (in ConfigJSON)
	typo       bool       // the goodput is under "request_goodput:"
	typoNull   bool       // … and is null
	sweep      bool       // the object has run_number (vllm bench sweep)
	rust       *rustMarks // the Rust vllm-bench's keys, nil when none (traps.go)
	notes      []string   // extra notes (companion checks)
	extraSrc   []formats.SourceFile
	ownSrc     *formats.SourceFile // the run file a sweep run came from, when its summary lacks it
	sums       []itlSum            // streamed: the itls' summaries (importStream)
	stream     *pybench.SecondPass // streamed: where itls and texts are read again
}

// parseResult classifies the members of one result object.
func parseResult(f *fileState, v pybench.Value) (*result, error) {
	r := &result{v: v, arrays: map[string]json.RawMessage{}, sweep: slices.Contains(keysOf(v), "run_number")}
	fail := func(key, format string, args ...any) error {
		return ingest.Errorf(f.path, v.Where, "%s: "+format, append([]any{key}, args...)...)
	}
	keys := keysOf(v)
	if !ingest.AnyKey(keys, resultMarks) && !slices.Contains(keys, "backend") {
		msg := &ingest.FormatError{File: f.path, Where: v.Where, Msg: "not a vLLM bench serve result (no backend, duration, completed or request_throughput key)"}
		if v.Index == 0 {
			msg.Err = ingest.ErrNotThisFormat
		}
		return nil, msg
	}
	sweep := r.sweep
	for _, e := range v.Entries {
		key := e.Key
		if key == typoGoodput {
			key, r.typo = "request_goodput", true
			if _, k := pybench.Number(e.Value); k == pybench.Absent {
				r.typoNull = true
			}
		}
		if rustKeys[key] {
			r.addRustKey(key, e)
			continue
		}
		switch {
		case arrayKeys[key]:
			if t := bytes.TrimSpace(e.Value); string(t) == "null" {
				continue
			} else if len(t) == 0 || t[0] != '[' {
				return nil, fail(key, "not a list")
			}
			r.arrays[key] = e.Value
		case configKeys[key]:
			r.config = append(r.config, e)
			if err := r.applyConfig(key, e.Value); err != nil {
				return nil, fail(key, "%v", err)
			}
		default:
			if metric, stat, ok := pybench.StatKey(key); ok {
				if err := r.addStat(f.file, metric, stat, "ms", e.Value); err != nil {
					return nil, fail(key, "%v", err)
				}
				continue
			}
			if scalarKeys[key] {
				if err := r.addScalar(f.file, key, e.Value); err != nil {
					return nil, fail(key, "%v", err)
				}
				continue
			}
			// A key vLLM does not write: in a sweep's run (run_number) the
			// sweep's parameters, configuration; elsewhere numbers are a
			// modified script's results, the rest configuration.
			if _, k := pybench.Number(e.Value); !sweep && (k == pybench.Finite || k == pybench.NonFiniteNumber) {
				r.unknownNum = append(r.unknownNum, e.Key)
				_ = r.addStat(f.file, e.Key, "value", unitOf(e.Key), e.Value)
			} else {
				r.unknownCfg = append(r.unknownCfg, e.Key)
				r.config = append(r.config, e)
			}
		}
	}
	r.takeRustConfig()
	return r, nil
}

func keysOf(v pybench.Value) []string {
	keys := make([]string, len(v.Entries))
	for i, e := range v.Entries {
		keys[i] = e.Key
	}
	return keys
}

// applyConfig reads the Run fields among the configuration keys; wrong
// types where vLLM writes a number are errors.
func (r *result) applyConfig(key string, raw json.RawMessage) error {
	switch key {
	case "backend":
		r.backend = ingest.RawText(raw)
	case "model_id":
		r.model = ingest.RawText(raw)
	case "tokenizer_id":
		r.tokenizer = ingest.RawText(raw)
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
	case "burstiness", "num_prompts":
		if _, k := pybench.Number(raw); k == pybench.NotNumber {
			return fmt.Errorf("not a number")
		}
	case "run_number":
		if v, k := pybench.Number(raw); k == pybench.Finite && v == math.Trunc(v) {
			r.runNumber = ingest.Ptr(int64(v))
		}
	}
	return nil
}

// addStat appends one reported statistic. Numbers are Values, NaN and
// infinities Text; null is not stored; other types are errors (vLLM writes
// every statistic as a number).
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

// addScalar adds a run-level result; the per-position acceptance rates
// (a list) give one statistic per position.
func (r *result) addScalar(file, key string, raw json.RawMessage) error {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		xs, err := pybench.Floats(key, raw)
		if err != nil {
			return err
		}
		for i, x := range xs {
			rs := formats.ReportedStat{Metric: key, Stat: "position_" + strconv.Itoa(i), Unit: unitOf(key), File: file}
			if math.IsNaN(x) {
				rs.Text = "NaN"
			} else {
				rs.Value = ingest.Ptr(x)
			}
			r.reported = append(r.reported, rs)
		}
		return nil
	}
	return r.addStat(file, key, "value", unitOf(key), raw)
}

// unitOf names a scalar's unit from vLLM's key (the file states none):
// duration "s", request rates "req/s", token rates "tokens/s", token totals
// "tokens", *_ms "ms", *_rate percentages "%".
func unitOf(key string) string {
	switch {
	case key == "duration":
		return "s"
	case key == "request_throughput" || key == "request_goodput":
		return "req/s"
	case key == "input_sequence_throughput":
		return "sequences/s"
	case strings.HasSuffix(key, "_throughput") || strings.HasSuffix(key, "_tokens_per_s"):
		return "tokens/s"
	case strings.HasPrefix(key, "total_") && strings.HasSuffix(key, "_tokens"):
		return "tokens"
	case strings.HasSuffix(key, "_ms"):
		return "ms"
	case key == "spec_decode_acceptance_rate" || key == "spec_decode_per_position_acceptance_rates":
		return "%"
	}
	return ""
}

// endpointOf infers the API path from vLLM's backend name (serve.py keeps
// the backend but not --endpoint): chat backends call v1/chat/completions,
// the completions backends v1/completions.
func endpointOf(backend string) string {
	switch {
	case strings.Contains(backend, "chat"):
		return "v1/chat/completions"
	case backend == "openai" || backend == "vllm" || backend == "openai-completions":
		return "v1/completions"
	}
	return ""
}

// streamingBackends are vLLM's generation request functions, all of which
// send "stream": true (endpoint_request_func.py).
var streamingBackends = map[string]bool{"openai": true, "vllm": true, "openai-chat": true, "openai-completions": true, "openai-audio": true}

// emit sends the run's requests and its Run row to sink.
func (r *result) emit(f *fileState, runID string, src formats.SourceFile, cut string, out formats.Sink) error {
	sink := formats.NewRowWriter(out)
	if r.ownSrc != nil {
		src, cut = *r.ownSrc, ""
	}
	run := formats.Run{
		RunID:             runID,
		Tool:              Name,
		Model:             r.model,
		Endpoint:          endpointOf(r.backend),
		Tokenizer:         r.tokenizer,
		Convention:        Convention,
		RequestRateRPS:    r.rate,
		Concurrency:       r.conc,
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
		Reported:          r.reported,
		Truncated:         cut != "",
	}
	if streamingBackends[r.backend] {
		run.Streaming = ingest.Ptr(true)
	}
	switch {
	case r.conc != nil && (r.rate == nil || math.IsInf(*r.rate, 1)):
		run.LoadMode = "concurrency"
	case r.rate != nil:
		run.LoadMode = "request_rate"
	}
	cfg, redacted := pybench.ConfigJSON(r.config)
	run.ConfigJSON = cfg

	at := ""
	if f.multi {
		at = r.v.Where
	}
	vals := &ingest.Values{}
	var d *details
	var err error
	if r.stream != nil {
		d, err = streamDetails(r.v.Arrays, r.sums, r.stream, vals, at)
	} else {
		d, err = parseDetails(r.arrays, vals, at)
	}
	if err != nil {
		return ingest.Wrap(f.path, r.v.Where, err)
	}
	if d != nil {
		d.schedule = d.queues != nil && d.starts != nil && r.rate != nil && *r.rate > 0 && !math.IsInf(*r.rate, 1)
	}
	var notes []string
	if cut != "" {
		notes = append(notes, cut+"; every complete result object before it was imported")
	}
	if r.typo {
		msg := `the goodput is under the old key "request_goodput:" (benchmark_serving.py's typo, trailing colon), imported as request_goodput`
		if r.typoNull {
			msg = `the goodput key has its old spelling "request_goodput:" (benchmark_serving.py's typo, trailing colon); it is null (no --goodput given), so nothing is imported`
		}
		notes = append(notes, msg)
		f.warns.WarnOnly(msg)
	}
	if len(redacted) > 0 {
		notes = append(notes, "redacted from config_json: "+strings.Join(redacted, ", "))
	}
	if d == nil {
		src.Role = "summary"
		notes = append([]string{"summary only: nothing to recompute"}, notes...)
		f.warns.WarnOnly("summary only: nothing to recompute")
		if n := pybench.UnimportedArraysNote(r.arrays); n != "" {
			notes = append(notes, n)
		}
		ok, failed := reportedCount(r.reported, "completed"), reportedCount(r.reported, "failed")
		if ch := ingest.GoodputDenominator("vLLM", r.reported, goodputRules, failed, ok+failed); ok >= 0 && failed >= 0 && ch != nil {
			run.Checks = append(run.Checks, *ch)
		}
	} else {
		src.Role = "raw"
		run.ClockDomain = d.clockDomain()
		if err := formats.StartRun(sink, &run); err != nil {
			return err
		}
		st := &rowStats{}
		finds := d.findTraps(run.Endpoint)
		run.Checks = finds.checks
		var events []formats.Event
		next, done, err := d.rows(f.opt.NoText, vals, at)
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
			req, events = d.request(runID, i, gaps, text, st, events, d.overrun(i, gaps, vals, at))
			for _, code := range finds.byRequest[i] {
				req.AddCorrection(code)
			}
			if err := sink.Request(&req, events); err != nil {
				return err
			}
		}
		run.RequestCount = int64(d.n)
		notes = append(notes, d.notes(st)...)
		if ch := d.singleTokenCheck(reportsGoodput(run.Reported)); ch != nil {
			run.Checks = append(run.Checks, *ch)
		}
		if ch := ingest.GoodputDenominator("vLLM", run.Reported, goodputRules, int64(st.failed), int64(d.n)); ch != nil {
			run.Checks = append(run.Checks, *ch)
		}
		run.Checks = append(run.Checks, vals.Checks()...)
		vals.Warn(f.warns.WarnOnly, runID)
	}
	if r.completed != nil && *r.completed == 0 {
		notes = append(notes, "completed 0: every latency statistic is vLLM's value for an empty list (np.mean/np.median/np.percentile of [] replaced by 0), not a measurement")
	}
	if ch := r.rustCheck(); ch != nil {
		run.Checks = append(run.Checks, *ch)
		notes = append(notes, "implementation: "+rustNote)
	}
	notes = append(notes, r.unknownNotes(f)...)
	notes = append(notes, r.notes...)
	run.Notes = notes
	run.SourceFiles = append([]formats.SourceFile{src}, r.extraSrc...)
	return sink.Run(&run)
}

// unknownNotes names the keys vLLM does not write, warning once per key and
// file.
func (r *result) unknownNotes(f *fileState) []string {
	var notes []string
	for _, k := range r.unknownNum {
		f.warns.WarnOnly(fmt.Sprintf("key %q is not one vLLM writes (a --metadata key, a sweep parameter or a modified script's): imported into reported", k))
	}
	for _, k := range r.unknownCfg {
		f.warns.WarnOnly(fmt.Sprintf("key %q is not one vLLM writes (a --metadata key, a sweep parameter or a modified script's): kept in config_json", k))
	}
	if len(r.unknownNum) > 0 {
		notes = append(notes, "keys vLLM does not write, numeric, imported into reported (Stat \"value\"): "+strings.Join(r.unknownNum, ", "))
	}
	switch {
	case len(r.unknownCfg) > 0 && r.sweep:
		notes = append(notes, "keys vLLM bench serve does not write, taken as the sweep's parameters (the object has run_number), kept in config_json: "+strings.Join(r.unknownCfg, ", "))
	case len(r.unknownCfg) > 0:
		notes = append(notes, "keys vLLM does not write (--metadata KEY=VALUE, a sweep's parameters or a modified script), kept in config_json: "+strings.Join(r.unknownCfg, ", "))
	}
	return notes
}

// runFileNumber reads n from a sweep's "run=<n>.json".
var runFileNumber = regexp.MustCompile(`^run=(\d+)\.json$`)

// checkCompanions reads the run=<n>.json files beside a sweep summary and
// checks each against the summary element of the same run (run_number,
// else the file's n): equal objects add the file to that run's sources;
// differences are noted (the summary's values are kept); a file with no
// element becomes a run of its own, returned.
func (f *fileState) checkCompanions(results []*result) []*result {
	var extra []*result
	for _, comp := range (importer{}).Companions(f.path) {
		base := filepath.Base(comp)
		src, data, err := ingest.ReadFile(comp, "run", f.opt)
		if err != nil {
			results[0].notes = append(results[0].notes, fmt.Sprintf("companion %s unreadable: %v", base, err))
			continue
		}
		vals, _, err := pybench.ReadValues(comp, data, pybench.Objects)
		if err != nil || len(vals) != 1 {
			results[0].notes = append(results[0].notes, fmt.Sprintf("companion %s is not one result object (%v): ignored", base, err))
			continue
		}
		cf := &fileState{path: comp, file: base, opt: f.opt, warns: f.warns.About(comp)}
		c, err := parseResult(cf, vals[0])
		if err != nil {
			results[0].notes = append(results[0].notes, fmt.Sprintf("companion %s: %v: ignored", base, err))
			continue
		}
		n := c.runNumber
		if n == nil {
			if m := runFileNumber.FindStringSubmatch(base); m != nil {
				x, _ := strconv.ParseInt(m[1], 10, 64)
				n = &x
			}
		}
		var match *result
		for i, r := range results {
			rn := r.runNumber
			if rn == nil {
				rn = ingest.Ptr(int64(i))
			}
			if n != nil && *rn == *n {
				match = r
				break
			}
		}
		if match == nil {
			c.notes = append(c.notes, fmt.Sprintf("from %s, which has no element of the same run_number in %s", base, f.file))
			c.ownSrc = &src
			extra = append(extra, c)
			continue
		}
		if diff := diffEntries(match.v.Entries, c.v.Entries); len(diff) == 0 {
			match.notes = append(match.notes, fmt.Sprintf("companion %s holds the same result object (checked key by key)", base))
		} else {
			match.notes = append(match.notes, fmt.Sprintf("companion %s differs from this element in %s; the summary's values are kept", base, strings.Join(diff, ", ")))
		}
		match.extraSrc = append(match.extraSrc, src)
	}
	return extra
}

// diffEntries lists the keys whose values differ (compacted JSON) or that
// only one side has.
func diffEntries(a, b []ingest.Entry) []string {
	am := map[string]string{}
	for _, e := range a {
		am[e.Key] = compact(e.Value)
	}
	var diff []string
	seen := map[string]bool{}
	for _, e := range b {
		seen[e.Key] = true
		if v, ok := am[e.Key]; !ok || v != compact(e.Value) {
			diff = append(diff, e.Key)
		}
	}
	for _, e := range a {
		if !seen[e.Key] {
			diff = append(diff, e.Key)
		}
	}
	sort.Strings(diff)
	return diff
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// reportsGoodput reports whether the result holds a goodput (vLLM writes
// request_goodput only from a --goodput run; a null one is not stored).
// reportedCount is the whole count a result reports under metric, -1
// when it reports none.
func reportedCount(rs []formats.ReportedStat, metric string) int64 {
	for _, r := range rs {
		if r.Metric == metric && r.Stat == "value" && r.Value != nil && *r.Value >= 0 && *r.Value == math.Trunc(*r.Value) {
			return int64(*r.Value)
		}
	}
	return -1
}

func reportsGoodput(rs []formats.ReportedStat) bool {
	for _, r := range rs {
		if r.Metric == "request_goodput" && r.Value != nil {
			return true
		}
	}
	return false
}
