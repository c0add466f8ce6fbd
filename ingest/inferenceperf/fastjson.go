package inferenceperf

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"strconv"
	"unsafe"
)

// scanner is a validating JSON scanner over b from i, the fast path's
// reader (fastrecord.go, chunk.go). It accepts exactly what encoding/json
// accepts within a value (strings may hold invalid UTF-8, as there), except
// nesting deeper than maxDepth, which it refuses (the caller then asks
// encoding/json). short is set when b ends inside the value: more input
// may complete it.
type scanner struct {
	b     []byte
	i     int
	short bool
	// a record's "response" value known from the first pass (respHints):
	// where it starts in b (-1: none), its length and hash
	skipAt, skipLen int
	skipHash        uint64
	seed            maphash.Seed
	skipped         int
}

// maxDepth bounds the scanner's nesting (encoding/json's own limit is
// 10000: deeper documents go to it).
const maxDepth = 1000

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next is the byte at i, or 0 (and short) at the end.
func (s *scanner) next() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	s.short = true
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.next() == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) lit(w string) bool {
	for k := 0; k < len(w); k++ {
		if s.i+k >= len(s.b) {
			s.short = true
			return false
		}
		if s.b[s.i+k] != w[k] {
			return false
		}
	}
	s.i += len(w)
	return true
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specials marks (high bit of each byte) the bytes of x, read little
// endian, that are '"', '\\' or a control character. Marks above the
// lowest can be false (a borrow), the lowest is exact: its index is that
// of the first such byte.
func specials(x uint64) uint64 {
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return ((q-ones)&^q | (bs-ones)&^bs | (x-ones*0x20)&^x) & highs
}

// str reads the string literal at i (its '"' next) and returns its bytes,
// quotes included; esc says whether it holds an escape.
func (s *scanner) str() (lit []byte, esc, ok bool) {
	if !s.eat('"') {
		return nil, false, false
	}
	b, i, start := s.b, s.i, s.i-1
	for {
		for {
			if i+8 > len(b) {
				for i < len(b) {
					if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
						break
					}
					i++
				}
				break
			}
			if m := specials(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			s.short = true
			return nil, false, false
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return b[start:s.i], esc, true
		case c < 0x20:
			return nil, false, false
		}
		// a backslash
		esc = true
		if i+1 >= len(b) {
			s.short = true
			return nil, false, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) {
				s.short = true
				return nil, false, false
			}
			for _, h := range b[i+2 : i+6] {
				if !isHex(h) {
					return nil, false, false
				}
			}
			i += 6
		default:
			return nil, false, false
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number reads a number token and returns its bytes (validated).
func (s *scanner) number() ([]byte, bool) {
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	if s.i >= len(s.b) {
		s.short = true // the number may go on
		return nil, false
	}
	tok := s.b[start:s.i]
	return tok, len(tok) > 0 && validNumber(tok)
}

// value validates one value and returns its bytes.
func (s *scanner) value(depth int) ([]byte, bool) {
	start := s.i
	if !s.skip(depth) {
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *scanner) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch c := s.next(); {
	case c == '{':
		s.i++
		s.ws()
		if s.eat('}') {
			return true
		}
		for {
			if _, _, ok := s.str(); !ok {
				return false
			}
			s.ws()
			if !s.eat(':') {
				return false
			}
			s.ws()
			if !s.skip(depth + 1) {
				return false
			}
			s.ws()
			if s.eat('}') {
				return true
			}
			if !s.eat(',') {
				return false
			}
			s.ws()
		}
	case c == '[':
		s.i++
		s.ws()
		if s.eat(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(']') {
				return true
			}
			if !s.eat(',') {
				return false
			}
			s.ws()
		}
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		_, ok := s.number()
		return ok
	}
	return false
}

// members reads the object at i (its '{' next), calling member with each
// name (the raw bytes between the quotes, valid only during the call) once
// the scanner stands at its value; member reads the value. False for a
// name with escapes (encoding/json decodes those) or when member returns
// false.
func (s *scanner) members(member func(key []byte) bool) bool {
	if !s.eat('{') {
		return false
	}
	s.ws()
	if s.eat('}') {
		return true
	}
	for {
		lit, esc, ok := s.str()
		if !ok || esc {
			return false
		}
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		if !member(lit[1 : len(lit)-1]) {
			return false
		}
		s.ws()
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
		s.ws()
	}
}

// numbers reads a list of plain JSON numbers (its '[' next) as
// json.Unmarshal into []float64 does; ok is false (i anywhere) when an
// element is anything else or out of float64's range.
func (s *scanner) numbers() ([]float64, bool) {
	s.i++ // '['
	s.ws()
	out := make([]float64, 0, 64)
	if s.eat(']') {
		return out, true
	}
	for {
		if f, ok := s.plainNumber(); ok {
			out = append(out, f)
			s.ws()
			if s.eat(']') {
				return out, true
			}
			if !s.eat(',') {
				return nil, false
			}
			s.ws()
			continue
		}
		tok, ok := s.number()
		if !ok {
			return nil, false
		}
		f, ok := exactFloat(tok)
		if !ok {
			// the string does not outlive the call (an error is discarded)
			var err error
			if f, err = strconv.ParseFloat(unsafe.String(&tok[0], len(tok)), 64); err != nil {
				return nil, false
			}
		}
		out = append(out, f)
		s.ws()
		if s.eat(']') {
			return out, true
		}
		if !s.eat(',') {
			return nil, false
		}
		s.ws()
	}
}

// plainNumber reads, in one pass, a number -?(0|[1-9][0-9]*)(.[0-9]+)?
// of at most 15 digits (22 after the point) that a byte other than a
// number's ends, as exactFloat would; false (i unmoved) for any other
// text, which numbers then reads the general way.
func (s *scanner) plainNumber() (float64, bool) {
	b, i := s.b, s.i
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var m uint64
	digits, frac := 0, 0
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		m = m*10 + uint64(b[i]-'0')
		i++
	}
	digits = i - start
	if digits == 0 || digits > 1 && b[start] == '0' {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			m = m*10 + uint64(b[i]-'0')
			i++
		}
		frac = i - fs
		if frac == 0 {
			return 0, false
		}
		digits += frac
	}
	if i >= len(b) || digits > 15 || frac > 22 {
		return 0, false
	}
	switch b[i] {
	case 'e', 'E', '+', '-', '.':
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	s.i = i
	return f, true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat parses a valid JSON number without exponent whose digits,
// read as an integer m, stay below 2^53, with at most 22 after the point:
// m and 10^k are then exact and one division rounds correctly, so the
// result is strconv.ParseFloat's (its own exact path, Clinger's). ok is
// false for every other number.
func exactFloat(tok []byte) (float64, bool) {
	i, neg := 0, false
	if tok[0] == '-' {
		i, neg = 1, true
	}
	var m uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.':
			dot = true
		default:
			return 0, false
		}
	}
	if digits > 15 || frac > 22 {
		return 0, false // 15 digits keep m below 2^53
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// validNumber reports whether b follows JSON's number grammar.
func validNumber(b []byte) bool {
	i := 0
	if b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	if n := digits(); n == 0 || (n > 1 && b[start] == '0') {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}
