// Command tokentrace imports LLM-inference benchmark traces (GenAI-Perf,
// AIPerf, LLMPerf, vLLM and SGLang bench, guidellm, MLPerf LoadGen,
// inference-perf, server logs) into Parquet token-event, request and run
// tables and reports TTFT, TPOT, ITL, E2E, throughput and goodput under one
// documented convention. It only wires the packages together: importers
// (ingest/registry), tables (formats), analysis (analyze and its rooms),
// plots.
//
//	tokentrace analyze   INPUT... -o DIR      import, write tables, report.json, plots and report.html; print the report
//	tokentrace import    INPUT... -o DIR      import and write the tables only (Parquet; Arrow IPC with --arrow)
//	tokentrace report    INPUT_OR_DIR...      print the report (inputs or written tables)
//	tokentrace reconcile INPUT_OR_DIR...      explain a metric's difference between two conventions, one choice at a time
//	tokentrace compare   BASE CANDIDATE...    runs side by side with significance (benchstat's way), sweeps as curves
//	tokentrace gate      INPUT_OR_DIR...      check runs against an SLO and gates; exit 3 when one fails
//	tokentrace capacity  INPUT_OR_DIR...      goodput capacity of a rate sweep
//	tokentrace plot      INPUT_OR_DIR... -o DIR   draw tails, timelines, E2E vs length, ITL by position, goodput curves
//	tokentrace export    INPUT_OR_DIR... -o DIR   write the tables as Arrow IPC or CSV
//	tokentrace synth     -o DIR               write a synthetic run in a peer tool's format, with its truth
//	tokentrace version                        print the version and schema versions
//	tokentrace help memory                    the memory limit and GOMEMLIMIT
//
// INPUT is a tool's file or a directory holding them; summaries beside a raw
// file are picked up automatically. Exit status: 0 on success, 1 on error,
// 2 on a usage error; `gate` exits 3 when a gate fails.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func main() {
	setDefaultMemoryLimit()           // memlimit.go
	interruptOnce.Do(watchInterrupts) // interrupt.go
	root := newRoot()
	out := &stickyWriter{w: os.Stdout}
	root.SetOut(out)
	err := outputError(root.Execute(), out.err)
	if err != nil {
		warnf("%v", err)
	}
	os.Exit(exitCode(err))
}

// stickyWriter is the commands' standard output: it keeps the first
// write error (a full disk, a closed pipe) and writes nothing after it,
// so that no command can exit 0 having written a cut or empty output,
// whatever its writer does with the error (compare's text report once
// dropped it: a CI step posted an empty comment and passed).
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// outputError is the command's error, or the output's when writing it
// failed: a failed write exits 1 even when the command itself succeeded
// or reached a verdict (gate's exit 3 is no verdict if it was not
// written).
func outputError(err, werr error) error {
	if werr == nil {
		return err
	}
	var ee exitError
	if err == nil || errors.As(err, &ee) {
		return fmt.Errorf("writing the output: %w", werr)
	}
	return err
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
	addProfileFlags(root)
	for _, f := range commands {
		root.AddCommand(f())
	}
	setUpConventions(root) // cli.go: --version, -q, suggestions, completion, examples
	return root
}

// commands are tokentrace's subcommands, one constructor each, every one
// in its own file (the package doc lists them).
var commands = []func() *cobra.Command{
	newAnalyze, newImport, newReport, newReconcile, newCompare, newGate, newCapacity, newPlotCmd, newExport,
	newSynth, newVersion, newMemoryTopic,
}
