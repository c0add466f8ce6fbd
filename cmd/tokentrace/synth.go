package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/synth"
)

// synthFormats maps --format to the file written and its writer.
var synthFormats = map[string]struct {
	file  string
	write func(out, truth *os.File, m synth.Model) error
	// companion, when set, is a second file (name, writer) written first.
	companion      string
	writeCompanion func(out *os.File, m synth.Model) error
}{
	"genai-perf": {file: "profile_export.json", write: func(o, t *os.File, m synth.Model) error { return synth.WriteGenAIPerf(o, t, m) }},
	"aiperf":     {file: "profile_export.jsonl", write: func(o, t *os.File, m synth.Model) error { return synth.WriteAIPerf(o, t, m) }},
	"llmperf": {"individual_responses.json", func(o, t *os.File, m synth.Model) error { return synth.WriteLLMPerf(o, t, m) },
		"summary.json", func(o *os.File, m synth.Model) error { return synth.WriteLLMPerfSummary(o, m) }},
}

func newSynth() *cobra.Command {
	m := synth.Default()
	var out, format string
	c := &cobra.Command{
		Use:   "synth -o DIR",
		Short: "Write a synthetic run in a peer tool's format from a seeded latency model, with its true per-request values",
		Long: `Write a synthetic benchmark run from a seeded model: lognormal TTFT, gamma
decode gaps with occasional exponential stalls, lognormal output lengths,
closed-loop concurrency or Poisson arrivals, a failure rate. DIR gets the
tool's file and truth.csv (per request: start, status, N, TTFT, TPOT, E2E in
ns under the canonical convention). The same flags and seed give the same
bytes.`,
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
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			if f.companion != "" {
				err := formats.WriteFileAtomic(filepath.Join(out, f.companion), func(o *os.File) error { return f.writeCompanion(o, m) })
				if err != nil {
					return err
				}
			}
			// The run is written first; truth.csv goes through a temporary
			// file renamed once the run is in place.
			var truthTmp string
			err := formats.WriteFileAtomic(filepath.Join(out, f.file), func(o *os.File) error {
				t, err := os.CreateTemp(out, ".truth.csv.tmp-*")
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
			if err := os.Rename(truthTmp, filepath.Join(out, "truth.csv")); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s\n", filepath.Join(out, f.file), filepath.Join(out, "truth.csv"))
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVarP(&out, "out", "o", "", "output directory")
	fl.StringVar(&format, "format", "genai-perf", "file format: "+strings.Join(synthFormatNames(), ", "))
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

func synthFormatNames() []string {
	var names []string
	for n := range synthFormats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
