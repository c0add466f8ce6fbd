// Package testkit holds what the importers' tests share: the readable dump
// of an import (compared with golden files by internal/golden).
package testkit

import (
	"bytes"
	"os"
	"reflect"
	"strings"
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

// SameImports fails unless every path imports alike through im's
// streaming and general paths (ImportBoth), with and without text: the
// same error, or the same runs, requests and events.
func SameImports(t *testing.T, im ingest.Importer, paths ...string) {
	t.Helper()
	for _, p := range paths {
		for _, noText := range []bool{false, true} {
			s, g, errS, errG := ImportBoth(t, im, p, ingest.Options{Label: "x", NoText: noText})
			if (errS == nil) != (errG == nil) || errS != nil && errS.Error() != errG.Error() {
				t.Errorf("%s: errors %v and %v", p, errS, errG)
				continue
			}
			if !reflect.DeepEqual(s.Runs, g.Runs) {
				t.Errorf("%s: runs differ:\n%+v\n%+v", p, s.Runs, g.Runs)
			}
			if !reflect.DeepEqual(s.Requests, g.Requests) {
				t.Errorf("%s: requests differ", p)
			}
			if !reflect.DeepEqual(s.Events, g.Events) {
				t.Errorf("%s: events differ", p)
			}
		}
	}
}

// HasChecks fails unless importing path with im records, in its first
// run, each of want as "code field: detail".
func HasChecks(t *testing.T, im ingest.Importer, path string, want ...string) {
	t.Helper()
	var c formats.Collector
	if err := ingest.ImportFile(im, path, ingest.Options{}, &c); err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, ch := range c.Runs[0].Checks {
		codes = append(codes, ch.Code+" "+ch.Field+": "+ch.Detail)
	}
	got := strings.Join(codes, "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("checks:\n%s\nwant %q", got, w)
		}
	}
}
