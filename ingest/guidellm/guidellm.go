// Package guidellm imports the benchmarks reports of guidellm
// (github.com/vllm-project/guidellm, formerly neuralmagic/guidellm) into
// tokentrace rows.
//
// # Inputs
//
// `guidellm benchmark --outputs json` writes one report, benchmarks.json
// (`--outputs yaml`: the same object as benchmarks.yaml, keys sorted by
// yaml.dump). Two shapes exist (vllm-project/guidellm at tags v0.3.0
// ad9513fd and v0.4.0 f6175cdd, and at ee7a77457ba6 for v0.7's "config"):
//
//   - v0.2–v0.3: {"benchmarks": [...]}; each benchmark has args, run_stats,
//     worker, request_loader, metrics, request_totals, request_samples and
//     requests{successful, incomplete, errored} of GenerativeTextResponseStats
//     / GenerativeTextErrorStats records (start_time, first_token_time,
//     last_token_time, end_time in epoch seconds; prompt_tokens,
//     output_tokens) — guidellm v0.3.0 src/guidellm/benchmark/benchmark.py.
//   - v0.4 and later: {"metadata" (v0.5+), "args" (or "config", v0.7),
//     "benchmarks"}; each benchmark has config, scheduler_state,
//     scheduler_metrics, metrics and requests of GenerativeRequestStats
//     records whose times are in info.timings (request_start,
//     first_token_iteration, last_token_iteration, token_iterations,
//     request_end) — guidellm v0.4.0 src/guidellm/schemas/request_stats.py,
//     schemas/info.py.
//
// A YAML twin beside the JSON file (same stem) is a companion: hashed and
// listed, not imported again. A YAML report alone is detected and read when
// the build includes YAML support (yaml.go, build tag guidellm_yaml, which
// needs gopkg.in/yaml.v3); a build without it leaves such a file alone.
//
// # What a benchmark becomes
//
// Each benchmark (one sweep point) is one Run, labelled Label, Label#2, …
// (ingest.RunLabel). Its metrics — StatusDistributionSummary objects
// {successful, incomplete, errored, total} × {mean, median, mode, variance,
// std_dev, min, max, count, total_sum, percentiles} — become Run.Reported
// under Metric "<metric path>.<status>" ("time_to_first_token_ms.successful",
// "text.tokens.output.total") and Stat the tool's statistic name, except
// percentiles, whose keys p001 … p999 are renamed "p0.1", "p1", "p5",
// "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9" (guidellm's
// "p001" is the 0.1th percentile, and "p999" the 99.9th). request_totals
// becomes Metric "request_totals.<status>", Stat "value"; the benchmark's
// duration Metric "duration", Stat "value". Units come from the names
// (*_ms "ms", request_latency and duration "s", *_per_second "/s").
//
// Each request record becomes a Request: successful → "ok" ("empty" when
// no token arrived), incomplete → "cancelled", errored → "error" (the
// error string in ErrorText). StartNs is the request start in unix ns;
// first_token, last_token and stream_end offsets come from the first/last
// token times and the request end. guidellm keeps no other per-token time,
// so there are no events and no second-token offset: inter-token gaps are
// never invented (guidellm itself spreads iterations evenly with linspace
// for its rate metrics; issue #1145). OutputTokens and InputTokens are
// guidellm's own counts (source "tool_reported": the server's usage when it
// sent one, else the requested count — the file does not say which; v0.6+
// falls back to token iterations, imported with source "chunk_count" when
// recognizable); the raw values and guidellm's per-request TTFT, E2E, ITL
// and output rate stay in the Reported* fields. TokenMessageCount is
// v0.4+'s token_iterations.
//
// # Conventions
//
// Run.Convention is "guidellm@0.3" for the v0.2–v0.3 shape, whose TPOT is
// (t_last − t_first)/N, and "guidellm@0.4" for the later shape, whose TPOT
// is (t_last − t_request)/N and includes TTFT; ITL is (t_last − t_first)/(N
// − 1) in both, and guidellm weights TPOT by N and ITL by N − 1 in its
// summaries (Profile03, Profile04 in profile.go). The shape decides,
// not the field names, which did not change.
//
// # Samples, windows, damage
//
// With --sample-requests (v0.4's default keeps 10 per status) the request
// lists hold fewer records than the summaries cover: the run is noted
// "sampled: N of M … requests kept" and a warning says its statistics
// cannot be recomputed exactly. A v0.4+ request outside the scheduler's
// measurement window is imported but noted: guidellm's summaries leave it
// out.
//
// Unparseable JSON and a non-number where a number is required are
// *ingest.FormatError values naming the benchmark and record ("benchmark 2,
// requests.successful[3]: first_token_time: not a number"); unknown keys
// import with a warning naming them; a file cut short yields every complete
// benchmark and every complete request of the cut one, Run.Truncated and a
// note saying where.
package guidellm

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Name is the format name accepted by --from.
const Name = "guidellm"

// Convention names (Profile03, Profile04).
const (
	Convention03 = "guidellm@0.3"
	Convention04 = "guidellm@0.4"
)

// New returns the guidellm importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

// Name implements ingest.Importer.
func (importer) Name() string { return Name }

// Detect implements ingest.Importer. It answers yes for a JSON object that
// starts with guidellm's metadata (v0.5+: "guidellm_version"), or holds a
// "benchmarks" key together with one of guidellm's markers (type_
// "generative_benchmark", the per-request type_ names, v0.3's "run_stats",
// v0.4's "scheduler_metrics"), judged from head alone; for any JSON object
// holding "benchmarks" in a file named benchmarks*.json, or an empty file so
// named, so that Import can say what is wrong with it; and for a .yaml/.yml
// file with "benchmarks:" and a marker (or named benchmarks*.yaml with a
// top-level "benchmarks:"), in builds that read YAML.
//
// YAML reports are claimed only by builds that read YAML (yaml.go), so that
// a directory holding one is not refused by a build that cannot.
func (importer) Detect(path string, head []byte) bool {
	switch sniff(path, head) {
	case kindJSON:
		return true
	case kindYAML:
		return yamlSupported
	}
	return false
}

// Companions implements ingest.Importer: the YAML twin of a JSON report
// (benchmarks.yaml or .yml beside benchmarks.json), when it exists.
func (importer) Companions(path string) []string {
	if isYAML(path) {
		return nil
	}
	if t := yamlTwin(path); t != "" {
		return []string{t}
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
	if len(bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))) == 0 {
		return ingest.Errorf(path, "", "empty file (expected a guidellm benchmarks report)")
	}
	switch sniff(path, head) {
	case kindJSON:
		return importJSON(in, label, opt, sink)
	case kindYAML:
		return importYAML(in, label, opt, sink)
	}
	return &ingest.FormatError{File: path, Msg: "not a guidellm benchmarks report", Err: ingest.ErrNotThisFormat}
}

type inputKind int

const (
	kindUnknown inputKind = iota
	kindJSON
	kindYAML
)

// jsonMarkers are strings only guidellm reports carry.
var jsonMarkers = [][]byte{
	[]byte(`"generative_benchmark"`), []byte(`"guidellm_version"`), []byte(`"generative_text_response"`),
	[]byte(`"generative_request_stats"`), []byte(`"run_stats"`), []byte(`"scheduler_metrics"`),
}

var yamlMarkers = [][]byte{
	[]byte("type_: generative_benchmark"), []byte("guidellm_version:"), []byte("type_: generative_text_response"),
	[]byte("type_: generative_request_stats"),
}

func sniff(path string, head []byte) inputKind {
	head = bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	base := strings.ToLower(filepath.Base(path))
	named := strings.HasPrefix(base, "benchmarks")
	if isYAML(path) {
		if bytes.Contains(head, []byte("benchmarks:")) && containsAny(head, yamlMarkers) {
			return kindYAML
		}
		// named so and empty, or holding "benchmarks:" without a marker
		// (yaml.dump sorts the keys, so a report cut early has none yet):
		// claimed, so that Import can say what is wrong
		if named && (len(head) == 0 || bytes.HasPrefix(head, []byte("benchmarks:")) || bytes.Contains(head, []byte("\nbenchmarks:"))) {
			return kindYAML
		}
		return kindUnknown
	}
	if len(head) == 0 {
		if named && strings.HasSuffix(base, ".json") {
			return kindJSON
		}
		return kindUnknown
	}
	if head[0] != '{' {
		return kindUnknown
	}
	// v0.5+ opens with metadata.guidellm_version; its args may push
	// "benchmarks" past the head.
	if bytes.Contains(head, []byte(`"guidellm_version"`)) {
		return kindJSON
	}
	if !bytes.Contains(head, []byte(`"benchmarks"`)) {
		return kindUnknown
	}
	if containsAny(head, jsonMarkers) || (named && strings.HasSuffix(base, ".json")) {
		return kindJSON
	}
	return kindUnknown
}

func containsAny(b []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}

func isYAML(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// yamlTwin is the existing .yaml/.yml file with path's stem, or "".
func yamlTwin(path string) string {
	stem := strings.TrimSuffix(path, filepath.Ext(path))
	for _, ext := range []string{".yaml", ".yml"} {
		if ingest.Exists(stem + ext) {
			return stem + ext
		}
	}
	return ""
}

// defaultLabel is ingest.DefaultLabel, except that guidellm's default file
// name (benchmarks.json) gives the directory's name.
func defaultLabel(path string) string {
	if path == ingest.StdinPath {
		return ingest.DefaultLabel(path)
	}
	base := filepath.Base(path)
	if strings.TrimSuffix(base, filepath.Ext(base)) != "benchmarks" {
		return ingest.DefaultLabel(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if dir := filepath.Base(filepath.Dir(abs)); dir != "." && dir != "/" && dir != "" {
		return dir
	}
	return "benchmarks"
}
