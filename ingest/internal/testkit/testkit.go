// Package testkit holds what the importers' tests share: the readable dump
// of an import (compared with golden files by internal/golden).
package testkit

import (
	"bytes"
	"os"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Dump imports path with im and returns the formats.NewDumper text.
func Dump(t *testing.T, im ingest.Importer, path string, opt ingest.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	d := formats.NewDumper(&buf)
	if err := ingest.ImportFile(im, path, opt, d); err != nil {
		t.Fatalf("Import(%s): %v", path, err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ImportBoth imports path with im as a regular file (a streaming importer
// takes its streaming path there) and as a pipe of the same bytes (the
// general path), with opt: the two collections and errors, to compare.
func ImportBoth(t *testing.T, im ingest.Importer, path string, opt ingest.Options) (stream, general formats.Collector, errS, errG error) {
	t.Helper()
	errS = ingest.ImportFile(im, path, opt, &stream)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ingest.OpenReader(path, bytes.NewReader(data), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	errG = im.Import(in, opt, &general)
	return
}
