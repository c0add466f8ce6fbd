package guidellm

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// checkObject: where fastObject takes raw, encoding/json takes it too and
// gives the same members; stringOf answers as encoding/json.
func checkObject(t *testing.T, raw []byte) (took bool) {
	t.Helper()
	var want obj
	err := json.Unmarshal(raw, &want)
	got, ok := fastObject(raw)
	if ok {
		if err != nil || want == nil {
			t.Fatalf("fastObject took %q, which encoding/json rejects (%v)", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("fastObject(%q) = %v, encoding/json %v", raw, got, want)
		}
	}
	var ws string
	if json.Unmarshal(raw, &ws) != nil {
		ws = ""
	}
	if s := stringOf(raw); s != ws {
		t.Fatalf("stringOf(%q) = %q, encoding/json %q", raw, s, ws)
	}
	for _, v := range want {
		var ws string
		if json.Unmarshal(v, &ws) != nil {
			ws = ""
		}
		if s := stringOf(v); s != ws {
			t.Fatalf("stringOf(%q) = %q, encoding/json %q", v, s, ws)
		}
	}
	return ok
}

var objectEdges = []string{
	`{}`, ` {"a": 1} `, `{"a": 1, "a": 2}`, `{"\u0061": 1}`, "{\"\xff\": 1}", `{"a": 1} x`, `{"a": [1, {"b": null}], "c": "d\"\\\/\n\t\u00e9"}`,
	`null`, `[]`, `"s"`, `"a\u0000b"`, "\"\xff\"", `"\ud800"`, `{"a": tru}`, `{"a": 01}`, `{"a": 1,}`, `{"a" 1}`, `{"a": "\x"}`,
	"{\"a\": \"\x01\"}", `{"a": NaN}`, `{"a": "NaN"}`, `{"output": "caf\u00e9 \"x\"", "info": {"timings": {"request_start": 1.5e9}}}`,
}

// TestFastObject: the fast path agrees with encoding/json on the edges and
// takes every request record of the bundled reports.
func TestFastObject(t *testing.T) {
	for _, e := range objectEdges {
		checkObject(t, []byte(e))
	}
	data, err := os.ReadFile("testdata/v04-requests/benchmarks.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Benchmarks []struct {
			Requests map[string][]json.RawMessage `json:"requests"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(bytes.ReplaceAll(data, []byte("NaN"), []byte(`"NaN"`)), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range doc.Benchmarks {
		for _, list := range b.Requests {
			for _, r := range list {
				if !checkObject(t, r) {
					t.Fatalf("fastObject does not take a bundled record: %s", r)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no request records")
	}
}

// FuzzFastObject holds fastObject and stringOf to encoding/json.
func FuzzFastObject(f *testing.F) {
	for _, e := range objectEdges {
		f.Add([]byte(e))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkObject(t, raw) })
}
