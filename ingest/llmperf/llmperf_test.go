package llmperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/testkit"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// corpus is the real LLMPerf runs under the module's testdata (each with a
// SOURCE.md).
const corpus = "../../testdata/llmperf"

func corpusCases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpus, "*", "individual_responses.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus cases under %s: %v", corpus, err)
	}
	var cases []string
	for _, f := range files {
		cases = append(cases, filepath.Base(filepath.Dir(f)))
	}
	return cases
}

func importFile(t *testing.T, path, label string) (*formats.Collector, []string) {
	t.Helper()
	var c formats.Collector
	var warnings []string
	err := ingest.ImportFile(New(), path, ingest.Options{Label: label, Warn: func(m string) { warnings = append(warnings, m) }}, &c)
	if err != nil {
		t.Fatalf("Import(%s): %v", path, err)
	}
	return &c, warnings
}

func dump(t *testing.T, path, label string) []byte {
	t.Helper()
	return testkit.Dump(t, New(), path, ingest.Options{Label: label})
}

func TestGoldenCorpus(t *testing.T) {
	for _, name := range corpusCases(t) {
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join(corpus, name, "individual_responses.json"), name))
		})
	}
}

func TestGoldenFixtures(t *testing.T) {
	for _, f := range []string{
		"edge-rows/individual_responses.json",
		"truncated/individual_responses.json",
		"summary-only/llama2-13b_550_150_summary.json",
	} {
		name := filepath.Dir(f)
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join("testdata", f), name))
		})
	}
}

// TestCorpus checks counts, conventions and summary values per corpus run
// (each run's SOURCE.md; the expected values are the runs' own summaries).
func TestCorpus(t *testing.T) {
	want := map[string]struct {
		rows, errs int
		code       int64
		convention string
		ttftP99    float64 // results_ttft_s_quantiles_p99
	}{
		"apeterson7-triton-llama2-7b-2req": {2, 0, 0, Convention2024Dec, 21.650147066339997},
		"leaderboard-anyscale-70b":         {150, 0, 0, Convention2023, 0},
		"leaderboard-bedrock-70b":          {150, 49, -100, Convention2023, 0.686971139999514},
		"leaderboard-groq-70b":             {150, 0, 0, Convention2023, 0},
		"leaderboard-lepton-13b":           {150, 130, 429, Convention2023, 1.3719118711400036},
	}
	for _, name := range corpusCases(t) {
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectations for corpus case %s", name)
			}
			c, warnings := importFile(t, filepath.Join(corpus, name, "individual_responses.json"), name)
			run := c.Runs[0]
			if len(c.Runs) != 1 || len(c.Requests) != w.rows || run.RequestCount != int64(w.rows) || len(c.Events) != 0 {
				t.Fatalf("runs %d, requests %d, events %d", len(c.Runs), len(c.Requests), len(c.Events))
			}
			if run.Convention != w.convention {
				t.Errorf("convention %q, want %q (notes %q)", run.Convention, w.convention, run.Notes)
			}
			errs := 0
			for _, r := range c.Requests {
				if r.StartNs != nil || r.ClockDomain != "" {
					t.Errorf("request %d has a start time", r.RequestKey)
				}
				if r.Status == formats.StatusError {
					errs++
					if r.ErrorCode == nil || *r.ErrorCode != w.code {
						t.Errorf("request %d: error code %v, want %d", r.RequestKey, r.ErrorCode, w.code)
					}
				} else if r.Status != formats.StatusOK {
					t.Errorf("request %d: status %s", r.RequestKey, r.Status)
				}
			}
			if errs != w.errs {
				t.Errorf("%d errors, want %d", errs, w.errs)
			}
			if w.ttftP99 != 0 {
				if got := reported(t, run, "ttft_s", "p99"); got != w.ttftP99 {
					t.Errorf("ttft_s p99 %v, want %v", got, w.ttftP99)
				}
			}
			if run.Tool != "llmperf" || run.ToolVersion != "2023-08-31" || run.LoadMode != "concurrency" || run.Streaming == nil || !*run.Streaming ||
				len(run.SourceFiles) != 2 || run.Truncated || len(warnings) != 0 {
				t.Errorf("run %+v, warnings %q", run, warnings)
			}
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

func reportedText(run formats.Run, metric, stat string) string {
	for _, s := range run.Reported {
		if s.Metric == metric && s.Stat == stat {
			return s.Text
		}
	}
	return "<absent>"
}

// TestLepton checks the run with 130 HTTP 429 rows (integer-zero timings).
func TestLepton(t *testing.T) {
	c, _ := importFile(t, filepath.Join(corpus, "leaderboard-lepton-13b", "individual_responses.json"), "lepton")
	run := c.Runs[0]
	for _, r := range c.Requests {
		if r.Status != formats.StatusError {
			continue
		}
		if r.FirstTokenOffsetNs != nil || r.StreamEndOffsetNs != nil || r.LastTokenOffsetNs != nil || r.OutputTokens != nil ||
			*r.InputTokens != 550 || *r.ReportedOutputTokens != 1 {
			t.Fatalf("429 row %d: %+v", r.RequestKey, r)
		}
	}
	if got := reportedText(run, "error_code_frequency", "value"); got != "{429.0: 130}" {
		t.Errorf("error_code_frequency text %q", got)
	}
	if got := reported(t, run, "error_code_frequency", "429"); got != 130 {
		t.Errorf("error_code_frequency/429 = %v", got)
	}
	if got := reported(t, run, "error_rate", "value"); got != 0.8666666666666667 {
		t.Errorf("error_rate %v", got)
	}
	// min/max of integer columns are strings in the file ("551"): parsed.
	if got := reported(t, run, "number_output_tokens", "max"); got != 151 {
		t.Errorf("number_output_tokens max %v", got)
	}
	if got := reported(t, run, "num_completed_requests_per_min", "value"); got != 23.560301595745855 {
		t.Errorf("num_completed_requests_per_min %v", got)
	}
	if !strings.Contains(strings.Join(run.Notes, "\n"), "rows without timing (ttft_s or end_to_end_latency_s is 0, missing, or an offending value the run's data checks left null): 130") {
		t.Errorf("notes %q", run.Notes)
	}
}

// TestBedrock checks the leaderboard Bedrock run: 49 rows marked -100 keep
// real timings and an undivided inter_token_latency_s; every row has
// GEN_TEXT.
func TestBedrock(t *testing.T) {
	c, _ := importFile(t, filepath.Join(corpus, "leaderboard-bedrock-70b", "individual_responses.json"), "bedrock")
	r := c.Requests[0] // error_code -100, "Output too few tokens 102"
	if r.Status != formats.StatusError || r.ErrorText != "Output too few tokens 102" || *r.FirstTokenOffsetNs != 613838838 ||
		*r.StreamEndOffsetNs != 5049237913 || *r.LastTokenOffsetNs != 5042951921 || r.OutputTokens != nil || *r.ReportedITLMs != 5042.951921001077 {
		t.Errorf("row 0: %+v", r)
	}
	notes := strings.Join(c.Runs[0].Notes, "\n")
	for _, want := range []string{"failed rows with an undivided inter_token_latency_s (t_last − start; the leaderboard's validity-checked rows), used as last_token_offset_ns: 49", "rows carrying GEN_TEXT (the generated text, a leaderboard client's extra key; not imported): 150", "rows: 150 (101 ok, 0 empty, 49 error: code -100 ×49)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// TestHandCheckedOffsets checks the first row of the Anyscale run:
// ttft_s 0.3148573649999662, end_to_end_latency_s 2.532841702999974,
// inter_token_latency_s 0.01630449964900609 × 151 = 2.461979447 s.
func TestHandCheckedOffsets(t *testing.T) {
	c, _ := importFile(t, filepath.Join(corpus, "leaderboard-anyscale-70b", "individual_responses.json"), "anyscale")
	r := c.Requests[0]
	if *r.FirstTokenOffsetNs != 314857365 || *r.FirstContentOffsetNs != 314857365 || *r.LastTokenOffsetNs != 2461979447 ||
		*r.StreamEndOffsetNs != 2532841703 || *r.OutputTokens != 150 || r.OutputTokensSource != formats.SourceToolReported ||
		*r.InputTokens != 550 || *r.ReportedOutputTokens != 151 || r.SecondTokenOffsetNs != nil || r.MessageCount != 0 {
		t.Errorf("row 0: %+v", r)
	}
	if *r.ReportedTTFTMs != 0.3148573649999662*1000 || *r.ReportedITLMs != 0.01630449964900609*1000 || *r.ReportedOutputTokensPS != 23.68880768542866 {
		t.Errorf("row 0 reported: %v %v %v", *r.ReportedTTFTMs, *r.ReportedITLMs, *r.ReportedOutputTokensPS)
	}
}

// TestLastTokenWithinBounds checks every recovered last-token offset of the
// corpus against the row's own ttft and e2e, and the 2024-12 run (whose ITL
// divides by an unrecorded chunk count) for having none.
func TestLastTokenWithinBounds(t *testing.T) {
	recovered := 0
	for _, name := range corpusCases(t) {
		c, _ := importFile(t, filepath.Join(corpus, name, "individual_responses.json"), name)
		for _, r := range c.Requests {
			if r.LastTokenOffsetNs == nil {
				continue
			}
			if *r.LastTokenOffsetNs < *r.FirstTokenOffsetNs || *r.LastTokenOffsetNs > *r.StreamEndOffsetNs {
				t.Errorf("%s row %d: last %d outside [%d, %d]", name, r.RequestKey, *r.LastTokenOffsetNs, *r.FirstTokenOffsetNs, *r.StreamEndOffsetNs)
			}
			if c.Runs[0].Convention == Convention2024Dec {
				t.Errorf("%s row %d: last-token offset recovered under %s", name, r.RequestKey, Convention2024Dec)
			}
			recovered++
		}
	}
	// 150 + 150 (101 ok + 49 undivided) + 150 + 20 ok rows of Lepton.
	if recovered != 470 {
		t.Errorf("%d last-token offsets recovered, want 470", recovered)
	}
}

// TestConventionEvidence checks the evidence notes of the version rule.
func TestConventionEvidence(t *testing.T) {
	for name, want := range map[string]string{
		"leaderboard-groq-70b":             "equals number_output_tokens on 0 of 150 successful rows (it counts SSE chunks",
		"apeterson7-triton-llama2-7b-2req": "equals number_output_tokens on 2 of 2 successful rows; summary timestamp 1744487152 (2025-04-12), on or after f1d6bed",
	} {
		c, _ := importFile(t, filepath.Join(corpus, name, "individual_responses.json"), name)
		if !strings.Contains(strings.Join(c.Runs[0].Notes, "\n"), want) {
			t.Errorf("%s notes lack %q: %q", name, want, c.Runs[0].Notes)
		}
	}
	if c := detectConvention(nil, nil); c.name != ConventionUnknown {
		t.Errorf("no rows, no timestamp: %s", c.name)
	}
	ts := int64(1700000000) // 2023-11: before afd137a, whatever the rows say
	one := []row{{has: hasThr | hasE2E | hasOut, thr: 2, e2e: 1, nOut: 2}}
	if c := detectConvention(one, &ts); c.name != Convention2023 || !c.divideByTokens {
		t.Errorf("2023 timestamp: %+v", c)
	}
	if c := detectConvention(one, nil); c.name != Convention2024Apr || c.divideByTokens {
		t.Errorf("token rule without timestamp: %+v", c)
	}
}

// TestEdgeRows checks the hand-made rows of testdata/edge-rows (summary
// timestamp 2024-06, so llmperf@2024-04 with ITL·N recovery).
func TestEdgeRows(t *testing.T) {
	c, _ := importFile(t, "testdata/edge-rows/individual_responses.json", "edge")
	run := c.Runs[0]
	if run.Convention != Convention2024Apr || len(c.Requests) != 7 {
		t.Fatalf("convention %s, %d requests", run.Convention, len(c.Requests))
	}
	rq := c.Requests
	// Row 0: a one-token reply (number_output_tokens 2 = token + BOS).
	if rq[0].Status != formats.StatusOK || *rq[0].OutputTokens != 1 || *rq[0].LastTokenOffsetNs != 250000000 || *rq[0].FirstTokenOffsetNs != 250000000 {
		t.Errorf("row 0: %+v", rq[0])
	}
	// Row 1: list-valued ITL, last = sum, reported = mean.
	if *rq[1].LastTokenOffsetNs != 300000000 || math.Abs(*rq[1].ReportedITLMs-100) > 1e-9 {
		t.Errorf("row 1: last %v, reported itl %v", *rq[1].LastTokenOffsetNs, *rq[1].ReportedITLMs)
	}
	// Row 2: error_code "429" as a string, integer-zero timings.
	if rq[2].Status != formats.StatusError || *rq[2].ErrorCode != 429 || rq[2].ErrorText != "Too Many Requests" || rq[2].FirstTokenOffsetNs != nil {
		t.Errorf("row 2: %+v", rq[2])
	}
	// Row 3: a non-numeric error code; ITL·N = 2.0 s fits, the undivided 0.2 s does not.
	if rq[3].ErrorCode != nil || rq[3].ErrorType != "ReadTimeout" || *rq[3].LastTokenOffsetNs != 2000000000 {
		t.Errorf("row 3: %+v", rq[3])
	}
	// Row 4: no content at all.
	if rq[4].Status != formats.StatusEmpty || *rq[4].OutputTokens != 0 || rq[4].FirstTokenOffsetNs != nil || *rq[4].StreamEndOffsetNs != 400000000 {
		t.Errorf("row 4: %+v", rq[4])
	}
	// Row 5: a numeric string and float counts.
	if *rq[5].FirstTokenOffsetNs != 300000000 || *rq[5].OutputTokens != 150 || *rq[5].LastTokenOffsetNs != 1510000000 {
		t.Errorf("row 5: %+v", rq[5])
	}
	// Row 6: ITL·N = 2 s > e2e 1 s: left null.
	if rq[6].LastTokenOffsetNs != nil {
		t.Errorf("row 6: last %v", *rq[6].LastTokenOffsetNs)
	}
	if got := reportedText(run, "ttft_s", "stddev"); got != "NaN" {
		t.Errorf("ttft_s stddev text %q", got)
	}
	if got := reportedText(run, "mean_output_throughput_token_per_s", "value"); got != "Infinity" {
		t.Errorf("throughput text %q", got)
	}
	if reported(t, run, "number_output_tokens", "min") != 1 || reported(t, run, "error_code_frequency", "429") != 1 || reported(t, run, "num_completed_requests_per_min", "value") != 42 {
		t.Errorf("reported %+v", run.Reported)
	}
	if strings.Contains(run.ConfigJSON, "sk-abcdef") || !strings.Contains(run.ConfigJSON, `"note":"NaN in a string stays"`) {
		t.Errorf("config %s", run.ConfigJSON)
	}
	notes := strings.Join(run.Notes, "\n")
	for _, want := range []string{
		"rows: 7 (4 ok, 1 empty, 2 error: code 429 ×1, ReadTimeout ×1)",
		"rows whose recovered last-content time falls outside [ttft, e2e], last_token_offset_ns left null: 1",
		"rows with a list-valued inter_token_latency_s (a fork's gap list): 1;",
		"unknown keys ignored: request_start_time ×1",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestTruncated(t *testing.T) {
	c, warnings := importFile(t, "testdata/truncated/individual_responses.json", "cut")
	// The note names the record; the warning names the file too.
	want := "record 5 is incomplete (file cut)"
	if len(c.Requests) != 4 || !c.Runs[0].Truncated || len(warnings) != 1 || warnings[0] != "testdata/truncated/individual_responses.json: "+want ||
		!strings.Contains(strings.Join(c.Runs[0].Notes, "\n"), want) {
		t.Fatalf("requests %d, truncated %v, warnings %q, notes %q", len(c.Requests), c.Runs[0].Truncated, warnings, c.Runs[0].Notes)
	}
	// Cut right after a complete element: no closing bracket.
	b, _ := os.ReadFile(filepath.Join(corpus, "leaderboard-groq-70b", "individual_responses.json"))
	i := bytes.Index(b, []byte("\n    },")) + len("\n    },")
	path := filepath.Join(t.TempDir(), "individual_responses.json")
	os.WriteFile(path, b[:i], 0o644)
	c, warnings = importFile(t, path, "cut2")
	if len(c.Requests) != 1 || !c.Runs[0].Truncated || warnings[0] != path+": the array ends after record 1 without its closing ']' (file cut)" {
		t.Errorf("requests %d, warnings %q", len(c.Requests), warnings)
	}
}

// TestDamagedSummaryWarning: a companion summary that is not JSON is
// ignored with a warning naming it and the byte where decoding stopped.
func TestDamagedSummaryWarning(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(corpus, "leaderboard-groq-70b", "individual_responses.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "individual_responses.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := filepath.Join(dir, "summary.json")
	// '@' is byte 9 (0-based)
	if err := os.WriteFile(sum, []byte(`{"a": 1, @}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, warnings := importFile(t, filepath.Join(dir, "individual_responses.json"), "dmg")
	want := sum + ": byte 9: unreadable summary: invalid character '@' looking for beginning of object key string"
	if len(warnings) != 1 || warnings[0] != want || len(c.Requests) == 0 {
		t.Errorf("warnings %q, want [%q]; %d requests", warnings, want, len(c.Requests))
	}
}

func TestMalformed(t *testing.T) {
	path := "testdata/malformed/individual_responses.json"
	err := ingest.ImportFile(New(), path, ingest.Options{}, &formats.Collector{})
	var fe *ingest.FormatError
	if !errors.As(err, &fe) || fe.Where != "record 2" {
		t.Fatalf("error %v, want a FormatError at record 2", err)
	}
	if want := path + `: record 2: invalid character '"' after object key`; err.Error() != want {
		t.Errorf("error text\n got %q\nwant %q", err.Error(), want)
	}
	// A wrong type is positioned too.
	p := filepath.Join(t.TempDir(), "individual_responses.json")
	os.WriteFile(p, []byte(`[{"error_code": null, "ttft_s": 1.0}, {"error_code": null, "ttft_s": true}]`), 0o644)
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{}); err == nil || err.Error() != p+": record 2: ttft_s: not a number: true" {
		t.Errorf("wrong type: %v", err)
	}
}

func TestEmptyFile(t *testing.T) {
	path := "testdata/empty/individual_responses.json"
	if !New().Detect(path, nil) {
		t.Error("Detect: an empty individual_responses.json should be claimed")
	}
	if err := ingest.ImportFile(New(), path, ingest.Options{}, &formats.Collector{}); err == nil || err.Error() != path+": empty file (expected a JSON array)" {
		t.Errorf("error %v", err)
	}
	p := filepath.Join(t.TempDir(), "individual_responses.json")
	os.WriteFile(p, []byte("[]\n"), 0o644)
	c, _ := importFile(t, p, "none")
	if len(c.Requests) != 0 || c.Runs[0].RequestCount != 0 || c.Runs[0].Convention != ConventionUnknown {
		t.Errorf("empty array: %+v", c.Runs[0])
	}
}

func TestSummaryOnly(t *testing.T) {
	path := "testdata/summary-only/llama2-13b_550_150_summary.json"
	c, warnings := importFile(t, path, "s")
	run := c.Runs[0]
	if len(c.Requests) != 0 || run.Notes[0] != "summary only: nothing to recompute" || len(warnings) != 1 || run.Convention != Convention2023 ||
		run.Model != "llama2-13b" || *run.Concurrency != 5 || reported(t, run, "ttft_s", "p99") != 1.3719118711400036 {
		t.Errorf("run %+v", run)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(run.ConfigJSON), &cfg); err != nil || cfg["api"] != "https://llama2-13b.lepton.run/api/v1" || cfg["timestamp"] != 1703638453.0 {
		t.Errorf("config %s: %v", run.ConfigJSON, err)
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
		{filepath.Join(corpus, "leaderboard-lepton-13b/individual_responses.json"), true},
		{filepath.Join(corpus, "apeterson7-triton-llama2-7b-2req/individual_responses.json"), true},
		{filepath.Join(corpus, "leaderboard-lepton-13b/summary.json"), false}, // rows beside it
		{"testdata/summary-only/llama2-13b_550_150_summary.json", true},
		{"testdata/truncated/individual_responses.json", true},
		{"testdata/malformed/individual_responses.json", true},
		{"../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts/profile_export.jsonl", false},
		{"../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts/profile_export_aiperf.json", false},
		{"../../testdata/genai-perf/openrouter-gpt4omini-c1-nonstream/profile_export.json", false},
	} {
		if got := im.Detect(tc.path, head(tc.path)); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	if !im.Detect("x.json", []byte("[\n    {\n        \"error_code\": null,\n        \"error_msg\": \"\",\n        \"inter_token_lat")) {
		t.Error("Detect: first object cut in head")
	}
	if im.Detect("x.json", []byte(`[{"error_code": 1, "detail": "x"}]`)) {
		t.Error("Detect: a foreign array with only error_code")
	}
}

func TestCompanions(t *testing.T) {
	im := New()
	if got := im.Companions(filepath.Join(corpus, "leaderboard-groq-70b/individual_responses.json")); len(got) != 1 || filepath.Base(got[0]) != "summary.json" {
		t.Errorf("Companions = %q", got)
	}
	dir := t.TempDir()
	rows := filepath.Join(dir, "m-7b_550_150_individual_responses.json")
	os.WriteFile(rows, []byte("[]"), 0o644)
	os.WriteFile(filepath.Join(dir, "m-7b_550_150_summary.json"), []byte("{}"), 0o644)
	if got := im.Companions(rows); len(got) != 1 || filepath.Base(got[0]) != "m-7b_550_150_summary.json" {
		t.Errorf("Companions = %q", got)
	}
	if got := im.Companions(filepath.Join(dir, "m-7b_550_150_summary.json")); got != nil {
		t.Errorf("summary companions = %q", got)
	}
}
