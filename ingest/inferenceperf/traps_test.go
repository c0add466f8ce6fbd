package inferenceperf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

var trapTools = convention.NewSet(analyze.Canonical, Tool)

// tokensOf lists the events' token counts (-1: unknown).
func tokensOf(events []formats.Event, key int64) []int32 {
	var out []int32
	for _, e := range events {
		if e.RequestKey != key {
			continue
		}
		if e.Tokens == nil {
			out = append(out, -1)
		} else {
			out = append(out, *e.Tokens)
		}
	}
	return out
}

func sameTokens(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTrapLineTimes: inference-perf ≤ v0.2 appended a time for every SSE
// line (kubernetes-sigs/inference-perf#392, fixed by #452). The v02-lines
// fixture (completions, testdata/make_fixtures.py) has data lines at 50,
// 70, 95 ms | 30, 60, 80, 110 ms | 20, 45 ms, [DONE] at 100 | 111 | 46 ms,
// each line followed by its blank line 4 µs later; output_tokens 3, 5, 2.
//
// Import: every record pairs (data → blank 0.004 ms against 20 ms), so the
// blank lines and [DONE] get tokens 0. Canonical, corrected: TTFT [50, 30,
// 20] → 100/3; E2E the last data line [95, 110, 45] → 250/3; TPOT [45/2,
// 80/4, 25/1] → 22.5; ITL the data-line gaps [20, 25 | 30, 20, 30 | 25] →
// 25. --no-corrections: E2E the [DONE] blank line [100.004, 111.004,
// 46.004] → 257.012/3; TPOT [50.004/2, 81.004/4, 26.004/1] → 71.257/3; ITL
// every gap, 157.012 ms over 21. Under inference-perf's ≤ v0.4 profile its
// TPOT and ITL (over the line times) are reproduced.
func TestTrapLineTimes(t *testing.T) {
	path := filepath.Join("testdata", "v02-lines", "per_request_lifecycle_metrics.json")
	c, _ := importFile(t, path)
	ch := traptest.Check(t, &c.Runs[0], TrapLineTimes)
	if ch.Requests != 3 || !ch.Corrected || ch.Field != "output_token_times" ||
		ch.Detail != "request 0: 8 line times; data → blank line gaps ≤ 0.004 ms, the other gaps' median 20 ms; 3 of 3 judged records of the file show it" {
		t.Errorf("check %+v", ch)
	}
	if got := tokensOf(c.Events, 0); !sameTokens(got, []int32{-1, 0, -1, 0, -1, 0, 0, 0}) {
		t.Errorf("request 0 tokens %v", got)
	}
	for _, r := range c.Requests {
		if r.Corrections != TrapLineTimes || r.TokenMessageCount != int64(len(tokensOf(c.Events, r.RequestKey))) {
			t.Errorf("request %d: corrections %q, token messages %d (the raw times)", r.RequestKey, r.Corrections, r.TokenMessageCount)
		}
	}

	rr := traptest.Report(t, New(), path, trapTools, analyze.Canonical, true)
	traptest.WantMean(t, rr, analyze.TTFT, 100.0/3)
	traptest.WantMean(t, rr, analyze.E2E, 250.0/3)
	traptest.WantMean(t, rr, analyze.TPOT, 22.5)
	traptest.WantMean(t, rr, analyze.ITL, 25)
	if w := traptest.Warning(t, rr, TrapLineTimes); !w.DataCheck || w.Count != 3 || !strings.Contains(w.Message, "corrected in 3 request(s)") || !strings.Contains(w.Source, "inference-perf/issues/392") {
		t.Errorf("warning %+v", w)
	}

	raw := traptest.Report(t, New(), path, trapTools, analyze.Canonical, false)
	traptest.WantMean(t, raw, analyze.TTFT, 100.0/3)
	traptest.WantMean(t, raw, analyze.E2E, 257.012/3)
	traptest.WantMean(t, raw, analyze.TPOT, (50.004/2+81.004/4+26.004)/3)
	traptest.WantMean(t, raw, analyze.ITL, 157.012/21)

	own := traptest.Report(t, New(), path, trapTools, Profile02, true)
	traptest.Reproduction(t, own, TrapLineTimes, "successes.latency.time_per_output_token mean", "successes.latency.inter_token_latency mean",
		"successes.latency.time_to_first_token mean", "successes.latency.inter_token_latency median")
}

// TestTrapMessageTimes: inference-perf v0.3–v0.4 appended a time for every
// SSE message, [DONE] and the chat role chunk included (#392, #452). The
// trap-v04-messages fixture (chat, make_fixtures.py) has tokens at 60.1,
// 80.1, 100.1, 120.1 | 40.02, 60, 85, 100, 130 | 30.01, 50 ms, the role
// chunk 4 µs before the first and [DONE] 4 µs after the last.
//
// Import: records 0 and 1 are judged (last gap 0.004 ms against a median
// of 20 ms and more; record 2 has too few gaps) and all three are
// corrected: first and last times tokens 0. Canonical, corrected: TTFT
// [60.1, 40.02, 30.01]; E2E [120.1, 130, 50]; TPOT [60/3, 89.98/4, 19.99];
// ITL [20, 20, 20 | 19.98, 25, 15, 30 | 19.99] → 169.97/8.
// --no-corrections: TTFT the role chunks [60.096, 40.016, 30.006]; E2E the
// [DONE]s [120.104, 130.004, 50.004]; ITL 14 gaps, 169.994 ms. Under the
// tool's profile its numbers over the message times are reproduced.
func TestTrapMessageTimes(t *testing.T) {
	path := filepath.Join("testdata", "trap-v04-messages", "per_request_lifecycle_metrics.json")
	c, _ := importFile(t, path)
	if c.Runs[0].Convention != ConventionMessage {
		t.Fatalf("convention %s", c.Runs[0].Convention)
	}
	ch := traptest.Check(t, &c.Runs[0], TrapMessageTimes)
	if ch.Requests != 3 || !ch.Corrected ||
		ch.Detail != "request 0: 6 message times; last gap 0.004 ms, the other gaps' median 20 ms; 2 of 2 judged records of the file show it" {
		t.Errorf("check %+v", ch)
	}
	if got := tokensOf(c.Events, 2); !sameTokens(got, []int32{0, -1, -1, 0}) {
		t.Errorf("request 2 tokens %v", got)
	}

	rr := traptest.Report(t, New(), path, trapTools, analyze.Canonical, true)
	traptest.WantMean(t, rr, analyze.TTFT, (60.1+40.02+30.01)/3)
	traptest.WantMean(t, rr, analyze.E2E, (120.1+130+50)/3)
	traptest.WantMean(t, rr, analyze.TPOT, (60.0/3+89.98/4+19.99)/3)
	traptest.WantMean(t, rr, analyze.ITL, 169.97/8)
	traptest.Warning(t, rr, TrapMessageTimes)

	raw := traptest.Report(t, New(), path, trapTools, analyze.Canonical, false)
	traptest.WantMean(t, raw, analyze.TTFT, (60.096+40.016+30.006)/3)
	traptest.WantMean(t, raw, analyze.E2E, (120.104+130.004+50.004)/3)
	traptest.WantMean(t, raw, analyze.ITL, 169.994/14)

	own := traptest.Report(t, New(), path, trapTools, Profile02, true)
	traptest.Reproduction(t, own, TrapMessageTimes, "successes.latency.time_per_output_token mean", "successes.latency.inter_token_latency mean",
		"successes.latency.time_to_first_token mean")
}

// TestTrapBOSPerChunk: inference-perf v0.5 re-tokenized each chunk with a
// BOS (#564, fixed by #566). The trap-v05-bos fixture (completions,
// make_fixtures.py: words + 1 per chunk) has chunks of 1, 1, 2 | 1, 1, 1, 1
// | 2, 1 words at 40, 60, 100 | 230, 250, 270, 290 | 430, 470 ms (from
// each start), counted 2, 2, 3 | 2, 2, 2, 2 | 3, 2; server usage 4, 4 and
// none; output_tokens the per-chunk sums 7, 8, 5.
//
// Import: records 0 and 1 match usage + chunks exactly, record 2 (no
// usage) counts ≥ 2 in every chunk: all three are corrected. Canonical,
// corrected: ITL splits each gap by the real tokens: [20, 20, 20 | 20, 20,
// 20 | 40] → 160/7; N = 4, 4 and the corrected sum 3: TPOT [60/3, 60/3,
// 40/2] = 20, OSL 11/3. --no-corrections: ITL [10, 10, 40/3 ×3 | 10 ×6 |
// 20, 20] → 160/13; N of record 2 is the tool's 5: TPOT [20, 20, 10],
// OSL 13/3. Under the v0.5 profile the tool's deflated ITL (17 token-time
// gaps, 160 ms) and TPOT (over its per-chunk sums) are reproduced.
func TestTrapBOSPerChunk(t *testing.T) {
	path := filepath.Join("testdata", "trap-v05-bos", "per_request_lifecycle_metrics.json")
	c, _ := importFile(t, path)
	ch := traptest.Check(t, &c.Runs[0], TrapBOSPerChunk)
	if ch.Requests != 3 || !ch.Corrected ||
		ch.Detail != "request 0: 3 content chunks whose token times count 7, server completion_tokens 4; 3 of 3 judged records of the file show it" {
		t.Errorf("check %+v", ch)
	}
	if got := tokensOf(c.Events, 0); !sameTokens(got, []int32{2, 2, 3}) {
		t.Errorf("request 0 tokens %v: the tool's counts are kept", got)
	}

	rr := traptest.Report(t, New(), path, trapTools, analyze.Canonical, true)
	traptest.WantMean(t, rr, analyze.ITL, 160.0/7)
	traptest.WantMean(t, rr, analyze.TPOT, 20)
	traptest.WantMean(t, rr, analyze.OSL, 11.0/3)
	traptest.Warning(t, rr, TrapBOSPerChunk)

	raw := traptest.Report(t, New(), path, trapTools, analyze.Canonical, false)
	traptest.WantMean(t, raw, analyze.ITL, 160.0/13)
	traptest.WantMean(t, raw, analyze.TPOT, 50.0/3)
	traptest.WantMean(t, raw, analyze.OSL, 13.0/3)

	own := traptest.Report(t, New(), path, trapTools, Profile05, true)
	traptest.Reproduction(t, own, TrapBOSPerChunk, "successes.latency.inter_token_latency mean", "successes.latency.time_per_output_token mean",
		"successes.output_len mean")
}

// TestTrapBuggyVersion: without the per-request file nothing can be
// corrected, but the report's layout names the version: the KubeCon corpus
// runs (≤ v0.2, per-line times; their TPOT is about half the decode time
// per token) are flagged, and so are the trap fixtures' v0.4 and v0.5
// stage reports alone (v0.5: token_count_mismatches 2 of 3 successes).
func TestTrapBuggyVersion(t *testing.T) {
	dir := "../../testdata/inference-perf/kubecon25-vllm-baseline"
	c, _ := importFile(t, filepath.Join(dir, "summary_lifecycle_metrics.json"))
	if len(c.Runs) != 8 {
		t.Fatalf("%d runs", len(c.Runs))
	}
	for _, run := range c.Runs {
		ch := traptest.Check(t, &run, TrapBuggyVersion)
		if ch.Corrected || ch.Requests != 0 || !strings.Contains(ch.Detail, "about half the decode time per token") || !strings.HasSuffix(ch.Detail, "inference-perf ≤ v0.2.x") {
			t.Errorf("%s: check %+v", run.RunID, ch)
		}
	}
	rr := traptest.Report(t, New(), filepath.Join(dir, "summary_lifecycle_metrics.json"), trapTools, analyze.Canonical, true)
	if w := traptest.Warning(t, rr, TrapBuggyVersion); !strings.Contains(w.Message, "flagged, not corrected") {
		t.Errorf("warning %+v", w)
	}

	for fixture, want := range map[string]string{
		"trap-v04-messages": "per-message times (inference_perf_message_times)",
		"trap-v05-bos":      "v0.5 with the per-chunk count disagreeing with the server's on 2 of 3 successes",
	} {
		tmp := t.TempDir()
		b, err := os.ReadFile(filepath.Join("testdata", fixture, "stage_0_lifecycle_metrics.json"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(tmp, "stage_0_lifecycle_metrics.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		c, _ := importFile(t, p)
		if ch := traptest.Check(t, &c.Runs[0], TrapBuggyVersion); !strings.HasPrefix(ch.Detail, want) {
			t.Errorf("%s alone: check %+v", fixture, ch)
		}
	}
}

// TestTrapsNotOnCleanData: the v0.6+ fixtures (the fixed versions) trip
// no check.
func TestTrapsNotOnCleanData(t *testing.T) {
	for _, p := range []string{"testdata/head-2stages/summary_lifecycle_metrics.json", "testdata/edge-v06/per_request_lifecycle_metrics.json",
		"testdata/truncated/per_request_lifecycle_metrics.json"} {
		var col formats.Collector
		if err := ingest.ImportFile(New(), p, ingest.Options{}, &col); err != nil {
			t.Fatal(err)
		}
		for _, r := range col.Runs {
			if len(r.Checks) > 0 {
				t.Errorf("%s: %s: checks %+v", p, r.RunID, r.Checks)
			}
		}
	}
}

// TestTrapBOSInOutputCount: inference-perf up to v0.6.0 counted the whole
// reply with special tokens, one BOS more than generated (PR #644). The
// trap-v060-bos fixture (make_fixtures.py, v0.6 layout) has replies of 3,
// 2 and 4 words at 40–100 | 230–250 | 430–490 ms, output_tokens 4, 3, 5;
// server usage 3 and 2 on the first two, none on the third.
//
// Import: the file shows it (2 of 2 records: client = server + 1); only
// request 2, without usage, is corrected (output_tokens 4, reported 5).
// Canonical: N [3, 2, 4] → OSL 3; TPOT [60/2, 20/1, 60/3] → 70/3.
// --no-corrections: request 2's N is 5: OSL 10/3, TPOT [30, 20, 15] →
// 65/3. Under inference-perf's profile its TPOT over its own counts
// ([60/3, 20/2, 60/4] ms) is reproduced.
func TestTrapBOSInOutputCount(t *testing.T) {
	path := filepath.Join("testdata", "trap-v060-bos", "per_request_lifecycle_metrics.json")
	c, _ := importFile(t, path)
	ch := traptest.Check(t, &c.Runs[0], TrapBOSInOutputCount)
	if ch.Requests != 1 || !ch.Corrected ||
		ch.Detail != "request 2: output_tokens 5 → 4 (no server usage); the client's count is the server's + 1 on 2 of 2 records with both" {
		t.Errorf("check %+v", ch)
	}
	for i, want := range []string{"", "", TrapBOSInOutputCount} {
		if r := c.Requests[i]; r.Corrections != want {
			t.Errorf("request %d: corrections %q", i, r.Corrections)
		}
	}
	if r := c.Requests[2]; *r.OutputTokens != 4 || *r.ReportedOutputTokens != 5 || r.OutputTokensSource != formats.SourceToolReported {
		t.Errorf("request 2: %d / %v (%s)", *r.OutputTokens, *r.ReportedOutputTokens, r.OutputTokensSource)
	}

	rr := traptest.Report(t, New(), path, trapTools, analyze.Canonical, true)
	traptest.WantMean(t, rr, analyze.OSL, 3)
	traptest.WantMean(t, rr, analyze.TPOT, 70.0/3)
	raw := traptest.Report(t, New(), path, trapTools, analyze.Canonical, false)
	traptest.WantMean(t, raw, analyze.OSL, 10.0/3)
	traptest.WantMean(t, raw, analyze.TPOT, 65.0/3)

	own := traptest.Report(t, New(), path, trapTools, Profile, true)
	traptest.Reproduction(t, own, TrapBOSInOutputCount, "successes.latency.time_per_output_token mean", "successes.output_len mean")
}

// TestTrapZeroPrometheusValues: inference-perf's Prometheus client writes
// 0.0 for a query that matched no series. The trap-zero-counters fixture
// (head-2stages' stage 0, 3 client successes, with a Prometheus report as
// inference-perf up to v0.4 wrote it against vLLM: counters queried
// without _total, the gated kv_block_* and corrupted_requests metrics not
// exported) has successes count 0 and rate 0, prompt_len and output_len
// mean and rate 0, request_success_count 0: those 7 statistics are null
// (TrapZeroVLLMCounters), the histogram- and gauge-derived ones kept
// (TTFT mean 0.07 s, queue_len mean 0); every kv_block_* statistic and
// corrupted_requests is 0: null (TrapGatedMetricZero). A kv_block_lifetime
// with one nonzero statistic (p99 0.5 s) is a measurement: kept, zeros
// included. head-2stages itself (server count 3) trips neither.
func TestTrapZeroPrometheusValues(t *testing.T) {
	dir := filepath.Join("testdata", "trap-zero-counters")
	stat := func(run *formats.Run, metric, s string) *formats.ReportedStat {
		for i := range run.Reported {
			if r := &run.Reported[i]; r.Metric == metric && r.Stat == s {
				return r
			}
		}
		t.Fatalf("no %s %s", metric, s)
		return nil
	}
	imp := func(dir string) *formats.Run {
		var c formats.Collector
		if err := ingest.ImportFile(New(), filepath.Join(dir, "stage_0_lifecycle_metrics.json"), ingest.Options{}, &c); err != nil {
			t.Fatal(err)
		}
		return &c.Runs[0]
	}
	run := imp(dir)
	ch := traptest.Check(t, run, TrapZeroVLLMCounters)
	if ch.Field != "prometheus.successes" || ch.Corrected || ch.Detail != "the server's successes count is 0, the client's 3: 7 counter-derived statistics set to null" {
		t.Errorf("counters: %+v", ch)
	}
	for _, ms := range [][2]string{{"prometheus.successes", "count"}, {"prometheus.successes", "rate"}, {"prometheus.successes.prompt_len", "mean"},
		{"prometheus.successes.output_len", "rate"}, {"prometheus.successes.kv_block_lifetime", "p99"}, {"prometheus.successes.corrupted_requests", "value"}} {
		if r := stat(run, ms[0], ms[1]); r.Value != nil || r.Text != zeroNoData {
			t.Errorf("%s %s: %+v, want null", ms[0], ms[1], r)
		}
	}
	if r := stat(run, "prometheus.successes.time_to_first_token", "mean"); r.Value == nil || *r.Value != 0.07 {
		t.Errorf("TTFT mean %+v", r)
	}
	if r := stat(run, "prometheus.successes.queue_len", "mean"); r.Value == nil || *r.Value != 0 {
		t.Errorf("queue_len mean (a gauge, 0 may be real) %+v", r)
	}
	ch = traptest.Check(t, run, TrapGatedMetricZero)
	if ch.Field != "prometheus.successes.corrupted_requests" || !strings.Contains(ch.Detail, "kv_block_lifetime (--kv-cache-metrics)") ||
		!strings.Contains(ch.Detail, "corrupted_requests (VLLM_COMPUTE_NANS_IN_LOGITS=1)") {
		t.Errorf("gated: %+v", ch)
	}

	// a measured kv_block_lifetime stays
	tmp := t.TempDir()
	for _, f := range []string{"stage_0_lifecycle_metrics.json", "stage_0_prometheus_metrics.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(f, "stage_0_prom") {
			s := strings.Replace(string(b), `"kv_block_lifetime": {
      "mean": 0.0,
      "median": 0.0,
      "p90": 0.0,
      "p99": 0.0`, `"kv_block_lifetime": {
      "mean": 0.0,
      "median": 0.0,
      "p90": 0.0,
      "p99": 0.5`, 1)
			if s == string(b) {
				t.Fatal("fixture layout changed")
			}
			b = []byte(s)
		}
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run = imp(tmp)
	if r := stat(run, "prometheus.successes.kv_block_lifetime", "median"); r.Value == nil || *r.Value != 0 {
		t.Errorf("a measured kv_block_lifetime's median: %+v", r)
	}
	if ch := traptest.Check(t, run, TrapGatedMetricZero); strings.Contains(ch.Detail, "kv_block_lifetime") {
		t.Errorf("gated: %+v", ch)
	}

	for _, r := range imp(filepath.Join("testdata", "head-2stages")).Checks {
		t.Errorf("head-2stages: %+v", r)
	}
}

// TestTrapConcurrencyOvershoot: inference-perf v0.3.x gave each of its W
// workers concurrency_level // W + 1 slots (#319, fixed by #320 in
// v0.4.0). The trap-v03-overshoot fixture (make_fixtures.py) is a v0.3.0
// concurrent stage of concurrency 2 run by 2 workers, 4 slots: 6 requests
// from 5000.000, .001, .002, .003 (4 in flight at .003), then .300 and
// .350, each the instant another ended (an end frees its slot first: 4,
// not 5). The stage is flagged with the observed concurrency: up to 4 in
// flight, a time-weighted mean of Σ durations / span = 2.194 / 0.7 =
// 3.13; the 4 requests that started with more than 2 in flight are
// counted. A correct closed loop, with the same requests at concurrency
// 4, and a request-rate stage, are not flagged.
func TestTrapConcurrencyOvershoot(t *testing.T) {
	path := filepath.Join("testdata", "trap-v03-overshoot", "per_request_lifecycle_metrics.json")
	c, _ := importFile(t, path)
	run := c.Runs[0]
	if run.LoadMode != "concurrency" || run.Concurrency == nil || *run.Concurrency != 2 || run.Convention != ConventionMessage {
		t.Fatalf("run load %s %v, convention %s", run.LoadMode, run.Concurrency, run.Convention)
	}
	ch := traptest.Check(t, &run, TrapConcurrencyOvershoot)
	want := "observed concurrency: up to 4 requests in flight (first 0.003 s after the stage's first start), time-weighted mean 3.13, for a configured concurrency of 2; 4 request(s) started above it"
	if ch.Requests != 4 || ch.Corrected || ch.Field != "concurrency" || ch.Detail != want {
		t.Errorf("check %+v", ch)
	}
	rr := traptest.Report(t, New(), path, trapTools, analyze.Canonical, true)
	w := traptest.Warning(t, rr, TrapConcurrencyOvershoot)
	if !w.DataCheck || w.Routine || w.Count != 4 || !strings.Contains(w.Message, "flagged") {
		t.Errorf("warning %+v", w)
	}

	var p runPlan
	var lites []lite
	var assign []*runPlan
	for _, r := range [][2]float64{{0, 0.4}, {0.001, 0.3}, {0.002, 0.5}, {0.003, 0.35}, {0.3, 0.6}, {0.35, 0.7}} {
		lites = append(lites, lite{start: r[0], end: r[1]})
		assign = append(assign, &p)
	}
	if ch := overshootCheck(&p, lites, assign, 4); ch != nil {
		t.Errorf("at concurrency 4: %+v", ch)
	}
	if ch := overshootCheck(&p, lites, assign, 3); ch == nil || ch.Requests != 3 {
		t.Errorf("at concurrency 3 (starts at .003, .300, .350 with 4 in flight): %+v", ch)
	}
	other := runPlan{}
	assign[3], assign[5] = &other, &other
	if ch := overshootCheck(&p, lites, assign, 3); ch != nil {
		t.Errorf("requests 3 and 5 routed to another stage (3 in flight at most): %+v", ch)
	}
	edge := filepath.Join("testdata", "edge-v06", "per_request_lifecycle_metrics.json")
	e, _ := importFile(t, edge)
	for _, ch := range e.Runs[0].Checks {
		if ch.Code == TrapConcurrencyOvershoot {
			t.Errorf("request-rate stage: %+v", ch)
		}
	}
}
