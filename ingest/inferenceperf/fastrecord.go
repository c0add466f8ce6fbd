package inferenceperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// obj is one JSON object's members as parseRecord reads them: raw values
// by name (encoding/json's map[string]json.RawMessage), and what the fast
// path (scanRecords) already read of them while validating: the objects
// it descended into, the plain number lists, the lists of strings.
// Objects decoded by encoding/json have only m.
type obj struct {
	// respAt is where the record's "response" value starts in the
	// scanner's input (the fast path; see respHints)
	respAt int
	m      map[string]json.RawMessage
	subs   map[string]*obj
	nums   map[string][]float64
	strs   map[string][][]byte // string literals, quotes included
}

// object is member k as an object: false when it is not one (null
// included), as json.Unmarshal into a map decides.
func (o *obj) object(k string) (*obj, bool) {
	if sub, ok := o.subs[k]; ok {
		return sub, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(o.m[k], &m) != nil || m == nil {
		return nil, false
	}
	return &obj{m: m}, true
}

// descendDepth is how deep the fast path builds objs (a record, its info,
// the response metrics and their server usage).
const descendDepth = 4

// object reads the object at i (its '{' next) as an obj, validating every
// value. False for what only encoding/json decides exactly (a name with
// escapes or invalid UTF-8, a name given twice), for invalid JSON, and
// when the input ends inside the object (short).
func (s *scanner) object(depth int) (*obj, bool) {
	o := &obj{m: make(map[string]json.RawMessage, 8)}
	ok := s.Members(func(key []byte) bool {
		if !utf8.Valid(key) {
			return false
		}
		k := string(key)
		if _, dup := o.m[k]; dup {
			return false
		}
		start := s.I
		if depth == 0 && k == "response" {
			if s.skipLen > 0 && start == s.skipAt {
				// the value pass 1 validated, if its bytes are the same
				if start+s.skipLen > len(s.B) {
					s.Short = true
					return false
				}
				v := s.B[start : start+s.skipLen]
				if maphash.Bytes(s.seed, v) == s.skipHash {
					s.skipped++
					s.I += s.skipLen
					o.m[k] = v
					return true
				}
			}
			raw, ok := s.Value(depth + 1)
			o.m[k] = raw
			o.respAt = start
			return ok
		}
		switch s.Next() {
		case '{':
			if depth+1 < descendDepth {
				sub, ok := s.object(depth + 1)
				if !ok {
					return false
				}
				if o.subs == nil {
					o.subs = map[string]*obj{}
				}
				o.subs[k] = sub
				o.m[k] = s.B[start:s.I]
				return true
			}
		case '[':
			if k == "chunk_times" || k == "output_token_times" {
				if v, ok := s.numbers(); ok {
					if o.nums == nil {
						o.nums = map[string][]float64{}
					}
					o.nums[k] = v
					o.m[k] = s.B[start:s.I]
					return true
				}
				if s.Short {
					return false
				}
				s.I = start
			} else if k == "response_chunks" {
				if v, ok := s.strings(); ok {
					if o.strs == nil {
						o.strs = map[string][][]byte{}
					}
					o.strs[k] = v
					o.m[k] = s.B[start:s.I]
					return true
				}
				if s.Short {
					return false
				}
				s.I = start
			}
		}
		raw, ok := s.Value(depth + 1)
		o.m[k] = raw
		return ok
	})
	return o, ok
}

// strings reads a list of string literals (its '[' next); ok is false (i
// anywhere) when an element is anything else.
func (s *scanner) strings() ([][]byte, bool) {
	s.I++ // '['
	s.WS()
	out := make([][]byte, 0, 64)
	if s.Eat(']') {
		return out, true
	}
	for {
		lit, _, ok := s.Str()
		if !ok {
			return nil, false
		}
		out = append(out, lit)
		s.WS()
		if s.Eat(']') {
			return out, true
		}
		if !s.Eat(',') {
			return nil, false
		}
		s.WS()
	}
}

// appendUnquoted appends the decoded literal to dst: by hand for
// literals of valid UTF-8 with the one-character escapes, by encoding/json
// for the rest (\u escapes, invalid UTF-8, which it replaces).
func appendUnquoted(dst, lit []byte) []byte {
	in, base := lit[1:len(lit)-1], len(dst)
	ascii := true
	for _, c := range in {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii && !utf8.Valid(in) {
		return appendSlow(dst, lit)
	}
	for {
		k := bytes.IndexByte(in, '\\')
		if k < 0 {
			return append(dst, in...)
		}
		dst = append(dst, in[:k]...)
		var c byte
		switch in[k+1] {
		case '"', '\\', '/':
			c = in[k+1]
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default: // \u
			return appendSlow(dst[:base], lit)
		}
		dst = append(dst, c)
		in = in[k+2:]
	}
}

// appendSlow appends lit decoded by encoding/json. dst must not already
// hold any part of lit.
func appendSlow(dst, lit []byte) []byte {
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		panic("inferenceperf: a validated string literal does not decode: " + err.Error())
	}
	return append(dst, s...)
}

// nChunks is the number of response_chunks.
func (r *record) nChunks() int {
	if r.chunkLits != nil {
		return len(r.chunkLits)
	}
	return len(r.chunks)
}

// chunkBytes appends response chunk i, decoded, to dst.
func (r *record) chunkBytes(dst []byte, i int) []byte {
	if r.chunkLits != nil {
		return appendUnquoted(dst, r.chunkLits[i])
	}
	return append(dst, r.chunks[i]...)
}

// capSlack keeps the fast path clear of the per-value cap: an element
// (with the separator before it) within capSlack bytes of it is left to
// the reference decoder, whose cap reader then decides as it always has.
const capSlack = 64

// scanRecords decodes the array one element at a time, calling fn with
// each record's 0-based index; it stops after limit records when limit ≥ 0.
// An array cut short returns the number of complete records and a note
// saying where the cut is; anything else undecodable is a positioned error
// ("record 7: info.output_token_times: not a list of numbers").
//
// The records are read by a validating scanner (scanner.object) straight
// into parseRecord's objs, each value's bytes scanned once, the number
// lists parsed and the response chunks split as they are validated. It
// hands over to the reference, encoding/json (refScan), at the last record
// it read whenever anything is not plain: invalid JSON, a cut, data after
// the array, a value near the cap, a read error, and a record the scanner
// does not decode exactly as encoding/json would (escaped or repeated
// names: that record alone is decoded by encoding/json). The records, the
// errors and the notes are the reference's (TestFastScanMatches,
// FuzzFastScan). The records' response chunks point into the reader's
// buffer: fn must not keep them.
func scanRecords(path string, rd io.Reader, maxValue int64, limit int, fn func(i int, r *record) error) (int, string, error) {
	return scanRecordsHinted(path, rd, maxValue, limit, nil, fn)
}

// respHints carry each record's "response" value — the raw SSE text, the
// largest value of a v0.6+ record, which the importer does not read —
// from the pass that validates the file to the pass that reads it again:
// its offset in the record, length and hash (in the record's resp
// fields, set by the first pass; looked up by get in the next). The next
// pass takes a value whose bytes hash the same without validating them
// again; any other value it validates.
type respHints struct {
	seed    maphash.Seed
	get     func(i int) (off, n int, h uint64) // nil in the first pass
	skipped int                                // values taken unvalidated (for tests)
}

// scanRecordsHinted is scanRecords with respHints (nil: none).
func scanRecordsHinted(path string, rd io.Reader, maxValue int64, limit int, hints *respHints, fn func(i int, r *record) error) (int, string, error) {
	st := &jsonscan.Stream{R: rd, Buf: make([]byte, 0, jsonscan.ReadBlock), Limit: maxValue + 2*capSlack}
	n := 0
	prev := -1 // where the last record handed to fn starts
	arrayStart := -1
	// fallback hands the rest to the reference: from the '[' before any
	// record was read, else from the last record read (skipped there).
	fallback := func() (int, string, error) {
		if prev < 0 {
			from := max(arrayStart, 0)
			dec := ingest.NewJSONDecoder(io.MultiReader(bytes.NewReader(st.Buf[from:]), st.Rest()), maxValue)
			return refScan(path, dec, st.Base+int64(from), 0, 0, limit, fn)
		}
		dec := ingest.NewJSONDecoder(io.MultiReader(strings.NewReader("["), bytes.NewReader(st.Buf[prev:]), st.Rest()), maxValue)
		return refScan(path, dec, st.Base+int64(prev)-1, n, 1, limit, fn)
	}
	i := 0
	keep := func() int {
		if prev >= 0 {
			return prev
		}
		return max(arrayStart, 0)
	}
	// ws skips whitespace, reading on; false at the input's end.
	ws := func() bool {
		for {
			for i < len(st.Buf) && jsonscan.IsWS(st.Buf[i]) {
				i++
			}
			if i < len(st.Buf) {
				return true
			}
			k := keep()
			if arrayStart < 0 {
				k = 0 // before the array: nothing may be dropped
			}
			d, ok := st.More(k)
			i -= d
			prev, arrayStart = shift(prev, d), shift(arrayStart, d)
			if !ok {
				return false
			}
		}
	}
	if !ws() || st.Buf[i] != '[' {
		return fallback()
	}
	arrayStart = i
	i++
	if limit == 0 {
		return 0, "", nil
	}
	if !ws() {
		return fallback()
	}
	if st.Buf[i] != ']' {
		for {
			sep := i // the separator before the element: the cap counts it
			if prev >= 0 {
				sep = prev // approximately: the record before it and the separator
			}
			start := i
			var r *record
			var perr error
			for {
				s := scanner{Scanner: jsonscan.Scanner{B: st.Buf, I: start}, skipAt: -1}
				if hints != nil && hints.get != nil {
					off, size, h := hints.get(n)
					s.skipAt, s.skipLen, s.skipHash, s.seed = start+off, size, h, hints.seed
				}
				o, ok := s.object(0)
				if hints != nil {
					hints.skipped += s.skipped
				}
				if ok {
					if int64(s.I-sep) > maxValue-capSlack {
						return fallback()
					}
					r, perr = parseRecord(o)
					if perr == nil && hints != nil && hints.get == nil {
						if v := o.m["response"]; len(v) > 0 && o.respAt >= start {
							r.respOff, r.respLen, r.respHash = o.respAt-start, len(v), maphash.Bytes(hints.seed, v)
						}
					}
					i = s.I
					break
				}
				if s.Short {
					if int64(len(st.Buf)-sep) > maxValue+capSlack {
						return fallback()
					}
					d, more := st.More(keep())
					start, sep, i = start-d, sep-d, i-d
					prev, arrayStart = shift(prev, d), shift(arrayStart, d)
					if !more {
						return fallback()
					}
					continue
				}
				// not an object the scanner takes: encoding/json decodes
				// it when it is valid JSON
				s = scanner{Scanner: jsonscan.Scanner{B: st.Buf, I: start}}
				raw, valid := s.Value(0)
				if !valid && s.Short {
					if int64(len(st.Buf)-sep) > maxValue+capSlack {
						return fallback()
					}
					d, more := st.More(keep())
					start, sep, i = start-d, sep-d, i-d
					prev, arrayStart = shift(prev, d), shift(arrayStart, d)
					if !more {
						return fallback()
					}
					continue
				}
				var fields map[string]json.RawMessage
				if !valid || int64(s.I-sep) > maxValue-capSlack || json.Unmarshal(raw, &fields) != nil || fields == nil {
					return fallback()
				}
				r, perr = parseRecord(&obj{m: fields})
				i = s.I
				break
			}
			if perr != nil {
				return 0, "", ingest.Wrap(path, fmt.Sprintf("record %d", n+1), perr)
			}
			if err := fn(n, r); err != nil {
				return 0, "", err
			}
			n++
			prev = start
			if limit >= 0 && n >= limit {
				return n, "", nil
			}
			if !ws() {
				return fallback()
			}
			if st.Buf[i] == ',' {
				i++
				if !ws() {
					return fallback()
				}
				continue
			}
			if st.Buf[i] != ']' {
				return fallback()
			}
			break
		}
	}
	i++ // ']'
	if limit >= 0 {
		return n, "", nil
	}
	if ws() || st.Err != io.EOF {
		return fallback() // data after the array, or a read error
	}
	return n, "", nil
}

// shift moves a buffer position down by d (-1 stays -1).
func shift(pos, d int) int {
	if pos < 0 {
		return pos
	}
	return pos - d
}
