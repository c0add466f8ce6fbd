// Command tokentrace imports LLM-inference benchmark traces (GenAI-Perf,
// AIPerf, LLMPerf) into Parquet token-event, request and run tables and
// reports TTFT, TPOT, ITL, E2E, throughput and goodput under one documented
// convention.
//
//	tokentrace analyze INPUT... -o DIR   import, write tables + report.json, print the report
//	tokentrace import  INPUT... -o DIR   import and write the tables only
//	tokentrace report  INPUT_OR_DIR...   print the report (inputs or written tables)
//
// INPUT is a tool's file or a directory holding them; summaries beside a raw
// file are picked up automatically. Exit status: 0 on success, 1 on error,
// 2 on a usage error; `gate` exits 3 when a gate fails.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tokentrace/tokentrace/analyze"
)

func main() {
	setDefaultMemoryLimit()           // memlimit.go
	interruptOnce.Do(watchInterrupts) // interrupt.go
	root := newRoot()
	err := root.Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokentrace:", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is the process status for a command's error: 0 none, 2 a usage
// error, a command's own code (gate: 3), else 1.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return 1
}

type usageError struct{ error }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "tokentrace",
		Short:         "Latency traces of LLM inference: import, tables, one-convention reports",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	addProfileFlags(root)
	root.AddCommand(newAnalyze(), newImport(), newReport(), newReconcile(), newVersion())
	for _, f := range extraCommands {
		root.AddCommand(f())
	}
	return root
}

// extraCommands are subcommands registered by their own files' init
// functions (gate, plot, synth, …), so each command lives in one file.
var extraCommands []func() *cobra.Command

// analyzeStep is work `analyze` does after it wrote the tables and
// report.json (plots, report.html, …), registered by init functions:
// register adds its flags; after runs with the output directory and report.
type analyzeStep struct {
	register func(c *cobra.Command)
	after    func(cmd *cobra.Command, out string, rep *analyze.Report) error
	// afterData is after for steps that need the per-request data behind
	// the report (plots, report.html): the Analyzer that built rep.
	afterData func(cmd *cobra.Command, out string, rep *analyze.Report, an *analyze.Analyzer) error
}

var analyzeSteps []analyzeStep
