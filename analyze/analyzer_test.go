package analyze

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSameContent: the pool's duplicate check for files imported without
// a hash (report) compares files: one file twice and a byte-for-byte copy
// are the same; a file of the same size with one byte changed, a shorter
// file and a missing file are not.
func TestSameContent(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20+5) // more than one 1 MB read
	for i := range data {
		data[i] = byte(i % 253)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a", data)
	cp := write("copy", data)
	changed := append([]byte{}, data...)
	changed[len(changed)-1] ^= 1
	ch := write("changed", changed)
	short := write("short", data[:len(data)-1])
	for _, c := range []struct {
		x, y string
		want bool
	}{
		{a, a, true},
		{a, cp, true},
		{a, ch, false},
		{a, short, false},
		{short, a, false},
		{a, filepath.Join(dir, "missing"), false},
	} {
		if got := sameContent(c.x, c.y); got != c.want {
			t.Errorf("sameContent(%s, %s) = %v, want %v", filepath.Base(c.x), filepath.Base(c.y), got, c.want)
		}
	}
}

// TestImplausible: negative latencies and latencies over a day (a request
// timestamp far from its responses: TTFT of 3.5e12 ms) are named with
// their counts; ordinary ones give no warning.
func TestImplausible(t *testing.T) {
	s := &samples{values: map[string][]float64{
		"ttft": {120, -3, 3.5e12},
		"e2e":  {900, 3.5e12},
		"itl":  {-0.5, 12},
	}}
	want := "negative latencies (1 negative ttft, 1 negative itl); latencies over a day (1 ttft, 1 e2e; a request start or a response time far from the others): check the source's clocks"
	if got := implausible(s); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	ok := &samples{values: map[string][]float64{"ttft": {0, 120, 86_400_000}, "e2e": {5000}}}
	if got := implausible(ok); got != "" {
		t.Errorf("plausible values flagged: %q", got)
	}
}
