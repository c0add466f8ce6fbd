package aiperf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// fuzzNames are the file names a fuzz input is written under: the JSONL
// export and the two summaries (kind selects one).
var fuzzNames = []string{"profile_export.jsonl", "profile_export_aiperf.json", "profile_export_aiperf.csv"}

// FuzzImport writes arbitrary bytes to a temporary file and runs Detect and
// Import on it: neither may panic, whatever the input.
func FuzzImport(f *testing.F) {
	for i, p := range []string{
		"testdata/edge-records/profile_export.jsonl",
		"testdata/v01-shape/profile_export.jsonl",
		"testdata/truncated/profile_export.jsonl",
		"testdata/v01-shape/profile_export_aiperf.json",
		"testdata/summary-only-csv/profile_export_aiperf.csv",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8([]int{0, 0, 0, 1, 2}[i]))
	}
	f.Add([]byte(`{"metadata":{},"metrics":{"time_to_first_token":{"value":1e308,"unit":"s"},"inter_chunk_latency":{"value":[-1e308,null],"unit":"ms"}}}`), uint8(0))
	f.Add([]byte(`{"metadata":{"request_start_ns":1,"request_end_ns":-9223372036854775808},"metrics":null,"error":{"code":"x"}}`+"\n{"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		path := filepath.Join(t.TempDir(), fuzzNames[int(kind)%len(fuzzNames)])
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		im := New()
		head := data
		if len(head) > ingest.HeadSize {
			head = head[:ingest.HeadSize]
		}
		im.Detect(path, head)
		var c formats.Collector
		_ = ingest.ImportFile(im, path, ingest.Options{Label: "fuzz"}, &c)
	})
}

// FuzzFloatList holds floatList's fast path to its encoding/json reference.
func FuzzFloatList(f *testing.F) {
	for _, s := range []string{"[1,2.5,-3e-2]", "[ 21.177083 , 20.986444 ]", "[]", "[1,]", "[01]", "[1,null]", `["1"]`, "[1e400]", "[-0.0]", "[.5]", "[1.]", "[1e]", "[[1]]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := floatList(data)
		want, wok := slowFloatList(data)
		if ok != wok || len(got) != len(want) {
			t.Fatalf("%q: fast %v %v, reference %v %v", data, got, ok, want, wok)
		}
		for i := range got {
			if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("%q: element %d fast %v, reference %v", data, i, got[i], want[i])
			}
		}
	})
}
