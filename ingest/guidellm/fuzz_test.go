package guidellm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// fuzzNames are the file names a fuzz input is written under (kind selects
// one): a JSON report, a JSON report with a YAML twin (the same bytes), and
// a YAML report.
var fuzzNames = []string{"benchmarks.json", "pair", "benchmarks.yaml"}

// FuzzImport writes arbitrary bytes to a temporary file and runs Detect and
// Import on it: neither may panic, whatever the input.
func FuzzImport(f *testing.F) {
	for _, s := range []struct {
		path string
		kind uint8
	}{
		{"testdata/v03-requests/benchmarks.json", 0},
		{"testdata/v04-requests/benchmarks.json", 0},
		{"testdata/v04-sampled/benchmarks.json", 1},
		{"testdata/truncated/benchmarks.json", 0},
		{"testdata/unknown-keys/benchmarks.json", 0},
		{"testdata/v04-yaml/benchmarks.yaml", 2},
	} {
		b, err := os.ReadFile(s.path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, s.kind)
	}
	f.Add([]byte(`{"benchmarks": [{"requests": {"successful": [{"start_time": 9.1e9, "first_token_time": -Infinity, "output_tokens": 1e300}]}}]}`), uint8(0))
	f.Add([]byte(`{"benchmarks": [{"type_": "generative_benchmark", "metrics": {"a": {"b": {"successful": {"mean": NaN, "percentiles": {"p999": "x"}}}}}, "requests": {"successful": [{"info": {"timings": {"request_start": 1, "token_iterations": -3}}}]}}]}`), uint8(0))
	f.Add([]byte("benchmarks:\n- type_: generative_benchmark\n  metrics: {x: .nan}\n"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		dir := t.TempDir()
		name := fuzzNames[int(kind)%len(fuzzNames)]
		if name == "pair" {
			name = "benchmarks.json"
			if err := os.WriteFile(filepath.Join(dir, "benchmarks.yaml"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		im := New()
		im.Detect(path, data[:min(len(data), ingest.HeadSize)])
		im.Companions(path)
		_ = ingest.ImportFile(im, path, ingest.Options{Label: "fuzz"}, &formats.Collector{})
	})
}
