package ingest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

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

// TestHeadKeys checks the first object's keys: top level, first element of
// an array, cut inside a value, an empty array, and heads that are not an
// object at all.
func TestHeadKeys(t *testing.T) {
	cases := []struct {
		head           string
		keys           []string
		inArray, empty bool
	}{
		{`{"a": 1, "b": {"x": [1, {"y": 2}]}, "c": "s"}`, []string{"a", "b", "c"}, false, false},
		{`[{"ttft_s": 0.5, "nested": {"ttft_s": 1}, "e2e": 2}, {"z": 1}]`, []string{"ttft_s", "nested", "e2e"}, true, false},
		{`{"a": 1, "b": [1, 2, 3`, []string{"a", "b"}, false, false}, // cut inside b's value
		{`{"a": NaN, "b": 1}`, []string{"a"}, false, false},          // stops at the syntax error
		{`[]`, nil, true, true},
		{` [ ] `, nil, true, true},
		{`[1, 2]`, nil, true, false},
		{`[`, nil, true, false},
		{`"text"`, nil, false, false},
		{``, nil, false, false},
	}
	for _, c := range cases {
		keys, inArray, empty := HeadKeys([]byte(c.head))
		if !slices.Equal(keys, c.keys) || inArray != c.inArray || empty != c.empty {
			t.Errorf("HeadKeys(%q) = %q, %v, %v; want %q, %v, %v", c.head, keys, inArray, empty, c.keys, c.inArray, c.empty)
		}
	}
	if !AnyKey([]string{"a", "ttft_s"}, []string{"e2e", "ttft_s"}) || AnyKey([]string{"a"}, []string{"b"}) || AnyKey(nil, []string{"a"}) {
		t.Error("AnyKey")
	}
}

// TestLabelFor checks that an explicit label wins over DefaultLabel.
func TestLabelFor(t *testing.T) {
	if got := (Options{Label: "mine"}).LabelFor("runs/c1/profile_export.json"); got != "mine" {
		t.Errorf("LabelFor with Label = %q", got)
	}
	if got := (Options{}).LabelFor("runs/c1/profile_export.json"); got != "c1" {
		t.Errorf("LabelFor without Label = %q, want c1", got)
	}
}

// TestQuotePythonNonFinite: Python's bare tokens outside strings are
// quoted (with the mark), the same words inside strings (escaped quotes
// included) are not; shifts point at the inserted strings, and
// OriginalOffset maps an output offset back, counted by hand.
func TestQuotePythonNonFinite(t *testing.T) {
	in := `{"a": NaN, "b": [Infinity, -Infinity], "s": "NaN \" Infinity", "c": 1}`
	out, shifts := QuotePythonNonFinite([]byte(in), "")
	want := `{"a": "NaN", "b": ["Infinity", "-Infinity"], "s": "NaN \" Infinity", "c": 1}`
	if string(out) != want || !slices.Equal(shifts, []int64{6, 19, 31}) {
		t.Fatalf("got %s %v\nwant %s [6 19 31]", out, shifts, want)
	}
	// "c" is at byte 63 of in, byte 69 of out (three quoted words, 2 bytes each)
	if got := OriginalOffset(69, shifts, ""); got != 63 {
		t.Errorf("OriginalOffset(69) = %d, want 63", got)
	}
	out, shifts = QuotePythonNonFinite([]byte(in), `\u0000`)
	want = `{"a": "\u0000NaN", "b": ["\u0000Infinity", "\u0000-Infinity"], "s": "NaN \" Infinity", "c": 1}`
	if string(out) != want || OriginalOffset(87, shifts, `\u0000`) != 63 {
		t.Fatalf("marked: got %s %v", out, shifts)
	}
	plain := []byte(`{"a": 1}`)
	if out, shifts := QuotePythonNonFinite(plain, ""); &out[0] != &plain[0] || shifts != nil {
		t.Errorf("a text without the words is returned as is")
	}
}

// TestSkipJSONValueLikeTokens: SkipJSONValue (a RawMessage decode) stops
// where skipping the value token by token does — the next token is the
// same — and fails on the same values: cut, malformed, non-standard.
func TestSkipJSONValueLikeTokens(t *testing.T) {
	walk := func(doc string, skip func(*json.Decoder) error) (out []string) {
		dec := json.NewDecoder(strings.NewReader(doc))
		if _, err := dec.Token(); err != nil { // '{' or '['
			return []string{"open: " + err.Error()}
		}
		for dec.More() {
			if strings.HasPrefix(strings.TrimSpace(doc), "{") {
				k, err := dec.Token()
				if err != nil {
					return append(out, "key error")
				}
				out = append(out, fmt.Sprint(k))
			}
			if err := skip(dec); err != nil {
				return append(out, "skip error")
			}
		}
		t, err := dec.Token()
		return append(out, fmt.Sprint(t, err))
	}
	byTokens := func(dec *json.Decoder) error {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		return SkipJSONRest(dec, t)
	}
	for _, doc := range []string{
		`{"a": 1, "b": {"x": [1, {"y": 2}]}, "c": "s", "d": [0.5, 1e3, -2], "e": null, "f": true}`,
		`[{"a": 1}, [1, [2, [3]]], "s", 4]`,
		`{"a": [1, 2, 3`,
		`{"a": {"b": 1}, "c": [1,`,
		`{"a": NaN, "b": 1}`,
		`{"a": [1 2], "b": 1}`,
		`{"a": {"b" 1}, "c": 2}`,
		`{"a": "x\u00e9\"y", "b": {}}`,
		`{"a": [], "b": {}, "c": ""}`,
		`{"a": 1}`,
	} {
		if got, want := walk(doc, SkipJSONValue), walk(doc, byTokens); !slices.Equal(got, want) {
			t.Errorf("%s: SkipJSONValue walks %q, token by token %q", doc, got, want)
		}
	}
}

// FuzzRawText: the plain-string shortcut of RawText gives what
// encoding/json gives.
func FuzzRawText(f *testing.F) {
	for _, s := range []string{`""`, `"abc"`, `"a\"b"`, "\"\xff\"", `"é"`, `null`, ` "x" `, `"a` + "\x01" + `"`, `12`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := func() string {
			var s string
			if err := json.Unmarshal(raw, &s); err == nil {
				return s
			}
			t := strings.TrimSpace(string(raw))
			if t == "null" {
				return ""
			}
			return t
		}()
		if got := RawText(raw); got != want {
			t.Fatalf("RawText(%q) = %q, want %q", raw, got, want)
		}
	})
}
