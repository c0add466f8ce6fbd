package guidellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
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
	for k, v := range want {
		if n := want.strLen(k); n != len(want.str(k)) {
			t.Fatalf("strLen of %q = %d, str gives %d bytes", v, n, len(want.str(k)))
		}
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

// importBoth imports data as benchmarks.json with and without the fast
// list path and returns both dumps (rows, warnings and the error).
func importBoth(t *testing.T, data []byte, maxValue int64) (fast, ref string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "benchmarks.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(off bool) string {
		noFastList = off
		defer func() { noFastList = false }()
		var buf bytes.Buffer
		dm := formats.NewDumper(&buf)
		var warnings []string
		opt := ingest.Options{Label: "x", MaxValueBytes: maxValue, Warn: func(m string) { warnings = append(warnings, m) }}
		err := ingest.ImportFile(New(), path, opt, dm)
		if ferr := dm.Flush(); ferr != nil && err == nil {
			err = ferr
		}
		return fmt.Sprintf("%s\nwarnings %q\nerror %v", buf.String(), warnings, err)
	}
	return run(false), run(true)
}

func checkList(t *testing.T, data []byte, maxValue int64) {
	t.Helper()
	if fast, ref := importBoth(t, data, maxValue); fast != ref {
		t.Fatalf("fast list path differs from the reference on %q (cap %d):\nfast %s\nref  %s", clipped(data), maxValue, fast, ref)
	}
}

func clipped(b []byte) string {
	if len(b) > 3000 {
		return string(b[:3000]) + "…"
	}
	return string(b)
}

var listEdges = []string{
	`{"benchmarks": [{"requests": {"successful": []}}]}`,
	`{"benchmarks": [{"requests": {"successful": [ ], "errored": null, "total": null}}]}`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9, "end_time": 1.5e9}]}}]}`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9, "end_time": 1.5e9},]}}]}`,
	`{"benchmarks": [{"requests": {"successful": [,{"start_time": 1.5e9}]}}]}`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9} {"start_time": 1.5e9}]}}]}`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9}, 5, {"start_time": 1.5e9}]}}]}`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": NaN}, {"start_time": 1.5e9, "x": [NaN, -Infinity]}]}}]}`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9}, {"start_time": 1.5e9, "start_time": 1}]}}]}`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9}, {"start_time": 1.5e9}`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9}, {"start_time": 1.5`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9}, {"start_time": 1.5e9}], "incomplete": [{"start_time": 1.5e9}]}}, {"requests": {"errored": [{"start_time": 1.5e9, "error": "x"}]}}]} `,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9}]}}]} x`,
	`{"benchmarks": [{"requests": {"successful": [{"start_time": 1.5e9}, {"start_time": "\u0031"}, {"start_time": tru}]}}]}`,
	"{\"benchmarks\": [{\"requests\": {\"successful\": [ \n {\"start_time\": 1.5e9} ,\n\t{\"start_time\": 1.5e9} \n ] , \"errored\": [ {\"start_time\": 1.5e9}, {\"start_time\": 1.5e9}], \"x\": [}}]}",
	"{\"benchmarks\": [{\"requests\": {\"successful\": [ \n {\"start_time\": 1.5e9} ,\n\t{\"start_time\": 1.5e9} \n ] , \"errored\": [ {\"start_time\": 1.5e9}, {\"start_time\": 1.5e9}  {}]}}]}",
	"{\"benchmarks\": [{\"requests\": {\"successful\": [ \n {\"start_time\": 1.5e9} ,\n\t{\"start_time\": 1.5e9} \n ] , \"errored\": [ {\"start_time\": 1.5e9}, {\"start_time\": 1.5e9} ]}, \"metrics\": {\"a\": [1,,2]}}]}",
}

// TestFastListMatches: on the bundled reports, cut at many places, and on
// the hand-over edges, under several caps, importing with the fast list
// path gives the reference's rows, notes, warnings and errors.
func TestFastListMatches(t *testing.T) {
	for _, e := range listEdges {
		for _, m := range []int64{0, 40, 10} {
			checkList(t, []byte(e), m)
		}
	}
	files, _ := filepath.Glob("testdata/*/benchmarks.json")
	if len(files) < 4 {
		t.Fatalf("only %d bundled reports", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkList(t, b, 0)
		checkList(t, b, 1500)
		step := max(len(b)/30, 1)
		for cut := step; cut < len(b); cut += step {
			checkList(t, b[:cut], 0)
		}
	}
}

// FuzzFastList holds the fast list path to the reference on any report.
func FuzzFastList(f *testing.F) {
	for _, e := range listEdges {
		f.Add([]byte(e), uint16(0))
	}
	for _, p := range []string{"testdata/v03-requests/benchmarks.json", "testdata/truncated/benchmarks.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxValue uint16) {
		checkList(t, data, int64(maxValue))
	})
}
