package mlperf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// FuzzImport writes arbitrary bytes as a summary, a detail log alone, or
// both (summary and detail log the same bytes, with a user.conf), and runs
// Detect and Import: neither may panic, whatever the input.
func FuzzImport(f *testing.F) {
	for _, s := range []struct {
		path string
		kind uint8
	}{
		{"../../testdata/mlperf/nvidia-dgxh100-llama2-70b-99.9-server-v4.1/" + summaryFile, 0},
		{"testdata/new-labels-invalid/" + summaryFile, 0},
		{"testdata/truncated/" + summaryFile, 0},
		{"testdata/detail-cut/" + detailFile, 1},
		{"testdata/malformed-detail/" + detailFile, 2},
	} {
		b, err := os.ReadFile(s.path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, s.kind)
	}
	f.Add([]byte("================================================\nMLPerf Results Summary\n================================================\nScenario : Server\n99.00 percentile first token latency (ns) : 1e400\n========\nTest Parameters Used\n========\nttft_latency (ns): -0\ntpot_latency (ns): NaN\nRecommendations:\n * x\n"), uint8(0))
	f.Add([]byte(":::MLLOG {\"key\": \"result_99.90_percentile_latency_ns\", \"value\": 1e999}\n:::MLLOG {\"key\": \"result_time_to_output_token_min\", \"value\": [1]}\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		dir := t.TempDir()
		var path string
		switch kind % 3 {
		case 0:
			path = filepath.Join(dir, summaryFile)
		case 1:
			path = filepath.Join(dir, detailFile)
		default:
			path = filepath.Join(dir, summaryFile)
			for _, n := range []string{detailFile, "user.conf"} {
				if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		im := New()
		im.Detect(path, data[:min(len(data), ingest.HeadSize)])
		im.Companions(path)
		_ = ingest.ImportFile(im, path, ingest.Options{Label: "fuzz", Warn: func(string) {}}, &formats.Collector{})
	})
}
