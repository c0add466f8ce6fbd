// Package testkit holds what the importers' tests share: the readable dump
// of an import (compared with golden files by internal/golden).
package testkit

import (
	"bytes"
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
