package vllmbench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// fuzzNames are the file names a fuzz input is written under (kind selects
// one): a result file, a sweep summary with a run file beside it (the same
// bytes), a run file alone.
var fuzzNames = []string{"result.json", "sweep", "run=0.json"}

// FuzzImport runs Detect and the import on arbitrary bytes (through a
// temporary sweep directory for the "sweep" kind, so that Companions and
// the run-file check run too): none may panic, whatever the input.
func FuzzImport(f *testing.F) {
	for _, s := range []struct {
		path string
		kind uint8
	}{
		{filepath.Join("testdata", "detailed-appended", fixtures["detailed-appended"]), 0},
		{filepath.Join("testdata", "truncated", fixtures["truncated"]), 0},
		{filepath.Join("testdata", "latencies-only", fixtures["latencies-only"]), 0},
		{filepath.Join(corpus, "er0080-sweep-opt125m-c2", "summary.json"), 1},
		{filepath.Join(corpus, "er0080-sweep-opt125m-c2", "run=0.json"), 2},
		{filepath.Join(corpus, "moguizhizi-qwen25vl72b-ascend-32req", corpusFiles["moguizhizi-qwen25vl72b-ascend-32req"]), 0},
	} {
		b, err := os.ReadFile(s.path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, s.kind)
	}
	f.Add([]byte(`{"backend": "vllm", "model_id": "m", "duration": 1e400, "ttfts": [1e308, -1, NaN], "itls": [[1e308, 1e308], null, [-Infinity]], "output_lens": [1e300, -5, 2], "start_times": [Infinity, 0, -1e300], "request_goodput:": -Infinity, "spec_decode_per_position_acceptance_rates": [NaN]}`), uint8(0))
	f.Add([]byte(`[{"backend": "vllm", "model_id": "m", "completed": 1, "run_number": 0}, 3]`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		name := fuzzNames[int(kind)%len(fuzzNames)]
		im := New()
		if name != "sweep" {
			// in memory: the file system would make each run a hundred
			// times slower
			im.Detect(name, data[:min(len(data), ingest.HeadSize)])
			_ = importData(filepath.Join("/nonexistent", name), "fuzz", formats.SourceFile{Path: name}, data, ingest.Options{}, &formats.Collector{})
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "summary.json")
		for _, p := range []string{path, filepath.Join(dir, "run=0.json")} {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		im.Detect(path, data[:min(len(data), ingest.HeadSize)])
		im.Companions(path)
		_ = ingest.ImportFile(im, path, ingest.Options{Label: "fuzz"}, &formats.Collector{})
	})
}
