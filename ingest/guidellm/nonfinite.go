package guidellm

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
)

// nonFiniteReader passes JSON text through, quoting the bare NaN, Infinity
// and -Infinity that Python's json.dumps writes outside strings, so that
// encoding/json reads them (as strings, which the number readers turn into
// non-finite values). It works on a stream: a literal split across reads is
// held back until its end is known. Each quoted literal shifts later byte
// offsets by 2.
type nonFiniteReader struct {
	r        io.Reader
	in       []byte // unread input
	out      []byte // transformed, returned up to outRead
	outRead  int
	eof      bool
	err      error
	inString bool
	escaped  bool
	// positions, to map the decoder's offsets back to the input's
	inTotal int64   // bytes read from r
	outPos  int64   // output offset of the next byte appended to out
	quoted  []int64 // output offsets of the opening quote of each quoted literal
	quotedN []int64 // and each literal's length
}

// inputOffset is the input offset of output offset out: out less the two
// quotes of every literal quoted before it (one when out falls inside a
// quoted literal, after its opening quote).
func (n *nonFiniteReader) inputOffset(out int64) int64 {
	in := out
	for i, at := range n.quoted {
		if out <= at {
			break
		}
		if out >= at+n.quotedN[i]+2 {
			in -= 2
		} else {
			in--
		}
	}
	return in
}

func newNonFiniteReader(r io.Reader) *nonFiniteReader {
	return &nonFiniteReader{r: r}
}

// longestLiteral is len("-Infinity").
const longestLiteral = 9

var literals = [][]byte{[]byte("-Infinity"), []byte("Infinity"), []byte("NaN")}

func (n *nonFiniteReader) Read(p []byte) (int, error) {
	for n.outRead == len(n.out) {
		n.out, n.outRead = n.out[:0], 0
		if n.eof && len(n.in) == 0 {
			if n.err != nil {
				return 0, n.err
			}
			return 0, io.EOF
		}
		if !n.eof && len(n.in) < 32<<10 {
			if cap(n.in)-len(n.in) < 32<<10 {
				n.in = append(make([]byte, 0, len(n.in)+64<<10), n.in...)
			}
			k, err := n.r.Read(n.in[len(n.in):cap(n.in)])
			n.inTotal += int64(k)
			n.in = n.in[:len(n.in)+k]
			if err != nil {
				n.eof = true
				if err != io.EOF {
					n.err = err
				}
			}
			if k == 0 && !n.eof {
				continue
			}
		}
		n.transform()
	}
	k := copy(p, n.out[n.outRead:])
	n.outRead += k
	return k, nil
}

// transform moves what can be decided from in to out; near the end of in
// (but not of the stream) it stops where a literal could still be cut.
// Runs of string bytes and of bytes that cannot start a literal are
// copied at once.
func (n *nonFiniteReader) transform() {
	in := n.in
	i := 0
	for i < len(in) {
		if n.inString {
			if n.escaped {
				n.out = append(n.out, in[i])
				n.outPos++
				n.escaped = false
				i++
				continue
			}
			j := i + quoteOrBackslash(in[i:])
			if j > i {
				n.out = append(n.out, in[i:j]...)
				n.outPos += int64(j - i)
				i = j
				continue
			}
			c := in[i]
			n.out = append(n.out, c)
			n.outPos++
			if c == '\\' {
				n.escaped = true
			} else {
				n.inString = false
			}
			i++
			continue
		}
		j := i
		for j < len(in) {
			if c := in[j]; c == '"' || c == 'N' || c == 'I' || c == '-' {
				break
			}
			j++
		}
		if j > i {
			n.out = append(n.out, in[i:j]...)
			n.outPos += int64(j - i)
			i = j
			continue
		}
		c := in[i]
		if c == 'N' || c == 'I' || c == '-' {
			rest := in[i:]
			if !n.eof && len(rest) < longestLiteral {
				break // wait for more input
			}
			matched := false
			for _, lit := range literals {
				if bytes.HasPrefix(rest, lit) {
					n.quoted = append(n.quoted, n.outPos)
					n.quotedN = append(n.quotedN, int64(len(lit)))
					n.out = append(n.out, '"')
					n.out = append(n.out, lit...)
					n.out = append(n.out, '"')
					n.outPos += int64(len(lit) + 2)
					i += len(lit)
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		if c == '"' {
			n.inString = true
		}
		n.out = append(n.out, c)
		n.outPos++
		i++
	}
	n.in = append(n.in[:0], in[i:]...)
}

// ones and highs are the byte-wise constants of the word tests: 0x01 and
// 0x80 in each byte.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// quoteOrBackslash is the index of the first '"' or '\\' in b, len(b)
// if none: eight bytes at a time (the lowest mark of the word test is
// exact).
func quoteOrBackslash(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		bs := x ^ (ones * '\\')
		if m := ((q-ones)&^q | (bs-ones)&^bs) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' || b[i] == '\\' {
			return i
		}
	}
	return i
}
