// Package testkit holds what the importers' tests share: golden-file
// comparison and the readable dump of an import.
package testkit

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Golden compares got with the file at path, or rewrites the file when
// update is set (go test -update). A difference fails the test naming the
// first differing line.
func Golden(t *testing.T, path string, got []byte, update bool) {
	t.Helper()
	if update {
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
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s", path, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s differs in length: got %d lines, want %d", path, len(gl), len(wl))
}

// Dump imports path with im and returns the formats.NewDumper text.
func Dump(t *testing.T, im ingest.Importer, path string, opt ingest.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	d := formats.NewDumper(&buf)
	if err := im.Import(path, opt, d); err != nil {
		t.Fatalf("Import(%s): %v", path, err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
