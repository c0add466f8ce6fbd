package sglangbench

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/testkit"
)

// TestStreamAsGeneral: every fixture and corpus file imports to the same
// rows (runs, requests, events, checks, notes) and errors whether it is
// streamed or read whole, with and without text.
func TestStreamAsGeneral(t *testing.T) {
	var files []string
	for name, f := range fixtures {
		files = append(files, filepath.Join("testdata", name, f))
	}
	for name, f := range corpusFiles {
		files = append(files, filepath.Join(corpus, name, f))
	}
	// a run with offending values, a null list and a numeric string, on
	// the native backend (merged chunks)
	dir := t.TempDir()
	odd := filepath.Join(dir, "odd.jsonl")
	os.WriteFile(odd, []byte(`{"backend": "sglang", "duration": 2, "completed": 3, "request_rate": Infinity, "ttfts": [0.5, -1, null, 0.25], "itls": [[0.01, NaN, 0.02], null, [], [0.01, -0.5, 0.01, 0.01, 0.01, 0.01]], "output_lens": [3, 0, 1, 6], "errors": ["", "Not Found", "", ""], "generated_texts": ["a", "", "b", "c"]}`+"\n"+`{"backend": "sglang-oai", "duration": 1, "ttfts": [0.5], "itls": [[0.01, 0.01]], "output_lens": [3], "errors": [""], "generated_texts": ["x"]}`+"\n"), 0o644)
	asString := filepath.Join(dir, "as-string.jsonl")
	os.WriteFile(asString, []byte(`{"backend": "sglang", "duration": 2, "ttfts": [0.5, "0.25"], "itls": [[0.01], [0.02]], "output_lens": [2, 2]}`), 0o644)
	files = append(files, odd, asString)
	for _, p := range files {
		for _, noText := range []bool{false, true} {
			s, g, errS, errG := testkit.ImportBoth(t, New(), p, ingest.Options{Label: "x", NoText: noText})
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
	// the odd run's checks are there, positioned
	var c formats.Collector
	if err := ingest.ImportFile(New(), odd, ingest.Options{}, &c); err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, ch := range c.Runs[0].Checks {
		codes = append(codes, ch.Code+" "+ch.Field+": "+ch.Detail)
	}
	got := strings.Join(codes, "\n")
	for _, want := range []string{"value_negative ttfts: first request 1 (line 1, ttfts[1]): -1", "value_not_finite itls: first request 0 (line 1, itls[0][1]): NaN", "value_negative itls: first request 3 (line 1, itls[3][1]): -0.5"} {
		if !strings.Contains(got, want) {
			t.Errorf("checks:\n%s\nwant %q", got, want)
		}
	}
}
