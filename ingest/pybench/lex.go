package pybench

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// errUnsure is what the streaming reader (Scan) returns for any input it
// does not read exactly as the general path (ReadValues and the column
// readers) would: damaged or cut JSON, an element of an unexpected type,
// an object spanning lines of a JSON-lines file. The caller then reads the
// file the general way, which gives the positioned error or the rarer
// reading.
var errUnsure = errors.New("pybench: not for the streaming reader")

// IsUnsure reports whether err asks for the general path (see Scan).
func IsUnsure(err error) bool { return errors.Is(err, errUnsure) }

// lexBuf is the read buffer of lex: 1 MiB, with at least lexAhead bytes
// ahead of every number and string start where the file has them.
const (
	lexBuf   = 1 << 20
	lexAhead = 64
)

// lex reads JSON tokens from a stream through its own buffer, counting the
// content offset and (in whitespace, where JSON allows raw newlines) lines.
type lex struct {
	src  io.Reader
	buf  []byte
	i, n int   // buf[i:n] is unread
	base int64 // content offset of buf[0]
	line int   // 1-based line of buf[i]
	eof  bool
	err  error // a read error other than io.EOF
}

func newLex(src io.Reader, size int) *lex {
	return &lex{src: src, buf: make([]byte, size), line: 1}
}

// off is the content offset of the next unread byte.
func (l *lex) off() int64 { return l.base + int64(l.i) }

// ensure makes at least k bytes available unless the stream ends first;
// it reports whether they are.
func (l *lex) ensure(k int) bool {
	for l.n-l.i < k && !l.eof {
		if l.i > 0 {
			copy(l.buf, l.buf[l.i:l.n])
			l.base += int64(l.i)
			l.n -= l.i
			l.i = 0
		}
		if l.n == len(l.buf) {
			return true // k is larger than the buffer: as much as it holds
		}
		m, err := l.src.Read(l.buf[l.n:])
		l.n += m
		if err != nil {
			l.eof = true
			if !errors.Is(err, io.EOF) {
				l.err = err
			}
		}
	}
	return l.n-l.i >= k
}

// peek returns the next byte after whitespace (0 at the end).
func (l *lex) peek() byte {
	for {
		for l.i < l.n {
			switch c := l.buf[l.i]; c {
			case ' ', '\t', '\r':
				l.i++
			case '\n':
				l.i++
				l.line++
			default:
				return c
			}
		}
		if !l.ensure(1) {
			return 0
		}
	}
}

// take consumes the next byte after whitespace if it is c.
func (l *lex) take(c byte) bool {
	if l.peek() == c {
		l.i++
		return true
	}
	return false
}

// word consumes the literal w (null, true, NaN, …) at the next byte; no
// letter or digit may follow it.
func (l *lex) word(w string) bool {
	l.ensure(len(w) + 1)
	if l.n-l.i < len(w) || string(l.buf[l.i:l.i+len(w)]) != w {
		return false
	}
	if j := l.i + len(w); j < l.n && isWordByte(l.buf[j]) {
		return false
	}
	l.i += len(w)
	return true
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '+' || c == '-'
}

// elemKind is what an array element read as a number holds.
type elemKind uint8

const (
	elemNumber elemKind = iota // a JSON number (±Inf beyond a double's range)
	elemNull                   // null
	elemBare                   // Python's bare NaN, Infinity, -Infinity
)

// number reads a number element at the next byte: a JSON number, null,
// or a bare NaN/Infinity/-Infinity. ok is false for anything else (the
// general path decides).
func (l *lex) number() (x float64, k elemKind, ok bool) {
	c := l.peek()
	if l.n-l.i < lexAhead {
		l.ensure(lexAhead)
	}
	switch c {
	case 'n':
		return 0, elemNull, l.word("null")
	case 'N':
		return math.NaN(), elemBare, l.word("NaN")
	case 'I':
		return math.Inf(1), elemBare, l.word("Infinity")
	case '-':
		if l.i+1 < l.n && l.buf[l.i+1] == 'I' {
			return math.Inf(-1), elemBare, l.word("-Infinity")
		}
	}
	b := l.buf[l.i:l.n]
	end, x, ok := parseNumber(b)
	if !ok || end == len(b) && !l.eof {
		return 0, 0, false // not a number, or one longer than lexAhead bytes
	}
	l.i += end
	return x, elemNumber, true
}

// eightDigits reports whether the 8 bytes of v (little endian) are all
// ASCII digits: no byte has a high nibble other than 3, nor a low nibble
// above 9 (adding 6 carries into the high nibble exactly then).
func eightDigits(v uint64) bool {
	return (v&0xf0f0f0f0f0f0f0f0)|((v+0x0606060606060606)&0xf0f0f0f0f0f0f0f0)>>4 == 0x3333333333333333
}

// parseEight is the value of the 8 ASCII digits of v (little endian: the
// first digit in the low byte), by three multiply-and-shift steps that
// combine neighbouring digits, then pairs, then quads.
func parseEight(v uint64) uint64 {
	v = (v & 0x0f0f0f0f0f0f0f0f) * 2561 >> 8
	v = (v & 0x00ff00ff00ff00ff) * 6553601 >> 16
	return (v & 0x0000ffff0000ffff) * 42949672960001 >> 32
}

// pow10 are the powers of ten a double holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNumber reads the JSON number at the start of b (RFC 8259 grammar;
// ok false when b does not start with one) and returns its length and
// value, as strconv.ParseFloat reads it (and so as encoding/json does):
// exact decimal mantissas below 2^53 with a power of ten up to 22 are one
// correctly rounded multiplication or division (Clinger's fast path);
// anything else goes to strconv. A number beyond a double's range is ±Inf.
func parseNumber(b []byte) (end int, x float64, ok bool) {
	i := 0
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	if i >= len(b) {
		return 0, 0, false
	}
	var m uint64
	digits := 0 // significant digits in m (leading zeros not counted)
	exact := true
	switch c := b[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if digits < 19 {
				m = m*10 + uint64(b[i]-'0')
				digits++
			} else {
				exact = false
			}
			i++
		}
	default:
		return 0, 0, false
	}
	exp := 0
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			// eight digits at once when they fit (no leading zero among
			// them while m is 0): Python's 17-digit gaps are two such
			// blocks and a digit
			if digits <= 11 && i+8 <= len(b) && (m != 0 || b[i] != '0') {
				if v := binary.LittleEndian.Uint64(b[i:]); eightDigits(v) {
					m = m*1e8 + parseEight(v)
					digits += 8
					exp -= 8
					i += 8
					continue
				}
			}
			if digits < 19 {
				if m == 0 && b[i] == '0' {
					exp--
				} else {
					m = m*10 + uint64(b[i]-'0')
					digits++
					exp--
				}
			} else if b[i] != '0' {
				exact = false
			}
			i++
		}
		if i == start {
			return 0, 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		start := i
		e := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
			i++
		}
		if i == start {
			return 0, 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if exact && m <= 1<<53 && exp >= -22 && exp <= 22 {
		x = float64(m)
		if exp > 0 {
			x *= pow10[exp]
		} else if exp < 0 {
			x /= pow10[-exp]
		}
		if neg {
			x = -x
		}
		return i, x, true
	}
	if exact {
		if v, ok := jsonscan.Float(m, exp, neg); ok {
			return i, v, true
		}
	}
	// the string does not outlive the call
	v, err := strconv.ParseFloat(unsafe.String(&b[0], i), 64)
	if err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || !errors.Is(ne.Err, strconv.ErrRange) {
			return 0, 0, false
		}
	}
	return i, v, true
}

// str reads a string at the next byte and returns its raw token (quotes
// included; a copy when scratch is used, else a view into the buffer valid
// until the next read) and whether it holds an escape or a byte outside
// ASCII. ok is false for anything but a well-formed JSON string, or one
// longer than max bytes (capped true then).
func (l *lex) str(scratch *[]byte, max int64) (raw []byte, plain bool, capped, ok bool) {
	if l.peek() != '"' {
		return nil, false, false, false
	}
	start := l.i
	i := l.i + 1
	plain = true
	*scratch = (*scratch)[:0]
	spanned := false
	for {
		for i < l.n {
			c := l.buf[i]
			if strPlain[c] {
				i++
				continue
			}
			switch {
			case c == '"':
				i++
				if spanned {
					*scratch = append(*scratch, l.buf[start:i]...)
					l.i = i
					return *scratch, plain, false, true
				}
				l.i = i
				return l.buf[start:i], plain, false, true
			case c == '\\':
				plain = false
				if i+1 >= l.n {
					goto refill
				}
				switch l.buf[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
				case 'u':
					if i+6 > l.n {
						goto refill
					}
					for _, h := range l.buf[i+2 : i+6] {
						if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
							return nil, false, false, false
						}
					}
					i += 6
				default:
					return nil, false, false, false
				}
			case c < 0x20:
				return nil, false, false, false
			default:
				if c >= 0x80 {
					plain = false
				}
				i++
			}
		}
	refill:
		// keep the token: copy what is buffered into scratch and read on
		*scratch = append(*scratch, l.buf[start:i]...)
		if int64(len(*scratch)) > max {
			return nil, false, true, false
		}
		spanned = true
		l.i = i
		left := l.n - l.i
		if !l.ensure(left+7) && l.n-l.i == left {
			return nil, false, false, false // the stream ends inside the string
		}
		i = l.i
		start = l.i
	}
}

// strPlain are the bytes a JSON string holds as themselves: printable
// ASCII but the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// decodeString returns the text of a raw string token as encoding/json
// decodes it (invalid UTF-8 becomes U+FFFD).
func decodeString(raw []byte, plain bool) (string, bool) {
	if plain || !hasEscape(raw) && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	return unquoteJSON(raw)
}

func hasEscape(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' {
			return true
		}
	}
	return false
}

func unquoteJSON(raw []byte) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
