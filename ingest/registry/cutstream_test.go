package registry

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCutCompressedSaysSo: every importer's sample, compressed and cut at
// a clean place — a gzip stream cut at a flush point that ends a line (or
// at 3/5 of the content for a one-line document), a gzip stream without
// its 8-byte trailer, a zstd frame without its 4-byte checksum — either
// fails with an error that says the file is cut, or imports with a
// Truncated run and a warning naming the compression. Such inputs used
// to import as complete (6 of 10 AIPerf records, no word, exit 0).
func TestCutCompressedSaysSo(t *testing.T) {
	for _, sm := range samples {
		b, err := os.ReadFile(sm.path)
		if err != nil {
			t.Fatal(err)
		}
		n := len(b) * 3 / 5
		if i := bytes.LastIndexByte(b[:n], '\n'); i > 0 {
			n = i + 1
		}
		var flushed bytes.Buffer
		z := gzip.NewWriter(&flushed)
		z.Write(b[:n])
		z.Flush() // a sync flush: everything so far decodes
		cutAt := flushed.Len()
		z.Write(b[n:])
		z.Close()
		var whole bytes.Buffer
		z = gzip.NewWriter(&whole)
		z.Write(b)
		z.Close()
		zs := zstdBytes(b)
		for kind, data := range map[string][]byte{
			"gzip cut at a flush point": flushed.Bytes()[:cutAt],
			"gzip without its trailer":  whole.Bytes()[:whole.Len()-8],
			"zstd without its checksum": zs[:len(zs)-4],
		} {
			c, warnings, err := importAlone(t, filepath.Base(sm.path), data)
			if err != nil {
				if !strings.Contains(err.Error(), "cut") && !strings.Contains(err.Error(), "ends") {
					t.Errorf("%s (%s): error %q does not say the file is cut", sm.path, kind, err)
				}
				continue
			}
			truncated, noted := len(c.Runs) > 0, false
			for _, r := range c.Runs {
				truncated = truncated && r.Truncated
				for _, n := range r.Notes {
					noted = noted || strings.Contains(n, "stream ends before its end marker (file cut)")
				}
			}
			warned := false
			for _, w := range warnings {
				warned = warned || strings.Contains(w, "cut") || strings.Contains(w, "truncated")
			}
			if !truncated || !noted || !warned {
				t.Errorf("%s (%s): runs truncated %v, noted %v, warnings %q", sm.path, kind, truncated, noted, warnings)
			}
		}
	}
}

// aiperfLine is a minimal AIPerf 0.x profile_export.jsonl record, request
// i starting at 1760000000 s + i s, 100 ms TTFT, 300 ms latency.
func aiperfLine(i int) string {
	start := int64(1760000000_000000000) + int64(i)*1_000_000_000
	return fmt.Sprintf(`{"metadata":{"x_request_id":"r%d","request_start_ns":%d,"request_end_ns":%d,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"request_latency":{"value":300.0,"unit":"ms"},"time_to_first_token":{"value":100.0,"unit":"ms"},"output_token_count":{"value":3,"unit":"tokens"},"input_sequence_length":{"value":8,"unit":"tokens"},"inter_chunk_latency":{"value":[100.0,100.0],"unit":"ms"}}}`+"\n", i, start, start+300_000_000)
}

// TestCutGzipAIPerf: a 10-record AIPerf export gzipped with a flush after
// record 6 and cut there imports records 1-6 (the file holds no more),
// with the run Truncated and one warning; the same export whole imports
// 10 records, not truncated.
func TestCutGzipAIPerf(t *testing.T) {
	var flushed bytes.Buffer
	z := gzip.NewWriter(&flushed)
	cutAt := 0
	for i := range 10 {
		z.Write([]byte(aiperfLine(i)))
		if i == 5 {
			z.Flush()
			cutAt = flushed.Len()
		}
	}
	z.Close()
	for _, tc := range []struct {
		data      []byte
		requests  int
		truncated bool
		warnings  int
	}{
		{flushed.Bytes(), 10, false, 0},
		{flushed.Bytes()[:cutAt], 6, true, 1},
	} {
		c, warnings, err := importAlone(t, "profile_export.jsonl.gz", tc.data)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Requests) != tc.requests || len(c.Runs) != 1 || c.Runs[0].Truncated != tc.truncated || len(warnings) != tc.warnings {
			t.Errorf("%d bytes: %d requests, runs %+v, warnings %q; want %d requests, truncated %v", len(tc.data), len(c.Requests), c.Runs, warnings, tc.requests, tc.truncated)
		}
		if tc.truncated && !strings.HasSuffix(warnings[0], "profile_export.jsonl.gz: the gzip stream ends before its end marker (file cut): the content it holds is imported, whatever followed it is missing") {
			t.Errorf("warning %q", warnings[0])
		}
	}
}
