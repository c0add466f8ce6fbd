package genaiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// corpusDir holds the real GenAI-Perf runs (see each SOURCE.md).
const corpusDir = "../../testdata/genai-perf"

// testCase is one directory of inputs.
type testCase struct{ name, dir string }

// cases lists the hand-made fixtures (testdata/<name>/) and the corpus runs.
func cases(t *testing.T) []testCase {
	t.Helper()
	var out []testCase
	for _, root := range []string{"testdata", corpusDir} {
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() && e.Name() != "fuzz" { // testdata/fuzz: the fuzz targets' corpus
				out = append(out, testCase{e.Name(), filepath.Join(root, e.Name())})
			}
		}
	}
	return out
}

// primaryInputs returns the files of dir that Detect accepts, in name order
// (the way the registry finds them).
func primaryInputs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		head, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(head) > ingest.HeadSize {
			head = head[:ingest.HeadSize]
		}
		if New().Detect(p, head) {
			out = append(out, p)
		}
	}
	return out
}

// imported is the result of importing a case.
type imported struct {
	formats.Collector
	warns []string
	dump  string
}

// importCase imports every primary input of dir, collecting rows, warnings
// and the golden dump (dump lines, then "warn …" lines).
func importCase(t *testing.T, dir string, opt ingest.Options) *imported {
	t.Helper()
	res := &imported{}
	var buf bytes.Buffer
	d := formats.NewDumper(&buf)
	opt.Warn = func(s string) { res.warns = append(res.warns, s) }
	inputs := primaryInputs(t, dir)
	if len(inputs) != 1 {
		t.Fatalf("%s: %d primary inputs detected (%v), want 1", dir, len(inputs), inputs)
	}
	if err := ingest.ImportFile(New(), inputs[0], opt, formats.Tee(&res.Collector, d)); err != nil {
		t.Fatalf("Import(%s): %v", inputs[0], err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, w := range res.warns {
		buf.WriteString("warn " + w + "\n")
	}
	res.dump = buf.String()
	return res
}

// TestFixturesUpToDate keeps testdata/<fixture>/profile_export.json equal
// to the definitions in fixtures_test.go (-update writes them).
func TestFixturesUpToDate(t *testing.T) {
	for _, f := range fixtures {
		path := filepath.Join("testdata", f.name, "profile_export.json")
		want := f.encode()
		if golden.Update() {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is out of date (err %v); run go test -update", path, err)
		}
	}
}

// TestGolden compares each case's dump with testdata/<case>.golden (-update
// rewrites the dumps and the hand-made fixtures).
func TestGolden(t *testing.T) {
	if golden.Update() {
		TestFixturesUpToDate(t)
	}
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			got := importCase(t, c.dir, ingest.Options{}).dump
			golden.Check(t, filepath.Join("testdata", c.name+".golden"), []byte(got))
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestDetect checks Detect on heads and on the summary/raw neighbourhood.
func TestDetect(t *testing.T) {
	im := New()
	heads := []struct {
		name, path, head string
		want             bool
	}{
		{"raw export", "x/profile_export.json", `{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[{"timestamp":1,"request_inputs":{}`, true},
		{"raw export with another name", "x/run1.json", ` {"experiments":[{"experiment":{"mode":"concurrency"`, true},
		{"triton order (service_kind first)", "x/out.json", `{"service_kind":"triton","endpoint":"","experiments":[{"experiment":{`, true},
		{"truncated right after experiments", "x/profile_export.json", `{"experiments":[`, true},
		{"truncated, other name", "x/out.json", `{"experiments":[`, false},
		{"GenAI-Perf inputs.json", "x/inputs.json", `{"data":[{"payload":[{"messages":[]}]}]}`, false},
		{"AIPerf record", "x/profile_export.jsonl", `{"metadata":{"session_num":0},"metrics":{}}`, false},
		{"JSON array", "x/profile_export.json", `[{"experiments":1}]`, false},
		{"empty", "x/profile_export.json", ``, false},
	}
	for _, h := range heads {
		if got := im.Detect(h.path, []byte(h.head)); got != h.want {
			t.Errorf("%s: Detect = %v, want %v", h.name, got, h.want)
		}
	}
	// Summaries: detected only when alone.
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	js, csv := write("p_genai_perf.json"), write("p_genai_perf.csv")
	if im.Detect(csv, nil) {
		t.Error("CSV summary detected although its JSON summary is beside it")
	}
	if !im.Detect(js, nil) {
		t.Error("lone JSON summary not detected")
	}
	if got := im.Companions(js); len(got) != 1 || got[0] != csv {
		t.Errorf("Companions(JSON summary) = %v", got)
	}
	raw := write("p.json")
	if im.Detect(js, nil) || im.Detect(csv, nil) {
		t.Error("summary detected although the raw export is beside it")
	}
	if got := im.Companions(raw); len(got) != 2 || got[0] != js || got[1] != csv {
		t.Errorf("Companions(raw) = %v, want [%s %s]", got, js, csv)
	}
	_ = os.Remove(js)
	_ = os.Remove(raw)
	if !im.Detect(csv, nil) {
		t.Error("lone CSV summary not detected")
	}
}

// TestCorpus checks the real runs against facts stated in their SOURCE.md
// and against the summary GenAI-Perf wrote from the same raw file.
func TestCorpus(t *testing.T) {
	tests := []struct {
		dir        string
		model      string
		requests   int
		latencyAvg float64 // request_latency avg in the JSON summary, ms
	}{
		{"openrouter-gpt4omini-c1-nonstream", "openai/gpt-4o-mini", 96, 2235.7054640208335},
		{"openrouter-llama31-8b-c1-nonstream", "meta-llama/llama-3.1-8b-instruct", 39, 5494.069679487179},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			res := importCase(t, filepath.Join(corpusDir, tt.dir), ingest.Options{})
			if len(res.Runs) != 1 {
				t.Fatalf("%d runs, want 1", len(res.Runs))
			}
			run := res.Runs[0]
			if run.RunID != tt.dir || run.RequestCount != int64(tt.requests) || len(res.Requests) != tt.requests {
				t.Errorf("run %q: request_count %d, %d request rows; want %q, %d", run.RunID, run.RequestCount, len(res.Requests), tt.dir, tt.requests)
			}
			if run.Tool != "genai-perf" || run.ToolVersion != "2.54.0" || run.Model != tt.model || run.Endpoint != "v1/chat/completions" ||
				run.Streaming == nil || *run.Streaming || run.LoadMode != "concurrency" || run.Concurrency == nil || *run.Concurrency != 1 ||
				run.Tokenizer != "gpt2" || run.ClockDomain != "unix" || run.Truncated {
				t.Errorf("run fields: %+v", run)
			}
			roles := []string{}
			for _, sf := range run.SourceFiles {
				roles = append(roles, sf.Role)
				if len(sf.SHA256) != 64 || sf.Bytes == 0 {
					t.Errorf("source file %+v", sf)
				}
			}
			if strings.Join(roles, ",") != "raw,summary,summary_csv" {
				t.Errorf("source file roles %v", roles)
			}
			// Every request: one non-streaming body with content and server usage.
			var sumLatencyMs float64
			for i, r := range res.Requests {
				if r.Status != formats.StatusOK || r.MessageCount != 1 || r.TokenMessageCount != 1 ||
					r.OutputTokensSource != formats.SourceServerUsage || r.OutputTokens == nil ||
					r.InputTokensSource != formats.SourceServerUsage || r.StreamEndOffsetNs == nil ||
					r.ResponseID == "" || r.RequestKey != int64(i) {
					t.Fatalf("request %d: %+v", i, r)
				}
				sumLatencyMs += float64(*r.StreamEndOffsetNs) / 1e6
			}
			// GenAI-Perf's request_latency is last response - timestamp
			// (triton-inference-server/perf_analyzer@263c5f6e0c7a
			// genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py
			// line 165), i.e. our stream end offset.
			if tt.latencyAvg != 0 {
				got := sumLatencyMs / float64(len(res.Requests))
				if d := got - tt.latencyAvg; d > 1e-6 || d < -1e-6 {
					t.Errorf("mean stream end %.10f ms, summary request_latency avg %.10f", got, tt.latencyAvg)
				}
				if v := reported(run, "request_latency", "avg"); v == nil || *v != tt.latencyAvg {
					t.Errorf("Reported request_latency avg = %v, want %v", v, tt.latencyAvg)
				}
			}
			if v := reported(run, "request_count", "avg"); v == nil || *v != float64(tt.requests) {
				t.Errorf("Reported request_count = %v", v)
			}
			// The API key (masked with X in the corpus) must not survive.
			if !strings.Contains(run.ConfigJSON, `"Authorization:REDACTED"`) {
				t.Errorf("ConfigJSON header not redacted: %s", run.ConfigJSON)
			}
			all, _ := json.Marshal(res.Collector)
			for _, secret := range []string{"sk-or-v1", "XXXXXXXXXXXXXXXX", "Bearer"} {
				if bytes.Contains(all, []byte(secret)) || strings.Contains(res.dump, secret) {
					t.Errorf("output contains %q", secret)
				}
			}
			if !hasNote(run, "input_config.header[0]") {
				t.Errorf("no redaction note: %q", run.Notes)
			}
			if !hasNote(run, "window_boundaries: 4 (3 measurement windows)") && tt.requests == 96 {
				t.Errorf("no window note: %q", run.Notes)
			}
		})
	}
}

// TestCSVMatchesJSON reads the corpus CSV alone (testdata/summary-only-csv-2024
// is a copy) and checks each value is the JSON summary's value rounded to
// two decimals, under the same metric and stat names.
func TestCSVMatchesJSON(t *testing.T) {
	csvRun := importCase(t, "testdata/summary-only-csv-2024", ingest.Options{}).Runs[0]
	jsonRun := importCase(t, filepath.Join(corpusDir, "openrouter-gpt4omini-c1-nonstream"), ingest.Options{}).Runs[0]
	if len(csvRun.Reported) != 3*9+3 {
		t.Errorf("%d CSV stats, want 30", len(csvRun.Reported))
	}
	for _, s := range csvRun.Reported {
		j := reportedStat(jsonRun, s.Metric, s.Stat)
		if j == nil || s.Value == nil {
			t.Errorf("CSV %s/%s has no JSON twin or no value", s.Metric, s.Stat)
			continue
		}
		if j.Unit != s.Unit {
			t.Errorf("%s unit CSV %q, JSON %q", s.Metric, s.Unit, j.Unit)
		}
		if d := *j.Value - *s.Value; d > 0.005+1e-9 || d < -0.005-1e-9 {
			t.Errorf("%s/%s: CSV %v, JSON %v", s.Metric, s.Stat, *s.Value, *j.Value)
		}
	}
	if !hasNote(csvRun, "summary only: nothing to recompute") {
		t.Errorf("notes %q", csvRun.Notes)
	}
}

func TestSummaryOnly(t *testing.T) {
	t.Run("2025 JSON", func(t *testing.T) {
		res := importCase(t, "testdata/summary-only-json", ingest.Options{})
		run := res.Runs[0]
		if len(res.Requests) != 0 || run.RequestCount != 0 || run.ClockDomain != "" {
			t.Errorf("summary-only run has requests or a clock: %+v", run)
		}
		if run.Model != "meta-llama/Llama-3.1-8B-Instruct" || run.Streaming == nil || !*run.Streaming ||
			run.LoadMode != "concurrency" || run.Concurrency == nil || *run.Concurrency != 8 ||
			run.Tokenizer != "meta-llama/Llama-3.1-8B-Instruct" || run.Endpoint != "" {
			t.Errorf("run fields from the nested input_config: %+v", run)
		}
		if v := reported(run, "request_goodput", "avg"); v == nil || *v != -1 {
			t.Errorf("request_goodput = %v, want -1 kept", v)
		}
		if s := reportedStat(run, "output_token_throughput_per_user", "std"); s == nil || s.Value != nil || s.Text != "null" {
			t.Errorf("null std: %+v", s)
		}
		if s := reportedStat(run, "time_to_first_token", "p1"); s == nil || *s.Value != 40.1 || s.Unit != "ms" {
			t.Errorf("p1: %+v", s)
		}
		for _, secret := range []string{"sk-fake", "hunter2"} {
			if strings.Contains(run.ConfigJSON, secret) || strings.Contains(res.dump, secret) {
				t.Errorf("secret %q in output", secret)
			}
		}
		for _, n := range []string{"summary only: nothing to recompute", "request_goodput is -1", "input_config.input.extra.api_key", "input_config.input.header[0]", `"telemetry_stats" not imported`} {
			if !hasNote(run, n) {
				t.Errorf("no note %q in %q", n, run.Notes)
			}
		}
		if len(res.warns) != 1 || !strings.Contains(res.warns[0], "request_goodput is -1") {
			t.Errorf("warnings %q", res.warns)
		}
	})
	t.Run("2025 CSV", func(t *testing.T) {
		run := importCase(t, "testdata/summary-only-csv-2025", ingest.Options{}).Runs[0]
		want := map[string]string{ // metric/stat -> unit=value
			"request_latency/avg":                  "ms=1234.56",
			"request_latency/p1":                   "ms=1005",
			"time_to_second_token/p10":             "ms=9.5",
			"output_token_throughput_per_user/p50": "tokens/sec/user=90.9",
			"output_token_throughput/avg":          "tokens/sec=1234.5",
			"request_throughput/avg":               "requests/sec=4.1",
			"request_goodput/avg":                  "requests/sec=-1",
			"request_count/avg":                    "count=100",
			"input_sequence_length/p5":             "tokens=550",
		}
		for k, w := range want {
			m, st, _ := strings.Cut(k, "/")
			s := reportedStat(run, m, st)
			if s == nil || s.Value == nil || s.Unit+"="+ftoa(*s.Value) != w {
				t.Errorf("%s: %+v, want %s", k, s, w)
			}
		}
		if s := reportedStat(run, "time_to_second_token", "p1"); s == nil || s.Value != nil || s.Text != "N/A" {
			t.Errorf("N/A cell: %+v", s)
		}
		if reportedStat(run, "gpu_power_usage", "avg") != nil || reportedStat(run, "gpu_power_limit", "avg") != nil {
			t.Error("telemetry imported")
		}
		if len(run.Reported) != 7*12+4 {
			t.Errorf("%d stats, want 88", len(run.Reported))
		}
		if !hasNote(run, "request_goodput is -1") || !hasNote(run, "telemetry sections") {
			t.Errorf("notes %q", run.Notes)
		}
	})
}

func TestNoText(t *testing.T) {
	res := importCase(t, "testdata/reasoning-then-content", ingest.Options{NoText: true})
	for _, e := range res.Events {
		if e.Text != nil || e.ReasoningText != nil {
			t.Fatalf("text kept with NoText: %+v", e)
		}
	}
	if res.Requests[0].TokenMessageCount != 3 {
		t.Errorf("NoText changed classification: %+v", res.Requests[0])
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, body string
		where      string // FormatError.Where prefix; "" when any
		notFormat  bool
	}{
		{"not an object", `[1,2,3]`, "top level", true},
		{"no experiments", `{"version":"2.54.0"}`, "top level", true},
		{"empty file", ``, "byte 0", false},
		{"timestamp of the wrong type", `{"experiments":[{"requests":[{"timestamp":1,"response_timestamps":[],"response_outputs":[]},{"timestamp":"x"}]}]}`, "experiment 0, request 1 (byte ", false},
		{"missing timestamp", `{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[{"response_timestamps":[],"response_outputs":[]}]}]}`, "experiment 0, request 0 (byte ", false},
		{"syntax error inside a request", `{"experiments":[{"requests":[{"timestamp":1,,}]}]}`, "experiment 0, request 0 (byte ", false},
		{"requests not an array", `{"experiments":[{"requests":{}}]}`, "experiment 0 (byte ", false},
		{"no experiment", `{"experiments":[]}`, "top level", false},
		{"data after the object", `{"experiments":[{}]} {}`, "top level", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "profile_export.json")
			if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			err := ingest.ImportFile(New(), path, ingest.Options{}, &formats.Collector{})
			var fe *ingest.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a FormatError", err)
			}
			if fe.File != path || !strings.HasPrefix(fe.Where, tt.where) {
				t.Errorf("error %q: file %q where %q, want where prefix %q", err, fe.File, fe.Where, tt.where)
			}
			if errors.Is(err, ingest.ErrNotThisFormat) != tt.notFormat {
				t.Errorf("error %q: ErrNotThisFormat = %v, want %v", err, !tt.notFormat, tt.notFormat)
			}
		})
	}
}

// TestMismatchedLengths: the pairable part is imported, with a warning.
func TestMismatchedLengths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profile_export.json")
	body := `{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[` +
		`{"timestamp":1000,"request_inputs":{"payload":"{\"stream\":true}"},"response_timestamps":[1100,1200,1300],` +
		`"response_outputs":[{"response":"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"},{"response":"data: [DONE]\n\n"}]}]}]}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var col formats.Collector
	var warns []string
	if err := ingest.ImportFile(New(), path, ingest.Options{Warn: func(s string) { warns = append(warns, s) }}, &col); err != nil {
		t.Fatal(err)
	}
	r := col.Requests[0]
	if r.MessageCount != 2 || *r.FirstTokenOffsetNs != 100 || *r.StreamEndOffsetNs != 200 {
		t.Errorf("request %+v", r)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "experiment 0, request 0 (3 response_timestamps, 2 response_outputs)") {
		t.Errorf("warnings %q", warns)
	}
}

// TestEveryCut imports every prefix of a fixture: each either fails with a
// FormatError (cut before the experiments) or imports the complete requests
// before the cut, marked truncated. Never a panic, never a request that was
// not complete.
func TestEveryCut(t *testing.T) {
	full := fixtures[0].encode()
	var want formats.Collector
	path := filepath.Join(t.TempDir(), "profile_export.json")
	if err := os.WriteFile(path, full, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ingest.ImportFile(New(), path, ingest.Options{}, &want); err != nil {
		t.Fatal(err)
	}
	prev := 0
	for n := 0; n < len(full); n++ {
		if err := os.WriteFile(path, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		var got formats.Collector
		err := ingest.ImportFile(New(), path, ingest.Options{}, &got)
		if err != nil {
			var fe *ingest.FormatError
			if !errors.As(err, &fe) || len(got.Requests) > 0 {
				t.Fatalf("cut at %d: %v (%d requests)", n, err, len(got.Requests))
			}
			continue
		}
		if len(got.Runs) != 1 || !got.Runs[0].Truncated || len(got.Requests) < prev {
			t.Fatalf("cut at %d: runs %+v, %d requests (before: %d)", n, got.Runs, len(got.Requests), prev)
		}
		prev = len(got.Requests)
		for i := range got.Requests {
			if !jsonEqual(got.Requests[i], want.Requests[i]) {
				t.Fatalf("cut at %d: request %d differs from the full import", n, i)
			}
		}
	}
}

// TestSinkError: an error from the Sink is returned as is.
func TestSinkError(t *testing.T) {
	boom := errors.New("disk full")
	err := ingest.ImportFile(New(), "testdata/vllm-chat-stream/profile_export.json", ingest.Options{}, failSink{boom})
	if err != boom {
		t.Errorf("got %v, want the sink's error", err)
	}
}

type failSink struct{ err error }

func (f failSink) Request(*formats.Request, []formats.Event) error { return f.err }
func (f failSink) Run(*formats.Run) error                          { return f.err }

func reportedStat(run formats.Run, metric, stat string) *formats.ReportedStat {
	for i := range run.Reported {
		if run.Reported[i].Metric == metric && run.Reported[i].Stat == stat {
			return &run.Reported[i]
		}
	}
	return nil
}

func reported(run formats.Run, metric, stat string) *float64 {
	if s := reportedStat(run, metric, stat); s != nil {
		return s.Value
	}
	return nil
}

func hasNote(run formats.Run, sub string) bool {
	for _, n := range run.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func ftoa(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func (f failSink) Batch(b *formats.Batch) error { return b.EachRow(f.Request) }
