package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzInput feeds arbitrary bytes — as they are, gzipped, or zstd-compressed
// — through OpenReader and the capped readers (ReadAll, ReadLine,
// NewJSONDecoder) under a 4 KiB cap: nothing may panic; what is read back
// is the bytes without a leading BOM (the compressed forms decompress to
// exactly that); SourceFile's digest is that of the bytes as given; the
// only errors are a damaged compressed stream (raw input that happens to
// start with a magic number) and the cap.
func FuzzInput(f *testing.F) {
	f.Add([]byte(doc), uint8(0))
	f.Add([]byte("\xef\xbb\xbf"+doc), uint8(1))
	f.Add([]byte("\xef\xbb\xbfline 1\nline 2\r\nline 3"), uint8(2))
	f.Add(gzipped(f, []byte(doc))[:20], uint8(0))
	f.Add(zstded(f, []byte(doc)), uint8(0))
	f.Add(bytes.Repeat([]byte("x"), 5000), uint8(0))
	f.Add([]byte(`[{"a": "`+string(bytes.Repeat([]byte("y"), 5000))+`"}]`), uint8(1))
	const capBytes = 4096
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		given := data
		switch mode % 3 {
		case 1:
			given = gzipped(t, data)
		case 2:
			given = zstded(t, data)
		}
		want := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		raw := mode%3 == 0 && (bytes.HasPrefix(data, []byte{0x1f, 0x8b}) || bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}))
		opt := Options{MaxValueBytes: capBytes}
		in, err := OpenReader("f", bytes.NewReader(given), opt)
		if err != nil {
			if !raw {
				t.Fatalf("open: %v", err)
			}
			return
		}
		if len(in.Head()) > HeadSize || !raw && !bytes.HasPrefix(want, in.Head()) {
			t.Fatalf("head %q is not the start of %q", in.Head(), want)
		}
		got, err := in.ReadAll()
		switch {
		case errors.Is(err, ErrValueTooLarge):
			if !raw && len(want) <= capBytes {
				t.Fatalf("%d bytes refused under a %d-byte cap", len(want), capBytes)
			}
		case err != nil:
			if !raw {
				t.Fatalf("read: %v", err)
			}
		case !raw && !bytes.Equal(got, want):
			t.Fatalf("read %q, want %q", got, want)
		}
		src, err := in.SourceFile("raw")
		if err == nil && (src.SHA256 != sha(given) || src.Bytes != int64(len(given))) {
			t.Fatalf("source %+v, want %d bytes", src, len(given))
		}
		in.Close()
		if raw {
			return
		}
		// the same content through the line and JSON readers
		br := bufio.NewReader(bytes.NewReader(want))
		var lines [][]byte
		for {
			l, complete, err := ReadLine(br, capBytes)
			if err == io.EOF {
				break
			}
			if errors.Is(err, ErrValueTooLarge) {
				lines = nil
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l) > capBytes {
				t.Fatalf("line of %d bytes under a %d-byte cap", len(l), capBytes)
			}
			lines = append(lines, l)
			if !complete {
				break
			}
		}
		if lines != nil {
			if joined := bytes.Join(lines, []byte("\n")); !bytes.Equal(bytes.TrimSuffix(want, []byte("\n")), joined) {
				t.Fatalf("lines %q, want %q", lines, want)
			}
		}
		dec := NewJSONDecoder(bytes.NewReader(want), capBytes)
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				break
			}
		}
	})
}
