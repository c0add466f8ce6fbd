package genaiperf

import (
	"bytes"
	"unicode/utf8"
)

// strTemplate speeds up the "response" strings of a streamed request. A
// server's SSE chunks differ from one another only in the token text
// (vLLM: `data: {\"id\":\"chatcmpl-…\",…,\"delta\":{\"content\":\"` +
// token + `\"},\"logprobs\":null,…}\n\n`), so after two reads the parser
// knows the escaped bytes every string starts with (pre) and ends with
// (suf, starting at an escaped quote) and their unescaped text. A string
// that has both gets its text by copying those and unescaping only the
// part between them, which must end at its first escaped quote. Anything
// else — and any unusual byte in the middle — goes to str, and the
// template is rebuilt from that string and the previous one.
//
// The answer is str's: pre ends and suf starts on an escape boundary of a
// string str accepted, so unescaping the three parts separately gives the
// whole string's text, and the middle is checked byte by byte as str
// checks it. FuzzResponseTemplate compares it with encoding/json.
type strTemplate struct {
	pre, suf   []byte // escaped bytes, owned (the read buffer moves)
	preU, sufU []byte // their unescaped text
	ok         bool
}

// response reads the "response" string at p.i (its opening quote) into
// p.text, by the template when it fits and by str otherwise; prev is the
// previous response string of the request (escaped, without quotes; nil
// for the first).
func (p *reqParser) response(prev []byte) bool {
	start := p.i + 1
	if p.tpl.ok && p.byTemplate() {
		return true
	}
	if !p.str() {
		return false
	}
	if prev != nil {
		p.tpl.build(prev, p.s[start:p.i-1])
	}
	return true
}

// byTemplate reads the string at p.i when it starts with pre, continues
// with plain bytes and simple escapes up to its first escaped quote, and
// ends there with suf. On false nothing has changed.
func (p *reqParser) byTemplate() bool {
	t := &p.tpl
	s := p.s
	i := p.i + 1
	if len(s)-i < len(t.pre)+len(t.suf)+1 || !bytes.Equal(s[i:i+len(t.pre)], t.pre) {
		return false
	}
	j := i + len(t.pre)
	if need := len(p.text) + len(t.preU) + len(s) - j + len(t.sufU); cap(p.text) < need {
		p.text = append(p.text[:cap(p.text)], make([]byte, need-cap(p.text))...)[:len(p.text)]
	}
	out := p.text[:cap(p.text)]
	k := len(p.text)
	k += copy(out[k:], t.preU)
	for {
		if j >= len(s) {
			return false
		}
		c := s[j]
		switch {
		case c == '\\':
			if j+1 >= len(s) {
				return false
			}
			if s[j+1] == '"' {
				goto middleEnd
			}
			b := unescapeByte[s[j+1]]
			if b == 0 { // \u and invalid escapes: str decides
				return false
			}
			out[k] = b
			j, k = j+2, k+1
		case c == '"' || c < 0x20:
			return false
		case c < utf8.RuneSelf:
			out[k] = c
			j, k = j+1, k+1
		default:
			r, size := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && size <= 1 {
				return false
			}
			k += copy(out[k:], s[j:j+size])
			j += size
		}
	}
middleEnd:
	if len(s)-j < len(t.suf)+1 || !bytes.Equal(s[j:j+len(t.suf)], t.suf) || s[j+len(t.suf)] != '"' {
		return false
	}
	k += copy(out[k:], t.sufU)
	p.text, p.i = out[:k], j+len(t.suf)+1
	return true
}

// build makes the template from two consecutive strings str accepted
// (escaped bytes, without quotes): pre is their longest common prefix cut
// back to an escape (or UTF-8) boundary of cur, suf the rest of cur from
// its first escaped quote after pre. No template when there is no such
// quote or the strings are equal.
func (t *strTemplate) build(prev, cur []byte) {
	t.ok = false
	n := min(len(prev), len(cur))
	l := 0
	for l < n && prev[l] == cur[l] {
		l++
	}
	if l == len(cur) {
		return
	}
	// walk cur's units (a byte, an escape, a UTF-8 sequence) to the last
	// boundary at or before l, then on to the first escaped quote
	b, e := 0, -1
	for q := 0; q < len(cur); {
		n := unitLen(cur, q)
		if q >= l && cur[q] == '\\' && cur[q+1] == '"' {
			e = q
			break
		}
		if q+n <= l {
			b = q + n
		}
		q += n
	}
	if e < 0 {
		return
	}
	t.pre = append(t.pre[:0], cur[:b]...)
	t.suf = append(t.suf[:0], cur[e:]...)
	t.preU = unescapeValid(t.preU[:0], t.pre)
	t.sufU = unescapeValid(t.sufU[:0], t.suf)
	t.ok = true
}

// unitLen is the length of the unit of the valid escaped string s at q: an
// escape (2 bytes, 6 for \u), a UTF-8 sequence, or one byte.
func unitLen(s []byte, q int) int {
	switch c := s[q]; {
	case c == '\\':
		if s[q+1] == 'u' {
			return 6
		}
		return 2
	case c < utf8.RuneSelf:
		return 1
	default:
		_, size := utf8.DecodeRune(s[q:])
		return size
	}
}

// unescapeValid appends the text of the valid escaped string s (whole
// units, as str accepted them) to dst.
func unescapeValid(dst, s []byte) []byte {
	for q := 0; q < len(s); {
		if s[q] != '\\' {
			dst = append(dst, s[q])
			q++
			continue
		}
		if s[q+1] != 'u' {
			dst = append(dst, unescapeByte[s[q+1]])
			q += 2
			continue
		}
		var r rune
		for _, h := range s[q+2 : q+6] {
			r = r<<4 | rune(unhex(h))
		}
		dst = utf8.AppendRune(dst, r)
		q += 6
	}
	return dst
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
