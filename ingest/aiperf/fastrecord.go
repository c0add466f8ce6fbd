package aiperf

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// fastDecodeRecord decodes one profile_export.jsonl line as decodeRecord
// does, in one pass: the object's members are scanned by hand, the small
// metadata and error objects handed to encoding/json, and the numbers of
// inter_chunk_latency's list — most of a record's bytes — parsed as they
// are scanned (no RawMessage copy, no second pass). ok is false for any
// line it does not take exactly as encoding/json would (escapes in names,
// a member name matching a field only case-insensitively, a missing
// metadata object, anything that is not valid JSON, data after the
// object): the caller then decodes it with decodeRecord, the reference,
// which also gives the errors. FuzzFastRecord holds the two to the same
// records. The record's raw values point into line: use it before the
// next line is read.
//
// BenchmarkDecodeRecord, a record of 400 inter-chunk values: 156 µs with
// encoding/json and floatList, 45 µs here (2-core machine under load).
func fastDecodeRecord(line []byte) (*record, bool) {
	s := scanner{b: line}
	var rec record
	s.ws()
	if s.peek() != '{' {
		return nil, false
	}
	ok := s.members(func(key string) bool {
		switch key {
		case "metadata":
			raw, ok := s.skip()
			return ok && json.Unmarshal(raw, &rec.Metadata) == nil
		case "metrics":
			return s.metrics(&rec)
		case "error":
			raw, ok := s.skip()
			return ok && json.Unmarshal(raw, &rec.Error) == nil
		}
		if foldsTo(key, "metadata", "metrics", "error") {
			return false // encoding/json matches names case-insensitively
		}
		_, ok := s.skip()
		return ok
	})
	if !ok {
		return nil, false
	}
	s.ws()
	if s.i != len(s.b) || rec.Metadata == nil {
		return nil, false
	}
	return &rec, true
}

// foldsTo reports whether key equals one of names case-insensitively
// (but is not one of them exactly).
func foldsTo(key string, names ...string) bool {
	for _, n := range names {
		if key != n && strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// metrics reads the "metrics" object into rec.Metrics.
func (s *scanner) metrics(rec *record) bool {
	if s.lit("null") {
		rec.Metrics = nil
		return true
	}
	if s.peek() != '{' {
		return false
	}
	if rec.Metrics == nil {
		// a second "metrics" adds to the first, as encoding/json does
		rec.Metrics = map[string]metric{}
	}
	return s.members(func(name string) bool {
		var m metric
		if !s.lit("null") && !s.metric(&m) {
			return false
		}
		rec.Metrics[name] = m
		return true
	})
}

// metric reads one {"value": …, "unit": "…"} object.
func (s *scanner) metric(m *metric) bool {
	if s.peek() != '{' {
		return false
	}
	return s.members(func(key string) bool {
		switch key {
		case "value":
			start := s.i
			m.list, m.listOK = nil, false
			if s.peek() == '[' {
				if list, ok := s.numbers(); ok {
					m.list, m.listOK = list, true
				} else {
					s.i = start // not a plain list of numbers: validate it whole
					if _, ok := s.skip(); !ok {
						return false
					}
				}
			} else if _, ok := s.skip(); !ok {
				return false
			}
			m.Value = json.RawMessage(s.b[start:s.i])
			return true
		case "unit":
			if s.lit("null") {
				m.Unit = ""
				return true
			}
			u, ok := s.str()
			m.Unit = u
			return ok
		}
		if foldsTo(key, "value", "unit") {
			return false
		}
		_, ok := s.skip()
		return ok
	})
}

// members reads the object at s.i (its '{' next), calling member with
// each name once the scanner stands at its value; member reads the value.
// False when the object is not one members takes (escapes in a name: the
// reference decodes those) or member returns false.
func (s *scanner) members(member func(key string) bool) bool {
	if !s.eat('{') {
		return false
	}
	s.ws()
	if s.eat('}') {
		return true
	}
	for {
		key, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		if !member(key) {
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

// numbers reads a list of plain JSON numbers; ok is false (s.i anywhere)
// when an element is anything else.
func (s *scanner) numbers() ([]float64, bool) {
	s.i++ // '['
	s.ws()
	out := make([]float64, 0, 64)
	if s.eat(']') {
		return out, true
	}
	for {
		start := s.i
		for s.i < len(s.b) {
			c := s.b[s.i]
			if c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' {
				s.i++
				continue
			}
			break
		}
		tok := s.b[start:s.i]
		if len(tok) == 0 || !validNumber(tok) {
			return nil, false
		}
		// the string does not outlive the call (an error is discarded)
		f, err := strconv.ParseFloat(unsafe.String(&tok[0], len(tok)), 64)
		if err != nil {
			return nil, false
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

// scanner reads JSON from b at i.
type scanner struct {
	b []byte
	i int
}

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

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) lit(w string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		s.i += len(w)
		return true
	}
	return false
}

// str reads a string without escapes (ok false for one with escapes,
// control characters or invalid UTF-8: the reference decodes those).
func (s *scanner) str() (string, bool) {
	if !s.eat('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !utf8.Valid(raw) {
				return "", false
			}
			return string(raw), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

// skip validates one JSON value and returns its bytes.
func (s *scanner) skip() ([]byte, bool) {
	start := s.i
	if !s.value(0) {
		return nil, false
	}
	return s.b[start:s.i], true
}

// maxDepth bounds skip's nesting (encoding/json's own limit is 10000).
const maxDepth = 1000

func (s *scanner) value(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch c := s.peek(); {
	case c == '{':
		s.i++
		s.ws()
		if s.eat('}') {
			return true
		}
		for {
			if !s.anyString() {
				return false
			}
			s.ws()
			if !s.eat(':') {
				return false
			}
			s.ws()
			if !s.value(depth + 1) {
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
			if !s.value(depth + 1) {
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
		return s.anyString()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		for s.i < len(s.b) {
			c := s.b[s.i]
			if c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E' {
				s.i++
				continue
			}
			break
		}
		return validNumber(s.b[start:s.i])
	}
	return false
}

// anyString validates a string, escapes included.
func (s *scanner) anyString() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+5 > len(s.b) {
					return false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				s.i += 5
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}
