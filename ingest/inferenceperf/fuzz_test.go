package inferenceperf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// fuzzLayouts are the directories a fuzz input is written into (kind
// selects one): the bytes as each report, as a config.yaml beside a small
// valid summary, as a per-request file beside stage reports that route its
// records, and under a name that is not inference-perf's.
var fuzzLayouts = []func(dir string, data []byte) string{
	func(dir string, data []byte) string { return write(dir, "per_request_lifecycle_metrics.json", data) },
	func(dir string, data []byte) string { return write(dir, "summary_lifecycle_metrics.json", data) },
	func(dir string, data []byte) string { return write(dir, "stage_0_prometheus_metrics.json", data) },
	func(dir string, data []byte) string {
		write(dir, "config.yaml", data)
		return write(dir, "summary_lifecycle_metrics.json", []byte(`{"load_summary": {"count": 1}, "successes": {"count": 1}, "failures": {"count": 0}}`))
	},
	func(dir string, data []byte) string {
		write(dir, "stage_0_lifecycle_metrics.json", []byte(`{"load_summary": {"count": 1, "requested_rate": 1}}`))
		write(dir, "stage_1_lifecycle_metrics.json", []byte(`{"load_summary": {"count": 1, "concurrency": 2}}`))
		write(dir, "config.yaml", []byte("tokenizer:\n  pretrained_model_name_or_path: t\n"))
		return write(dir, "per_request_lifecycle_metrics.json", data)
	},
	func(dir string, data []byte) string { return write(dir, "results.json", data) },
}

func write(dir, name string, data []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		panic(err)
	}
	return p
}

// FuzzImport writes arbitrary bytes into one of the layouts and runs
// Detect, Companions and Import: none may panic, whatever the input.
func FuzzImport(f *testing.F) {
	for _, s := range []struct {
		path string
		kind uint8
	}{
		{"testdata/head-2stages/per_request_lifecycle_metrics.json", 4},
		{"testdata/edge-v06/per_request_lifecycle_metrics.json", 0},
		{"testdata/v02-lines/per_request_lifecycle_metrics.json", 4},
		{"testdata/truncated/per_request_lifecycle_metrics.json", 0},
		{"testdata/truncated/stage_0_lifecycle_metrics.json", 1},
		{"testdata/head-2stages/stage_0_prometheus_metrics.json", 2},
		{"testdata/head-2stages/config.yaml", 3},
		{"../../testdata/inference-perf/kubecon25-vllm-eagle/stage_4_lifecycle_metrics.json", 5},
		{"../../testdata/inference-perf/kubecon25-vllm-eagle/config.yaml", 3},
	} {
		b, err := os.ReadFile(s.path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, s.kind)
	}
	f.Add([]byte(`[{"start_time": 1e308, "end_time": -1e308, "stage_id": 3, "info": {"response_metrics": {"chunk_times": [1e300, NaN], "output_token_times": [1e300, 1e300, 1e300]}}}]`), uint8(0))
	f.Add([]byte(`[{"start_time": 1, "end_time": 2, "stage_id": 1}, {"start_time": 0, "end_time": 3, "stage_id": 0}]`), uint8(4))
	f.Add([]byte(`{"load_summary": {"count": NaN, "x": [[{"y": Infinity}]]}, "failures": {"by_label": {"a": {"count": -Infinity, "messages": [1]}}}}`), uint8(1))
	f.Add([]byte("a:\n- b: 1\n  c:\n  - |\n    x\n- [1, {a: b}]\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		dir := t.TempDir()
		path := fuzzLayouts[int(kind)%len(fuzzLayouts)](dir, data)
		im := New()
		im.Detect(path, data[:min(len(data), ingest.HeadSize)])
		im.Companions(path)
		_ = ingest.ImportFile(im, path, ingest.Options{Label: "fuzz"}, &formats.Collector{})
	})
}
