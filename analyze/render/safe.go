package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/tokentrace/tokentrace/formats"
)

// Untrusted text stays text in every writer of this package: strings from
// traces (run ids, model names, error messages, notes, file names) are
// passed through clean (formats.SafeText, then Markdown escaping and a
// length cut) where they are written, and each human-readable output —
// text, Markdown, JUnit — goes through formats.SafeLines as a whole
// (safeOut), so that no field forgotten at its place can carry a terminal
// escape, a bell, a NUL or a bidi override. JSON keeps every value exact:
// the characters that act on a terminal are written as \u escapes
// (jsonSafe). HTML pages pass through SafeMarkup.

// safeOut runs write into a buffer and writes what it wrote to w with
// every line passed through formats.SafeLines (newlines kept, every other
// control character, DEL, C1, bidi embedding/override/isolate and invalid
// UTF-8 byte replaced by '?').
func safeOut(w io.Writer, write func(io.Writer) error) error {
	var b bytes.Buffer
	err := write(&b)
	if _, werr := io.WriteString(w, formats.SafeLines(b.String())); err == nil {
		err = werr
	}
	return err
}

// jsonSafe rewrites encoded JSON so that the characters formats.SafeText
// replaces and encoding/json writes raw (DEL, the C1 controls, the bidi
// embeddings, overrides and isolates) are \u escapes: the document
// decodes to the same values, and printed to a terminal it cannot act on
// it. Outside strings JSON is ASCII, so only string contents change.
func jsonSafe(b []byte) []byte {
	if !needsJSONEscape(b) {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b) + 64)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if escapeInJSON(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.Write(b[i : i+n])
		}
		i += n
	}
	return out.Bytes()
}

func needsJSONEscape(b []byte) bool {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if escapeInJSON(r) {
			return true
		}
		i += n
	}
	return false
}

// escapeInJSON: the characters of formats.SafeText's set that
// encoding/json leaves raw (it escapes the C0 controls itself and writes
// invalid UTF-8 as U+FFFD).
func escapeInJSON(r rune) bool {
	return r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// SafeMarkup is formats.SafeText over an HTML or SVG document: every
// character SafeText replaces becomes '?', except the newlines and tabs
// of the markup itself. html/template escapes markup but passes control
// and bidi characters; this pass removes them from the page as a whole.
func SafeMarkup(s string) string {
	if formats.SafeLines(s) == s {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = formats.SafeText(strings.TrimSuffix(p, "\r"))
			if strings.HasSuffix(p, "\r") {
				parts[j] += "\r"
			}
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}
