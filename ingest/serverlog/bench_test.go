package serverlog

import (
	"bytes"
	"os"
	"testing"

	"github.com/tokentrace/tokentrace/ingest"
)

// benchParse parses data (a file's bytes repeated) as path would be.
func benchParse(b *testing.B, path string, repeat int) {
	one, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat(one, repeat)
	im := &Importer{Year: 2026}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in, err := ingest.OpenReader(path, bytes.NewReader(data), ingest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := im.parse(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVLLMLog: the real vLLM 0.25 log (engine stats, access lines,
// a traceback), 20 copies (1.1 MB).
func BenchmarkVLLMLog(b *testing.B) {
	benchParse(b, "../../testdata/server-logs/vllm-v0.25-engine-stats-log/vllm-excerpt.log", 20)
}

// BenchmarkRequestLog: vLLM request-log lines with ids (the joined
// example's log), 2000 copies.
func BenchmarkRequestLog(b *testing.B) {
	benchParse(b, "../../testdata/joined/aiperf-vllm/vllm-request.log", 2000)
}
