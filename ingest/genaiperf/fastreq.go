package genaiperf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/ingest"
)

// reqParser decodes one element of "requests" from its bytes. parse is a
// hand-written fast path for the shape perf_analyzer writes; it gives up
// (ok = false) on anything it does not decode exactly as encoding/json
// would — a key differing from a field name only in case, a repeated
// field, a value of an unexpected type, null where a value is expected,
// invalid JSON, \u escapes of surrogates, invalid UTF-8 — and decode then
// uses encoding/json. FuzzParseRequest checks that when it answers, its
// answer equals encoding/json's.
//
// The strings it returns ("response" values) are substrings of one string
// per request, so a request costs a handful of allocations, not one per
// read.
type reqParser struct {
	s     []byte
	i     int
	text  []byte     // unescaped response strings, concatenated
	spans [][2]int32 // each response's span in text; -1,-1: null
	strs  []string
	depth int
	tpl   strTemplate // of the "response" strings, kept across requests
	prev  [2]int      // the previous response string of the request (escaped span in s); 0,0: none
}

// decode fills rr from the request's bytes.
func (p *reqParser) decode(raw []byte, rr *rawRequest) error {
	if p.parse(raw, rr) {
		return nil
	}
	*rr = rawRequest{}
	return timeTypeError(json.Unmarshal(raw, rr))
}

// timeTypeError explains encoding/json's error for a timestamp that is a
// number but no integer (1700000000.123: Unix seconds with a fraction):
// perf_analyzer writes Unix nanoseconds as integers; the magnitude names
// the unit (ingest.EpochMismatch). Other errors are returned as they are.
func timeTypeError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || (te.Field != "timestamp" && te.Field != "response_timestamps") {
		return err
	}
	lit, ok := strings.CutPrefix(te.Value, "number ")
	if !ok {
		return err
	}
	msg := fmt.Sprintf("%s %s is not an integer: perf_analyzer writes Unix nanoseconds as integers (%s)", te.Field, lit, ingest.CheckTimeUnit)
	if x, perr := strconv.ParseFloat(lit, 64); perr == nil {
		if why := ingest.EpochMismatch(x, "ns", ingest.Nanoseconds); why != "" {
			msg += "; " + why
		}
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// parse is the fast path on the bytes of one request.
func (p *reqParser) parse(raw []byte, rr *rawRequest) bool {
	n, ok, _ := p.parseObject(raw, rr)
	if !ok {
		return false
	}
	p.i = n
	p.ws()
	return p.i == len(p.s)
}

// parseObject is the fast path on a buffer that starts with a request
// (after whitespace): on success n is the length of the request object. On
// failure short tells whether the parser ran out of buffer, so that more
// input may succeed.
func (p *reqParser) parseObject(buf []byte, rr *rawRequest) (n int, ok, short bool) {
	*p = reqParser{s: buf, text: p.text[:0], spans: p.spans[:0], strs: p.strs, tpl: p.tpl}
	*rr = rawRequest{ResponseTimestamps: rr.ResponseTimestamps[:0], ResponseOutputs: rr.ResponseOutputs[:0]}
	var seen [5]bool
	p.ws()
	if !p.is('{') {
		return 0, false, p.i >= len(p.s)
	}
	ok = p.object(func(key []byte) bool {
		k := -1
		switch string(key) {
		case "timestamp":
			k = 0
		case "sequence_id":
			k = 1
		case "request_inputs":
			k = 2
		case "response_timestamps":
			k = 3
		case "response_outputs":
			k = 4
		default:
			return !foldsTo(key, "timestamp", "sequence_id", "request_inputs", "response_timestamps", "response_outputs") && p.skip(0)
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		switch k {
		case 0:
			n, ok := p.int()
			rr.Timestamp = &n
			return ok
		case 1:
			t, ok := p.number()
			rr.SequenceID = json.Number(t)
			return ok
		case 2:
			if !p.is('{') {
				return false
			}
			rr.RequestInputs = map[string]json.RawMessage{}
			return p.object(func(key []byte) bool {
				if bytes.IndexByte(key, '\\') >= 0 {
					return false
				}
				start := p.i
				if !p.skip(0) {
					return false
				}
				rr.RequestInputs[string(key)] = json.RawMessage(bytes.Clone(p.s[start:p.i]))
				return true
			})
		case 3:
			if !p.is('[') {
				return false
			}
			var ok bool
			if rr.ResponseTimestamps, ok = p.compactInts(rr.ResponseTimestamps); ok {
				return true
			}
			return p.array(func() bool {
				n, ok := p.int()
				rr.ResponseTimestamps = append(rr.ResponseTimestamps, n)
				return ok
			})
		default:
			if !p.is('[') {
				return false
			}
			return p.array(func() bool { return p.output(rr) })
		}
	})
	if !ok {
		return 0, false, p.i >= len(p.s)
	}
	if len(p.spans) > 0 {
		all := string(p.text)
		p.strs = append(p.strs[:0], make([]string, len(p.spans))...)
		for j, sp := range p.spans {
			if sp[0] < 0 {
				continue
			}
			p.strs[j] = all[sp[0]:sp[1]]
			rr.ResponseOutputs[j].Response = &p.strs[j]
		}
		// The next request must not overwrite these strings.
		p.strs = nil
	}
	return p.i, true, false
}

// output reads one element of response_outputs: an object with
// "response" (a string) and/or "text_output" (not null).
func (p *reqParser) output(rr *rawRequest) bool {
	if !p.is('{') {
		return false
	}
	var o responseOutput
	span := [2]int32{-1, -1}
	var seenR, seenT bool
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "response":
			if seenR || !p.is('"') {
				return false
			}
			seenR = true
			start, at := len(p.text), p.i+1
			var prev []byte
			if p.prev[1] > 0 {
				prev = p.s[p.prev[0]:p.prev[1]]
			}
			if !p.response(prev) {
				return false
			}
			p.prev = [2]int{at, p.i - 1}
			span = [2]int32{int32(start), int32(len(p.text))}
			return true
		case "text_output":
			if seenT || p.is('n') {
				return false
			}
			seenT = true
			start := p.i
			if !p.skip(0) {
				return false
			}
			o.TextOutput = json.RawMessage(bytes.Clone(p.s[start:p.i]))
			return true
		}
		return !foldsTo(key, "response", "text_output") && p.skip(0)
	})
	rr.ResponseOutputs = append(rr.ResponseOutputs, o)
	p.spans = append(p.spans, span)
	return ok
}

// foldsTo reports whether key matches one of names case-insensitively
// without being equal to it (encoding/json would decode it into that
// field). Keys of lower-case ASCII letters, digits and '_' never do.
func foldsTo(key []byte, names ...string) bool {
	plain := true
	for _, c := range key {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			plain = false
			break
		}
	}
	if plain {
		return false
	}
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	// Unicode folding (K, ſ, …) and escaped keys: let encoding/json decide.
	return !utf8.Valid(key) || bytes.IndexByte(key, '\\') >= 0 || hasNonASCII(key)
}

func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func (p *reqParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *reqParser) is(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

// object reads an object; field is called with the scanner at the value
// (whitespace skipped) and must consume it. Keys are raw (escaped) bytes;
// a key with a backslash is handed to field as is and matches no name.
func (p *reqParser) object(field func(key []byte) bool) bool {
	if p.depth++; p.depth > maxDepth {
		return false
	}
	defer func() { p.depth-- }()
	p.i++ // '{'
	p.ws()
	if p.is('}') {
		p.i++
		return true
	}
	for {
		p.ws()
		if !p.is('"') {
			return false
		}
		start := p.i + 1
		if !p.skipString() {
			return false
		}
		key := p.s[start : p.i-1]
		p.ws()
		if !p.is(':') {
			return false
		}
		p.i++
		p.ws()
		if !field(key) {
			return false
		}
		p.ws()
		switch {
		case p.is(','):
			p.i++
		case p.is('}'):
			p.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array, calling elem at each element.
func (p *reqParser) array(elem func() bool) bool {
	if p.depth++; p.depth > maxDepth {
		return false
	}
	defer func() { p.depth-- }()
	p.i++ // '['
	p.ws()
	if p.is(']') {
		p.i++
		return true
	}
	for {
		p.ws()
		if !elem() {
			return false
		}
		p.ws()
		switch {
		case p.is(','):
			p.i++
		case p.is(']'):
			p.i++
			return true
		default:
			return false
		}
	}
}

// skipString validates a string at p.i and moves past it. It refuses
// control characters and invalid UTF-8 (encoding/json rejects the one and
// rewrites the other).
func (p *reqParser) skipString() bool {
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c == '\\':
			if p.i+1 >= len(p.s) {
				p.i = len(p.s) // short
				return false
			}
			switch p.s[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.s) {
					p.i = len(p.s)
					return false
				}
				if _, ok := p.hex4(p.i + 2); !ok {
					return false
				}
				p.i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRune(p.s[p.i:])
			if r == utf8.RuneError && size <= 1 {
				if !utf8.FullRune(p.s[p.i:]) {
					p.i = len(p.s)
				}
				return false
			}
			p.i += size
		}
	}
	return false
}

func (p *reqParser) hex4(at int) (rune, bool) {
	if at+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range p.s[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// str reads a string at p.i and appends its unescaped contents to p.text.
//
// It copies eight bytes at a time while they hold no quote, backslash,
// control or non-ASCII byte (see stopMask): the word is stored whole and
// the output advanced past its plain bytes only, so p.text keeps eight
// bytes of slack beyond the longest string the rest of p.s can hold.
func (p *reqParser) str() bool {
	s := p.s
	i := p.i + 1
	if need := len(p.text) + len(s) - i + 8; cap(p.text) < need {
		p.text = append(p.text[:cap(p.text)], make([]byte, need-cap(p.text))...)[:len(p.text)]
	}
	t := p.text[:cap(p.text)]
	k := len(p.text)
	for {
		for i+8 <= len(s) {
			x := binary.LittleEndian.Uint64(s[i:])
			binary.LittleEndian.PutUint64(t[k:], x)
			if m := stopMask(x); m != 0 {
				n := bits.TrailingZeros64(m) >> 3
				i, k = i+n, k+n
				break
			}
			i, k = i+8, k+8
		}
		for i < len(s) && !strStop[s[i]] {
			t[k] = s[i]
			i, k = i+1, k+1
		}
		if i >= len(s) {
			p.i = i // short: more input may end the string
			return false
		}
		switch c := s[i]; {
		case c == '"':
			p.i, p.text = i+1, t[:k]
			return true
		case c == '\\':
			if i+1 >= len(s) {
				p.i = len(s)
				return false
			}
			e := s[i+1]
			if b := unescapeByte[e]; b != 0 {
				t[k] = b
				i, k = i+2, k+1
				continue
			}
			switch e {
			case 'u':
				p.i = i
				if i+6 > len(s) {
					p.i = len(s)
					return false
				}
				r, ok := p.hex4(i + 2)
				if !ok || utf16Surrogate(r) {
					return false
				}
				k += utf8.EncodeRune(t[k:], r) // ≤ 3 bytes for 6 read
				i += 6
				continue
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size <= 1 {
				if !utf8.FullRune(s[i:]) {
					p.i = len(s)
				}
				return false
			}
			k += copy(t[k:], s[i:i+size])
			i += size
		}
	}
}

// unescapeByte is the byte each one-character JSON escape stands for
// (\" \\ \/ \b \f \n \r \t), by the character after the backslash; 0 for
// the others (\u, invalid).
var unescapeByte = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// stopMask flags, in the high bit of each byte of the little-endian word
// x, the bytes of strStop: quote, backslash, below 0x20, non-ASCII. Flags
// above the lowest one may be false positives (borrows); the lowest is
// exact.
func stopMask(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	m := x&hi | (x-lo*0x20)&^x&hi
	y := x ^ (lo * '\\')
	m |= (y - lo) &^ y & hi
	y = x ^ (lo * '"')
	m |= (y - lo) &^ y & hi
	return m
}

// strStop marks the bytes that end a plain run inside a string: the quote,
// the backslash, control characters and non-ASCII bytes (checked as UTF-8).
var strStop = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

// maxDepth bounds the fast path's nesting (encoding/json allows 10000).
const maxDepth = 200

func utf16Surrogate(r rune) bool { return 0xD800 <= r && r < 0xE000 }

// number reads a JSON number and returns its text.
func (p *reqParser) number() (string, bool) {
	start := p.i
	if p.is('-') {
		p.i++
	}
	switch {
	case p.is('0'):
		p.i++
	case p.i < len(p.s) && '1' <= p.s[p.i] && p.s[p.i] <= '9':
		p.digits()
	default:
		return "", false
	}
	if p.is('.') {
		p.i++
		if p.digits() == 0 {
			return "", false
		}
	}
	if p.is('e') || p.is('E') {
		p.i++
		if p.is('+') || p.is('-') {
			p.i++
		}
		if p.digits() == 0 {
			return "", false
		}
	}
	return string(p.s[start:p.i]), true
}

func (p *reqParser) digits() int {
	n := 0
	for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// int reads an integer literal that fits int64.
func (p *reqParser) int() (int64, bool) {
	neg := p.is('-')
	if neg {
		p.i++
	}
	d0 := p.i
	var n uint64
	for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
		if n > (1<<63)/10 {
			return 0, false
		}
		n = n*10 + uint64(p.s[p.i]-'0')
		p.i++
	}
	nd := p.i - d0
	if nd == 0 || nd > 1 && p.s[d0] == '0' || p.is('.') || p.is('e') || p.is('E') {
		return 0, false
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

// compactInts reads an array at p.i ('[') in the form perf_analyzer
// writes — non-negative integers, no spaces, no leading zeros — appending
// to dst in one tight loop. Anything else (or an array cut by the buffer's
// end) returns false with p.i and dst's length unchanged, for the general
// path.
func (p *reqParser) compactInts(dst []int64) ([]int64, bool) {
	s, i, n0 := p.s, p.i+1, len(dst)
	if i < len(s) && s[i] == ']' {
		p.i = i + 1
		return dst, true
	}
	for {
		start := i
		var n uint64
		for i < len(s) && s[i]-'0' < 10 && i-start < 19 {
			n = n*10 + uint64(s[i]-'0')
			i++
		}
		nd := i - start
		if nd == 0 || nd > 1 && s[start] == '0' || n > math.MaxInt64 || i >= len(s) {
			return dst[:n0], false
		}
		dst = append(dst, int64(n))
		switch s[i] {
		case ',':
			i++
		case ']':
			p.i = i + 1
			return dst, true
		default: // a 20th digit, '.', 'e', a space, …
			return dst[:n0], false
		}
	}
}

// skip reads and validates any value.
func (p *reqParser) skip(int) bool {
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; c {
	case '{':
		return p.object(func([]byte) bool { return p.skip(0) })
	case '[':
		return p.array(func() bool { return p.skip(0) })
	case '"':
		return p.skipString()
	case 't':
		return p.lit("true")
	case 'f':
		return p.lit("false")
	case 'n':
		return p.lit("null")
	}
	_, ok := p.number()
	return ok
}

func (p *reqParser) lit(s string) bool {
	if !bytes.HasPrefix(p.s[p.i:], []byte(s)) {
		if rest := p.s[p.i:]; bytes.HasPrefix([]byte(s), rest) {
			p.i = len(p.s) // short
		}
		return false
	}
	p.i += len(s)
	return true
}
