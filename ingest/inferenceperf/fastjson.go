package inferenceperf

import (
	"hash/maphash"
	"strconv"
	"unsafe"

	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// scanner is the fast path's reader (fastrecord.go, chunk.go): the
// shared validating JSON scanner (jsonscan: what encoding/json accepts
// within a value, nesting up to jsonscan.MaxDepth; Short set when the
// buffer ends inside the value, as more input may complete it), plus the
// skip hints of the second pass and the number lists below.
type scanner struct {
	jsonscan.Scanner
	// a record's "response" value known from the first pass (respHints):
	// where it starts in B (-1: none), its length and hash
	skipAt, skipLen int
	skipHash        uint64
	seed            maphash.Seed
	skipped         int
}

// numbers reads a list of plain JSON numbers (its '[' next) as
// json.Unmarshal into []float64 does; ok is false (i anywhere) when an
// element is anything else or out of float64's range.
func (s *scanner) numbers() ([]float64, bool) {
	s.I++ // '['
	s.WS()
	out := make([]float64, 0, 64)
	if s.Eat(']') {
		return out, true
	}
	for {
		if f, ok := s.plainNumber(); ok {
			out = append(out, f)
			s.WS()
			if s.Eat(']') {
				return out, true
			}
			if !s.Eat(',') {
				return nil, false
			}
			s.WS()
			continue
		}
		tok, ok := s.Number()
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

// plainNumber reads, in one pass, a number -?(0|[1-9][0-9]*)(.[0-9]+)?
// of at most 19 digits (22 after the point) that a byte other than a
// number's ends — up to 15 digits as exactFloat would, more by
// jsonscan.Float, both strconv.ParseFloat's value; false (i unmoved) for
// any other text or a number Float cannot decide, which numbers then
// reads the general way.
func (s *scanner) plainNumber() (float64, bool) {
	b, i := s.B, s.I
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
	if i >= len(b) || digits > 19 || frac > 22 {
		return 0, false
	}
	switch b[i] {
	case 'e', 'E', '+', '-', '.':
		return 0, false
	}
	if digits > 15 {
		// beyond Clinger's exact path: Eisel–Lemire (Python's full-
		// precision epoch seconds, 17 digits, are most token times)
		f, ok := jsonscan.Float(m, -frac, neg)
		if !ok {
			return 0, false
		}
		s.I = i
		return f, true
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	s.I = i
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
