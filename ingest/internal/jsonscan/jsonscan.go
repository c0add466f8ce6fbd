// Package jsonscan is the validating JSON scanner the importers' fast
// paths share (the record readers of guidellm, inferenceperf and aiperf,
// llmperf's row splitter): one copy, so a fix to the scanner reaches
// every importer that reads with it.
//
// It accepts exactly what encoding/json accepts within a value (strings
// may hold invalid UTF-8, as there), except nesting deeper than MaxDepth,
// which it refuses: the caller then asks encoding/json, the reference,
// which also gives the errors.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Scanner reads JSON from B at I, validating as it goes. Short is set
// when B ends inside the value being read: more input may complete it
// (a streaming caller then reads more and starts the value again).
// Callers set B and I and may move I themselves.
type Scanner struct {
	B     []byte
	I     int
	Short bool
}

// MaxDepth bounds the scanner's nesting (encoding/json's own limit is
// 10000: deeper documents go to it).
const MaxDepth = 1000

// WS skips JSON whitespace (space, tab, newline, carriage return).
func (s *Scanner) WS() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Next is the byte at I, or 0 (and Short set) at the end.
func (s *Scanner) Next() byte {
	if s.I < len(s.B) {
		return s.B[s.I]
	}
	s.Short = true
	return 0
}

// Eat moves past c when it is the byte at I (Short set at the end).
func (s *Scanner) Eat(c byte) bool {
	if s.Next() == c {
		s.I++
		return true
	}
	return false
}

// Lit moves past the literal w (true, false, null) when B holds it at I;
// Short is set when B ends inside it.
func (s *Scanner) Lit(w string) bool {
	for k := 0; k < len(w); k++ {
		if s.I+k >= len(s.B) {
			s.Short = true
			return false
		}
		if s.B[s.I+k] != w[k] {
			return false
		}
	}
	s.I += len(w)
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

// Str reads the string literal at I (its '"' next) and returns its bytes,
// quotes included, pointing into B; esc says whether it holds an escape.
// ok is false for an invalid string (a control character, a bad escape)
// or one B ends inside (Short set).
func (s *Scanner) Str() (lit []byte, esc, ok bool) {
	if !s.Eat('"') {
		return nil, false, false
	}
	b, i, start := s.B, s.I, s.I-1
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
			s.Short = true
			return nil, false, false
		}
		switch c := b[i]; {
		case c == '"':
			s.I = i + 1
			return b[start:s.I], esc, true
		case c < 0x20:
			return nil, false, false
		}
		// a backslash
		esc = true
		if i+1 >= len(b) {
			s.Short = true
			return nil, false, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) {
				s.Short = true
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

// Number reads a number token and returns its bytes (validated by
// ValidNumber). A token B ends on is refused with Short set: the number
// may go on.
func (s *Scanner) Number() ([]byte, bool) {
	start := s.I
	for s.I < len(s.B) {
		c := s.B[s.I]
		if c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' {
			s.I++
			continue
		}
		break
	}
	if s.I >= len(s.B) {
		s.Short = true // the number may go on
		return nil, false
	}
	tok := s.B[start:s.I]
	return tok, len(tok) > 0 && ValidNumber(tok)
}

// Value validates one value at I (depth: the nesting it stands at) and
// returns its bytes, pointing into B.
func (s *Scanner) Value(depth int) ([]byte, bool) {
	start := s.I
	if !s.Skip(depth) {
		return nil, false
	}
	return s.B[start:s.I], true
}

// Skip validates one value at I and moves past it; false for an invalid
// value, one nested deeper than MaxDepth, or one B ends inside (Short).
func (s *Scanner) Skip(depth int) bool {
	if depth > MaxDepth {
		return false
	}
	switch c := s.Next(); {
	case c == '{':
		s.I++
		s.WS()
		if s.Eat('}') {
			return true
		}
		for {
			if _, _, ok := s.Str(); !ok {
				return false
			}
			s.WS()
			if !s.Eat(':') {
				return false
			}
			s.WS()
			if !s.Skip(depth + 1) {
				return false
			}
			s.WS()
			if s.Eat('}') {
				return true
			}
			if !s.Eat(',') {
				return false
			}
			s.WS()
		}
	case c == '[':
		s.I++
		s.WS()
		if s.Eat(']') {
			return true
		}
		for {
			if !s.Skip(depth + 1) {
				return false
			}
			s.WS()
			if s.Eat(']') {
				return true
			}
			if !s.Eat(',') {
				return false
			}
			s.WS()
		}
	case c == '"':
		_, _, ok := s.Str()
		return ok
	case c == 't':
		return s.Lit("true")
	case c == 'f':
		return s.Lit("false")
	case c == 'n':
		return s.Lit("null")
	case c == '-' || c >= '0' && c <= '9':
		_, ok := s.Number()
		return ok
	}
	return false
}

// Members reads the object at I (its '{' next), calling member with each
// name (the raw bytes between the quotes, valid only during the call) once
// the scanner stands at its value; member reads the value. False for a
// name with escapes (encoding/json decodes those) or when member returns
// false.
func (s *Scanner) Members(member func(key []byte) bool) bool {
	if !s.Eat('{') {
		return false
	}
	s.WS()
	if s.Eat('}') {
		return true
	}
	for {
		lit, esc, ok := s.Str()
		if !ok || esc {
			return false
		}
		s.WS()
		if !s.Eat(':') {
			return false
		}
		s.WS()
		if !member(lit[1 : len(lit)-1]) {
			return false
		}
		s.WS()
		if s.Eat('}') {
			return true
		}
		if !s.Eat(',') {
			return false
		}
		s.WS()
	}
}

// Name is the string of raw, a string's bytes between its quotes (as
// Members passes a member name), without escapes: the entry of known
// when there is one (a usual name or value is not allocated again), else
// a copy; ok is false for invalid UTF-8, which encoding/json replaces.
func Name(raw []byte, known map[string]string) (string, bool) {
	if k, ok := known[string(raw)]; ok {
		return k, true
	}
	if !utf8.Valid(raw) {
		return "", false
	}
	return string(raw), true
}

// ValidNumber reports whether b, which must not be empty, follows JSON's
// number grammar (RFC 8259 section 6).
func ValidNumber(b []byte) bool {
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
