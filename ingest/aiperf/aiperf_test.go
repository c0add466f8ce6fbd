package aiperf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// corpus is the real AIPerf runs under the module's testdata (each with a
// SOURCE.md).
const corpus = "../../testdata/aiperf"

func corpusCases(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(corpus, "*", "profile_export.jsonl"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus cases under %s: %v", corpus, err)
	}
	var cases []string
	for _, d := range dirs {
		cases = append(cases, filepath.Base(filepath.Dir(d)))
	}
	return cases
}

// importFile imports path with label and returns the collected rows.
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

// sampledEvents is a Sink that passes on each request's first two events
// and its last one only, so that golden files stay reviewable (the
// 524-error run alone has 18,684 events). Every event is still checked by
// TestRebuiltEventsMatchLatency.
type sampledEvents struct{ *formats.Dumper }

func (s sampledEvents) Batch(b *formats.Batch) error { return b.EachRow(s.Request) }

func (s sampledEvents) Request(r *formats.Request, ev []formats.Event) error {
	if len(ev) > 3 {
		ev = append(append([]formats.Event(nil), ev[:2]...), ev[len(ev)-1])
	}
	return s.Dumper.Request(r, ev)
}

// dump imports path into a golden dump (events sampled).
func dump(t *testing.T, path, label string) []byte {
	t.Helper()
	var buf bytes.Buffer
	d := formats.NewDumper(&buf)
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: label}, sampledEvents{d}); err != nil {
		t.Fatalf("Import(%s): %v", path, err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGoldenCorpus(t *testing.T) {
	for _, name := range corpusCases(t) {
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join(corpus, name, "profile_export.jsonl"), name))
		})
	}
}

func TestGoldenFixtures(t *testing.T) {
	for _, f := range []string{
		"edge-records/profile_export.jsonl",
		"v01-shape/profile_export.jsonl",
		"truncated/profile_export.jsonl",
		"summary-only-csv/profile_export_aiperf.csv",
		"summary-only-json/profile_export_aiperf.json",
	} {
		name := filepath.Dir(f)
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join("testdata", f), name))
		})
	}
}

// TestCorpusCounts checks request and status counts against SOURCE.md.
func TestCorpusCounts(t *testing.T) {
	type counts struct{ total, ok, errs int }
	want := map[string]counts{
		"llama31-8b-cloudflare-agent-c2-524errors": {100, 90, 10},
		"llama31-8b-cloudflare-chatbot-c1":         {20, 20, 0},
		"llama31-8b-local-chatbot-c2":              {20, 20, 0},
		"llama32-3b-gguf-c1-mixed-timeouts":        {20, 10, 10},
		"qwen35-4b-gguf-c1-all-timeouts":           {20, 0, 20},
		"qwen3vl30b-local-agent-c2":                {20, 20, 0},
		"qwen3vl30b-local-chatbot-c1-warmup2":      {10, 10, 0},
		"qwen3vl30b-ngrok-agent-c1":                {10, 10, 0},
	}
	for _, name := range corpusCases(t) {
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expected counts for corpus case %s", name)
			}
			c, warnings := importFile(t, filepath.Join(corpus, name, "profile_export.jsonl"), name)
			if len(c.Runs) != 1 || c.Runs[0].RequestCount != int64(w.total) || len(c.Requests) != w.total {
				t.Fatalf("runs %d, request_count %d, requests %d; want 1 run, %d requests", len(c.Runs), c.Runs[0].RequestCount, len(c.Requests), w.total)
			}
			by := map[string]int{}
			for _, r := range c.Requests {
				by[r.Status]++
			}
			if by[formats.StatusOK] != w.ok || by[formats.StatusError] != w.errs {
				t.Errorf("statuses %v, want %d ok and %d error", by, w.ok, w.errs)
			}
			if c.Runs[0].Truncated || len(warnings) > 0 {
				t.Errorf("truncated %v, warnings %q", c.Runs[0].Truncated, warnings)
			}
			// SOURCE.md: every CSV row equals the JSON value rounded to 2
			// decimals; this also checks the CSV header → tag mapping.
			// AIPerf 0.8's CSV has a sum column its JSON lacks.
			agree := false
			for _, n := range c.Runs[0].Notes {
				var k, m int
				_, err := fmt.Sscanf(n, "profile_export_aiperf.csv checked against the JSON summary: %d of %d values agree to 2 decimals", &k, &m)
				if err != nil || k == 0 || strings.Contains(n, "differ") {
					continue
				}
				if k == m || (c.Runs[0].ToolVersion == "0.8.0" && strings.Contains(n, fmt.Sprintf("; %d have no JSON counterpart (by statistic: sum ×%d)", m-k, m-k))) {
					agree = true
				}
			}
			if !agree {
				t.Errorf("CSV does not agree with the JSON: %q", c.Runs[0].Notes)
			}
		})
	}
}

// TestCloudflare524 checks the run with ten HTTP 524 errors and three
// successful records without token counts (SOURCE.md).
func TestCloudflare524(t *testing.T) {
	c, _ := importFile(t, filepath.Join(corpus, "llama31-8b-cloudflare-agent-c2-524errors", "profile_export.jsonl"), "cf")
	var sessions []string
	for _, r := range c.Requests {
		switch {
		case r.Status == formats.StatusError:
			if r.ErrorCode == nil || *r.ErrorCode != 524 || !strings.Contains(r.ErrorText, "524: A timeout occurred") {
				t.Errorf("request %d: error code %v, text %.60q", r.RequestKey, r.ErrorCode, r.ErrorText)
			}
			if r.StreamEndOffsetNs != nil || r.FirstTokenOffsetNs != nil {
				t.Errorf("request %d: error record has offsets", r.RequestKey)
			}
			sessions = append(sessions, r.SourceID)
		case r.OutputTokens == nil:
			// Sessions 28, 35, 53 have no ISL/OSL/usage metrics but do have
			// inter_chunk_latency: events rebuilt, token count unknown.
			if r.InputTokens != nil || r.TokenMessageCount == 0 || r.LastTokenOffsetNs == nil {
				t.Errorf("request %d (%s): input %v, token messages %d", r.RequestKey, r.SourceID, r.InputTokens, r.TokenMessageCount)
			}
			sessions = append(sessions, "no-osl:"+r.SourceID)
		}
	}
	want := "session_000000/0 session_000029/0 no-osl:session_000028/0 session_000036/0 no-osl:session_000035/0 session_000037/0 session_000038/0 session_000039/0 session_000040/0 session_000041/0 session_000042/0 session_000054/0 no-osl:session_000053/0"
	if got := strings.Join(sessions, " "); got != want {
		t.Errorf("error / no-OSL records:\n got %s\nwant %s", got, want)
	}
	if got := reported(t, c.Runs[0], "error_request_count", "avg"); got != 10 {
		t.Errorf("error_request_count avg %v", got)
	}
	if got := reported(t, c.Runs[0], "time_to_first_token", "count"); got != 90 {
		t.Errorf("time_to_first_token count %v, want 90", got)
	}
	if got := reported(t, c.Runs[0], "output_sequence_length", "count"); got != 87 {
		t.Errorf("output_sequence_length count %v, want 87", got)
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

// TestReportedSummary checks summary values recomputed in SOURCE.md and the
// run configuration read from input_config (0.8 and 0.10 layouts).
func TestReportedSummary(t *testing.T) {
	c, _ := importFile(t, filepath.Join(corpus, "qwen3vl30b-local-agent-c2", "profile_export.jsonl"), "q")
	run := c.Runs[0]
	for _, w := range []struct {
		metric, stat string
		want         float64
	}{
		{"time_to_first_token", "avg", 174.632053},
		{"time_to_first_token", "p50", 179.080460},
		{"time_to_first_token", "p99", 229.026246},
		{"request_latency", "avg", 10847.685633},
		{"request_latency", "p99", 20441.474360},
		{"benchmark_duration", "avg", 108.950},
	} {
		if got := reported(t, run, w.metric, w.stat); math.Abs(got-w.want) > 5e-4 {
			t.Errorf("%s/%s = %v, want %v", w.metric, w.stat, got, w.want)
		}
	}
	if run.ToolVersion != "0.10.0" || run.Model != "Qwen3-VL-30B-A3B-Instruct-optimumxt" || run.Endpoint != "http://localhost:8000/v1/chat/completions" ||
		run.LoadMode != "concurrency" || run.Concurrency == nil || *run.Concurrency != 2 || run.Streaming == nil || !*run.Streaming ||
		run.Tokenizer != "Qwen/Qwen3-VL-30B-A3B-Instruct" || run.ClockDomain != formats.ClockUnix || run.Convention != "aiperf" {
		t.Errorf("run config: %+v", run)
	}
	c, _ = importFile(t, filepath.Join(corpus, "llama32-3b-gguf-c1-mixed-timeouts", "profile_export.jsonl"), "m")
	run = c.Runs[0]
	if run.ToolVersion != "0.8.0" || run.Model != "llama-3.2-3b-instruct-gguf:q4_k_m" || run.Endpoint != "http://192.168.19.150:8080/v1/chat/completions" ||
		run.LoadMode != "concurrency" || *run.Concurrency != 1 || run.Tokenizer != "gpt2" || len(run.SourceFiles) != 3 || run.SourceFiles[1].Role != "summary" || run.SourceFiles[2].Role != "summary_csv" {
		t.Errorf("run config: %+v", run)
	}
	if got := reported(t, run, "request_latency", "p90"); got != 740.7366188999996 {
		t.Errorf("request_latency p90 %v", got)
	}
}

// TestHandCheckedOffsets checks the first record of the mixed-timeouts run
// against values computed by hand from its JSONL line:
// TTFT 1701.6899509999998 ms, TTST 21.177083 ms, request_latency
// 1806.857844 ms, request_end_ns − request_start_ns = 1828211334.
func TestHandCheckedOffsets(t *testing.T) {
	c, _ := importFile(t, filepath.Join(corpus, "llama32-3b-gguf-c1-mixed-timeouts", "profile_export.jsonl"), "m")
	r := c.Requests[0]
	check := func(name string, got *int64, want int64) {
		t.Helper()
		if got == nil || *got != want {
			t.Errorf("%s = %v, want %d", name, deref(got), want)
		}
	}
	check("start_ns", r.StartNs, 1777310411639417152)
	check("first_token_offset_ns", r.FirstTokenOffsetNs, 1701689951)
	check("first_content_offset_ns", r.FirstContentOffsetNs, 1701689951)
	check("second_token_offset_ns", r.SecondTokenOffsetNs, 1701689951+21177083)
	check("last_token_offset_ns", r.LastTokenOffsetNs, 1806857844)
	check("stream_end_offset_ns", r.StreamEndOffsetNs, 1828211334)
	check("output_tokens", r.OutputTokens, 6)
	check("input_tokens", r.InputTokens, 9)
	if r.MessageCount != 6 || r.TokenMessageCount != 6 || r.SourceID != "a39a4faf-4cce-4da0-b43e-48595366bffa/0" ||
		r.XRequestID != "d39017fa-b47f-47e7-88c1-f283df6274ca" || r.TraceID != "d8f2a321-9a1a-4957-8331-52422a82d195" {
		t.Errorf("request 0: %+v", r)
	}
	e := c.Requests[1]
	if e.Status != formats.StatusError || e.ErrorType != "TimeoutError" || e.ErrorText != "TimeoutError()" || e.ErrorCode != nil ||
		e.InputTokens == nil || *e.InputTokens != 12 || e.InputTokensSource != formats.SourceToolReported {
		t.Errorf("request 1: %+v", e)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRebuiltEventsMatchLatency re-reads every corpus JSONL independently
// and checks, for every record with inter_chunk_latency, that the rebuilt
// events are one more than the list, strictly start at
// round(TTFT·1e6) and end exactly at round(request_latency·1e6).
func TestRebuiltEventsMatchLatency(t *testing.T) {
	checked := 0
	for _, name := range corpusCases(t) {
		path := filepath.Join(corpus, name, "profile_export.jsonl")
		c, _ := importFile(t, path, name)
		byKey := map[int64][]formats.Event{}
		for _, e := range c.Events {
			byKey[e.RequestKey] = append(byKey[e.RequestKey], e)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for key := int64(0); sc.Scan(); key++ {
			var rec struct {
				Metrics map[string]struct {
					Value json.RawMessage `json:"value"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			icl, ok := rec.Metrics["inter_chunk_latency"]
			if !ok {
				continue
			}
			var gaps []float64
			var ttft, lat float64
			json.Unmarshal(icl.Value, &gaps)
			json.Unmarshal(rec.Metrics["time_to_first_token"].Value, &ttft)
			json.Unmarshal(rec.Metrics["request_latency"].Value, &lat)
			ev := byKey[key]
			if len(ev) != len(gaps)+1 {
				t.Fatalf("%s record %d: %d events for %d gaps", name, key, len(ev), len(gaps))
			}
			if ev[0].OffsetNs != int64(math.Round(ttft*1e6)) || ev[len(ev)-1].OffsetNs != int64(math.Round(lat*1e6)) {
				t.Errorf("%s record %d: events %d…%d, want %v…%v", name, key, ev[0].OffsetNs, ev[len(ev)-1].OffsetNs, math.Round(ttft*1e6), math.Round(lat*1e6))
			}
			if r := c.Requests[key]; r.LastTokenOffsetNs == nil || *r.LastTokenOffsetNs != ev[len(ev)-1].OffsetNs || r.TokenMessageCount != int64(len(ev)) {
				t.Errorf("%s record %d: last token %v, token messages %d", name, key, deref(r.LastTokenOffsetNs), r.TokenMessageCount)
			}
			checked++
		}
		f.Close()
	}
	if checked != 180 {
		t.Errorf("checked %d records with inter_chunk_latency, want 180 (every successful corpus record)", checked)
	}
}

// TestEdgeRecords checks the hand-made records of testdata/edge-records:
// a warmup record, a one-token reply without inter_chunk_latency, a
// reasoning record, a cancelled and a failed record, a blank line, and a
// record whose gaps do not add up to its latency.
func TestEdgeRecords(t *testing.T) {
	c, warnings := importFile(t, "testdata/edge-records/profile_export.jsonl", "edge")
	if len(c.Runs) != 2 || c.Runs[0].RunID != "edge" || c.Runs[1].RunID != "edge#2" || c.Runs[0].RequestCount != 5 || c.Runs[1].RequestCount != 1 {
		t.Fatalf("runs: %+v", c.Runs)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	req := map[string]formats.Request{}
	for _, r := range c.Requests {
		req[r.RunID+"/"+r.SourceID] = r
	}
	one := req["edge/conv-1/0"]
	if one.Status != formats.StatusOK || one.MessageCount != 0 || *one.FirstTokenOffsetNs != 12500000 || *one.FirstContentOffsetNs != 12500000 ||
		one.SecondTokenOffsetNs != nil || *one.LastTokenOffsetNs != 12500000 || *one.StreamEndOffsetNs != 14000000 || one.RequestKey != 0 {
		t.Errorf("one-token record: %+v", one)
	}
	rs := req["edge/conv-2/0"]
	if rs.Status != formats.StatusOK || *rs.FirstTokenOffsetNs != 100e6 || *rs.FirstContentOffsetNs != 130e6 || *rs.SecondTokenOffsetNs != 110e6 ||
		*rs.LastTokenOffsetNs != 140e6 || *rs.OutputTokens != 5 || rs.OutputTokensSource != formats.SourceServerUsage ||
		*rs.InputTokens != 8 || rs.InputTokensSource != formats.SourceServerUsage || *rs.ReasoningTokens != 2 {
		t.Errorf("reasoning record: %+v", rs)
	}
	var kinds []string
	for _, e := range c.Events {
		if e.RunID == "edge" && e.RequestKey == rs.RequestKey {
			kinds = append(kinds, fmt.Sprintf("%s@%d", e.Kind, e.OffsetNs/1e6))
		}
	}
	if got := strings.Join(kinds, " "); got != "reasoning@100 reasoning@110 content@130 content@135 content@140" {
		t.Errorf("reasoning record events: %s", got)
	}
	if r := req["edge/conv-3/0"]; r.Status != formats.StatusCancelled || r.ErrorCode == nil || *r.ErrorCode != 499 || r.ErrorType != "RequestCancellationError" {
		t.Errorf("cancelled record: %+v", r)
	}
	if r := req["edge/conv-4/0"]; r.Status != formats.StatusError || r.ErrorCode != nil || r.ErrorText != "Cannot connect to host" || *r.InputTokens != 7 || r.StreamEndOffsetNs != nil {
		t.Errorf("failed record: %+v", r)
	}
	if r := req["edge#2/conv-0/0"]; r.RequestKey != 0 || r.Status != formats.StatusOK || r.TokenMessageCount != 3 {
		t.Errorf("warmup record: %+v", r)
	}
	notes := strings.Join(c.Runs[0].Notes, "\n")
	for _, want := range []string{
		"records with time_to_first_token but no inter_chunk_latency (fewer than two content responses): 1;",
		"records whose last rebuilt event is off request_latency by more than the rounding tolerance: 1 (largest difference 3000000 ns)",
		`records of phase(s) "warmup" (1) imported into run "edge#2", not this one: 1`,
		"records with request_end_ns not after request_start_ns: 1;",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// TestOldShape checks the AIPerf 0.1.x layout (timestamp_ns, credit_phase,
// ttft/ttst tags; summary under "records" with nulls): modelled on
// ai-dynamo/aiperf examples/artifacts/run1 at 7c31f579.
func TestOldShape(t *testing.T) {
	c, _ := importFile(t, "testdata/v01-shape/profile_export.jsonl", "old")
	run := c.Runs[0]
	if len(c.Requests) != 2 || c.Requests[0].Status != formats.StatusCancelled || c.Requests[1].Status != formats.StatusOK {
		t.Fatalf("requests: %+v", c.Requests)
	}
	r := c.Requests[1]
	if *r.StartNs != 1759522419159192408 || *r.FirstTokenOffsetNs != 1680543782 || *r.SecondTokenOffsetNs != 1680543782+134440792 ||
		*r.LastTokenOffsetNs != 2024665194 || r.StreamEndOffsetNs != nil || *r.ReportedTTFTMs != 1680.543782 || *r.ReportedTTSTMs != 134.440792 {
		t.Errorf("old-shape record: %+v", r)
	}
	if run.Endpoint != "localhost:9000/v1/chat/completions" || run.Model != "openai/gpt-oss-20b" || run.ToolVersion != "" || *run.Concurrency != 2 {
		t.Errorf("old-shape run: %+v", run)
	}
	if got := reported(t, run, "ttft", "p99"); got != 1680.543782 {
		t.Errorf("ttft p99 %v", got)
	}
	for _, s := range run.Reported {
		if s.Metric == "error_request_count" && s.Stat != "avg" && s.Stat != "count" {
			t.Errorf("null statistic kept: %+v", s)
		}
	}
	// The CSV beside the JSON is only checked against it; its values (made
	// up for this fixture) do not reach Reported.
	if len(run.SourceFiles) != 3 || run.SourceFiles[2].Role != "summary_csv" || reported(t, run, "request_latency", "avg") != 2024.665194 ||
		!slices.Contains(run.Notes, "profile_export_aiperf.csv checked against the JSON summary: 1 of 12 values agree to 2 decimals; 11 differ (first request_latency/avg: CSV 1, JSON 2024.665194)") {
		t.Errorf("CSV beside the JSON: %+v, notes %q", run.SourceFiles, run.Notes)
	}
	if strings.Contains(run.ConfigJSON, "sk-abcdefghijklmnop") || !strings.Contains(strings.Join(run.Notes, "\n"), "redacted secrets in input_config.cli_command") {
		t.Errorf("secret not redacted: %s", run.ConfigJSON)
	}
	if !strings.Contains(strings.Join(run.Notes, "\n"), "records with reasoning tokens but no time_to_first_output_token (AIPerf < 0.8): 1;") {
		t.Errorf("notes: %q", run.Notes)
	}
}

// TestTruncated checks a JSONL whose last line is cut: the complete lines
// are imported, the run is marked truncated and a warning names the line.
func TestTruncated(t *testing.T) {
	c, warnings := importFile(t, "testdata/truncated/profile_export.jsonl", "cut")
	if len(c.Requests) != 2 || !c.Runs[0].Truncated || c.Runs[0].RequestCount != 2 {
		t.Fatalf("requests %d, run %+v", len(c.Requests), c.Runs[0])
	}
	// The note belongs to the run (whose SourceFiles name the file); the
	// warning, printed among others', names the file itself.
	want := "line 3 is incomplete (file cut); complete records imported before it: 2"
	if len(warnings) != 1 || warnings[0] != "testdata/truncated/profile_export.jsonl: "+want || !slices.Contains(c.Runs[0].Notes, want) {
		t.Errorf("warnings %q, notes %q", warnings, c.Runs[0].Notes)
	}
}

// TestDamagedSummaryWarning: a companion summary that is not JSON is
// ignored with a warning naming it and the byte where decoding stopped.
func TestDamagedSummaryWarning(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(corpus, "qwen3vl30b-local-agent-c2")
	for _, f := range []string{"profile_export.jsonl", "profile_export_aiperf.csv"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := filepath.Join(dir, "profile_export_aiperf.json")
	// '@' is byte 9 (0-based)
	if err := os.WriteFile(sum, []byte(`{"a": 1, @}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, warnings := importFile(t, filepath.Join(dir, "profile_export.jsonl"), "dmg")
	want := sum + ": byte 9: unreadable summary: invalid character '@' looking for beginning of object key string"
	if len(warnings) != 1 || warnings[0] != want || !slices.Contains(c.Runs[0].Notes, want) || len(c.Requests) != 20 {
		t.Errorf("warnings %q, want [%q]; %d requests", warnings, want, len(c.Requests))
	}
}

// TestMalformed checks the positioned error for a broken line in the middle.
func TestMalformed(t *testing.T) {
	path := "testdata/malformed/profile_export.jsonl"
	err := ingest.ImportFile(New(), path, ingest.Options{}, &formats.Collector{})
	var fe *ingest.FormatError
	if !errors.As(err, &fe) || fe.Where != "line 2" {
		t.Fatalf("error %v, want a FormatError at line 2", err)
	}
	want := path + ": line 2: not a JSON record: the line ends inside a JSON value (unexpected EOF)"
	if err.Error() != want {
		t.Errorf("error text\n got %q\nwant %q", err.Error(), want)
	}
}

func TestEmptyFile(t *testing.T) {
	path := "testdata/empty/profile_export.jsonl"
	if !New().Detect(path, nil) {
		t.Error("Detect: an empty profile_export.jsonl should be claimed (so that Import can say what is wrong)")
	}
	err := ingest.ImportFile(New(), path, ingest.Options{}, &formats.Collector{})
	if err == nil || err.Error() != path+": empty file: no records" {
		t.Errorf("error %v", err)
	}
}

// TestLongLine checks a 540 KB record line (a 60,000-chunk reply).
func TestLongLine(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"metadata":{"session_num":0,"request_start_ns":1000,"request_end_ns":2000000001000,"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":1.5,"unit":"ms"},"inter_chunk_latency":{"value":[`)
	n := 60000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("0.012346")
	}
	b.WriteString(`],"unit":"ms"},"request_latency":{"value":742.26,"unit":"ms"}},"error":null}` + "\n")
	if b.Len() < 500_000 {
		t.Fatalf("line is only %d bytes", b.Len())
	}
	path := filepath.Join(t.TempDir(), "profile_export.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := importFile(t, path, "long")
	if len(c.Events) != n+1 || c.Requests[0].TokenMessageCount != int64(n+1) {
		t.Fatalf("%d events", len(c.Events))
	}
	// AIPerf's gaps are whole nanoseconds (perf_counter_ns differences), so
	// 0.012346 ms is 12346 ns exactly and the offsets add up to the latency.
	if got := c.Events[n].OffsetNs; got != 742_260_000 || *c.Requests[0].LastTokenOffsetNs != got {
		t.Errorf("last offset %d", got)
	}
	if strings.Contains(strings.Join(c.Runs[0].Notes, "\n"), "last rebuilt event is off request_latency") {
		t.Errorf("latency mismatch noted: %q", c.Runs[0].Notes)
	}
}

// TestSummaryOnly checks summaries without a JSONL beside them.
func TestSummaryOnly(t *testing.T) {
	c, warnings := importFile(t, "testdata/summary-only-csv/profile_export_aiperf.csv", "csv")
	run := c.Runs[0]
	if len(c.Requests) != 0 || run.Notes[0] != "summary only: nothing to recompute" || len(warnings) != 1 || run.ClockDomain != "" {
		t.Fatalf("run %+v, warnings %q", run, warnings)
	}
	for _, w := range []struct {
		metric, stat string
		want         float64
	}{
		{"time_to_first_token", "p99", 120419.13},
		{"http_req_waiting", "avg", 45671.33},
		{"request_throughput", "avg", 0.02},
		{"total_osl", "avg", 18759},
		{"inter_chunk_latency", "sum", 5608321.04},
	} {
		if got := reported(t, run, w.metric, w.stat); got != w.want {
			t.Errorf("%s/%s = %v, want %v", w.metric, w.stat, got, w.want)
		}
	}
	for _, s := range run.Reported {
		if s.Metric == "time_to_first_token" && s.Unit != "ms" || s.Metric == "http_req_chunks_received" && s.Unit != "" {
			t.Errorf("unit: %+v", s)
		}
	}
	// A JSON summary with its CSV beside it (no JSONL): the CSV is a
	// companion, checked against the JSON.
	dir := t.TempDir()
	for _, f := range []string{"profile_export_aiperf.json", "profile_export_aiperf.csv"} {
		b, err := os.ReadFile(filepath.Join(corpus, "qwen3vl30b-local-agent-c2", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	jp := filepath.Join(dir, "profile_export_aiperf.json")
	if im := New(); !im.Detect(jp, nil) || im.Detect(filepath.Join(dir, "profile_export_aiperf.csv"), nil) || len(im.Companions(jp)) != 1 {
		t.Errorf("JSON + CSV summaries: Detect/Companions")
	}
	c, _ = importFile(t, jp, "pair")
	if run := c.Runs[0]; len(run.SourceFiles) != 2 || !slices.Contains(run.Notes, "profile_export_aiperf.csv checked against the JSON summary: 432 of 432 values agree to 2 decimals") {
		t.Errorf("JSON + CSV summaries: %+v", run)
	}
	c, _ = importFile(t, "testdata/summary-only-json/profile_export_aiperf.json", "json")
	run = c.Runs[0]
	if run.ToolVersion != "0.8.0" || run.Model != "qwen_qwen3.5-4b-gguf:q4_k_m" || reported(t, run, "error_isl", "p75") != 10.25 || run.RequestCount != 0 {
		t.Errorf("run %+v", run)
	}
}

func TestDetect(t *testing.T) {
	im := New()
	head := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > ingest.HeadSize {
			b = b[:ingest.HeadSize]
		}
		return b
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{filepath.Join(corpus, "llama31-8b-cloudflare-agent-c2-524errors/profile_export.jsonl"), true},
		{filepath.Join(corpus, "qwen35-4b-gguf-c1-all-timeouts/profile_export.jsonl"), true},
		{filepath.Join(corpus, "qwen35-4b-gguf-c1-all-timeouts/profile_export_aiperf.json"), false}, // JSONL beside it
		{filepath.Join(corpus, "qwen35-4b-gguf-c1-all-timeouts/profile_export_aiperf.csv"), false},
		{"testdata/summary-only-json/profile_export_aiperf.json", true},
		{"testdata/summary-only-csv/profile_export_aiperf.csv", true},
		{"testdata/v01-shape/profile_export.jsonl", true},
		{"testdata/truncated/profile_export.jsonl", true},
		{"testdata/malformed/profile_export.jsonl", true},
		{"../../testdata/genai-perf/openrouter-gpt4omini-c1-nonstream/profile_export.json", false},
		{"../../testdata/llmperf/leaderboard-groq-70b/individual_responses.json", false},
		{"../../testdata/llmperf/leaderboard-groq-70b/summary.json", false},
	} {
		if got := im.Detect(tc.path, head(tc.path)); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	// A first line cut inside its metadata is still this format.
	if !im.Detect("x.jsonl", []byte(`{"metadata":{"session_num":0,"x_request_id":"d39017fa`)) {
		t.Error("Detect: cut first line")
	}
	if im.Detect("x.jsonl", []byte(`{"metadata":{"a":1},"other":2}`)) {
		t.Error("Detect: foreign JSONL with a metadata key")
	}
}

func TestCompanions(t *testing.T) {
	im := New()
	got := im.Companions(filepath.Join(corpus, "llama32-3b-gguf-c1-mixed-timeouts/profile_export.jsonl"))
	if len(got) != 2 || !strings.HasSuffix(got[0], "profile_export_aiperf.json") || !strings.HasSuffix(got[1], "profile_export_aiperf.csv") {
		t.Errorf("Companions = %q", got)
	}
	if got := im.Companions("testdata/summary-only-csv/profile_export_aiperf.csv"); len(got) != 0 {
		t.Errorf("summary companions = %q", got)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "run.jsonl"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "run_aiperf.csv"), nil, 0o644)
	if got := im.Companions(filepath.Join(dir, "run.jsonl")); len(got) != 1 || filepath.Base(got[0]) != "run_aiperf.csv" {
		t.Errorf("CSV companion = %q", got)
	}
}

// TestFloatListMatchesJSON checks floatList against encoding/json on every
// inter_chunk_latency list of the corpus (18,684 + … values).
func TestFloatListMatchesJSON(t *testing.T) {
	lists := 0
	for _, name := range corpusCases(t) {
		f, err := os.Open(filepath.Join(corpus, name, "profile_export.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var rec struct {
				Metrics map[string]struct {
					Value json.RawMessage `json:"value"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			raw, ok := rec.Metrics["inter_chunk_latency"]
			if !ok {
				continue
			}
			got, ok1 := floatList(raw.Value)
			want, ok2 := slowFloatList(raw.Value)
			if !ok1 || !ok2 || len(got) != len(want) {
				t.Fatalf("%s: fast %v/%d, reference %v/%d", name, ok1, len(got), ok2, len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: element %d: %v vs %v", name, i, got[i], want[i])
				}
			}
			lists++
		}
		f.Close()
	}
	if lists != 180 {
		t.Errorf("%d lists, want 180", lists)
	}
}
