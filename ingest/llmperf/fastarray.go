package llmperf

import (
	"bytes"
	"io"
	"strings"

	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// fastElements reads the top-level JSON array of rd element by element with
// the shared validating scanner (ingest/internal/jsonscan), handing each
// element's bytes to fn (they point into a buffer that the next element
// reuses: fn must not keep them). It stops at the first thing it does not
// read exactly as encoding/json would — no array, invalid JSON, a file cut
// short, an element near the cap, data after the array, a read error — and
// returns the rest of the input for the reference decoder, which says what
// is wrong: from the array's '[' when no element was read, else "[" and the
// input from the start of the last element handed to fn, which the
// reference must skip (skip 1) — it then sees what follows that element in
// the same state as if it had read everything. rest is nil when the array
// was read whole and only whitespace follows it. An error from fn is
// returned as is.
//
// encoding/json's Decoder framed each element (Decode into a RawMessage,
// which scans it and copies it) and fastFields then scanned it again: 0.32
// of 1.0 s on a 100k-request file. Here each element is scanned once in
// place and split by fastFields.
func fastElements(rd io.Reader, maxValue int64, fn func(raw []byte) error) (rest io.Reader, skip int, err error) {
	st := &jsonscan.Stream{R: rd, Buf: make([]byte, 0, jsonscan.ReadBlock), Limit: maxValue + 2*capSlack}
	i, arrayStart, last := 0, -1, -1 // last: where the last element handed to fn starts
	fallback := func() (io.Reader, int, error) {
		if last < 0 {
			return io.MultiReader(bytes.NewReader(st.Buf[max(arrayStart, 0):]), st.Rest()), 0, nil
		}
		return io.MultiReader(strings.NewReader("["), bytes.NewReader(st.Buf[last:]), st.Rest()), 1, nil
	}
	// keep is what the buffer must keep: everything before the array's
	// '[' is found, then from the '[' or the last element on
	keep := func() int {
		switch {
		case last >= 0:
			return last
		case arrayStart >= 0:
			return arrayStart
		}
		return 0
	}
	// more reads on (positions shift down by the bytes dropped); false
	// at the input's end or the cap
	more := func() bool {
		d, ok := st.More(keep())
		i -= d
		if arrayStart >= 0 {
			arrayStart -= d
		}
		if last >= 0 {
			last -= d
		}
		return ok
	}
	ws := func() bool {
		for {
			for i < len(st.Buf) && jsonscan.IsWS(st.Buf[i]) {
				i++
			}
			if i < len(st.Buf) {
				return true
			}
			if !more() {
				return false
			}
		}
	}
	if !ws() || st.Buf[i] != '[' {
		return fallback()
	}
	arrayStart = i
	i++
	if !ws() {
		return fallback()
	}
	if st.Buf[i] != ']' {
		for {
			for {
				s := jsonscan.Scanner{B: st.Buf, I: i}
				if s.Skip(1) {
					if int64(s.I-i) > maxValue-capSlack {
						return fallback()
					}
					if err := fn(st.Buf[i:s.I]); err != nil {
						return nil, 0, err
					}
					last, i = i, s.I
					break
				}
				// the element goes on past the buffer: read on (the
				// last element is kept for a fallback; this one is
				// scanned again from its start)
				if !s.Short || int64(len(st.Buf)-i) > maxValue+capSlack {
					return fallback()
				}
				if !more() {
					return fallback()
				}
			}
			if !ws() {
				return fallback()
			}
			if st.Buf[i] == ']' {
				break
			}
			if st.Buf[i] != ',' {
				return fallback()
			}
			i++
			if !ws() {
				return fallback()
			}
		}
	}
	// after the array: only whitespace to the end
	i++
	for {
		for i < len(st.Buf) && jsonscan.IsWS(st.Buf[i]) {
			i++
		}
		if i < len(st.Buf) || !more() {
			break
		}
	}
	if i < len(st.Buf) || st.Err != io.EOF {
		return fallback()
	}
	return nil, 0, nil
}

// capSlack keeps the fast path clear of the per-value cap: an element
// within capSlack bytes of it is left to the reference decoder, which
// refuses it with its message.
const capSlack = 64
