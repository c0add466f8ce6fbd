package llmperf

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeFields reads the array's next element as dec.Decode(&fields) does
// (the same errors: the element's bytes are read and validated by
// dec.Decode into a json.RawMessage, the only step that can meet a syntax
// error or the end of the input), then splits the object by hand
// (fastFields): the values point into the element's own copy, and the
// usual key names are not allocated again. Anything fastFields does not
// take exactly as encoding/json would goes through json.Unmarshal, the
// reference; FuzzFastFields holds the two to the same maps.
func decodeFields(dec *json.Decoder) (map[string]json.RawMessage, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if fields, ok := fastFields(raw); ok {
		return fields, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// keyNames are the key strings fastFields hands out without allocating.
var keyNames = func() map[string]string {
	m := map[string]string{"GEN_TEXT": "GEN_TEXT"}
	for k := range knownKeys {
		m[k] = k
	}
	return m
}()

// fastFields splits the JSON object raw into its members (the last of a
// repeated name wins, as in encoding/json). ok is false for anything but
// an object whose names have no escapes, control characters or invalid
// UTF-8, and whose values are valid JSON: the reference decodes those.
func fastFields(raw []byte) (map[string]json.RawMessage, bool) {
	s := rowScanner{b: raw}
	s.ws()
	if !s.eat('{') {
		return nil, false
	}
	fields := make(map[string]json.RawMessage, 12)
	s.ws()
	if s.eat('}') {
		s.ws()
		return fields, s.i == len(s.b)
	}
	for {
		key, ok := s.name()
		if !ok {
			return nil, false
		}
		s.ws()
		if !s.eat(':') {
			return nil, false
		}
		s.ws()
		start := s.i
		if !s.value(0) {
			return nil, false
		}
		fields[key] = json.RawMessage(s.b[start:s.i:s.i])
		s.ws()
		if s.eat('}') {
			s.ws()
			return fields, s.i == len(s.b)
		}
		if !s.eat(',') {
			return nil, false
		}
		s.ws()
	}
}

// rowScanner reads JSON from b at i.
type rowScanner struct {
	b []byte
	i int
}

func (s *rowScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *rowScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *rowScanner) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// name reads a member name without escapes (ok false for one with
// escapes, control characters or invalid UTF-8).
func (s *rowScanner) name() (string, bool) {
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
			if k, ok := keyNames[string(raw)]; ok {
				return k, true
			}
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

// maxDepth bounds value's nesting (encoding/json's own limit is 10000).
const maxDepth = 1000

// value validates one JSON value.
func (s *rowScanner) value(depth int) bool {
	if depth > maxDepth || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		s.ws()
		if s.eat(end) {
			return true
		}
		for {
			if c == '{' {
				if !s.str() {
					return false
				}
				s.ws()
				if !s.eat(':') {
					return false
				}
				s.ws()
			}
			if !s.value(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(end) {
				return true
			}
			if !s.eat(',') {
				return false
			}
			s.ws()
		}
	case c == '"':
		return s.str()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

// number validates a JSON number (-?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?).
func (s *rowScanner) number() bool {
	s.eat('-')
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	start := s.i
	if n := digits(); n == 0 || n > 1 && s.b[start] == '0' {
		return false
	}
	if s.eat('.') && digits() == 0 {
		return false
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// str validates a string, escapes included.
func (s *rowScanner) str() bool {
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
