package genaiperf

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TestStreamingMemory imports a ~30 MB export (1,000 copies of the
// classic-100-tokens request) and checks that the live heap stays far below
// the file size (a quarter; the read buffer, one request's buffers and the
// hasher's chunks are ~4.5 MB whatever the file's size): requests are
// decoded one at a time, not the file as a whole.
func TestStreamingMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 30 MB file")
	}
	full := fixtures[len(fixtures)-1].encode()
	open, closing := []byte(`"requests":[`), []byte(`],"window_boundaries"`)
	i, j := bytes.Index(full, open)+len(open), bytes.LastIndex(full, closing)
	head, req, tail := full[:i], full[i:j], full[j:]

	path := filepath.Join(t.TempDir(), "profile_export.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	const n = 1000
	w.Write(head)
	for k := 0; k < n; k++ {
		if k > 0 {
			w.WriteByte(',')
		}
		w.Write(req)
	}
	w.Write(tail)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	size := int64(len(head)+len(tail)) + n*int64(len(req)+1)

	runtime.GC()
	s := &heapSink{sample: true}
	if err := ingest.ImportFile(New(), path, ingest.Options{}, s); err != nil {
		t.Fatal(err)
	}
	if s.requests != n {
		t.Fatalf("%d requests, want %d", s.requests, n)
	}
	t.Logf("file %d MB, peak sampled live heap %.1f MB", size>>20, float64(s.peak)/(1<<20))
	if int64(s.peak) > size/4 {
		t.Errorf("heap reached %d bytes for a %d-byte file: not streaming", s.peak, size)
	}
}

// heapSink counts requests and, when sampling, measures the live heap
// (after a collection, so garbage not yet collected does not count) every
// 100 of them.
type heapSink struct {
	requests int
	sample   bool
	peak     uint64
}

func (h *heapSink) Request(*formats.Request, []formats.Event) error {
	h.requests++
	if h.sample && h.requests%100 == 0 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		h.peak = max(h.peak, m.HeapAlloc)
	}
	return nil
}

func (h *heapSink) Run(*formats.Run) error { return nil }

func (h *heapSink) Batch(b *formats.Batch) error { return b.EachRow(h.Request) }
