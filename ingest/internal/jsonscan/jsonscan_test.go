package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// whole reports whether data is one JSON value as Skip reads it: the
// value, then only whitespace. A space is appended so that a number
// ending the input is not taken for a cut one.
func whole(data []byte) (ok, short bool) {
	s := Scanner{B: append(append([]byte{}, data...), ' ')}
	s.WS()
	if !s.Skip(0) {
		return false, s.Short
	}
	s.WS()
	return s.I == len(s.B), s.Short
}

func TestSkipMatchesEncodingJSON(t *testing.T) {
	for _, c := range []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `true`, `false`, `null`,
		` {"a": [1, 2.5, "x\u00e9\n", {"b": null}], "c": true} `,
		`"12345678\"abcdefgh\\"`, `"\ud800"`, "\"\xff\xfe\"",
		`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `1.5.3`, `[1,]`, `{"a"}`, `{"a":1,}`, `{a:1}`,
		`"\x"`, `"\u12g4"`, "\"a\tb\"", "\"12345678\x01\"", `tru`, `nul`, `[1 2]`, `{"a":1 "b":2}`, ``, ` `,
	} {
		ok, _ := whole([]byte(c))
		if want := json.Valid([]byte(c)); ok != want {
			t.Errorf("Skip(%q) = %v, encoding/json %v", c, ok, want)
		}
	}
}

// TestShort: every proper prefix of a valid value is refused with Short
// set (more input may complete it), and a wrong byte without it.
func TestShort(t *testing.T) {
	v := `{"k": [12.5e-3, "ab\"c\u00e9", true, null, false, {"x": -0}]}`
	for k := 1; k < len(v); k++ {
		s := Scanner{B: []byte(v[:k])}
		if s.Skip(0) || !s.Short {
			t.Fatalf("prefix %q: ok or not short", v[:k])
		}
	}
	for _, c := range []string{`[1,}`, `"a` + "\x01", `tx`, `01 `, `{"a":1]`} {
		s := Scanner{B: []byte(c)}
		if ok := s.Skip(0); ok || s.Short {
			t.Errorf("%q: ok %v short %v, want refused and not short", c, ok, s.Short)
		}
	}
	s := Scanner{B: []byte("12")}
	if tok, ok := s.Number(); ok || tok != nil || !s.Short {
		t.Errorf("Number at the end: %q %v short %v, want refused as short", tok, ok, s.Short)
	}
}

func TestDepth(t *testing.T) {
	for _, n := range []int{MaxDepth + 1, MaxDepth + 2} {
		v := strings.Repeat("[", n) + strings.Repeat("]", n)
		ok, _ := whole([]byte(v))
		if want := n <= MaxDepth+1; ok != want {
			t.Errorf("depth %d: ok %v, want %v", n, ok, want)
		}
	}
}

func TestStrAndMembers(t *testing.T) {
	s := Scanner{B: []byte(`"abcdefghij\"k" `)}
	lit, esc, ok := s.Str()
	if !ok || !esc || string(lit) != `"abcdefghij\"k"` || s.I != 15 {
		t.Fatalf("Str = %q %v %v at %d", lit, esc, ok, s.I)
	}
	s = Scanner{B: []byte(`{"a": 1, "bc" : [2], "d":{}}`)}
	var got []string
	ok = s.Members(func(key []byte) bool {
		v, ok := s.Value(1)
		got = append(got, string(key)+"="+string(v))
		return ok
	})
	if want := "a=1 bc=[2] d={}"; !ok || strings.Join(got, " ") != want || s.I != len(s.B) {
		t.Fatalf("Members = %v %q, want %q", ok, got, want)
	}
	s = Scanner{B: []byte(`{"\u0061": 1}`)}
	if s.Members(func([]byte) bool { return s.Skip(1) }) {
		t.Fatal("Members took a name with an escape")
	}
}

func TestValidNumber(t *testing.T) {
	for c, want := range map[string]bool{"0": true, "-0": true, "10": true, "1.25": true, "1e5": true, "1E+5": true, "-1.5e-05": true,
		"01": false, "-": false, "1.": false, ".1": false, "1e": false, "1e+": false, "+1": false, "1-": false, "--1": false} {
		if got := ValidNumber([]byte(c)); got != want {
			t.Errorf("ValidNumber(%q) = %v", c, got)
		}
	}
}

// FuzzSkip holds the scanner to encoding/json on any input: the same
// verdict on a whole value, Str's bytes a string encoding/json reads
// (esc when they hold a backslash), and every proper prefix of a valid
// value refused as short.
func FuzzSkip(f *testing.F) {
	for _, c := range []string{`{"a": [1, 2.5, "x\u00e9\n", {"b": null}], "c": true}`, `"12345678\"abcdefgh\\"`, "\"\xff\"", `-0.5e+3`, `[01]`, `"\u12"`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ok, _ := whole(data)
		valid := json.Valid(data)
		if ok != valid && bytes.Count(data, []byte("[")) <= MaxDepth && bytes.Count(data, []byte("{")) <= MaxDepth {
			t.Fatalf("Skip(%q) = %v, encoding/json %v", data, ok, valid)
		}
		s := Scanner{B: data}
		if lit, esc, ok := s.Str(); ok {
			var str string
			if err := json.Unmarshal(lit, &str); err != nil || esc != bytes.Contains(lit, []byte(`\`)) || !bytes.Equal(lit, data[:s.I]) {
				t.Fatalf("Str took %q (esc %v): %v", lit, esc, err)
			}
		}
		if valid && len(data) <= 512 {
			v := bytes.TrimRight(data, " \t\r\n")
			for k := 1; k < len(v); k++ {
				s := Scanner{B: v[:k]}
				s.WS()
				if s.Skip(0) || !s.Short {
					t.Fatalf("prefix %q of %q: ok or not short", v[:k], v)
				}
			}
		}
	})
}
