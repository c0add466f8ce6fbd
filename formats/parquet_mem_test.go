package formats

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// liveHeap is the heap in use after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// bigRequest returns a request and events whose strings are substrings of
// one fresh buffer of size bytes, as the GenAI-Perf importer's rows are
// substrings of each request's whole unescaped response text.
func bigRequest(k, size int) (*Request, []Event) {
	buf := strings.Repeat("x", size) + "chatcmpl-" + strconv.Itoa(k) + " tok stop"
	id := buf[size : size+9+len(strconv.Itoa(k))]
	text := buf[len(buf)-9 : len(buf)-5]
	fin := buf[len(buf)-4:]
	r := &Request{RunID: "r", RequestKey: int64(k), Status: StatusOK, ResponseID: id, XRequestID: id}
	evs := make([]Event, 3)
	for j := range evs {
		evs[j] = Event{RunID: "r", RequestKey: int64(k), Index: int32(j), ReadIndex: int32(j), OffsetNs: int64(j) * 1e6,
			Kind: KindContent, HasChoices: true, Text: &text}
	}
	evs[2].FinishReason = fin
	return r, evs
}

// TestParquetWriterKeepsNoRowReferences checks that once Request returns the
// writer holds no reference into the rows it was given: 512 requests whose
// strings point into 256 KiB buffers (128 MiB in all) must not stay alive
// while the writer batches them. Before the writer handed each call's rows
// to the encoder, a batch of up to 1,024 request rows pinned every buffer.
func TestParquetWriterKeepsNoRowReferences(t *testing.T) {
	for _, layout := range []string{LayoutFlat, LayoutHive} {
		t.Run(layout, func(t *testing.T) {
			w, err := NewParquetWriter(t.TempDir(), WriteOptions{Layout: layout})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			base := liveHeap()
			for k := range 512 {
				r, evs := bigRequest(k, 256<<10)
				if err := w.Request(r, evs); err != nil {
					t.Fatal(err)
				}
			}
			if grew := liveHeap() - base; grew > 16<<20 {
				t.Errorf("live heap grew by %.1f MiB writing 512 requests; the writer keeps the callers' buffers alive", float64(grew)/(1<<20))
			}
			if err := cmpErr(w.Run(&Run{RunID: "r"}), w.Close()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestZstdPagesSameBytes checks that the writer's zstd codec produces the
// bytes of parquet-go's parquet.Zstd for pages up to its 1 MiB window, and
// that they decode back.
func TestZstdPagesSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{" the", " token", " latency", "\n", " of", " a", "," + strconv.Itoa(rng.IntN(100))}
	for _, size := range []int{0, 1, 100, 4 << 10, 256 << 10, 1 << 20} {
		var b bytes.Buffer
		for b.Len() < size {
			if rng.IntN(4) == 0 {
				b.WriteByte(byte(rng.IntN(256)))
			} else {
				b.WriteString(words[rng.IntN(len(words))])
			}
		}
		src := b.Bytes()[:size]
		want, err := (&parquet.Zstd).Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := zstdPages.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes: zstdPages gives %d bytes, parquet.Zstd %d", size, len(got), len(want))
		}
		back, err := (&parquet.Zstd).Decode(nil, got)
		if err != nil || !bytes.Equal(back, src) {
			t.Errorf("%d bytes: round trip failed: %v", size, err)
		}
	}
}

// BenchmarkParquetWriteMemory streams 400 requests of 420 events, whose
// strings point into each request's own 128 KiB buffer (the GenAI-Perf
// importer's shape), through a ParquetWriter and reports the live heap
// the writer added at the end of the writes (live-MB; before the fixes of
// issue 8: ~50 MB for pinned buffers plus 16 MiB per zstd encoder) with the
// bytes allocated per run (B/op).
func BenchmarkParquetWriteMemory(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	var live int64
	for b.Loop() {
		base := liveHeap()
		w, err := NewParquetWriter(dir, WriteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for k := range 400 {
			r, evs := bigRequest(k, 128<<10)
			many := make([]Event, 420)
			for j := range many {
				many[j] = evs[min(j, 2)]
				many[j].Index, many[j].ReadIndex, many[j].OffsetNs = int32(j), int32(j), int64(j)*20e6
			}
			if err := w.Request(r, many); err != nil {
				b.Fatal(err)
			}
		}
		live = max(live, liveHeap()-base)
		if err := cmpErr(w.Run(&Run{RunID: "r"}), w.Close()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(live)/(1<<20), "live-MB")
}
