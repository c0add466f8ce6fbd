package main

import (
	"encoding/json"
	"strings"
	"testing"
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
