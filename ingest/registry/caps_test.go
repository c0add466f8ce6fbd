package registry

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// stream yields prefix, then n bytes of fill, without holding them: a
// large synthetic input. read counts the bytes handed out.
type stream struct {
	prefix []byte
	fill   byte
	n      int64
	read   int64
}

func (s *stream) Read(p []byte) (int, error) {
	if len(s.prefix) > 0 {
		k := copy(p, s.prefix)
		s.prefix = s.prefix[k:]
		s.read += int64(k)
		return k, nil
	}
	if s.n == 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), s.n))
	for i := range p[:k] {
		p[i] = s.fill
	}
	s.n -= int64(k)
	s.read += int64(k)
	return k, nil
}

const mib = 1 << 20

// importStream imports s as the file name with the importer called from,
// under cap, and returns the bytes allocated meanwhile and the error.
func importStream(t *testing.T, from, name string, s *stream, capBytes int64) (alloc uint64, err error) {
	t.Helper()
	im, lerr := Lookup(from)
	if lerr != nil {
		t.Fatal(lerr)
	}
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	opt := ingest.Options{MaxValueBytes: capBytes, Label: "x"}
	in, err := ingest.OpenReader(name, s, opt)
	if err == nil {
		err = im.Import(in, opt, &formats.Collector{})
		in.Close()
	}
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc, err
}

// TestImportersCapValues: for every importer, a value of 200 MiB (a string
// in a record, a line, a one-document file), streamed, is refused once it
// passes the cap (8 MiB here): the error is a positioned *ingest.CapError
// naming the cap and --max-value-size, at most a few caps' worth of the
// input is read, and the import allocates a bounded amount — where an
// uncapped reader would hold the whole 200 MiB (and several times that
// while decoding it).
func TestImportersCapValues(t *testing.T) {
	const capBytes = 8 * mib
	for _, tc := range []struct {
		from, name, prefix, where string
	}{
		{"genai-perf", "profile_export.json", `{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[{"timestamp":1,"request_inputs":{"payload":"`, "request 0 (byte 75)"},
		{"aiperf", "profile_export.jsonl", `{"metadata":{"session_num":0,"x":"`, "line 1"},
		{"llmperf", "individual_responses.json", `[{"ttft_s":1,"generated_text":"`, "record 1"},
		{"guidellm", "benchmarks.json", `{"benchmarks":[{"type_":"generative_benchmark","metrics":{"x":"`, ""},
		{"inference-perf", "pr.json", `[{"start_time":1,"end_time":2,"request":"`, "record 1"},
		{"vllm", "result.json", `{"backend":"vllm","model_id":"m","duration":1,"x":"`, ""},
		{"sglang", "result.jsonl", `{"backend":"sglang","duration":1,"server_info":"`, ""},
		{"mlperf", "mlperf_log_detail.txt", `:::MLLOG {"key": "`, "line 1"},
		{"server-log", "vllm.log", `INFO 05-01 10:00:00 Received request `, "line 1"},
		{"server-log", "otlp.json", "{\n" + `"resourceSpans": [ "`, ""},
	} {
		s := &stream{prefix: []byte(tc.prefix), fill: 'a', n: 200 * mib}
		alloc, err := importStream(t, tc.from, tc.name, s, capBytes)
		var fe *ingest.FormatError
		switch {
		case !errors.Is(err, ingest.ErrValueTooLarge) || !errors.As(err, &fe):
			t.Errorf("%s %s: error %v, want a positioned cap error", tc.from, tc.name, err)
			continue
		case !strings.Contains(err.Error(), "8 MiB cap") || !strings.Contains(err.Error(), "--max-value-size"):
			t.Errorf("%s: %v: the cap and its flag are not named", tc.from, err)
		case tc.where != "" && !strings.Contains(err.Error(), tc.where):
			t.Errorf("%s: %v: want the position %q", tc.from, err, tc.where)
		}
		if s.read > 3*capBytes {
			t.Errorf("%s: read %d MiB of 200 before refusing", tc.from, s.read/mib)
		}
		if alloc > 8*capBytes {
			t.Errorf("%s: allocated %d MiB", tc.from, alloc/mib)
		}
		t.Logf("%s: read %.1f MiB, allocated %.1f MiB: %v", tc.from, float64(s.read)/mib, float64(alloc)/mib, err)
	}
}

// TestGenAIPerfFailsFast: a 2 GB raw export whose byte 76 is the first of
// a run of NUL bytes (a sparse file, a damaged disk) is refused at that
// byte after reading its first MiB or so, not after reading (and holding)
// all 2 GB.
func TestGenAIPerfFailsFast(t *testing.T) {
	prefix := `{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[{`
	prefix += strings.Repeat(" ", 76-len(prefix))
	for _, fill := range []byte{0, '@'} {
		s := &stream{prefix: []byte(prefix), fill: fill, n: 2 << 30}
		start := time.Now()
		alloc, err := importStream(t, "genai-perf", "profile_export.json", s, ingest.DefaultMaxValueBytes)
		if err == nil || !strings.Contains(err.Error(), "(byte 76)") || !strings.Contains(err.Error(), "invalid character") {
			t.Errorf("fill %q: %v, want an invalid character at byte 76", fill, err)
		}
		if s.read > 4*mib || alloc > 64*mib || time.Since(start) > 5*time.Second {
			t.Errorf("fill %q: read %d bytes, allocated %d MiB, %v", fill, s.read, alloc/mib, time.Since(start))
		}
	}
	// inside a string, a control character stops the scan too
	inString := `{"experiments":[{"experiment":{"mode":"concurrency","value":1},"requests":[{"k":"`
	s := &stream{prefix: []byte(inString), fill: 0, n: 2 << 30}
	_, err := importStream(t, "genai-perf", "profile_export.json", s, ingest.DefaultMaxValueBytes)
	if want := fmt.Sprintf("(byte %d)", len(inString)); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "in string literal") || s.read > 4*mib {
		t.Errorf("NULs in a string: %v after %d bytes, want %s", err, s.read, want)
	}
}
