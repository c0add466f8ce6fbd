package inferenceperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// PrometheusPrefix starts the Metric of every statistic read from a
// *_prometheus_metrics.json file: server-side numbers that inference-perf
// queried from the model server's Prometheus metrics, never client
// measurements.
const PrometheusPrefix = "prometheus."

// summaryFile is one parsed lifecycle or Prometheus report
// (summarize_requests / summarize_prometheus_metrics in reportgen/base.py).
type summaryFile struct {
	path string
	src  formats.SourceFile
	prom bool
	// reported holds every statistic, flattened (see flatten).
	reported []formats.ReportedStat
	// cut describes where a truncated file ends ("" when whole).
	cut string
	// unknown lists the statistics no inference-perf version writes.
	unknown []string
	// arrays lists the paths of list values (failures.by_label messages),
	// which are not statistics.
	arrays []string
	// statOrder is the order of the statistics of the first latency
	// distribution (version evidence).
	statOrder []string
	// values of the keys the importer reads.
	values map[string]float64
}

// value returns a flattened statistic ("successes.latency.inter_token_latency"
// and "median" → metric/stat).
func (s *summaryFile) value(metric, stat string) (float64, bool) {
	v, ok := s.values[metric+"\x00"+stat]
	return v, ok
}

// isStatKey reports whether a key names a statistic of the object holding
// it rather than a quantity of its own: the distribution keys of summarize()
// (mean, min, max, median, p<q>), the count of a section (load_summary,
// successes, failures, a failure label) and the Prometheus rate.
var percentileKey = regexp.MustCompile(`^p\d+(\.\d+)?$`)

func isStatKey(k string) bool {
	switch k {
	case "mean", "min", "max", "median", "count", "rate", "std", "sd":
		return true
	}
	return percentileKey.MatchString(k)
}

// flatten turns a JSON path into the tool's metric and statistic: the last
// key is the statistic when it names one (successes.latency.time_to_first_token
// + p99; successes + count), else the whole path is the metric and the
// statistic is "value" (successes.throughput.output_tokens_per_sec,
// load_summary.requested_rate, successes.prompt_tokens.total). A failure
// label's count is failures.by_label + the label ("429 - Rate Limit").
func flatten(path []string) (metric, stat string) {
	if len(path) == 4 && path[0] == "failures" && path[1] == "by_label" && path[3] == "count" {
		// failures.by_label.<label>.count (v0.6.1+): one statistic per label.
		return "failures.by_label", path[2]
	}
	if n := len(path); n >= 2 && isStatKey(path[n-1]) {
		return strings.Join(path[:n-1], "."), path[n-1]
	}
	return strings.Join(path, "."), "value"
}

// Known statistics of the lifecycle reports, v0.1.0 … 7de5ef2.
var (
	lifecycleDist = setOf(
		"load_summary.schedule_delay",
		"successes.latency.request_latency", "successes.latency.normalized_time_per_output_token",
		"successes.latency.time_per_output_token", "successes.latency.time_to_first_token",
		"successes.latency.inter_token_latency",
		"successes.prompt_len", "successes.output_len", "successes.prompt_tokens", "successes.output_tokens",
		"successes.request_size_bytes",
		"successes.image.count", "successes.image.pixels", "successes.image.bytes", "successes.image.aspect_ratio",
		"successes.video.count", "successes.video.frames", "successes.video.pixels", "successes.video.bytes", "successes.video.aspect_ratio",
		"successes.audio.count", "successes.audio.seconds", "successes.audio.bytes",
		"failures.request_latency", "failures.prompt_len", "failures.prompt_tokens",
	)
	lifecycleScalar = setOf(
		"benchmark_time_seconds",
		"load_summary.send_duration", "load_summary.requested_rate", "load_summary.achieved_rate", "load_summary.concurrency",
		"successes.throughput.input_tokens_per_sec", "successes.throughput.output_tokens_per_sec",
		"successes.throughput.total_tokens_per_sec", "successes.throughput.requests_per_sec",
		"successes.throughput.images_per_sec", "successes.throughput.videos_per_sec", "successes.throughput.audios_per_sec",
		"successes.token_count_mismatches",
		"successes.prompt_tokens.total", "successes.prompt_tokens.cached", "successes.prompt_tokens.uncached",
		"successes.output_tokens.total",
		"failures.prompt_tokens.total", "failures.prompt_tokens.cached", "failures.prompt_tokens.uncached",
	)
	lifecycleCount = setOf("load_summary", "successes", "failures")
	// Prometheus reports: summarize_prometheus_metrics, v0.1.0 … 7de5ef2.
	promMetrics = setOf(
		"benchmark_time_seconds", "successes", "successes.prompt_len", "successes.output_len", "successes.queue_len",
		"successes.request_latency", "successes.time_to_first_token", "successes.time_per_output_token",
		"successes.kv_cache_usage_percentage", "successes.num_requests_swapped", "successes.num_preemptions_total",
		"successes.prefix_cache_hit_percent", "successes.inter_token_latency", "successes.num_requests_running",
		"successes.request_queue_time", "successes.request_inference_time", "successes.request_prefill_time",
		"successes.request_decode_time", "successes.request_prompt_tokens", "successes.request_generation_tokens",
		"successes.request_max_num_generation_tokens", "successes.request_params_n", "successes.request_params_max_tokens",
		"successes.request_success_count", "successes.iteration_tokens", "successes.prompt_tokens_cached",
		"successes.external_prefix_cache_hit_percent", "successes.mm_cache_hit_percent", "successes.corrupted_requests",
		"successes.request_prefill_kv_computed_tokens", "successes.kv_block_idle_before_evict",
		"successes.kv_block_lifetime", "successes.kv_block_reuse_gap",
	)
)

func setOf(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// known reports whether metric/stat (without the Prometheus prefix) is one
// inference-perf writes in a report of this kind.
func known(prom bool, metric, stat string) bool {
	if prom {
		return promMetrics[metric]
	}
	switch {
	case metric == "failures.by_label":
		return true
	case stat == "value":
		return lifecycleScalar[metric] || strings.HasPrefix(metric, "successes.goodput_metrics.")
	case stat == "count" && lifecycleCount[metric]:
		return true
	case stat != "count" && stat != "rate":
		return lifecycleDist[metric]
	}
	return false
}

// unitOf names a statistic's unit; inference-perf states none in its files.
// Its latencies are seconds (time.perf_counter differences), although its
// docs/metrics.md says ms.
func unitOf(metric, stat string) string {
	m := strings.TrimPrefix(metric, PrometheusPrefix)
	last := m[strings.LastIndexByte(m, '.')+1:]
	switch {
	case stat == "count" && lifecycleCount[m] || m == "failures.by_label":
		return "requests"
	case m == "successes" && stat == "rate":
		return "requests/s"
	case last == "queue_len" || last == "num_requests_running" || last == "num_requests_swapped" || last == "request_success_count" || last == "corrupted_requests":
		return "requests"
	case last == "kv_cache_usage_percentage":
		return "" // vllm:gpu_cache_usage_perc / kv_cache_usage_perc: a 0–1 fraction despite the name
	case strings.Contains(last, "percent"):
		return "%"
	case last == "benchmark_time_seconds" || strings.Contains(m, ".latency.") || strings.HasSuffix(last, "_latency") ||
		last == "time_to_first_token" || last == "time_per_output_token" || last == "schedule_delay" || last == "send_duration" ||
		strings.HasSuffix(last, "_time") || strings.HasPrefix(last, "kv_block_"):
		return "s"
	case last == "requested_rate" || last == "achieved_rate" || last == "requests_per_sec" || last == "request_goodput":
		return "requests/s"
	case strings.HasSuffix(last, "tokens_per_sec") || last == "token_goodput":
		return "tokens/s"
	case strings.HasSuffix(last, "_per_sec"):
		return strings.TrimSuffix(last, "_per_sec") + "/s"
	case strings.HasSuffix(m, "_len") || strings.Contains(m, "prompt_tokens") || strings.Contains(m, "output_tokens") ||
		strings.Contains(m, "generation_tokens") || last == "iteration_tokens" || last == "request_prefill_kv_computed_tokens":
		if stat == "rate" {
			return "tokens/s"
		}
		return "tokens"
	case last == "bytes" || strings.HasSuffix(last, "_bytes"):
		return "bytes"
	case last == "seconds":
		return "s"
	}
	return ""
}

// readSummary reads and flattens a lifecycle (prom false) or Prometheus
// report. Structural damage is a *ingest.FormatError positioned at the byte
// (unparseable JSON) or at the key (a string or boolean where inference-perf
// writes a number); a file cut short keeps every statistic before the cut
// and says where it ends (summaryFile.cut).
func readSummary(in *ingest.Input, opt ingest.Options, path string, prom bool) (*summaryFile, error) {
	role := "summary"
	if prom {
		role = "server_summary"
	}
	src, raw, err := in.ReadFile(path, role, opt)
	if err != nil {
		return nil, err
	}
	s := &summaryFile{path: path, src: src, prom: prom, values: map[string]float64{}}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, ingest.Errorf(path, "", "empty file (expected a JSON object)")
	}
	data, shifts := quoteNonFinite(raw)
	w := &walker{s: s, file: filepath.Base(path), dec: json.NewDecoder(bytes.NewReader(data)), data: data, size: int64(len(data))}
	w.dec.UseNumber()
	err = w.top()
	if err != nil {
		var se *json.SyntaxError
		var fe *ingest.FormatError
		switch {
		case errors.As(err, &fe):
			fe.File = path
			return nil, fe
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			if len(s.reported) == 0 && w.depth == 0 {
				return nil, ingest.Errorf(path, "", "empty file (expected a JSON object)")
			}
			s.cut = fmt.Sprintf("%s is cut after %d bytes, inside %s: the %d statistics before the cut are imported",
				filepath.Base(path), len(raw), w.where(), len(s.reported))
			if w.droppedLast != "" {
				s.cut += "; the number at the cut (" + w.droppedLast + ") is dropped: its digits may be incomplete"
			}
		case errors.As(err, &se):
			off := originalOffset(se.Offset, shifts)
			return nil, &ingest.FormatError{File: path, Where: fmt.Sprintf("byte %d", off), Msg: "invalid JSON", Err: err}
		default:
			return nil, &ingest.FormatError{File: path, Where: w.where(), Msg: "invalid JSON", Err: err}
		}
	}
	sort.Strings(s.unknown)
	return s, nil
}

// walker streams a report's JSON tokens, keeping the path to each value.
type walker struct {
	s           *summaryFile
	file        string
	dec         *json.Decoder
	data        []byte
	size        int64
	path        []string
	depth       int
	droppedLast string
}

// where names the current position: the key path, or "top level".
func (w *walker) where() string {
	if len(w.path) == 0 {
		return "the top-level object"
	}
	return strings.Join(w.path, ".")
}

func (w *walker) top() error {
	t, err := w.dec.Token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return &ingest.FormatError{Where: "byte 0", Msg: fmt.Sprintf("not a JSON object (starts with %v)", t)}
	}
	w.depth = 1
	if err := w.object(); err != nil {
		return err
	}
	end := w.dec.InputOffset()
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		rest := w.data[min(end, w.size):]
		end += int64(len(rest) - len(bytes.TrimLeft(rest, " \t\r\n")))
		return &ingest.FormatError{Where: fmt.Sprintf("byte %d", end), Msg: "data after the JSON object"}
	}
	return nil
}

// object reads the members of an object whose '{' was read, and its '}'.
func (w *walker) object() error {
	for w.dec.More() {
		t, err := w.dec.Token()
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok {
			return &ingest.FormatError{Where: w.where(), Msg: "object key is not a string"}
		}
		w.path = append(w.path, key)
		if err := w.value(); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	_, err := w.dec.Token()
	return err
}

// value reads the value at w.path.
func (w *walker) value() error {
	t, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch v := t.(type) {
	case json.Delim:
		w.depth++
		defer func() { w.depth-- }()
		if v == '{' {
			return w.object()
		}
		// A list (failures.by_label.<label>.messages): not a statistic.
		w.s.arrays = append(w.s.arrays, strings.Join(w.path, "."))
		for depth := 1; depth > 0; {
			t, err := w.dec.Token()
			if err != nil {
				return err
			}
			if d, ok := t.(json.Delim); ok {
				if d == '[' || d == '{' {
					depth++
				} else {
					depth--
				}
			}
		}
		return nil
	case json.Number:
		if w.dec.InputOffset() >= w.size {
			// The input ends with this number: it may be cut mid-digits.
			w.droppedLast = strings.Join(w.path, ".") + " " + string(v)
			return io.ErrUnexpectedEOF
		}
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) {
			w.leaf(nil, string(v))
			return nil
		}
		w.leaf(&f, "")
	case string:
		metric, stat := flatten(w.path)
		if isNonFinite(v) {
			w.leaf(nil, v)
			return nil
		}
		if known(w.s.prom, metric, stat) {
			return &ingest.FormatError{Where: strings.Join(w.path, "."), Msg: fmt.Sprintf("not a number: %q", v)}
		}
		w.leaf(nil, v)
	case bool:
		metric, stat := flatten(w.path)
		if known(w.s.prom, metric, stat) {
			return &ingest.FormatError{Where: strings.Join(w.path, "."), Msg: fmt.Sprintf("not a number: %v", v)}
		}
		w.leaf(nil, strconv.FormatBool(v))
	case nil:
		// None: summarize() of an empty list (failures.request_latency with
		// no failure), or a missing server value. Nothing was measured.
	}
	return nil
}

// leaf records one statistic at w.path.
func (w *walker) leaf(v *float64, text string) {
	metric, stat := flatten(w.path)
	if !known(w.s.prom, metric, stat) {
		w.s.unknown = append(w.s.unknown, metric+"."+stat)
	}
	if len(w.path) >= 3 && w.path[0] == "successes" && w.path[1] == "latency" && len(w.s.statOrder) < 32 &&
		(len(w.s.statOrder) == 0 || w.s.statOrder[0] == metric) {
		if len(w.s.statOrder) == 0 {
			w.s.statOrder = append(w.s.statOrder, metric)
		}
		w.s.statOrder = append(w.s.statOrder, stat)
	}
	full := metric
	if w.s.prom {
		full = PrometheusPrefix + metric
	}
	rs := formats.ReportedStat{Metric: full, Stat: stat, Unit: unitOf(full, stat), Value: v, Text: text, File: w.file}
	w.s.reported = append(w.s.reported, rs)
	if v != nil {
		w.s.values[metric+"\x00"+stat] = *v
	}
}

// quoteNonFinite quotes the bare NaN, Infinity and -Infinity that Python's
// json module writes (outside strings), so that the text parses; shifts
// lists the (transformed) offsets where two quote bytes were added.
func quoteNonFinite(raw []byte) ([]byte, []int64) {
	return ingest.QuotePythonNonFinite(raw, "")
}

// originalOffset maps an offset in quoteNonFinite's output back to the
// file's bytes.
func originalOffset(off int64, shifts []int64) int64 { return ingest.OriginalOffset(off, shifts, "") }

func isNonFinite(s string) bool { return s == "NaN" || s == "Infinity" || s == "-Infinity" }
