package registry

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
	"github.com/tokentrace/tokentrace/ingest/inferenceperf"
	"github.com/tokentrace/tokentrace/ingest/vllmbench"
)

// TestGoodputDenominator: each tool divides its goodput differently, and
// with failures a tool's number is not tokentrace's fraction (good / every
// request). One run per tool, each with failed requests and a reported
// goodput, in the tool's real layout:
//
//   - vLLM, detailed-appended object 1 (--goodput ttft:130 e2el:250):
//     request_goodput 2.5 = 3 good / 1.2 s; 1 of 5 requests failed. With the
//     same SLO tokentrace counts 3 good of 5 (0.6).
//   - AIPerf, goodput-errors: request_count 8, error_request_count 2,
//     good_request_fraction 0.5 = 5 / (8 + 2), goodput 0.5 req/s.
//   - inference-perf, goodput-errors (ttft ≤ 50 ms): 3 successes, 2 good,
//     goodput_percentage 66.67 (2 / 3), 1 failure (429); tokentrace's
//     fraction under ttft ≤ 50 ms is 2 / 4 = 0.5.
//
// Each run gets the explanation with the tool's value and rule and the
// failures, reported as an explanation (routine: no data warning). A run
// without failures, or without a reported goodput (trap-role-chunk-short:
// a failure, no --goodput), gets none.
func TestGoodputDenominator(t *testing.T) {
	cases := []struct {
		name   string
		im     ingest.Importer
		path   string
		slo    string
		field  string
		failed int64
		detail string
		good   int
		total  int
	}{{
		"vllm", vllmbench.New(), filepath.Join(vllmFixture, vllmFile), "ttft<=130ms, e2e<=250ms", "request_goodput", 1,
		"vLLM's request_goodput 2.5 = good / duration (only successful requests are compared with the SLO); 1 of 5 requests failed: tokentrace's goodput is good / all 5 requests, a failure never good",
		3, 5,
	}, {
		"aiperf", aiperf.New(), "../aiperf/testdata/goodput-errors/profile_export_aiperf.json", "", "good_request_fraction", 2,
		"AIPerf's good_request_fraction 0.5 = good / (request_count + error_request_count), failures counted, goodput 0.5 = good / benchmark duration; 2 of 10 requests failed: tokentrace's goodput is good / all 10 requests, a failure never good",
		0, 0,
	}, {
		"inference-perf", inferenceperf.New(), "../inferenceperf/testdata/goodput-errors/per_request_lifecycle_metrics.json", "ttft<=50ms", "successes.goodput_metrics.goodput_percentage", 1,
		"inference-perf's successes.goodput_metrics.goodput_percentage 66.67 = 100 · good / the successful requests, failures left out, successes.goodput_metrics.request_goodput 4.167 = good / the successful requests' time span; 1 of 4 requests failed: tokentrace's goodput is good / all 4 requests, a failure never good",
		2, 4,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var col formats.Collector
			if err := ingest.ImportFile(c.im, c.path, ingest.Options{Label: "fx"}, &col); err != nil {
				t.Fatal(err)
			}
			var got []formats.DataCheck
			for _, ch := range col.Runs[0].Checks {
				if ch.Code == ingest.CheckGoodputDenominator {
					got = append(got, ch)
				}
			}
			if len(got) != 1 || got[0].Field != c.field || got[0].Requests != c.failed || got[0].Detail != c.detail || got[0].Corrected {
				t.Fatalf("checks %+v", got)
			}
			opt := analyze.Options{Tools: valueSet}
			if c.slo != "" {
				s, err := slo.ParseSLO(c.slo)
				if err != nil {
					t.Fatal(err)
				}
				opt.SLO = s
			}
			a := analyze.NewAnalyzer(analyze.Canonical)
			if err := ingest.ImportFile(c.im, c.path, ingest.Options{Label: "fx"}, a); err != nil {
				t.Fatal(err)
			}
			rep, err := a.Report(opt)
			if err != nil {
				t.Fatal(err)
			}
			rr := rep.Runs[0]
			var w *analyze.Warning
			for i := range rr.Warnings {
				if rr.Warnings[i].Code == ingest.CheckGoodputDenominator {
					w = &rr.Warnings[i]
				}
			}
			if w == nil || !w.DataCheck || !w.Routine || w.Count != c.failed || !strings.Contains(w.Message, c.detail) {
				t.Errorf("warning %+v", w)
			}
			if c.slo != "" {
				if g := rr.Goodput; g == nil || g.Good != c.good || g.Total != c.total {
					t.Errorf("tokentrace's goodput %+v, want %d of %d", g, c.good, c.total)
				}
			}
		})
	}
	v := func(x float64) *float64 { return &x }
	rules := []ingest.GoodputRule{{Metric: "request_goodput", Stat: "value", Rule: "good / duration"}}
	rep := []formats.ReportedStat{{Metric: "request_goodput", Stat: "value", Value: v(2)}}
	if ch := ingest.GoodputDenominator("x", rep, rules, 0, 5); ch != nil {
		t.Errorf("no failure: %+v", ch)
	}
	if ch := ingest.GoodputDenominator("x", nil, rules, 2, 5); ch != nil {
		t.Errorf("no goodput reported: %+v", ch)
	}
	var col formats.Collector
	if err := ingest.ImportFile(vllmbench.New(), filepath.Join("../vllmbench/testdata/trap-role-chunk-short", "openai-chat-2.0qps-Llama-3.1-8B-Instruct-20250320-110000.json"), ingest.Options{}, &col); err != nil {
		t.Fatal(err)
	}
	for _, ch := range col.Runs[0].Checks {
		if ch.Code == ingest.CheckGoodputDenominator {
			t.Errorf("a run with a failure and no goodput: %+v", ch)
		}
	}
}
