package vllmbench

import (
	"bytes"
	"errors"
	"fmt"
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

// corpus is the real vLLM result files under the module's testdata (each
// directory with a SOURCE.md).
const corpus = "../../testdata/vllm-bench"

// corpusFiles are the primary inputs of the corpus: a sweep directory's
// run=<n>.json is a companion of its summary.json.
var corpusFiles = map[string]string{
	"er0080-all-failed-opt125m":           "bench_serve_all_requests_failed_v0.25.1.json",
	"er0080-sweep-opt125m-c2":             "summary.json",
	"moguizhizi-qwen25vl72b-ascend-32req": "openai-chat-infqps-Qwen2.5-VL-72B-Instruct-20250929-090107.json",
}

// fixtures are the hand-made inputs under testdata (FIXTURES.md).
var fixtures = map[string]string{
	"detailed-appended":     "openai-chat-4.0qps-concurrency2-Llama-3.1-8B-Instruct-20260301-101500.json",
	"latencies-only":        "openai-1.0qps-opt-125m-20260302-090000.json",
	"truncated":             "vllm-cut.json",
	"trap-ttft-in-itls":     "vllm-3.0qps-Meta-Llama-3-8B-20240805-120000.json",
	"trap-role-chunk":       "openai-chat-2.0qps-Llama-3.1-8B-Instruct-20250320-100000.json",
	"trap-role-chunk-short": "openai-chat-2.0qps-Llama-3.1-8B-Instruct-20250320-110000.json",
	"rust-bench":            "openai-chat-infqps-Qwen3-8B-20260815-093000.json",
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
	dirs, _ := filepath.Glob(filepath.Join(corpus, "*"))
	if len(dirs) != len(corpusFiles) {
		t.Fatalf("%d corpus directories, %d expected: %v", len(dirs), len(corpusFiles), dirs)
	}
	for name, file := range corpusFiles {
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join(corpus, name, file), name))
		})
	}
}

func TestGoldenFixtures(t *testing.T) {
	for name, file := range fixtures {
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), dump(t, filepath.Join("testdata", name, file), name))
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

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

func hasReported(run formats.Run, metric string) bool {
	for _, s := range run.Reported {
		if s.Metric == metric {
			return true
		}
	}
	return false
}

func notesContain(t *testing.T, run formats.Run, want ...string) {
	t.Helper()
	all := strings.Join(run.Notes, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("run %s: notes lack %q:\n%s", run.RunID, w, all)
		}
	}
}

// TestCorpus checks the run fields and reported values of the corpus files
// (SOURCE.md of each).
func TestCorpus(t *testing.T) {
	c, warnings := importFile(t, filepath.Join(corpus, "er0080-all-failed-opt125m", corpusFiles["er0080-all-failed-opt125m"]), "failed")
	run := c.Runs[0]
	if len(c.Runs) != 1 || len(c.Requests) != 0 || run.Tool != "vllm" || run.Convention != "vllm" || run.Model != "facebook/opt-125m" ||
		run.Tokenizer != "facebook/opt-125m" || run.RequestRateRPS == nil || !math.IsInf(*run.RequestRateRPS, 1) || run.Concurrency != nil ||
		run.LoadMode != "request_rate" || run.Endpoint != "v1/completions" || run.ClockDomain != "" || run.SourceFiles[0].Role != "summary" {
		t.Errorf("all-failed run: %+v", run)
	}
	if reported(t, run, "failed", "value") != 8 || reported(t, run, "completed", "value") != 0 || reported(t, run, "ttft_ms", "p99") != 0 ||
		reported(t, run, "duration", "value") != 0.00503263997961767 || hasReported(run, "request_goodput") {
		t.Errorf("all-failed reported: %+v", run.Reported)
	}
	notesContain(t, run, "summary only: nothing to recompute", "completed 0: every latency statistic is vLLM's value for an empty list")
	if len(warnings) != 1 || !strings.HasSuffix(warnings[0], ": summary only: nothing to recompute") {
		t.Errorf("warnings %q", warnings)
	}

	c, warnings = importFile(t, filepath.Join(corpus, "er0080-sweep-opt125m-c2", "summary.json"), "sweep")
	if len(c.Runs) != 2 || c.Runs[1].RunID != "sweep#2" {
		t.Fatalf("sweep: %d runs", len(c.Runs))
	}
	r0, r1 := c.Runs[0], c.Runs[1]
	if *r0.Concurrency != 2 || r0.LoadMode != "concurrency" || len(r0.SourceFiles) != 2 || filepath.Base(r0.SourceFiles[1].Path) != "run=0.json" ||
		r0.SourceFiles[1].Role != "run" || len(r1.SourceFiles) != 1 {
		t.Errorf("sweep runs: %+v\n%+v", r0, r1)
	}
	if reported(t, r0, "e2el_ms", "p99") != 876.8009717071254 || reported(t, r1, "request_throughput", "value") != 12.460566958863927 ||
		reported(t, r1, "max_concurrent_requests", "value") != 8 || hasReported(r0, "max_num_seqs") || !strings.Contains(r0.ConfigJSON, `"max_num_seqs":4`) {
		t.Errorf("sweep reported: %+v", r0.Reported)
	}
	notesContain(t, r0, "companion run=0.json holds the same result object (checked key by key)", "taken as the sweep's parameters (the object has run_number), kept in config_json: max_num_seqs")
	if len(warnings) != 2 { // summary only; max_num_seqs (once for both runs)
		t.Errorf("sweep warnings %q", warnings)
	}

	c, warnings = importFile(t, filepath.Join(corpus, "moguizhizi-qwen25vl72b-ascend-32req", corpusFiles["moguizhizi-qwen25vl72b-ascend-32req"]), "mog")
	run = c.Runs[0]
	if run.Endpoint != "v1/chat/completions" || hasReported(run, "request_goodput") || reported(t, run, "accuracy_rate", "value") != 71.875 ||
		reported(t, run, "itl_ms", "median") != 127.95224413275719 || !strings.Contains(run.ConfigJSON, `"hardware":"910B3"`) {
		t.Errorf("moguizhizi run: %+v", run)
	}
	notesContain(t, run, `old spelling "request_goodput:"`, "numeric, imported into reported (Stat \"value\"): accuracy_rate",
		"kept in config_json: hardware, model_name, kind, env, quant-type, enable-prefix-caching")
	// summary only, the typo, accuracy_rate and six metadata keys
	if len(warnings) != 9 {
		t.Errorf("moguizhizi warnings (%d) %q", len(warnings), warnings)
	}
}

// TestDetailedFixture checks the rows of the hand-made --save-detailed
// fixture (FIXTURES.md).
func TestDetailedFixture(t *testing.T) {
	c, warnings := importFile(t, filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"]), "fx")
	if len(c.Runs) != 2 || len(c.Requests) != 9 || c.Runs[0].RunID != "fx" || c.Runs[1].RunID != "fx#2" {
		t.Fatalf("%d runs, %d requests", len(c.Runs), len(c.Requests))
	}
	run := c.Runs[0]
	if run.ClockDomain != formats.ClockMonotonic || run.RequestCount != 5 || *run.RequestRateRPS != 4 || *run.Concurrency != 2 ||
		run.LoadMode != "request_rate" || run.SourceFiles[0].Role != "raw" || run.Streaming == nil || !*run.Streaming {
		t.Errorf("run 1: %+v", run)
	}
	// p99.9 and the other --metric-percentiles values, under vLLM's names
	if !near(reported(t, run, "ttft_ms", "p99.9"), 149.91) || !near(reported(t, run, "e2el_ms", "p50"), 175) || reported(t, run, "request_goodput", "value") != 2.5 {
		t.Errorf("run 1 reported: %+v", run.Reported)
	}
	rq := c.Requests
	// request 1: 5 messages for 6 tokens; start_times → monotonic start
	if rq[1].Status != formats.StatusOK || *rq[1].StartNs != 1000250000000 || rq[1].ClockDomain != formats.ClockMonotonic || *rq[1].FirstTokenOffsetNs != 150000000 ||
		*rq[1].LastTokenOffsetNs != 250000000 || rq[1].StreamEndOffsetNs != nil || rq[1].TokenMessageCount != 5 || *rq[1].OutputTokens != 6 ||
		rq[1].OutputTokensSource != formats.SourceToolReported || *rq[1].ReportedE2EMs != 250 || *rq[1].ReportedTTFTMs != 150 {
		t.Errorf("request 1: %+v", rq[1])
	}
	// request 2: a traceback
	if rq[2].Status != formats.StatusError || rq[2].ErrorType != "aiohttp.client_exceptions.ServerDisconnectedError" || rq[2].OutputTokens != nil ||
		rq[2].FirstTokenOffsetNs != nil || *rq[2].InputTokens != 40 || rq[2].MessageCount != 0 {
		t.Errorf("request 2: %+v", rq[2])
	}
	// request 3: a one-token reply, one message
	if *rq[3].FirstTokenOffsetNs != 90000000 || *rq[3].LastTokenOffsetNs != 90000000 || rq[3].SecondTokenOffsetNs != nil || rq[3].MessageCount != 1 {
		t.Errorf("request 3: %+v", rq[3])
	}
	// object 2: no start times; an empty-reason failure and an HTTP reason phrase
	run2 := c.Runs[1]
	if run2.ClockDomain != "" || !math.IsInf(*run2.RequestRateRPS, 1) || run2.Concurrency != nil || hasReported(run2, "request_goodput") {
		t.Errorf("run 2: %+v", run2)
	}
	if rq[5].StartNs != nil || *rq[5].LastTokenOffsetNs != 246000000 || rq[6].Status != formats.StatusError || rq[6].ErrorText != "" ||
		rq[8].Status != formats.StatusError || *rq[8].ErrorCode != 429 || rq[8].ErrorType != "http" {
		t.Errorf("object 2 requests: %+v\n%+v\n%+v", rq[5], rq[6], rq[8])
	}
	// the whole text is on the last event of each reply
	var texts []string
	for _, e := range c.Events {
		if e.Text != nil {
			texts = append(texts, *e.Text)
		}
	}
	if len(c.Events) != 4+5+1+3+5+3 || len(texts) != 6 || texts[1] != "Infinity and NaN are words here." {
		t.Errorf("%d events, texts %q", len(c.Events), texts)
	}
	notesContain(t, run, "requests: 5 from the per-request arrays (errors, generated_texts, input_lens, itls, latencies, output_lens, queue_times, start_times, ttfts): 4 ok, 0 empty, 1 error: aiohttp.client_exceptions.ServerDisconnectedError ×1",
		"every rebuilt last message matches the request's latency", "kept in config_json: gpu", "scheduled_start_ns = start_times − queue_times")
	notesContain(t, run2, "no start_times", "failed requests with an empty error", "HTTP 429 ×1", `old spelling "request_goodput:"`)
	// unknown key gpu (once), the typo (once)
	if len(warnings) != 2 {
		t.Errorf("warnings %q", warnings)
	}
	// --no-text drops the texts
	var nt formats.Collector
	if err := ingest.ImportFile(New(), filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"]), ingest.Options{NoText: true}, &nt); err != nil {
		t.Fatal(err)
	}
	for _, e := range nt.Events {
		if e.Text != nil {
			t.Fatalf("--no-text: event with text %q", *e.Text)
		}
	}
}

// TestLatenciesOnly: newer vLLM keeps latencies and queue_times without
// --save-detailed; the requests come from the latencies alone.
func TestLatenciesOnly(t *testing.T) {
	c, _ := importFile(t, filepath.Join("testdata", "latencies-only", fixtures["latencies-only"]), "lat")
	rq := c.Requests
	if len(rq) != 3 || len(c.Events) != 0 || rq[0].Status != formats.StatusOK || *rq[0].LastTokenOffsetNs != 250000000 || rq[0].FirstTokenOffsetNs != nil ||
		rq[1].Status != formats.StatusError || rq[2].Status != formats.StatusOK {
		t.Fatalf("requests %+v", rq)
	}
	notesContain(t, c.Runs[0], "requests with a latency but no ttfts array", "no start_times")
}

func TestTruncated(t *testing.T) {
	c, warnings := importFile(t, filepath.Join("testdata", "truncated", fixtures["truncated"]), "cut")
	want := "object 2 (line 2) is incomplete (file cut)"
	if len(c.Runs) != 1 || len(c.Requests) != 5 || !c.Runs[0].Truncated || len(warnings) != 2 || !strings.HasSuffix(warnings[0], want) {
		t.Fatalf("runs %d, requests %d, warnings %q", len(c.Runs), len(c.Requests), warnings)
	}
	notesContain(t, c.Runs[0], want+"; every complete")
	// cut inside the first object: nothing to import
	p := filepath.Join(t.TempDir(), "r.json")
	b, _ := os.ReadFile(filepath.Join("testdata", "truncated", fixtures["truncated"]))
	os.WriteFile(p, b[:300], 0o644)
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{}); err == nil || !strings.Contains(err.Error(), "object 1 (line 1) is incomplete (file cut): no complete result object") {
		t.Errorf("cut first object: %v", err)
	}
	// a sweep summary without its closing bracket
	b, _ = os.ReadFile(filepath.Join(corpus, "er0080-sweep-opt125m-c2", "summary.json"))
	p = filepath.Join(t.TempDir(), "sweep.json")
	os.WriteFile(p, bytes.TrimRight(bytes.TrimSpace(b), "]"), 0o644)
	c, warnings = importFile(t, p, "s")
	if len(c.Runs) != 2 || !c.Runs[1].Truncated || !strings.HasSuffix(warnings[0], "the array ends after element 2 without its closing ']' (file cut)") {
		t.Errorf("sweep cut: %d runs, warnings %q", len(c.Runs), warnings)
	}
}

// TestDamage: structural damage and wrong types are positioned errors.
func TestDamage(t *testing.T) {
	good, _ := os.ReadFile(filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"]))
	o1, o2, _ := bytes.Cut(good, []byte("\n"))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"syntax", append(append(append([]byte{}, o1...), '\n'), bytes.Replace(o2, []byte(`"completed": 2,`), []byte(`"completed": ,`), 1)...), `: object 2 (line 2): invalid character ',' looking for beginning of value`},
		{"ttfts type", bytes.Replace(good, []byte(`"ttfts": [0.12,`), []byte(`"ttfts": ["x",`), 1), `: object 1 (line 1): ttfts[0]: not a number: "x"`},
		{"itls type", bytes.Replace(good, []byte(`[0.02, 0.025, 0.03]`), []byte(`[0.02, true, 0.03]`), 1), `: object 1 (line 1): itls[0][1]: not a number: true`},
		{"length", bytes.Replace(good, []byte(`"output_lens": [4, 6, 0, 1, 3]`), []byte(`"output_lens": [4, 6, 0, 1]`), 1), `: object 1 (line 1): the per-request arrays differ in length (errors 5, generated_texts 5, input_lens 5, itls 5, latencies 5, output_lens 4, queue_times 5, start_times 5, ttfts 5): they must be index-aligned`},
		{"duration type", bytes.Replace(good, []byte(`"duration": 1.2`), []byte(`"duration": "1.2s"`), 1), `: object 1 (line 1): duration: not a number: "1.2s"`},
		{"rate type", bytes.Replace(good, []byte(`"request_rate": 4.0`), []byte(`"request_rate": "fast"`), 1), `: object 1 (line 1): request_rate: not a number or "inf"`},
		{"array", bytes.Replace(good, []byte(`"ttfts": [`), []byte(`"ttfts": {"a": [`), 1), `: object 1 (line `},
		{"not an object", append(append(append([]byte{}, o1...), '\n'), []byte("[1, 2]")...), `: object 2 (line 2): not a JSON object`},
		{"garbage after", append(append([]byte{}, o1...), []byte("\n}")...), `: object 2 (line 2): invalid character '}' looking for beginning of value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "r.json")
			os.WriteFile(p, tc.data, 0o644)
			err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{})
			var fe *ingest.FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), p+tc.want) {
				t.Errorf("error %v, want a FormatError containing %q", err, tc.want)
			}
		})
	}
	// a JSON object of another tool, forced with --from
	p := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(p, []byte(`{"benchmarks": []}`), 0o644)
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{}); !errors.Is(err, ingest.ErrNotThisFormat) {
		t.Errorf("foreign file: %v", err)
	}
	os.WriteFile(p, []byte(" \n"), 0o644)
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{}); err == nil || err.Error() != p+": empty file (expected a vLLM bench serve result object)" {
		t.Errorf("empty file: %v", err)
	}
}

// TestNonFinite: Python's bare NaN and Infinity parse; outside statistics
// they are Text, and inside strings they are left alone.
func TestNonFinite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(p, []byte(`{"backend": "vllm", "model_id": "m", "request_rate": Infinity, "burstiness": Infinity, "label": "NaN Infinity", "duration": 1.0, "completed": 0, "mean_ttft_ms": NaN, "p99_ttft_ms": -Infinity}`), 0o644)
	c, _ := importFile(t, p, "nf")
	run := c.Runs[0]
	if !math.IsInf(*run.RequestRateRPS, 1) || !strings.Contains(run.ConfigJSON, `"label":"NaN Infinity"`) || !strings.Contains(run.ConfigJSON, `"burstiness":"Infinity"`) {
		t.Errorf("run %+v", run)
	}
	texts := map[string]string{}
	for _, s := range run.Reported {
		if s.Value == nil {
			texts[s.Metric+"/"+s.Stat] = s.Text
		}
	}
	if texts["ttft_ms/mean"] != "NaN" || texts["ttft_ms/p99"] != "-Infinity" {
		t.Errorf("texts %v", texts)
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
		{filepath.Join(corpus, "er0080-all-failed-opt125m", corpusFiles["er0080-all-failed-opt125m"]), true},
		{filepath.Join(corpus, "er0080-sweep-opt125m-c2", "summary.json"), true},
		{filepath.Join(corpus, "er0080-sweep-opt125m-c2", "run=0.json"), true},
		{filepath.Join(corpus, "moguizhizi-qwen25vl72b-ascend-32req", corpusFiles["moguizhizi-qwen25vl72b-ascend-32req"]), true},
		{filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"]), true},
		{filepath.Join("testdata", "truncated", fixtures["truncated"]), true},
		{"../../testdata/sglang-bench/tonyli15-agg-n50-in128-out64-c8/agg_n50_in128_out64_c8.jsonl", false},
		{"../../testdata/sglang-bench/dlora-oldformat-1req/sglang_1022_1_1024_128.jsonl", false},
		{"../../testdata/llmperf/leaderboard-lepton-13b/summary.json", false},
		{"../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts/profile_export_aiperf.json", false},
		{"../../testdata/genai-perf/openrouter-gpt4omini-c1-nonstream/profile_export_genai_perf.json", false},
	} {
		if got := im.Detect(tc.path, head(tc.path)); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	// the side file vLLM writes beside a result repeats its keys
	if im.Detect("x.pytorch.json", head(filepath.Join(corpus, "er0080-all-failed-opt125m", corpusFiles["er0080-all-failed-opt125m"]))) {
		t.Error("Detect: a .pytorch.json side file")
	}
	// a head cut inside the first object still counts
	if !im.Detect("x.json", []byte(`{"date": "20260301-101500", "endpoint_type": "openai", "backend": "openai", "label": null, "model_id": "m", "duration": 1.0, "ttfts": [0.1, 0.`)) {
		t.Error("Detect: first object cut in head")
	}
}

func TestCompanions(t *testing.T) {
	im := New()
	got := im.Companions(filepath.Join(corpus, "er0080-sweep-opt125m-c2", "summary.json"))
	if len(got) != 1 || filepath.Base(got[0]) != "run=0.json" {
		t.Errorf("sweep companions %q", got)
	}
	if got := im.Companions(filepath.Join(corpus, "er0080-sweep-opt125m-c2", "run=0.json")); got != nil {
		t.Errorf("run file companions %q", got)
	}
	// a run file that differs from its summary element, and one with no element
	dir := t.TempDir()
	sum, _ := os.ReadFile(filepath.Join(corpus, "er0080-sweep-opt125m-c2", "summary.json"))
	run0, _ := os.ReadFile(filepath.Join(corpus, "er0080-sweep-opt125m-c2", "run=0.json"))
	os.WriteFile(filepath.Join(dir, "summary.json"), sum, 0o644)
	os.WriteFile(filepath.Join(dir, "run=0.json"), bytes.Replace(run0, []byte(`"completed": 8`), []byte(`"completed": 7`), 1), 0o644)
	os.WriteFile(filepath.Join(dir, "run=5.json"), bytes.Replace(run0, []byte(`"run_number": 0`), []byte(`"run_number": 5`), 1), 0o644)
	c, _ := importFile(t, filepath.Join(dir, "summary.json"), "sw")
	if len(c.Runs) != 3 || c.Runs[2].RunID != "sw#3" || reported(t, c.Runs[0], "completed", "value") != 8 {
		t.Fatalf("%d runs", len(c.Runs))
	}
	notesContain(t, c.Runs[0], "companion run=0.json differs from this element in completed; the summary's values are kept")
	notesContain(t, c.Runs[2], "from run=5.json, which has no element of the same run_number in summary.json")
	if src := c.Runs[2].SourceFiles; len(src) != 1 || filepath.Base(src[0].Path) != "run=5.json" {
		t.Errorf("extra run sources %+v", src)
	}
}

// TestLatencyConsistency: in vLLM's --save-detailed layout, a request that
// failed mid-stream (an error, ttfts kept, latency left 0.0 by vLLM) is a
// failure and no time_order; a request whose ttfts + Σ itls (0.1 + 0.3 s)
// passes its latency (0.2 s) is a time_order on itls, its latency trusted
// and no message rebuilt; a consistent one is rebuilt as before. The two
// completed chat replies have 3 gaps each, too few for the role-chunk
// check, which says so (vllm_role_chunk_unjudged, 2 requests).
func TestLatencyConsistency(t *testing.T) {
	p := filepath.Join(t.TempDir(), "openai-chat-1.0qps-m-20260301-101500.json")
	doc := `{"date": "20260301-101500", "backend": "openai-chat", "model_id": "m", "num_prompts": 3, "request_rate": 1.0,
	"duration": 2.0, "completed": 2, "failed": 1,
	"input_lens": [10, 10, 10], "output_lens": [4, 0, 4],
	"ttfts": [0.1, 0.05, 0.1], "itls": [[0.1, 0.1, 0.1], [0.02], [0.02, 0.02, 0.02]],
	"latencies": [0.2, 0.0, 0.16], "start_times": [100.0, 100.5, 101.0],
	"generated_texts": ["a b c d", "", "a b c d"],
	"errors": ["", "aiohttp.client_exceptions.ClientPayloadError: Response payload is not completed", ""]}`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := importFile(t, p, "lat")
	run := c.Runs[0]
	var checks []string
	for _, ch := range run.Checks {
		checks = append(checks, fmt.Sprintf("%s/%s/%d", ch.Code, ch.Field, ch.Requests))
	}
	if s := strings.Join(checks, " "); s != "vllm_role_chunk_unjudged/itls/2 time_order/itls/1" {
		t.Errorf("checks %q, want one time_order on itls (request 0), none for the mid-stream failure", s)
	}
	r := c.Requests
	if r[0].Status != formats.StatusOK || r[0].LastTokenOffsetNs == nil || *r[0].LastTokenOffsetNs != 200_000_000 ||
		*r[0].FirstTokenOffsetNs != 100_000_000 || r[0].SecondTokenOffsetNs == nil {
		t.Errorf("overrun request: %+v", r[0])
	}
	if r[1].Status != formats.StatusError {
		t.Errorf("mid-stream failure: status %q", r[1].Status)
	}
	if *r[2].LastTokenOffsetNs != 160_000_000 {
		t.Errorf("consistent request: last token %d ns", *r[2].LastTokenOffsetNs)
	}
	var ev0, ev2 int
	for _, e := range c.Events {
		switch e.RequestKey {
		case 0:
			ev0++
		case 2:
			ev2++
		}
	}
	if ev0 != 0 || ev2 != 4 {
		t.Errorf("events: %d of the overrun request (want none), %d of the consistent one (want 4)", ev0, ev2)
	}
}
