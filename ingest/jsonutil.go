package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
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
