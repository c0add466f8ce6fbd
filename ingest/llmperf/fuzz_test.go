package llmperf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// fuzzNames are the file names a fuzz input is written under (kind selects
// one): the per-request array, a summary alone, and the array with a
// summary beside it (the same bytes).
var fuzzNames = []string{"individual_responses.json", "run_summary.json", "pair"}

// FuzzImport writes arbitrary bytes to a temporary file and runs Detect and
// Import on it: neither may panic, whatever the input.
func FuzzImport(f *testing.F) {
	for _, s := range []struct {
		path string
		kind uint8
	}{
		{"testdata/edge-rows/individual_responses.json", 0},
		{"testdata/truncated/individual_responses.json", 0},
		{"testdata/edge-rows/summary.json", 1},
		{"testdata/edge-rows/summary.json", 2},
		{"../../testdata/llmperf/apeterson7-triton-llama2-7b-2req/individual_responses.json", 2},
	} {
		b, err := os.ReadFile(s.path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, s.kind)
	}
	f.Add([]byte(`[{"error_code": 1e400, "ttft_s": 1e300, "end_to_end_latency_s": -0, "inter_token_latency_s": [1e308, 1e308], "number_output_tokens": -9e18}]`), uint8(0))
	f.Add([]byte(`{"results_error_code_frequency": "{np.float64(: ,,:}", "results_x_quantiles_p": NaN, "timestamp": -Infinity}`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		dir := t.TempDir()
		name := fuzzNames[int(kind)%len(fuzzNames)]
		if name == "pair" {
			name = "individual_responses.json"
			if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		im := New()
		im.Detect(path, data[:min(len(data), ingest.HeadSize)])
		_ = ingest.ImportFile(im, path, ingest.Options{Label: "fuzz"}, &formats.Collector{})
	})
}
