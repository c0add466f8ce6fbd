package registry

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
	"github.com/tokentrace/tokentrace/ingest/genaiperf"
	"github.com/tokentrace/tokentrace/ingest/guidellm"
	"github.com/tokentrace/tokentrace/ingest/inferenceperf"
	"github.com/tokentrace/tokentrace/ingest/llmperf"
	"github.com/tokentrace/tokentrace/ingest/serverlog"
	"github.com/tokentrace/tokentrace/ingest/sglangbench"
	"github.com/tokentrace/tokentrace/ingest/vllmbench"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

// The shared value checks (ingest/checks.go, analyze/TRAPS.md), one test
// per catalogue entry, each on small files in every concerned tool's real
// layout: the importers' hand-made fixtures (their FIXTURES.md give the
// hand-computed values) with one value made bad, and the files of
// testdata/values/. Each offending value is counted in the run's checks
// (code, field, requests, the first with its position), warned about at
// import, and left null, never 0 — or, for a time column in another unit,
// the import fails with an error naming the position.

var valueSet = convention.NewSet(analyze.Canonical, Tools()...).WithTraps(analyze.Traps...).WithTraps(Traps()...)

// edit replaces old by new, once, in a fixture file.
type edit struct{ file, old, new string }

// variant copies fixture directory src to a temporary directory with the
// edits applied (each old must occur exactly once) and returns the path of
// file main in the copy. Line keeps only the first n lines of every file
// (0: all).
func variant(t *testing.T, src, main string, lines int, edits ...edit) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if lines > 0 {
			b = bytes.Join(bytes.SplitN(b, []byte("\n"), lines+1)[:lines], []byte("\n"))
		}
		for _, ed := range edits {
			if ed.file != e.Name() {
				continue
			}
			if n := bytes.Count(b, []byte(ed.old)); n != 1 {
				t.Fatalf("%s: %q occurs %d times", e.Name(), ed.old, n)
			}
			b = bytes.Replace(b, []byte(ed.old), []byte(ed.new), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, main)
}

// imported is an import's rows and the warnings it passed to Options.Warn.
type imported struct {
	*formats.Collector
	warnings []string
}

// eventsOf counts the events of request key of run.
func (c imported) eventsOf(run string, key int64) int {
	n := 0
	for _, e := range c.Events {
		if e.RunID == run && e.RequestKey == key {
			n++
		}
	}
	return n
}

func importValues(t *testing.T, im ingest.Importer, path string) imported {
	t.Helper()
	out := imported{Collector: &formats.Collector{}}
	opt := ingest.Options{Label: "fx", Warn: func(s string) { out.warnings = append(out.warnings, s) }}
	if err := ingest.ImportFile(im, path, opt, out.Collector); err != nil {
		t.Fatal(err)
	}
	if len(out.Runs) == 0 {
		t.Fatalf("%s: no run", path)
	}
	return out
}

// wantCheck finds the run's check of code on field, with the number of
// requests and a detail naming the first offending value and its
// position; the import warned about it.
func (c imported) wantCheck(t *testing.T, run int, code, field string, requests int64, detail string) {
	t.Helper()
	for _, ch := range c.Runs[run].Checks {
		if ch.Code != code || ch.Field != field {
			continue
		}
		if ch.Requests != requests || !strings.Contains(ch.Detail, detail) || ch.Corrected {
			t.Errorf("check %+v, want %d request(s) and detail %q", ch, requests, detail)
		}
		for _, w := range c.warnings {
			if strings.Contains(w, code) && strings.Contains(w, "field "+field) && strings.Contains(w, detail) {
				return
			}
		}
		t.Errorf("no warning for %s on %s: %q", code, field, c.warnings)
		return
	}
	t.Errorf("run %s: no %s check on %s: %+v", c.Runs[run].RunID, code, field, c.Runs[run].Checks)
}

// noValueChecks fails when a run has a shared value check.
func (c imported) noValueChecks(t *testing.T) {
	t.Helper()
	for _, r := range c.Runs {
		for _, ch := range r.Checks {
			if strings.HasPrefix(ch.Code, "value_") || ch.Code == ingest.CheckTimeUnit {
				t.Errorf("run %s: check %+v on clean data", r.RunID, ch)
			}
		}
	}
}

// report analyses path under the canonical convention.
func report(t *testing.T, im ingest.Importer, path string) *analyze.RunReport {
	t.Helper()
	return traptest.Report(t, im, path, valueSet, analyze.Canonical, true)
}

func wantN(t *testing.T, rr *analyze.RunReport, x *analyze.Metric, n int) {
	t.Helper()
	if got := rr.Metrics.Of(x).N; got != n {
		t.Errorf("%s %s n = %d, want %d", rr.RunID, x.Key, got, n)
	}
}

// vllmObject1 is object 1 of the vLLM fixture detailed-appended (its
// FIXTURES.md gives vLLM's own values: TTFT [120, 150, 90, 110] ms, TPOT
// [25, 20, 22.5] → mean 22.5, ITL 9 gaps → mean 24.444, E2E [195, 250, 90,
// 155]); request 2 failed.
const (
	vllmFixture = "../vllmbench/testdata/detailed-appended"
	vllmFile    = "openai-chat-4.0qps-concurrency2-Llama-3.1-8B-Instruct-20260301-101500.json"
)

func vllmVariant(t *testing.T, old, new string) string {
	return variant(t, vllmFixture, vllmFile, 1, edit{vllmFile, old, new})
}

// TestValueNotFinite: NaN and infinities, in every layout that can hold
// them, are null and counted, never 0.
func TestValueNotFinite(t *testing.T) {
	t.Run("vllm NaN in itls", func(t *testing.T) {
		// Request 1's third gap (0.04 s) is NaN. Read as a 0-ns gap, its
		// last token came 40 ms early: TPOT (210 − 150)/5 = 12 ms and the
		// TPOT mean 19.83 instead of 22.5. Now no event of request 1 is
		// rebuilt (those after the gap cannot be placed): its first token
		// is ttfts[1], its last latencies[1], so TPOT = (250 − 150)/5 = 20
		// and the mean is vLLM's 22.5; its gaps leave pooled ITL: the 5 of
		// requests 0 and 4, [20, 25, 30, 30, 15] → mean 24.
		p := vllmVariant(t, `"itls": [[0.02, 0.025, 0.03], [0.02, 0.02, 0.04, 0.02]`, `"itls": [[0.02, 0.025, 0.03], [0.02, 0.02, NaN, 0.02]`)
		c := importValues(t, vllmbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotFinite, "itls", 1, "first request 1 (itls[1][2]): NaN; left null")
		r := c.Requests[1]
		if r.Status != formats.StatusOK || *r.FirstTokenOffsetNs != 150e6 || *r.LastTokenOffsetNs != 250e6 || *r.SecondTokenOffsetNs != 170e6 || r.TokenMessageCount != 5 {
			t.Errorf("request 1: %+v", r)
		}
		rr := report(t, vllmbench.New(), p)
		traptest.WantMean(t, rr, analyze.TPOT, 22.5)
		traptest.WantMean(t, rr, analyze.ITL, 24)
		traptest.WantMean(t, rr, analyze.E2E, (195+250+90+155)/4.0)
		wantN(t, rr, analyze.ITL, 5)
		w := traptest.Warning(t, rr, ingest.CheckNotFinite)
		if !w.DataCheck || w.Count != 1 || w.Field != "itls" || !strings.Contains(w.Message, "set to null (unknown), not 0") {
			t.Errorf("warning %+v", w)
		}
	})
	t.Run("vllm Infinity in ttfts", func(t *testing.T) {
		// Request 0's TTFT is Infinity: null; the request stays completed
		// with its latency (E2E 195 ms) and no TPOT. TTFT [150, 90, 110]
		// → mean 116.667; TPOT [20, 22.5] → 21.25.
		p := vllmVariant(t, `"ttfts": [0.12,`, `"ttfts": [Infinity,`)
		c := importValues(t, vllmbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotFinite, "ttfts", 1, "first request 0 (ttfts[0]): Infinity")
		if r := c.Requests[0]; r.Status != formats.StatusOK || r.FirstTokenOffsetNs != nil || r.ReportedTTFTMs != nil || *r.LastTokenOffsetNs != 195e6 {
			t.Errorf("request 0: %+v", r)
		}
		rr := report(t, vllmbench.New(), p)
		traptest.WantMean(t, rr, analyze.TTFT, 350/3.0)
		traptest.WantMean(t, rr, analyze.TPOT, 21.25)
		traptest.WantMean(t, rr, analyze.E2E, (195+250+90+155)/4.0)
	})
	t.Run("sglang NaN in itls", func(t *testing.T) {
		// Native backend, request 0: no event rebuilt, TTFT kept (50 ms),
		// its last token unknown (SGLang saves no latency).
		p := variant(t, "../sglangbench/testdata/output-details", "sglang_0301_4_64_8.jsonl", 1,
			edit{"sglang_0301_4_64_8.jsonl", `"itls": [[0.008, 0.004,`, `"itls": [[0.008, NaN,`})
		c := importValues(t, sglangbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotFinite, "itls", 1, "first request 0 (line 1, itls[0][1]): NaN")
		r := c.Requests[0]
		if r.Status != formats.StatusOK || *r.FirstTokenOffsetNs != 50e6 || r.LastTokenOffsetNs != nil || c.eventsOf(r.RunID, 0) != 0 {
			t.Errorf("request 0: %+v", r)
		}
	})
	t.Run("llmperf NaN string", func(t *testing.T) {
		p := variant(t, "../llmperf/testdata/trap-bos", "individual_responses.json", 0,
			edit{"individual_responses.json", `"ttft_s": 0.3,`, `"ttft_s": "NaN",`})
		c := importValues(t, llmperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotFinite, "ttft_s", 1, `first request 1 (record 2): NaN`)
		if c.Requests[1].FirstTokenOffsetNs != nil || c.Requests[1].ReportedTTFTMs != nil {
			t.Errorf("row 1: %+v", c.Requests[1])
		}
	})
	t.Run("aiperf null gap", func(t *testing.T) {
		// testdata/values/aiperf record 2: inter_chunk_latency [10, null]:
		// no events; its offsets from the metrics (TTFT 50, TTST 10,
		// latency 80 ms).
		c := importValues(t, aiperf.New(), "testdata/values/aiperf/profile_export.jsonl")
		c.wantCheck(t, 0, ingest.CheckNotFinite, "inter_chunk_latency", 1, "first request 2 (line 3): NaN")
		r := c.Requests[2]
		if r.Status != formats.StatusOK || *r.FirstTokenOffsetNs != 50e6 || *r.SecondTokenOffsetNs != 60e6 || *r.LastTokenOffsetNs != 80e6 || c.eventsOf(r.RunID, 2) != 0 {
			t.Errorf("record 2: %+v", r)
		}
	})
	t.Run("guidellm bare NaN", func(t *testing.T) {
		// Request a1's first token time is NaN: TTFT null. The six TTFTs
		// of the fixture sum to 800 ms, a1's is 120: mean 680/5 = 136.
		p := variant(t, "../guidellm/testdata/v04-requests", "benchmarks.json", 0,
			edit{"benchmarks.json", `"first_token_iteration": 1750000100.12,`, `"first_token_iteration": NaN,`})
		c := importValues(t, guidellm.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotFinite, "info.timings.first_token_iteration", 1, "first request 0 (benchmark 1: requests.successful[0]): NaN")
		if c.Requests[0].FirstTokenOffsetNs != nil || c.Requests[0].Status != formats.StatusEmpty && c.Requests[0].Status != formats.StatusOK {
			t.Errorf("a1: %+v", c.Requests[0])
		}
		rr := report(t, guidellm.New(), p)
		traptest.WantMeanWithin(t, rr, analyze.TTFT, 136, 1e-6) // float epoch seconds
		wantN(t, rr, analyze.TTFT, 5)
	})
	t.Run("inference-perf number past a double", func(t *testing.T) {
		// 1e999 is infinite to Python and here: record 2's end time is
		// unknown, and so are its times against its start; TTFT [40, 30,
		// 40] (records 0, 2, 4) → mean 36.667.
		p := variant(t, "../inferenceperf/testdata/edge-v06", "per_request_lifecycle_metrics.json", 0,
			edit{"per_request_lifecycle_metrics.json", `"end_time": 2000.3,`, `"end_time": 1e999,`})
		c := importValues(t, inferenceperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotFinite, "end_time", 1, "first request 1 (record 2): Infinity")
		if r := c.Requests[1]; r.StartNs != nil || r.FirstTokenOffsetNs != nil || r.StreamEndOffsetNs != nil || r.Status != formats.StatusOK || *r.OutputTokens != 3 {
			t.Errorf("record 2: %+v", r)
		}
		rr := report(t, inferenceperf.New(), p)
		traptest.WantMean(t, rr, analyze.TTFT, 110/3.0)
	})
	t.Run("server log nan", func(t *testing.T) {
		// A logging proxy's line with "ttft_ms": "nan" (Python's repr).
		p := variant(t, "../../testdata/server-logs/anud18-trace-samples", "sample_trace.jsonl", 0,
			edit{"sample_trace.jsonl", `"ttft_ms": 76.3,`, `"ttft_ms": "nan",`})
		c := importValues(t, serverlog.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotFinite, "ttft_ms", 1, "first request 1 (line 2): NaN")
		if c.Requests[1].ServerTTFTNs != nil || *c.Requests[1].ServerE2ENs != 846500000 {
			t.Errorf("line 2: %+v", c.Requests[1])
		}
	})
}

// TestValueNegative: a negative time, duration or count is null and
// counted, never 0 and never left in the statistics.
func TestValueNegative(t *testing.T) {
	t.Run("vllm negative ttft", func(t *testing.T) {
		// TTFT [120, 90, 110] → mean 106.667 (request 1's −0.15 s left out).
		p := vllmVariant(t, `"ttfts": [0.12, 0.15,`, `"ttfts": [0.12, -0.15,`)
		c := importValues(t, vllmbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckNegative, "ttfts", 1, "first request 1 (ttfts[1]): -0.15; left null")
		rr := report(t, vllmbench.New(), p)
		traptest.WantMean(t, rr, analyze.TTFT, 320/3.0)
		wantN(t, rr, analyze.TTFT, 3)
	})
	t.Run("llmperf negative ttft_s and count", func(t *testing.T) {
		// trap-bos (testdata FIXTURES: 10, 5 and 20 generated tokens,
		// number_output_tokens 11, 6, 21; TTFT 200, 300, 100 ms; last
		// content 1.1, 0.84, 2.1 s). Row 0's ttft_s −0.2 and row 1's
		// number_output_tokens −7 are null: row 1's output count was 0
		// (max(−7 − 1, 0)), it is now unknown. TTFT [300, 100] → 200;
		// OSL [10, 20] → 15 (not [10, 0, 20] → 10); TPOT only row 2's
		// (2100 − 100)/19.
		p := variant(t, "../llmperf/testdata/trap-bos", "individual_responses.json", 0,
			edit{"individual_responses.json", `"ttft_s": 0.2,`, `"ttft_s": -0.2,`},
			edit{"individual_responses.json", `"number_output_tokens": 6,`, `"number_output_tokens": -7,`})
		c := importValues(t, llmperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckNegative, "ttft_s", 1, "first request 0 (record 1): -0.2")
		c.wantCheck(t, 0, ingest.CheckNegative, "number_output_tokens", 1, "first request 1 (record 2): -7")
		if r := c.Requests[1]; r.OutputTokens != nil || r.ReportedOutputTokens != nil {
			t.Errorf("row 1: output %v, reported %v", r.OutputTokens, r.ReportedOutputTokens)
		}
		rr := report(t, llmperf.New(), p)
		traptest.WantMean(t, rr, analyze.TTFT, 200)
		traptest.WantMean(t, rr, analyze.OSL, 15)
		traptest.WantMean(t, rr, analyze.TPOT, 2000/19.0)
	})
	t.Run("sglang negative output_len", func(t *testing.T) {
		p := variant(t, "../sglangbench/testdata/output-details", "sglang_0301_4_64_8.jsonl", 1,
			edit{"sglang_0301_4_64_8.jsonl", `"output_lens": [6, 4, 0, 3]`, `"output_lens": [6, -4, 0, 3]`})
		c := importValues(t, sglangbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckNegative, "output_lens", 1, "first request 1 (line 1, output_lens[1]): -4")
		if c.Requests[1].OutputTokens != nil {
			t.Errorf("request 1 output %d", *c.Requests[1].OutputTokens)
		}
	})
	t.Run("aiperf negative count", func(t *testing.T) {
		// testdata/values/aiperf record 3: output_sequence_length −3: N
		// falls back to its message count (2).
		c := importValues(t, aiperf.New(), "testdata/values/aiperf/profile_export.jsonl")
		c.wantCheck(t, 0, ingest.CheckNegative, "output_sequence_length", 1, "first request 3 (line 4): -3")
		if r := c.Requests[3]; r.OutputTokens != nil || r.ReportedOutputTokens != nil {
			t.Errorf("record 3: %+v", r)
		}
	})
	t.Run("aiperf end before start", func(t *testing.T) {
		p := variant(t, "testdata/values/aiperf", "profile_export.jsonl", 0,
			edit{"profile_export.jsonl", `"request_end_ns":1700000000112000000`, `"request_end_ns":1699999999000000000`})
		c := importValues(t, aiperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckNegative, "request_end_ns", 1, "first request 0 (line 1): 1699999999000000000 (-1000000000 ns after request_start_ns)")
		if c.Requests[0].StreamEndOffsetNs != nil {
			t.Errorf("record 0: stream end %d", *c.Requests[0].StreamEndOffsetNs)
		}
	})
	t.Run("genai-perf response before its request", func(t *testing.T) {
		// vllm-chat-stream request 1 (start …300 ms) with a response
		// timestamp at …200 ms: the request keeps its status and counts,
		// loses its start, offsets and events; request 0's usage count −3
		// is null and N falls back to its token messages.
		p := variant(t, "../genaiperf/testdata/vllm-chat-stream", "profile_export.json", 0,
			edit{"profile_export.json", `1700000000400000000`, `1700000000200000000`},
			edit{"profile_export.json", `\"completion_tokens\":3`, `\"completion_tokens\":-3`})
		c := importValues(t, genaiperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckNegative, "response_timestamps", 1, "first request 1 (response_timestamps[0]): -100000000")
		c.wantCheck(t, 0, ingest.CheckNegative, "usage.completion_tokens", 1, "first request 0: -3")
		r := c.Requests[1]
		if r.Status != formats.StatusOK || r.StartNs != nil || r.FirstTokenOffsetNs != nil || c.eventsOf(r.RunID, 1) != 0 {
			t.Errorf("request 1: %+v", r)
		}
		if r := c.Requests[0]; r.OutputTokensSource != formats.SourceChunkCount || *r.OutputTokens != 3 {
			t.Errorf("request 0: output %v from %s", r.OutputTokens, r.OutputTokensSource)
		}
	})
	t.Run("guidellm first token before the start", func(t *testing.T) {
		p := variant(t, "../guidellm/testdata/v04-requests", "benchmarks.json", 0,
			edit{"benchmarks.json", `"first_token_iteration": 1750000100.12,`, `"first_token_iteration": 1750000099.5,`})
		c := importValues(t, guidellm.New(), p)
		c.wantCheck(t, 0, ingest.CheckNegative, "info.timings.first_token_iteration", 1, "first request 0 (benchmark 1: requests.successful[0]): 1750000099.5 (-0.5 s from the request's start)")
		traptest.WantMeanWithin(t, report(t, guidellm.New(), p), analyze.TTFT, 136, 1e-6)
	})
	t.Run("inference-perf end before start", func(t *testing.T) {
		p := variant(t, "../inferenceperf/testdata/edge-v06", "per_request_lifecycle_metrics.json", 0,
			edit{"per_request_lifecycle_metrics.json", `"end_time": 2000.3,`, `"end_time": 2000.1,`})
		c := importValues(t, inferenceperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckNegative, "end_time", 1, "first request 1 (record 2): 2000.1 (-0.")
		traptest.WantMean(t, report(t, inferenceperf.New(), p), analyze.TTFT, 110/3.0)
	})
	t.Run("server log negative latency", func(t *testing.T) {
		p := variant(t, "../../testdata/server-logs/anud18-trace-samples", "sample_trace.jsonl", 0,
			edit{"sample_trace.jsonl", `"latency_ms": 846.5,`, `"latency_ms": -846.5,`})
		c := importValues(t, serverlog.New(), p)
		c.wantCheck(t, 0, ingest.CheckNegative, "latency_ms", 1, "first request 1 (line 2): -846.5")
		if c.Requests[1].ServerE2ENs != nil {
			t.Errorf("line 2: e2e %d", *c.Requests[1].ServerE2ENs)
		}
	})
}

// TestValueOutOfRange: values no request can have — a duration over a
// day, a count over 10^9, a time past 2^62 ns — are null and counted,
// never clamped.
func TestValueOutOfRange(t *testing.T) {
	t.Run("aiperf TTFT 1e308", func(t *testing.T) {
		// testdata/values/aiperf record 1: TTFT 1e308 ms is null; its last
		// response is request_latency (120 ms). TTFT [91.1, 50, 60] →
		// mean 67.033 (record 0's "91.1" read as the number); E2E [111.1,
		// 120, 80, 80] → 97.775; TPOT [10, –, 15, 20] → 15 (record 3's N
		// is its 2 messages).
		p := "testdata/values/aiperf/profile_export.jsonl"
		c := importValues(t, aiperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckOutOfRange, "time_to_first_token", 1, "first request 1 (line 2): 1e+308; left null")
		if r := c.Requests[1]; r.FirstTokenOffsetNs != nil || r.ReportedTTFTMs != nil || *r.LastTokenOffsetNs != 120e6 {
			t.Errorf("record 1: %+v", r)
		}
		rr := report(t, aiperf.New(), p)
		traptest.WantMean(t, rr, analyze.TTFT, (91.1+50+60)/3)
		traptest.WantMean(t, rr, analyze.E2E, (111.1+120+80+80)/4)
		traptest.WantMean(t, rr, analyze.TPOT, 15)
		wantN(t, rr, analyze.TTFT, 3)
	})
	t.Run("vllm input_lens 1e308", func(t *testing.T) {
		p := vllmVariant(t, `"input_lens": [32,`, `"input_lens": [1e308,`)
		c := importValues(t, vllmbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckOutOfRange, "input_lens", 1, "first request 0 (input_lens[0]): 1e+308")
		if c.Requests[0].InputTokens != nil || c.Requests[0].ReportedInputTokens != nil {
			t.Errorf("request 0: input %v", c.Requests[0].InputTokens)
		}
	})
	t.Run("llmperf latency over a day", func(t *testing.T) {
		p := variant(t, "../llmperf/testdata/trap-bos", "individual_responses.json", 0,
			edit{"individual_responses.json", `"end_to_end_latency_s": 2.2,`, `"end_to_end_latency_s": 1e9,`})
		c := importValues(t, llmperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckOutOfRange, "end_to_end_latency_s", 1, "first request 2 (record 3): 1000000000")
		if c.Requests[2].StreamEndOffsetNs != nil || c.Requests[2].ReportedE2EMs != nil {
			t.Errorf("row 2: %+v", c.Requests[2])
		}
	})
	t.Run("guidellm start 1e300", func(t *testing.T) {
		// The start is no time in any unit: null; the record's
		// resolve_start (100 µs earlier) stands in for it, as for a
		// record without request_start.
		p := variant(t, "../guidellm/testdata/v04-requests", "benchmarks.json", 0,
			edit{"benchmarks.json", `"request_start": 1750000100.0,`, `"request_start": 1e300,`})
		c := importValues(t, guidellm.New(), p)
		c.wantCheck(t, 0, ingest.CheckOutOfRange, "info.timings.request_start", 1, "first request 0 (benchmark 1: requests.successful[0]): 1e+300")
		resolveStart := 1750000099.9999 // a float64 variable: the constant expression would be exact
		if r := c.Requests[0]; r.StartNs == nil || *r.StartNs != int64(math.Round(resolveStart*1e9)) {
			t.Errorf("a1: start %v", *r.StartNs)
		}
	})
	t.Run("genai-perf response two days later", func(t *testing.T) {
		p := variant(t, "../genaiperf/testdata/vllm-chat-stream", "profile_export.json", 0,
			edit{"profile_export.json", `1700000000400000000`, `1700172800400000000`})
		c := importValues(t, genaiperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckOutOfRange, "response_timestamps", 1, "first request 1 (response_timestamps[0]): 172800100000000")
	})
	t.Run("inference-perf input_tokens 1e12", func(t *testing.T) {
		// ISL [5, 6, 4, 7] → without record 4's: [5, 6, 4] → 5.
		p := variant(t, "../inferenceperf/testdata/edge-v06", "per_request_lifecycle_metrics.json", 0,
			edit{"per_request_lifecycle_metrics.json", `"input_tokens": 7`, `"input_tokens": 1e12`})
		c := importValues(t, inferenceperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckOutOfRange, "input_tokens", 1, "first request 4 (record 5): 1000000000000")
		traptest.WantMean(t, report(t, inferenceperf.New(), p), analyze.ISL, 5)
	})
	t.Run("server log TTFT over a day", func(t *testing.T) {
		p := variant(t, "../../testdata/server-logs/anud18-trace-samples", "sample_trace.jsonl", 0,
			edit{"sample_trace.jsonl", `"ttft_ms": 103.4,`, `"ttft_ms": 1e12,`})
		c := importValues(t, serverlog.New(), p)
		c.wantCheck(t, 0, ingest.CheckOutOfRange, "ttft_ms", 1, "first request 2 (line 3): 1000000000000")
	})
}

// TestValueNumberAsString: a number written as a string is read as the
// number it spells, and counted.
func TestValueNumberAsString(t *testing.T) {
	t.Run("aiperf TTFT \"91.1\"", func(t *testing.T) {
		c := importValues(t, aiperf.New(), "testdata/values/aiperf/profile_export.jsonl")
		c.wantCheck(t, 0, ingest.CheckNumberAsString, "time_to_first_token", 1, `first request 0 (line 1): "91.1"; read as the number it spells`)
		if r := c.Requests[0]; *r.FirstTokenOffsetNs != 91_100_000 || *r.ReportedTTFTMs != 91.1 {
			t.Errorf("record 0: %+v", r)
		}
		rr := report(t, aiperf.New(), "testdata/values/aiperf/profile_export.jsonl")
		w := traptest.Warning(t, rr, ingest.CheckNumberAsString)
		if !w.DataCheck || w.Routine || w.Count != 1 {
			t.Errorf("warning %+v", w)
		}
	})
	t.Run("vllm output_lens", func(t *testing.T) {
		p := vllmVariant(t, `"output_lens": [4, 6,`, `"output_lens": [4, "6",`)
		c := importValues(t, vllmbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckNumberAsString, "output_lens", 1, `first request 1 (output_lens[1]): "6"`)
		traptest.WantMean(t, report(t, vllmbench.New(), p), analyze.TPOT, 22.5)
	})
	t.Run("llmperf ttft_s", func(t *testing.T) {
		// the fixture edge-rows has ttft_s "0.3" in row 5
		c := importValues(t, llmperf.New(), "../llmperf/testdata/edge-rows/individual_responses.json")
		c.wantCheck(t, 0, ingest.CheckNumberAsString, "ttft_s", 1, `first request 5 (record 6): "0.3"`)
		if *c.Requests[5].FirstTokenOffsetNs != 300e6 {
			t.Errorf("row 5 ttft %d", *c.Requests[5].FirstTokenOffsetNs)
		}
	})
	t.Run("inference-perf input_tokens", func(t *testing.T) {
		p := variant(t, "../inferenceperf/testdata/edge-v06", "per_request_lifecycle_metrics.json", 0,
			edit{"per_request_lifecycle_metrics.json", `"input_tokens": 6`, `"input_tokens": "6"`})
		c := importValues(t, inferenceperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckNumberAsString, "info.request_metrics.text.input_tokens", 1, `first request 1 (record 2): "6"`)
	})
	t.Run("guidellm prompt_tokens", func(t *testing.T) {
		p := variant(t, "../guidellm/testdata/v04-requests", "benchmarks.json", 0,
			edit{"benchmarks.json", `"first_token_iteration": 1750000100.12,`, `"first_token_iteration": "1750000100.12",`})
		c := importValues(t, guidellm.New(), p)
		c.wantCheck(t, 0, ingest.CheckNumberAsString, "info.timings.first_token_iteration", 1, `"1750000100.12"`)
		traptest.WantMeanWithin(t, report(t, guidellm.New(), p), analyze.TTFT, 800/6.0, 1e-6)
	})
	t.Run("clean fixtures", func(t *testing.T) {
		for _, tc := range []struct {
			im   ingest.Importer
			path string
		}{
			{vllmbench.New(), filepath.Join(vllmFixture, vllmFile)},
			{llmperf.New(), "../llmperf/testdata/trap-bos/individual_responses.json"},
			{guidellm.New(), "../guidellm/testdata/v04-requests/benchmarks.json"},
			{inferenceperf.New(), "../inferenceperf/testdata/edge-v06/per_request_lifecycle_metrics.json"},
			{genaiperf.New(), "../genaiperf/testdata/vllm-chat-stream/profile_export.json"},
			{sglangbench.New(), "../sglangbench/testdata/output-details/sglang_0301_4_64_8.jsonl"},
			{serverlog.New(), "../../testdata/server-logs/anud18-trace-samples/sample_trace.jsonl"},
		} {
			importValues(t, tc.im, tc.path).noValueChecks(t)
		}
	})
}

// TestTimeUnit: a Unix time column in another unit than the tool writes
// is refused with an error naming the file, the position, the value and
// the unit its magnitude shows; nothing is converted.
func TestTimeUnit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		im    ingest.Importer
		path  string
		where string
		msg   string
	}{{
		// GenAI-Perf timestamps in whole seconds: every latency was 0
		"genai-perf seconds",
		genaiperf.New(),
		"testdata/values/genai-perf-seconds/profile_export.json",
		"experiment 0, request 0 (byte ",
		"timestamp 1700000000 is Unix seconds by its magnitude (2023-11-14T22:13:20Z as such), not nanoseconds: every time read from it would be off by a factor of 10^9 (perf_analyzer writes Unix nanoseconds, time_unit_mismatch)",
	}, {
		"genai-perf fractional seconds",
		genaiperf.New(),
		"testdata/values/genai-perf-fractional/profile_export.json",
		"experiment 0, request 0 (byte ",
		"timestamp 1700000000.1 is not an integer: perf_analyzer writes Unix nanoseconds as integers (time_unit_mismatch); 1700000000.1 is Unix seconds by its magnitude",
	}, {
		"aiperf milliseconds",
		aiperf.New(),
		"testdata/values/aiperf-ms/profile_export.jsonl",
		"line 1",
		"metadata.request_start_ns: 1700000000000 is Unix milliseconds by its magnitude (2023-11-14T22:13:20Z as such), not nanoseconds",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			err := ingest.ImportFile(tc.im, tc.path, ingest.Options{}, &formats.Collector{})
			var fe *ingest.FormatError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Where, tc.where) || fe.File != tc.path || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v\nwant %q at %q", err, tc.msg, tc.where)
			}
		})
	}
	// guidellm writes time.time() seconds
	p := variant(t, "../guidellm/testdata/v04-requests", "benchmarks.json", 0,
		edit{"benchmarks.json", `"request_start": 1750000100.0,`, `"request_start": 1750000100000000000,`})
	err := ingest.ImportFile(guidellm.New(), p, ingest.Options{}, &formats.Collector{})
	if err == nil || !strings.Contains(err.Error(), "benchmark 1: requests.successful[0]: info.timings.request_start: 1750000100000000000 is Unix nanoseconds by its magnitude") {
		t.Errorf("guidellm: %v", err)
	}
	// ns written in the unit the tool writes pass, and small hand-made
	// times (below 1e8) are not judged
	for _, x := range []float64{1.7e18, 1000, 0} {
		if why := ingest.EpochMismatch(x, "ns", ingest.Nanoseconds); why != "" {
			t.Errorf("EpochMismatch(%g) = %q", x, why)
		}
	}
}
