package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Entry is one key/value pair of a JSON object, in file order.
type Entry struct {
	Key   string
	Value json.RawMessage
}

// ObjectEntries returns the members of the JSON object raw in file order
// (tools' summaries are ordered; a Go map would lose it).
func ObjectEntries(raw []byte) ([]Entry, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []Entry
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, Entry{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// RawText renders a JSON value as text: a string as itself, null as "",
// anything else as its JSON.
func RawText(raw json.RawMessage) string {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		// a plain string (no escape, no control byte, valid UTF-8) is
		// its bytes: what encoding/json gives, without its scanner
		in := raw[1 : len(raw)-1]
		plain := true
		for _, c := range in {
			if c < 0x20 || c == '\\' || c == '"' {
				plain = false
				break
			}
		}
		if plain && utf8.Valid(in) {
			return string(in)
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	t := strings.TrimSpace(string(raw))
	if t == "null" {
		return ""
	}
	return t
}

// JSONSyntaxError checks that doc is valid JSON with encoding/json's
// validating scanner. When it is not, off is the 0-based offset of the
// first byte the scanner rejects (len(doc) for a document that ends inside
// a value) and err is encoding/json's *json.SyntaxError ("invalid character
// '@' looking for …"); err is nil for valid JSON. Offsets in errors from a
// json.Decoder can be a byte or more off; this one is exact.
func JSONSyntaxError(doc []byte) (off int64, err error) {
	var v json.RawMessage
	var syn *json.SyntaxError
	if err := json.Unmarshal(doc, &v); !errors.As(err, &syn) {
		return 0, nil
	}
	if strings.Contains(syn.Error(), "end of JSON input") {
		return int64(len(doc)), syn
	}
	return syn.Offset - 1, syn // the scanner counts the rejected byte
}

// JSONSyntaxWhere is the position, for a FormatError's Where, of the first
// byte of doc that is not valid JSON (see JSONSyntaxError): "byte N",
// 0-based; "" when doc is valid JSON (an error is then about its content,
// not its syntax).
func JSONSyntaxWhere(doc []byte) string {
	if off, err := JSONSyntaxError(doc); err != nil {
		return fmt.Sprintf("byte %d", off)
	}
	return ""
}

// HeadKeys returns the keys of the first JSON object in head (a file's
// first bytes): the top-level object, or the first element of a top-level
// array (inArray), skipping their values. It stops quietly at the first
// syntax error or at the end of head, so a file cut inside its first object
// yields the keys before the cut, and a head that starts with anything else
// yields none. emptyArray reports a head that starts "[]". head is decoded
// as it is: the caller trims a byte-order mark and maps non-standard tokens
// (Python's NaN) first if it needs to.
func HeadKeys(head []byte) (keys []string, inArray, emptyArray bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	t, err := dec.Token()
	if err != nil {
		return nil, false, false
	}
	if t == json.Delim('[') {
		inArray = true
		if t, err = dec.Token(); err != nil {
			return nil, true, false
		}
		if t == json.Delim(']') {
			return nil, true, true
		}
	}
	if t != json.Delim('{') {
		return nil, inArray, false
	}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			break
		}
		keys = append(keys, k)
		if SkipJSONValue(dec) != nil {
			break
		}
	}
	return keys, inArray, false
}

// SkipJSONValue reads and discards the next JSON value from dec (for a
// container, through its closing delimiter). The error is dec's.
//
// The value is read whole as a json.RawMessage (the decoder's scanner
// checks it without making a token of each element): detection skips
// AIPerf's inter-chunk arrays of hundreds of numbers in every file's
// head, which token by token cost about a millisecond a file.
func SkipJSONValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

// SkipJSONRest discards the rest of a JSON value whose first token t has
// been read from dec: nothing for a scalar (or a stray closing delimiter),
// the rest of the container for '{' or '['.
func SkipJSONRest(dec *json.Decoder, t json.Token) error {
	d, ok := t.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// AnyKey reports whether keys holds any of wanted: detection by a file's
// first keys (HeadKeys) against the keys only one tool writes.
func AnyKey(keys, wanted []string) bool {
	for _, w := range wanted {
		if slices.Contains(keys, w) {
			return true
		}
	}
	return false
}

// QuotePythonNonFinite returns raw with every bare NaN, Infinity and
// -Infinity outside strings — the tokens Python's json.dumps writes for
// float('nan') and ±float('inf'), which are not JSON — written as a JSON
// string: a quote, mark, the word, a quote (mark is JSON string content
// such as `\u0000` that keeps the quoted word apart from a string "NaN"
// the tool wrote; "" writes just "NaN"). shifts lists the offsets in the
// output where each inserted string starts; each one adds len(mark)+2
// bytes, so an offset in the output maps back to raw by subtracting
// those before it (OriginalOffset). Newlines are kept, so line numbers
// do not move. raw itself and nil are returned when raw holds neither
// word.
func QuotePythonNonFinite(raw []byte, mark string) (out []byte, shifts []int64) {
	if !bytes.Contains(raw, []byte("NaN")) && !bytes.Contains(raw, []byte("Infinity")) {
		return raw, nil
	}
	out = make([]byte, 0, len(raw)+16)
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		if w := pythonNonFiniteAt(raw[i:]); w != "" {
			shifts = append(shifts, int64(len(out)))
			out = append(out, '"')
			out = append(out, mark...)
			out = append(out, w...)
			out = append(out, '"')
			i += len(w) - 1
			continue
		}
		out = append(out, c)
	}
	return out, shifts
}

// OriginalOffset maps off, an offset in QuotePythonNonFinite's output
// with the given shifts and mark, back to the offset in its input.
func OriginalOffset(off int64, shifts []int64, mark string) int64 {
	n := int64(0)
	for _, s := range shifts {
		if s < off {
			n += int64(len(mark)) + 2
		}
	}
	return max(off-n, 0)
}

// pythonNonFiniteAt returns the Python non-finite token b starts with, or "".
func pythonNonFiniteAt(b []byte) string {
	for _, w := range []string{"NaN", "Infinity", "-Infinity"} {
		if bytes.HasPrefix(b, []byte(w)) {
			return w
		}
	}
	return ""
}
