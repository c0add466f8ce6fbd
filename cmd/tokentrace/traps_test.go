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
		!strings.Contains(out, "data checks of run") {
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
