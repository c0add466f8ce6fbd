package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/compare"
	"github.com/tokentrace/tokentrace/analyze/render"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/analyze/sweep"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/plots"
)

// compareFlags are compare's own flags.
type compareFlags struct {
	labels      []string
	match       string
	ignore      string
	stats       string
	metrics     string
	alpha       float64
	gpus        int
	costPerHour float64
	target      float64
	plotDir     string
	plotFormat  string
}

func newCompare() *cobra.Command {
	var in inputFlags
	var rf reportFlags
	var cf compareFlags
	c := &cobra.Command{
		Use:   "compare BASE CANDIDATE [CANDIDATE...]",
		Short: "Compare runs side by side with significance, like benchstat: matched by configuration, sweeps as curves, Pareto, knee, capacity and cost",
		Long: `compare reads each argument — a trace file, a directory of runs, or tables written by
analyze/import — as one side (--label names them in order; default: the argument's base name).
The first side is the base. Runs are matched across the sides by their configuration: model,
concurrency, rate, isl, osl, streaming (--match keeps only the keys given, --ignore drops
some; e.g. --ignore model when providers name one model differently). Runs of one side with
the same configuration are repetitions, pooled, with their spread shown. Every configuration
that does not pair is listed.

For each metric (TTFT, TTFO where there is reasoning, TPOT, ITL, E2E, OSL, output throughput,
request rate, goodput with --slo, error rate) and statistic (--stat, default p50,p99) it prints
the values side by side, the change against the base and one-sided bounds of the difference
from the test gate --baseline uses (order-statistic bounds, or the seeded bootstrap for small
samples, for percentiles; Welch's t for means; Agresti–Caffo for proportions), "~" when the
difference is not significant at --alpha, "?" when untested (summary-only runs, single-run
rates), and a geometric-mean row per metric.

Sides whose runs span several load levels are sweeps: their curves (latency against achieved
request rate and throughput), Pareto frontier (per-user tok/s against total output tok/s, per
GPU with --gpus), knee (Kneedle; none below 4 levels), capacity under --slo and cost
(--cost-per-hour, per GPU-hour with --gpus) are printed per side, and the capacities compared.
--plot DIR draws the CCDFs overlaid per side and the sweep curves.`,
		Args: minArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch rf.format {
			case "text", "json", "markdown", "md", "csv":
			default:
				return usageError{fmt.Errorf("--format %q: want text, markdown, json or csv", rf.format)}
			}
			format := rf.format
			rf.format = "text"
			opt, err := rf.options()
			rf.format = format
			if err != nil {
				return err
			}
			copt, sopt, err := cf.options(cmd, opt)
			if err != nil {
				return err
			}
			if len(cf.labels) > 0 && len(cf.labels) != len(args) {
				return usageError{fmt.Errorf("%d --label values for %d arguments: give one per argument (side)", len(cf.labels), len(args))}
			}
			if cf.plotDir != "" && !validFormat(cf.plotFormat) {
				return usageError{fmt.Errorf("--plot-format %q: want svg, png or pdf", cf.plotFormat)}
			}
			labels := sideLabels(args, cf.labels)
			var sides []compare.Side
			for i, arg := range args {
				an, err := rf.analyzer()
				if err != nil {
					return err
				}
				if err := importInputs([]string{arg}, in, true, an); err != nil {
					return fmt.Errorf("%s: %w", labels[i], err)
				}
				_, data, err := an.Subjects(opt, false)
				if err != nil {
					return fmt.Errorf("%s: %w", labels[i], err)
				}
				sides = append(sides, compare.Side{Label: labels[i], Runs: data})
			}
			res, err := compare.Compare(sides, copt)
			if err != nil {
				return err
			}
			out := &render.Comparison{Result: res, Sweeps: sweep.Build(sides, sopt), Verbose: rf.verbose}
			if err := writeComparison(cmd.OutOrStdout(), format, out); err != nil {
				return err
			}
			if cf.plotDir != "" {
				if err := writeComparePlots(cmd, cf.plotDir, cf.plotFormat, sides, out); err != nil {
					return err
				}
			}
			if len(res.Matching.Groups) == 0 {
				return fmt.Errorf("no configuration of the base side matched another side: nothing compared (%s)", strings.Join(render.MatchHint(res), "; "))
			}
			return nil
		},
	}
	in.cmd = c
	c.Flags().StringVar(&in.from, "from", "", "force the input format of every argument")
	c.Flags().StringVar(&in.maxValue, "max-value-size", ingest.FormatSize(ingest.DefaultMaxValueBytes), "largest single value an input may hold (see import --help)")
	c.Flags().StringArrayVar(&cf.labels, "label", nil, "a name for each argument (side), in order (default: the argument's base name)")
	c.Flags().StringVar(&rf.convention, "convention", "tokentrace", "metric convention every side is computed under: tokentrace, tool, or a profile")
	c.Flags().StringVar(&rf.tokenizer, "tokenizer", "", "tokenizer for re-tokenized output counts (see report --tokenizer)")
	c.Flags().StringVar(&rf.slo, "slo", "", "goodput SLO (see report --slo): adds goodput, each load level's attainment and the sweeps' capacity")
	c.Flags().BoolVar(&rf.noCorrections, "no-corrections", false, noCorrectionsUsage)
	c.Flags().StringVar(&rf.format, "format", "text", "output format: text, markdown (for a pull request comment), json or csv")
	c.Flags().BoolVar(&rf.verbose, "verbose", false, verboseUsage)
	c.Flags().StringVar(&cf.match, "match", "", "configuration keys runs are matched by (default all: "+strings.Join(compare.Keys, ",")+")")
	c.Flags().StringVar(&cf.ignore, "ignore", "", "configuration keys not to match by, e.g. model")
	c.Flags().StringVar(&cf.stats, "stat", "p50,p99", "statistics of per-request metrics: pNN, median, mean, min, max")
	c.Flags().StringVar(&cf.metrics, "metric", "", "metrics to compare (default ttft,ttfo,tpot,itl,e2e,osl,throughput,request_rate,goodput,error_rate; goodput needs --slo)")
	c.Flags().Float64Var(&cf.alpha, "alpha", compare.DefaultAlpha, "one-sided significance level of each bound and verdict (gate --baseline's --alpha)")
	c.Flags().IntVar(&cf.gpus, "gpus", 0, "GPUs serving each side: sweeps show output tok/s per GPU, capacity per GPU, and cost uses --cost-per-hour per GPU-hour")
	c.Flags().Float64Var(&cf.costPerHour, "cost-per-hour", 0, "price in $ of one GPU-hour with --gpus (else of the whole deployment per hour): sweeps show $ per million output and total tokens")
	c.Flags().Float64Var(&cf.target, "target", slo.DefaultCapacityTarget, "capacity's attainment target: the share of requests that must meet --slo")
	c.Flags().StringVar(&cf.plotDir, "plot", "", "also draw the CCDFs overlaid per side and the sweep curves into this directory")
	c.Flags().StringVar(&cf.plotFormat, "plot-format", "svg", "image format of --plot: svg, png or pdf")
	return c
}

// options validates compare's flags into the comparison's and sweeps'
// options.
func (cf *compareFlags) options(cmd *cobra.Command, opt analyze.Options) (compare.Options, sweep.Options, error) {
	var copt compare.Options
	var sopt sweep.Options
	keys, err := compare.ParseKeys(cf.match, cf.ignore)
	if err != nil {
		return copt, sopt, usageError{err}
	}
	sts, err := compare.ParseStats(cf.stats)
	if err != nil {
		return copt, sopt, usageError{err}
	}
	if !(cf.alpha > 0 && cf.alpha < 0.5) {
		return copt, sopt, usageError{fmt.Errorf("--alpha %v: want a level in (0, 0.5)", cf.alpha)}
	}
	if cf.gpus < 0 {
		return copt, sopt, usageError{fmt.Errorf("--gpus %d: want a positive count", cf.gpus)}
	}
	if cf.costPerHour < 0 || math.IsNaN(cf.costPerHour) || math.IsInf(cf.costPerHour, 0) {
		return copt, sopt, usageError{fmt.Errorf("--cost-per-hour %v: want a price ≥ 0", cf.costPerHour)}
	}
	if !(cf.target > 0 && cf.target <= 1) {
		return copt, sopt, usageError{fmt.Errorf("--target %v: want a fraction in (0, 1]", cf.target)}
	}
	var metrics []*analyze.Metric
	if cf.metrics == "" {
		for _, x := range compare.DefaultMetrics {
			if !x.NeedsSLO || len(opt.SLO.Constraints) > 0 {
				metrics = append(metrics, x)
			}
		}
	} else {
		for _, name := range strings.Split(cf.metrics, ",") {
			name = strings.TrimSpace(name)
			x := analyze.LookupMetric(name)
			if x == nil || x.Parametrised || x == analyze.DataWarnings || !(x.Report || x.Scope == analyze.RunLevel) {
				return copt, sopt, usageError{fmt.Errorf("--metric %q: unknown or not comparable (want e.g. ttft, tpot, itl, e2e, osl, isl, ntpot, throughput, request_rate, goodput, goodput_rate, error_rate)", name)}
			}
			if x.NeedsSLO && len(opt.SLO.Constraints) == 0 {
				return copt, sopt, usageError{fmt.Errorf("--metric %s needs --slo (the SLO defines a good request)", name)}
			}
			metrics = append(metrics, x)
		}
	}
	copt = compare.Options{Keys: keys, Metrics: metrics, Stats: sts, Alpha: cf.alpha, Tools: profiles}
	sopt = sweep.Options{Keys: keys, SLO: opt.SLO, Target: cf.target, GPUs: cf.gpus, CostPerHour: cf.costPerHour, Tools: profiles}
	return copt, sopt, nil
}

// sideLabels are the sides' names: the --label values, else each
// argument's base name, made unique with "-2", "-3", ….
func sideLabels(args, labels []string) []string {
	out := make([]string, len(args))
	used := map[string]int{}
	for i, a := range args {
		l := ""
		if len(labels) > 0 {
			l = labels[i]
		} else {
			l = filepath.Base(filepath.Clean(a))
			if a == ingest.StdinPath {
				l = "stdin"
			}
		}
		used[l]++
		if n := used[l]; n > 1 {
			l = fmt.Sprintf("%s-%d", l, n)
		}
		out[i] = l
	}
	return out
}

func writeComparison(w io.Writer, format string, c *render.Comparison) error {
	switch format {
	case "json":
		return render.WriteCompareJSON(w, c)
	case "markdown", "md":
		return render.WriteCompareMarkdown(w, c)
	case "csv":
		return render.WriteCompareCSV(w, c)
	}
	return render.WriteCompareText(w, c)
}

// writeComparePlots draws the comparison's figures into dir
// (plots.Compare) and says on stderr what it wrote and skipped.
func writeComparePlots(cmd *cobra.Command, dir, format string, sides []compare.Side, c *render.Comparison) error {
	set, err := plots.Compare(c.Result, sides, c.Sweeps)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	paths, err := plots.Write(dir, set, format)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "tokentrace: wrote %d plot(s) to %s\n", len(paths), formats.SafeText(dir))
	for _, s := range set.Skipped {
		fmt.Fprintf(cmd.ErrOrStderr(), "tokentrace: skipped %s\n", formats.SafeLines(s.String()))
	}
	return nil
}
