package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// TestUniqueLabels checks that a repeated label gets the first suffix no
// label of the list has, in input order, with one warning.
func TestUniqueLabels(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		renamed  int
	}{
		{"run-2 run run", "run-2 run run-3", 1},
		{"run run run-2", "run run-3 run-2", 1},
		{"a a a a", "a a-2 a-3 a-4", 3},
		{"a b c", "a b c", 0},
		{"a-2 a a a-3", "a-2 a a-4 a-3", 1},
	} {
		var warns []string
		got := UniqueLabels(strings.Fields(tc.in), func(s string) { warns = append(warns, s) }, func(i int) string { return "in" })
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%s: %s, want %s", tc.in, s, tc.want)
		}
		if tc.renamed == 0 && len(warns) > 0 || tc.renamed > 0 && (len(warns) != 1 || !strings.Contains(warns[0], "run_label_collision")) {
			t.Errorf("%s: warnings %q", tc.in, warns)
		}
	}
}

// TestDropDuplicates checks that only content decides: the same bytes
// under another name are dropped (and their label), other bytes of the
// same size kept, a known file's twin dropped.
func TestDropDuplicates(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c, d := write("a", "same"), write("b", "same"), write("c", "diff"), write("d", "kno!")
	jobs := []Job{{Path: a}, {Path: b}, {Path: c}, {Path: d}}
	known := []formats.SourceFile{{Path: "k", Role: "raw", Bytes: 4,
		SHA256: "ccd5f2f9e0cd37e1d9ac5bdc4f3a6b7e9c6c5a6b1e3a2f7d4a6e1a0c6b9d1f2e"}}
	var warns []string
	got, labels := DropDuplicates(jobs, []string{"A", "B", "C", "D"}, known, func(s string) { warns = append(warns, s) })
	var names []string
	for _, j := range got {
		names = append(names, filepath.Base(j.Path))
	}
	if strings.Join(names, " ") != "a c d" || strings.Join(labels, " ") != "A C D" {
		t.Errorf("kept %v labels %v, want a c d / A C D", names, labels)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "duplicate_input: 1 input(s)") {
		t.Errorf("warnings %q", warns)
	}
	sum, err := fileSHA256(d)
	if err != nil {
		t.Fatal(err)
	}
	known[0].SHA256 = sum
	got, _ = DropDuplicates(jobs, nil, known, nil)
	if len(got) != 2 {
		t.Errorf("with d known: %d jobs kept, want 2 (a, c)", len(got))
	}
}
