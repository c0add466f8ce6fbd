package ingest

import "testing"

// TestJSONSyntaxWhere: the 0-based offset of the rejected byte, counted by
// hand, at any depth; the end for a document cut short.
func TestJSONSyntaxWhere(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a": 1, @}`:       "byte 9",
		`{"a": [1,@]}`:      "byte 9", // a json.Decoder says 8
		`{"a": {"b": x}}`:   "byte 12",
		`{"a": 1 "b"}`:      "byte 8",
		`{"a":1} x`:         "byte 8",
		`{"a": "x`:          "byte 8",
		`{"a": 1`:           "byte 7",
		`{"a": 1}`:          "",
		`[1, 2]`:            "",
		"{\"a\": \"\xff\"}": "", // invalid UTF-8 is accepted (replaced) by encoding/json
	} {
		if got := JSONSyntaxWhere([]byte(doc)); got != want {
			t.Errorf("JSONSyntaxWhere(%q) = %q, want %q", doc, got, want)
		}
	}
}
