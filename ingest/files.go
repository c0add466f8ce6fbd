package ingest

import (
	"errors"
	"io"
	"os"
)

// HeadSize is how many leading bytes of a file Importer.Detect sees
// (64 KiB): enough for the first keys of every supported JSON format and
// the first lines of a CSV or log.
const HeadSize = 64 << 10

// ReadHead returns the first HeadSize bytes of path, or the whole file when
// it is shorter (an empty file gives an empty, non-nil slice). Errors are
// os.Open's and the read's, unwrapped (both name the path).
func ReadHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, HeadSize)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

// Exists reports whether path names a regular file (after symlinks); a
// missing file, a directory or a Stat error all give false.
func Exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
