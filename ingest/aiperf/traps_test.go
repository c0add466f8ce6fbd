package aiperf

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

var trapTools = convention.NewSet(analyze.Canonical, Tool)

// gateIncomplete imports path and gates it with gates, returning the
// report and its "results complete" results.
func gateIncomplete(t *testing.T, path string, gates ...string) (*slo.GateReport, []slo.GateResult) {
	t.Helper()
	a := analyze.NewAnalyzer(analyze.Canonical)
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "fx"}, a); err != nil {
		t.Fatal(err)
	}
	var gs []slo.Gate
	for _, g := range gates {
		p, err := slo.ParseGates(g)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, p...)
	}
	rep, err := slo.Check(a, slo.GateSpec{Gates: gs}, analyze.Options{Tools: trapTools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rc []slo.GateResult
	for _, r := range rep.Results {
		if r.Gate == "results complete" {
			rc = append(rc, r)
		}
	}
	return rep, rc
}

// TestTrapIncompleteResults: AIPerf's summary says whether its results
// cover the whole run (ProfileResults.is_complete and incomplete_reason,
// written by its JSON exporter; runtime_submission_invalid_reasons,
// schema 1.5). The trap-incomplete fixture (three records of corpus
// llama31-8b-local-chatbot-c2, a summary with is_complete false and one
// runtime reason) is flagged on the run (field is_complete, both reasons
// named); its three requests are imported as they are (TTFT 149.19, 80.96,
// 215.62 ms); gate fails it with a "results complete" result although
// p50(ttft)<=1s holds (TTFT P50 149.19 ms). The trap-zero-requests
// fixture (a schema 1.5 summary alone that counts no request, as a run
// whose schedule window was empty writes it) is flagged on request_count
// and fails gate the same way. Complete runs — the corpus run itself
// (schema 1.3, no is_complete) and the all-timeouts summary (20 errors) —
// are not flagged, and their gate has no such result.
func TestTrapIncompleteResults(t *testing.T) {
	path := filepath.Join("testdata", "trap-incomplete", "profile_export.jsonl")
	var c formats.Collector
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "fx"}, &c); err != nil {
		t.Fatal(err)
	}
	ch := traptest.Check(t, &c.Runs[0], TrapIncompleteResults)
	if ch.Field != "is_complete" || ch.Requests != 0 || ch.Corrected ||
		ch.Detail != `profile_export_aiperf.json: is_complete false (incomplete_reason "record-stall watchdog: 3 of 20 expected records aggregated"); runtime_submission_invalid_reasons insufficient_profile_metric_coverage` {
		t.Errorf("check %+v", ch)
	}
	if len(c.Requests) != 3 {
		t.Fatalf("%d requests", len(c.Requests))
	}
	rr := traptest.Report(t, New(), path, trapTools, analyze.Canonical, true)
	w := traptest.Warning(t, rr, TrapIncompleteResults)
	if !w.DataCheck || w.Routine || !strings.Contains(w.Message, "flagged, not corrected") {
		t.Errorf("warning %+v", w)
	}
	traptest.WantMeanWithin(t, rr, analyze.TTFT, (149.18952+80.959733+215.620591)/3, 1e-6)

	rep, rc := gateIncomplete(t, path, "p50(ttft)<=1s")
	if rep.Pass || len(rc) != 1 || rc[0].Status != "fail" || rc[0].Subject != "fx" || !strings.Contains(rc[0].Reason, "incomplete_reason") {
		t.Errorf("gate %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Gate == "p50(ttft)<=1s" && r.Status != "pass" {
			t.Errorf("p50(ttft) should hold on the three requests: %+v", r)
		}
	}

	zero := filepath.Join("testdata", "trap-zero-requests", "profile_export_aiperf.json")
	c = formats.Collector{}
	if err := ingest.ImportFile(New(), zero, ingest.Options{Label: "fx"}, &c); err != nil {
		t.Fatal(err)
	}
	ch = traptest.Check(t, &c.Runs[0], TrapIncompleteResults)
	if ch.Field != "request_count" || ch.Detail != "profile_export_aiperf.json: the summary counts no request (no request_count or error_request_count above 0)" {
		t.Errorf("zero requests: check %+v", ch)
	}
	if rep, rc := gateIncomplete(t, zero, "data_warnings<=0"); rep.Pass || len(rc) != 1 || rc[0].Status != "fail" {
		t.Errorf("zero requests: gate %+v", rep)
	}

	for _, clean := range []string{
		filepath.Join("..", "..", "testdata", "aiperf", "llama31-8b-local-chatbot-c2", "profile_export.jsonl"),
		filepath.Join("testdata", "summary-only-json", "profile_export_aiperf.json"),
	} {
		c = formats.Collector{}
		if err := ingest.ImportFile(New(), clean, ingest.Options{Label: "fx"}, &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Runs[0].Checks {
			if ch.Code == TrapIncompleteResults {
				t.Errorf("%s: %+v", clean, ch)
			}
		}
		if _, rc := gateIncomplete(t, clean, "data_warnings<=0"); len(rc) != 0 {
			t.Errorf("%s: %+v", clean, rc)
		}
	}
}
