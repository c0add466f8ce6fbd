package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const aiperfRun = "../../testdata/aiperf/qwen3vl30b-local-agent-c2/profile_export.jsonl"

// aiperfAlone copies the AIPerf run's records into a directory of their
// own (no summary beside them, as standard input has none) and returns the
// copy's path and bytes.
func aiperfAlone(t *testing.T) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(aiperfRun)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "profile_export.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// captureStderr runs f with os.Stderr going to a pipe and returns what was
// written.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	defer func() {
		os.Stderr = saved
	}()
	f()
	os.Stderr = saved
	w.Close()
	return string(<-done)
}

// reportOf runs `report --format json` on args and returns stdout.
func reportOf(t *testing.T, stdin io.Reader, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	if stdin != nil {
		root.SetIn(stdin)
	}
	root.SetArgs(append([]string{"report", "--format", "json"}, args...))
	err := root.Execute()
	return out.String(), err
}

// TestStdinInput: "-" reads the command's standard input, detected from
// its head and imported from the same stream: the report equals the one
// of the file itself (label aside); unrecognized content names --from.
func TestStdinInput(t *testing.T) {
	alone, data := aiperfAlone(t)
	want, err := reportOf(t, nil, "--label", "x", alone)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reportOf(t, bytes.NewReader(data), "--label", "x", "-")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Error("report of standard input differs from the file's")
	}
	_, err = reportOf(t, strings.NewReader("hello\n"), "-")
	if err == nil || !strings.Contains(err.Error(), "standard input: not a recognized trace format: name its format with --from") {
		t.Errorf("unrecognized standard input: %v", err)
	}
	// --from on standard input: a summary told by its file name elsewhere
	sum, err := os.ReadFile("../../testdata/llmperf/leaderboard-groq-70b/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reportOf(t, bytes.NewReader(sum), "--from", "llmperf", "-"); err != nil {
		t.Errorf("--from llmperf -: %v", err)
	}
}

// TestFIFOAndCompressedInputs: a named pipe (what a process substitution
// <(cat file) also is) and a gzip-compressed file import like the file
// itself; before, the pipe hung (it was opened twice) or read as empty.
func TestFIFOAndCompressedInputs(t *testing.T) {
	alone, data := aiperfAlone(t)
	want, err := reportOf(t, nil, "--label", "x", alone)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "run.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(data)
		w.Close()
	}()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := reportOf(t, nil, "--label", "x", fifo)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.out != want {
			t.Errorf("FIFO: %v (report equal: %v)", r.err, r.out == want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("report on a FIFO hangs")
	}

	gz := filepath.Join(dir, "profile_export.jsonl.gz")
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write(append([]byte("\xef\xbb\xbf"), data...)) // a BOM too
	z.Close()
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := reportOf(t, nil, "--label", "x", gz); err != nil || got != want {
		t.Errorf("gzip with a BOM: %v (report equal: %v)", err, got == want)
	}
}

// TestMaxValueSizeFlag: --max-value-size caps one value; the error names
// the cap and the flag; a malformed size is a usage error.
func TestMaxValueSizeFlag(t *testing.T) {
	// its first line is 5,861 bytes
	_, err := reportOf(t, nil, "--max-value-size", "4KiB", aiperfRun)
	if err == nil || !strings.Contains(err.Error(), "line 1: line larger than the 4 KiB cap on one value (raise it with --max-value-size") {
		t.Errorf("4 KiB: %v", err)
	}
	if _, err := reportOf(t, nil, "--max-value-size", "64MiB", aiperfRun); err != nil {
		t.Errorf("64 MiB: %v", err)
	}
	_, err = reportOf(t, nil, "--max-value-size", "lots", aiperfRun)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--max-value-size") {
		t.Errorf("bad size: %v (exit %d)", err, exitCode(err))
	}
}

// TestStderrNamesSanitized: a file found in an input directory whose name
// holds terminal escapes (clear screen, a bell) and a bidi override is
// named on stderr with those characters replaced by '?'.
func TestStderrNamesSanitized(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(aiperfRun)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "profile_export.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	evil := "\x1b[2J\x1b[Hpwned\a\u202etxt.exe"
	if err := os.WriteFile(filepath.Join(dir, evil), []byte("not a trace\n"), 0o644); err != nil {
		t.Skip("file system refuses the name:", err)
	}
	var runErr error
	stderr := captureStderr(t, func() {
		_, runErr = reportOf(t, nil, dir)
	})
	if runErr != nil {
		t.Fatal(runErr)
	}
	if strings.ContainsAny(stderr, "\x1b\a\u202e") {
		t.Errorf("raw control characters on stderr: %q", stderr)
	}
	if !strings.Contains(stderr, "skipped 1 unrecognized file(s) in the given directories (?[2J?[Hpwned??txt.exe)") {
		t.Errorf("stderr: %q", stderr)
	}
}
