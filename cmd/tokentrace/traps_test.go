package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trapFixture is vLLM's TTFT-in-ITL bug (vllm#7242) in vLLM's layout:
// 3 requests, every one detected and corrected (ingest/vllmbench
// TestTrapTTFTInITLs has the hand-computed values).
const trapFixture = "../../ingest/vllmbench/testdata/trap-ttft-in-itls"

// TestTrapSurfaces: a detected trap is said everywhere the user looks —
// the report's text, Markdown and JSON, report.html, gate (text, Markdown,
// JUnit, JSON) and reconcile — and --no-corrections gives the numbers of
// the data as written; a data_warnings gate fails (exit 3) and names the
// check.
func TestTrapSurfaces(t *testing.T) {
	const code = "vllm_ttft_in_itls"
	const src = "https://github.com/vllm-project/vllm/issues/7242"
	text, err := run(t, "report", trapFixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"data checks (the catalogue: analyze/TRAPS.md", code + " [e2e_ms tpot_ms itl_ms ttst_ms] 3 request(s)", "corrected in 3 request(s)", src,
		"E2E ms  3  443.3"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	md, err := run(t, "report", "--format", "markdown", trapFixture)
	if err != nil || !strings.Contains(md, code) || !strings.Contains(md, src) {
		t.Errorf("markdown report: %v\n%s", err, md)
	}
	js, err := run(t, "report", "--format", "json", trapFixture)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Runs []struct {
			Warnings []struct {
				Code      string `json:"code"`
				Metric    string `json:"metric"`
				Count     int    `json:"count"`
				Source    string `json:"source"`
				DataCheck bool   `json:"data_check"`
			} `json:"warnings"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range rep.Runs[0].Warnings {
		if w.Code == code {
			found = w.DataCheck && w.Metric == "e2e_ms" && w.Count == 3 && strings.Contains(w.Source, src)
		}
	}
	if !found {
		t.Errorf("JSON warnings lack the data check: %+v", rep.Runs[0].Warnings)
	}

	raw, err := run(t, "report", "--no-corrections", trapFixture)
	if err != nil || !strings.Contains(raw, "E2E ms  3  843.3") || !strings.Contains(raw, "not corrected under this convention") {
		t.Errorf("--no-corrections: %v\n%s", err, raw)
	}

	dir := t.TempDir()
	if _, err := run(t, "analyze", "-o", dir, trapFixture); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(html), "<h3>Data checks</h3>") || !strings.Contains(string(html), "<code>"+code+"</code>") {
		t.Error("report.html lacks the data checks")
	}

	out, err := run(t, "gate", "--gate", "data_warnings<=0", "--gate", "p99(e2e)<=1s", trapFixture)
	if exitCode(err) != 3 || !strings.Contains(out, "FAIL    data_warnings<=0") || !strings.Contains(out, "data checks: "+code+" (3 requests)") ||
		!strings.Contains(out, "data checks (TRAPS.md)") {
		t.Errorf("gate data_warnings: exit %d\n%s", exitCode(err), out)
	}
	for _, f := range []string{"markdown", "junit", "json"} {
		out, _ := run(t, "gate", "--gate", "p99(e2e)<=1s", "--format", f, trapFixture)
		if !strings.Contains(out, code) {
			t.Errorf("gate --format %s lacks the data check:\n%s", f, out)
		}
	}
	// the corrected data passes where only the data as written would not
	if _, err := run(t, "gate", "--gate", "p99(e2e)<=600ms", trapFixture); err != nil {
		t.Errorf("corrected p99(e2e) 518.8 ms fails 600 ms: %v", err)
	}
	if _, err := run(t, "gate", "--no-corrections", "--gate", "p99(e2e)<=600ms", trapFixture); exitCode(err) != 3 {
		t.Errorf("--no-corrections p99(e2e) 1017 ms passes 600 ms: %v", err)
	}

	rec, err := run(t, "reconcile", trapFixture)
	if err != nil || !strings.Contains(rec, "data correction "+code+" (3): 843.3 → 443.3 (−400.0)") || !strings.Contains(rec, "n 9 → 6: samples enter or leave") {
		t.Errorf("reconcile: %v\n%s", err, rec)
	}
}

// TestReconcileNeedsTokenizer: reconciling an AIPerf run to GenAI-Perf's
// convention, which re-tokenizes the output, without a tokenizer says so
// and names the flag and the run's tokenizer, instead of "– (–)".
func TestReconcileNeedsTokenizer(t *testing.T) {
	out, err := run(t, "reconcile", "--to-convention", "genai-perf", "../../testdata/aiperf/qwen3vl30b-local-agent-c2")
	if err != nil {
		t.Fatal(err)
	}
	want := `output_count         tool_reported_raw → tokenizer: 44.94 → undefined: output tokens are counted here by re-tokenizing the text, which needs a tokenizer (no tokenizer): give --tokenizer with the tokenizer.json of "Qwen/Qwen3-VL-30B-A3B-Instruct"`
	if !strings.Contains(out, want) || strings.Contains(out, "– (–)") {
		t.Errorf("reconcile without a tokenizer:\n%s", out)
	}
}

// TestMLPerfNotMeasured: LoadGen's first-token statistics written as 0
// for first tokens never measured (mlcommons/inference#1788): the report
// shows the INVALID verdict first and the failed TPOT early stopping in
// full; a TTFT gate fails (exit 3) saying the value was not measured,
// never passing on the 0.
func TestMLPerfNotMeasured(t *testing.T) {
	const in = "../../ingest/mlperf/testdata/trap-ttft-zero"
	out, err := run(t, "report", in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"validity                  INVALID", "early_stopping_tpot_result: * Run unsuccessful. * Processed 33 queries. * Would need to run at least 805 more queries",
		"mlperf_first_token_not_measured [ttft_ms tpot_ms]"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	out, err = run(t, "gate", "--gate", "p99(ttft)<=2s", in)
	if exitCode(err) != 3 || !strings.Contains(out, "not measured: LoadGen reported first-token latencies the system under test never measured") {
		t.Errorf("gate p99(ttft): exit %d\n%s", exitCode(err), out)
	}
}

// TestToolCallOnlyReply: a reply that is a tool call and nothing else
// (streamed tool_calls deltas at 150, 170 and 190 ms; usage 8 tokens) is
// generated output, as vLLM counts it: completed, TTFT 150 ms at the
// first call fragment, E2E 190 ms, TPOT (190 − 150)/(8 − 1) = 5.714 ms —
// not an empty request. GenAI-Perf's convention reads content only: no
// TTFT there, as GenAI-Perf itself.
func TestToolCallOnlyReply(t *testing.T) {
	const in = "../../ingest/genaiperf/testdata/tool-call-only"
	out, err := run(t, "report", in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"requests 1: 1 completed, 0 empty", "TTFT ms  1  150.0", "TPOT ms  1  5.714", "E2E ms  1  190.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	out, err = run(t, "report", "--convention", "genai-perf", in)
	if err != nil || strings.Contains(out, "TTFT ms  1") {
		t.Errorf("GenAI-Perf's convention found a first content token: %v\n%s", err, out)
	}
}
