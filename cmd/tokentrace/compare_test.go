package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/ingest/genaiperf"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// compareCases are comparisons of real corpus runs, each with the flags
// its runs need to pair: the golden file starts with the command line.
var compareCases = []struct {
	name string
	args []string
}{
	// LLMPerf's leaderboard providers each name Llama-2-70B their own way
	// (llama2-70b-4096, meta-llama/Llama-2-70b-chat-hf,
	// meta.llama2-70b-chat-v1): the default matching pairs nothing, so
	// --ignore model.
	{"compare-llmperf-providers.txt", []string{"testdata/llmperf/leaderboard-groq-70b", "testdata/llmperf/leaderboard-anyscale-70b", "testdata/llmperf/leaderboard-bedrock-70b",
		"--ignore", "model", "--label", "groq", "--label", "anyscale", "--label", "bedrock", "--slo", "ttft<=1s", "--stat", "p50,p99,mean"}},
	{"compare-llmperf-providers.md", []string{"testdata/llmperf/leaderboard-groq-70b", "testdata/llmperf/leaderboard-bedrock-70b",
		"--ignore", "model", "--label", "groq", "--label", "bedrock", "--format", "markdown"}},
	{"compare-llmperf-providers.csv", []string{"testdata/llmperf/leaderboard-groq-70b", "testdata/llmperf/leaderboard-bedrock-70b",
		"--ignore", "model", "--label", "groq", "--label", "bedrock", "--format", "csv"}},
	// AIPerf: the same Qwen3-VL model and agent workload at concurrency 1
	// (through ngrok) and 2 (local): --ignore concurrency pairs them.
	{"compare-aiperf-qwen-c1-c2.txt", []string{"testdata/aiperf/qwen3vl30b-ngrok-agent-c1", "testdata/aiperf/qwen3vl30b-local-agent-c2",
		"--ignore", "concurrency", "--label", "c1", "--label", "c2", "--stat", "p50,p99,mean", "--slo", "ttft<=1s"}},
	// AIPerf's multi-run tree (a sweep of concurrency 1 and 2 with
	// trials, SOURCE.md) against its first trial alone: the default
	// matching pairs the cells by their recorded concurrency; the two
	// trials of concurrency 1 are pooled, with their spread.
	{"compare-aiperf-multirun-tree.txt", []string{"testdata/aiperf/multirun-sweep-qwen3vl30b", "testdata/aiperf/multirun-sweep-qwen3vl30b/profile_runs/trial_0001",
		"--label", "all-trials", "--label", "trial-1", "--slo", "ttft<=1s"}},
	// vLLM's sweep cell (two runs at concurrency 2, summary only, pooled
	// with their spread) against a run where every request failed
	// (its latencies are vLLM's zeros for an empty list: no values):
	// the failed run records no concurrency, so --ignore concurrency.
	{"compare-vllm-summary.txt", []string{"testdata/vllm-bench/er0080-sweep-opt125m-c2", "testdata/vllm-bench/er0080-all-failed-opt125m",
		"--ignore", "concurrency", "--stat", "p50,p99,mean"}},
	// inference-perf: the KubeCon vLLM baseline against EAGLE speculative
	// decoding, seven-stage rate sweeps, summary only: the default matching
	// pairs the stages at the same configured rate; both sweeps are
	// curves, with knees, Pareto points and cost.
	{"compare-inference-perf-sweeps.txt", []string{"testdata/inference-perf/kubecon25-vllm-baseline", "testdata/inference-perf/kubecon25-vllm-eagle",
		"--label", "baseline", "--label", "eagle", "--gpus", "1", "--cost-per-hour", "2.5"}},
}

// TestCompareCorpus runs compare on real runs and checks its output
// against golden files (go test ./cmd/tokentrace -run TestCompareCorpus
// -update rewrites them).
func TestCompareCorpus(t *testing.T) {
	for _, c := range compareCases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"compare"}, c.args...)
			for i, a := range args {
				if strings.HasPrefix(a, "testdata/") {
					args[i] = "../../" + a
				}
			}
			out, err := run(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			header := "$ tokentrace compare " + strings.Join(c.args, " ") + "\n"
			if strings.HasSuffix(c.name, ".csv") {
				header = ""
			}
			checkGolden(t, c.name, header+out)
		})
	}
}

// TestCompareNothingMatched: without --ignore model the providers pair
// nothing: compare says which key kept them apart and fails.
func TestCompareNothingMatched(t *testing.T) {
	out, err := run(t, "compare", "../../testdata/llmperf/leaderboard-groq-70b", "../../testdata/llmperf/leaderboard-anyscale-70b")
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err %v (exit %d), want exit 1", err, exitCode(err))
	}
	for _, want := range []string{"0 configurations compared", "unmatched on leaderboard-groq-70b: model=llama2-70b-4096",
		"no run paired on model: leaderboard-groq-70b has llama2-70b-4096; leaderboard-anyscale-70b has meta-llama/Llama-2-70b-chat-hf",
		"--ignore model"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(err.Error(), "--ignore model") {
		t.Errorf("error %v", err)
	}
}

// TestCompareJSON: the JSON carries the verdicts the text shows: Bedrock's
// median TTFT is higher than Groq's (order-statistic bounds), worse.
func TestCompareJSON(t *testing.T) {
	out, err := run(t, "compare", "../../testdata/llmperf/leaderboard-groq-70b", "../../testdata/llmperf/leaderboard-bedrock-70b", "--ignore", "model", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		SchemaVersion int `json:"schema_version"`
		Tables        []struct {
			Metric string
			Rows   []struct {
				Stat  string
				Cells []struct {
					Value  float64
					VsBase *struct {
						Verdict string
						Test    string
						Better  bool
						Lo, Hi  float64
					} `json:"vs_base"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.SchemaVersion != 1 || res.Tables[0].Metric != "ttft" || res.Tables[0].Rows[0].Stat != "p50" {
		t.Fatalf("%+v", res)
	}
	d := res.Tables[0].Rows[0].Cells[1].VsBase
	if d == nil || d.Verdict != "higher" || d.Better || d.Test != "order-statistic bounds" || !(d.Lo > 0 && d.Hi > d.Lo) {
		t.Errorf("bedrock vs groq p50 TTFT: %+v", d)
	}
}

// TestCompareUsage: bad flags are usage errors (exit 2) before any data
// is read.
func TestCompareUsage(t *testing.T) {
	groq := "../../testdata/llmperf/leaderboard-groq-70b"
	for _, args := range [][]string{
		{"compare", groq},
		{"compare", groq, groq, "--match", "modle"},
		{"compare", groq, groq, "--stat", "p100"},
		{"compare", groq, groq, "--alpha", "0.7"},
		{"compare", groq, groq, "--format", "html"},
		{"compare", groq, groq, "--label", "a"},
		{"compare", groq, groq, "--metric", "goodput"},
		{"compare", groq, groq, "--cost-per-hour", "-1"},
	} {
		if _, err := run(t, args...); exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want a usage error", args[1:], err, exitCode(err))
		}
	}
}

// synthSweep writes a concurrency sweep with `tokentrace synth` into dir,
// one directory per level named as GenAI-Perf's analyze subcommand names
// them (<model>-<service-kind>-<backend>-concurrency<N>, docs/analyze.md),
// with its analyze_export_genai_perf.csv and checkpoint.json beside them.
// TTFT and TPOT grow with the load as given (ms per level).
func synthSweep(t *testing.T, dir string, seed int, ttft, tpot []int) {
	t.Helper()
	for i, c := range []int{1, 2, 4, 8} {
		out := filepath.Join(dir, fmt.Sprintf("llama-openai-vllm-concurrency%d", c))
		if _, err := run(t, "synth", "-o", out, "--format", "genai-perf", "--concurrency", strconv.Itoa(c), "--requests", "200",
			"--osl-median", "64", "--failure-rate", "0", "--seed", strconv.Itoa(seed+i),
			"--ttft-median", fmt.Sprintf("%dms", ttft[i]), "--tpot-mean", fmt.Sprintf("%dms", tpot[i])); err != nil {
			t.Fatal(err)
		}
	}
	csv := "Config Name,Concurrency,ISL,Num Dataset Entries,p99 Time To First Token (ms)\nllama_run_config_0,1,128,200,1.0\n"
	if err := os.WriteFile(filepath.Join(dir, genaiperf.AnalyzeSummary), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "checkpoint.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompareGenAIPerfSweepTrees: two GenAI-Perf analyze trees of four
// concurrencies each (synthetic, per-request data) are matched level by
// level and become curves: A's P99 E2E jumps at concurrency 8, so its
// knee is the level before; B, faster throughout, keeps more of its
// requests within the SLO at a higher rate (a higher capacity); the
// analyze CSV and the checkpoint are not runs.
func TestCompareGenAIPerfSweepTrees(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	synthSweep(t, a, 10, []int{100, 120, 160, 600}, []int{20, 22, 25, 35})
	synthSweep(t, b, 20, []int{80, 90, 100, 150}, []int{15, 16, 17, 20})
	jobs, skipped, err := registry.Resolve([]string{a}, "")
	if err != nil || len(jobs) != 4 {
		t.Fatalf("%d jobs, %v", len(jobs), err)
	}
	for _, s := range skipped {
		if !knownNonTrace(s) {
			t.Errorf("%s skipped with a warning", s)
		}
	}
	out, err := run(t, "compare", a, b, "--label", "A", "--label", "B", "--slo", "ttft<=500ms", "--format", "json", "--gpus", "2", "--cost-per-hour", "1.5")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Matching struct{ Groups []json.RawMessage }
		Sweeps   struct {
			Series []struct {
				Curves []struct {
					Label  string
					Points []struct {
						Load              string
						PerUserTokensPerS float64 `json:"per_user_tokens_per_s"`
						Pareto            bool
						Cost              struct {
							PerMillionOutput float64 `json:"per_million_output_tokens"`
						}
						OutputTokensPerS float64 `json:"output_tokens_per_s"`
					}
					Knee *struct{ Load string }
				}
				Capacity []struct {
					RateRPS float64 `json:"rate_rps"`
					Change  float64
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Matching.Groups) != 4 || len(res.Sweeps.Series) != 1 {
		t.Fatalf("groups %d series %d", len(res.Matching.Groups), len(res.Sweeps.Series))
	}
	s := res.Sweeps.Series[0]
	if len(s.Curves) != 2 || len(s.Curves[0].Points) != 4 || len(s.Curves[1].Points) != 4 {
		t.Fatalf("curves %+v", s.Curves)
	}
	if k := s.Curves[0].Knee; k == nil || k.Load != "concurrency=4, rate=?" {
		t.Errorf("A's knee %+v, want concurrency 4", k)
	}
	for _, p := range s.Curves[1].Points {
		// $1.5 per GPU-hour × 2 GPUs at the level's output throughput
		if want := 3.0 / 3600 / p.OutputTokensPerS * 1e6; math.Abs(p.Cost.PerMillionOutput-want) > 1e-9*want {
			t.Errorf("B %s: cost %v, want %v", p.Load, p.Cost.PerMillionOutput, want)
		}
	}
	if len(s.Capacity) != 2 || !(s.Capacity[1].RateRPS > s.Capacity[0].RateRPS) || !(s.Capacity[1].Change > 0) {
		t.Errorf("capacities %+v: B should hold the SLO to a higher rate", s.Capacity)
	}
}

// TestCompareAIPerfIndependentTrials: AIPerf's independent sweep layout
// (<cell>/profile_runs/trial_NNNN/) — two trials per concurrency — pools
// each cell's trials and shows their spread.
func TestCompareAIPerfIndependentTrials(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []int{1, 2} {
		for trial := 1; trial <= 2; trial++ {
			out := filepath.Join(dir, "bench", fmt.Sprintf("concurrency_%d", c), "profile_runs", fmt.Sprintf("trial_%04d", trial))
			if _, err := run(t, "synth", "-o", out, "--format", "aiperf", "--concurrency", strconv.Itoa(c), "--requests", "50",
				"--osl-median", "32", "--failure-rate", "0", "--seed", strconv.Itoa(10*c+trial)); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := run(t, "compare", filepath.Join(dir, "bench"), filepath.Join(dir, "bench", "concurrency_1"), "--format", "json", "--metric", "ttft")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Sides  []struct{ Runs []string }
		Tables []struct {
			Rows []struct {
				Config string
				Cells  []struct {
					Runs      int
					N         int
					RunValues []float64 `json:"run_values"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Sides[0].Runs, " "); got != "concurrency_1/trial_0001 concurrency_1/trial_0002 concurrency_2/trial_0001 concurrency_2/trial_0002" {
		t.Errorf("runs %s", got)
	}
	c := res.Tables[0].Rows[0].Cells[0]
	if c.Runs != 2 || c.N != 100 || len(c.RunValues) != 2 {
		t.Errorf("concurrency 1 pooled: %+v", c)
	}
}

// TestCompareAgreesWithGate: for every statistic compare tests, its
// verdict is the gate's on the same runs: "higher" exactly when
// "STAT(metric) <= baseline" fails as significant, "lower" exactly when
// "STAT(metric) >= baseline" does, "~" when both pass (LLMPerf's Groq as
// the baseline of Anyscale and Bedrock).
func TestCompareAgreesWithGate(t *testing.T) {
	groq := "../../testdata/llmperf/leaderboard-groq-70b"
	for _, cand := range []string{"../../testdata/llmperf/leaderboard-anyscale-70b", "../../testdata/llmperf/leaderboard-bedrock-70b"} {
		out, err := run(t, "compare", groq, cand, "--ignore", "model", "--metric", "ttft,tpot,e2e,osl,goodput,error_rate", "--stat", "p50,p90,p99,mean", "--slo", "ttft<=400ms", "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Tables []struct {
				Metric string
				Rows   []struct {
					Stat  string
					Cells []struct {
						VsBase *struct{ Verdict string } `json:"vs_base"`
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, tb := range res.Tables {
			for _, row := range tb.Rows {
				lhs := row.Stat + "(" + tb.Metric + ")"
				if row.Stat == "value" {
					lhs = tb.Metric
				}
				verdict := row.Cells[1].VsBase.Verdict
				up, down := gateFails(t, cand, groq, lhs+" <= baseline"), gateFails(t, cand, groq, lhs+" >= baseline")
				want := "~"
				switch {
				case up && down:
					t.Fatalf("%s: both gates fail", lhs)
				case up:
					want = "higher"
				case down:
					want = "lower"
				}
				if verdict != want {
					t.Errorf("%s %s: compare says %q, gate says %q", filepath.Base(cand), lhs, verdict, want)
				}
				checked++
			}
		}
		if checked != 18 {
			t.Errorf("%d statistics checked, want 18", checked)
		}
	}
}

// gateFails runs one regression gate of run against baseline and reports
// whether it failed (exit 3).
func gateFails(t *testing.T, run_, baseline, gate string) bool {
	t.Helper()
	_, err := run(t, "gate", run_, "--baseline", baseline, "--gate", gate, "--slo", "ttft<=400ms")
	switch exitCode(err) {
	case 0:
		return false
	case exitGateFailed:
		return true
	}
	t.Fatalf("gate %s: %v", gate, err)
	return false
}

// TestREADMECompareIsReal keeps the README's pasted comparisons true:
// every line of its "== compare ==" and "== sweeps ==" blocks is a line of
// the golden output of the command it shows.
func TestREADMECompareIsReal(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for marker, gold := range map[string]string{
		"== compare ==\nbase groq": "testdata/compare-llmperf-providers.txt",
		"== sweeps ==":             "testdata/compare-inference-perf-sweeps.txt",
	} {
		g, err := os.ReadFile(gold)
		if err != nil {
			t.Fatal(err)
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(string(g), "\n") {
			lines[strings.TrimRight(l, " ")] = true
		}
		s := string(readme)
		i := strings.Index(s, marker)
		if i < 0 {
			t.Fatalf("README has no block starting %q", marker)
		}
		block := s[i : i+strings.Index(s[i:], "```")]
		n := 0
		for _, l := range strings.Split(block, "\n") {
			if l == "" || l == "…" {
				continue
			}
			n++
			if !lines[strings.TrimRight(l, " ")] {
				t.Errorf("README line not in %s: %q", gold, l)
			}
		}
		if n < 10 {
			t.Errorf("block %q: %d lines checked", marker, n)
		}
	}
}
