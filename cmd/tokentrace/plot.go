package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/plots"
)

func newPlotCmd() *cobra.Command {
	var in inputFlags
	var rf reportFlags
	var out, format string
	var kinds []string
	var html bool
	c := &cobra.Command{
		Use:   "plot INPUT_OR_DIR... -o DIR",
		Short: "Draw latency tails (CCDF), E2E vs output length, timelines, ITL by position, goodput curves and time windows",
		Long: `Draws, from the same per-request data the report uses:
  ccdf          TTFT, TPOT, ITL and E2E survival functions (log scale), runs overlaid, P50/P90/P99 marked
  e2e-osl       per run: E2E against output length, per-bucket P50/P90/P99, the fit E2E ≈ a + b·N
  timeline      per run: TTFT and E2E on the wall clock (--tz), each window's P99, failures at their
                time with their status, requests in flight (unrecorded ends drawn apart)
  itl-position  per run: P50/P99 of the token gap against its position in the output
  goodput       per SLO constraint (needs --slo): goodput fraction as that bound moves, runs overlaid
  windows       per run: per time window (--window, else 4 to 40, about ten requests each) latency percentiles,
                requests completed and failed, output tok/s, requests in flight
Plots a run's data cannot support are skipped and listed with the reason.`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("plot needs -o DIR")}
			}
			ks, err := plots.ParseKinds(kinds)
			if err != nil {
				return usageError{kindSuggestion(kinds, err)}
			}
			if !validFormat(format) {
				return badChoice("--format", format, plots.Formats)
			}
			rf.format = "text"
			convs := strings.Split(rf.convention, ",")
			rf.convention = convs[0]
			opt, err := rf.options()
			if err != nil {
				return err
			}
			an, err := plotAnalyzer(&rf, convs)
			if err != nil {
				return err
			}
			if err := importInputs(args, in, true, an); err != nil {
				return err
			}
			// one report per convention; several are overlaid, labelled
			// "run · convention"
			var inputs []plots.Input
			for _, name := range convs {
				if name == "tool" {
					opt.Convention = toolConvention
				} else {
					c, err := lookupConvention(name)
					if err != nil {
						return err
					}
					opt.Convention = func(*formats.Run) convention.Convention { return c }
				}
				rep, err := an.Report(opt)
				if err != nil {
					return err
				}
				ins, err := plotInputs(rep, an, rf.loc, opt.TimeoutNs)
				if err != nil {
					return err
				}
				if len(convs) > 1 {
					for i := range ins {
						ins[i].Label = ins[i].Report.RunID + " · " + ins[i].Report.Convention.Name
					}
				}
				inputs = append(inputs, ins...)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			return writePlots(cmd.OutOrStdout(), cmd.OutOrStdout(), out, out, format, ks, opt.SLO, inputs, html)
		},
	}
	in.register(c)
	c.Flags().StringVar(&rf.convention, "convention", "tokentrace", "metric convention: tokentrace, tool (each run's own tool's), or a profile ("+strings.Join(profileNames(), ", ")+"); several, comma-separated, are overlaid")
	c.Flags().StringVar(&rf.tokenizer, "tokenizer", "", "tokenizer for re-tokenized output counts (see report --tokenizer)")
	c.Flags().BoolVar(&rf.noCorrections, "no-corrections", false, noCorrectionsUsage)
	c.Flags().StringVar(&rf.memoryBudget, "memory-budget", "", memoryBudgetUsage)
	c.Flags().StringVar(&rf.slo, "slo", "", "goodput SLO for the goodput curves, e.g. 'ttft<=500ms,e2e<=2s'")
	c.Flags().StringVar(&rf.oslEdges, "osl-buckets", "", "output-length bucket edges for e2e-osl, e.g. 0,64,128,256,inf")
	c.Flags().StringVar(&rf.percentiles, "percentiles", "", percentilesUsage+"; report.html's tables show them")
	c.Flags().StringVarP(&out, "out", "o", "", "output directory for the plot files")
	c.Flags().StringVar(&format, "format", "svg", "plot file format: "+strings.Join(plots.Formats, ", "))
	c.Flags().StringArrayVar(&kinds, "kind", nil, "plot kinds to draw (repeat or comma-separate): "+kindNames()+" (default: all)")
	c.Flags().BoolVar(&html, "html", false, "also write DIR/report.html (report tables and the plots, self-contained)")
	rf.fx.register(c) // forensics.go: --since, --until, --window, --tz, …
	return c
}

// kindSuggestion adds the closest plot kind to ParseKinds' error.
func kindSuggestion(kinds []string, err error) error {
	for _, item := range kinds {
		for _, k := range strings.Split(item, ",") {
			if k = strings.TrimSpace(k); !slices.Contains(kindList(), k) {
				return fmt.Errorf("%w%s", err, convention.DidYouMean(k, kindList()))
			}
		}
	}
	return err
}

func kindNames() string {
	var s []string
	for _, k := range plots.Kinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

func validFormat(f string) bool {
	for _, x := range plots.Formats {
		if f == x {
			return true
		}
	}
	return false
}

// plotAnalyzer is the Analyzer for the conventions named (profiles, or
// "tool" for each run's own), with the tokenizer flags applied.
func plotAnalyzer(rf *reportFlags, names []string) (*analyze.Analyzer, error) {
	var convs []convention.Convention
	for _, name := range names {
		if name == "tool" {
			convs = profiles.Profiles()
			break
		}
		c, err := lookupConvention(name)
		if err != nil {
			return nil, err
		}
		convs = append(convs, c)
	}
	a := analyze.NewAnalyzer(convs...)
	if err := rf.prepare(a); err != nil {
		return nil, err
	}
	return a, nil
}

// plotInputs pairs each run's report with the Analyzer's per-request data
// under the report's convention (none for summary-only runs).
func plotInputs(rep *analyze.Report, an *analyze.Analyzer, loc *time.Location, timeoutNs int64) ([]plots.Input, error) {
	var inputs []plots.Input
	for _, rr := range rep.Runs {
		in := plots.Input{Report: rr, Location: loc, TimeoutNs: timeoutNs}
		if rr.Requests.Total > 0 {
			d, err := an.RunData(rr.RunID, rr.Convention.Name)
			if err != nil {
				return nil, err
			}
			in.Data = d
		}
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// writePlots draws inputs into plotDir and, with html, writes
// htmlDir/report.html; it prints what it wrote and what it skipped to w.
// writePlots writes the plots of kinds into plotDir (and report.html into
// htmlDir), saying what it wrote to w and which plots it skipped to notes.
func writePlots(w, notes io.Writer, plotDir, htmlDir, format string, kinds []plots.Kind, slo analyze.SLO, inputs []plots.Input, html bool) error {
	set, err := plots.Build(inputs, slo, kinds)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return err
	}
	paths, err := plots.Write(plotDir, set, format)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "tokentrace: wrote %d plot(s) to %s\n", len(paths), formats.SafeText(plotDir))
	for _, s := range set.Skipped {
		fmt.Fprintf(notes, "tokentrace: plot skipped: %s\n", formats.SafeLines(fmt.Sprint(s)))
	}
	if html {
		var b bytes.Buffer
		if err := plots.WriteHTML(&b, inputs, set); err != nil {
			return err
		}
		p := filepath.Join(htmlDir, "report.html")
		if err := formats.WriteFileAtomic(p, func(f *os.File) error { _, err := f.Write(b.Bytes()); return err }); err != nil {
			return err
		}
		fmt.Fprintf(w, "tokentrace: wrote %s\n", formats.SafeText(p))
	}
	return nil
}

func registerAnalyzePlots(c *cobra.Command) {
	c.Flags().Bool("no-plots", false, "do not write DIR/plots/ and DIR/report.html")
	c.Flags().String("plot-format", "svg", "format of the plot files in DIR/plots/: "+strings.Join(plots.Formats, ", "))
	// a bad --plot-format is a usage error before anything is read
	prev := c.PreRunE
	c.PreRunE = func(cmd *cobra.Command, args []string) error {
		if format, _ := cmd.Flags().GetString("plot-format"); !validFormat(format) {
			return badChoice("--plot-format", format, plots.Formats)
		}
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
}

// noPlots is analyze's --no-plots.
func noPlots(cmd *cobra.Command) bool {
	skip, _ := cmd.Flags().GetBool("no-plots")
	return skip
}

// analyzePlots is analyze's plot step: every plot kind into dir/plots/ and
// dir/report.html (dir: the output set being written, shown as out), from
// the Analyzer that built the report.
func analyzePlots(cmd *cobra.Command, dir, out string, rep *analyze.Report, an *analyze.Analyzer, rf *reportFlags) error {
	if noPlots(cmd) {
		return nil
	}
	format, _ := cmd.Flags().GetString("plot-format")
	if !validFormat(format) {
		return usageError{fmt.Errorf("--plot-format %q: want %s", format, strings.Join(plots.Formats, ", "))}
	}
	sloText, _ := cmd.Flags().GetString("slo")
	slo, err := slo.ParseSLO(sloText)
	if err != nil {
		return usageError{err}
	}
	loc, timeoutNs := time.UTC, int64(0)
	if rf != nil {
		loc, timeoutNs = rf.loc, rf.timeoutNs
	}
	inputs, err := plotInputs(rep, an, loc, timeoutNs)
	if err != nil {
		return err
	}
	// the files are announced once the set is in place
	return writePlots(io.Discard, infoOut(cmd), filepath.Join(dir, "plots"), dir, format, plots.Kinds, slo, inputs, true)
}
