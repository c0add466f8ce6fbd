package jsonscan

import (
	"io"
	"strings"
)

// ReadBlock is the size of a Stream's reads.
const ReadBlock = 1 << 20

// Stream is the fast paths' buffered input (guidellm's and inference-
// perf's record lists): Buf holds the stream's bytes from offset Base
// (relative to where the stream began), read from R.
type Stream struct {
	R    io.Reader
	Buf  []byte
	Base int64
	Err  error // what ended the input (io.EOF at its end)
	// Limit bounds the bytes held (see More)
	Limit int64
}

// More reads more input, dropping buf[:keep] first; it returns the bytes
// dropped (positions in buf move down by as many) and false when the
// input has ended. It reads until the buffer is full and keeps at least
// as much room as the data kept, so that a value read again from its
// start after each call is read O(1) times on average, whatever the size
// of the reads the reader returns.
//
// The buffer holds at most st.Limit bytes after buf[:keep] is dropped,
// and more returns false when it is full: a value longer than the cap is
// left to the reference decoder, and no more of it is read or kept here.
func (st *Stream) More(keep int) (int, bool) {
	if st.Err != nil {
		return 0, false
	}
	limit := st.Limit
	if int64(len(st.Buf)-keep) >= limit {
		return 0, false
	}
	if keep > 0 {
		n := copy(st.Buf, st.Buf[keep:])
		st.Buf = st.Buf[:n]
		st.Base += int64(keep)
	}
	want := int64(len(st.Buf) + max(ReadBlock/2, len(st.Buf)))
	want = max(min(want, limit), int64(len(st.Buf))+1)
	if int64(cap(st.Buf)) < want {
		nb := make([]byte, len(st.Buf), max(min(2*int64(cap(st.Buf)), limit), want))
		copy(nb, st.Buf)
		st.Buf = nb
	}
	end := int(min(int64(cap(st.Buf)), max(want, int64(len(st.Buf))+1)))
	got := 0
	for len(st.Buf) < end {
		n, err := st.R.Read(st.Buf[len(st.Buf):end])
		st.Buf = st.Buf[:len(st.Buf)+n]
		got += n
		if err != nil {
			st.Err = err
			break
		}
	}
	return keep, got > 0
}

// Rest is the input after Buf, for the reference decoder.
func (st *Stream) Rest() io.Reader {
	switch {
	case st.Err == nil:
		return st.R
	case st.Err == io.EOF:
		return strings.NewReader("")
	}
	return errReader{st.Err}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// IsWS reports whether c is JSON whitespace.
func IsWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
