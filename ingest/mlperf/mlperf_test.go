package mlperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/testkit"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// corpus is the real LoadGen runs under the module's testdata (each with a
// SOURCE.md).
const corpus = "../../testdata/mlperf"

func corpusCases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpus, "*", summaryFile))
	if err != nil || len(files) != 5 {
		t.Fatalf("corpus cases under %s: %d, %v", corpus, len(files), err)
	}
	var cases []string
	for _, f := range files {
		cases = append(cases, filepath.Base(filepath.Dir(f)))
	}
	return cases
}

func importFile(t *testing.T, path, label string) (formats.Run, []string) {
	t.Helper()
	var c formats.Collector
	var warnings []string
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: label, Warn: func(m string) { warnings = append(warnings, m) }}, &c); err != nil {
		t.Fatalf("Import(%s): %v", path, err)
	}
	if len(c.Runs) != 1 || len(c.Requests) != 0 || len(c.Events) != 0 {
		t.Fatalf("Import(%s): %d runs, %d requests, %d events", path, len(c.Runs), len(c.Requests), len(c.Events))
	}
	return c.Runs[0], warnings
}

func dump(t *testing.T, path, label string) []byte {
	t.Helper()
	return testkit.Dump(t, New(), path, ingest.Options{Label: label})
}

func TestGoldenCorpus(t *testing.T) {
	for _, name := range corpusCases(t) {
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join(corpus, name, summaryFile), name))
		})
	}
}

func TestGoldenFixtures(t *testing.T) {
	for _, f := range []string{
		"new-labels-invalid/" + summaryFile,
		"truncated/" + summaryFile,
		"detail-only/" + detailFile,
		"detail-cut/" + detailFile,
	} {
		name := filepath.Dir(f)
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join("testdata", f), name))
		})
	}
}

func reported(t *testing.T, run formats.Run, metric, stat string) formats.ReportedStat {
	t.Helper()
	for _, s := range run.Reported {
		if s.Metric == metric && s.Stat == stat {
			return s
		}
	}
	t.Fatalf("run %s: no reported %s/%s", run.RunID, metric, stat)
	return formats.ReportedStat{}
}

func num(t *testing.T, run formats.Run, metric, stat string) float64 {
	t.Helper()
	s := reported(t, run, metric, stat)
	if s.Value == nil {
		t.Fatalf("%s/%s: no value (text %q)", metric, stat, s.Text)
	}
	return *s.Value
}

func notes(run formats.Run) string { return strings.Join(run.Notes, "\n") }

// TestCorpus checks each corpus run's key numbers against its SOURCE.md
// (which quotes them from the run's own logs).
func TestCorpus(t *testing.T) {
	want := map[string]struct {
		version, model, scenario string
		qps                      float64 // target_qps; +Inf for Offline
		ttftP99, tpotP99         float64 // ns; 0 when not reported
		tokensPerS               float64
		sources                  int
	}{
		"amd-mi300x-llama2-70b-99-server":             {"5.1.0 @ 091d51f041", "llama2-70b", "Server", 83.5, 1914647645, 193380124, 24593.77, 3},
		"amd-mi300x-llama2-70b-99-interactive":        {"5.1.0 @ 091d51f041", "llama2-70b-interactive", "Server", 29.5, 435976100, 39507635, 0, 3},
		"amd-mi300x-llama2-70b-99-offline":            {"5.1.0 @ 091d51f041", "llama2-70b", "Offline", math.Inf(1), 0, 0, 27803.9, 3},
		"nvidia-gb200-llama3.1-405b-interactive-open": {"5.0.25 @ 5232291860", "", "Server", 15.75, 4215817960, 59020403, 9897.52, 2},
		"nvidia-dgxh100-llama2-70b-99.9-server-v4.1":  {"", "", "Server", 75, 461278089, 175354317, 21605.79, 1},
	}
	for _, name := range corpusCases(t) {
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectations for %s", name)
			}
			run, warnings := importFile(t, filepath.Join(corpus, name, summaryFile), name)
			if run.Tool != "mlperf" || run.Convention != "mlperf" || run.ToolVersion != w.version || run.Model != w.model ||
				run.LoadMode != "request_rate" || *run.RequestRateRPS != w.qps || run.Truncated || run.RequestCount != 0 ||
				len(run.SourceFiles) != w.sources || len(warnings) != 0 {
				t.Errorf("run %+v\nwarnings %q", run, warnings)
			}
			n := notes(run)
			if run.Notes[0] != "summary only: nothing to recompute (LoadGen logs keep no per-sample times; mlperf_log_trace.json is not read)" ||
				!strings.Contains(n, "scenario "+w.scenario+", mode PerformanceOnly") || !strings.Contains(n, "result VALID") {
				t.Errorf("notes:\n%s", n)
			}
			if reported(t, run, "validity", "value").Text != "VALID" {
				t.Error("validity")
			}
			if w.ttftP99 != 0 {
				if got := num(t, run, "first_token_latency_ns", "p99"); got != w.ttftP99 {
					t.Errorf("TTFT p99 %v, want %v", got, w.ttftP99)
				}
				if got := num(t, run, "time_per_output_token_ns", "p99"); got != w.tpotP99 {
					t.Errorf("TPOT p99 %v, want %v", got, w.tpotP99)
				}
				if !strings.Contains(n, "met by LoadGen's rule (≤), met by the submission checker's (<)") {
					t.Errorf("constraint check missing:\n%s", n)
				}
			} else {
				for _, s := range run.Reported {
					if s.Metric == "first_token_latency_ns" || s.Metric == "time_per_output_token_ns" {
						t.Errorf("Offline run reports %s/%s", s.Metric, s.Stat)
					}
				}
			}
			if w.tokensPerS != 0 {
				metric := "completed_tokens_per_second"
				if w.scenario == "Offline" {
					metric = "tokens_per_second"
				}
				if got := num(t, run, metric, "value"); got != w.tokensPerS {
					t.Errorf("%s %v, want %v", metric, got, w.tokensPerS)
				}
			}
			for _, s := range run.Reported {
				if strings.HasSuffix(s.Metric, "_ns") && s.Unit != "ns" {
					t.Errorf("%s/%s unit %q", s.Metric, s.Stat, s.Unit)
				}
			}
		})
	}
}

// TestServerDetail checks the AMD Server run, whose detail log sits beside
// its summary: the detail values, the summary's more precise rates, the
// unit-slip and over-latency notes, and config_json.
func TestServerDetail(t *testing.T) {
	run, _ := importFile(t, filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", summaryFile), "s")
	for _, tc := range []struct {
		metric, stat, file string
		want               float64
	}{
		{"completed_samples_per_sec", "value", detailFile, 81.6768},     // detail 81.6768 vs summary 81.68
		{"completed_tokens_per_second", "value", summaryFile, 24593.77}, // summary 24593.77 vs detail 24593.8
		{"latency_ns", "p99.9", detailFile, 159705402675},
		{"first_token_latency_ns", "mean", detailFile, 918456323},
		{"time_per_output_token_ns", "min", detailFile, 30262518},
		{"token_throughput", "value", detailFile, 6.90935e-09},
		{"query_count", "value", detailFile, 73728},
		{"num_errors", "value", detailFile, 0},
	} {
		s := reported(t, run, tc.metric, tc.stat)
		if s.Value == nil || *s.Value != tc.want || s.File != tc.file {
			t.Errorf("%s/%s = %+v, want %v from %s", tc.metric, tc.stat, s, tc.want, tc.file)
		}
	}
	n := notes(run)
	for _, want := range []string{
		"token_throughput (6.90935e-09) is LoadGen's Σ tokens / (mean latency in ns · samples): a unit slip",
		"overlatency_query_count = query_count",
		"SUT name PySUT",
		"model llama2-70b (from user.conf)",
		`the summary's "Time to Output Token" lines`,
		"the log says performance constraints satisfied: true",
	} {
		if !strings.Contains(n, want) {
			t.Errorf("notes lack %q:\n%s", want, n)
		}
	}
	var cfg struct {
		Params   map[string]any `json:"test_parameters"`
		Settings map[string]any `json:"detail_settings"`
	}
	if err := json.Unmarshal([]byte(run.ConfigJSON), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Params["target_qps"] != 83.5 || cfg.Params["schedule_rng_seed"] != "18209322760996052031" ||
		cfg.Settings["effective_target_qps"] != 83.5 || cfg.Settings["requested_schedule_rng_seed"] != "18209322760996052031" {
		t.Errorf("config: %v / %v", cfg.Params, cfg.Settings["requested_schedule_rng_seed"])
	}
	if _, ok := cfg.Settings["loaded_qsl_set"]; ok {
		t.Error("loaded_qsl_set kept in config_json")
	}
}

// TestNewLabelsInvalid checks a summary in LoadGen's newer wording ("Time
// per Output Token") that failed its TPOT constraint and carries a label
// tokentrace does not know.
func TestNewLabelsInvalid(t *testing.T) {
	run, warnings := importFile(t, "testdata/new-labels-invalid/"+summaryFile, "n")
	if num(t, run, "time_per_output_token_ns", "min") != 21920 || num(t, run, "time_per_output_token_ns", "p99") != 80000001 ||
		reported(t, run, "validity", "value").Text != "INVALID" || reported(t, run, "perf_constraints_met", "value").Text != "NO" {
		t.Errorf("reported %+v", run.Reported)
	}
	if got := reported(t, run, "invalid_reason", "value").Text; got != "* TPOT constrain not met: Reduce target QPS to improve latency." {
		t.Errorf("invalid_reason %q", got)
	}
	if num(t, run, "median_queue_depth_samples", "value") != 12 {
		t.Error("unknown label not imported under its own name")
	}
	n := notes(run)
	for _, want := range []string{
		"P99 TPOT 80000001 ns vs tpot_latency 80000000 ns: not met by LoadGen's rule (≤), not met by the submission checker's (<); the log says performance constraints satisfied: NO",
		"result INVALID",
	} {
		if !strings.Contains(n, want) {
			t.Errorf("notes lack %q:\n%s", want, n)
		}
	}
	if strings.Contains(n, "Time to Output Token") {
		t.Error("old-label note on a file with the new labels")
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `summary labels not known to tokentrace, imported under names made from them: "Median queue depth (samples)" (line 25, as median_queue_depth_samples)`) {
		t.Errorf("warnings %q", warnings)
	}
}

func TestTruncated(t *testing.T) {
	run, warnings := importFile(t, "testdata/truncated/"+summaryFile, "cut")
	want := "mlperf_log_summary.txt ends at line 39 without its newline (file cut): that line was dropped"
	if !run.Truncated || len(warnings) != 1 || !strings.HasSuffix(warnings[0], want) || !strings.Contains(notes(run), want) {
		t.Errorf("truncated %v, warnings %q", run.Truncated, warnings)
	}
	// Everything before the cut line is there; the cut line is not.
	if num(t, run, "first_token_latency_ns", "p90") != 2508279175 {
		t.Error("p90 before the cut")
	}
	for _, s := range run.Reported {
		if s.Metric == "first_token_latency_ns" && s.Stat == "p95" {
			t.Errorf("the cut line was imported: %+v", s)
		}
	}
	// Cut at a line end, before the closing lines.
	b, _ := os.ReadFile(filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", summaryFile))
	p := filepath.Join(t.TempDir(), summaryFile)
	os.WriteFile(p, b[:bytes.Index(b, []byte("Test Parameters Used"))], 0o644)
	run, warnings = importFile(t, p, "cut2")
	if !run.Truncated || len(warnings) != 1 || !strings.Contains(warnings[0], `before its closing "errors encountered" line`) {
		t.Errorf("cut at a line end: truncated %v, warnings %q", run.Truncated, warnings)
	}
	// A detail log cut in its last line.
	run, warnings = importFile(t, "testdata/detail-cut/"+detailFile, "dcut")
	if !run.Truncated || len(warnings) != 1 || !strings.Contains(warnings[0], "mlperf_log_detail.txt ends at line 118 without its newline (file cut)") {
		t.Errorf("detail cut: truncated %v, warnings %q", run.Truncated, warnings)
	}
}

func TestMalformed(t *testing.T) {
	for _, tc := range []struct{ path, where, msg string }{
		{"testdata/malformed-summary/" + summaryFile, "line 23", `Min latency (ns): "fast" is not a number`},
		{"testdata/malformed-detail/" + detailFile, "line 89", `result_min_latency_ns: "fast" is not a number`},
	} {
		err := ingest.ImportFile(New(), tc.path, ingest.Options{}, &formats.Collector{})
		var fe *ingest.FormatError
		if !errors.As(err, &fe) || fe.Where != tc.where || fe.File != tc.path || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want %q at %s", tc.path, err, tc.msg, tc.where)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, detailFile)
	os.WriteFile(p, []byte(":::MLLOG {\"key\": \"loadgen_version\", \"value\": \"5.1\"}\n:::MLLOG {\"key\": \"result_validity\", \"value\": \n"), 0o644)
	err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{})
	var fe *ingest.FormatError
	if !errors.As(err, &fe) || fe.Where != "line 2" || !strings.Contains(err.Error(), "invalid :::MLLOG JSON") {
		t.Errorf("broken JSON: %v", err)
	}
	q := filepath.Join(dir, "other", summaryFile)
	os.MkdirAll(filepath.Dir(q), 0o755)
	os.WriteFile(q, []byte("SUT name : x\n"), 0o644)
	if err := ingest.ImportFile(New(), q, ingest.Options{}, &formats.Collector{}); err == nil || !strings.Contains(err.Error(), `line 1: expected the "MLPerf Results Summary" banner`) {
		t.Errorf("no banner: %v", err)
	}
	e := filepath.Join(dir, "empty", summaryFile)
	os.MkdirAll(filepath.Dir(e), 0o755)
	os.WriteFile(e, nil, 0o644)
	if err := ingest.ImportFile(New(), e, ingest.Options{}, &formats.Collector{}); err == nil || err.Error() != e+": empty file (expected an MLPerf LoadGen log)" {
		t.Errorf("empty: %v", err)
	}
}

// TestDetailOnly checks a detail log with no summary beside it (the GB200
// run's, without its three long lines): every result from it alone.
func TestDetailOnly(t *testing.T) {
	run, warnings := importFile(t, "testdata/detail-only/"+detailFile, "d")
	if run.ToolVersion != "5.0.25 @ 5232291860" || *run.RequestRateRPS != 15.75 || len(warnings) != 0 || len(run.SourceFiles) != 1 ||
		num(t, run, "time_per_output_token_ns", "min") != 21920 || num(t, run, "completed_tokens_per_second", "value") != 9897.52 ||
		reported(t, run, "early_stopping_tpot_result", "value").Text != " * Run successful." {
		t.Errorf("run %+v, warnings %q", run, warnings)
	}
}

func TestDetect(t *testing.T) {
	im := New()
	head := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b[:min(len(b), ingest.HeadSize)]
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", summaryFile), true},
		{filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", detailFile), false}, // the summary's companion
		{filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", "user.conf"), false},
		{filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", "mlperf.conf"), false},
		{filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", "SOURCE.md"), false},
		{"testdata/detail-only/" + detailFile, true},
		{"../../testdata/guidellm/v03-sweep-sync-stripped/benchmarks_stripped.json", false},
		{"../../testdata/llmperf/leaderboard-groq-70b/summary.json", false},
	} {
		if got := im.Detect(tc.path, head(tc.path)); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	s, _ := os.ReadFile(filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", summaryFile))
	if !im.Detect("renamed.txt", s) || !im.Detect("renamed.log", []byte(":::MLLOG {\"key\": \"x\"}")) {
		t.Error("Detect by content")
	}
}

func TestCompanionsAndLabel(t *testing.T) {
	got := New().Companions(filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", summaryFile))
	if len(got) != 1 || filepath.Base(got[0]) != detailFile {
		t.Errorf("Companions = %q", got)
	}
	if got := New().Companions(filepath.Join(corpus, "nvidia-dgxh100-llama2-70b-99.9-server-v4.1", summaryFile)); got != nil {
		t.Errorf("Companions without a detail log = %q", got)
	}
	if got := defaultLabel("results/8xMI300X/llama2-70b-99/Server/performance/run_1/" + summaryFile); got != "llama2-70b-99-Server-run_1" {
		t.Errorf("submission label %q", got)
	}
	if got := defaultLabel(filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", summaryFile)); got != "amd-mi300x-llama2-70b-99-server" {
		t.Errorf("label %q", got)
	}
	// The model from a submission path when there is no user.conf.
	dir := filepath.Join(t.TempDir(), "closed", "X", "results", "sys", "mixtral-8x7b", "Server", "performance", "run_1")
	os.MkdirAll(dir, 0o755)
	b, _ := os.ReadFile(filepath.Join(corpus, "nvidia-dgxh100-llama2-70b-99.9-server-v4.1", summaryFile))
	os.WriteFile(filepath.Join(dir, summaryFile), b, 0o644)
	run, _ := importFile(t, filepath.Join(dir, summaryFile), "")
	if run.Model != "mixtral-8x7b" || run.RunID != "mixtral-8x7b-Server-run_1" || !strings.Contains(notes(run), "(from the submission path)") {
		t.Errorf("model %q, run %q", run.Model, run.RunID)
	}
}

func TestSigDigits(t *testing.T) {
	for s, want := range map[string]int{"81.68": 4, "81.6768": 6, "24593.8": 6, "24593.77": 7, "6.90935e-09": 6, "73728": 5, "600000": 1, "0.00120": 3, "0": 0} {
		if got := sigDigits(s); got != want {
			t.Errorf("sigDigits(%q) = %d, want %d", s, got, want)
		}
	}
}
