package inferenceperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/testkit"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// corpus is the real inference-perf runs under the module's testdata (each
// with a SOURCE.md).
const corpus = "../../testdata/inference-perf"

func corpusCases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpus, "*", "summary_lifecycle_metrics.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus cases under %s: %v", corpus, err)
	}
	var cases []string
	for _, f := range files {
		cases = append(cases, filepath.Base(filepath.Dir(f)))
	}
	return cases
}

func importFile(t *testing.T, path string) (*formats.Collector, []string) {
	t.Helper()
	var c formats.Collector
	var warnings []string
	err := ingest.ImportFile(New(), path, ingest.Options{Warn: func(m string) { warnings = append(warnings, m) }}, &c)
	if err != nil {
		t.Fatalf("Import(%s): %v", path, err)
	}
	return &c, warnings
}

func importErr(path string) error {
	return ingest.ImportFile(New(), path, ingest.Options{}, &formats.Collector{})
}

func dump(t *testing.T, path string) []byte {
	t.Helper()
	return testkit.Dump(t, New(), path, ingest.Options{})
}

// TestGoldenCorpus dumps each corpus run directory (its primary file,
// summary_lifecycle_metrics.json, with every companion: 7 stage reports, 8
// Prometheus reports, config.yaml).
func TestGoldenCorpus(t *testing.T) {
	for _, name := range corpusCases(t) {
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join(corpus, name, "summary_lifecycle_metrics.json")))
		})
	}
}

func TestGoldenFixtures(t *testing.T) {
	for _, f := range []string{
		"head-2stages/per_request_lifecycle_metrics.json",
		"edge-v06/per_request_lifecycle_metrics.json",
		"v02-lines/per_request_lifecycle_metrics.json",
		"truncated/per_request_lifecycle_metrics.json",
	} {
		name := filepath.Dir(f)
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join("testdata", f)))
		})
	}
}

// reported returns the Value of metric/stat in run.Reported.
func reported(t *testing.T, run formats.Run, metric, stat string) float64 {
	t.Helper()
	for _, s := range run.Reported {
		if s.Metric == metric && s.Stat == stat && s.Value != nil {
			return *s.Value
		}
	}
	t.Fatalf("run %s: no reported %s/%s", run.RunID, metric, stat)
	return 0
}

func hasNote(run formats.Run, sub string) bool {
	for _, n := range run.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// TestCorpus checks the three KubeCon-2025 runs (each SOURCE.md:
// kubernetes-sigs/inference-perf@7ff8150698cd demos/kubecon-na-2025, made
// by v0.2–v0.3 code that timed every SSE line, which inference-perf's PR
// 452 fixed): eight summary-only runs each, the stages' load, the
// per-SSE-line convention, the Prometheus numbers kept apart, and values
// read back from the files.
func TestCorpus(t *testing.T) {
	want := map[string]struct {
		rates      []float64 // load_summary.requested_rate of stages 0–6
		count      float64   // summary successes count
		ttftP99    float64   // stage_0 successes.latency.time_to_first_token p99
		promCount0 float64   // stage_0 prometheus successes count
	}{
		"kubecon25-vllm-baseline":     {[]float64{1, 31.4, 61.79, 92.19, 122.59, 152.98, 183.38}, 38717, 0.039696927970508104, 937},
		"kubecon25-vllm-eagle":        {[]float64{1, 18.16, 35.33, 52.49, 69.65, 86.81, 103.98}, 22042, 0, 0},
		"kubecon25-vllm-quantization": {[]float64{1, 43.31, 85.62, 127.93, 170.24, 212.55, 254.86}, 53728, 0, 0},
	}
	for _, name := range corpusCases(t) {
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectations for corpus case %s", name)
			}
			c, warnings := importFile(t, filepath.Join(corpus, name, "summary_lifecycle_metrics.json"))
			if len(c.Runs) != 8 || len(c.Requests) != 0 || len(c.Events) != 0 {
				t.Fatalf("runs %d, requests %d, events %d", len(c.Runs), len(c.Requests), len(c.Events))
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "summary only: nothing to recompute (8 runs without requests)") {
				t.Errorf("warnings %q", warnings)
			}
			for i, run := range c.Runs {
				id := name
				if i < 7 {
					id = name + "/stage_" + string(rune('0'+i))
				}
				if run.RunID != id || run.Tool != Name || run.ToolVersion != "" || run.Convention != ConventionLine ||
					run.Model != "meta-llama/Meta-Llama-3-8B-Instruct" || run.Endpoint != "v1/completions" ||
					run.Streaming == nil || !*run.Streaming || run.Tokenizer != "meta-llama/Meta-Llama-3-8B-Instruct" ||
					run.Truncated || run.RequestCount != 0 || run.ClockDomain != "" || run.Notes[0] != noteSummaryNo {
					t.Errorf("run %d: %+v", i, run)
				}
				if len(run.SourceFiles) != 3 || run.SourceFiles[0].Role != "summary" || run.SourceFiles[1].Role != "server_summary" || run.SourceFiles[2].Role != "config" {
					t.Errorf("run %s: source files %+v", run.RunID, run.SourceFiles)
				}
				if i < 7 {
					if run.LoadMode != "request_rate" || run.RequestRateRPS == nil || *run.RequestRateRPS != w.rates[i] ||
						reported(t, run, "load_summary.requested_rate", "value") != w.rates[i] {
						t.Errorf("run %s: load %s %v", run.RunID, run.LoadMode, run.RequestRateRPS)
					}
				} else if run.LoadMode != "" || reported(t, run, "successes", "count") != w.count || !hasNote(run, "summary over all 7 stages") {
					t.Errorf("summary run %+v", run)
				}
				if !hasNote(run, "per-SSE-line signature") || !hasNote(run, "reported TPOT and ITL are about half the decode time per token") {
					t.Errorf("run %s lacks the per-line evidence: %q", run.RunID, run.Notes)
				}
				if !hasNote(run, "no per_request_lifecycle_metrics.json is beside it") {
					t.Errorf("run %s lacks the per-request note", run.RunID)
				}
				// Every Prometheus number is prefixed; none of the client's is.
				prom := 0
				for _, s := range run.Reported {
					if strings.HasPrefix(s.Metric, PrometheusPrefix) {
						prom++
						if s.File != filepath.Base(run.SourceFiles[1].Path) {
							t.Errorf("%s %s from %s", run.RunID, s.Metric, s.File)
						}
					} else if s.File != filepath.Base(run.SourceFiles[0].Path) {
						t.Errorf("%s %s from %s", run.RunID, s.Metric, s.File)
					}
				}
				if prom != 26 {
					t.Errorf("run %s: %d prometheus statistics, want 26", run.RunID, prom)
				}
			}
			s0 := c.Runs[0]
			if w.ttftP99 != 0 && reported(t, s0, "successes.latency.time_to_first_token", "p99") != w.ttftP99 {
				t.Errorf("ttft p99 %v", reported(t, s0, "successes.latency.time_to_first_token", "p99"))
			}
			if w.promCount0 != 0 && reported(t, s0, "prometheus.successes", "count") != w.promCount0 {
				t.Errorf("prometheus count %v", reported(t, s0, "prometheus.successes", "count"))
			}
			if !strings.Contains(c.Runs[0].ConfigJSON, `"token":"REDACTED"`) || strings.Contains(c.Runs[0].ConfigJSON, "your-hf-token") {
				t.Errorf("config %s", c.Runs[0].ConfigJSON)
			}
		})
	}
}

// TestCorpusBaselineStage0 reads stage 0 of the baseline run field by
// field against the file (stage_0_lifecycle_metrics.json,
// stage_0_prometheus_metrics.json).
func TestCorpusBaselineStage0(t *testing.T) {
	c, _ := importFile(t, filepath.Join(corpus, "kubecon25-vllm-baseline", "summary_lifecycle_metrics.json"))
	run := c.Runs[0]
	for _, x := range []struct {
		metric, stat string
		want         float64
	}{
		{"load_summary", "count", 60},
		{"load_summary.send_duration", "value", 58.51001774193719},
		{"load_summary.achieved_rate", "value", 1.0254654214024423},
		{"load_summary.schedule_delay", "p99.9", 0.0016855146751040626},
		{"successes", "count", 60},
		{"successes.latency.request_latency", "mean", 0.48048226445680486},
		{"successes.latency.time_per_output_token", "median", 0.003468046240533825},
		{"successes.latency.inter_token_latency", "median", 3.718049265444279e-05},
		{"successes.latency.normalized_time_per_output_token", "max", 0.013373041945871793},
		{"successes.throughput.output_tokens_per_sec", "value", 64.23350089997027},
		{"successes.output_len", "p0.1", 37.062},
		{"failures", "count", 0},
		{"prometheus.successes", "rate", 11.865978},
		{"prometheus.successes.time_to_first_token", "p99", 4.955306},
		{"prometheus.successes.prompt_len", "mean", 4995},
	} {
		if got := reported(t, run, x.metric, x.stat); got != x.want {
			t.Errorf("%s/%s = %v, want %v", x.metric, x.stat, got, x.want)
		}
	}
	units := map[string]string{}
	for _, s := range run.Reported {
		units[s.Metric] = s.Unit
	}
	for m, u := range map[string]string{"successes.latency.time_to_first_token": "s", "successes.throughput.requests_per_sec": "requests/s",
		"successes.throughput.input_tokens_per_sec": "tokens/s", "successes.prompt_len": "tokens", "load_summary.requested_rate": "requests/s",
		"prometheus.successes.queue_len": "requests", "prometheus.successes.kv_cache_usage_percentage": "", "prometheus.successes.prefix_cache_hit_percent": "%"} {
		if units[m] != u {
			t.Errorf("unit of %s = %q, want %q", m, units[m], u)
		}
	}
	// failures.request_latency and failures.prompt_len are null (no failure).
	for _, s := range run.Reported {
		if strings.HasPrefix(s.Metric, "failures.") {
			t.Errorf("null distribution imported: %+v", s)
		}
	}
	if !hasNote(run, "the server counted 937 requests over the query window (prometheus.successes count), the client 60 successes") ||
		!hasNote(run, "Prometheus values are 0") {
		t.Errorf("notes %q", run.Notes)
	}
}

// TestHeadTwoStages checks the v0.6+ fixture: requests routed to their
// stages, events and per-chunk token counts, statuses and counts.
func TestHeadTwoStages(t *testing.T) {
	c, warnings := importFile(t, "testdata/head-2stages/per_request_lifecycle_metrics.json")
	if len(c.Runs) != 3 || len(c.Requests) != 7 || len(c.Events) != 16 {
		t.Fatalf("runs %d, requests %d, events %d", len(c.Runs), len(c.Requests), len(c.Events))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "summary only: nothing to recompute (1 run without requests)") {
		t.Errorf("warnings %q", warnings)
	}
	s0, s1, sum := c.Runs[0], c.Runs[1], c.Runs[2]
	if s0.RunID != "head-2stages/stage_0" || s0.RequestCount != 3 || *s0.RequestRateRPS != 2 || s0.ClockDomain != formats.ClockMonotonic ||
		s0.Convention != ConventionToken || len(s0.SourceFiles) != 4 || s0.SourceFiles[0].Role != "raw" || s0.Tokenizer != "whitespace" {
		t.Errorf("stage 0: %+v", s0)
	}
	if s1.RunID != "head-2stages/stage_1" || s1.RequestCount != 4 || *s1.RequestRateRPS != 4 || len(s1.SourceFiles) != 3 {
		t.Errorf("stage 1: %+v", s1)
	}
	if sum.RunID != "head-2stages" || sum.RequestCount != 0 || sum.Notes[0] != noteSummaryNo || !hasNote(sum, "requests routed to the stage runs by start time") {
		t.Errorf("summary: %+v", sum)
	}
	for _, run := range c.Runs {
		if strings.Contains(run.ConfigJSON, "sk-fixture") || strings.Contains(run.ConfigJSON, "hf_fixture") {
			t.Errorf("secret in config: %s", run.ConfigJSON)
		}
		if !hasNote(run, "config.yaml: redacted config.server.api_key, config.tokenizer.token") {
			t.Errorf("run %s notes %q", run.RunID, run.Notes)
		}
	}
	if got := reported(t, s1, "failures.by_label", "429 - Rate Limit"); got != 1 {
		t.Errorf("by_label %v", got)
	}
	if !hasNote(s1, "requests: 4 (3 ok, 1 error): HTTP Error 429 ×1") {
		t.Errorf("stage 1 notes %q", s1.Notes)
	}
	rq := c.Requests
	// r0: start 1000.000, chunks at +100 ms (1 token), +120 ms (2), +150 ms (1), end +160 ms.
	r0 := rq[0]
	if r0.RunID != s0.RunID || r0.RequestKey != 0 || *r0.StartNs != 1000_000_000_000 || *r0.FirstTokenOffsetNs != 100_000_000 ||
		*r0.SecondTokenOffsetNs != 120_000_000 || *r0.LastTokenOffsetNs != 150_000_000 || *r0.StreamEndOffsetNs != 160_000_000 ||
		*r0.OutputTokens != 4 || r0.OutputTokensSource != formats.SourceServerUsage || *r0.ReportedOutputTokens != 4 ||
		*r0.InputTokens != 10 || r0.ResponseID != "cmpl-r0" || *r0.MaxTokens != 8 || r0.Status != formats.StatusOK || r0.TokenMessageCount != 3 {
		t.Errorf("r0: %+v", r0)
	}
	ev := c.Events[:3]
	if *ev[0].Tokens != 1 || *ev[1].Tokens != 2 || *ev[2].Tokens != 1 || *ev[1].Text != " quick brown" || !ev[1].HasChoices || ev[1].Kind != formats.KindContent {
		t.Errorf("r0 events %+v", ev)
	}
	// r4 (stage 1, key 1): HTTP 429, no response.
	r4 := rq[4]
	if r4.RunID != s1.RunID || r4.RequestKey != 1 || r4.Status != formats.StatusError || *r4.ErrorCode != 429 || r4.ErrorType != "HTTP Error 429" ||
		r4.OutputTokens != nil || *r4.InputTokens != 11 || r4.InputTokensSource != formats.SourceToolReported || r4.MessageCount != 0 {
		t.Errorf("r4: %+v", r4)
	}
	// r5: the server's 5 tokens where the tool's word count found 4.
	if r5 := rq[5]; *r5.OutputTokens != 5 || *r5.ReportedOutputTokens != 4 {
		t.Errorf("r5: %+v", r5)
	}
}

// TestNoText drops generated text.
func TestNoText(t *testing.T) {
	var c formats.Collector
	if err := ingest.ImportFile(New(), "testdata/head-2stages/per_request_lifecycle_metrics.json", ingest.Options{NoText: true}, &c); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Events {
		if e.Text != nil || e.ReasoningText != nil {
			t.Fatalf("text kept: %+v", e)
		}
	}
}

// TestV02Lines checks the ≤v0.2 layout: one content event per recorded
// line time, no text or count, and the per-line convention.
func TestV02Lines(t *testing.T) {
	c, _ := importFile(t, "testdata/v02-lines/per_request_lifecycle_metrics.json")
	if len(c.Runs) != 1 || len(c.Requests) != 3 || len(c.Events) != 8+10+6 {
		t.Fatalf("runs %d, requests %d, events %d", len(c.Runs), len(c.Requests), len(c.Events))
	}
	run := c.Runs[0]
	if run.RunID != "v02-lines/stage_0" || run.Convention != ConventionLine || !hasNote(run, "no info.extra_info") ||
		!hasNote(run, "imported as content events without text") || run.Model != "meta-llama/Meta-Llama-3-8B-Instruct" {
		t.Errorf("run %+v", run)
	}
	r := c.Requests[0]
	// data lines at +50, +70, +95 ms, [DONE] at +100 ms, each with its blank line 4 µs later
	if *r.FirstTokenOffsetNs != 50_000_000 || *r.SecondTokenOffsetNs != 50_004_000 || *r.LastTokenOffsetNs != 100_004_000 ||
		*r.StreamEndOffsetNs != 101_000_000 || r.TokenMessageCount != 8 || *r.OutputTokens != 3 || r.OutputTokensSource != formats.SourceToolReported {
		t.Errorf("request 0: %+v", r)
	}
	for _, e := range c.Events {
		// the blank lines' and [DONE]'s times carry tokens 0 (the data
		// check inference_perf_line_times); the data lines' counts are
		// unknown
		if e.Kind != formats.KindContent || e.Tokens != nil && *e.Tokens != 0 || e.Text != nil {
			t.Fatalf("event %+v", e)
		}
	}
}

// TestEdgeV06 checks the traps of the edge fixture as imported.
func TestEdgeV06(t *testing.T) {
	c, warnings := importFile(t, "testdata/edge-v06/per_request_lifecycle_metrics.json")
	rq := c.Requests
	if len(rq) != 5 || len(c.Runs) != 1 {
		t.Fatalf("%d requests, %d runs", len(rq), len(c.Runs))
	}
	// e1: first chunk " two words" carries 2 tokens.
	if ev := c.Events[3]; ev.RequestKey != 1 || *ev.Tokens != 2 {
		t.Errorf("e1 first event %+v", ev)
	}
	// e2: one chunk, one token.
	if r := rq[2]; r.Status != formats.StatusOK || r.TokenMessageCount != 1 || r.SecondTokenOffsetNs != nil {
		t.Errorf("e2 %+v", r)
	}
	// e3: no recorded chunk, server said 0 tokens: empty (inference-perf: a success).
	if r := rq[3]; r.Status != formats.StatusEmpty || r.MessageCount != 0 || *r.OutputTokens != 0 || r.OutputTokensSource != formats.SourceServerUsage {
		t.Errorf("e3 %+v", r)
	}
	// e4: no server usage: the tool's counts.
	if r := rq[4]; *r.OutputTokens != 3 || r.OutputTokensSource != formats.SourceToolReported || r.InputTokensSource != formats.SourceToolReported {
		t.Errorf("e4 %+v", r)
	}
	run := c.Runs[0]
	if !hasNote(run, "unknown keys ignored: info.debug ×1, trace_id ×1") || !hasNote(run, "requests: 5 (4 ok, 1 empty, 0 error)") {
		t.Errorf("notes %q", run.Notes)
	}
	if len(warnings) != 1 || warnings[0] != "testdata/edge-v06/per_request_lifecycle_metrics.json: unknown keys ignored: info.debug ×1, trace_id ×1" {
		t.Errorf("warnings %q", warnings)
	}
}

// TestTruncated: a per-request file cut inside record 3 and a stage report
// cut inside a number.
func TestTruncated(t *testing.T) {
	c, warnings := importFile(t, "testdata/truncated/per_request_lifecycle_metrics.json")
	if len(c.Requests) != 2 || len(c.Runs) != 2 {
		t.Fatalf("requests %d, runs %d", len(c.Requests), len(c.Runs))
	}
	stage, pooled := c.Runs[0], c.Runs[1]
	wantCut := "stage_0_lifecycle_metrics.json is cut after 2448 bytes, inside successes.latency.time_to_first_token.mean: the 62 statistics before the cut are imported; the number at the cut (successes.latency.time_to_first_token.mean 0.0766) is dropped: its digits may be incomplete"
	if !stage.Truncated || !hasNote(stage, wantCut) || stage.RequestCount != 0 {
		t.Errorf("stage run %+v", stage)
	}
	if _, ok := stageValue(stage, "successes.latency.time_to_first_token", "mean"); ok {
		t.Error("the cut number was imported")
	}
	if reported(t, stage, "successes.latency.request_latency", "p99.9") != 0.15997999999996818 {
		t.Error("last complete distribution lost")
	}
	if !pooled.Truncated || pooled.RunID != "truncated" || pooled.RequestCount != 2 ||
		!hasNote(pooled, "record 3 is incomplete (file cut); every complete record was imported") ||
		!hasNote(pooled, "requests not routed to stages (the per-request file is cut short)") {
		t.Errorf("pooled run %+v", pooled)
	}
	// Warnings name the files with their directories (the notes, within
	// their run, by base name).
	want := []string{
		"testdata/truncated/per_request_lifecycle_metrics.json: record 3 is incomplete (file cut)",
		"testdata/truncated/stage_0_lifecycle_metrics.json: " + strings.TrimPrefix(wantCut, "stage_0_lifecycle_metrics.json is "),
		"testdata/truncated/per_request_lifecycle_metrics.json: requests not routed to stages (the per-request file is cut short): they are all in run truncated",
		"testdata/truncated/per_request_lifecycle_metrics.json: summary only: nothing to recompute (1 run without requests)",
	}
	if !reflect.DeepEqual(sortedCopy(warnings), sortedCopy(want)) {
		t.Errorf("warnings\n got %q\nwant %q", warnings, want)
	}
	// Cut right after a complete record: no closing bracket.
	b, _ := os.ReadFile("testdata/head-2stages/per_request_lifecycle_metrics.json")
	i := bytes.Index(b, []byte("\n  },")) + len("\n  },")
	dir := t.TempDir()
	p := filepath.Join(dir, "per_request_lifecycle_metrics.json")
	os.WriteFile(p, b[:i], 0o644)
	c, warnings = importFile(t, p)
	if len(c.Requests) != 1 || !c.Runs[0].Truncated || warnings[0] != p+": the array ends after record 1 without its closing ']' (file cut)" {
		t.Errorf("requests %d, warnings %q", len(c.Requests), warnings)
	}
}

func stageValue(run formats.Run, metric, stat string) (float64, bool) {
	for _, s := range run.Reported {
		if s.Metric == metric && s.Stat == stat && s.Value != nil {
			return *s.Value, true
		}
	}
	return 0, false
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestErrors checks positioned errors for structural damage and wrong
// types.
func TestErrors(t *testing.T) {
	// A missing comma in a stage report: a syntax error at its byte.
	err := importErr("testdata/malformed/stage_0_lifecycle_metrics.json")
	var fe *ingest.FormatError
	if !errors.As(err, &fe) || fe.File != "testdata/malformed/stage_0_lifecycle_metrics.json" || fe.Where != "byte 639" {
		t.Fatalf("error %v", err)
	}
	if want := "testdata/malformed/stage_0_lifecycle_metrics.json: byte 639: invalid JSON: invalid character '\"' after object key:value pair"; err.Error() != want {
		t.Errorf("error\n got %q\nwant %q", err, want)
	}
	write := func(name, content string) string {
		dir := t.TempDir()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, content, want string
	}{
		{"stage_0_lifecycle_metrics.json", `{"load_summary": {"count": 2}, "successes": {"count": 2, "latency": {"time_to_first_token": {"mean": "fast"}}}}`,
			`: successes.latency.time_to_first_token.mean: not a number: "fast"`},
		{"summary_lifecycle_metrics.json", `{"load_summary": {"count": true}}`, ": load_summary.count: not a number: true"},
		{"summary_lifecycle_metrics.json", `[1, 2]`, ": byte 0: not a JSON object (starts with [)"},
		{"summary_lifecycle_metrics.json", "  \n", ": empty file (expected a JSON object)"},
		{"summary_lifecycle_metrics.json", `{"load_summary": {}} {}`, ": byte 21: data after the JSON object"},
		{"summary_prometheus_metrics.json", `{"successes": {"time_to_first_token": {"p99": "x"}}}`, `: successes.time_to_first_token.p99: not a number: "x"`},
		{"per_request_lifecycle_metrics.json", `[{"start_time": 1.0, "end_time": 2.0}, {"start_time": "a", "end_time": 2.0}]`,
			`: record 2: start_time: not a number: "a"`},
		{"per_request_lifecycle_metrics.json", `[{"end_time": 2.0, "info": null}]`, ": record 1: start_time: missing (a number is required)"},
		{"per_request_lifecycle_metrics.json", `[{"start_time": 1, "end_time": 2, "info": {"input_tokens": 3, "output_tokens": 2, "output_token_times": [1.5, "x"]}}]`,
			": record 1: info.output_token_times: not a list of numbers"},
		{"per_request_lifecycle_metrics.json", `[{"start_time": 1, "end_time": 2, "info": {"request_metrics": {"text": {"input_tokens": "seven"}}}}]`,
			`: record 1: info.request_metrics.text.input_tokens: not a number: "seven"`},
		{"per_request_lifecycle_metrics.json", `[{"start_time": 1, "end_time": 2, "info": {"request_metrics": {"text": {"input_tokens": 7}}, "response_metrics": {"output_tokens": 1, "response_chunks": ["{}", "{}"], "chunk_times": [1.5]}}}]`,
			": record 1: info.response_metrics: 2 response_chunks for 1 chunk_times (inference-perf writes them 1:1)"},
		{"per_request_lifecycle_metrics.json", `[{"start_time": 1, "end_time": 2, "error": "boom"}]`, ": record 1: error: not an object"},
		{"per_request_lifecycle_metrics.json", `[{"start_time": 1, "end_time": 2},, {}]`, ": record 2: invalid JSON: invalid character ',' looking for beginning of value"},
		{"per_request_lifecycle_metrics.json", `{"start_time": 1}`, ": byte 0: not a JSON array: starts with {"},
		{"per_request_lifecycle_metrics.json", ``, ": empty file (expected a JSON array)"},
		{"per_request_lifecycle_metrics.json", `[null]`, ": record 1: null instead of an object"},
	} {
		p := write(tc.name, tc.content)
		err := importErr(p)
		if err == nil || err.Error() != p+tc.want {
			t.Errorf("%s %q:\n got %v\nwant %s", tc.name, tc.content, err, p+tc.want)
		}
		if err != nil && !errors.As(err, &fe) {
			t.Errorf("%s: not a FormatError: %T", tc.name, err)
		}
	}
	// A damaged companion fails the import, naming the companion.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "summary_lifecycle_metrics.json"), []byte(`{"load_summary": {"count": 1}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "stage_0_lifecycle_metrics.json"), []byte(`{"load_summary": {"count": 1}, "successes": {"count": "one"}}`), 0o644)
	if err := importErr(filepath.Join(dir, "summary_lifecycle_metrics.json")); err == nil || !strings.Contains(err.Error(), "stage_0_lifecycle_metrics.json: successes.count: not a number") {
		t.Errorf("companion error %v", err)
	}
	// An unparseable config is a note, not an error.
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("a: &x 1\nb: *x\n"), 0o644)
	os.Remove(filepath.Join(dir, "stage_0_lifecycle_metrics.json"))
	c, _ := importFile(t, filepath.Join(dir, "summary_lifecycle_metrics.json"))
	if !hasNote(c.Runs[0], "config.yaml not parsed (line 1: anchors, aliases and tags are not supported)") || c.Runs[0].ConfigJSON != "" {
		t.Errorf("config note %q", c.Runs[0].Notes)
	}
}

// TestUnknownAndNonFinite: keys inference-perf does not write import with
// a note naming them; Python's bare NaN and Infinity become text.
func TestUnknownAndNonFinite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary_lifecycle_metrics.json")
	os.WriteFile(p, []byte(`{"load_summary": {"count": 2, "burstiness": 1.5}, "successes": {"count": 2, "latency": {"time_to_first_token": {"mean": NaN, "min": 0.1, "max": Infinity}}, "throughput": {"requests_per_sec": 2.0}, "note": "x"}, "failures": {"count": 0}}`), 0o644)
	c, warnings := importFile(t, p)
	run := c.Runs[0]
	if !hasNote(run, "keys inference-perf does not write (imported as reported): load_summary.burstiness.value, successes.note.value") {
		t.Errorf("notes %q", run.Notes)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "keys inference-perf does not write (imported): load_summary.burstiness.value, successes.note.value") {
		t.Errorf("warnings %q", warnings)
	}
	var texts []string
	for _, s := range run.Reported {
		if s.Value == nil {
			texts = append(texts, s.Metric+"/"+s.Stat+"="+s.Text)
		}
	}
	if strings.Join(texts, " ") != "successes.latency.time_to_first_token/mean=NaN successes.latency.time_to_first_token/max=Infinity successes.note/value=x" {
		t.Errorf("texts %q", texts)
	}
	if reported(t, run, "load_summary.burstiness", "value") != 1.5 {
		t.Error("unknown number lost")
	}
}

// TestVersions checks the layouts that tell inference-perf's versions
// apart.
func TestVersions(t *testing.T) {
	write := func(content string) string {
		p := filepath.Join(t.TempDir(), "per_request_lifecycle_metrics.json")
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	// v0.3–v0.4: per-message times, extra_info present.
	c, _ := importFile(t, write(`[{"start_time": 5.0, "end_time": 5.5, "request": "{\"model\": \"m\", \"messages\": [], \"stream\": true}", "response": "", "info": {"input_tokens": 3, "output_tokens": 2, "output_token_times": [5.1, 5.2, 5.3], "extra_info": {}, "lora_adapter": null}, "error": null}]`))
	if r := c.Runs[0]; r.Convention != ConventionMessage || r.Endpoint != "v1/chat/completions" || !*r.Streaming || r.Model != "m" || len(c.Events) != 3 {
		t.Errorf("v0.4: %+v", r)
	}
	// v0.5: response_info; output_token_times split chunk 2 into 3 tokens.
	c, _ = importFile(t, write(`[{"start_time": 5.0, "end_time": 5.5, "request": "{}", "response": "", "info": {"input_tokens": 3, "extra_info": {}, "lora_adapter": null, "response_info": {"response_chunks": ["{\"choices\":[{\"text\":\"a\"}]}", "{\"choices\":[{\"text\":\" b c d\"}]}"], "chunk_times": [5.1, 5.2], "output_tokens": 4, "output_token_times": [5.1, 5.2, 5.2, 5.2], "server_usage": null}}, "error": null}]`))
	if r := c.Runs[0]; r.Convention != ConventionToken5 || !hasNote(r, "one BOS per chunk") || *c.Events[1].Tokens != 3 || *c.Requests[0].OutputTokens != 4 {
		t.Errorf("v0.5: %+v %+v", r, c.Events)
	}
	// v0.1.0: no info.
	c, _ = importFile(t, write(`[{"start_time": 5.0, "end_time": 5.5, "request": "{}", "response": "", "error": null}, {"start_time": 6.0, "end_time": 6.5, "request": "{}", "response": "", "error": {"error_type": "ClientError", "error_msg": "boom"}}]`))
	if r := c.Runs[0]; r.Convention != ConventionLine || !hasNote(r, "v0.1.0") || c.Requests[0].Status != formats.StatusOK || c.Requests[1].Status != formats.StatusError || c.Requests[1].ErrorCode != nil {
		t.Errorf("v0.1.0: %+v %+v", r, c.Requests)
	}
	// Summary layouts.
	for _, tc := range []struct {
		file string
		want timing
	}{
		{`{"load_summary": {"count": 1}, "successes": {"count": 1, "latency": {"request_latency": {"mean": 1, "min": 1, "p10": 1, "p50": 1, "p90": 1, "max": 1}}}}`, timingLine},
		{`{"load_summary": {"count": 1}, "successes": {"count": 1, "latency": {"request_latency": {"mean": 1, "min": 1, "max": 1, "p50": 1}}}}`, timingMessage},
		{`{"benchmark_time_seconds": 1, "load_summary": {"count": 1}, "successes": {"count": 1}}`, timingToken5},
		{`{"benchmark_time_seconds": 1, "load_summary": {"count": 1}, "successes": {"count": 1, "prompt_tokens": {"total": 3}}}`, timingToken},
		// v0.2–v0.3 order without the per-line signature: per message.
		{`{"load_summary": {"count": 1}, "successes": {"count": 1, "latency": {"request_latency": {"mean": 1, "min": 1, "p0.1": 1, "median": 1, "max": 1}, "inter_token_latency": {"mean": 0.01, "min": 0.004, "p0.1": 0.004, "median": 0.009, "max": 0.02}}}}`, timingMessage},
	} {
		p := filepath.Join(t.TempDir(), "stage_0_lifecycle_metrics.json")
		os.WriteFile(p, []byte(tc.file), 0o644)
		in, err := ingest.Open(p, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := readSummary(in, ingest.Options{}, p, false)
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got, why := summaryTiming(s); got != tc.want {
			t.Errorf("%s: timing %v (%s), want %v", tc.file, got, why, tc.want)
		}
	}
}

// TestConcurrencyStage: load_summary.concurrency makes a concurrency run.
func TestConcurrencyStage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stage_0_lifecycle_metrics.json")
	os.WriteFile(p, []byte(`{"load_summary": {"count": 8, "requested_rate": 8, "concurrency": 4}, "successes": {"count": 8}, "failures": {"count": 0}}`), 0o644)
	c, _ := importFile(t, p)
	if r := c.Runs[0]; r.LoadMode != "concurrency" || *r.Concurrency != 4 || r.RequestRateRPS != nil {
		t.Errorf("run %+v", r)
	}
}

// TestGroupsAndPrefix checks report-file prefixes, the primary file of a
// group, companions, adapters, Prometheus-only groups and renamed files.
func TestGroupsAndPrefix(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"myrun_stage_0_lifecycle_metrics.json":                `{"load_summary": {"count": 1, "requested_rate": 1}, "successes": {"count": 1}, "failures": {"count": 0}}`,
		"myrun_stage_1_lifecycle_metrics.json":                `{"load_summary": {"count": 1, "requested_rate": 2}, "successes": {"count": 1}, "failures": {"count": 0}}`,
		"myrun_adapter_lora-a_lifecycle_metrics.json":         `{"load_summary": {"count": 1}, "successes": {"count": 1}, "failures": {"count": 0}}`,
		"myrun_adapter_lora-a_stage_1_lifecycle_metrics.json": `{"load_summary": {"count": 1, "requested_rate": 2}, "successes": {"count": 1}, "failures": {"count": 0}}`,
		"myrun_stage_1_prometheus_metrics.json":               `{"load_summary": {}, "successes": {"count": 5}, "failures": {}}`,
		"myrun_summary_session_lifecycle_metrics.json":        `{}`,
		"myrun_config.yaml":                                   "server:\n  model_name: m2\n",
		"other_stage_0_prometheus_metrics.json":               `{"load_summary": {}, "successes": {"count": 3, "time_to_first_token": {"p99": 0.5}}, "failures": {}}`,
	}
	for name, content := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	im := New()
	detected := map[string]bool{}
	for name := range files {
		p := filepath.Join(dir, name)
		b, _ := os.ReadFile(p)
		detected[name] = im.Detect(p, b)
	}
	// every report is claimed (so that one named alone is imported); the
	// primary lists the others of its run as companions, so a directory
	// makes one job per run
	for name, want := range map[string]bool{"myrun_config.yaml": false, "myrun_summary_session_lifecycle_metrics.json": false} {
		if detected[name] != want {
			t.Errorf("%s detected %v", name, detected[name])
		}
	}
	n := 0
	for _, d := range detected {
		if d {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d files detected, want the 6 reports: %v", n, detected)
	}
	comp := im.Companions(filepath.Join(dir, "myrun_stage_0_lifecycle_metrics.json"))
	if len(comp) != 5 || filepath.Base(comp[4]) != "myrun_config.yaml" {
		t.Errorf("companions %q", comp)
	}
	if c := im.Companions(filepath.Join(dir, "myrun_stage_1_lifecycle_metrics.json")); len(c) != 2 ||
		filepath.Base(c[0]) != "myrun_stage_1_prometheus_metrics.json" || filepath.Base(c[1]) != "myrun_config.yaml" {
		t.Errorf("a stage report's companions %q: want its Prometheus twin and the config", c)
	}
	c, _ := importFile(t, filepath.Join(dir, "myrun_stage_0_lifecycle_metrics.json"))
	var ids []string
	for _, r := range c.Runs {
		ids = append(ids, r.RunID)
	}
	if strings.Join(ids, " ") != "myrun/stage_0 myrun/stage_1 myrun/adapter_lora-a myrun/adapter_lora-a/stage_1" {
		t.Errorf("runs %q", ids)
	}
	if r := c.Runs[1]; r.Model != "m2" || reported(t, r, "prometheus.successes", "count") != 5 || *r.RequestRateRPS != 2 {
		t.Errorf("stage 1 %+v", r)
	}
	c, _ = importFile(t, filepath.Join(dir, "other_stage_0_prometheus_metrics.json"))
	if len(c.Runs) != 1 || c.Runs[0].RunID != "other/stage_0" || reported(t, c.Runs[0], "prometheus.successes.time_to_first_token", "p99") != 0.5 {
		t.Errorf("prometheus-only %+v", c.Runs)
	}
	// A renamed lifecycle report and a renamed per-request file are
	// recognized by content and imported on their own.
	s := filepath.Join(dir, "results.json")
	os.WriteFile(s, []byte(`{"load_summary": {"count": 1}, "successes": {"count": 1}, "failures": {"count": 0}}`), 0o644)
	b, _ := os.ReadFile(s)
	if !im.Detect(s, b) || len(im.Companions(s)) != 0 {
		t.Error("renamed summary not detected")
	}
	c, _ = importFile(t, s)
	if len(c.Runs) != 1 || c.Runs[0].RunID != "results" {
		t.Errorf("renamed summary runs %+v", c.Runs)
	}
	r := filepath.Join(dir, "requests.json")
	os.WriteFile(r, []byte("[\n  {\n    \"start_time\": 1.0,\n    \"end_time\": 2.0,\n    \"request\": \"{}\""), 0o644)
	b, _ = os.ReadFile(r)
	if !im.Detect(r, b) {
		t.Error("renamed per-request file (cut in its first record) not detected")
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
		{filepath.Join(corpus, "kubecon25-vllm-eagle/summary_lifecycle_metrics.json"), true},
		// not primary (the summary is), claimed all the same: named alone,
		// it is imported alone (TestStageReportAlone)
		{filepath.Join(corpus, "kubecon25-vllm-eagle/stage_0_lifecycle_metrics.json"), true},
		{filepath.Join(corpus, "kubecon25-vllm-eagle/stage_3_prometheus_metrics.json"), true},
		{filepath.Join(corpus, "kubecon25-vllm-eagle/config.yaml"), false},
		{filepath.Join(corpus, "kubecon25-vllm-eagle/manifests.yaml"), false},
		{"testdata/head-2stages/per_request_lifecycle_metrics.json", true},
		{"testdata/head-2stages/summary_lifecycle_metrics.json", true},
		{"testdata/v02-lines/per_request_lifecycle_metrics.json", true},
		{"testdata/malformed/stage_0_lifecycle_metrics.json", true},
		{"testdata/truncated/per_request_lifecycle_metrics.json", true},
		{"../../testdata/llmperf/leaderboard-groq-70b/summary.json", false},
		{"../../testdata/llmperf/leaderboard-groq-70b/individual_responses.json", false},
		{"../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts/profile_export.jsonl", false},
		{"../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts/profile_export_aiperf.json", false},
		{"../../testdata/genai-perf/openrouter-gpt4omini-c1-nonstream/profile_export.json", false},
	} {
		if got := im.Detect(tc.path, head(tc.path)); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	// An empty file under a report name is claimed so Import can say what is wrong.
	p := filepath.Join(t.TempDir(), "summary_lifecycle_metrics.json")
	os.WriteFile(p, nil, 0o644)
	if !im.Detect(p, nil) || importErr(p) == nil {
		t.Error("empty summary")
	}
}

// TestStageReportAlone: stage_N_lifecycle_metrics.json named on its own —
// in its run's directory, beside the summary that is the run's primary
// report — imports as that stage's run, with its Prometheus report, its
// numbers as in the whole run's import, and a warning naming the reports
// it leaves to the primary. (It used to be "not a recognized trace
// format".)
func TestStageReportAlone(t *testing.T) {
	dir := filepath.Join(corpus, "kubecon25-vllm-eagle")
	var warnings []string
	var c formats.Collector
	err := ingest.ImportFile(New(), filepath.Join(dir, "stage_2_lifecycle_metrics.json"),
		ingest.Options{Warn: func(m string) { warnings = append(warnings, m) }}, &c)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 1 || c.Runs[0].RunID != "kubecon25-vllm-eagle/stage_2" || len(c.Requests) != 0 {
		t.Fatalf("runs %+v", c.Runs)
	}
	var all formats.Collector
	if err := ingest.ImportFile(New(), filepath.Join(dir, "summary_lifecycle_metrics.json"), ingest.Options{}, &all); err != nil {
		t.Fatal(err)
	}
	var whole *formats.Run
	for i := range all.Runs {
		if all.Runs[i].RunID == "kubecon25-vllm-eagle/stage_2" {
			whole = &all.Runs[i]
		}
	}
	alone := c.Runs[0]
	if whole == nil || len(alone.Reported) != len(whole.Reported) || *alone.RequestRateRPS != *whole.RequestRateRPS ||
		reported(t, alone, "successes.latency.time_to_first_token", "p99") != reported(t, *whole, "successes.latency.time_to_first_token", "p99") ||
		reported(t, alone, "prometheus.successes.time_to_first_token", "p99") != reported(t, *whole, "prometheus.successes.time_to_first_token", "p99") {
		t.Errorf("stage 2 alone differs from stage 2 of the whole run: %d vs %d statistics", len(alone.Reported), len(whole.Reported))
	}
	if len(alone.SourceFiles) != 3 { // lifecycle, Prometheus, config
		t.Errorf("sources %+v", alone.SourceFiles)
	}
	if len(warnings) == 0 || !strings.HasSuffix(warnings[0], "stage_2_lifecycle_metrics.json: imported on its own: the 14 other reports of its run beside it are read when summary_lifecycle_metrics.json (the run's primary report) or the directory is imported") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestLabel(t *testing.T) {
	for in, want := range map[string]string{
		"reports-20251105/summary_lifecycle_metrics.json":         "reports-20251105",
		"x/run42_stage_3_lifecycle_metrics.json":                  "run42",
		"x/run42-per_request_lifecycle_metrics.json":              "run42",
		"runs/a/stage_0_prometheus_metrics.json":                  "a",
		"runs/a/results.json":                                     "",
		"runs/a/adapter_lora_stage_2_lifecycle_metrics.json":      "a",
		"runs/a/exp1.adapter_lora_stage_2_lifecycle_metrics.json": "exp1",
	} {
		if got := Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseName(t *testing.T) {
	for in, want := range map[string]fileName{
		"stage_12_lifecycle_metrics.json":                   {kind: kindStage, stage: 12},
		"adapter_a_b_stage_3_lifecycle_metrics.json":        {kind: kindAdapterStage, adapter: "a_b", stage: 3},
		"adapter_a_b_lifecycle_metrics.json":                {kind: kindAdapter, adapter: "a_b"},
		"stage_2_session_lifecycle_metrics.json":            {kind: kindSession},
		"p_summary_session_lifecycle_metrics.json":          {kind: kindSession, prefix: "p_"},
		"per_session_lifecycle_metrics.json":                {kind: kindSession},
		"summary_prometheus_metrics.json":                   {kind: kindPromSummary},
		"stage_99999999999999999999_lifecycle_metrics.json": {},
		"lifecycle_metrics.json":                            {},
	} {
		if got := parseName(in); got != want {
			t.Errorf("parseName(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// TestChunkTokens checks the run-length reading of output_token_times.
func TestChunkTokens(t *testing.T) {
	toks, ok := chunkTokens([]float64{1, 2, 3}, []float64{1, 2, 2, 2, 3})
	if !ok || !reflect.DeepEqual(toks, []int32{1, 3, 1}) {
		t.Errorf("%v %v", toks, ok)
	}
	// A chunk whose text re-tokenized to nothing keeps no time.
	if toks, ok := chunkTokens([]float64{1, 2, 3}, []float64{1, 3, 3}); !ok || !reflect.DeepEqual(toks, []int32{1, 0, 2}) {
		t.Errorf("%v %v", toks, ok)
	}
	for _, tc := range [][2][]float64{
		{{1, 1}, {1, 1}},    // two chunks at one time: ambiguous
		{{1, 2}, {1, 2, 4}}, // a token time no chunk has
		{{1, 2}, {2, 1}},    // out of order
	} {
		if _, ok := chunkTokens(tc[0], tc[1]); ok {
			t.Errorf("chunkTokens(%v, %v) accepted", tc[0], tc[1])
		}
	}
}

// TestParseYAML covers the YAML subset of inference-perf configs.
func TestParseYAML(t *testing.T) {
	src := `---
# comment
api:
  type: chat   # trailing comment
  streaming: true
  headers: {x-a: "1", x-b: 'two'}
load:
  type: concurrent
  stages:
  - num_requests: 100
    concurrency_level: 8
  -   num_requests: 200
      concurrency_level: 16
  rates: [1, 2.5, .inf]
report:
  note: |
    line one
    line two
  folded: >-
    a
    b
server:
  model_name: "org/model: v2"
  empty:
  hash: "a # not a comment"
  tilde: ~
list_at_key_indent:
- a
- 'b c'
`
	got, err := parseYAML(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(replaceInf(got))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"api":{"headers":{"x-a":"1","x-b":"two"},"streaming":true,"type":"chat"},"list_at_key_indent":["a","b c"],"load":{"rates":[1,2.5,"+Inf"],"stages":[{"concurrency_level":8,"num_requests":100},{"concurrency_level":16,"num_requests":200}],"type":"concurrent"},"report":{"folded":"a b","note":"line one\nline two\n"},"server":{"empty":null,"hash":"a # not a comment","model_name":"org/model: v2","tilde":null}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	for _, bad := range []string{"a: 1\n  b: 2\n", "a: 1\na: 2\n", "a: [1,\n 2]\n", "a: *ref\n", "- a\nb: 1\n", "a: 1\n---\nb: 2\n", "\ta: 1\n", "just a line\n"} {
		if _, err := parseYAML(bad); err == nil {
			t.Errorf("parseYAML(%q) accepted", bad)
		}
	}
}

func replaceInf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = replaceInf(e)
		}
	case []any:
		for i, e := range x {
			x[i] = replaceInf(e)
		}
	case float64:
		if x > 1e308 {
			return "+Inf"
		}
	}
	return v
}
