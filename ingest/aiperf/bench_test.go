package aiperf

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// discard is a Sink that keeps nothing.
type discard struct{ events int }

func (d *discard) Request(_ *formats.Request, ev []formats.Event) error {
	d.events += len(ev)
	return nil
}
func (d *discard) Run(*formats.Run) error { return nil }

// writeSynthetic writes an AIPerf-shaped JSONL of n records with chunks
// inter-chunk gaps each (about 14 bytes per gap) and returns its path.
func writeSynthetic(tb testing.TB, n, chunks int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "profile_export.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < n; i++ {
		start := int64(1_700_000_000_000_000_000) + int64(i)*1_000_000_000
		fmt.Fprintf(w, `{"metadata":{"session_num":%d,"x_request_id":"r%d","x_correlation_id":"c%d","conversation_id":"s%d","turn_index":0,"request_start_ns":%d,"request_end_ns":%d,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"time_to_first_token":{"value":150.25,"unit":"ms"},"output_sequence_length":{"value":%d,"unit":"tokens"},"inter_chunk_latency":{"value":[`,
			i, i, i, i, start, start+2_000_000_000, chunks+1)
		for k := 0; k < chunks; k++ {
			if k > 0 {
				w.WriteByte(',')
			}
			w.WriteString("21.123456")
		}
		fmt.Fprintf(w, `],"unit":"ms"},"request_latency":{"value":%.6f,"unit":"ms"}},"error":null}`+"\n", 150.25+float64(chunks)*21.123456)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path
}

// BenchmarkImport imports a synthetic 2,000-record, 400-chunk JSONL
// (about 11 MB, 800k rebuilt events).
func BenchmarkImport(b *testing.B) {
	path := writeSynthetic(b, 2000, 400)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	for b.Loop() {
		var d discard
		if err := ingest.ImportFile(New(), path, ingest.Options{Label: "bench"}, &d); err != nil {
			b.Fatal(err)
		}
		if d.events != 2000*401 {
			b.Fatalf("%d events", d.events)
		}
	}
}

func (d *discard) Batch(b *formats.Batch) error { return b.EachRow(d.Request) }
