package genaiperf

import (
	"encoding/json"
	"reflect"
	"testing"
)

// reqSeeds are request objects the fast path must decode (fast true) or
// leave to encoding/json (false).
var reqSeeds = []struct {
	json string
	fast bool
}{
	{`{"timestamp":1700000000000000000,"request_inputs":{"payload":"{\"stream\":true}"},"response_timestamps":[1,2],"response_outputs":[{"response":"data: {\"choices\":[]}\n\n"},{"response":"data: [DONE]\n\n"}]}`, true},
	{`{"timestamp":5,"sequence_id":3,"request_inputs":{"text_input":["a"],"max_tokens":[4]},"response_timestamps":[6],"response_outputs":[{"text_output":["x","y"]}]}`, true},
	{` { "timestamp" : -7 , "extra" : [ {"a":null}, true, 1.5e3 ], "response_outputs" : [ { "response" : "\u00e9\t\/\b\f\r" } ] } `, true},
	{`{"timestamp":1,"response_outputs":[{"response":"é"}]}`, true},
	{`{"Timestamp":1}`, false},               // case-insensitive match
	{`{"timestamp":1,"timestamp":2}`, false}, // repeated
	{`{"timestamp":1.0}`, false},             // not an integer
	{`{"timestamp":"1"}`, false},             // wrong type
	{`{"timestamp":null}`, false},            // null
	{`{"timestamp":1,"response_outputs":[{"response":null}]}`, false},
	{`{"timestamp":1,"response_outputs":[{"text_output":null}]}`, false},
	{`{"timestamp":1,"response_outputs":[{"response":"\ud83d\ude00"}]}`, false}, // surrogates
	{"{\"timestamp\":1,\"response_outputs\":[{\"response\":\"\xff\"}]}", false}, // invalid UTF-8
	{`{"timestamp":1,,}`, false},
	{`{"timestamp":99999999999999999999}`, false},
	{`{"timestamp":1} x`, false},
	{`{"sequence_id":"12"}`, false},
	{`{"request_inputs":{"a\"b":1}}`, false},
}

func TestParseRequestAgrees(t *testing.T) {
	for _, c := range reqSeeds {
		var p reqParser
		var fast rawRequest
		ok := p.parse([]byte(c.json), &fast)
		if ok != c.fast {
			t.Errorf("%s: fast path answered %v, want %v", c.json, ok, c.fast)
		}
		if ok {
			compareRequests(t, c.json, &fast)
		}
	}
}

// compareRequests checks fast against encoding/json's decoding of raw.
func compareRequests(t *testing.T, raw string, fast *rawRequest) {
	t.Helper()
	var slow rawRequest
	if err := json.Unmarshal([]byte(raw), &slow); err != nil {
		t.Fatalf("%q: fast path accepted what encoding/json rejects: %v", raw, err)
	}
	// nil and empty slices are the same to the converter
	norm := func(r *rawRequest) {
		if len(r.ResponseTimestamps) == 0 {
			r.ResponseTimestamps = nil
		}
		if len(r.ResponseOutputs) == 0 {
			r.ResponseOutputs = nil
		}
	}
	f := *fast
	norm(&f)
	norm(&slow)
	if !reflect.DeepEqual(&f, &slow) {
		fj, _ := json.Marshal(f)
		sj, _ := json.Marshal(slow)
		t.Fatalf("%q:\nfast %s\nslow %s", raw, fj, sj)
	}
}

// FuzzParseRequest: whenever the fast path answers, encoding/json accepts
// the bytes and decodes the same request.
func FuzzParseRequest(f *testing.F) {
	for _, c := range reqSeeds {
		f.Add([]byte(c.json))
	}
	for _, fx := range fixtures {
		var doc struct {
			Experiments []struct {
				Requests []json.RawMessage `json:"requests"`
			} `json:"experiments"`
		}
		_ = json.Unmarshal(fx.encode(), &doc)
		for _, x := range doc.Experiments {
			for _, r := range x.Requests {
				f.Add([]byte(r))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p reqParser
		var fast rawRequest
		if p.parse(data, &fast) {
			compareRequests(t, string(data), &fast)
		}
	})
}

// TestPlainRun: the word-at-a-time scan finds the same first stop byte as
// the byte table, for every byte value at every position, with a second
// stop byte after it (whose borrows must not move the answer).
func TestPlainRun(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 19; pos++ {
			for _, second := range []byte{'a', 0, '"', 0xff} {
				b := []byte("abcdefghijklmnopqrs")
				b[pos] = byte(c)
				if pos+1 < len(b) {
					b[pos+1] = second
				}
				want := 0
				for want < len(b) && !strStop[b[want]] {
					want++
				}
				if got := plainRun(b); got != want {
					t.Fatalf("%q: %d, want %d", b, got, want)
				}
			}
		}
	}
}
