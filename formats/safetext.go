package formats

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// SafeText returns s with every character that can act on a terminal or
// reorder the text around it replaced by '?': the C0 controls
// (U+0000–U+001F, tab and newline included), DEL (U+007F), the C1 controls
// (U+0080–U+009F), the bidirectional embeddings and overrides U+202A–U+202E
// and the isolates U+2066–U+2069. Invalid UTF-8 bytes become '?' too. It is
// for untrusted text written where it would be interpreted — file and
// directory names, labels and messages on stderr — so that an ESC sequence
// in a directory name cannot clear the screen and a U+202E cannot make a
// name read backwards. Printable text, other Unicode included, is kept as
// it is; s is returned unchanged (no allocation) when nothing needs
// replacing.
func SafeText(s string) string {
	i := unsafeIndex(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for j := i; j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		if unsafeRune(r) || r == utf8.RuneError && n == 1 {
			b.WriteByte('?')
		} else {
			b.WriteString(s[j : j+n])
		}
		j += n
	}
	return b.String()
}

// SafeLines is SafeText applied to each line of s: the newlines between
// lines are kept (a multi-line message stays multi-line), every other
// control character is replaced.
func SafeLines(s string) string {
	if unsafeIndex(s) < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = SafeText(l)
	}
	return strings.Join(lines, "\n")
}

// unsafeIndex is the byte index of the first character SafeText replaces,
// or -1.
func unsafeIndex(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			return i // C0 or DEL
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r) || r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// unsafeRune reports whether SafeText replaces the character r.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// SpreadsheetSafe returns s with a leading ' when a spreadsheet (Excel,
// LibreOffice, Google Sheets) would evaluate it as a formula: it starts
// with =, +, -, @, a tab or a carriage return and does not parse as a
// number ("-5" and "+1e3" stay numbers; "=cmd|' /C calc'!A0" becomes
// "'=cmd|' /C calc'!A0"). OWASP, "CSV Injection".
func SpreadsheetSafe(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// CutRunes returns s cut after n runes, with "…" when something was cut;
// the work is bounded by n, not by len(s) (a 200 MB error text is not
// converted to runes to keep its first 40).
func CutRunes(s string, n int) string {
	i := 0
	for k := 0; k < n; k++ {
		if i >= len(s) {
			return s
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return s
	}
	return s[:i] + "…"
}
