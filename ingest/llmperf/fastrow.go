package llmperf

import (
	"encoding/json"

	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
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
	return fastFieldsInto(raw, make(map[string]json.RawMessage, 12))
}

// fastFieldsInto is fastFields into fields, cleared first: the array's
// reader passes one map for every element (a map per element was a
// tenth of an LLMPerf import's allocations), so the map and its values
// are valid only until the next element.
func fastFieldsInto(raw []byte, fields map[string]json.RawMessage) (map[string]json.RawMessage, bool) {
	clear(fields)
	s := jsonscan.Scanner{B: raw}
	s.WS()
	ok := s.Members(func(name []byte) bool {
		key, ok := jsonscan.Name(name, keyNames)
		if !ok {
			return false
		}
		v, ok := s.Value(0)
		if ok {
			fields[key] = json.RawMessage(v[:len(v):len(v)])
		}
		return ok
	})
	s.WS()
	if !ok || s.I != len(s.B) {
		return nil, false
	}
	return fields, true
}
