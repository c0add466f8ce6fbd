package vllmbench

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// trapReport imports path and reports it under c with the catalogue's
// fixes, applied or not.
func trapReport(t *testing.T, path string, c convention.Convention, corrections bool) *analyze.RunReport {
	t.Helper()
	a := analyze.NewAnalyzer(c)
	a.SetCorrections(tools.Fixes(), corrections)
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "fx"}, a); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: func(*formats.Run) convention.Convention { return c }})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Runs[0]
}

func wantMean(t *testing.T, rr *analyze.RunReport, x *analyze.Metric, want float64) {
	t.Helper()
	if got := rr.Metrics.Of(x).Mean; math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s mean %v, want %v", x.Key, got, want)
	}
}

func dataCheck(t *testing.T, rr *analyze.RunReport, code string) analyze.Warning {
	t.Helper()
	for _, w := range rr.Warnings {
		if w.Code == code {
			return w
		}
	}
	t.Fatalf("no %s warning: %+v", code, rr.Warnings)
	return analyze.Warning{}
}

// TestTrapTTFTInITLs: benchmark_serving.py of August 2024 (OpenAI
// completions backend) appended each TTFT to the ITL list
// (vllm-project/vllm#7242). The fixture's 3 requests: ttfts 500, 400,
// 300 ms; itls [500,10,10], [400,20,20,20], [300,50] ms for 3, 4, 2
// output tokens. vLLM's summary, computed as vLLM did: E2EL from the
// measured latency, [520, 460, 350] → mean 443.33; TPOT (latency −
// ttft)/(n − 1) = [10, 20, 50] → mean 26.667; ITL pooled over the lists as
// written → mean 1330/9 = 147.78.
//
// Import: every request is detected (3 gaps for 3 tokens, first gap = TTFT)
// and keeps vLLM's arrays as events (the phantom second message at 2 ×
// TTFT). Canonical, corrected: E2E [520, 460, 350], TPOT [10, 20, 50], ITL
// the 6 real gaps → mean 130/6 = 21.667. --no-corrections: E2E rebuilt
// from the lists counts the TTFT twice, [1020, 860, 650]. Under vLLM's own
// convention the buggy ITL mean is reproduced, and the E2E and TPOT items
// that the lists cannot reproduce name the trap.
func TestTrapTTFTInITLs(t *testing.T) {
	path := filepath.Join("testdata", "trap-ttft-in-itls", fixtures["trap-ttft-in-itls"])
	c, _ := importFile(t, path, "fx")
	run := c.Runs[0]
	if len(run.Checks) != 1 || run.Checks[0].Code != TrapTTFTInITLs || run.Checks[0].Requests != 3 || !run.Checks[0].Corrected || run.Checks[0].Field != "itls" {
		t.Fatalf("checks %+v", run.Checks)
	}
	for _, r := range c.Requests {
		if r.Corrections != TrapTTFTInITLs {
			t.Errorf("request %d corrections %q", r.RequestKey, r.Corrections)
		}
	}
	// the raw events: request 0's second message at 500 + 500 ms
	if c.Events[1].OffsetNs != 1000e6 || *c.Requests[0].LastTokenOffsetNs != 1020e6 {
		t.Errorf("raw events changed: second at %d, last %d", c.Events[1].OffsetNs, *c.Requests[0].LastTokenOffsetNs)
	}

	rr := trapReport(t, path, analyze.Canonical, true)
	wantMean(t, rr, analyze.E2E, 1330.0/3)
	wantMean(t, rr, analyze.TPOT, 80.0/3)
	wantMean(t, rr, analyze.ITL, 130.0/6)
	wantMean(t, rr, analyze.TTFT, 400)
	w := dataCheck(t, rr, TrapTTFTInITLs)
	if !w.DataCheck || w.Count != 3 || !strings.Contains(w.Message, "corrected in 3 request(s)") || !strings.Contains(w.Source, "vllm/issues/7242") {
		t.Errorf("warning %+v", w)
	}

	raw := trapReport(t, path, analyze.Canonical, false)
	wantMean(t, raw, analyze.E2E, 2530.0/3)
	wantMean(t, raw, analyze.ITL, 1330.0/9)
	if w := dataCheck(t, raw, TrapTTFTInITLs); !strings.Contains(w.Message, "not corrected") {
		t.Errorf("--no-corrections warning %+v", w)
	}

	vllm := trapReport(t, path, Profile, true)
	for _, it := range vllm.Reproduction.Items {
		switch {
		case it.Metric == "itl_ms" && (it.Stat == "mean" || it.Stat == "p99"):
			if it.Status != "reproduced" {
				t.Errorf("vLLM's buggy %s %s not reproduced: %+v", it.Metric, it.Stat, it)
			}
		case it.Status == "differs" && !strings.Contains(it.Reason, TrapTTFTInITLs):
			t.Errorf("%s %s differs without the trap as reason: %+v", it.Metric, it.Stat, it)
		}
	}
}

// TestTrapRoleChunkTTFT: vLLM's chat client timed TTFT at the role-only
// first chunk (vllm-project/vllm#15106), which chunked prefill sends
// before the first token. The fixture's 4 requests have ttfts 50, 40, 60,
// 50 ms and first gaps 800, 600, 1000, 900 ms against 20–30 ms gaps after:
// prefill-sized (> 5 × the median of the others) in all 4. Corrected TTFT
// = ttft + first gap = [850, 640, 1060, 950] → mean 875 ms, the first gap
// leaves ITL (the 17 others: mean 0.385/17 s = 22.647 ms); E2E is
// unchanged (mean 971.25 ms, vLLM's own).
func TestTrapRoleChunkTTFT(t *testing.T) {
	path := filepath.Join("testdata", "trap-role-chunk", fixtures["trap-role-chunk"])
	c, _ := importFile(t, path, "fx")
	if ch := c.Runs[0].Checks; len(ch) != 1 || ch[0].Code != TrapRoleChunkTTFT || ch[0].Requests != 4 || !strings.Contains(ch[0].Detail, "4 of 4 judged") {
		t.Fatalf("checks %+v", ch)
	}
	rr := trapReport(t, path, analyze.Canonical, true)
	ttft := rr.Metrics.Of(analyze.TTFT)
	wantMean(t, rr, analyze.TTFT, 875)
	if v := ttft.Value(50); math.Abs(v-900) > 1e-9 {
		t.Errorf("TTFT P50 %v, want (850+950)/2 = 900", v)
	}
	wantMean(t, rr, analyze.ITL, 385.0/17)
	wantMean(t, rr, analyze.E2E, 971.25)
	raw := trapReport(t, path, analyze.Canonical, false)
	wantMean(t, raw, analyze.TTFT, 50)
}

// TestTrapRoleChunkUnjudged: the role-chunk check needs 4 gaps after the
// first to judge a request; a shorter reply is neither corrected nor
// passed in silence. The fixture trap-role-chunk-short (a chat run of
// March 2025 with chunked prefill) has 6 requests: 3 long ones whose first
// gap is prefill-sized (ttfts 50, 40, 60 ms, first gaps 800, 600, 1000 ms
// before 20–30 ms gaps), 2 short replies (ttft 50 ms, itls [700, 20] ms;
// ttft 60 ms, itls [900] ms) and a failure. The check corrects the 3 it
// judged (3 of 3 show it) and says the 2 short ones were not judged: an
// explanation (routine, no data warning), with the first of them. The
// canonical TTFT is [850, 640, 1060, 50, 60] → mean 532 ms, the short
// replies' TTFT left as vLLM timed it. A run where no request can be
// judged (detailed-appended's object 1: replies of 0 to 5 gaps) says that
// nothing was judged; a chat result without itls says it lacks them; a
// completions run gets neither.
func TestTrapRoleChunkUnjudged(t *testing.T) {
	path := filepath.Join("testdata", "trap-role-chunk-short", fixtures["trap-role-chunk-short"])
	c, _ := importFile(t, path, "fx")
	ch := c.Runs[0].Checks
	if len(ch) != 2 || ch[0].Code != TrapRoleChunkTTFT || ch[0].Requests != 3 || !strings.Contains(ch[0].Detail, "3 of 3 judged") {
		t.Fatalf("checks %+v", ch)
	}
	want := "2 completed request(s) have fewer than 4 gaps after the first (first: request 3, 2 gap(s) in all): not judged, not corrected; " +
		"3 of the 3 judged requests show the role chunk, so their TTFT is likely the role chunk's too"
	if u := ch[1]; u.Code != TrapRoleChunkUnjudged || u.Requests != 2 || u.Corrected || u.Field != "itls" || u.Detail != want {
		t.Errorf("unjudged check %+v", u)
	}
	for i, r := range c.Requests {
		if want := map[bool]string{true: TrapRoleChunkTTFT}[i < 3]; r.Corrections != want {
			t.Errorf("request %d corrections %q, want %q", i, r.Corrections, want)
		}
	}
	rr := trapReport(t, path, analyze.Canonical, true)
	wantMean(t, rr, analyze.TTFT, 532)
	w := dataCheck(t, rr, TrapRoleChunkUnjudged)
	if !w.DataCheck || !w.Routine || w.Count != 2 || !strings.Contains(w.Message, "could not be judged") || !strings.Contains(w.Message, "first: request 3") {
		t.Errorf("warning %+v", w)
	}
	for _, x := range rr.Warnings {
		if x.Code == analyze.TrapTTSTExceedsTTFT {
			t.Errorf("2 short replies of 5 flagged as ttst_exceeds_ttft: %+v", x)
		}
	}
	raw := trapReport(t, path, analyze.Canonical, false)
	wantMean(t, raw, analyze.TTFT, 52)

	// Nothing judged: detailed-appended's chat object (4 completed replies,
	// 3, 5, 0 and 2 gaps).
	p := filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"])
	c, _ = importFile(t, p, "fx")
	var got []formats.DataCheck
	for _, ch := range c.Runs[0].Checks {
		if ch.Code == TrapRoleChunkUnjudged || ch.Code == TrapRoleChunkTTFT {
			got = append(got, ch)
		}
	}
	if len(got) != 1 || got[0].Code != TrapRoleChunkUnjudged || got[0].Requests != 4 ||
		!strings.HasSuffix(got[0].Detail, "no request of the run could be judged: whether its TTFT is the role chunk's is unknown") {
		t.Errorf("detailed-appended object 1: %+v", got)
	}
	if ch := c.Runs[1].Checks; slices.ContainsFunc(ch, func(x formats.DataCheck) bool { return x.Code == TrapRoleChunkUnjudged }) {
		t.Errorf("object 2 (completions backend) %+v", ch)
	}

	// No itls: the same chat fixture without --save-detailed's itls.
	d := &details{n: 3, ttfts: []float64{0.05, 0, 0.06}, errs: []string{"", "boom", ""}}
	if x := d.noGapsCheck("v1/chat/completions"); x == nil || x.Requests != 2 || !strings.HasPrefix(x.Detail, "the result has no itls") {
		t.Errorf("no itls: %+v", x)
	}
	if x := d.noGapsCheck("v1/completions"); x != nil {
		t.Errorf("completions: %+v", x)
	}
}

// TestTrapsNotOnCleanData: the vLLM corpus runs and the other fixtures
// trip no trap (the detectors are quiet on real, healthy data). An
// explanation is no trap: detailed-appended (and its truncated copy) has
// the goodput explanation of a one-token reply and, its chat replies being
// short, the role-chunk check's word that it could not judge them.
func TestTrapsNotOnCleanData(t *testing.T) {
	paths := []string{}
	for name, file := range corpusFiles {
		paths = append(paths, filepath.Join(corpus, name, file))
	}
	for name, file := range fixtures {
		if !strings.HasPrefix(name, "trap-") {
			paths = append(paths, filepath.Join("testdata", name, file))
		}
	}
	for _, p := range paths {
		var col formats.Collector
		if err := ingest.ImportFile(New(), p, ingest.Options{}, &col); err != nil {
			continue // the truncated fixture still imports; others must
		}
		for _, r := range col.Runs {
			for _, ch := range r.Checks {
				if tr, _ := tools.Trap(ch.Code); tr.Action != convention.ActionExplain {
					t.Errorf("%s: check %+v", p, ch)
				}
			}
		}
	}
}

// TestMedianAsSorted: median (quickselect) gives what sorting gives, on
// lists with repeated values, odd and even counts, and NaN.
func TestMedianAsSorted(t *testing.T) {
	seed := uint64(7)
	rnd := func() float64 { seed = seed*6364136223846793005 + 1442695040888963407; return float64(seed>>60) / 4 }
	for n := 1; n < 60; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rnd()
		}
		if n%7 == 0 {
			xs[n/2] = math.NaN()
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		want := sorted[n/2]
		if n%2 == 0 {
			want = (sorted[n/2-1] + sorted[n/2]) / 2
		}
		got := median(slices.Clone(xs))
		if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("n %d: median %v, sorted %v (%v)", n, got, want, xs)
		}
	}
}

// TestMayExceedMedian: the shortcut never refuses a request the exact
// test (first gap > 5 × the median of the others, median > 0) takes: on
// random lists of 4 to 40 gaps, with the first gap drawn around 5× the
// others' median (so that both sides of the threshold, and ties, occur),
// some gaps 0 or NaN.
func TestMayExceedMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	hits := 0
	for range 200_000 {
		rest := make([]float64, 4+rng.IntN(37))
		for i := range rest {
			switch rng.IntN(20) {
			case 0:
				rest[i] = 0
			case 1:
				rest[i] = math.NaN()
			default:
				rest[i] = float64(1+rng.IntN(30)) / 1000
			}
		}
		sorted := slices.Clone(rest)
		med := median(sorted)
		g0 := med * roleChunkFactor * (1 + float64(rng.IntN(5)-2)*1e-12)
		if rng.IntN(3) == 0 {
			g0 = float64(rng.IntN(200)) / 1000
		}
		exact := med > 0 && g0 > roleChunkFactor*med
		if exact {
			hits++
		}
		if exact && !mayExceedMedian(g0, rest) {
			t.Fatalf("first gap %v, others %v (median %v): refused", g0, rest, med)
		}
	}
	if hits < 1000 {
		t.Errorf("only %d hits drawn", hits)
	}
}

// TestTrapGoodputSingleToken: vLLM's goodput gives a successful request of
// at most one output token TPOT 0 (serve.py calculate_metrics; vllm-bench's
// calculator.rs mirrors it), so it meets any TPOT SLO; tokentrace's TPOT
// is undefined there and the TPOT constraint does not apply (TPOT.Vacuous):
// the same verdict. Object 1 of the detailed-appended fixture (a --goodput
// run, request_goodput 2.5 over 1.2 s) has one such request, request 3
// (output_lens 1, TTFT 120 ms): the explanation counts it and is routine
// (no data warning). Under vLLM's own SLO (ttft ≤ 130 ms, e2el ≤ 250 ms)
// tokentrace's goodput counts 3 good, vLLM's 2.5 × 1.2; adding tpot ≤ 1 ms
// (every multi-token request's TPOT is 20–25 ms) leaves request 3 alone
// good, met vacuously on TPOT, as vLLM's TPOT 0 would have it. Object 2
// (goodput null) and a run without a one-token reply get no explanation.
func TestTrapGoodputSingleToken(t *testing.T) {
	path := filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"])
	var col formats.Collector
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "fx"}, &col); err != nil {
		t.Fatal(err)
	}
	var found []formats.DataCheck
	for _, r := range col.Runs {
		for _, ch := range r.Checks {
			if ch.Code == TrapGoodputSingleToken {
				found = append(found, ch)
			}
		}
	}
	if len(found) != 1 || found[0].Requests != 1 || found[0].Field != "output_lens" ||
		found[0].Detail != "request 3: output_lens 1, TPOT 0 in vLLM's goodput, undefined in tokentrace's (the TPOT constraint does not apply)" {
		t.Errorf("checks %+v (object 2, goodput null, must have none)", found)
	}
	for _, c := range []struct {
		slo           string
		good, vacuous int
	}{{"ttft<=130ms, e2e<=250ms", 3, 0}, {"ttft<=130ms, tpot<=1ms, e2e<=250ms", 1, 1}} {
		s, err := slo.ParseSLO(c.slo)
		if err != nil {
			t.Fatal(err)
		}
		a := analyze.NewAnalyzer(analyze.Canonical)
		if err := ingest.ImportFile(New(), path, ingest.Options{Label: "fx"}, a); err != nil {
			t.Fatal(err)
		}
		rep, err := a.Report(analyze.Options{Tools: tools, SLO: s})
		if err != nil {
			t.Fatal(err)
		}
		rr := rep.Runs[0]
		if g := rr.Goodput; g == nil || g.Good != c.good || g.TPOTVacuous != c.vacuous || g.Total != 5 {
			t.Errorf("%s: goodput %+v", c.slo, g)
		}
		var w *analyze.Warning
		for i := range rr.Warnings {
			if rr.Warnings[i].Code == TrapGoodputSingleToken {
				w = &rr.Warnings[i]
			}
		}
		if w == nil || !w.DataCheck || !w.Routine || w.Count != 1 {
			t.Errorf("%s: warning %+v", c.slo, w)
		}
	}
	p := filepath.Join("testdata", "trap-role-chunk", fixtures["trap-role-chunk"])
	col = formats.Collector{}
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &col); err != nil {
		t.Fatal(err)
	}
	for _, ch := range col.Runs[0].Checks {
		if ch.Code == TrapGoodputSingleToken {
			t.Errorf("%s: %+v", p, ch)
		}
	}
}

// TestTrapRustBenchDefaults: a result of the Rust vllm-bench
// (src/output/json.rs at f313182: keys sorted, compact; steady_state
// always, failed_requests when a request failed; max_model_len) is read as
// vLLM's, its notes name the implementation and one explanation says how
// its defaults differ. The rust-bench fixture (--save-detailed, rate inf,
// no --max-concurrency, 4 prompts, 1 failed with HTTP 503) has the e2el
// percentiles of the Rust default --percentile-metrics, steady_state null
// and one failed_requests entry; its metrics are vLLM's (TTFT [50, 60, 40]
// → mean 50, E2E [110, 120, 120] → mean 116.667). A Python result
// (detailed-appended) gets no such check; a --max-concurrency run with a
// steady-state window says so.
func TestTrapRustBenchDefaults(t *testing.T) {
	path := filepath.Join("testdata", "rust-bench", fixtures["rust-bench"])
	c, warnings := importFile(t, path, "fx")
	run := c.Runs[0]
	var got []formats.DataCheck
	for _, ch := range run.Checks {
		if ch.Code == TrapRustBenchDefaults {
			got = append(got, ch)
		}
	}
	want := "vllm-bench (Rust): steady_state null (no --max-concurrency: no window), failed_requests of 1 (not imported); " +
		"e2el percentiles present, as its default --percentile-metrics ttft,tpot,itl,e2el gives them (Python's default: ttft,tpot,itl); " +
		"max_concurrency null: unlimited, as in Python (vllm-bench prints num_prompts as the maximum)"
	if len(got) != 1 || got[0].Field != "steady_state" || got[0].Requests != 0 || got[0].Detail != want {
		t.Fatalf("checks %+v", got)
	}
	if !slices.ContainsFunc(run.Notes, func(n string) bool { return strings.HasPrefix(n, "implementation: the Rust vllm-bench") }) {
		t.Errorf("notes %q", run.Notes)
	}
	for _, n := range append(run.Notes, warnings...) {
		if strings.Contains(n, "steady_state") && strings.Contains(n, "does not write") || strings.Contains(n, "max_model_len") || strings.Contains(n, "failed_requests\"") {
			t.Errorf("vllm-bench's keys taken for unknown ones: %q", n)
		}
	}
	if run.RequestCount != 4 || c.Requests[2].Status != formats.StatusError || !strings.Contains(run.ConfigJSON, `"steady_state":null`) || strings.Contains(run.ConfigJSON, "failed_requests") {
		t.Errorf("run: %d requests, request 2 %s, config %s", run.RequestCount, c.Requests[2].Status, run.ConfigJSON)
	}
	rr := trapReport(t, path, analyze.Canonical, true)
	wantMean(t, rr, analyze.TTFT, 50)
	wantMean(t, rr, analyze.E2E, 350.0/3)
	w := dataCheck(t, rr, TrapRustBenchDefaults)
	if !w.DataCheck || !w.Routine || !strings.Contains(w.Message, "not vllm bench serve's") {
		t.Errorf("warning %+v", w)
	}

	p := filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"])
	py, _ := importFile(t, p, "fx")
	for _, r := range py.Runs {
		for _, ch := range r.Checks {
			if ch.Code == TrapRustBenchDefaults {
				t.Errorf("Python result: %+v", ch)
			}
		}
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"max_concurrency":null`), []byte(`"max_concurrency":2`), 1)
	data = bytes.Replace(data, []byte(`"steady_state":null`), []byte(`"steady_state":{"request_throughput":14.5}`), 1)
	data = bytes.Replace(data, []byte(`"failed_requests":[{`), []byte(`"failed_requests_x":[{`), 1)
	alt := filepath.Join(t.TempDir(), "openai-chat-infqps-concurrency2-Qwen3-8B-20260815-093000.json")
	if err := os.WriteFile(alt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ = importFile(t, alt, "fx")
	n := 0
	for _, ch := range c.Runs[0].Checks {
		if ch.Code != TrapRustBenchDefaults {
			continue
		}
		n++
		if !strings.HasPrefix(ch.Detail, "vllm-bench (Rust): steady_state set (kept in config_json); e2el") || !strings.HasSuffix(ch.Detail, "; max_concurrency 2") {
			t.Errorf("with a window: %+v", ch)
		}
	}
	if n != 1 {
		t.Errorf("with a window: %d checks", n)
	}
}
