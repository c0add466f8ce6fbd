package llmperf

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// checkFastFields: where fastFields takes raw, encoding/json must take it
// too and give the same map (names, and each value's exact bytes).
func checkFastFields(t *testing.T, raw []byte) bool {
	t.Helper()
	var fast fields
	if !fastFieldsInto(raw, &fast) {
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("fast path took what encoding/json rejects (%v): %q", err, raw)
	}
	if m == nil {
		t.Fatalf("fast path took a null: %q", raw)
	}
	ref := fieldsOf(m)
	for k := range fast.v {
		if !bytes.Equal(fast.v[k], ref.v[k]) || (fast.v[k] == nil) != (ref.v[k] == nil) {
			t.Fatalf("member %q: fast %q, reference %q: %q", knownKeys[k], fast.v[k], ref.v[k], raw)
		}
	}
	if fast.genText != ref.genText || !slices.Equal(fast.unknown, ref.unknown) {
		t.Fatalf("other members: fast %v %q, reference %v %q: %q", fast.genText, fast.unknown, ref.genText, ref.unknown, raw)
	}
	return true
}

// TestFastFields: the bundled runs' rows all take the fast path, as
// encoding/json reads them; lines it must leave to the reference.
func TestFastFields(t *testing.T) {
	n := 0
	for _, path := range []string{"testdata/edge-rows/individual_responses.json", "../../testdata/llmperf/leaderboard-bedrock-70b/individual_responses.json", "../../testdata/llmperf/apeterson7-triton-llama2-7b-2req/individual_responses.json"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(b, &elems); err != nil {
			t.Fatal(err)
		}
		for _, e := range elems {
			if !bytes.HasPrefix(e, []byte("{")) {
				continue
			}
			if !checkFastFields(t, e) {
				t.Errorf("%s: the fast path declined %.200s", path, e)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("%d rows checked", n)
	}
	for _, s := range []string{`null`, `[1]`, `5`, `{"a\u0041":1}`, `{"a":1,}`, `{"a":01}`, `{"a":[1,]}`, "{\"a\x01\":1}", `{"a":1} x`, `{"a":"\x"}`} {
		if fastFieldsInto([]byte(s), &fields{}) {
			t.Errorf("fast path took %q", s)
		}
	}
	for _, s := range []string{`{}`, ` {"a" : [ {"b":null} , "c\"\u00e9" ] , "a":-1.5e+3 } `, `{"ttft_s":0.5,"error_code":null,"GEN_TEXT":"x","é":true}`} {
		if !checkFastFields(t, []byte(s)) {
			t.Errorf("fast path declined %q", s)
		}
	}
}

// FuzzFastFields: on any element the fast path either declines or gives
// encoding/json's map.
func FuzzFastFields(f *testing.F) {
	f.Add([]byte(`{"error_code":null,"error_msg":"","ttft_s":0.31,"inter_token_latency_s":[0.01,0.02],"x":{"y":[true,false]}}`))
	f.Add([]byte(`{"a":1,"a":"2","number_output_tokens":"12"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkFastFields(t, raw)
	})
}
