// Package mlperf imports the performance logs of MLPerf Inference LoadGen
// (github.com/mlcommons/inference, loadgen/) into tokentrace run rows.
//
// # Inputs
//
// A LoadGen performance run writes, into one directory (a submission's
// results/<system>/<model>/<scenario>/performance/run_1/):
//
//   - mlperf_log_summary.txt: human-readable "label : value" lines in three
//     sections (results, "Additional Stats", "Test Parameters Used"), then
//     warning and error counts (loadgen/results.cc);
//   - mlperf_log_detail.txt: one ":::MLLOG {json}" event per line, with
//     key, value, time_ms, namespace, event_type and metadata
//     (loadgen/logging.cc): settings (requested_*, effective_*), results
//     (result_*), early-stopping verdicts, errors and warnings.
//
// The summary is the primary input and the detail log beside it its
// companion; a detail log alone is imported on its own. Neither holds
// per-sample times (only mlperf_log_trace.json does, when tracing is on,
// and submissions omit it), so a run has no requests: "summary only:
// nothing to recompute" (mlcommons/inference@b66003e10e2d loadgen/logging.cc;
// the submissions in testdata/mlperf, see their SOURCE.md, carry no trace).
//
// # What a run becomes
//
// One Run per directory, Tool "mlperf", Convention "mlperf"
// (Profile), ToolVersion the detail log's loadgen_version. Reported
// holds every result under one naming, whichever file it came from (File
// says which):
//
//	latency_ns, first_token_latency_ns,      stats min, max, mean, p50, p90,
//	time_per_output_token_ns (unit ns)       p95, p97, p99, p99.9
//	completed_samples_per_sec, scheduled_samples_per_sec, samples_per_second (samples/s)
//	completed_tokens_per_second, tokens_per_second, token_throughput,
//	token_throughput_with_loadgen_overhead (tokens/s)
//	query_count, overlatency_query_count, num_errors
//	validity, perf_constraints_met, min_duration_met, min_queries_met,
//	early_stopping_met, early_stopping_ttft_result, early_stopping_tpot_result (text)
//
// The summary's "Time to Output Token" lines (before mlcommons/inference
// PR #2360, 2025-10) and "Time per Output Token" lines, and the detail
// log's result_time_to_output_token_* and result_time_per_output_token_*
// keys, are all time_per_output_token_ns: LoadGen's TPOT, (latency − TTFT)
// / (n_tokens − 1) in integer ns. When both files give a statistic, the one
// written with more significant digits is kept (the summary prints rates
// with two decimals, the detail log with six significant digits) and a
// disagreement beyond rounding is noted. A label or key not known here is
// imported under a name made from it, with a warning naming it.
//
// The Test Parameters section and the detail log's settings become
// ConfigJSON (the detail log's loaded_qsl_set, loadgen_file_sha1 and git
// log are left out: they are long and say nothing about performance). The
// scenario sets the load: Server is "request_rate" at target_qps, Offline
// "request_rate" at +Inf (every sample in one query), SingleStream
// "concurrency" 1. The model is read from user.conf beside the logs (its
// single "<model>.<Scenario>.key" prefix) or from the submission path.
//
// First-token statistics that are no measurement — all 0, or LoadGen's
// negative invalid-latency sentinel — are imported as null with the data
// check mlperf_first_token_not_measured (traps.go; mlcommons/inference
// #1788), never as 0.
//
// Notes state the validity and constraint results, and check them: P99
// TTFT ≤ ttft_latency and P99 TPOT ≤ tpot_latency is LoadGen's rule, the
// submission checker's is strict <; the check with the reported P99s is
// noted beside the tool's verdict. Early-stopping checks that did not
// succeed (or printed no verdict in a Server or Interactive run) are noted
// with LoadGen's text.
//
// # Damage
//
// A line that cannot be parsed where a number is required ("Min latency
// (ns) : fast", a detail result whose value is not a number, a detail line
// whose JSON is broken) is an *ingest.FormatError naming file and line. A
// file cut short imports what it holds, with Run.Truncated and a note; its
// last line, when it lacks its newline, is dropped as possibly cut.
package mlperf

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Name is the format name accepted by --from.
const Name = "mlperf"

// Convention is the run's metric convention (Profile).
const Convention = "mlperf"

// LoadGen's file names.
const (
	summaryFile = "mlperf_log_summary.txt"
	detailFile  = "mlperf_log_detail.txt"
)

// New returns the MLPerf LoadGen importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

// Name implements ingest.Importer.
func (importer) Name() string { return Name }

type inputKind int

const (
	kindUnknown inputKind = iota
	kindSummary
	kindDetail
)

var summaryBanner = []byte("MLPerf Results Summary")

func sniff(path string, head []byte) inputKind {
	base := filepath.Base(path)
	trimmed := bytes.TrimSpace(head)
	switch {
	case base == summaryFile || bytes.Contains(head, summaryBanner) && bytes.HasPrefix(trimmed, []byte("=====")):
		return kindSummary
	case base == detailFile || bytes.HasPrefix(trimmed, []byte(":::MLLOG ")):
		return kindDetail
	}
	return kindUnknown
}

// Detect implements ingest.Importer: a file named mlperf_log_summary.txt or
// starting with the "MLPerf Results Summary" banner; a file named
// mlperf_log_detail.txt or starting with ":::MLLOG " when no summary sits
// beside it.
func (importer) Detect(path string, head []byte) bool {
	switch sniff(path, head) {
	case kindSummary:
		return true
	case kindDetail:
		return path == ingest.StdinPath || !ingest.Exists(filepath.Join(filepath.Dir(path), summaryFile))
	}
	return false
}

// Companions implements ingest.Importer: the detail log beside a summary.
func (importer) Companions(path string) []string {
	if path == ingest.StdinPath || filepath.Base(path) == detailFile {
		return nil
	}
	if d := filepath.Join(filepath.Dir(path), detailFile); ingest.Exists(d) {
		return []string{d}
	}
	return nil
}

// Import implements ingest.Importer.
func (importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	label := opt.Label
	if label == "" {
		label = defaultLabel(path)
	}
	head := in.Head()
	if len(bytes.TrimSpace(head)) == 0 {
		return ingest.Errorf(path, "", "empty file (expected an MLPerf LoadGen log)")
	}
	r := &runBuilder{label: label, opt: opt, in: in}
	switch sniff(path, head) {
	case kindSummary:
		if err := r.readSummary(path); err != nil {
			return err
		}
		if d := filepath.Join(filepath.Dir(path), detailFile); path != ingest.StdinPath && filepath.Base(path) == summaryFile && ingest.Exists(d) {
			if err := r.readDetail(d); err != nil {
				return err
			}
		}
	case kindDetail:
		if err := r.readDetail(path); err != nil {
			return err
		}
	default:
		return &ingest.FormatError{File: path, Msg: "not an MLPerf LoadGen summary or detail log", Err: ingest.ErrNotThisFormat}
	}
	r.readUserConf(path)
	run := r.build(path)
	return sink.Run(&run)
}

// runPath matches a submission's …/<model>/<Scenario>/performance/run_N.
var runPath = regexp.MustCompile(`^run_\d+$`)

// defaultLabel is the directory's name; for a submission's
// <model>/<Scenario>/performance/run_N directory, "<model>-<Scenario>-run_N".
func defaultLabel(path string) string {
	if path == ingest.StdinPath {
		return ingest.DefaultLabel(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	dir := filepath.Dir(abs)
	base := filepath.Base(dir)
	if runPath.MatchString(base) && filepath.Base(filepath.Dir(dir)) == "performance" {
		scen := filepath.Dir(filepath.Dir(dir))
		return filepath.Base(filepath.Dir(scen)) + "-" + filepath.Base(scen) + "-" + base
	}
	if base == "." || base == "/" || base == "" {
		return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return base
}
