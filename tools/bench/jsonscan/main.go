// Command jsonscan is the bench's parse floor: it reads a file of any
// format the bench measures (JSON, JSON lines, a JSON array, CSV) in
// 1 MiB blocks, skips every string (quoted text, escapes included) and
// parses every number outside them with strconv.ParseFloat — Python's
// bare NaN, Infinity and -Infinity included — and nothing else: no
// structure, no keys, no allocation per value. It is the least work any
// reader of the file's numbers must do; `tokentrace report` is measured
// against it. It prints {"numbers": N, "bytes": B, "sum": S} (the sum
// keeps the parsing from being optimised away, and checks it).
//
// usage: jsonscan FILE
package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unsafe"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: jsonscan FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsonscan:", err)
		os.Exit(1)
	}
	defer f.Close()
	s, err := scan(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsonscan:", err)
		os.Exit(1)
	}
	fmt.Printf("{\"numbers\": %d, \"bytes\": %d, \"sum\": %g}\n", s.numbers, s.bytes, s.sum)
}

// result is what scan found.
type result struct {
	numbers, bytes int64
	sum            float64
}

// blockSize is the read size.
const blockSize = 1 << 20

// scan reads r to its end in blocks of blockSize, parsing every number
// outside strings.
func scan(r io.Reader) (result, error) {
	var res result
	buf := make([]byte, 2*blockSize)
	carry := 0 // bytes of an unfinished number or escape carried to the next block
	inStr := false
	for {
		if carry > blockSize {
			return res, fmt.Errorf("byte %d: a number longer than %d bytes", res.bytes, blockSize)
		}
		m, err := io.ReadFull(r, buf[carry:carry+blockSize])
		res.bytes += int64(m)
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return res, err
		}
		b := buf[:carry+m]
		i := 0
	block:
		for i < len(b) {
			if inStr {
				j := bytes.IndexAny(b[i:], "\"\\")
				if j < 0 {
					i = len(b)
					break
				}
				i += j
				if b[i] == '\\' {
					if i+1 >= len(b) && !eof {
						break // the escaped byte is in the next block
					}
					i += 2
					continue
				}
				inStr = false
				i++
				continue
			}
			c := b[i]
			switch {
			case c == '"':
				inStr = true
				i++
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
				// a bare word (true, null, a CSV header such as e2e_ms):
				// skipped whole, unless it is NaN or Infinity
				j := i + 1
				for j < len(b) && wordByte(b[j]) {
					j++
				}
				if j == len(b) && !eof {
					break block
				}
				if w := b[i:j]; string(w) == "NaN" || string(w) == "Infinity" {
					res.sum += parse(w)
					res.numbers++
				}
				i = j
			case c == '-' || c >= '0' && c <= '9':
				j := i + 1
				for j < len(b) && numberByte(b[j]) {
					j++
				}
				if j == len(b) && !eof {
					break block // the number may go on in the next block
				}
				res.sum += parse(b[i:j])
				res.numbers++
				i = j
			default:
				i++
			}
		}
		carry = copy(buf, b[min(i, len(b)):])
		if eof {
			return res, nil
		}
	}
}

// numberByte reports whether c can continue a number (digits, sign,
// point, exponent, and the letters of NaN and Infinity).
func numberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' ||
		c == 'I' || c == 'N' || c >= 'a' && c <= 'z' // -Infinity
}

// wordByte reports whether c can continue a bare word.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// parse reads one number; a token that is none (a lone "-") is 0.
func parse(tok []byte) float64 {
	switch string(tok) {
	case "Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	case "NaN":
		return math.NaN()
	}
	v, _ := strconv.ParseFloat(unsafe.String(&tok[0], len(tok)), 64)
	return v
}
