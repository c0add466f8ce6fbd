package aiperf

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// checkFirstLineKeys: where the fast scan answers, its keys are
// encoding/json's (firstLineKeysJSON), and firstLineKeys always gives
// encoding/json's keys.
func checkFirstLineKeys(t *testing.T, line []byte) bool {
	t.Helper()
	wantTop, wantMeta := firstLineKeysJSON(line)
	top, meta, ok := firstLineKeysFast(line)
	if ok && (!reflect.DeepEqual(top, wantTop) || !reflect.DeepEqual(meta, wantMeta)) {
		t.Fatalf("line %q:\nfast          %q %q\nencoding/json %q %q", line, top, meta, wantTop, wantMeta)
	}
	// firstLineKeys reads up to the first newline only
	first, _, _ := bytes.Cut(line, []byte("\n"))
	wantTop, wantMeta = firstLineKeysJSON(first)
	if top, meta := firstLineKeys(line); !reflect.DeepEqual(top, wantTop) || !reflect.DeepEqual(meta, wantMeta) {
		t.Fatalf("line %q: firstLineKeys %q %q, encoding/json %q %q", line, top, meta, wantTop, wantMeta)
	}
	return ok
}

// TestFirstLineKeysFast: on the first line of every bundled AIPerf file,
// whole (where the fast scan must answer) and cut at every byte, and on
// damaged and unusual lines, the keys are encoding/json's.
func TestFirstLineKeysFast(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/aiperf/*/*.jsonl")
	more, _ := filepath.Glob("testdata/*/profile_export.jsonl")
	files = append(files, more...)
	if len(files) < 10 {
		t.Fatalf("only %d files", len(files))
	}
	answered := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		line, _, _ := bytes.Cut(data, []byte("\n"))
		if checkFirstLineKeys(t, line) {
			answered++
		}
		for n := 0; n < len(line); n += 1 + n/400 {
			checkFirstLineKeys(t, line[:n])
		}
	}
	if answered < len(files)/2 {
		t.Errorf("the fast scan answered on %d of %d whole first lines", answered, len(files))
	}
	for _, s := range []string{
		`{}`, `{ }`, `[]`, `{"metadata":1,"metrics":{}}`, `{"metadata":{"a":1},"metadata":[1]}`,
		`{"metadata":{"a":1},"metadata":{"b":2}}`, `{"a\u0062":1,"metadata":{}}`, `{"metadata":{"x\"y":1}}`,
		"{\"\xff\":1,\"metadata\":{}}", `{"metadata":{"request_start_ns":1}} trailing`, `{"a":1,}`, `{"a" 1}`,
		`{"metadata":{"a":{"b":[1,2,{"c":null}]}},"metrics":{"x":{"value":[1.5e3,-0]}}}`, `{"a":tru}`, `{"a":"\u12"}`,
		// a newline inside the object: firstLineKeys reads up to it only
		"{\n\"\"", "{\"a\":1,\n\"metadata\":{\"b\":2}}", "{\"metadata\":{\r\n\"session_num\":1}}",
	} {
		checkFirstLineKeys(t, []byte(s))
	}
}

// FuzzFirstLineKeys: on any line the keys are encoding/json's.
func FuzzFirstLineKeys(f *testing.F) {
	f.Add([]byte(`{"metadata":{"session_num":0,"x_correlation_id":"a"},"metrics":{"time_to_first_token":{"value":1.5,"unit":"ms"}}}`))
	f.Add([]byte(`{"metadata":{"a":1},"metadata":[1]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFirstLineKeys(t, line)
	})
}

// TestSniffBlankFirstLine: a profile export whose records follow blank
// lines (which the importer skips) is recognized by its first record.
func TestSniffBlankFirstLine(t *testing.T) {
	data, err := os.ReadFile("../../testdata/aiperf/llama31-8b-local-chatbot-c2/profile_export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, lead := range []string{"", "\n", "\r\n\n", " \t\n"} {
		head := append([]byte(lead), data[:min(len(data), 4096)]...)
		if k := sniff("run/records.jsonl", head); k != kindRaw {
			t.Errorf("lead %q: kind %v, want the raw records", lead, k)
		}
	}
}
