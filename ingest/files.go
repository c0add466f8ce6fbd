package ingest

import (
	"os"
)

// HeadSize is how many leading bytes of a file Importer.Detect sees
// (64 KiB): enough for the first keys of every supported JSON format and
// the first lines of a CSV or log.
const HeadSize = 64 << 10

// ReadHead returns the first HeadSize bytes of path's content as an Input
// decodes it (decompressed, without a byte-order mark), or the whole
// content when it is shorter (an empty file gives an empty, non-nil
// slice). Errors are Open's. It opens path: for a file beside the input
// (a companion's kind), not for the input itself, whose Input has its head.
func ReadHead(path string) ([]byte, error) {
	in, err := Open(path, Options{NoHash: true})
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return in.Head(), nil
}

// Exists reports whether path names a regular file (after symlinks); a
// missing file, a directory or a Stat error all give false.
func Exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
