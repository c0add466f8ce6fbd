package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCount checks, for every tokenizer that needs no npm fixture, that
// Count never fails or panics on arbitrary bytes (valid or invalid UTF-8)
// and keeps its invariants: addSpecial never lowers the count, invalid
// UTF-8 counts as its U+FFFD replacement, and a byte-level or
// byte-fallback tokenizer never yields more tokens than bytes (plus the
// one "▁" a dummy prefix adds).
func FuzzCount(f *testing.F) {
	seeds := []string{
		"", "hello world", " ", "\x00", "\xff\xfe", "\xe2\x82", "a\xc0\xafb",
		"<|endoftext|>", "<s></s><unk>", "[MASK] foo", "▁▁▁", "  \n\t  ",
		"😀👍🏽👨‍👩‍👧", "你好世界", "ﷺ", "e\u0301", strings.Repeat(" ", 300), strings.Repeat("ab", 200),
		"12345678901234567890", "'s'S'LL", "\r\n\r\n", "\u2028\u00a0\u3000",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	type entry struct {
		tok   Tokenizer
		bound bool // tokens <= bytes + 1
	}
	var toks []entry
	for _, spec := range allLocalSpecs {
		tok, err := Open(spec)
		if err != nil {
			f.Fatal(err)
		}
		// tiny-metaspace applies NFKC, which can lengthen the text.
		toks = append(toks, entry{tok, !strings.Contains(spec, "metaspace")})
	}
	// The real tokenizers when tools/tokenizer-fixtures is installed: all
	// are byte-level or byte-fallback tokenizers.
	for _, l := range realTokenizers() {
		toks = append(toks, entry{l.tok, true})
	}
	f.Fuzz(func(t *testing.T, s string) {
		clean := sanitizeUTF8(s)
		if !utf8.ValidString(clean) {
			t.Fatalf("sanitizeUTF8(%q) = %q is not valid UTF-8", s, clean)
		}
		for _, e := range toks {
			plain, err := e.tok.Count(s, false)
			if err != nil {
				t.Fatalf("%s.Count(%q, false): %v", e.tok.Name(), s, err)
			}
			special, err := e.tok.Count(s, true)
			if err != nil {
				t.Fatalf("%s.Count(%q, true): %v", e.tok.Name(), s, err)
			}
			if special < plain || special > plain+2 {
				t.Fatalf("%s: Count(%q) = %d without and %d with specials", e.tok.Name(), s, plain, special)
			}
			if s != clean {
				if c, _ := e.tok.Count(clean, false); c != plain {
					t.Fatalf("%s: Count(%q) = %d but Count(%q) = %d", e.tok.Name(), s, plain, clean, c)
				}
			}
			if e.bound && plain > len(clean)+1 {
				t.Fatalf("%s: Count(%q) = %d tokens for %d bytes", e.tok.Name(), s, plain, len(clean))
			}
			if clean == "" && plain != 0 {
				t.Fatalf("%s: empty text counts %d", e.tok.Name(), plain)
			}
		}
	})
}
