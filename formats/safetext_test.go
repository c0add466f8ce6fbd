package formats

import (
	"strings"
	"testing"
)

// TestSafeText: a catalogue of hostile strings — terminal escapes, bell,
// C1 controls, DEL, bidi overrides and isolates, invalid UTF-8 — comes out
// with each such character (or byte) replaced by one '?', other text
// untouched.
func TestSafeText(t *testing.T) {
	for in, want := range map[string]string{
		"plain name.json":                   "plain name.json",
		"é 漢字 🙂 ✓":                          "é 漢字 🙂 ✓",
		"\x1b[2J\x1b[Hclear":                "?[2J?[Hclear",
		"bell\a":                            "bell?",
		"tab\there\nnewline\r":              "tab?here?newline?",
		"del\x7f":                           "del?",
		"c1 \u0085 \u009b31m":               "c1 ? ?31m",
		"\u202egnp.exe":                     "?gnp.exe",
		"\u202a\u202b\u202c\u202d":          "????",
		"\u2066iso\u2067\u2068\u2069":       "?iso???",
		"bad \xff\xfe utf8":                 "bad ?? utf8",
		"kept \u200b zero-width, \ufffd ok": "kept \u200b zero-width, \ufffd ok",
		"\x00nul":                           "?nul",
		"":                                  "",
	} {
		if got := SafeText(in); got != want {
			t.Errorf("SafeText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := SafeLines("line \x1b[31m1\nline 2\t"); got != "line ?[31m1\nline 2?" {
		t.Errorf("SafeLines: %q", got)
	}
	s := "nothing to replace"
	if n := testing.AllocsPerRun(10, func() { _ = SafeText(s) }); n != 0 {
		t.Errorf("%v allocations for clean text", n)
	}
}

// TestSpreadsheetSafe checks which cells get the quote: formulas and
// their look-alikes do, numbers and plain text do not.
func TestSpreadsheetSafe(t *testing.T) {
	for in, want := range map[string]string{
		"=cmd|' /C calc'!A0": "'=cmd|' /C calc'!A0",
		"+SUM(A1)":           "'+SUM(A1)",
		"-x":                 "'-x",
		"@foo":               "'@foo",
		"\tfoo":              "'\tfoo",
		"\rfoo":              "'\rfoo",
		"-5":                 "-5",
		"+1e3":               "+1e3",
		"-inf":               "-inf",
		"run-2":              "run-2",
		"":                   "",
	} {
		if got := SpreadsheetSafe(in); got != want {
			t.Errorf("SpreadsheetSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCutRunes checks the cut and that its work does not grow with the
// text: the same allocation for 1 KB and 64 MB.
func TestCutRunes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{{"héllo", 3, "hél…"}, {"héllo", 5, "héllo"}, {"héllo", 9, "héllo"}, {"", 3, ""}, {"abc", 0, "…"}} {
		if got := CutRunes(tc.s, tc.n); got != tc.want {
			t.Errorf("CutRunes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	small, big := strings.Repeat("é", 512), strings.Repeat("é", 32<<20)
	a := testing.AllocsPerRun(3, func() { _ = CutRunes(small, 40) })
	b := testing.AllocsPerRun(3, func() { _ = CutRunes(big, 40) })
	if a != b || b > 1 {
		t.Errorf("allocations: %v for 1 KB, %v for 64 MB", a, b)
	}
}
