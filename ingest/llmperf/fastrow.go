package llmperf

import (
	"encoding/json"
	"sort"

	"github.com/tokentrace/tokentrace/ingest/internal/jsonscan"
)

// decodeFields reads the array's next element as dec.Decode(&fields) does
// (the same errors: the element's bytes are read and validated by
// dec.Decode into a json.RawMessage, the only step that can meet a syntax
// error or the end of the input), then splits the object by hand
// (fastFieldsInto). Anything that does not take exactly as encoding/json
// would goes through json.Unmarshal, the reference; FuzzFastFields holds
// the two to the same members. A JSON null is nil fields.
func decodeFields(dec *json.Decoder) (*fields, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	f := &fields{}
	if fastFieldsInto(raw, f) {
		return f, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, nil
	}
	return fieldsOf(m), nil
}

// fastFieldsInto splits the JSON object raw into f (reset first: the
// array's reader passes one for every element, so f and its values are
// valid only until the next element). It returns false for anything but
// an object whose names have no escapes, control characters or invalid
// UTF-8, and whose values are valid JSON: the reference decodes those.
func fastFieldsInto(raw []byte, f *fields) bool {
	f.reset()
	s := jsonscan.Scanner{B: raw}
	s.WS()
	ok := s.Members(func(name []byte) bool {
		key, ok := jsonscan.Name(name, keyNames)
		if !ok {
			return false
		}
		v, ok := s.Value(0)
		if ok {
			f.set(key, v[:len(v):len(v)])
		}
		return ok
	})
	s.WS()
	if !ok || s.I != len(s.B) {
		return false
	}
	sort.Strings(f.unknown)
	return true
}

// keyNames are the key strings fastFieldsInto hands out without
// allocating.
var keyNames = func() map[string]string {
	m := map[string]string{"GEN_TEXT": "GEN_TEXT"}
	for _, k := range knownKeys {
		m[k] = k
	}
	return m
}()
