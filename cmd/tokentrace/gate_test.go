package main

import (
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	groq     = "../../testdata/llmperf/leaderboard-groq-70b"
	bedrock  = "../../testdata/llmperf/leaderboard-bedrock-70b"
	anyscale = "../../testdata/llmperf/leaderboard-anyscale-70b"
)

// TestGateExitCodes: a passing and a failing SLO on corpus runs, and the
// documented exit status of each outcome.
func TestGateExitCodes(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"a run meeting every gate exits 0", []string{"gate", groq, "--slo", "ttft<=1s,tpot<=50ms", "--gate", "p90(ttft)<=500ms", "--gate", "goodput>=0.95"}, 0},
		{"a run failing a gate exits 3", []string{"gate", bedrock, "--slo", "ttft<=1s,tpot<=50ms", "--gate", "p90(ttft)<=500ms", "--gate", "goodput>=0.95"}, 3},
		{"the chat preset fails the slow Bedrock run", []string{"gate", bedrock, "--preset", "chat"}, 3},
		{"a regression that is noise passes", []string{"gate", groq, "--baseline", anyscale, "--gate", "p50(ttft)<=baseline"}, 0},
		{"a significant regression fails", []string{"gate", bedrock, "--baseline", groq, "--gate", "p50(ttft)<=1.1*baseline"}, 3},
		{"few samples fail only when asked", []string{"gate", groq, "--gate", "p99(ttft)<=2s", "--fail-on-few-samples"}, 3},
		{"a syntax error in a gate is a usage error", []string{"gate", groq, "--gate", "p99(ttft)<=800"}, 2},
		{"a regression gate without a baseline is a usage error", []string{"gate", groq, "--gate", "p99(ttft)<=baseline"}, 2},
		{"a goodput gate without an SLO is a usage error", []string{"gate", groq, "--gate", "goodput>=0.9"}, 2},
		{"an unknown preset is a usage error", []string{"gate", groq, "--preset", "nope"}, 2},
		{"a run AIPerf says is incomplete fails though its gate holds", []string{"gate", "../../ingest/aiperf/testdata/trap-incomplete", "--gate", "p50(ttft)<=1s"}, 3},
		{"a missing input is an error", []string{"gate", "../../testdata/none", "--gate", "p50(ttft)<=1s"}, 1},
		{"a non-streaming run cannot meet a TPOT SLO: an error", []string{"gate", "../../testdata/genai-perf/openrouter-llama31-8b-c1-nonstream", "--slo", "tpot<=50ms", "--gate", "goodput>=0.9"}, 1},
		{"an SLO alone gates nothing: a usage error, not a vacuous pass", []string{"gate", groq, "--slo", "ttft<=1ms"}, 2},
		{"an empty --gate (an unset CI variable) is a usage error", []string{"gate", groq, "--slo", "ttft<=1s", "--gate", ""}, 2},
		{"capacity's target must be a number in (0, 1]", []string{"capacity", groq, "--slo", "ttft<=1s", "--target", "NaN"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(t, c.args...)
			if got := exitCode(err); got != c.code {
				t.Errorf("exit %d (%v), want %d", got, err, c.code)
			}
		})
	}
}

func TestGateFormats(t *testing.T) {
	dir := t.TempDir()
	junit, js := filepath.Join(dir, "gate.xml"), filepath.Join(dir, "gate.json")
	args := []string{"gate", groq, bedrock, "--slo", "ttft<=1s", "--gate", "p50(ttft)<=300ms, goodput>=0.9", "--junit", junit, "--json", js}
	md, err := run(t, append(args, "--format", "markdown")...)
	if exitCode(err) != 3 {
		t.Fatalf("exit %d: %v", exitCode(err), err)
	}
	// Groq passes both; Bedrock (388 ms, 101/150 good) fails both.
	for _, want := range []string{"### ❌ tokentrace gate: FAIL: 2 of 4 gates failed", "| ✅ | `p50(ttft)<=300ms` | leaderboard-groq-70b | 221.9 ms | ≤ 300.0 ms |", "| ❌ | `goodput>=0.9` | leaderboard-bedrock-70b | 67.33% | ≥ 90% |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suite    []struct {
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	if suites.Tests != 4 || suites.Failures != 2 || len(suites.Suite) != 1 || len(suites.Suite[0].Cases) != 4 {
		t.Fatalf("junit counts: %+v", suites)
	}
	c := suites.Suite[0].Cases[3]
	if c.Name != "goodput>=0.9" || c.Classname != "tokentrace.gate.leaderboard-bedrock-70b" || c.Failure == nil || !strings.Contains(c.Failure.Message, "0.6733 is not >= 0.9") {
		t.Errorf("junit case %+v", c)
	}
	var rep struct {
		SchemaVersion int  `json:"schema_version"`
		Pass          bool `json:"pass"`
		Results       []struct {
			Gate   string   `json:"gate"`
			Run    string   `json:"run"`
			Status string   `json:"status"`
			Value  *float64 `json:"value"`
			N      int      `json:"n"`
			CI95   []float64
		} `json:"results"`
	}
	b, _ = os.ReadFile(js)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.SchemaVersion != 1 || rep.Pass || len(rep.Results) != 4 || rep.Results[0].Status != "pass" || rep.Results[0].N != 150 || math.Abs(*rep.Results[0].Value-221.9) > 0.05 {
		t.Errorf("json %+v", rep)
	}
	text, _ := run(t, args...)
	if !strings.Contains(text, "FAIL: 2 of 4 gates failed") || !strings.Contains(text, "PASS    p50(ttft)<=300ms  leaderboard-groq-70b") {
		t.Errorf("text:\n%s", text)
	}
}

func TestGateSpecFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "slo.yaml")
	os.WriteFile(good, []byte("slo:\n  - ttft<=1s\n  - tpot<=50ms\ngates:\n  - p50(ttft) <= 300ms\n  - goodput >= 99%\nalpha: 0.01\n"), 0o644)
	if _, err := run(t, "gate", groq, "--spec", good); exitCode(err) != 0 {
		t.Errorf("groq with %s: %v", good, err)
	}
	if _, err := run(t, "gate", bedrock, "--spec", good); exitCode(err) != 3 {
		t.Errorf("bedrock with %s: %v", good, err)
	}
	js := filepath.Join(dir, "slo.json")
	os.WriteFile(js, []byte(`{"slo": "ttft<=1s", "gates": ["goodput>=0.99"]}`), 0o644)
	if _, err := run(t, "gate", groq, "--spec", js); exitCode(err) != 0 {
		t.Errorf("json spec: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("slo: ttft<=1s\ngates:\n  - p50(ttft) <= 300ms\n  - p99(ttft) <= 3\n"), 0o644)
	_, err := run(t, "gate", groq, "--spec", bad)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "bad.yaml:4:") || !strings.Contains(err.Error(), "at character 15: a unit is required") {
		t.Errorf("bad spec: %v", err)
	}
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("slo: ttft<=1s\ngate:\n  - goodput>=0.9\n"), 0o644)
	if _, err := run(t, "gate", groq, "--spec", typo); exitCode(err) != 2 || !strings.Contains(err.Error(), `typo.yaml:2: unknown key "gate" (valid keys: slo, gates,`) || !strings.Contains(err.Error(), `did you mean "gates"?`) {
		t.Errorf("unknown key: %v", err)
	}
	out, err := run(t, "gate", "--list-presets")
	if err != nil || !strings.Contains(out, "chat\n") || !strings.Contains(out, "mlperf-llama2-70b-interactive\n") {
		t.Errorf("presets: %v %q", err, out)
	}
}

func TestCapacityCommand(t *testing.T) {
	out, err := run(t, "capacity", groq, anyscale, bedrock, "--slo", "ttft<=1s,tpot<=50ms", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Points []struct {
			RunID      string  `json:"run_id"`
			RateSource string  `json:"rate_source"`
			Attainment float64 `json:"attainment"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Points) != 3 || c.Points[0].RateSource != "measured" {
		t.Errorf("points %+v", c.Points)
	}
	svg := filepath.Join(t.TempDir(), "capacity.svg")
	if _, err := run(t, "capacity", groq, anyscale, bedrock, "--slo", "ttft<=1s", "--plot", svg); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "Goodput capacity") {
		t.Errorf("capacity plot: %v", err)
	}
	if _, err := run(t, "capacity", groq, "--slo", "ttft<=1s", "--plot", "x.gif"); exitCode(err) != 2 {
		t.Errorf("--plot x.gif: %v", err)
	}
	if _, err := run(t, "capacity", groq); exitCode(err) != 2 {
		t.Errorf("capacity without --slo: %v", err)
	}
}

// TestReportComputesFluidityForItsSLO: report and analyze compute the
// fluidity-index an --slo constrains (it needs the per-token gaps while
// rows stream by), and agree with gate on the same SLO.
func TestReportComputesFluidityForItsSLO(t *testing.T) {
	in := "../../testdata/aiperf/qwen3vl30b-local-agent-c2"
	slo := "fluidity(300ms,50ms)>=0.95"
	out, err := run(t, "report", in, "--slo", slo, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Runs []struct {
			Goodput struct {
				Good, Total int
			} `json:"goodput"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	g := rep.Runs[0].Goodput
	if g.Total != 20 || g.Good == 0 || g.Good == 20 {
		t.Fatalf("goodput %+v: the SLO should separate requests", g)
	}
	gout, _ := run(t, "gate", in, "--slo", slo, "--gate", "goodput>=0", "--format", "json")
	var gr struct {
		Results []struct {
			Value float64 `json:"value"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(gout), &gr); err != nil {
		t.Fatal(err)
	}
	if gr.Results[0].Value != float64(g.Good)/20 {
		t.Errorf("gate goodput %v, report %d/20", gr.Results[0].Value, g.Good)
	}
}

// TestGateNewcomerFindings pins the fixes of a newcomer's review: each case
// once passed (or misreported) silently.
func TestGateNewcomerFindings(t *testing.T) {
	aiperf := "../../testdata/aiperf/qwen3vl30b-local-agent-c2"
	mlServer := "../../testdata/mlperf/amd-mi300x-llama2-70b-99-server"
	mlInter := "../../testdata/mlperf/amd-mi300x-llama2-70b-99-interactive"

	t.Run("a regression against tool-reported P99s is compared, not called noise", func(t *testing.T) {
		out, err := run(t, "gate", mlServer, "--baseline", mlInter, "--gate", "p99(ttft) <= 1.1*baseline", "--format", "json")
		if exitCode(err) != 3 || !strings.Contains(out, `"test": "none (a tool-reported value has no per-request samples to test)"`) {
			t.Errorf("exit %d\n%s", exitCode(err), out)
		}
	})

	t.Run("a truncated input fails an input-complete check unless allowed", func(t *testing.T) {
		dir := t.TempDir()
		b, err := os.ReadFile(filepath.Join(aiperf, "profile_export.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "profile_export.jsonl"), b[:len(b)/2], 0o644)
		out, err := run(t, "gate", dir, "--gate", "p99(ttft)<=10s")
		if exitCode(err) != 3 || !strings.Contains(out, "FAIL    input complete") {
			t.Errorf("exit %d\n%s", exitCode(err), out)
		}
		if _, err := run(t, "gate", dir, "--gate", "p99(ttft)<=10s", "--allow-truncated"); exitCode(err) != 0 {
			t.Errorf("--allow-truncated: exit %d %v", exitCode(err), err)
		}
	})

	t.Run("pooled good requests per second count only the runs with a duration", func(t *testing.T) {
		out, err := run(t, "report", aiperf, bedrock, "--pool", "--slo", "ttft<=500ms", "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Runs []struct {
				Goodput struct {
					RequestsPerS float64 `json:"requests_per_s"`
				} `json:"goodput"`
			} `json:"runs"`
			Pooled struct {
				Goodput struct {
					Good         int     `json:"good"`
					RequestsPerS float64 `json:"requests_per_s"`
				} `json:"goodput"`
				Warnings []struct{ Code string } `json:"warnings"`
			} `json:"pooled"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		// LLMPerf keeps no start times: only the AIPerf run has a duration,
		// so the pooled rate is that run's own (20 good over its 109 s).
		if got, want := rep.Pooled.Goodput.RequestsPerS, rep.Runs[0].Goodput.RequestsPerS; math.Abs(got-want) > 1e-12 || rep.Pooled.Goodput.Good <= 20 {
			t.Errorf("pooled good req/s %v (good %d), want the AIPerf run's %v", got, rep.Pooled.Goodput.Good, want)
		}
		mixed := false
		for _, w := range rep.Pooled.Warnings {
			mixed = mixed || w.Code == "pool_mixed"
		}
		if !mixed {
			t.Errorf("no pool_mixed warning: %+v", rep.Pooled.Warnings)
		}
	})

	t.Run("the same input pooled twice is read once", func(t *testing.T) {
		dup := filepath.Join(t.TempDir(), "copy-of-groq")
		if err := os.CopyFS(dup, os.DirFS(groq)); err != nil {
			t.Fatal(err)
		}
		var out string
		var err error
		stderr := captureStderr(t, func() { out, err = run(t, "report", groq, dup, "--pool", "--format", "json") })
		var rep struct{ Runs []struct{} }
		if err == nil {
			err = json.Unmarshal([]byte(out), &rep)
		}
		if err != nil || !strings.Contains(stderr, "duplicate_input: 1 input(s)") || len(rep.Runs) != 1 {
			t.Errorf("%v\n%s\n%.300s", err, stderr, out)
		}
	})

	t.Run("an empty conditioned sample names its condition", func(t *testing.T) {
		out, _ := run(t, "gate", aiperf, "--gate", "p99(e2e|osl>=100000)<=3s")
		if !strings.Contains(out, "undefined: no e2e samples among requests with osl>=100000") {
			t.Errorf("%s", out)
		}
	})

	t.Run("ttfo follows the report: undefined without reasoning", func(t *testing.T) {
		out, err := run(t, "gate", aiperf, "--gate", "p99(ttfo)<=500ms")
		if exitCode(err) != 3 || !strings.Contains(out, "no request produced reasoning") {
			t.Errorf("exit %d\n%s", exitCode(err), out)
		}
	})

	t.Run("impossible bounds are syntax errors", func(t *testing.T) {
		for _, g := range []string{"goodput>=1.5", "error_rate<=150%", "p1(fluidity(1s,50ms))>=-0.1"} {
			if _, err := run(t, "gate", aiperf, "--slo", "ttft<=1s", "--gate", g); exitCode(err) != 2 {
				t.Errorf("%s: exit %d %v", g, exitCode(err), err)
			}
		}
		if _, err := run(t, "gate", aiperf, "--slo", "fluidity(500ms,50ms)>=1.5"); exitCode(err) != 2 {
			t.Errorf("fluidity>=1.5: %v", err)
		}
	})
}

// TestGatePercentWording: a fraction gate written in percent shows its
// value, bound and reason in percent (Bedrock: 49 of 150 failed).
func TestGatePercentWording(t *testing.T) {
	out, err := run(t, "gate", bedrock, "--gate", "error_rate<=1%")
	if exitCode(err) != 3 {
		t.Fatalf("exit %d: %v", exitCode(err), err)
	}
	if !strings.Contains(out, "FAIL    error_rate<=1%  leaderboard-bedrock-70b  32.67%  <= 1%  n=150; 32.67% is not <= 1%") {
		t.Errorf("text:\n%s", out)
	}
}
