package genaiperf

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"reflect"
	"strings"
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
	{`{"timestamp":1,"response_timestamps":[9223372036854775807,0,10]}`, true}, // compactInts
	{`{"timestamp":1,"response_timestamps":[]}`, true},
	{`{"timestamp":1,"response_timestamps":[ 1 , -2 ]}`, true},             // the general path
	{`{"timestamp":1,"response_timestamps":[9223372036854775808]}`, false}, // overflows int64
	{`{"timestamp":1,"response_timestamps":[12345678901234567890]}`, false},
	{`{"timestamp":1,"response_timestamps":[1,01]}`, false},
	{`{"timestamp":1,"response_timestamps":[1,2.0]}`, false},
	{`{"timestamp":1,"response_timestamps":[1,2e3]}`, false},
	{`{"timestamp":1,"response_timestamps":[1,]}`, false},
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

// plainRun is the length of b's leading run of bytes outside strStop, found
// with stopMask eight bytes at a time as str does.
func plainRun(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b) && !strStop[b[i]]; i++ {
	}
	return i
}

// TestPlainRun: the word-at-a-time scan (stopMask) finds the same first stop byte as
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

// TestResponseTemplate: a request whose response strings share a prefix
// and suffix is decoded by the template (checked by its state) and agrees
// with encoding/json, including strings the template must refuse: a
// middle with a quote, \u escape, control byte or invalid UTF-8, a suffix
// that differs, a string shorter than the template.
func TestResponseTemplate(t *testing.T) {
	pre, suf := `data: {\"choices\":[{\"delta\":{\"content\":\"`, `\"}}]}\n\n`
	var outs []string
	for _, mid := range []string{`a`, `b`, `é\n\\`, `x\\\"y`, `\u00e9`, `q`, `w`} {
		outs = append(outs, `{"response":"`+pre+mid+suf+`"}`)
	}
	// a long middle that grows the text buffer and then misses the suffix
	long := strings.Repeat("x", 9000)
	outs = append(outs, `{"response":"`+pre+long+`\"!"}`, `{"response":"`+pre+long+suf+`"}`)
	outs = append(outs, `{"response":"data: [DONE]\n\n"}`, `{"response":"`+pre+`z"}`, `{"response":"`+pre+`z`+suf+`"}`)
	raw := `{"timestamp":1,"response_outputs":[` + strings.Join(outs, ",") + `]}`
	var p reqParser
	var fast rawRequest
	if !p.parse([]byte(raw), &fast) {
		t.Fatal("fast path declined")
	}
	compareRequests(t, raw, &fast)
	if got := *fast.ResponseOutputs[2].Response; got != "data: {\"choices\":[{\"delta\":{\"content\":\"é\n\\\"}}]}\n\n" {
		t.Errorf("response 2: %q", got)
	}
	// the template after [a, b]: pre up to the content, suf from its end
	var tpl strTemplate
	tpl.build([]byte(pre+`a`+suf), []byte(pre+`b`+suf))
	if !tpl.ok || string(tpl.pre) != pre || string(tpl.suf) != suf || string(tpl.preU) != `data: {"choices":[{"delta":{"content":"` || string(tpl.sufU) != "\"}}]}\n\n" {
		t.Errorf("template %+v", tpl)
	}
	// a common prefix ending inside an escape is cut back before it
	tpl.build([]byte(`ab\ncd\"e`), []byte(`ab\tcd\"f`))
	if !tpl.ok || string(tpl.pre) != `ab` || string(tpl.suf) != `\"f` {
		t.Errorf("template %q %q", tpl.pre, tpl.suf)
	}
	tpl.build([]byte(`same`), []byte(`same`))
	if tpl.ok {
		t.Error("template from equal strings")
	}
}

// FuzzResponseTemplate: requests of response strings made from a fuzzed
// prefix, suffix and middles (the shape the template is for) decode as
// encoding/json decodes them whenever the fast path answers.
func FuzzResponseTemplate(f *testing.F) {
	f.Add(`data: {\"choices\":[{\"delta\":{\"content\":\"`, `\"}}]}\n\n`, ` a`, ` b`, `\\\"`, `\u00e9`)
	f.Add(`x\`, `\"`, `\\`, `\"`, "\xff", `\n`)
	f.Add(`"`, `\"\"`, `a\`, `é`, "\x01", `\ud800`)
	f.Fuzz(func(t *testing.T, pre, suf, a, b, c, d string) {
		var outs []string
		for _, mid := range []string{a, b, c, d, a, b} {
			outs = append(outs, `{"response":"`+pre+mid+suf+`"}`)
		}
		raw := `{"timestamp":1,"response_outputs":[` + strings.Join(outs, ",") + `]}`
		var p reqParser
		var fast rawRequest
		if p.parse([]byte(raw), &fast) {
			compareRequests(t, raw, &fast)
		}
	})
}

// TestParseObjectShort: every proper prefix of a request the fast path
// decodes is refused as short (more input may complete it), so that a
// request straddling the read buffer's end is parsed again once more is
// read instead of falling back to the lexer and encoding/json.
func TestParseObjectShort(t *testing.T) {
	tpl := `{"timestamp":1,"response_timestamps":[1,2,3],"response_outputs":[` +
		`{"response":"data: {\"choices\":[{\"delta\":{\"content\":\"é\"}}]}\n\n"},` +
		`{"response":"data: {\"choices\":[{\"delta\":{\"content\":\"\u00e9\"}}]}\n\n"},` +
		`{"response":"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"}]}`
	for _, raw := range append([]string{tpl}, func() (l []string) {
		for _, c := range reqSeeds {
			if c.fast {
				l = append(l, c.json)
			}
		}
		return l
	}()...) {
		raw = strings.TrimSpace(raw)
		for n := 1; n < len(raw); n++ {
			var p reqParser
			var rr rawRequest
			if _, ok, short := p.parseObject([]byte(raw[:n]), &rr); ok || !short {
				t.Errorf("%q: ok %v short %v", raw[:n], ok, short)
			}
		}
	}
}
