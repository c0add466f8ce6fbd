package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// buildBinary builds tokentrace into dir/bin and returns that folder (for
// PATH).
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "tokentrace"), ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

var docExitRe = regexp.MustCompile(`#\s*exit (\d+)\s*$`)

// runDocCommand runs one command line of a document with bash in dir, the
// built binary's folder bin first on PATH and env added, checks its exit
// status against the line's "# exit N" comment (0 without one; a mismatch
// is a test error naming where, the command and its output) and returns
// its combined stdout and stderr.
func runDocCommand(t *testing.T, where, dir, bin, c string, env ...string) string {
	t.Helper()
	want := 0
	if m := docExitRe.FindStringSubmatch(c); m != nil {
		want, _ = strconv.Atoi(m[1])
	}
	sh := exec.Command("bash", "-c", c)
	sh.Dir = dir
	sh.Env = append(append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH")), env...)
	out, err := sh.CombinedOutput()
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %s: %v", where, c, err)
	}
	if got != want {
		t.Errorf("%s: %s\nexit %d, want %d\n%s", where, c, got, want, out)
	}
	return string(out)
}
