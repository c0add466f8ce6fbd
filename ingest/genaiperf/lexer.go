package genaiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/tokentrace/tokentrace/ingest"
)

// lexer reads the raw export's structure (objects, arrays, keys) and hands
// out each value it does not walk into as the raw bytes of that value. It
// replaces json.Decoder's byte-at-a-time scanner: a value's extent is found
// by jumping between quotes and brackets (bytes.IndexAny), and the value is
// then decoded by whoever needs it (parseRequest, else encoding/json),
// which validates it. Its buffer holds the largest value read, no more,
// and a value larger than max is refused (ingest.CapError) before the
// buffer grows past it. Bytes that JSON never allows where they stand —
// outside strings anything but whitespace, structure, numbers and
// true/false/null; inside strings a control character — stop the scan at
// once (a syntax error at that byte), so that a damaged file (a run of NUL
// bytes, binary data) is refused where it goes wrong, not after its end.
type lexer struct {
	r   io.Reader
	max int64
	buf []byte
	pos int   // next unread byte in buf
	off int64 // file offset of buf[0]
	eof bool  // r is exhausted
	err error // a read error other than io.EOF
	// began is the file offset where the last value (or token) read began.
	began int64
}

func newLexer(r io.Reader, max int64) *lexer {
	return &lexer{r: r, max: max, buf: make([]byte, 0, min(1<<20, max))}
}

// offset is the file offset of the next unread byte.
func (l *lexer) offset() int64 { return l.off + int64(l.pos) }

// more reads more input, keeping buf[pos:]; false at the end of input.
func (l *lexer) more() bool {
	if l.eof || l.err != nil {
		return false
	}
	if l.pos > 0 {
		n := copy(l.buf, l.buf[l.pos:])
		l.buf = l.buf[:n]
		l.off += int64(l.pos)
		l.pos = 0
	}
	if len(l.buf) == cap(l.buf) {
		// buf[0:] is the value being scanned (pos is its start; more is
		// called when the scan reached the end of buf): a full buffer of
		// max bytes holds a value that is longer still
		if int64(len(l.buf)) >= l.max {
			l.err = &spanError{err: &ingest.CapError{What: "JSON value", Cap: l.max}, base: l.off}
			return false
		}
		nb := make([]byte, len(l.buf), min(2*int64(cap(l.buf)), l.max))
		copy(nb, l.buf)
		l.buf = nb
	}
	n, err := l.r.Read(l.buf[len(l.buf):cap(l.buf)])
	l.buf = l.buf[:len(l.buf)+n]
	if err == io.EOF {
		l.eof = true
	} else if err != nil {
		l.err = err
	}
	return n > 0 || (!l.eof && l.err == nil)
}

// endErr is the error for input that ends (or fails) mid-value.
func (l *lexer) endErr() error {
	if l.err != nil {
		return l.err
	}
	return errTruncated
}

// peek skips whitespace and returns the next byte without consuming it.
func (l *lexer) peek() (byte, error) {
	for {
		for l.pos < len(l.buf) {
			switch c := l.buf[l.pos]; c {
			case ' ', '\t', '\r', '\n':
				l.pos++
			default:
				return c, nil
			}
		}
		if !l.more() {
			return 0, l.endErr()
		}
	}
}

// atEOF reports whether only whitespace is left.
func (l *lexer) atEOF() bool {
	_, err := l.peek()
	return errors.Is(err, errTruncated)
}

// expect consumes the delimiter want.
func (l *lexer) expect(want byte) error {
	c, err := l.peek()
	if err != nil {
		return err
	}
	if c != want {
		return fmt.Errorf("expected %q, found %s", string(want), l.describe())
	}
	l.pos++
	return nil
}

// describe names the token at the read position, for errors.
func (l *lexer) describe() string {
	c, err := l.peek()
	if err != nil {
		return "the end of the input"
	}
	switch c {
	case '{', '}', '[', ']', ',', ':':
		return strconv.Quote(string(c))
	}
	save := l.pos
	v, err := l.value()
	l.pos = save
	if err != nil {
		return strconv.Quote(string(c))
	}
	if len(v) > 40 {
		v = append(v[:37:37], "..."...)
	}
	return string(v)
}

// next starts the next element of an object or array ending with close: it
// consumes the separating comma (none before the first element) and reports
// whether an element follows; the closing delimiter is consumed.
func (l *lexer) next(first bool, close byte) (bool, error) {
	c, err := l.peek()
	if err != nil {
		return false, err
	}
	if c == close {
		l.pos++
		return false, nil
	}
	if first {
		return true, nil
	}
	if c != ',' {
		return false, l.syntax(fmt.Sprintf("invalid character %s after %s element", quoteChar(c), containerName(close)))
	}
	l.pos++
	return true, nil
}

func containerName(close byte) string {
	if close == '}' {
		return "object"
	}
	return "array"
}

// key reads an object key and its colon.
func (l *lexer) key() (string, error) {
	c, err := l.peek()
	if err != nil {
		return "", err
	}
	if c != '"' {
		return "", fmt.Errorf("expected an object key, found %s", l.describe())
	}
	v, err := l.value()
	if err != nil {
		return "", err
	}
	var k string
	if bytes.IndexByte(v, '\\') < 0 {
		k = string(v[1 : len(v)-1])
	} else if err := json.Unmarshal(v, &k); err != nil {
		return "", l.spanErr(err)
	}
	return k, l.expect(':')
}

// value consumes the next value and returns its bytes, valid until the
// next call. Only its extent is checked: strings and brackets must close.
func (l *lexer) value() ([]byte, error) {
	c, err := l.peek()
	if err != nil {
		return nil, err
	}
	l.began = l.offset()
	end := l.pos // relative to pos once more() compacts; kept as a length
	n := 0       // bytes of the value scanned so far
	switch c {
	case '"':
		n, err = l.scanString(1)
	case '{', '[':
		n, err = l.scanNested()
	case '}', ']', ',', ':':
		return nil, l.syntax(fmt.Sprintf("invalid character %s looking for beginning of value", quoteChar(c)))
	default:
		n, err = l.scanLiteral()
	}
	_ = end
	if err != nil {
		return nil, err
	}
	v := l.buf[l.pos : l.pos+n]
	l.pos += n
	return v, nil
}

// stringStop are the bytes a string scan stops at: its closing quote, a
// backslash, and the control characters JSON does not allow in a string.
const stringStop = "\"\\\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f" +
	"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"

// scanString scans a string whose opening quote is at pos; i bytes of it
// are already scanned. It returns the string's length with both quotes.
func (l *lexer) scanString(i int) (int, error) {
	for {
		for l.pos+i < len(l.buf) {
			// IndexAny walks the bytes with a set either way: the control
			// characters cost nothing more than the two stops
			j := bytes.IndexAny(l.buf[l.pos+i:], stringStop)
			if j < 0 {
				i = len(l.buf) - l.pos
				break
			}
			i += j
			switch c := l.buf[l.pos+i]; {
			case c == '"':
				return i + 1, nil
			case c < 0x20:
				return 0, &syntaxError{msg: fmt.Sprintf("invalid character %s in string literal", quoteChar(c)), at: l.off + int64(l.pos+i)}
			}
			// a backslash: skip it and the escaped byte
			if l.pos+i+1 >= len(l.buf) {
				break
			}
			i += 2
		}
		if !l.more() {
			return 0, l.endErr()
		}
	}
}

// scanNested scans an object or array starting at pos.
func (l *lexer) scanNested() (int, error) {
	depth, i := 0, 0
	for {
		for l.pos+i < len(l.buf) {
			j := indexStop(l.buf[l.pos+i:])
			if j < 0 {
				i = len(l.buf) - l.pos
				break
			}
			i += j
			switch c := l.buf[l.pos+i]; c {
			case '"', '{', '}', '[', ']':
			default:
				return 0, &syntaxError{msg: fmt.Sprintf("invalid character %s looking for beginning of value", quoteChar(c)), at: l.off + int64(l.pos+i)}
			}
			switch l.buf[l.pos+i] {
			case '"':
				n, err := l.scanString(1 + i)
				if err != nil {
					return 0, err
				}
				i = n
				continue
			case '{', '[':
				depth++
			default:
				depth--
			}
			i++
			if depth == 0 {
				return i, nil
			}
		}
		if !l.more() {
			return 0, l.endErr()
		}
	}
}

// scanLiteral scans a number, true, false or null. It stops at the first
// byte that cannot belong to one (a delimiter, or a byte JSON does not
// allow there, which the caller then reports).
func (l *lexer) scanLiteral() (int, error) {
	i := 0
	for {
		for l.pos+i < len(l.buf) {
			if c := l.buf[l.pos+i]; byteClass[c] != classLiteral {
				return i, nil
			}
			i++
		}
		if !l.more() {
			if l.err != nil {
				return 0, l.err
			}
			// A literal at the very end of the input may be complete; the
			// structure around it is not, which the caller notices.
			return i, nil
		}
	}
}

// spanError is an error decoding the value that began at base: a
// *json.SyntaxError's Offset is relative to the value.
type spanError struct {
	err  error
	base int64
}

func (e *spanError) Error() string { return e.err.Error() }
func (e *spanError) Unwrap() error { return e.err }

// spanErr wraps an error from decoding the last value read.
func (l *lexer) spanErr(err error) error {
	if err == nil {
		return nil
	}
	return &spanError{err: err, base: l.began}
}

// syntaxError is a structural error at a file offset.
type syntaxError struct {
	msg string
	at  int64
}

func (e *syntaxError) Error() string { return e.msg }

func (l *lexer) syntax(msg string) error { return &syntaxError{msg: msg, at: l.offset()} }

// Byte classes outside strings: what a structure scan may skip
// (classSkip: whitespace, ',' and ':'), literal bytes (numbers, true,
// false, null), the structural bytes it stops at, and bytes JSON never
// allows outside a string (classBad).
const (
	classBad = iota
	classSkip
	classLiteral
	classStop
)

var byteClass = func() (t [256]uint8) {
	for _, c := range []byte(" \t\r\n,:") {
		t[c] = classSkip
	}
	// numbers, true, false, null, and Python's NaN and Infinity; any
	// letter, so that a misspelt word is reported by the value's decoder
	for _, c := range []byte("0123456789+-.") {
		t[c] = classLiteral
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = classLiteral, classLiteral
	}
	for _, c := range []byte("\"{}[]") {
		t[c] = classStop
	}
	return t
}()

// indexStop is the index in b of the first byte that is structural (a
// quote or bracket) or not allowed outside a string, or -1.
func indexStop(b []byte) int {
	for i, c := range b {
		if k := byteClass[c]; k == classStop || k == classBad {
			return i
		}
	}
	return -1
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	if c < 0x20 || c >= 0x7f { // as encoding/json writes it: '\x00'
		q := strconv.Quote(string(rune(c)))
		if c >= 0x80 {
			q = fmt.Sprintf(`"\x%02x"`, c)
		}
		return "'" + q[1:len(q)-1] + "'"
	}
	return "'" + string(c) + "'"
}

// decodeValue reads the next value into v with encoding/json.
func (l *lexer) decodeValue(v any) error {
	raw, err := l.value()
	if err != nil {
		return err
	}
	return l.spanErr(json.Unmarshal(raw, v))
}

// skipValue reads and validates the next value.
func (l *lexer) skipValue() error {
	raw, err := l.value()
	if err != nil {
		return err
	}
	if !json.Valid(raw) {
		var v any
		return l.spanErr(json.Unmarshal(raw, &v))
	}
	return nil
}
