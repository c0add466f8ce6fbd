package guidellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// corpus is the real guidellm run under the module's testdata (SOURCE.md).
const corpus = "../../testdata/guidellm"

const corpusFile = corpus + "/v03-sweep-sync-stripped/benchmarks_stripped.json"

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

func TestGolden(t *testing.T) {
	cases := []struct{ name, path string }{
		{"v03-sweep-sync-stripped", corpusFile},
		{"v03-requests", "testdata/v03-requests/benchmarks.json"},
		{"v04-requests", "testdata/v04-requests/benchmarks.json"},
		{"v04-sampled", "testdata/v04-sampled/benchmarks.json"},
		{"truncated", "testdata/truncated/benchmarks.json"},
		{"unknown-keys", "testdata/unknown-keys/benchmarks.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), dump(t, tc.path, tc.name))
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

func notes(run formats.Run) string { return strings.Join(run.Notes, "\n") }

// TestCorpus checks the real v0.3 sweep point: its summaries under
// guidellm's names, the one request record it kept, and the sampled flag
// (the maintainers stripped 45 of its 46 successful records).
func TestCorpus(t *testing.T) {
	c, warnings := importFile(t, corpusFile, "v03")
	if len(c.Runs) != 1 || len(c.Requests) != 1 || len(c.Events) != 0 {
		t.Fatalf("runs %d, requests %d, events %d", len(c.Runs), len(c.Requests), len(c.Events))
	}
	run := c.Runs[0]
	if run.Convention != Convention03 || run.Tool != "guidellm" || run.ToolVersion != "" || run.Model != "example_model" ||
		run.Endpoint != "example_target" || run.Tokenizer != "example_processor" || run.LoadMode != "concurrency" ||
		*run.Concurrency != 1 || !*run.Streaming || run.ClockDomain != formats.ClockUnix || run.Truncated {
		t.Errorf("run %+v", run)
	}
	for _, tc := range []struct {
		metric, stat string
		want         float64
	}{
		{"time_per_output_token_ms.successful", "mean", 4.90300272307966},
		{"inter_token_latency_ms.successful", "mean", 4.941609043733832},
		{"time_to_first_token_ms.successful", "p99", 21.281957626342773},
		{"time_to_first_token_ms.successful", "p0.1", 15.790939331054688},
		{"time_to_first_token_ms.total", "p99.9", 21.281957626342773},
		{"request_latency.successful", "std_dev", 0.008009110982988258},
		{"output_token_count.total", "mode", 55},
		{"requests_per_second.successful", "count", 45},
		{"request_totals.successful", "value", 46},
		{"request_totals.total", "value", 47},
		{"duration", "value", 29.997201442718506},
	} {
		if got := reported(t, run, tc.metric, tc.stat); got != tc.want {
			t.Errorf("%s/%s = %v, want %v", tc.metric, tc.stat, got, tc.want)
		}
	}
	for _, s := range run.Reported {
		if s.File != "benchmarks_stripped.json" {
			t.Fatalf("reported %+v: file", s)
		}
		switch {
		case strings.HasPrefix(s.Metric, "time_to_first_token_ms."):
			if s.Unit != "ms" && s.Stat != "count" && s.Unit != "ms^2" {
				t.Errorf("%s/%s unit %q", s.Metric, s.Stat, s.Unit)
			}
		case strings.HasPrefix(s.Metric, "request_latency."):
			if s.Unit != "s" && s.Stat != "count" && s.Unit != "s^2" {
				t.Errorf("%s/%s unit %q", s.Metric, s.Stat, s.Unit)
			}
		}
	}
	// The kept record (hand-checked): TTFT 21.282 ms, TPOT (t_last − t_first)/128.
	r := c.Requests[0]
	if r.Status != formats.StatusOK || *r.StartNs != 1749157168182700288 || *r.FirstTokenOffsetNs != 21281958 ||
		*r.LastTokenOffsetNs != 689091921 || *r.StreamEndOffsetNs != 689184666 || *r.OutputTokens != 128 ||
		*r.InputTokens != 257 || r.OutputTokensSource != formats.SourceToolReported || r.SecondTokenOffsetNs != nil ||
		r.SourceID != "73054dd1-486f-4894-a861-075750b82453" {
		t.Errorf("request %+v", r)
	}
	tpot := float64(*r.LastTokenOffsetNs-*r.FirstTokenOffsetNs) / 128 / 1e6
	if math.Abs(tpot-5.217265337705612) > 1e-6 {
		t.Errorf("v0.3 TPOT from offsets %v, the record says 5.217265337705612", tpot)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "sampled: 1 of 46 successful, 0 of 1 incomplete, 0 of 0 errored requests kept (request_samples null: removed after the run") {
		t.Errorf("warnings %q", warnings)
	}
	if !strings.Contains(notes(run), "benchmarks_stripped.yaml holds the same report as YAML") || len(run.SourceFiles) != 2 ||
		run.SourceFiles[1].Role != "yaml_twin" {
		t.Errorf("YAML twin: notes %q, sources %+v", run.Notes, run.SourceFiles)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(run.ConfigJSON), &cfg); err != nil || cfg["run_id"] != "93e36b31-b454-471d-ba62-6b2671585485" {
		t.Errorf("config %s: %v", run.ConfigJSON, err)
	}
}

// TestV03Fixture checks the hand-made v0.3 report (FIXTURES.md): two sweep
// points, every status, the −1 and prompt-count quirks.
func TestV03Fixture(t *testing.T) {
	c, warnings := importFile(t, "testdata/v03-requests/benchmarks.json", "v03")
	if len(c.Runs) != 2 || len(c.Requests) != 11 || len(warnings) != 0 {
		t.Fatalf("runs %d, requests %d, warnings %q", len(c.Runs), len(c.Requests), warnings)
	}
	r1, r2 := c.Runs[0], c.Runs[1]
	if r1.RunID != "v03" || r2.RunID != "v03#2" || r1.RequestCount != 7 || r2.RequestCount != 4 ||
		r1.LoadMode != "concurrency" || r2.LoadMode != "request_rate" || *r2.RequestRateRPS != 2 ||
		r1.Convention != Convention03 || r2.Convention != Convention03 {
		t.Errorf("runs %+v\n%+v", r1, r2)
	}
	byID := map[string]formats.Request{}
	for _, r := range c.Requests {
		byID[r.SourceID] = r
	}
	// s1: first token 50 ms after the start, 127 gaps of 12 ms, end 2 ms later.
	s1 := byID["s1"]
	if s1.RunID != "v03" || s1.Status != formats.StatusOK || !near(*s1.FirstTokenOffsetNs, 50e6) ||
		!near(*s1.LastTokenOffsetNs, 50e6+127*12e6) || !near(*s1.StreamEndOffsetNs, 50e6+127*12e6+2e6) ||
		*s1.OutputTokens != 128 || *s1.InputTokens != 256 || *s1.FirstContentOffsetNs != *s1.FirstTokenOffsetNs {
		t.Errorf("s1 %+v", s1)
	}
	i1, e1 := byID["i1"], byID["e1"]
	if i1.Status != formats.StatusCancelled || i1.OutputTokens != nil || *i1.ReportedOutputTokens != 30 || i1.FirstTokenOffsetNs == nil {
		t.Errorf("i1 %+v", i1)
	}
	if e1.Status != formats.StatusError || e1.FirstTokenOffsetNs != nil || e1.OutputTokens != nil || *e1.ReportedOutputTokens != 128 ||
		e1.ErrorText != "HTTPStatusError: Server error '500 Internal Server Error'" {
		t.Errorf("e1 %+v", e1)
	}
	if t4 := byID["t4"]; t4.RunID != "v03#2" || t4.RequestKey != 3 {
		t.Errorf("t4 %+v", t4)
	}
	n := notes(r1)
	for _, want := range []string{
		"request records: 7 (5 ok, 0 empty, 1 cancelled, 1 error)",
		"convention guidellm@0.3:",
		note03Failed,
		"guidellm version not recorded",
	} {
		if !strings.Contains(n, want) {
			t.Errorf("notes lack %q:\n%s", want, n)
		}
	}
	if strings.Contains(n, "sampled") {
		t.Errorf("unsampled run noted as sampled:\n%s", n)
	}
}

func near(got int64, want float64) bool { return math.Abs(float64(got)-want) <= 1000 }

// TestV04Fixture checks the hand-made v0.4+ report: metadata, record
// fields, multi-token iterations, redaction.
func TestV04Fixture(t *testing.T) {
	c, warnings := importFile(t, "testdata/v04-requests/benchmarks.json", "v04")
	if len(c.Runs) != 1 || len(c.Requests) != 8 || len(warnings) != 0 {
		t.Fatalf("runs %d, requests %d, warnings %q", len(c.Runs), len(c.Requests), warnings)
	}
	run := c.Runs[0]
	if run.Convention != Convention04 || run.ToolVersion != "0.5.0" || run.Model != "example-model" ||
		run.Endpoint != "http://localhost:8000" || run.Tokenizer != "example-processor" || run.LoadMode != "concurrency" ||
		*run.Concurrency != 3 || run.Streaming == nil || !*run.Streaming {
		t.Errorf("run %+v", run)
	}
	if strings.Contains(run.ConfigJSON, "sk-handmade") || !strings.Contains(run.ConfigJSON, `"api_key":"REDACTED"`) {
		t.Errorf("config not redacted: %s", run.ConfigJSON)
	}
	if !strings.Contains(notes(run), "redacted from config_json: benchmark.config.backend.api_key") {
		t.Errorf("notes %q", run.Notes)
	}
	byID := map[string]formats.Request{}
	for _, r := range c.Requests {
		byID[r.SourceID] = r
	}
	a2 := byID["a2"] // usage says 128 tokens over 120 token iterations
	if *a2.OutputTokens != 128 || a2.OutputTokensSource != formats.SourceToolReported || a2.TokenMessageCount != 120 ||
		!near(*a2.FirstTokenOffsetNs, 150e6) || !near(*a2.LastTokenOffsetNs, 150e6+127*18e6) || a2.MessageCount != 0 {
		t.Errorf("a2 %+v", a2)
	}
	c1, x1 := byID["c1"], byID["x1"]
	if c1.Status != formats.StatusCancelled || c1.OutputTokens != nil || x1.Status != formats.StatusError ||
		x1.ErrorText != "HTTPStatusError: Server error '503 Service Unavailable'" || x1.FirstTokenOffsetNs != nil {
		t.Errorf("c1 %+v\nx1 %+v", c1, x1)
	}
	if got := reported(t, run, "time_per_output_token_ms.successful", "count"); got != 473 {
		t.Errorf("v0.4 TPOT count (Σ N) = %v, want 473", got)
	}
	if got := reported(t, run, "request_totals.total", "value"); got != 8 {
		t.Errorf("request_totals.total = %v", got)
	}
}

func TestSampled(t *testing.T) {
	c, warnings := importFile(t, "testdata/v04-sampled/benchmarks.json", "s")
	want := "sampled: 2 of 6 successful, 1 of 1 incomplete, 1 of 1 errored requests kept (--sample-requests 2)"
	if len(c.Requests) != 4 || len(warnings) != 1 || !strings.Contains(warnings[0], want) || !strings.Contains(notes(c.Runs[0]), want) {
		t.Errorf("requests %d, warnings %q", len(c.Requests), warnings)
	}
	if c.Runs[0].Convention != Convention04 || c.Runs[0].ToolVersion != "" {
		t.Errorf("run %+v", c.Runs[0])
	}
}

// TestTruncated checks a report cut inside its second benchmark's
// successful list: the first benchmark whole, two records of the second.
func TestTruncated(t *testing.T) {
	c, warnings := importFile(t, "testdata/truncated/benchmarks.json", "cut")
	if len(c.Runs) != 2 || len(c.Requests) != 9 || c.Runs[0].Truncated || !c.Runs[1].Truncated || c.Runs[1].RequestCount != 2 {
		t.Fatalf("runs %d, requests %d, truncated %v %v", len(c.Runs), len(c.Requests), c.Runs[0].Truncated, c.Runs[len(c.Runs)-1].Truncated)
	}
	// the file's end (48,572 bytes), and how far it is complete: the second
	// record's "}," ends before byte 48475 (the warning used to call that
	// point the cut)
	want := "the file ends at byte 48572, cut inside benchmark 2 in requests.successful after 2 complete records (complete up to byte 48475): 2 complete request records of it imported"
	if len(warnings) != 1 || !strings.Contains(warnings[0], want) || !strings.Contains(notes(c.Runs[1]), want) {
		t.Errorf("warnings %q", warnings)
	}
	if got := reported(t, c.Runs[1], "inter_token_latency_ms.successful", "mean"); got == 0 {
		t.Error("the cut benchmark's metrics (complete before its requests) were not imported")
	}
	// Cut in the middle of the first benchmark's metrics: nothing complete.
	b, _ := os.ReadFile("testdata/v03-requests/benchmarks.json")
	p := filepath.Join(t.TempDir(), "benchmarks.json")
	os.WriteFile(p, b[:bytes.Index(b, []byte(`"metrics"`))+40], 0o644)
	c, warnings = importFile(t, p, "cut2")
	if len(c.Runs) != 1 || !c.Runs[0].Truncated || len(c.Runs[0].Reported) != 0 || len(warnings) != 1 {
		t.Errorf("cut in metrics: runs %+v, warnings %q", c.Runs, warnings)
	}
	// Cut before any benchmark: an error.
	os.WriteFile(p, []byte(`{"metadata": {"version": 1}, "benchmarks": [`), 0o644)
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{}); err == nil || !strings.Contains(err.Error(), "the file ends before its first benchmark") {
		t.Errorf("cut before the first benchmark: %v", err)
	}
}

// TestCutOffsetsAreTheFiles: the positions in a cut report are the
// file's bytes, though the decoder reads Python's bare NaN and Infinity
// quoted (each gaining two bytes): a report with three of them before the
// cut names its real end and the real end of its last complete value.
func TestCutOffsetsAreTheFiles(t *testing.T) {
	rec := `{"type_": "generative_text_response", "request_id": "r%d", "prompt_tokens": 3, "output_tokens": 2, "start_time": 1.0, "end_time": 2.0, "first_token_time": 1.5, "last_token_time": 1.9}`
	full := `{"benchmarks": [{"type_": "generative_benchmark", "metrics": {"x": NaN, "y": Infinity, "z": -Infinity}, "requests": {"successful": [` +
		fmt.Sprintf(rec, 1) + ", " + fmt.Sprintf(rec, 2)
	completeUpTo := len(full) - len(fmt.Sprintf(rec, 2)) // after "r1's record, " (the decoder has read the comma and space)
	p := filepath.Join(t.TempDir(), "benchmarks.json")
	os.WriteFile(p, []byte(full[:len(full)-10]), 0o644)
	c, warnings := importFile(t, p, "nan")
	want := fmt.Sprintf("the file ends at byte %d, cut inside benchmark 1 in requests.successful after 1 complete records (complete up to byte %d)", len(full)-10, completeUpTo-1)
	if len(c.Requests) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], want) {
		t.Errorf("requests %d, warnings %q, want %q", len(c.Requests), warnings, want)
	}
}

// TestCutYAML: a YAML report cut short parses all the same (a prefix of a
// mapping is a mapping); it used to import with no warning. Cut inside the
// successful list, its complete records are imported, the one being
// written at the cut is dropped, the run is Truncated and the warning
// says where the file ends and why it is taken as cut. A report cut so
// early that its sorted keys have not reached any guidellm marker is still
// recognized by its name.
func TestCutYAML(t *testing.T) {
	b, err := os.ReadFile("testdata/v04-yaml/benchmarks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var whole formats.Collector
	if err := ingest.ImportFile(New(), "testdata/v04-yaml/benchmarks.yaml", ingest.Options{}, &whole); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "benchmarks.yaml")
	// inside the third successful record: errored and incomplete lists
	// (sorted first) whole, two successful records
	i := bytes.Index(b, []byte("\n    successful:\n"))
	for k := 0; k < 3; k++ {
		i += bytes.Index(b[i+1:], []byte("\n    - ")) + 1
	}
	os.WriteFile(p, b[:i+200], 0o644)
	c, warnings := importFile(t, p, "y")
	wantReq := 0
	for _, r := range whole.Requests {
		if r.Status != formats.StatusOK {
			wantReq++
		}
	}
	wantReq += 2
	if len(c.Runs) != 1 || !c.Runs[0].Truncated || len(c.Requests) != wantReq {
		t.Fatalf("runs %d (truncated %v), requests %d, want %d", len(c.Runs), len(c.Runs) > 0 && c.Runs[0].Truncated, len(c.Requests), wantReq)
	}
	want := fmt.Sprintf("the file ends at byte %d (line %d), cut inside benchmark 1 in requests.successful after 2 complete records (its last line has no newline; its last benchmark has no type_, start_time, which guidellm writes in every benchmark)", i+200, bytes.Count(b[:i+200], []byte("\n"))+1)
	if len(warnings) != 1 || !strings.Contains(warnings[0], want) || !strings.Contains(notes(c.Runs[0]), want) {
		t.Errorf("warnings %q\nwant %q", warnings, want)
	}
	// cut at a line end, before type_ (no marker in the file yet): still
	// recognized and said to be cut
	j := bytes.Index(b, []byte("\n  metrics:"))
	os.WriteFile(p, b[:j+1], 0o644)
	head, _ := ingest.ReadHead(p)
	if !New().Detect(p, head) {
		t.Fatal("a cut YAML report named benchmarks.yaml is not recognized")
	}
	_, warnings = importFile(t, p, "y2")
	if len(warnings) != 1 || !strings.Contains(warnings[0], "its last benchmark has no type_, metrics, requests, start_time") {
		t.Errorf("warnings %q", warnings)
	}
	// the whole report: no cut
	if _, warnings := importFile(t, "testdata/v04-yaml/benchmarks.yaml", "w"); len(warnings) != 0 {
		t.Errorf("whole report: warnings %q", warnings)
	}
}

func TestMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, data, where, msg string
	}{
		{"syntax", `{"benchmarks": [{"type_": "generative_benchmark", "metrics": {"x": 1,, }}]}`, "benchmark 1: metrics (byte 61)", "invalid JSON"},
		{"wrong type", `{"benchmarks": [{"type_": "generative_benchmark", "requests": {"successful": [{"type_": "generative_text_response", "start_time": 1.5, "first_token_time": "soon"}]}}]}`,
			"benchmark 1: requests.successful[0]", "first_token_time: not a number"},
		{"wrong type v4", `{"benchmarks": [{"type_": "generative_benchmark", "requests": {"successful": [{"type_": "generative_request_stats", "info": {"timings": {"request_start": true}}}]}}]}`,
			"benchmark 1: requests.successful[0]", "info.timings.request_start: not a number"},
		{"not a record", `{"benchmarks": [{"requests": {"successful": [{"foo": 1}]}}]}`,
			"benchmark 1: requests.successful[0]", "neither a v0.3 response record"},
		{"benchmarks not a list", `{"benchmarks": {"a": 1}}`, "benchmarks", "expected an array"},
		{"no benchmarks", `{"metadata": {"guidellm_version": "0.5.0"}, "args": {"benchmarks": 1}}`, "top level", `no "benchmarks" key`},
		// a NaN or out-of-range time, a fractional count, is a value check, not an error
		// (ingest/registry TestValueNotFinite, TestValueNotInteger);
		// a start time in another unit than seconds is an error
		{"start in ns", `{"benchmarks": [{"requests": {"successful": [{"start_time": 1700000000123456789}]}}]}`,
			"benchmark 1: requests.successful[0]", "start_time: 1700000000123456800 is Unix nanoseconds by its magnitude (2023-11-14T22:13:20Z as such), not seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "benchmarks.json")
			os.WriteFile(p, []byte(tc.data), 0o644)
			err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{})
			var fe *ingest.FormatError
			if !errors.As(err, &fe) || fe.Where != tc.where || !strings.Contains(err.Error(), tc.msg) || fe.File != p {
				t.Errorf("error %v (where %q), want %q at %q", err, whereOf(fe), tc.msg, tc.where)
			}
		})
	}
}

func whereOf(fe *ingest.FormatError) string {
	if fe == nil {
		return ""
	}
	return fe.Where
}

func TestUnknownKeys(t *testing.T) {
	c, warnings := importFile(t, "testdata/unknown-keys/benchmarks.json", "u")
	want := []string{
		"unknown top-level keys ignored: report_comment",
		"unknown benchmark keys kept in config_json only: goodput",
		"unknown request-record keys ignored: latency_breakdown ×1",
	}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q", warnings)
	}
	for i, w := range want {
		if !strings.HasSuffix(warnings[i], w) || !strings.Contains(notes(c.Runs[0]), w) {
			t.Errorf("warning %d = %q, want …%q", i, warnings[i], w)
		}
	}
	if len(c.Requests) != 1 || c.Requests[0].Status != formats.StatusOK {
		t.Errorf("requests %+v", c.Requests)
	}
}

func TestPythonNonFinite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "benchmarks.json")
	os.WriteFile(p, []byte(`{"benchmarks": [{"type_": "generative_benchmark", "args": {"strategy": {"type_": "throughput", "max_concurrency": null}, "note": "NaN in a string"}, "metrics": {"requests_per_second": {"successful": {"mean": NaN, "median": Infinity, "min": -Infinity, "count": 0, "percentiles": {"p99": 1.0}}}}}]}`), 0o644)
	c, _ := importFile(t, p, "nf")
	run := c.Runs[0]
	texts := map[string]string{}
	for _, s := range run.Reported {
		if s.Value == nil {
			texts[s.Stat] = s.Text
		}
	}
	if texts["mean"] != "NaN" || texts["median"] != "Infinity" || texts["min"] != "-Infinity" || reported(t, run, "requests_per_second.successful", "p99") != 1 {
		t.Errorf("reported %+v", run.Reported)
	}
	if run.LoadMode != "request_rate" || !math.IsInf(*run.RequestRateRPS, 1) || !strings.Contains(run.ConfigJSON, `"note":"NaN in a string"`) {
		t.Errorf("run %+v", run)
	}
}

// TestNonFiniteReader checks the streaming filter against a whole-buffer
// rewrite, for every split of the input into two reads.
func TestNonFiniteReader(t *testing.T) {
	in := `{"a": NaN, "b": "NaN \"Infinity\"", "c": [-Infinity, Infinity, -1.5, "-Infinity"], "d": "\\", "e": NaN}`
	want := `{"a": "NaN", "b": "NaN \"Infinity\"", "c": ["-Infinity", "Infinity", -1.5, "-Infinity"], "d": "\\", "e": "NaN"}`
	for cut := 0; cut <= len(in); cut++ {
		r := newNonFiniteReader(&splitReader{parts: []string{in[:cut], in[cut:]}})
		var out bytes.Buffer
		if _, err := out.ReadFrom(r); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("cut %d:\n got %s\nwant %s", cut, out.String(), want)
		}
	}
}

type splitReader struct{ parts []string }

func (s *splitReader) Read(p []byte) (int, error) {
	for len(s.parts) > 0 && s.parts[0] == "" {
		s.parts = s.parts[1:]
	}
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	return n, nil
}

func TestEmptyAndForeign(t *testing.T) {
	p := filepath.Join(t.TempDir(), "benchmarks.json")
	os.WriteFile(p, nil, 0o644)
	if !New().Detect(p, nil) {
		t.Error("Detect: an empty benchmarks.json should be claimed")
	}
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{}); err == nil || err.Error() != p+": empty file (expected a guidellm benchmarks report)" {
		t.Errorf("empty: %v", err)
	}
	q := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(q, []byte(`{"x": 1}`), 0o644)
	if err := ingest.ImportFile(New(), q, ingest.Options{}, &formats.Collector{}); !errors.Is(err, ingest.ErrNotThisFormat) {
		t.Errorf("foreign: %v", err)
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
		{corpusFile, true},
		{corpus + "/v03-sweep-sync-stripped/benchmarks_stripped.yaml", yamlSupported},
		{corpus + "/v03-sweep-sync-stripped/benchmarks_stripped_output.txt", false},
		{"testdata/v04-requests/benchmarks.json", true},
		{"testdata/v04-yaml/benchmarks.yaml", yamlSupported},
		{"testdata/truncated/benchmarks.json", true},
		{"../../testdata/llmperf/leaderboard-groq-70b/summary.json", false},
		{"../../testdata/llmperf/leaderboard-groq-70b/individual_responses.json", false},
		{"../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts/profile_export_aiperf.json", false},
		{"../../testdata/genai-perf/openrouter-gpt4omini-c1-nonstream/profile_export.json", false},
		{"../../testdata/mlperf/amd-mi300x-llama2-70b-99-server/mlperf_log_summary.txt", false},
	} {
		if got := im.Detect(tc.path, head(tc.path)); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	if !im.Detect("report.json", []byte(`{"metadata": {"version": 1, "guidellm_version": "0.6.1", "python_version": "3.12"}, "args": {"data": ["`)) {
		t.Error("Detect: a v0.5+ report whose args fill the head")
	}
	if im.Detect("x.json", []byte(`{"benchmarks": [{"name": "resnet"}]}`)) {
		t.Error("Detect: a foreign benchmarks object without guidellm markers")
	}
}

func TestCompanions(t *testing.T) {
	if got := New().Companions(corpusFile); len(got) != 1 || filepath.Base(got[0]) != "benchmarks_stripped.yaml" {
		t.Errorf("Companions = %q", got)
	}
	if got := New().Companions("testdata/v04-requests/benchmarks.json"); got != nil {
		t.Errorf("Companions without a twin = %q", got)
	}
}

func TestDefaultLabel(t *testing.T) {
	if got := defaultLabel("testdata/v04-requests/benchmarks.json"); got != "v04-requests" {
		t.Errorf("label %q", got)
	}
	if got := defaultLabel(corpusFile); got != "benchmarks_stripped" {
		t.Errorf("label %q", got)
	}
}

func TestYAML(t *testing.T) {
	if !yamlSupported {
		err := ingest.ImportFile(New(), "testdata/v04-yaml/benchmarks.yaml", ingest.Options{}, &formats.Collector{})
		if err == nil || !strings.Contains(err.Error(), "needs a build with YAML support") {
			t.Errorf("YAML without support: %v", err)
		}
		t.Skip("built without -tags guidellm_yaml")
	}
	// The YAML twin of the v0.4 fixture imports to the same rows.
	cy, _ := importFile(t, "testdata/v04-yaml/benchmarks.yaml", "v04")
	cj, _ := importFile(t, "testdata/v04-requests/benchmarks.json", "v04")
	if len(cy.Requests) != len(cj.Requests) || len(cy.Runs) != 1 {
		t.Fatalf("yaml %d requests, json %d", len(cy.Requests), len(cj.Requests))
	}
	// yaml.dump sorts keys: the lists come errored, incomplete, successful.
	byID := map[string]formats.Request{}
	for _, r := range cj.Requests {
		byID[r.SourceID] = r
	}
	for _, r := range cy.Requests {
		j := byID[r.SourceID]
		r.RequestKey, j.RequestKey = 0, 0
		if a, b := dumpRequest(r), dumpRequest(j); a != b {
			t.Errorf("yaml %s\njson %s", a, b)
		}
	}
	ry, rj := cy.Runs[0], cj.Runs[0]
	if ry.Convention != rj.Convention || ry.ToolVersion != rj.ToolVersion || len(ry.Reported) != len(rj.Reported) {
		t.Errorf("runs differ:\n%+v\n%+v", ry, rj)
	}
	// The corpus YAML twin alone.
	c, _ := importFile(t, corpus+"/v03-sweep-sync-stripped/benchmarks_stripped.yaml", "y")
	if got := reported(t, c.Runs[0], "time_per_output_token_ms.successful", "mean"); got != 4.90300272307966 {
		t.Errorf("corpus YAML TPOT mean %v", got)
	}
}

func dumpRequest(r formats.Request) string {
	var buf bytes.Buffer
	d := formats.NewDumper(&buf)
	d.Request(&r, nil)
	d.Flush()
	return buf.String()
}
