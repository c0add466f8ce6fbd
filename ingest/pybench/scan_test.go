package pybench

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/ingest"
)

// testColumns are the arrays the tests stream, as vLLM's importer does.
var testColumns = map[string]ColumnKind{
	"input_lens": NumberColumn, "output_lens": NumberColumn, "ttfts": NumberColumn,
	"itls": ListColumn, "errors": StringColumn, "generated_texts": TextColumn,
}

// sameFloats compares two float slices bit for bit, any NaN equal to any
// NaN (both mean "no value").
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if math.IsNaN(a[i]) && math.IsNaN(b[i]) {
			continue
		}
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// compareScan reads data (written to a file in dir) with Scan and with
// the general path (ReadValues, then Column, Columns, Strings) and
// returns how they differ ("" when they agree or Scan is unsure).
func compareScan(t testing.TB, dir string, data []byte, layout Layout) string {
	path := filepath.Join(dir, "f.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var lists [][]float64
	so := ScanOptions{Layout: layout, Columns: testColumns, OnList: func(v int, key string, i int, l []float64) {
		if l == nil {
			lists = append(lists, nil)
			return
		}
		lists = append(lists, append([]float64{}, l...))
	}}
	fast, err := Scan(bytes.NewReader(data), path, ingest.DefaultMaxValueBytes, so)
	if IsUnsure(err) {
		return ""
	}
	if err != nil {
		return "scan error " + err.Error()
	}
	ref, cut, err := ReadValues(path, data, layout)
	if err != nil || cut != "" {
		return fmt.Sprintf("scan read it, the general path did not: %v %q", err, cut)
	}
	if len(ref) != len(fast) {
		return fmt.Sprintf("%d values, want %d", len(fast), len(ref))
	}
	nList := 0
	for vi, rv := range ref {
		fv := fast[vi]
		if fv.Index != rv.Index || fv.Line != rv.Line || fv.Where != rv.Where || len(fv.Entries) != len(rv.Entries) {
			return fmt.Sprintf("value %d: %d %d %q %d, want %d %d %q %d", vi, fv.Index, fv.Line, fv.Where, len(fv.Entries), rv.Index, rv.Line, rv.Where, len(rv.Entries))
		}
		for i, re := range rv.Entries {
			fe := fv.Entries[i]
			if fe.Key != re.Key {
				return fmt.Sprintf("key %q, want %q", fe.Key, re.Key)
			}
			c := fv.Arrays[re.Key]
			if c == nil {
				if !bytes.Equal(fe.Value, re.Value) {
					return fmt.Sprintf("%s: %s, want %s", re.Key, fe.Value, re.Value)
				}
				continue
			}
			if string(fe.Value) != "[]" {
				return re.Key + ": not []"
			}
			at := rv.Where
			rvals, fvals := &ingest.Values{}, &ingest.Values{}
			switch c.Kind {
			case NumberColumn:
				want, err := Column(re.Key, re.Value, rvals, at, 1e6)
				if err != nil {
					return fmt.Sprintf("%s: general path error %v", re.Key, err)
				}
				got := NumberValues(re.Key, c, fvals, at, 1e6)
				if !sameFloats(got, want) || c.N != len(want) {
					return fmt.Sprintf("%s: %v, want %v", re.Key, got, want)
				}
			case StringColumn, TextColumn:
				want, err := Strings(re.Key, re.Value)
				if err != nil {
					return fmt.Sprintf("%s: general path error %v", re.Key, err)
				}
				if c.N != len(want) {
					return fmt.Sprintf("%s: %d strings, want %d", re.Key, c.N, len(want))
				}
				if c.Kind == StringColumn && !reflect.DeepEqual(c.Strings, want) && len(want) > 0 {
					return fmt.Sprintf("%s: %q, want %q", re.Key, c.Strings, want)
				}
				r, err := OpenColumn(path, 0, re.Key, c, ingest.DefaultMaxValueBytes)
				if err != nil {
					return err.Error()
				}
				for i := range want {
					s, err := r.Text()
					if err != nil || s != want[i] {
						r.Close()
						return fmt.Sprintf("%s[%d] again: %q %v, want %q", re.Key, i, s, err, want[i])
					}
				}
				r.Close()
			case ListColumn:
				want, err := Columns(re.Key, re.Value, rvals, at, 1e6)
				if err != nil {
					return fmt.Sprintf("%s: general path error %v", re.Key, err)
				}
				if c.N != len(want) {
					return fmt.Sprintf("%s: %d lists, want %d", re.Key, c.N, len(want))
				}
				r, err := OpenColumn(path, 0, re.Key, c, ingest.DefaultMaxValueBytes)
				if err != nil {
					return err.Error()
				}
				for i := range want {
					got, err := r.List(fvals, at, 1e6)
					if err != nil || !sameFloats(got, want[i]) && len(got)+len(want[i]) > 0 || int(c.Lens[i]) != len(want[i]) {
						r.Close()
						return fmt.Sprintf("%s[%d] again: %v %v, want %v", re.Key, i, got, err, want[i])
					}
					// OnList saw the same list, offending values as written
					seen := lists[nList]
					nList++
					if len(seen) != len(want[i]) {
						r.Close()
						return fmt.Sprintf("%s[%d]: OnList saw %v", re.Key, i, seen)
					}
				}
				r.Close()
			}
			if !reflect.DeepEqual(fvals.Checks(), rvals.Checks()) {
				return fmt.Sprintf("%s: checks %+v, want %+v", re.Key, fvals.Checks(), rvals.Checks())
			}
		}
	}
	return ""
}

var scanSeeds = []string{
	`{"backend": "openai-chat", "request_rate": "inf", "x": NaN, "y": [Infinity, -Infinity, {"a": [1, "b\"]"]}], "ttfts": [0.5, null, 1e999, -0.25, NaN, 3], "itls": [[0.01, 0.02], null, [], [null, -1, Infinity, 0.019895419]], "output_lens": [1, 2, 3, 4, 5, 6], "errors": ["", null, "Traceback (most recent call last):\n  x\nValueError: bad", "é\u00e9\ud83d\ude00", "", ""], "generated_texts": ["a\"b", null, "x\u0000", "", "\u2028", "z"]}`,
	`{"generated_texts": ["\u0000x"], "errors": ["\u0000NaN"]}`,
	`{"backend": "vllm", "duration": 1.5, "ttfts": [0.1, 0.2], "itls": [[0.01], [0.02, 0.03]], "generated_texts": ["hi", "there"], "errors": ["", ""]}` + "\n" + `{"backend": "vllm", "duration": 2, "ttfts": [1e-7, 12345678901234567890], "output_lens": [0.1e1, 2E+2]}`,
	`{"backend":"sglang","duration":1,"ttfts":[0.1],"itls":[[0.5,0.5,0.5]],"input_lens":[128],"output_lens":[3],"errors":[""],"generated_texts":["x"]}` + "\n\n" + `{"backend":"sglang","completed":0}` + "\n",
	`{"ttfts": [0.1, "0.2"], "itls": [[1, 2]]}`,
	`{"ttfts": [01]}`,
	`{"ttfts": [1, 2], "itls": [[1], [2], [3]]}`,
	"\ufeff" + `{"a": 1}`,
	`{"a": 1,}`,
	`{"ttfts": [0.123456789012345678, 1.7976931348623157e308, 5e-324, 4.9e-324, 0.0000000000000000000000001]}`,
}

func TestScanMatchesGeneralPath(t *testing.T) {
	dir := t.TempDir()
	for i, s := range scanSeeds {
		for _, layout := range []Layout{Objects, Lines} {
			if d := compareScan(t, dir, []byte(s), layout); d != "" {
				t.Errorf("seed %d layout %d: %s", i, layout, d)
			}
		}
	}
	// The first seed is read by Scan, not left to the general path.
	if _, err := Scan(strings.NewReader(scanSeeds[0]), "x", 1<<20, ScanOptions{Layout: Objects, Columns: testColumns}); err != nil {
		t.Errorf("seed 0: %v", err)
	}
	// The fixtures of both importers, most of which Scan reads itself.
	sure := 0
	for _, glob := range []string{"../vllmbench/testdata/*/*.json", "../sglangbench/testdata/*/*.jsonl", "../../testdata/vllm-bench/*/*.json", "../../testdata/sglang-bench/*/*.jsonl"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			layout := Objects
			if strings.HasSuffix(f, ".jsonl") {
				layout = Lines
			}
			if d := compareScan(t, dir, data, layout); d != "" {
				t.Errorf("%s: %s", f, d)
			}
			if _, err := Scan(bytes.NewReader(data), f, ingest.DefaultMaxValueBytes, ScanOptions{Layout: layout, Columns: testColumns}); err == nil {
				sure++
			} else {
				t.Logf("%s: %v", f, err)
			}
		}
	}
	if sure < 10 {
		t.Errorf("Scan read %d fixtures itself", sure)
	}
}

// TestScanCaps: what Scan holds is capped.
func TestScanCaps(t *testing.T) {
	data := `{"backend": "x", "ttfts": [` + strings.Repeat("0.5, ", 1000) + `0.5]}`
	_, err := Scan(strings.NewReader(data), "f.json", 4096, ScanOptions{Layout: Objects, Columns: testColumns})
	var fe *ingest.FormatError
	if !errorsIsCap(err) || !asFormat(err, &fe) || !strings.Contains(err.Error(), "ttfts") {
		t.Errorf("held past the cap: %v", err)
	}
	if _, err := Scan(strings.NewReader(data), "f.json", 1<<20, ScanOptions{Layout: Objects, Columns: testColumns}); err != nil {
		t.Errorf("under the cap: %v", err)
	}
}

func errorsIsCap(err error) bool { return err != nil && strings.Contains(err.Error(), "cap") }

func asFormat(err error, fe **ingest.FormatError) bool {
	e, ok := err.(*ingest.FormatError)
	*fe = e
	return ok
}

// TestParseNumber: parseNumber reads what strconv.ParseFloat reads, bit
// for bit, and refuses what JSON refuses.
func TestParseNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "0.019895419", "4000.000005614", "123456789012345678901234", "1e22", "1e23", "9007199254740993", "0.1e-30", "1.5E+3", "-2.5e-3", "1e999", "-1e999", "1e-400", "0.30000000000000004", "2.2250738585072011e-308"} {
		end, x, ok := parseNumber([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			t.Fatal(err)
		}
		if !ok || end != len(s) || math.Float64bits(x) != math.Float64bits(want) {
			t.Errorf("%s: %v %d %v, want %v", s, x, end, ok, want)
		}
	}
	for _, s := range []string{"", "-", "01x", ".5", "1.", "1e", "+1", "e5", "1.e5"} {
		end, _, ok := parseNumber([]byte(s))
		if ok && end == len(s) && json.Valid([]byte(s)) == false {
			t.Errorf("%q read as a number", s)
		}
	}
}

// FuzzScan: whatever Scan reads, it reads as the general path does.
func FuzzScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, lines bool) {
		layout := Objects
		if lines {
			layout = Lines
		}
		if d := compareScan(t, dir, data, layout); d != "" {
			t.Errorf("%q: %s", data, d)
		}
	})
}

// FuzzParseNumber: parseNumber agrees with encoding/json on every input.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"0.019895419", "1e23", "-0", "123456789012345678", "5e-324", "1e999", "0.022512345678901234", "-1.2345678901234567e-05", "9007199254740993"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.TrimSpace(s) != s {
			return // encoding/json reads around blanks; Scan skips them apart
		}
		end, x, ok := parseNumber([]byte(s))
		var want float64
		err := json.Unmarshal([]byte(s), &want)
		switch {
		case err == nil && (!ok || end != len(s) || math.Float64bits(x) != math.Float64bits(want)):
			t.Errorf("%q: %v %d %v, want %v", s, x, end, ok, want)
		case err != nil && ok && end == len(s) && !(math.IsInf(x, 0) && strings.Contains(err.Error(), "cannot unmarshal number")):
			t.Errorf("%q read as %v; encoding/json: %v", s, x, err)
		}
	})
}

// TestParseEight: eightDigits accepts exactly the 8-byte strings of ASCII
// digits (each byte changed to its neighbours '/' and ':', and to bytes
// with a digit's low nibble, is refused) and parseEight gives their value.
func TestParseEight(t *testing.T) {
	for _, s := range []string{"00000000", "12345678", "99999999", "19895419", "00002223", "90000001"} {
		v := binary.LittleEndian.Uint64([]byte(s))
		want, _ := strconv.ParseUint(s, 10, 64)
		if !eightDigits(v) || parseEight(v) != want {
			t.Errorf("%s: digits %v, value %d", s, eightDigits(v), parseEight(v))
		}
		for i := range 8 {
			for _, c := range []byte{'/', ':', 0x13, 0x43, 0xb3, 0} {
				b := []byte(s)
				b[i] = c
				if eightDigits(binary.LittleEndian.Uint64(b)) {
					t.Errorf("%q taken as digits", b)
				}
			}
		}
	}
}
