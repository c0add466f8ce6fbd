package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// failAfter is a writer that accepts n bytes, then fails every write
// (a disk that fills up mid-report).
type failAfter struct{ n int }

var errDiskFull = errors.New("no space left on device (test)")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	k := f.n
	f.n = 0
	return k, errDiskFull
}

// TestEveryOutputFailsLoudly runs every command × output format that
// writes to standard output against a writer that fails — at the first
// byte, and half-way through the output — and wants an error back: a
// failed write exits 1 (main), never 0 with a cut or empty report.
func TestEveryOutputFailsLoudly(t *testing.T) {
	a := "../../testdata/aiperf/llama31-8b-local-chatbot-c2"
	b := "../../testdata/aiperf/qwen3vl30b-local-chatbot-c1-warmup2"
	out := t.TempDir()
	cases := [][]string{}
	for _, f := range []string{"text", "json", "markdown"} {
		cases = append(cases,
			[]string{"report", a, "--format", f},
			[]string{"report", a, "--window", "30s", "--format", f},
			[]string{"reconcile", a, "--format", f},
			[]string{"capacity", a, b, "--slo", "ttft<=1s", "--format", f},
			[]string{"analyze", a, "-o", filepath.Join(out, "an-"+f), "--no-plots", "--format", f},
		)
	}
	cases = append(cases, []string{"report", a, "--window", "30s", "--format", "csv"})
	for _, f := range []string{"text", "json", "markdown", "csv"} {
		cases = append(cases, []string{"compare", a, a, "--format", f})
	}
	for _, f := range []string{"text", "json", "markdown", "junit"} {
		cases = append(cases, []string{"gate", a, "--gate", "p99(ttft)<=10s", "--format", f})
	}
	cases = append(cases, []string{"version"}, []string{"help", "memory"}, []string{"report", "--help"})
	for _, args := range cases {
		name := strings.Join(args, " ")
		root := newRoot()
		var full bytes.Buffer
		root.SetOut(&full)
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if full.Len() == 0 {
			t.Errorf("%s: no output to fail", name)
			continue
		}
		for _, n := range []int{0, full.Len() / 2} {
			if args[0] == "analyze" {
				os.RemoveAll(args[3])
			}
			// as main runs it: standard output behind a stickyWriter
			root := newRoot()
			out := &stickyWriter{w: &failAfter{n: n}}
			root.SetOut(out)
			root.SetErr(&bytes.Buffer{})
			root.SetArgs(args)
			own := root.Execute()
			err := outputError(own, out.err)
			if !errors.Is(err, errDiskFull) || exitCode(err) != 1 {
				t.Errorf("%s, failing after %d of %d bytes: %v (exit %d), want the write's error", name, n, full.Len(), err, exitCode(err))
			}
			// the commands' own writers return the error too (cobra's
			// help and version do not: main's stickyWriter catches them)
			if helpOrVersion := args[0] == "version" || args[0] == "help" || args[len(args)-1] == "--help"; !helpOrVersion && !errors.Is(own, errDiskFull) {
				t.Errorf("%s, failing after %d of %d bytes: the command returned %v, want the write's error", name, n, full.Len(), own)
			}
		}
	}
}

// TestOutputError checks main's rule: a failed write of the output wins
// over success and over a verdict's exit code, not over another error.
func TestOutputError(t *testing.T) {
	werr := errors.New("disk full")
	other := errors.New("bad input")
	if err := outputError(nil, werr); !errors.Is(err, werr) || exitCode(err) != 1 {
		t.Errorf("success + failed write: %v (exit %d)", err, exitCode(err))
	}
	if err := outputError(exitError{code: 3}, werr); !errors.Is(err, werr) || exitCode(err) != 1 {
		t.Errorf("gate failure + failed write: %v (exit %d)", err, exitCode(err))
	}
	if err := outputError(other, werr); err != other {
		t.Errorf("error + failed write: %v", err)
	}
	if err := outputError(nil, nil); err != nil {
		t.Errorf("nothing failed: %v", err)
	}
	s := &stickyWriter{w: &failAfter{n: 3}}
	if n, err := s.Write([]byte("abcdef")); n != 3 || err == nil {
		t.Errorf("first write: %d, %v", n, err)
	}
	if n, err := s.Write([]byte("x")); n != 0 || !errors.Is(err, errDiskFull) {
		t.Errorf("after the error: %d, %v", n, err)
	}
}

// TestCSVFormulaCells: a run id a spreadsheet would run as a formula is
// neutralised in the human-facing CSV (report --window) and, with
// --csv-safe only, in export's raw CSV.
func TestCSVFormulaCells(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "=HYPERLINK(1)")
	if err := os.CopyFS(in, os.DirFS("../../testdata/aiperf/llama31-8b-local-chatbot-c2")); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "report", in, "--window", "60s", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\n'=HYPERLINK(1),") || strings.Contains(out, "\n=HYPERLINK") {
		t.Errorf("window CSV cells:\n%.400s", out)
	}
	for _, safe := range []bool{false, true} {
		dir := filepath.Join(root, "export", strconv.FormatBool(safe))
		args := []string{"export", in, "--format", "csv", "-o", dir}
		if safe {
			args = append(args, "--csv-safe")
		}
		if _, err := run(t, args...); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "runs.csv"))
		if err != nil {
			t.Fatal(err)
		}
		quoted := strings.Contains(string(b), "\n'=HYPERLINK(1),")
		raw := strings.Contains(string(b), "\n=HYPERLINK(1),")
		if quoted != safe || raw == safe {
			t.Errorf("export --csv-safe=%v: quoted %v, raw %v:\n%.300s", safe, quoted, raw, b)
		}
	}
	if _, err := run(t, "export", in, "--format", "arrow", "-o", filepath.Join(root, "a"), "--csv-safe"); err == nil {
		t.Error("--csv-safe with --format arrow accepted")
	}
}
