package sglangbench

import (
	"os"
	"path/filepath"
	"testing"

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
	testkit.SameImports(t, New(), files...)
	// the odd run's checks are there, positioned
	testkit.HasChecks(t, New(), odd, "value_negative ttfts: first request 1 (line 1, ttfts[1]): -1", "value_not_finite itls: first request 0 (line 1, itls[0][1]): NaN", "value_negative itls: first request 3 (line 1, itls[3][1]): -0.5")
}
