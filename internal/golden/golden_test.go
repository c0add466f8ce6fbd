package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures; Fatal stops through a
// panic that run recovers.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	panic(stop{})
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func run(path string, got []byte) (r *recorder) {
	r = &recorder{}
	defer func() {
		if v := recover(); v != nil && v != (stop{}) {
			panic(v)
		}
	}()
	Check(r, path, got)
	return r
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A difference: .got written, first differing line named.
	r := run(path, []byte("a\nB\nc\n"))
	if len(r.errs) != 1 || r.fatal || !strings.Contains(r.errs[0], "line 2:\n got: B\nwant: b") || !strings.Contains(r.errs[0], path+".got") {
		t.Errorf("mismatch: errs %q, fatal %v", r.errs, r.fatal)
	}
	if b, err := os.ReadFile(path + ".got"); err != nil || string(b) != "a\nB\nc\n" {
		t.Errorf(".got = %q, %v", b, err)
	}

	// A match: no failure, the stale .got removed.
	if r := run(path, []byte("a\nb\nc\n")); len(r.errs) != 0 {
		t.Errorf("match: errs %q", r.errs)
	}
	if _, err := os.Stat(path + ".got"); !os.IsNotExist(err) {
		t.Errorf("stale .got not removed: %v", err)
	}

	// A missing golden file is fatal and names -update.
	if r := run(filepath.Join(dir, "missing.golden"), []byte("a")); !r.fatal || !strings.Contains(r.errs[0], "go test -update") {
		t.Errorf("missing: errs %q, fatal %v", r.errs, r.fatal)
	}

	// -update writes the file, creating its directory.
	*update = true
	defer func() { *update = false }()
	fresh := filepath.Join(dir, "sub", "y.golden")
	if r := run(fresh, []byte("new\n")); len(r.errs) != 0 {
		t.Errorf("update: errs %q", r.errs)
	}
	if b, err := os.ReadFile(fresh); err != nil || string(b) != "new\n" {
		t.Errorf("updated file = %q, %v", b, err)
	}
}

func TestFirstDiff(t *testing.T) {
	cases := []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\n got: c\nwant: b"},
		{"a\nb\n", "a\nb\nc\n", "line 3:\n got: c\nwant: "},
		{"a\nb", "a\nb\nc", "got 3 lines, want 2"},
		{"a\nb\nc", "a\nb\n", "line 3:\n got: \nwant: c"},
	}
	for _, c := range cases {
		if d := FirstDiff([]byte(c.want), []byte(c.got)); d != c.diff {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", c.want, c.got, d, c.diff)
		}
	}
}
