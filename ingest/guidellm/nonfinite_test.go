package guidellm

import (
	"bytes"
	"io"
	"os"
	"testing"
	"testing/iotest"
)

// refQuote is what nonFiniteReader must produce: the input with every
// bare NaN, Infinity and -Infinity outside strings quoted, and the output
// offsets of the quoted literals.
func refQuote(in []byte) (out []byte, at []int64) {
	inString, escaped := false, false
	for i := 0; i < len(in); {
		c := in[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			out = append(out, c)
			i++
			continue
		}
		matched := false
		for _, lit := range literals {
			if bytes.HasPrefix(in[i:], lit) {
				at = append(at, int64(len(out)))
				out = append(append(append(out, '"'), lit...), '"')
				i += len(lit)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		if c == '"' {
			inString = true
		}
		out = append(out, c)
		i++
	}
	return out, at
}

func checkNonFinite(t *testing.T, in []byte) {
	t.Helper()
	want, at := refQuote(in)
	for _, r := range []io.Reader{bytes.NewReader(in), iotest.HalfReader(bytes.NewReader(in)), iotest.OneByteReader(bytes.NewReader(in))} {
		nf := newNonFiniteReader(r)
		got, err := io.ReadAll(nf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("nonFiniteReader(%q) = %q, want %q", in, got, want)
		}
		if len(nf.quoted) != len(at) {
			t.Fatalf("nonFiniteReader(%q) quoted at %v, want %v", in, nf.quoted, at)
		}
		for k := range at {
			if nf.quoted[k] != at[k] {
				t.Fatalf("nonFiniteReader(%q) quoted at %v, want %v", in, nf.quoted, at)
			}
		}
	}
}

// TestNonFinite: bare literals are quoted outside strings only, across
// reads of any size.
func TestNonFinite(t *testing.T) {
	for _, s := range []string{``, `NaN`, `[NaN, -Infinity, Infinity, -1, "NaN", "a\"NaN", "\\", NaN]`, `{"a": "x\\\\"NaN"}`,
		`{"a": -Infinit}`, `"unterminated NaN`, `NaNNaN`, `-NaN`, `{"output": "long text with \"quotes\" and \\ backslashes NaN Infinity -Infinity", "x": NaN}`} {
		checkNonFinite(t, []byte(s))
	}
	data, err := os.ReadFile("testdata/truncated/benchmarks.json")
	if err != nil {
		t.Fatal(err)
	}
	checkNonFinite(t, data)
}

// FuzzNonFinite holds nonFiniteReader to refQuote.
func FuzzNonFinite(f *testing.F) {
	f.Add([]byte(`[NaN, "a\"NaN", -Infinity]`))
	f.Fuzz(func(t *testing.T, in []byte) { checkNonFinite(t, in) })
}
