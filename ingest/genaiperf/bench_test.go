package genaiperf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/synth"
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
		if err := ingest.ImportFile(New(), path, ingest.Options{}, &heapSink{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportSynth imports a generated streaming run (100 requests of
// ~400 tokens, 13 MB, `tokentrace synth` defaults); bytes/s is the file's.
func BenchmarkImportSynth(b *testing.B) {
	m := synth.Default()
	path := filepath.Join(b.TempDir(), "profile_export.json")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := synth.WriteGenAIPerf(f, nil, m); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	for b.Loop() {
		if err := ingest.ImportFile(New(), path, ingest.Options{}, &heapSink{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRequest: one ~130 KB streamed request by the fast path
// and by encoding/json.
func BenchmarkDecodeRequest(b *testing.B) {
	m := synth.Default()
	m.Requests, m.FailureRate = 1, 0
	var buf bytes.Buffer
	if err := synth.WriteGenAIPerf(&buf, nil, m); err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Experiments []struct {
			Requests []json.RawMessage `json:"requests"`
		} `json:"experiments"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		b.Fatal(err)
	}
	raw := []byte(doc.Experiments[0].Requests[0])
	b.Run("fast", func(b *testing.B) {
		var p reqParser
		var rr rawRequest
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if !p.parse(raw, &rr) {
				b.Fatal("fast path declined")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var rr rawRequest
			if err := json.Unmarshal(raw, &rr); err != nil {
				b.Fatal(err)
			}
		}
	})
}
