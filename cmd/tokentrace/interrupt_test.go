package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptRemovesTemporaries: SIGINT and SIGTERM during `analyze`
// remove the hidden output set being written (a sibling of -o), leave the
// output already in the directory as it was, and exit 130 and 143.
func TestInterruptRemovesTemporaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	work := t.TempDir()
	bin := filepath.Join(work, "tokentrace")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	in := filepath.Join(work, "in")
	if out, err := exec.Command(bin, "synth", "-o", in, "--requests", "400").CombinedOutput(); err != nil {
		t.Fatalf("synth: %v\n%s", err, out)
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		out := filepath.Join(work, "out-"+c.sig.String())
		// earlier tables, which must survive
		if b, err := exec.Command(bin, "analyze", "../../testdata/llmperf/leaderboard-groq-70b", "-o", out, "--no-plots").CombinedOutput(); err != nil {
			t.Fatalf("first analyze: %v\n%s", err, b)
		}
		before := readDir(t, out)
		cmd := exec.Command(bin, "analyze", in, "-o", out, "--no-plots")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// signal once the temporaries exist (the import is under way)
		deadline := time.Now().Add(20 * time.Second)
		for !hasTemporaries(t, work) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("no temporary files appeared")
			}
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // past the writer's registration
		if err := cmd.Process.Signal(c.sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code {
			if err == nil {
				t.Skipf("%v: analyze finished before the signal arrived", c.sig)
			}
			t.Fatalf("%v: %v, want exit status %d", c.sig, err, c.code)
		}
		if hasTemporaries(t, work) || hasTemporaries(t, out) {
			t.Errorf("%v: temporary files left: %v %v", c.sig, readDir(t, work), readDir(t, out))
		}
		if after := readDir(t, out); strings.Join(after, " ") != strings.Join(before, " ") {
			t.Errorf("%v: directory %v, want %v as before", c.sig, after, before)
		}
	}
}

func readDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func hasTemporaries(t *testing.T, dir string) bool {
	for _, n := range readDir(t, dir) {
		if strings.Contains(n, ".tmp-") {
			return true
		}
	}
	return false
}
