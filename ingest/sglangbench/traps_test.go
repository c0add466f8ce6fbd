package sglangbench

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

// TestTrapOutputLenStuck: SGLang's OpenAI-style clients left output_len
// at the requested max_tokens when the stream's usage did not reach them
// (sgl-project/sglang#24254, #10746). The fixture (testdata/
// make_trap_stuck.py; backend sglang-oai, --disable-ignore-eos, 16 tokens
// requested) has four replies of 5, 8, 3 and 16 one-token chunks, every
// output_len 16, total_output_tokens 64 against 32 re-tokenized.
//
// Import: requests 0–2 (output_len above their messages) are corrected,
// request 3 (16 for 16) is not; 3 of the 4 are at ≥ 2× their messages.
// Canonical, corrected (no tokenizer): N = the messages [5, 8, 3, 16], OSL
// mean 8; TPOT = (last − first)/(N − 1) = [40/4, 140/7, 40/2, 150/15] ms →
// mean 15. --no-corrections: N = 16 each, OSL 16, TPOT [40, 140, 40,
// 150]/15 → mean 370/60. Under SGLang's convention its stuck
// total_output_tokens (64) and output_throughput (128 tok/s) are
// reproduced, and its ITL (pooled chunk gaps, mean 370/28 ms).
func TestTrapOutputLenStuck(t *testing.T) {
	path := filepath.Join("testdata", "trap-stuck", fixtures["trap-stuck"])
	c, _ := importFile(t, path, "fx")
	ch := traptest.Check(t, &c.Runs[0], TrapOutputLenStuck)
	if ch.Requests != 3 || !ch.Corrected || ch.Field != "output_lens" ||
		ch.Detail != "request 0: output_len 16 for 5 content messages; 3 of 4 completed requests at ≥ 2× their messages; total_output_tokens 64, re-tokenized 32" {
		t.Errorf("check %+v", ch)
	}
	for i, want := range []string{TrapOutputLenStuck, TrapOutputLenStuck, TrapOutputLenStuck, ""} {
		if r := c.Requests[i]; r.Corrections != want || *r.OutputTokens != 16 {
			t.Errorf("request %d: corrections %q, output_tokens %d", i, r.Corrections, *r.OutputTokens)
		}
	}

	rr := traptest.Report(t, New(), path, tools, analyze.Canonical, true)
	traptest.WantMean(t, rr, analyze.OSL, 8)
	traptest.WantMean(t, rr, analyze.TPOT, 15)
	w := traptest.Warning(t, rr, TrapOutputLenStuck)
	if !w.DataCheck || w.Count != 3 || !strings.Contains(w.Message, "corrected in 3 request(s)") || !strings.Contains(w.Source, "sglang/issues/24254") {
		t.Errorf("warning %+v", w)
	}

	raw := traptest.Report(t, New(), path, tools, analyze.Canonical, false)
	traptest.WantMean(t, raw, analyze.OSL, 16)
	traptest.WantMean(t, raw, analyze.TPOT, 370.0/60)

	own := traptest.Report(t, New(), path, tools, Profile, true)
	traptest.WantMean(t, own, analyze.ITL, 370.0/28)
	traptest.Reproduction(t, own, TrapOutputLenStuck, "total_output_tokens value", "output_throughput value", "itl_ms mean", "ttft_ms mean")
}

// TestTrapOutputLenStuckCorpus: the corpus run dlora-oldformat-1req (the
// 2024 script, backend "sglang", which then used the OpenAI completions
// client) is the trap in real data: total_output_tokens 285, the requested
// length, against 3 re-tokenized (its SOURCE.md). Summary only: both lines'
// runs are flagged, nothing is corrected.
func TestTrapOutputLenStuckCorpus(t *testing.T) {
	c, _ := importFile(t, filepath.Join(corpus, "dlora-oldformat-1req", corpusFiles["dlora-oldformat-1req"]), "dlora")
	if len(c.Runs) != 2 {
		t.Fatalf("%d runs", len(c.Runs))
	}
	for _, run := range c.Runs {
		ch := traptest.Check(t, &run, TrapOutputLenStuck)
		if ch.Corrected || ch.Requests != 0 || ch.Field != "total_output_tokens" || !strings.Contains(ch.Detail, "total_output_tokens 285 against 3 re-tokenized") {
			t.Errorf("%s: check %+v", run.RunID, ch)
		}
	}
	rr := traptest.Report(t, New(), filepath.Join(corpus, "dlora-oldformat-1req", corpusFiles["dlora-oldformat-1req"]), tools, Profile, true)
	if w := traptest.Warning(t, rr, TrapOutputLenStuck); w.Count != 0 || !strings.Contains(w.Message, "total_output_tokens 285") {
		t.Errorf("warning %+v", w)
	}
}

// TestTrapsNotOnCleanData: the other SGLang corpus runs and fixtures trip
// no check but explanations (output-details has failures beside its
// concurrency), and a run whose chunks carry several tokens (the generated
// text re-tokenizes to the count) is not taken for a stuck one.
func TestTrapsNotOnCleanData(t *testing.T) {
	paths := []string{}
	for name, file := range corpusFiles {
		if name != "dlora-oldformat-1req" { // the trap itself: TestTrapOutputLenStuckCorpus
			paths = append(paths, filepath.Join(corpus, name, file))
		}
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
	// The stuck fixture's run with a re-tokenized total equal to the
	// output total: multi-token chunks, no check.
	d := &details{n: 2, ttfts: []float64{0.05, 0.05}, outLens: []float64{16, 16}, itls: [][]float64{{0.01, 0.01}, {0.01, 0.01, 0.01}}}
	v := func(x float64) *float64 { return &x }
	rep := []formats.ReportedStat{{Metric: "total_output_tokens", Stat: "value", Value: v(32)}, {Metric: "total_output_tokens_retokenized", Stat: "value", Value: v(31)}}
	if f := d.findStuck(false, rep); f.check != nil {
		t.Errorf("multi-token chunks taken for a stuck count: %+v", f.check)
	}
	if f := d.findStuck(false, rep[:1]); f.check == nil || f.check.Requests != 2 {
		t.Errorf("without a re-tokenized total: %+v", f.check)
	}
	if f := d.findStuck(true, rep[:1]); f.check != nil {
		t.Errorf("native backend judged: %+v", f.check)
	}
	if ch := summaryStuck(false, rep); ch != nil {
		t.Errorf("summary with a re-tokenized total of 31 for 32: %+v", ch)
	}
}

// TestTrapConcurrencySuccesses: SGLang's concurrency is Σ latency of the
// successful requests / duration (metrics.py do_calculate_metrics), so the
// failures, in flight until they failed, are left out. The output-details
// fixture's two runs report 0.9975 (3 successes, Σ latency 199.5 ms, over
// 0.2 s; 1 failed of 4) and 0.32833 (2 successes, 98.5 ms, over 0.3 s; 1
// failed of 3): each gets the explanation, counting its failure, routine
// (no data warning); the reproduction says why concurrency cannot be
// recomputed and that it counts successes only. A run without failures,
// or without a reported concurrency, gets none.
func TestTrapConcurrencySuccesses(t *testing.T) {
	path := filepath.Join("testdata", "output-details", fixtures["output-details"])
	c, _ := importFile(t, path, "od")
	want := []string{
		"concurrency 0.9975 = Σ latency of the 3 successful request(s) / duration 0.2 s; the 1 failed request(s) of 4, in flight until they failed, are not in it (tokentrace's in-flight count includes them)",
		"concurrency 0.3283 = Σ latency of the 2 successful request(s) / duration 0.3 s; the 1 failed request(s) of 3, in flight until they failed, are not in it (tokentrace's in-flight count includes them)",
	}
	if len(c.Runs) != 2 {
		t.Fatalf("%d runs", len(c.Runs))
	}
	for i, r := range c.Runs {
		if len(r.Checks) != 1 || r.Checks[0].Code != TrapConcurrencySuccesses || r.Checks[0].Requests != 1 || r.Checks[0].Field != "concurrency" || r.Checks[0].Detail != want[i] {
			t.Errorf("run %d checks %+v", i, r.Checks)
		}
	}
	a := analyze.NewAnalyzer(ProfileNative)
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "od"}, a); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: func(*formats.Run) convention.Convention { return ProfileNative }})
	if err != nil {
		t.Fatal(err)
	}
	rr := rep.Runs[0]
	found := false
	for _, w := range rr.Warnings {
		if w.Code == TrapConcurrencySuccesses {
			found = true
			if !w.DataCheck || !w.Routine || w.Count != 1 || !strings.Contains(w.Message, "failed requests, in flight until they failed, are left out") {
				t.Errorf("warning %+v", w)
			}
		}
	}
	if !found {
		t.Errorf("no %s warning: %+v", TrapConcurrencySuccesses, rr.Warnings)
	}
	items := 0
	for _, it := range rr.Reproduction.Items {
		if it.Metric == "concurrency" {
			items++
			if it.Status != "not_reproducible" || !strings.Contains(it.Reason, "Σ latency of the successful requests / duration") || float64(it.Reported) != 0.9975 {
				t.Errorf("concurrency item %+v", it)
			}
		}
	}
	if items != 1 {
		t.Errorf("%d concurrency items", items)
	}
	v := func(x float64) *float64 { return &x }
	conc := []formats.ReportedStat{{Metric: "concurrency", Stat: "value", Value: v(7.78)}}
	if ch := concurrencyCheck(conc, 0, 50); ch != nil {
		t.Errorf("no failure: %+v", ch)
	}
	if ch := concurrencyCheck(nil, 2, 50); ch != nil {
		t.Errorf("no concurrency reported: %+v", ch)
	}
	if ch := concurrencyCheck(conc, 2, 50); ch == nil || ch.Requests != 2 || !strings.Contains(ch.Detail, "/ SGLang's duration;") {
		t.Errorf("no duration reported: %+v", ch)
	}
}
