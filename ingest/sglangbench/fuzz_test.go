package sglangbench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// FuzzImport runs Detect and the import on arbitrary bytes (in memory:
// the importer reads one file and no companions): neither may panic,
// whatever the input.
func FuzzImport(f *testing.F) {
	for _, p := range []string{
		filepath.Join("testdata", "output-details", fixtures["output-details"]),
		filepath.Join("testdata", "truncated", fixtures["truncated"]),
		filepath.Join("testdata", "malformed", "sglang_0301_3_64_8.jsonl"),
		filepath.Join(corpus, "dlora-oldformat-1req", corpusFiles["dlora-oldformat-1req"]),
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"backend": "sglang", "duration": -Infinity, "ttfts": [1e308, NaN, 0.1], "itls": [[1e308, 1e308, 1e308], null, [NaN, NaN]], "output_lens": [1, 1e300, -1], "server_info": {"decode": [{"version": 1}], "prefill": []}}` + "\n" + `{"backend": 5, "completed": "x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		New().Detect("r.jsonl", data[:min(len(data), ingest.HeadSize)])
		_ = importData("/nonexistent/r.jsonl", "fuzz", formats.SourceFile{Path: "r.jsonl"}, data, ingest.Options{}, &formats.Collector{})
	})
}
