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
	st := &jsonscan.Stream{R: io.MultiReader(d.dec.Buffered(), d.src), Buf: make([]byte, 0, jsonscan.ReadBlock), Limit: maxValue + 2*capSlack}
	k, i, prev, prevLen, wsRun := 0, 0, -1, 0, 0
	lead := 0
	handover := func(from int, skip bool) (int, error) {
		r := io.MultiReader(strings.NewReader(listPrefix), bytes.NewReader(st.Buf[from:]), st.Rest())
		dec := ingest.NewJSONDecoder(r, maxValue)
		dec.UseNumber()
		for range listTokens {
			if _, err := dec.Token(); err != nil {
				return k, fmt.Errorf("guidellm: the list prefix does not decode: %w", err)
			}
		}
		d.dec, d.src = dec, r
		d.decBase = base + st.Base + int64(from) - int64(len(listPrefix))
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
			for i < len(st.Buf) && jsonscan.IsWS(st.Buf[i]) {
				i++
				wsRun++
			}
			if i < len(st.Buf) {
				return true
			}
			dropped, ok := st.More(keep())
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
		if st.Buf[i] == ']' {
			return handover(i, false)
		}
		sep := i
		lead = 0 // before the first record More skips it uncounted
		if prev >= 0 {
			if st.Buf[i] != ',' {
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
			s := scanner{Scanner: jsonscan.Scanner{B: st.Buf, I: start}, subs: d.subs}
			// a record is split as it is validated; another value (or a
			// record fastObject leaves to encoding/json) is validated
			// whole and handed to record as bytes
			var ok bool
			o, ok = s.object(0)
			if !ok && !s.Short {
				clear(d.subs)
				s = scanner{Scanner: jsonscan.Scanner{B: st.Buf, I: start}}
				_, ok = s.Value(0)
			}
			if ok && int64(s.I-sep) <= maxValue-capSlack {
				raw, i = st.Buf[start:s.I], s.I
				break
			}
			if ok || !s.Short || int64(len(st.Buf)-sep) > maxValue+capSlack {
				return fallback() // invalid, or near the cap: the reference decides
			}
			// short (a number at the buffer's end is short too, as more
			// digits may follow)
			dropped, more := st.More(keep())
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
