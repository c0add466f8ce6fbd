package registry

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
	"github.com/tokentrace/tokentrace/ingest/genaiperf"
	"github.com/tokentrace/tokentrace/ingest/guidellm"
	"github.com/tokentrace/tokentrace/ingest/prometheus"
	"github.com/tokentrace/tokentrace/ingest/vllmbench"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

// aiperfFile writes lines (aiperfLine records, edited) as a
// profile_export.jsonl in a directory of its own and returns its path.
func aiperfFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "profile_export.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAIPerfBareNaN: AIPerf writes its records with Python's json, which
// writes float('nan') and float('inf') bare. Such a record used to fail the
// whole file ("line 2: invalid character 'N'"); it now reads like vLLM's:
// the value is null and counted (value_not_finite), the request kept.
func TestAIPerfBareNaN(t *testing.T) {
	p := aiperfFile(t, aiperfLine(0),
		strings.Replace(aiperfLine(1), `"time_to_first_token":{"value":100.0`, `"time_to_first_token":{"value":NaN`, 1),
		strings.Replace(aiperfLine(2), `"value":[100.0,100.0]`, `"value":[100.0,-Infinity]`, 1))
	c := importValues(t, aiperf.New(), p)
	if len(c.Requests) != 3 {
		t.Fatalf("%d requests", len(c.Requests))
	}
	c.wantCheck(t, 0, ingest.CheckNotFinite, "time_to_first_token", 1, "first request 1 (line 2): NaN; left null")
	c.wantCheck(t, 0, ingest.CheckNotFinite, "inter_chunk_latency", 1, "first request 2 (line 3): -Infinity; left null")
	if r := c.Requests[1]; r.FirstTokenOffsetNs != nil || *r.LastTokenOffsetNs != 300e6 {
		t.Errorf("request 1: first token %v, last %v; want null, 300 ms", r.FirstTokenOffsetNs, *r.LastTokenOffsetNs)
	}
	if r := c.Requests[0]; *r.FirstTokenOffsetNs != 100e6 || *r.LastTokenOffsetNs != 300e6 {
		t.Errorf("request 0: %+v", r)
	}
	// a bare word that is no number is still an error with its line
	p = aiperfFile(t, aiperfLine(0), strings.Replace(aiperfLine(1), `100.0`, `Nope`, 1))
	err := ingest.ImportFile(aiperf.New(), p, ingest.Options{}, &formats.Collector{})
	if err == nil || !strings.Contains(err.Error(), "line 2: ") {
		t.Errorf("bad record: %v", err)
	}
}

// TestValueNotInteger: a token count with a fraction is no count: null
// and counted (value_not_integer), never truncated (2.5 used to be read
// as 2 without a word); 4.0 is a count.
func TestValueNotInteger(t *testing.T) {
	t.Run("aiperf", func(t *testing.T) {
		p := aiperfFile(t, aiperfLine(0),
			strings.Replace(aiperfLine(1), `"output_token_count"`, `"usage_completion_tokens":{"value":2.5,"unit":"tokens"},"output_token_count"`, 1),
			strings.Replace(aiperfLine(2), `"output_token_count"`, `"usage_completion_tokens":{"value":3.0,"unit":"tokens"},"output_token_count"`, 1))
		c := importValues(t, aiperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotInteger, "usage_completion_tokens", 1, "first request 1 (line 2): 2.5; left null")
		if len(c.Runs[0].Checks) != 1 {
			t.Errorf("checks %+v", c.Runs[0].Checks)
		}
		if r := c.Requests[1]; r.OutputTokens != nil || r.InputTokens == nil || *r.InputTokens != 8 {
			t.Errorf("request 1: output %v, input %v; want null, 8", r.OutputTokens, r.InputTokens)
		}
		if r := c.Requests[2]; r.OutputTokens == nil || *r.OutputTokens != 3 {
			t.Errorf("request 2: output %v, want 3", r.OutputTokens)
		}
	})
	t.Run("vllm", func(t *testing.T) {
		p := vllmVariant(t, `"output_lens": [4, 6,`, `"output_lens": [4.5, 6,`)
		c := importValues(t, vllmbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotInteger, "output_lens", 1, "(output_lens[0]): 4.5; left null")
		if c.Requests[0].OutputTokens != nil || *c.Requests[1].OutputTokens != 6 {
			t.Errorf("output tokens %v, %v; want null, 6", c.Requests[0].OutputTokens, *c.Requests[1].OutputTokens)
		}
	})
	t.Run("guidellm", func(t *testing.T) {
		// it used to be an error of the whole file; now as every importer
		p := filepath.Join(t.TempDir(), "benchmarks.json")
		os.WriteFile(p, []byte(`{"benchmarks": [{"requests": {"errored": [{"start_time": 1.5, "output_tokens": 2.5}]}}]}`), 0o644)
		c := importValues(t, guidellm.New(), p)
		c.wantCheck(t, 0, ingest.CheckNotInteger, "output_tokens", 1, "2.5; left null")
		if len(c.Requests) != 1 || c.Requests[0].OutputTokens != nil {
			t.Errorf("requests %+v", c.Requests)
		}
	})
}

// TestDuplicateRequest: an AIPerf record repeated identically is one
// request (10 records, record 3 written twice: 10 requests, not 11, and
// request_count 10); two records with the same x_request_id and different
// contents (a failed one among them) are both kept. Both are counted by
// duplicate_request.
func TestDuplicateRequest(t *testing.T) {
	var lines []string
	for i := range 10 {
		lines = append(lines, aiperfLine(i))
		if i == 3 {
			lines = append(lines, aiperfLine(i))
		}
	}
	c := importValues(t, aiperf.New(), aiperfFile(t, lines...))
	if len(c.Requests) != 10 || c.Runs[0].RequestCount != 10 {
		t.Errorf("%d requests, request_count %d; want 10", len(c.Requests), c.Runs[0].RequestCount)
	}
	c.wantCheck(t, 0, ingest.CheckDuplicateRequest, "x_request_id", 1, `first request 4: x_request_id "r3"; identical repetitions counted once (dropped): 1`)

	failed := strings.Replace(aiperfLine(3), `"metrics":`, `"error":{"code":500,"type":"Internal","message":"boom"},"metrics":`, 1)
	c = importValues(t, aiperf.New(), aiperfFile(t, aiperfLine(2), failed, aiperfLine(3), aiperfLine(4)))
	if len(c.Requests) != 4 || c.Runs[0].RequestCount != 4 || c.Requests[1].Status != "error" || c.Requests[2].Status != "ok" {
		t.Errorf("%d requests, request_count %d: %+v", len(c.Requests), c.Runs[0].RequestCount, c.Requests)
	}
	c.wantCheck(t, 0, ingest.CheckDuplicateRequest, "x_request_id", 1, `first request 2: x_request_id "r3"; same id, different contents, all kept: 1`)

	c = importValues(t, aiperf.New(), aiperfFile(t, aiperfLine(0), aiperfLine(1)))
	if len(c.Runs[0].Checks) != 0 || len(c.warnings) != 0 {
		t.Errorf("clean file: checks %+v, warnings %q", c.Runs[0].Checks, c.warnings)
	}
}

// TestStartFar: one of 10 AIPerf requests starts 71 years after the
// others (4e18 ns; the others 1760000000 s + 0..9 s). Its start is null,
// so the run's span is the others': request 0's start to request 8's end,
// 8 s + 300 ms (it was 2.24e9 s); its latencies stay. Starts within 30
// days of the median are kept.
func TestStartFar(t *testing.T) {
	var lines []string
	for i := range 10 {
		lines = append(lines, aiperfLine(i))
	}
	lines[9] = strings.Replace(lines[9], `"request_start_ns":1760000009000000000,"request_end_ns":1760000009300000000`,
		`"request_start_ns":4000000000000000000,"request_end_ns":4000000000300000000`, 1)
	p := aiperfFile(t, lines...)
	c := importValues(t, aiperf.New(), p)
	c.wantCheck(t, 0, ingest.CheckStartFar, "start", 1, "first request 9: start 4000000000000000000 ns, 71.0 years after the median start 1760000004000000000 ns of 10 requests; start left null")
	if r := c.Requests[9]; r.StartNs != nil || *r.FirstTokenOffsetNs != 100e6 || *r.LastTokenOffsetNs != 300e6 {
		t.Errorf("request 9: start %v, first %v, last %v", r.StartNs, r.FirstTokenOffsetNs, r.LastTokenOffsetNs)
	}
	if d := report(t, aiperf.New(), p).Throughput.DurationS; float64(d) != 8.3 {
		t.Errorf("duration %v s, want 8.3", d)
	}
	// 29 days away is a long run, not a far start
	lines[9] = strings.Replace(aiperfLine(9), `"request_start_ns":1760000009000000000,"request_end_ns":1760000009300000000`,
		`"request_start_ns":1762505600000000000,"request_end_ns":1762505600300000000`, 1)
	c = importValues(t, aiperf.New(), aiperfFile(t, lines...))
	// (29 days of nothing in flight is an idle span: clock_step says so)
	if len(c.Runs[0].Checks) != 1 || c.Runs[0].Checks[0].Code != ingest.CheckClockStep || c.Requests[9].StartNs == nil {
		t.Errorf("29 days: checks %+v", c.Runs[0].Checks)
	}
}

// TestClockStep: an AIPerf run whose wall clock steps back one hour after
// request 4 (NTP) starts requests 5-9 before the run began; one whose
// clock steps forward an hour has an idle span of an hour between 0.3 s
// requests; both are flagged (clock_step) with the step, a run 1 s apart
// throughout is not, nor a run whose records are in completion order.
func TestClockStep(t *testing.T) {
	shifted := func(shiftNs int64) []string {
		var lines []string
		for i := range 10 {
			l := aiperfLine(i)
			if i >= 5 {
				start := int64(1760000000_000000000) + int64(i)*1_000_000_000
				l = strings.Replace(l, fmt.Sprintf(`"request_start_ns":%d,"request_end_ns":%d`, start, start+300_000_000),
					fmt.Sprintf(`"request_start_ns":%d,"request_end_ns":%d`, start+shiftNs, start+shiftNs+300_000_000), 1)
			}
			lines = append(lines, l)
		}
		return lines
	}
	c := importValues(t, aiperf.New(), aiperfFile(t, shifted(-3600e9)...))
	want := formats.DataCheck{Code: ingest.CheckClockStep, Field: "start", Requests: 5,
		Detail: "request 5 of the file's order starts 3595 s before every earlier request (the clock stepped back; 5 request(s) start so early, the earliest 3595 s before); the run's duration includes the step"}
	if len(c.Runs[0].Checks) != 1 || c.Runs[0].Checks[0] != want {
		t.Errorf("step back: %+v", c.Runs[0].Checks)
	}
	c = importValues(t, aiperf.New(), aiperfFile(t, shifted(3600e9)...))
	if ch := c.Runs[0].Checks; len(ch) != 1 || ch[0].Code != ingest.CheckClockStep || ch[0].Requests != 5 ||
		!strings.HasPrefix(ch[0].Detail, "nothing in flight for 3600.7 s before the 5 request(s)") {
		t.Errorf("step forward: %+v", ch)
	}
	if len(c.warnings) == 0 || !strings.Contains(strings.Join(c.warnings, "\n"), "clock_step") {
		t.Errorf("no warning: %q", c.warnings)
	}
	// no step: 1 s apart; completion order (concurrency: a later record
	// started before an earlier one, by less than a request)
	lines := shifted(0)
	lines[3], lines[4] = lines[4], lines[3]
	if c := importValues(t, aiperf.New(), aiperfFile(t, lines...)); len(c.Runs[0].Checks) != 0 {
		t.Errorf("no step: %+v", c.Runs[0].Checks)
	}
}

// TestTimeOrder: a first token after the request's end cannot be right.
// The latency is trusted (AIPerf's request_latency agrees with
// request_end_ns − request_start_ns; vLLM's latencies is its own E2E):
// the first-token time is null and counted (time_order), no messages are
// rebuilt from it, E2E is the latency. It used to be rebuilt as TTFT +
// gaps: 400 + 200 = 600 ms from a 300 ms request.
func TestTimeOrder(t *testing.T) {
	t.Run("aiperf", func(t *testing.T) {
		p := aiperfFile(t, aiperfLine(0),
			strings.Replace(aiperfLine(1), `"time_to_first_token":{"value":100.0`, `"time_to_first_token":{"value":400.0`, 1),
			aiperfLine(2))
		c := importValues(t, aiperf.New(), p)
		c.wantCheck(t, 0, ingest.CheckTimeOrder, "time_to_first_token", 1, "first request 1 (line 2): 400 ms, after request_latency 300 ms; left null")
		if r := c.Requests[1]; r.FirstTokenOffsetNs != nil || *r.LastTokenOffsetNs != 300e6 || c.eventsOf(r.RunID, 1) != 0 {
			t.Errorf("request 1: first %v, last %v, %d events", r.FirstTokenOffsetNs, *r.LastTokenOffsetNs, c.eventsOf(r.RunID, 1))
		}
		rr := report(t, aiperf.New(), p)
		traptest.WantMean(t, rr, analyze.TTFT, 100)
		traptest.WantMean(t, rr, analyze.E2E, 300)
		// equal is in order
		equal := strings.Replace(aiperfLine(1), `"time_to_first_token":{"value":100.0`, `"time_to_first_token":{"value":300.0`, 1)
		c = importValues(t, aiperf.New(), aiperfFile(t, strings.Replace(equal, `[100.0,100.0]`, `[0.0,0.0]`, 1)))
		if len(c.Runs[0].Checks) != 0 {
			t.Errorf("TTFT = latency: checks %+v", c.Runs[0].Checks)
		}
		// the gaps overrun: 100 + 100 + 300 = 500 ms from a 300 ms
		// request; TTFT stands, the last token is the latency
		c = importValues(t, aiperf.New(), aiperfFile(t, aiperfLine(0), strings.Replace(aiperfLine(1), `[100.0,100.0]`, `[100.0,300.0]`, 1)))
		c.wantCheck(t, 0, ingest.CheckTimeOrder, "inter_chunk_latency", 1,
			"first request 1 (line 2): last response at 500 ms (time_to_first_token + Σ inter_chunk_latency), after request_latency 300 ms; left null")
		if r := c.Requests[1]; *r.FirstTokenOffsetNs != 100e6 || *r.LastTokenOffsetNs != 300e6 || c.eventsOf(r.RunID, 1) != 0 {
			t.Errorf("request 1: first %v, last %v, %d events", *r.FirstTokenOffsetNs, *r.LastTokenOffsetNs, c.eventsOf(r.RunID, 1))
		}
	})
	t.Run("vllm", func(t *testing.T) {
		// request 0: TTFT 0.3 s after its 0.195 s latency: null; TTFT
		// [150, 90, 110] → mean 116.667 (request 2 failed); E2E stands.
		p := vllmVariant(t, `"ttfts": [0.12,`, `"ttfts": [0.3,`)
		c := importValues(t, vllmbench.New(), p)
		c.wantCheck(t, 0, ingest.CheckTimeOrder, "ttfts", 1, "first request 0 (ttfts[0]): 0.3 s, after latencies 0.195 s; left null")
		if r := c.Requests[0]; r.FirstTokenOffsetNs != nil || *r.LastTokenOffsetNs != 195e6 {
			t.Errorf("request 0: %+v", r)
		}
		rr := report(t, vllmbench.New(), p)
		traptest.WantMean(t, rr, analyze.TTFT, 350/3.0)
		traptest.WantMean(t, rr, analyze.E2E, (195+250+90+155)/4.0)
	})
}

// TestCountBelowMessages: an output count that contradicts the stream —
// 0 tokens beside 10 content messages, 10 beside 100 — is corrected to the
// messages by the entry check (output_count_below_messages), the file's
// count kept as the tool's; TPOT then divides by the tokens delivered
// (99 gaps of 1 ms: TPOT 1 ms, not 11). A count a few short of the
// messages (a retokenized count) is left alone.
func TestCountBelowMessages(t *testing.T) {
	line := func(i, count, gaps int) string {
		icl := strings.TrimSuffix(strings.Repeat("1.0,", gaps), ",")
		lat := 100.0 + float64(gaps)
		return strings.NewReplacer(
			`"output_token_count":{"value":3,`, fmt.Sprintf(`"output_sequence_length":{"value":%d,`, count),
			`"inter_chunk_latency":{"value":[100.0,100.0],`, `"inter_chunk_latency":{"value":[`+icl+`],`,
			`"request_latency":{"value":300.0,`, fmt.Sprintf(`"request_latency":{"value":%g,`, lat),
			fmt.Sprintf(`"request_end_ns":%d`, int64(1760000000_000000000)+int64(i)*1_000_000_000+300_000_000),
			fmt.Sprintf(`"request_end_ns":%d`, int64(1760000000_000000000)+int64(i)*1_000_000_000+int64(lat*1e6)),
		).Replace(aiperfLine(i))
	}
	p := aiperfFile(t, line(0, 0, 9), line(1, 10, 99), line(2, 97, 99))
	c := importValues(t, aiperf.New(), p)
	want := formats.DataCheck{Code: formats.CheckCountBelowMessages, Field: "output_tokens", Requests: 2, Corrected: true,
		Detail: "first request 0: output_tokens 0 (tool_reported) beside 10 token messages; N from the messages; 2 values in 2 request(s); corrected"}
	if len(c.Runs[0].Checks) != 1 || c.Runs[0].Checks[0] != want {
		t.Errorf("checks %+v, want %+v", c.Runs[0].Checks, want)
	}
	if len(c.warnings) != 1 || !strings.Contains(c.warnings[0], "output_count_below_messages") {
		t.Errorf("warnings %q", c.warnings)
	}
	for i, want := range []int64{10, 100, 97} {
		r := c.Requests[i]
		if *r.OutputTokens != want {
			t.Errorf("request %d: output_tokens %d (%s), want %d", i, *r.OutputTokens, r.OutputTokensSource, want)
		}
	}
	if r := c.Requests[0]; r.ReportedOutputTokens == nil || *r.ReportedOutputTokens != 0 || r.Corrections != formats.CheckCountBelowMessages {
		t.Errorf("request 0 keeps the file's count: %v, corrections %q", r.ReportedOutputTokens, r.Corrections)
	}
	// TPOT: 9 ms / 9, 99 ms / 99 (corrected) and 99 ms / 96 (left alone)
	rr := report(t, aiperf.New(), p)
	if m := rr.Metrics.Of(analyze.TPOT); m.N != 3 || math.Abs(float64(m.Min)-1) > 1e-9 || math.Abs(float64(m.Max)-99.0/96) > 1e-9 {
		t.Errorf("TPOT n %d min %v max %v ms, want 3, 1, %v", m.N, m.Min, m.Max, 99.0/96)
	}
}

// TestSeriesEntryCheck: series are input too. AIPerf GPU telemetry (its
// gpu_telemetry_export.jsonl layout) stamped in seconds is scaled to ns,
// not attached 55 years off; −300 W and 250 % utilisation are NaN; two
// records of one GPU at one time with different values are said; a
// Prometheus kv_cache_usage_perc of 85 (percent, where vLLM writes a
// fraction) is read as 0.85, so the KV cache is 85 %, not 8500 %.
func TestSeriesEntryCheck(t *testing.T) {
	dir := t.TempDir()
	rec := func(ts int64, power, util float64) string {
		return fmt.Sprintf(`{"timestamp_ns":%d,"gpu_index":0,"gpu_uuid":"GPU-1","gpu_model_name":"H100","hostname":"h","telemetry_data":{"gpu_power_usage":%g,"gpu_utilization":%g},"telemetry_source_url":"http://h:9400/metrics"}`+"\n", ts, power, util)
	}
	tel := filepath.Join(dir, "gpu_telemetry_export.jsonl")
	if err := os.WriteFile(tel, []byte(rec(1762551530, 300, 50)+rec(1762551531, -300, 250)+rec(1762551531, 290, 60)), 0o644); err != nil {
		t.Fatal(err)
	}
	c := importValues(t, aiperf.New(), tel)
	var got []string
	for _, ch := range c.Runs[0].Checks {
		got = append(got, fmt.Sprintf("%s/%s/%v", ch.Code, ch.Field, ch.Corrected))
	}
	want := "series_time_unit/gpu:gpu_power_usage/true series_time_unit/gpu:gpu_utilization/true " +
		"series_value_out_of_range/gpu:gpu_power_usage/false series_value_out_of_range/gpu:gpu_utilization/false " +
		"series_duplicate_sample/gpu:gpu_power_usage/false series_duplicate_sample/gpu:gpu_utilization/false"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("checks\n%s\nwant\n%s", s, want)
	}
	for _, p := range c.Runs[0].Series {
		if p.TimeNs < 1762551530e9 || p.TimeNs > 1762551531e9 {
			t.Errorf("%s at %d ns, want 2025-11 in ns", p.Metric, p.TimeNs)
		}
		if p.TimeNs == 1762551531e9 && p.Value < 0 || p.Value > 100 && p.Metric == "gpu:gpu_utilization" {
			t.Errorf("%s = %v kept", p.Metric, p.Value)
		}
	}
	if len(c.warnings) < 6 {
		t.Errorf("warnings %q", c.warnings)
	}

	prom := filepath.Join(dir, "prom.json")
	doc := `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:kv_cache_usage_perc"},"values":[[1762551530,"85"],[1762551531,"40"]]}]}}`
	if err := os.WriteFile(prom, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c = importValues(t, prometheus.New(), prom)
	s := c.Runs[0].Series
	if len(s) != 2 || s[0].Value != 0.85 || s[1].Value != 0.4 {
		t.Errorf("kv cache series %+v", s)
	}
	if ch := c.Runs[0].Checks; len(ch) != 1 || ch[0].Code != formats.CheckSeriesPercentAsFraction || !ch[0].Corrected {
		t.Errorf("checks %+v", ch)
	}
}

// TestSeveralModels: a GenAI-Perf export (the bundled OpenRouter run)
// whose payloads name two models is not reported as the first one's: the
// run's model lists both by count, and several_models counts the requests
// of the less common one.
func TestSeveralModels(t *testing.T) {
	src := "../../testdata/genai-perf/openrouter-llama31-8b-c1-nonstream"
	b, err := os.ReadFile(filepath.Join(src, "profile_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	reqs := doc["experiments"].([]any)[0].(map[string]any)["requests"].([]any)
	for _, k := range []int{1, 4, 7} {
		in := reqs[k].(map[string]any)["request_inputs"].(map[string]any)
		in["payload"] = strings.Replace(in["payload"].(string), `"model":"meta-llama/llama-3.1-8b-instruct"`, `"model":"qwen/qwen3-8b"`, 1)
	}
	dir := t.TempDir()
	out, _ := json.Marshal(doc)
	p := filepath.Join(dir, "profile_export.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	c := importValues(t, genaiperf.New(), p)
	run := c.Runs[0]
	if want := fmt.Sprintf("meta-llama/llama-3.1-8b-instruct (%d), qwen/qwen3-8b (3)", len(reqs)-3); run.Model != want {
		t.Errorf("model %q, want %q", run.Model, want)
	}
	var found bool
	for _, ch := range run.Checks {
		if ch.Code == ingest.CheckSeveralModels {
			found = ch.Requests == 3 && strings.HasPrefix(ch.Detail, "2 models: ")
		}
	}
	if !found {
		t.Errorf("checks %+v", run.Checks)
	}
	// the bundled run itself names one model: no check
	c = importValues(t, genaiperf.New(), filepath.Join(src, "profile_export.json"))
	if c.Runs[0].Model != "meta-llama/llama-3.1-8b-instruct" {
		t.Errorf("bundled run: model %q", c.Runs[0].Model)
	}
}
