package sglangbench

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
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
// no check, and a run whose chunks carry several tokens (the generated
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
			if len(r.Checks) > 0 {
				t.Errorf("%s: checks %+v", p, r.Checks)
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
