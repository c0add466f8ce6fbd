package ingest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrValueTooLarge is wrapped by every *CapError.
var ErrValueTooLarge = errors.New("value larger than the cap")

// CapError is the error for one value of an input (What: "line", "JSON
// value", "file") larger than the cap Cap (bytes).
type CapError struct {
	What string
	Cap  int64
}

func (e *CapError) Error() string {
	return fmt.Sprintf("%s larger than the %s cap on one value (raise it with --max-value-size, Options.MaxValueBytes)", e.What, FormatSize(e.Cap))
}

func (e *CapError) Unwrap() error { return ErrValueTooLarge }

// FormatSize writes a byte count with a binary unit when it is a whole
// number of one ("256 MiB", "1 GiB", "1000 B").
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return fmt.Sprintf("%d %s", n/u.v, u.s)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// ParseSize reads a byte count: a whole number of bytes, or a number
// (decimals allowed) with a unit — B, KB/MB/GB/TB (powers of 1000),
// KiB/MiB/GiB/TiB (powers of 1024), K/M/G/T (taken as KiB…TiB) — case
// insensitive, a space allowed before the unit: "268435456", "256MiB",
// "1.5 GiB", "512m". It must be at least 1 byte.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("size %q: not a number of bytes (e.g. 256MiB, 1GiB, 500MB)", s)
	}
	mult := map[string]float64{"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("size %q: unknown unit %q (B, KB, MB, GB, KiB, MiB, GiB)", s, unit)
	}
	b := v * mult
	if b < 1 || b > 1<<62 {
		return 0, fmt.Errorf("size %q: out of range (1 byte to 4 EiB)", s)
	}
	return int64(b), nil
}

// ReadLine reads the next line of br without its "\n" (a "\r" before it is
// kept). complete is false for a last line that has no "\n" (possibly cut);
// io.EOF comes alone, at the end. A line longer than max bytes is refused
// with a *CapError before more than max bytes of it are held.
func ReadLine(br *bufio.Reader, max int64) (line []byte, complete bool, err error) {
	return ReadLineInto(br, max, nil)
}

// ReadLineInto is ReadLine reading the line into buf[:0] (its capacity
// reused; the line is then valid until buf is reused): a reader of many
// lines that is done with each before the next allocates no line per line.
func ReadLineInto(br *bufio.Reader, max int64, buf []byte) (line []byte, complete bool, err error) {
	line = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n := int64(len(line) + len(chunk)) // the line's bytes so far
		if err == nil {
			n-- // its "\n"
		}
		if n > max {
			return nil, false, &CapError{What: "line", Cap: max}
		}
		switch {
		case err == nil:
			return append(line, chunk[:len(chunk)-1]...), true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, chunk...)
		case errors.Is(err, io.EOF):
			line = append(line, chunk...)
			if len(line) == 0 {
				return nil, false, io.EOF
			}
			return line, false, nil
		default:
			return nil, false, err
		}
	}
}

// NewJSONDecoder returns a json.Decoder reading r that refuses a value
// larger than max bytes: once the value it is reading (the bytes read
// since the end of the last token it returned) exceeds max, its next read
// fails with a *CapError, which Decode and Token return. The decoder's
// buffer then holds at most about twice max.
func NewJSONDecoder(r io.Reader, max int64) *json.Decoder {
	c := &capReader{r: r, max: max}
	c.dec = json.NewDecoder(c)
	return c.dec
}

type capReader struct {
	r   io.Reader
	dec *json.Decoder
	n   int64 // bytes handed to dec
	max int64
}

func (c *capReader) Read(p []byte) (int, error) {
	// dec.InputOffset is where the value being read began (the decoder
	// moves it only when a value or token is complete).
	pending := c.n - c.dec.InputOffset()
	if pending > c.max {
		return 0, &CapError{What: "JSON value", Cap: c.max}
	}
	if room := c.max - pending + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
