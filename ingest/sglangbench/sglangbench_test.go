package sglangbench

import (
	"bytes"
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

// corpus is the real SGLang result files under the module's testdata (each
// directory with a SOURCE.md).
const corpus = "../../testdata/sglang-bench"

var corpusFiles = map[string]string{
	"dlora-oldformat-1req":                 "sglang_1022_1_1024_128.jsonl",
	"tonyli15-agg-n50-in128-out64-c8":      "agg_n50_in128_out64_c8.jsonl",
	"tonyli15-pd-intra-n50-in128-out64-c8": "pd_intra_n50_in128_out64_c8.jsonl",
}

// fixtures are the hand-made inputs under testdata (FIXTURES.md).
var fixtures = map[string]string{
	"output-details": "sglang_0301_4_64_8.jsonl",
	"truncated":      "sglang_0301_2_64_8.jsonl",
	"trap-stuck":     "sglang-oai_0502_4_32_16.jsonl",
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

func notesContain(t *testing.T, run formats.Run, want ...string) {
	t.Helper()
	all := strings.Join(run.Notes, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("run %s: notes lack %q:\n%s", run.RunID, w, all)
		}
	}
}

// TestCorpus checks the three key sets of the corpus (SOURCE.md of each).
func TestCorpus(t *testing.T) {
	// 2024: two appended lines, bare Infinity, TTFT above E2E, ITL 0.
	c, warnings := importFile(t, filepath.Join(corpus, "dlora-oldformat-1req", corpusFiles["dlora-oldformat-1req"]), "dlora")
	if len(c.Runs) != 2 || c.Runs[1].RunID != "dlora#2" || len(c.Requests) != 0 {
		t.Fatalf("dlora: %d runs", len(c.Runs))
	}
	r := c.Runs[0]
	if r.Tool != "sglang" || r.Convention != ConventionNative || !math.IsInf(*r.RequestRateRPS, 1) || r.LoadMode != "request_rate" || r.Model != "" ||
		r.Endpoint != "generate" || reported(t, r, "ttft_ms", "median") != 98.00630086101592 || reported(t, r, "e2e_latency_ms", "mean") != 97.98683994449675 ||
		reported(t, r, "total_output_tokens_retokenized", "value") != 3 || reported(t, r, "itl_ms", "median") != 0 {
		t.Errorf("dlora run: %+v", r)
	}
	notesContain(t, r, "summary only: nothing to recompute", "key set: 2024")
	if len(warnings) != 1 {
		t.Errorf("dlora warnings %q", warnings)
	}
	// late 2025, aggregated server_info
	c, _ = importFile(t, filepath.Join(corpus, "tonyli15-agg-n50-in128-out64-c8", corpusFiles["tonyli15-agg-n50-in128-out64-c8"]), "agg")
	r = c.Runs[0]
	if r.Model != "Qwen/Qwen2.5-3B-Instruct" || r.ToolVersion != "0.5.5.post3" || r.Tokenizer != "Qwen/Qwen2.5-3B-Instruct" || *r.Concurrency != 8 ||
		r.LoadMode != "concurrency" || reported(t, r, "itl_ms", "p95") != 21.319825435057282 || reported(t, r, "total_output_tokens", "value") != 1401 ||
		reported(t, r, "concurrency", "value") != 7.784201163950447 || reportedText(r, "accept_length", "value") != "<absent>" ||
		!strings.Contains(r.ConfigJSON, `"tag":"agg_n50_in128_out64_c8"`) || !strings.Contains(r.ConfigJSON, `"server_info":{`) {
		t.Errorf("agg run: %+v", r)
	}
	notesContain(t, r, "key set: late-2025", "server_info layout: aggregated")
	// late 2025, prefill/decode-disaggregated server_info
	c, _ = importFile(t, filepath.Join(corpus, "tonyli15-pd-intra-n50-in128-out64-c8", corpusFiles["tonyli15-pd-intra-n50-in128-out64-c8"]), "pd")
	r = c.Runs[0]
	if r.Model != "Qwen/Qwen2.5-3B-Instruct" || r.ToolVersion != "0.5.5.post3" || reported(t, r, "tpot_ms", "p99") != 178.3321816846719 {
		t.Errorf("pd run: %+v", r)
	}
	notesContain(t, r, "server_info layout: disaggregated (prefill/decode; model, tokenizer and version of the decode server)")
}

// TestOutputDetails checks the rows of the hand-made --output-details
// fixture (FIXTURES.md).
func TestOutputDetails(t *testing.T) {
	c, warnings := importFile(t, filepath.Join("testdata", "output-details", fixtures["output-details"]), "od")
	if len(c.Runs) != 2 || len(c.Requests) != 7 || len(warnings) != 0 {
		t.Fatalf("%d runs, %d requests, warnings %q", len(c.Runs), len(c.Requests), warnings)
	}
	native, oai := c.Runs[0], c.Runs[1]
	if native.Convention != ConventionNative || oai.Convention != Convention || native.RequestCount != 4 || oai.RequestCount != 3 ||
		native.ClockDomain != "" || native.SourceFiles[0].Role != "raw" || *oai.RequestRateRPS != 8 || oai.Endpoint != "v1/completions" {
		t.Errorf("runs: %+v\n%+v", native, oai)
	}
	if strings.Contains(native.ConfigJSON, "sk-testsecret") || !strings.Contains(native.ConfigJSON, `"api_key":"REDACTED"`) {
		t.Errorf("server_info api_key not redacted: %s", native.ConfigJSON)
	}
	notesContain(t, native, "redacted from config_json: config.server_info.api_key", "(1 such messages)")
	rq := c.Requests
	// request 0: 1 + 1 + 3 + 1 tokens in 4 messages
	var ev0 []formats.Event
	for _, e := range c.Events {
		if e.RunID == "od" && e.RequestKey == 0 {
			ev0 = append(ev0, e)
		}
	}
	if len(ev0) != 4 || *ev0[0].Tokens != 1 || ev0[2].OffsetNs != 70000000 || *ev0[2].Tokens != 3 || *ev0[3].Tokens != 1 || ev0[3].OffsetNs != 76000000 ||
		*ev0[3].Text != "Infinity and beyond: NaN." {
		t.Errorf("request 0 events: %+v", ev0)
	}
	if rq[0].StartNs != nil || rq[0].StreamEndOffsetNs != nil || *rq[0].OutputTokens != 6 || rq[0].OutputTokensSource != formats.SourceServerUsage ||
		rq[0].TokenMessageCount != 4 || *rq[0].ReportedTTFTMs != 50 {
		t.Errorf("request 0: %+v", rq[0])
	}
	if rq[2].Status != formats.StatusError || rq[2].ErrorType != "aiohttp.client_exceptions.ClientConnectorError" || rq[2].OutputTokens != nil {
		t.Errorf("request 2: %+v", rq[2])
	}
	// the OpenAI-style run: tool_reported counts, one message per gap, an HTTP reason
	if rq[4].OutputTokensSource != formats.SourceToolReported || rq[4].TokenMessageCount != 4 || rq[6].Status != formats.StatusError ||
		*rq[6].ErrorCode != 503 {
		t.Errorf("oai requests: %+v\n%+v", rq[4], rq[6])
	}
	for _, e := range c.Events {
		if e.RunID == "od#2" && e.Tokens != nil {
			t.Fatalf("oai event with a token count: %+v", e)
		}
	}
}

func TestTruncated(t *testing.T) {
	c, warnings := importFile(t, filepath.Join("testdata", "truncated", fixtures["truncated"]), "cut")
	want := "line 2 is incomplete (file cut)"
	if len(c.Runs) != 1 || len(c.Requests) != 4 || !c.Runs[0].Truncated || len(warnings) != 1 || !strings.HasSuffix(warnings[0], want) {
		t.Fatalf("runs %d, requests %d, warnings %q", len(c.Runs), len(c.Requests), warnings)
	}
	notesContain(t, c.Runs[0], want+"; every complete")
}

func TestDamage(t *testing.T) {
	path := filepath.Join("testdata", "malformed", "sglang_0301_3_64_8.jsonl")
	err := ingest.ImportFile(New(), path, ingest.Options{}, &formats.Collector{})
	var fe *ingest.FormatError
	if !errors.As(err, &fe) || fe.Where != "line 2" || err.Error() != path+": line 2: invalid character ',' looking for beginning of value" {
		t.Errorf("malformed: %v", err)
	}
	good, _ := os.ReadFile(filepath.Join("testdata", "output-details", fixtures["output-details"]))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"ttfts type", bytes.Replace(good, []byte(`"ttfts": [0.03,`), []byte(`"ttfts": [null, "0.0x",`), 1), `: line 2: ttfts[1]: not a number: "0.0x"`},
		{"length", bytes.Replace(good, []byte(`"input_lens": [20, 25, 30]`), []byte(`"input_lens": [20, 25]`), 1), `: line 2: the per-request arrays differ in length (errors 3, generated_texts 3, input_lens 2, itls 3, output_lens 3, ttfts 3)`},
		{"stat type", bytes.Replace(good, []byte(`"mean_ttft_ms": `), []byte(`"mean_ttft_ms": "n/a", "x": `), 1), `: line 1: mean_ttft_ms: not a number: "n/a"`},
		{"not an object", append([]byte("[1]\n"), good...), `: line 1: not a JSON object`},
		{"two values on a line", append([]byte("{\"backend\": \"sglang\", \"duration\": 1} {}\n"), good...), `: line 1: data after the JSON object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "r.jsonl")
			os.WriteFile(p, tc.data, 0o644)
			err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{})
			var fe *ingest.FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), p+tc.want) {
				t.Errorf("error %v, want a FormatError containing %q", err, tc.want)
			}
		})
	}
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte("{\"records\": 1}\n"), 0o644)
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{}); !errors.Is(err, ingest.ErrNotThisFormat) {
		t.Errorf("foreign file: %v", err)
	}
	os.WriteFile(p, nil, 0o644)
	if err := ingest.ImportFile(New(), p, ingest.Options{}, &formats.Collector{}); err == nil || err.Error() != p+": empty file (expected SGLang bench_serving JSON lines)" {
		t.Errorf("empty: %v", err)
	}
}

// TestNonFiniteAndUnknown: NaN and -Infinity parse and become Text; a key
// SGLang does not write is imported and warned about once per file.
func TestNonFiniteAndUnknown(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.jsonl")
	line := `{"backend": "sglang-oai", "request_rate": 4, "duration": 2.0, "completed": 1, "median_ttft_ms": NaN, "p99_itl_ms": -Infinity, "gpu_util": 0.9, "note": "NaN"}`
	os.WriteFile(p, []byte(line+"\n"+line+"\n"), 0o644)
	c, warnings := importFile(t, p, "nf")
	r := c.Runs[1]
	if reportedText(r, "ttft_ms", "median") != "NaN" || reportedText(r, "itl_ms", "p99") != "-Infinity" || reported(t, r, "gpu_util", "value") != 0.9 ||
		!strings.Contains(r.ConfigJSON, `"note":"NaN"`) || r.Convention != Convention {
		t.Errorf("run %+v", r)
	}
	// summary only; gpu_util; note — once each for the two lines
	if len(warnings) != 3 {
		t.Errorf("warnings %q", warnings)
	}
	notesContain(t, r, "numeric, imported into reported (Stat \"value\"): gpu_util", "kept in config_json: note")
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
		{filepath.Join(corpus, "dlora-oldformat-1req", corpusFiles["dlora-oldformat-1req"]), true},
		{filepath.Join(corpus, "tonyli15-agg-n50-in128-out64-c8", corpusFiles["tonyli15-agg-n50-in128-out64-c8"]), true},
		{filepath.Join(corpus, "tonyli15-pd-intra-n50-in128-out64-c8", corpusFiles["tonyli15-pd-intra-n50-in128-out64-c8"]), true},
		{filepath.Join("testdata", "output-details", fixtures["output-details"]), true},
		{filepath.Join("testdata", "malformed", "sglang_0301_3_64_8.jsonl"), true},
		{"../../testdata/vllm-bench/er0080-all-failed-opt125m/bench_serve_all_requests_failed_v0.25.1.json", false},
		{"../../testdata/vllm-bench/er0080-sweep-opt125m-c2/summary.json", false},
		{"../../testdata/vllm-bench/er0080-sweep-opt125m-c2/run=0.json", false},
		{"../../testdata/llmperf/leaderboard-lepton-13b/summary.json", false},
		{"../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts/profile_export.jsonl", false},
		{"../../testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts/profile_export_aiperf.json", false},
	} {
		if got := im.Detect(tc.path, head(tc.path)); got != tc.want {
			t.Errorf("Detect(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
