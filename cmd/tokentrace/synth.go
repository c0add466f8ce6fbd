package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/synth"
)

type synthWriter func(out, truth io.Writer, m synth.Model) error

// synthFormat is one --format: the file written (its fixed name, or name
// from the model), its writer, and optionally a companion file written
// first.
type synthFormat struct {
	file           string
	name           func(m synth.Model) string
	write          synthWriter
	companion      string
	writeCompanion func(out io.Writer, m synth.Model) error
}

func (f synthFormat) fileName(m synth.Model) string {
	if f.name != nil {
		return f.name(m)
	}
	return f.file
}

// synthFormats maps --format to the file written and its writer.
var synthFormats = map[string]synthFormat{
	"genai-perf":        {file: "profile_export.json", write: synth.WriteGenAIPerf},
	"genai-perf-varied": {file: "profile_export.json", write: synth.WriteGenAIPerfVaried},
	"aiperf":            {file: "profile_export.jsonl", write: synth.WriteAIPerf},
	"llmperf": {file: "individual_responses.json", write: synth.WriteLLMPerf,
		companion: "summary.json", writeCompanion: synth.WriteLLMPerfSummary},
	"vllm":           {name: synth.VLLMFileName, write: synth.WriteVLLM},
	"sglang":         {name: synth.SGLangFileName, write: synth.WriteSGLang},
	"guidellm":       {file: "benchmarks.json", write: synth.WriteGuideLLM},
	"inference-perf": {file: "per_request_lifecycle_metrics.json", write: synth.WriteInferencePerf},
}

func newSynth() *cobra.Command {
	m := synth.Default()
	var out, format string
	var runs int
	c := &cobra.Command{
		Use:   "synth -o DIR",
		Short: "Write a synthetic run in a peer tool's format from a seeded latency model, with its true per-request values",
		Long: `Write a synthetic benchmark run from a seeded model: lognormal TTFT, gamma
decode gaps with occasional exponential stalls, lognormal output lengths,
closed-loop concurrency or Poisson arrivals, a failure rate. DIR gets the
tool's file and truth.csv (per request: start, status, N, TTFT, TPOT, E2E in
ns under the canonical convention). The same flags and seed give the same
bytes, and every format the same requests.

Formats: genai-perf (perf_analyzer's raw export, vLLM chat chunks that
differ only in their token), genai-perf-varied (the same requests with
chunks as real servers vary them: ids, created, usage placement,
reasoning, tool calls, escaped text), aiperf (profile_export.jsonl),
llmperf (individual_responses.json and summary.json), vllm (bench serve
--save-result --save-detailed), sglang (bench_serving --output-details),
guidellm (benchmarks.json, v0.4+ layout), inference-perf
(per_request_lifecycle_metrics.json, v0.6+ layout).

--runs K writes K runs, DIR/run_0000 … (seeds --seed, --seed+1, …): a
sweep of many small runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("-o DIR is required")}
			}
			f, ok := synthFormats[format]
			if !ok {
				return usageError{fmt.Errorf("--format %q: want one of %s", format, strings.Join(synthFormatNames(), ", "))}
			}
			if err := m.Validate(); err != nil {
				return usageError{err}
			}
			if runs < 0 {
				return usageError{fmt.Errorf("--runs %d < 0", runs)}
			}
			if runs == 0 {
				return writeSynthRun(cmd, f, out, m)
			}
			// A sweep of runs: DIR/run_0000 … with seeds seed, seed+1, …
			for i := 0; i < runs; i++ {
				mi := m
				mi.Seed = m.Seed + uint64(i)
				if err := writeSynthRun(cmd, f, filepath.Join(out, fmt.Sprintf("run_%04d", i)), mi); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVarP(&out, "out", "o", "", "output directory")
	fl.StringVar(&format, "format", "genai-perf", "file format: "+strings.Join(synthFormatNames(), ", "))
	fl.IntVar(&runs, "runs", 0, "write this many runs, DIR/run_0000 …, with seeds --seed, --seed+1, … (0: one run in DIR)")
	fl.Uint64Var(&m.Seed, "seed", m.Seed, "random seed")
	fl.IntVar(&m.Requests, "requests", m.Requests, "number of requests")
	fl.IntVar(&m.Concurrency, "concurrency", m.Concurrency, "closed-loop concurrency (used when --rate is 0)")
	fl.Float64Var(&m.RateRPS, "rate", m.RateRPS, "Poisson request rate in requests/s (0: closed loop)")
	fl.DurationVar(&m.TTFTMedian, "ttft-median", m.TTFTMedian, "median TTFT (lognormal)")
	fl.Float64Var(&m.TTFTSigma, "ttft-sigma", m.TTFTSigma, "σ of ln TTFT")
	fl.DurationVar(&m.GapMean, "tpot-mean", m.GapMean, "mean decode gap between tokens (gamma), stalls excluded")
	fl.Float64Var(&m.GapShape, "gap-shape", m.GapShape, "gamma shape of the decode gaps (CV = 1/√shape)")
	fl.Float64Var(&m.StallProb, "stall-prob", m.StallProb, "probability that a decode gap has a stall added")
	fl.DurationVar(&m.StallMean, "stall-mean", m.StallMean, "mean stall (exponential)")
	fl.Float64Var(&m.OSLMedian, "osl-median", m.OSLMedian, "median output tokens (lognormal)")
	fl.Float64Var(&m.OSLSigma, "osl-sigma", m.OSLSigma, "σ of ln output tokens")
	fl.IntVar(&m.OSLMin, "osl-min", m.OSLMin, "minimum output tokens")
	fl.IntVar(&m.OSLMax, "osl-max", m.OSLMax, "maximum output tokens")
	fl.IntVar(&m.ISL, "isl", m.ISL, "prompt tokens")
	fl.Float64Var(&m.FailureRate, "failure-rate", m.FailureRate, "probability that a request fails")
	fl.StringVar(&m.ModelName, "model", m.ModelName, "model name written in the requests")
	return c
}

// writeSynthRun writes one run of format f into dir: the companion file,
// the run, then truth.csv (through a temporary file renamed once the run is
// in place).
func writeSynthRun(cmd *cobra.Command, f synthFormat, dir string, m synth.Model) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if f.companion != "" {
		err := formats.WriteFileAtomic(filepath.Join(dir, f.companion), func(o *os.File) error { return f.writeCompanion(o, m) })
		if err != nil {
			return err
		}
	}
	file := filepath.Join(dir, f.fileName(m))
	var truthTmp string
	err := formats.WriteFileAtomic(file, func(o *os.File) error {
		t, err := os.CreateTemp(dir, ".truth.csv.tmp-*")
		if err != nil {
			return err
		}
		truthTmp = t.Name()
		if err := f.write(o, t, m); err != nil {
			t.Close()
			return err
		}
		return t.Close()
	})
	if err != nil {
		if truthTmp != "" {
			os.Remove(truthTmp)
		}
		return err
	}
	if err := os.Chmod(truthTmp, 0o644); err != nil {
		return err
	}
	if err := os.Rename(truthTmp, filepath.Join(dir, "truth.csv")); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s\n", file, filepath.Join(dir, "truth.csv"))
	return nil
}

func synthFormatNames() []string {
	var names []string
	for n := range synthFormats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
