package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/compare"
	"github.com/tokentrace/tokentrace/analyze/render"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/plots"
)

// Exit status of `tokentrace gate` when every input was read but a gate
// failed (1 is an error, 2 a usage error, as for every command).
const exitGateFailed = 3

// exitError carries a command's exit status to main.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// gateFlags are gate's own flags.
type gateFlags struct {
	gates      []string
	spec       string
	preset     string
	baseline   []string
	alpha      float64
	fewFail    bool
	truncOK    bool
	junit      string
	jsonOut    string
	listPreset bool
	match      string
	ignore     string
}

func newGate() *cobra.Command {
	var in inputFlags
	var rf reportFlags
	var gf gateFlags
	c := &cobra.Command{
		Use:   "gate INPUT_OR_DIR... [--slo SLO] [--gate GATE]... [--spec FILE | --preset NAME] [--baseline PATH]",
		Short: "Check runs against an SLO and gates (P99s, goodput, capacity, regressions vs a baseline); exit 3 if one fails",
		Long: `gate imports the runs (trace files or tables written by analyze/import) and checks each gate
on each run (or on the pooled runs with --pool):

  --slo   per-request constraints defining a good request, e.g. 'ttft<=500ms, tpot<=15ms, e2e<=2s'
          (also max_itl and fluidity(TTFT_DEADLINE,TBT_DEADLINE)>=0.9; vLLM's 'ttft:500 tpot:15' is read as ms)
  --gate  aggregate gates, e.g. 'p99(ttft)<=800ms', 'p99(e2e | osl<300)<=3s', 'goodput>=0.99',
          'goodput_rate>=2.5/s', 'throughput>=1000tok/s', 'error_rate<=1%', 'capacity>=4/s', 'data_warnings<=0',
          and regressions against --baseline: 'p99(ttft) <= 1.10 * baseline', 'goodput >= baseline - 0.01'
  --spec  a YAML/JSON file with slo:, gates:, alpha:, fail_on_few_samples:, convention:
  --preset a built-in spec: ` + strings.Join(slo.Presets(), ", ") + `

A regression gate fails only when the violation is significant at --alpha (order-statistic bounds
for percentiles, Welch's t for means, Agresti–Caffo for goodput and error rate): the tests compare
uses, so compare's verdict on "p99(ttft)" is the gate's. A baseline holding runs of several
configurations is matched as compare matches (model, concurrency, rate, isl, osl, streaming;
--match, --ignore): each run against the baseline runs of its configuration.

A run whose input file was cut short fails an extra "input complete" check unless
--allow-truncated; a run whose tool says its results cover part of the run, or that measured no
request (AIPerf's is_complete false: analyze/TRAPS.md), fails a "results complete" check. A gate whose value is undefined on a run (TPOT of a non-streaming run, a
statistic a summary-only run does not report) fails, saying why.

Exit status: 0 every gate holds; 3 a gate failed; 1 an error (unreadable input; an SLO
constraint a run cannot measure, e.g. tpot on a non-streaming run); 2 a usage error (bad flag,
SLO or gate syntax).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if gf.listPreset {
				return nil
			}
			return minArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if gf.listPreset {
				for _, p := range slo.Presets() {
					fmt.Fprintln(cmd.OutOrStdout(), p)
				}
				return nil
			}
			spec, err := gf.buildSpec(cmd, &rf)
			if err != nil {
				return err
			}
			switch rf.format {
			case "text", "json", "markdown", "md", "junit":
			default:
				return badChoice("--format", rf.format, flagValues("gate", "format"))
			}
			format := rf.format
			rf.format = "text" // reportFlags.options knows only the report formats
			opt, err := rf.options()
			rf.format = format
			if err != nil {
				return err
			}
			an, err := rf.analyzer()
			if err != nil {
				return err
			}
			an.SetFluidity(spec.Deadlines())
			if err := importInputs(args, in, true, an); err != nil {
				return err
			}
			var base *analyze.Analyzer
			if len(gf.baseline) > 0 {
				if base, err = rf.analyzer(); err != nil {
					return err
				}
				base.SetFluidity(spec.Deadlines())
				if err := importInputs(gf.baseline, in, true, base); err != nil {
					return fmt.Errorf("--baseline: %w", err)
				}
			} else if spec.NeedsBaseline() {
				return usageError{fmt.Errorf("a regression gate compares with a baseline: give --baseline PATH")}
			}
			rep, err := slo.Check(an, spec, opt, base)
			if err != nil {
				return err
			}
			rep.Verbose = rf.verbose
			if gf.junit != "" {
				if err := formats.WriteFileAtomic(gf.junit, func(f *os.File) error { return render.WriteGateJUnit(f, rep) }); err != nil {
					return err
				}
			}
			if gf.jsonOut != "" {
				if err := formats.WriteFileAtomic(gf.jsonOut, func(f *os.File) error { return render.WriteGateJSON(f, rep) }); err != nil {
					return err
				}
			}
			if err := writeGate(cmd.OutOrStdout(), format, rep); err != nil {
				return err
			}
			if !rep.Pass {
				pass, total := 0, len(rep.Results)
				for _, r := range rep.Results {
					if r.Status == "pass" {
						pass++
					}
				}
				return exitError{exitGateFailed, fmt.Sprintf("gate failed: %d of %d gates failed", total-pass, total)}
			}
			return nil
		},
	}
	in.register(c)
	rf.register(c)
	rf.fx.registerSelect(c) // forensics.go: gate a time range or the steady state
	c.Flags().Lookup("format").Usage = "output format: text, markdown (for a CI job summary), json or junit"
	c.Flags().StringArrayVar(&gf.gates, "gate", nil, "an aggregate gate (repeatable; or several separated by commas)")
	c.Flags().StringVar(&gf.spec, "spec", "", "a gate file (YAML or JSON): slo, gates, alpha, fail_on_few_samples, convention")
	c.Flags().StringVar(&gf.preset, "preset", "", "a built-in gate file (see --list-presets)")
	c.Flags().BoolVar(&gf.listPreset, "list-presets", false, "list the built-in gate files and exit")
	c.Flags().StringArrayVar(&gf.baseline, "baseline", nil, "the baseline run(s) regression gates compare with (pooled when several)")
	c.Flags().Float64Var(&gf.alpha, "alpha", 0, "significance level of regression gates (default 0.05)")
	c.Flags().BoolVar(&gf.fewFail, "fail-on-few-samples", false, "fail a percentile gate whose percentile rests on too few samples to bound (default: warn)")
	c.Flags().BoolVar(&gf.truncOK, "allow-truncated", false, "let a run whose input file was cut short pass its \"input complete\" check (default: it fails)")
	c.Flags().StringVar(&gf.junit, "junit", "", "also write the results as JUnit XML to this file")
	c.Flags().StringVar(&gf.jsonOut, "json", "", "also write the results as JSON to this file")
	c.Flags().StringVar(&gf.match, "match", "", "configuration keys runs are matched to a baseline of several configurations by (as compare --match)")
	c.Flags().StringVar(&gf.ignore, "ignore", "", "configuration keys not to match the baseline by (as compare --ignore)")
	return c
}

// buildSpec assembles the spec from --spec/--preset, --slo and --gate,
// all parsed and validated before any data is read.
func (gf *gateFlags) buildSpec(cmd *cobra.Command, rf *reportFlags) (slo.GateSpec, error) {
	var spec slo.GateSpec
	if gf.spec != "" && gf.preset != "" {
		return spec, usageError{fmt.Errorf("give --spec or --preset, not both")}
	}
	fileConv := ""
	switch {
	case gf.spec != "":
		s, conv, err := slo.ReadGateFile(gf.spec)
		if err != nil {
			return spec, usageError{err}
		}
		spec, fileConv = s, conv
	case gf.preset != "":
		b, err := slo.PresetText(gf.preset)
		if err != nil {
			return spec, usageError{err}
		}
		s, conv, err := slo.ParseGateFile("preset "+gf.preset, b)
		if err != nil {
			return spec, err
		}
		spec, fileConv = s, conv
	}
	if fileConv != "" && !cmd.Flags().Changed("convention") {
		rf.convention = fileConv
	}
	if rf.slo != "" {
		if len(spec.SLO.Constraints) > 0 {
			return spec, usageError{fmt.Errorf("--slo given and the gate file has an slo: give one")}
		}
		s, err := slo.ParseSLO(rf.slo)
		if err != nil {
			return spec, usageError{err}
		}
		spec.SLO = s
		rf.slo = ""
	}
	for _, g := range gf.gates {
		if strings.TrimSpace(g) == "" {
			return spec, usageError{fmt.Errorf("--gate is empty (an unset CI variable?)")}
		}
		gs, err := slo.ParseGates(g)
		if err != nil {
			return spec, usageError{err}
		}
		spec.Gates = append(spec.Gates, gs...)
	}
	if cmd.Flags().Changed("alpha") {
		if gf.alpha <= 0 || gf.alpha >= 0.5 {
			return spec, usageError{fmt.Errorf("--alpha %v: want a level in (0, 0.5)", gf.alpha)}
		}
		spec.Alpha = gf.alpha
	}
	if gf.fewFail {
		spec.StrictSamples = true
	}
	if gf.truncOK {
		spec.AllowTruncated = true
	}
	if gf.match != "" || gf.ignore != "" {
		keys, err := compare.ParseKeys(gf.match, gf.ignore)
		if err != nil {
			return spec, usageError{err}
		}
		spec.MatchKeys = keys
	}
	if err := spec.Validate(); err != nil {
		return spec, usageError{err}
	}
	return spec, nil
}

func writeGate(w io.Writer, format string, rep *slo.GateReport) error {
	switch format {
	case "json":
		return render.WriteGateJSON(w, rep)
	case "markdown", "md":
		return render.WriteGateMarkdown(w, rep)
	case "junit":
		return render.WriteGateJUnit(w, rep)
	}
	return render.WriteGateText(w, rep)
}

func newCapacity() *cobra.Command {
	var in inputFlags
	var rf reportFlags
	var target float64
	var gpus int
	var plotPath string
	c := &cobra.Command{
		Use:   "capacity INPUT_OR_DIR... --slo SLO",
		Short: "Goodput capacity of a rate sweep: the highest request rate at which a target share of requests meet the SLO",
		Long: `capacity treats its runs as one sweep over request rates (each run's configured rate, else
its measured request throughput), computes each run's SLO attainment (the share of its requests
that met every constraint), and finds the highest rate at which at least --target of requests are
good, interpolated linearly between the measured rates around the crossing (DistServe, OSDI 2024).`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rf.slo == "" {
				return usageError{fmt.Errorf("capacity needs --slo")}
			}
			if !(target > 0 && target <= 1) { // NaN fails too
				return usageError{fmt.Errorf("--target %v: want a fraction in (0, 1]", target)}
			}
			if gpus < 0 {
				return usageError{fmt.Errorf("--gpus %d: want a positive count", gpus)}
			}
			if plotPath != "" && plotFormat(plotPath) == "" {
				return usageError{fmt.Errorf("--plot %q: want a .svg, .png or .pdf file", plotPath)}
			}
			opt, err := rf.options()
			if err != nil {
				return err
			}
			an, err := rf.analyzer()
			if err != nil {
				return err
			}
			an.SetFluidity(opt.SLO.Deadlines())
			if err := importInputs(args, in, true, an); err != nil {
				return err
			}
			opt.Pool = false
			rep, err := an.Report(opt)
			if err != nil {
				return err
			}
			capa := slo.ComputeCapacity(slo.SweepPoints(rep), target)
			if plotPath != "" {
				if err := writeCapacityPlot(plotPath, &capa); err != nil {
					return err
				}
			}
			return render.WriteCapacity(cmd.OutOrStdout(), rf.format, &capa, gpus)
		},
	}
	in.register(c)
	rf.register(c)
	c.Flags().Float64Var(&target, "target", slo.DefaultCapacityTarget, "attainment target: the share of requests that must meet the SLO")
	c.Flags().IntVar(&gpus, "gpus", 0, "divide the capacity by this many GPUs (DistServe's per-GPU goodput)")
	c.Flags().StringVar(&plotPath, "plot", "", "also draw the attainment curve with the target and the capacity to this file (.svg, .png or .pdf)")
	return c
}

// plotFormat is the image format a file name asks for ("" if none).
func plotFormat(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return "svg"
	case ".png":
		return "png"
	case ".pdf":
		return "pdf"
	}
	return ""
}

// writeCapacityPlot draws the sweep's attainment against rate, the
// target and the capacity (plots.GoodputCapacity), atomically.
func writeCapacityPlot(path string, c *slo.Capacity) error {
	var rates, fracs []float64
	for _, p := range c.Points {
		rates = append(rates, float64(p.RateRPS))
		fracs = append(fracs, float64(p.Attainment))
	}
	fig, err := plots.GoodputCapacity(rates, fracs, float64(c.Target), float64(c.RateRPS))
	if err != nil {
		return err
	}
	return formats.WriteFileAtomic(path, func(f *os.File) error { return fig.Render(f, plotFormat(path)) })
}
