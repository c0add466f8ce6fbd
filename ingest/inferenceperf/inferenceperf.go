// Package inferenceperf imports the reports of inference-perf
// (github.com/kubernetes-sigs/inference-perf, the Kubernetes serving
// working group's load generator) into tokentrace rows.
//
// # Inputs
//
// One inference-perf run writes a directory of reports, every name
// optionally carrying the run's report_file_prefix
// (kubernetes-sigs/inference-perf@7de5ef2ed6f7
// inference_perf/reportgen/base.py, generate_reports):
//
//   - stage_N_lifecycle_metrics.json: the client-side summary of load stage
//     N (summarize_requests over the stage's requests): load_summary
//     (count, schedule_delay, send_duration, requested_rate, achieved_rate,
//     concurrency), successes (count, latency{request_latency,
//     normalized_time_per_output_token, time_per_output_token,
//     time_to_first_token, inter_token_latency}, throughput, prompt_len,
//     output_len, and in later versions server-token, goodput and
//     multimodal sections) and failures. Latencies are seconds, although
//     inference-perf's docs/metrics.md says ms.
//   - summary_lifecycle_metrics.json: the same over every stage's requests.
//   - per_request_lifecycle_metrics.json (report.request_lifecycle.per_request):
//     one record per request: start_time, end_time (time.perf_counter()
//     seconds), request (the JSON body sent), response, info (token counts
//     and times, in three layouts: see generation) and error.
//   - stage_N_prometheus_metrics.json, summary_prometheus_metrics.json: the
//     model server's own Prometheus metrics (vLLM: vllm:time_to_first_token_seconds,
//     vllm:e2e_request_latency_seconds, …) queried with PromQL over the
//     stage's window (histogram_quantile over rate(…[window]); the window
//     runs past the stage's end by the scrape interval and a buffer).
//   - config.yaml: the run's configuration.
//   - adapter_X[_stage_N]_lifecycle_metrics.json (v0.4+, per LoRA adapter).
//
// Session reports (*_session_lifecycle_metrics.json) are not imported.
//
// # Runs
//
// Every stage is one run, RunID "<label>/stage_N", with the stage's load
// (LoadMode "request_rate" and RequestRateRPS = load_summary.requested_rate,
// or LoadMode "concurrency" when load_summary.concurrency is set) and, as
// Reported, both the stage's lifecycle statistics and its Prometheus ones.
// The summary over all stages is a run of its own, RunID "<label>", with
// the summary reports as Reported and no load (it pools the stages). Adapter
// reports become runs "<label>/adapter_X" and "<label>/adapter_X/stage_N".
// The label is Options.Label, else the report-file prefix, else the
// directory's name (Label).
//
// Requests of a per-request file go to the stage runs when the file lets
// them be assigned: every record has a stage_id, or the records sorted by
// start time split into consecutive groups of the stages' request counts
// (load_summary.count) with each stage's last end before the next stage's
// first start (inference-perf runs stages one after another and waits for
// every request of a stage before the next: loadgen/load_generator.py
// run_stage). Otherwise they all go to the summary run, with a note saying
// why. A run without requests says "summary only: nothing to recompute".
//
// # Reported statistics
//
// Every number of a lifecycle report lands in Run.Reported under
// inference-perf's own key path, in its own units: the last key is the
// statistic when it names one (mean, min, max, median, pN, count, rate),
// the rest is the metric — successes.latency.time_to_first_token / p99,
// successes / count, load_summary.schedule_delay / median — and otherwise
// the whole path is the metric with statistic "value" —
// successes.throughput.output_tokens_per_sec / value,
// load_summary.requested_rate / value, benchmark_time_seconds / value.
// Prometheus statistics are the same with the prefix "prometheus."
// (PrometheusPrefix): prometheus.successes.time_to_first_token / p99 is the
// server's histogram estimate, never a client measurement. A null (an empty
// distribution) is left out; Python's bare NaN and Infinity become Text
// values; a key no inference-perf version writes is imported and named in
// a note.
//
// # Requests and events
//
// A record becomes a Request: StartNs = start_time in ns (ClockDomain
// "monotonic"), StreamEndOffsetNs = end_time − start_time; status "error"
// with the record's error_type and error_msg (ErrorCode from "HTTP Error
// 429"), else "ok", or "empty" when nothing was generated. Token counts
// prefer the server's usage (v0.5+ server_usage) over the tool's counts;
// the tool's own counts stay in ReportedInputTokens/ReportedOutputTokens.
// Events are only the times the file holds:
//
//   - v0.5+ streamed records: one event per recorded content chunk
//     (chunk_times, with response_chunks' text, finish reason and kind), its
//     Tokens from output_token_times (the report step stores one time per
//     re-tokenized token, each chunk's tokens at its arrival) when the
//     report step evidently re-tokenized (some record's token times differ
//     from its chunk times, or the config names a tokenizer). Role-only,
//     usage and [DONE] messages are not recorded by inference-perf and get
//     no event; extra_info.raw_response is not imported.
//   - v0.1.1–v0.4 records: one event per output_token_times entry, kind
//     content, without text or token count: inference-perf kept only the
//     times, not what arrived (≤v0.2: every SSE line, blank separators and
//     [DONE] included; v0.3–v0.4: every SSE message). The events reproduce
//     the tool's definitions, not the true token timing (see the run's
//     notes).
//   - v0.1.0 records (no info) and non-streamed responses: no events.
//
// # Data checks
//
// The versions' known per-request errors are data checks (traps.go;
// analyze/TRAPS.md), judged over the whole per-request file in the first
// pass and recorded per run (Run.Checks) and request (Corrections):
// inference_perf_line_times (≤ v0.2) and inference_perf_message_times
// (v0.3–v0.4) mark the times of messages that carried no token with
// Tokens 0 (the times themselves kept); inference_perf_bos_per_chunk
// (v0.5) names the records whose per-chunk counts include one BOS each.
// A run without requests whose report's layout names such a version gets
// inference_perf_buggy_version (flagged: nothing to correct).
//
// # Versions
//
// The files record no version. The importer tells the generation from the
// per-request layout (recordTiming) or the summary's shape and, for the
// v0.2–v0.3 shape, from the per-SSE-line signature in inter_token_latency
// (summaryTiming), and names it in Run.Convention (ConventionLine,
// ConventionMessage, ConventionToken5, ConventionToken) with its evidence
// in a note.
package inferenceperf

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Name is the format name accepted by --from.
const Name = "inference-perf"

// New returns the inference-perf importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

// Name implements ingest.Importer.
func (importer) Name() string { return Name }

// Detect implements ingest.Importer. It answers yes for every report of a
// run told by its name (per-request, summary, stage, adapter and
// Prometheus reports; not session reports or config.yaml) — in a
// directory the primary one (the per-request file, else the summary, else
// the lowest-numbered stage report, else an adapter report, else a
// Prometheus report) lists the others as its companions, so the run is
// imported once, by one job — and for a file of another name whose first
// keys are a lifecycle report's (load_summary, successes) or a per-request
// record's (start_time, end_time, request|info), which is imported on its
// own. A named file that is empty or broken is still claimed, so that
// Import can say what is wrong with it.
func (importer) Detect(path string, head []byte) bool {
	if _, ok := groupOf(path); ok {
		return true
	}
	if parseName(filepath.Base(path)).kind != kindNone {
		return false // config.yaml, session reports
	}
	return sniffContent(head) != contentUnknown
}

// Companions implements ingest.Importer: for the primary report of a run,
// every other report of the run (same directory and name prefix) and its
// config.yaml; for another report, what Import reads with it (its
// Prometheus twin, the config).
func (importer) Companions(path string) []string {
	g, ok := groupOf(path)
	if !ok {
		return nil
	}
	g = g.forImport(path)
	var out []string
	for _, f := range g.files() {
		if filepath.Clean(f) != filepath.Clean(path) {
			out = append(out, f)
		}
	}
	if g.config != "" {
		out = append(out, g.config)
	}
	return out
}

// Import implements ingest.Importer: it reads every report of path's run
// (see the package documentation for the runs it makes). Errors are
// *ingest.FormatError values naming the file and the position
// ("stage_3_lifecycle_metrics.json: successes.latency.time_to_first_token.mean:
// not a number: \"fast\"", "per_request_lifecycle_metrics.json: record 7:
// start_time: missing (a number is required)", "… byte 1834: invalid JSON").
func (importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	label := opt.Label
	if label == "" {
		label = Label(path)
	}
	if label == "" {
		label = ingest.DefaultLabel(path)
	}
	g, named := groupOf(path)
	if named {
		if h := g.forImport(path); h != g {
			ingest.NewNotes(path, opt).WarnOnly(fmt.Sprintf("imported on its own: the %d other reports of its run beside it are read when %s (the run's primary report) or the directory is imported",
				len(g.files())-len(h.files()), filepath.Base(g.primary())))
			g = h
		}
	} else {
		head := in.Head()
		g = &group{dir: filepath.Dir(path), stages: map[int]string{}, adapters: map[string]string{},
			adapterStages: map[adapterStage]string{}, promStages: map[int]string{}}
		switch sniffContent(head) {
		case contentPerRequest:
			g.perRequest = path
		case contentSummary:
			if bytes.Contains(head, []byte(`"queue_len"`)) && !bytes.Contains(head, []byte(`"latency"`)) {
				g.promSummary = path
			} else {
				g.summary = path
			}
		default:
			if len(bytes.TrimSpace(head)) == 0 {
				return ingest.Errorf(path, "", "empty file")
			}
			return &ingest.FormatError{File: path, Msg: "not an inference-perf report", Err: ingest.ErrNotThisFormat}
		}
	}
	im := &runImport{g: g, in: in, label: label, opt: opt, sink: formats.NewRowWriter(sink)}
	return im.run()
}
