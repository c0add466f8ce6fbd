package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

const doc = `{"experiments":[{"requests":[]}],"version":"0.0.8"}` + "\n"

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write(b)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zenc is one zstd encoder for all tests (EncodeAll may be called
// concurrently): building one per call costs megabytes.
var zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))

func zstded(t testing.TB, b []byte) []byte {
	return zenc.EncodeAll(b, nil)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestOpenDecodes: a BOM is dropped and gzip and zstd are decompressed by
// their magic bytes (whatever the name), for Head and Read alike, while
// SourceFile describes the bytes as given: their SHA-256 and size.
func TestOpenDecodes(t *testing.T) {
	dir := t.TempDir()
	bom := append([]byte("\xef\xbb\xbf"), doc...)
	for _, tc := range []struct {
		name       string
		data       []byte
		bom        bool
		compressed string
	}{
		{"plain.json", []byte(doc), false, ""},
		{"bom.json", bom, true, ""},
		{"doc.json.gz", gzipped(t, []byte(doc)), false, "gzip"},
		{"named-plain.json", gzipped(t, bom), true, "gzip"},
		{"doc.json.zst", zstded(t, []byte(doc)), false, "zstd"},
		{"bom.zst", zstded(t, bom), true, "zstd"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, noHash := range []bool{false, true} {
			in, err := Open(p, Options{NoHash: noHash})
			if err != nil {
				t.Fatal(tc.name, err)
			}
			if string(in.Head()) != doc || in.BOM != tc.bom || in.Compression != tc.compressed {
				t.Errorf("%s: head %q, BOM %v, compression %q", tc.name, in.Head(), in.BOM, in.Compression)
			}
			all, err := io.ReadAll(in)
			if err != nil || string(all) != doc || in.Offset() != int64(len(doc)) {
				t.Errorf("%s: read %q (offset %d), %v", tc.name, all, in.Offset(), err)
			}
			src, err := in.SourceFile("raw")
			wantSum := sha(tc.data)
			if noHash {
				wantSum = ""
			}
			if err != nil || src.Bytes != int64(len(tc.data)) || src.SHA256 != wantSum || src.Path != p || src.Role != "raw" {
				t.Errorf("%s (NoHash %v): %+v, %v; want %d bytes, sha %q", tc.name, noHash, src, err, len(tc.data), wantSum)
			}
			in.Close()
		}
	}
}

// TestOpenCutCompressed: a gzip file cut short reads as its content up to
// the cut, then the end (Cut says so); damaged compressed data is an
// error naming the compression.
func TestOpenCutCompressed(t *testing.T) {
	big := bytes.Repeat([]byte(doc), 2000)
	z := gzipped(t, big)
	in, err := OpenReader("cut.gz", bytes.NewReader(z[:len(z)/2]), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(in)
	if err != nil || !in.Cut() || len(got) == 0 || len(got) >= len(big) || !bytes.HasPrefix(big, got) {
		t.Fatalf("cut gzip: %d of %d bytes, cut %v, %v", len(got), len(big), in.Cut(), err)
	}
	bad := append([]byte{}, z...)
	bad[len(bad)-5] ^= 0xff // the CRC
	in, err = OpenReader("bad.gz", bytes.NewReader(bad), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(in)
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "damaged gzip data") {
		t.Fatalf("damaged gzip: %v", err)
	}
	if _, err := OpenReader("hdr.gz", bytes.NewReader([]byte{0x1f, 0x8b, 9, 9}), Options{}); err == nil || !strings.Contains(err.Error(), "hdr.gz: byte 0: damaged gzip header") {
		t.Fatalf("damaged header: %v", err)
	}
}

// TestOpenFIFO: a named pipe is read once, head and rest from the same
// open: the writer's bytes all arrive, and SourceFile hashes them even
// with NoHash (a pipe cannot be read again to hash it later).
func TestOpenFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	data := bytes.Repeat([]byte(doc), 5000) // > HeadSize
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(data)
		w.Close()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		in, err := Open(p, Options{NoHash: true})
		if err != nil {
			t.Error(err)
			return
		}
		defer in.Close()
		if in.Regular() || !bytes.Equal(in.Head(), data[:HeadSize]) {
			t.Errorf("regular %v, head %d bytes", in.Regular(), len(in.Head()))
		}
		all, err := io.ReadAll(in)
		if err != nil || !bytes.Equal(all, data) {
			t.Errorf("read %d of %d bytes, %v", len(all), len(data), err)
		}
		if src, err := in.SourceFile("raw"); err != nil || src.SHA256 != sha(data) || src.Bytes != int64(len(data)) {
			t.Errorf("%+v, %v", src, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("reading the FIFO hangs")
	}
}

// TestStdin: "-" reads Options.Stdin and is named "standard input" in
// errors, "stdin" as a label.
func TestStdin(t *testing.T) {
	in, err := Open("-", Options{Stdin: strings.NewReader("\xef\xbb\xbf" + doc)})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if string(in.Head()) != doc || in.Regular() {
		t.Fatalf("head %q", in.Head())
	}
	if e := Errorf("-", "line 3", "bad"); e.Error() != "standard input: line 3: bad" {
		t.Error(e)
	}
	if DefaultLabel("-") != "stdin" {
		t.Error(DefaultLabel("-"))
	}
}

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

// allocated runs f and returns the bytes it allocated in all.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

const mib = 1 << 20

// TestCapsBounded: a 200 MiB string in a JSON value, a 200 MiB line and a
// 200 MiB one-document file, streamed, are refused once the cap (8 MiB
// here) is passed: the error names the cap and the flag, no more than a
// few caps' worth is read, and the reading allocates a bounded amount.
func TestCapsBounded(t *testing.T) {
	const capBytes = 8 * mib
	const size = 200 * mib
	opt := Options{MaxValueBytes: capBytes}
	check := func(name string, s *stream, err error, alloc uint64) {
		t.Helper()
		var ce *CapError
		if !errors.As(err, &ce) || !errors.Is(err, ErrValueTooLarge) || !strings.Contains(err.Error(), "8 MiB cap") || !strings.Contains(err.Error(), "--max-value-size") {
			t.Errorf("%s: error %v, want the 8 MiB cap", name, err)
		}
		if s.read > 3*capBytes {
			t.Errorf("%s: read %d bytes of %d before refusing", name, s.read, size)
		}
		if alloc > 6*capBytes {
			t.Errorf("%s: allocated %d MiB", name, alloc/mib)
		}
	}

	s := &stream{prefix: []byte(`[{"ttft_s": 1, "text": "`), fill: 'a', n: size}
	var err error
	alloc := allocated(func() {
		dec := NewJSONDecoder(s, capBytes)
		if _, err = dec.Token(); err != nil {
			return
		}
		var v map[string]any
		err = dec.Decode(&v)
	})
	check("JSON value", s, err, alloc)

	s = &stream{prefix: []byte(`{"metadata": "`), fill: 'b', n: size}
	alloc = allocated(func() {
		_, _, err = ReadLine(bufio.NewReaderSize(s, 1<<20), capBytes)
	})
	check("line", s, err, alloc)

	s = &stream{prefix: []byte(`{"backend": "`), fill: 'c', n: size}
	alloc = allocated(func() {
		var in *Input
		if in, err = OpenReader("result.json", s, opt); err != nil {
			return
		}
		_, err = in.ReadAll()
	})
	check("file", s, err, alloc)
	if err == nil || !strings.HasPrefix(err.Error(), "result.json: file larger than the 8 MiB cap") {
		t.Errorf("file error %v", err)
	}
}

// TestReadAllRegularTooLarge: an uncompressed regular file larger than the
// cap is refused before any of it is read.
func TestReadAllRegularTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, bytes.Repeat([]byte(" "), 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Open(p, Options{MaxValueBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.ReadAll(); !errors.Is(err, ErrValueTooLarge) || in.Offset() != 0 || !strings.Contains(err.Error(), "4 KiB cap") {
		t.Fatalf("%v (read %d)", err, in.Offset())
	}
}

// TestReadLine: lines, a last line without "\n", CRLF kept, the cap at
// exactly max bytes.
func TestReadLine(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader("ab\r\ncdef\n\nxyz"), 16)
	var got []string
	for {
		l, complete, err := ReadLine(br, 4)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l)+map[bool]string{true: "|", false: "…"}[complete])
	}
	if strings.Join(got, ",") != "ab\r|,cdef|,|,xyz…" {
		t.Fatalf("%q", got)
	}
	if _, _, err := ReadLine(bufio.NewReader(strings.NewReader("abcde\n")), 4); !errors.Is(err, ErrValueTooLarge) {
		t.Fatalf("5-byte line under a 4-byte cap: %v", err)
	}
}

// TestJSONDecoderUnderCap: values below the cap decode as encoding/json
// does, however many there are in all.
func TestJSONDecoderUnderCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 2000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"k":"` + strings.Repeat("x", 90) + `"}`)
	}
	b.WriteString("]")
	dec := NewJSONDecoder(strings.NewReader(b.String()), 200)
	var v []json.RawMessage
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		var r json.RawMessage
		if err := dec.Decode(&r); err != nil {
			t.Fatal(len(v), err)
		}
		v = append(v, r)
	}
	if len(v) != 2000 {
		t.Fatal(len(v))
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"268435456": 256 << 20, "256MiB": 256 << 20, "1.5 GiB": 3 << 29, "512m": 512 << 20, "500MB": 500e6, "1k": 1024} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "12 parsecs", "0", "-5"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q): no error", bad)
		}
	}
	if FormatSize(256<<20) != "256 MiB" || FormatSize(1000) != "1000 B" {
		t.Error(FormatSize(256<<20), FormatSize(1000))
	}
}
