package genaiperf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/ingest"
)

// BenchmarkImportClassic imports the classic-100-tokens fixture (one
// streamed request of 104 SSE messages); bytes/s is the raw file's.
func BenchmarkImportClassic(b *testing.B) {
	path := filepath.Join("testdata", "classic-100-tokens", "profile_export.json")
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		if err := New().Import(path, ingest.Options{}, &heapSink{}); err != nil {
			b.Fatal(err)
		}
	}
}
