// Package golden compares test output with golden files, for the tests of
// every package: one -update flag (registered here, once per test binary)
// and one behaviour on a difference.
//
// Import it from _test.go files only. A test binary that imports it must
// not register its own -update flag (the flag package panics on the second
// registration).
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (and the generated fixtures) instead of comparing")

// Update reports whether the test binary runs with -update: tests that
// regenerate fixtures other than golden files consult it.
func Update() bool { return *update }

// Check compares got with the golden file at path.
//
// Under -update it writes got to path (creating its directory) and returns.
// Otherwise a missing or unreadable golden file fails the test at once
// (naming the -update flag); a difference writes got to path+".got" beside
// the golden file (for a diff tool) and fails the test, naming the first
// differing line with both versions, or the line counts when one file is a
// prefix of the other. When got matches, a stale path+".got" from an
// earlier run is removed.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		_ = os.Remove(path + ".got")
		return
	}
	if err := os.WriteFile(path+".got", got, 0o644); err != nil {
		t.Errorf("writing %s.got: %v", path, err)
	}
	t.Errorf("%s differs (got written to %s.got): %s", path, path, FirstDiff(want, got))
}

// FirstDiff describes the first line where got differs from want:
// "line N:\n got: …\nwant: …", or "got N lines, want M" when one is a
// prefix of the other; "" when they are equal.
func FirstDiff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, gl[i], wl[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(gl), len(wl))
}
