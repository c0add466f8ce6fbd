package guidellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// noFastList turns the fast path off (tests compare the two).
var noFastList bool

// readBlock is the size of the fast path's reads.
const readBlock = 1 << 20

// recordStream is the fast path's buffered input: buf holds the stream's
// bytes from offset base (relative to where the stream began).
type recordStream struct {
	r    io.Reader
	buf  []byte
	base int64
	err  error // what ended the input (io.EOF at its end)
	// limit bounds the bytes held (see more)
	limit int64
}

// more reads more input, dropping buf[:keep] first; it returns the bytes
// dropped (positions in buf move down by as many) and false when the
// input has ended. It reads until the buffer is full and keeps at least
// as much room as the data kept, so that a value read again from its
// start after each call is read O(1) times on average, whatever the size
// of the reads the reader returns.
//
// The buffer holds at most st.limit bytes after buf[:keep] is dropped,
// and more returns false when it is full: a value longer than the cap is
// left to the reference decoder, and no more of it is read or kept here.
func (st *recordStream) more(keep int) (int, bool) {
	if st.err != nil {
		return 0, false
	}
	limit := st.limit
	if int64(len(st.buf)-keep) >= limit {
		return 0, false
	}
	if keep > 0 {
		n := copy(st.buf, st.buf[keep:])
		st.buf = st.buf[:n]
		st.base += int64(keep)
	}
	want := int64(len(st.buf) + max(readBlock/2, len(st.buf)))
	want = max(min(want, limit), int64(len(st.buf))+1)
	if int64(cap(st.buf)) < want {
		nb := make([]byte, len(st.buf), max(min(2*int64(cap(st.buf)), limit), want))
		copy(nb, st.buf)
		st.buf = nb
	}
	end := int(min(int64(cap(st.buf)), max(want, int64(len(st.buf))+1)))
	got := 0
	for len(st.buf) < end {
		n, err := st.r.Read(st.buf[len(st.buf):end])
		st.buf = st.buf[:len(st.buf)+n]
		got += n
		if err != nil {
			st.err = err
			break
		}
	}
	return keep, got > 0
}

// rest is the input after buf, for the reference decoder.
func (st *recordStream) rest() io.Reader {
	switch {
	case st.err == nil:
		return st.r
	case st.err == io.EOF:
		return strings.NewReader("")
	}
	return errReader{st.err}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// capSlack keeps the fast path clear of the per-value cap: a record
// within capSlack bytes of it is left to the reference decoder, whose cap
// reader then decides as it always has.
const capSlack = 64

// listPrefix re-creates the nesting of a request list for a new decoder:
// top-level object, benchmarks array, benchmark object, requests object,
// the list; listTokens is its token count.
// listKeyBytes are the bytes of its keys, the only part of it a decoder's
// scanner counts.
const (
	listPrefix   = `{"benchmarks":[{"requests":{"list":[`
	listTokens   = 8
	listKeyBytes = int64(len(`"benchmarks""requests""list"`))
)

// scannedBytes reads the count of bytes dec's value scanner has read
// (encoding/json's unexported scan.bytes, the offset of its syntax
// errors); false when this encoding/json has no such count (the fast path
// then stays off).
func scannedBytes(dec *json.Decoder) (int64, bool) {
	v := reflect.ValueOf(dec).Elem().FieldByName("scan")
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return 0, false
	}
	b := v.FieldByName("bytes")
	if !b.IsValid() || b.Kind() != reflect.Int64 {
		return 0, false
	}
	return b.Int(), true
}

// fastList reads the records of request list list (d.dec just read its
// '[') with the validating scanner, each record's bytes scanned once
// instead of by encoding/json's decoder (a scan, a rescan, a copy), and
// converts them with record. It reads from what the decoder holds
// buffered and its source on, and hands over to a new decoder (d.dec,
// offsets kept through d.decBase) standing where the reference would be:
// before the list's ']' — or, at anything not plain (invalid JSON, a cut,
// a record near the cap, a read error), before the last record read,
// which the new decoder skips, or before the first when there is none, so
// that the reference reads on and reports as it always has
// (TestFastListMatches, FuzzFastList). It returns the number of records
// read.
func (d *decoder) fastList(b *benchmark, list, status, lw string) (int, error) {
	if d.src == nil || noFastList {
		return 0, nil
	}
	scanned, ok := scannedBytes(d.dec)
	if !ok {
		return 0, nil
	}
	if d.subs == nil {
		d.subs = map[*byte]obj{}
	}
	defer clear(d.subs)
	// scanned counts as the reference decoder would have by now: every
	// record's bytes, and the whitespace after a comma (before the first
	// record More skips it uncounted)
	scanned += d.scanBase
	maxValue := d.opt.MaxValue()
	base := d.decBase + d.dec.InputOffset()
	st := &recordStream{r: io.MultiReader(d.dec.Buffered(), d.src), buf: make([]byte, 0, readBlock), limit: maxValue + 2*capSlack}
	k, i, prev, prevLen, wsRun := 0, 0, -1, 0, 0
	lead := 0
	handover := func(from int, skip bool) (int, error) {
		r := io.MultiReader(strings.NewReader(listPrefix), bytes.NewReader(st.buf[from:]), st.rest())
		dec := ingest.NewJSONDecoder(r, maxValue)
		dec.UseNumber()
		for range listTokens {
			if _, err := dec.Token(); err != nil {
				return k, fmt.Errorf("guidellm: the list prefix does not decode: %w", err)
			}
		}
		d.dec, d.src = dec, r
		d.decBase = base + st.base + int64(from) - int64(len(listPrefix))
		d.scanBase = scanned - listKeyBytes
		if skip {
			d.scanBase -= int64(prevLen)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return k, d.fail(fmt.Sprintf("%s[%d]", lw, k-1), err)
			}
		}
		return k, nil
	}
	fallback := func() (int, error) {
		if prev >= 0 {
			return handover(prev, true)
		}
		return handover(0, false)
	}
	keep := func() int { return max(prev, 0) }
	// ws skips whitespace, reading on; false at the input's end.
	ws := func() bool {
		for {
			for i < len(st.buf) && isWS(st.buf[i]) {
				i++
				wsRun++
			}
			if i < len(st.buf) {
				return true
			}
			dropped, ok := st.more(keep())
			i -= dropped
			if prev >= 0 {
				prev -= dropped
			}
			if !ok {
				return false
			}
		}
	}
	for {
		if !ws() {
			return fallback()
		}
		if st.buf[i] == ']' {
			return handover(i, false)
		}
		sep := i
		lead = 0 // before the first record More skips it uncounted
		if prev >= 0 {
			if st.buf[i] != ',' {
				return fallback()
			}
			i++
			wsRun = 0
			if !ws() {
				return fallback()
			}
			lead = wsRun // counted with the record, once it is read
		}
		start := i
		var raw []byte
		var o obj
		for {
			clear(d.subs)
			s := scanner{Scanner: jsonscan.Scanner{B: st.buf, I: start}, subs: d.subs}
			// a record is split as it is validated; another value (or a
			// record fastObject leaves to encoding/json) is validated
			// whole and handed to record as bytes
			var ok bool
			o, ok = s.object(0)
			if !ok && !s.Short {
				clear(d.subs)
				s = scanner{Scanner: jsonscan.Scanner{B: st.buf, I: start}}
				_, ok = s.Value(0)
			}
			if ok && int64(s.I-sep) <= maxValue-capSlack {
				raw, i = st.buf[start:s.I], s.I
				break
			}
			if ok || !s.Short || int64(len(st.buf)-sep) > maxValue+capSlack {
				return fallback() // invalid, or near the cap: the reference decides
			}
			// short (a number at the buffer's end is short too, as more
			// digits may follow)
			dropped, more := st.more(keep())
			start, sep, i = start-dropped, sep-dropped, i-dropped
			if prev >= 0 {
				prev -= dropped
			}
			if !more {
				return fallback()
			}
		}
		if err := d.record(b, list, status, fmt.Sprintf("%s[%d]", lw, k), raw, o); err != nil {
			return k, err
		}
		k++
		prev, prevLen = start, len(raw)
		scanned += int64(lead + len(raw))
	}
}
