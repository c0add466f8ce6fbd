package tokenizer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	goldenfile "github.com/tokentrace/tokentrace/internal/golden" // the package has its own golden type
)

// tinySPFiles are the committed outputs of tinySPModel.
var tinySPFiles = map[string][]byte{
	"testdata/tiny-sp.model":         tinySPModel(true, false, 1),
	"testdata/tiny-sp-squeeze.model": tinySPModel(true, true, -1),
}

// TestTinySPModelFilesUpToDate keeps the committed models equal to
// tinySPModel's output (-update rewrites them).
func TestTinySPModelFilesUpToDate(t *testing.T) {
	for path, want := range tinySPFiles {
		if goldenfile.Update() {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from tinySPModel; run go test -run TestTinySPModelFilesUpToDate -update and regenerate golden.json", path)
		}
	}
}

func TestBuiltinsAndNames(t *testing.T) {
	want := []string{"cl100k_base", "gpt2", "o200k_base", "p50k_base", "r50k_base"}
	if got := Builtins(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Builtins() = %v, want %v", got, want)
	}
	names := map[string]string{
		"gpt2":                           "r50k_base",
		"r50k_base":                      "r50k_base",
		"p50k_base":                      "p50k_base",
		"cl100k_base":                    "cl100k_base",
		"o200k_base":                     "o200k_base",
		"testdata/tiny-llama.json":       "tokenizer.json:tiny-llama.json",
		"testdata/tiny-sp.model":         "sentencepiece:tiny-sp.model",
		"testdata/tiny-sp-squeeze.model": "sentencepiece:tiny-sp-squeeze.model",
	}
	for spec, name := range names {
		if got := mustOpen(t, spec).Name(); got != name {
			t.Errorf("Open(%q).Name() = %q, want %q", spec, got, name)
		}
	}
}

// Hand-checked counts: each "why" says which tokens make the count.
func TestHandChecked(t *testing.T) {
	cases := []struct {
		spec       string
		text       string
		addSpecial bool
		want       int
		why        string
	}{
		{"r50k_base", "hello world", false, 2, "hello | Ġworld"},
		{"gpt2", "hello world", true, 2, "GPT-2 adds no BOS"},
		{"p50k_base", "hello world", false, 2, "hello | Ġworld"},
		{"cl100k_base", "hello world", false, 2, "hello | Ġworld"},
		{"cl100k_base", "hello world", true, 2, "tiktoken has no BOS"},
		{"o200k_base", "hello world", false, 2, "hello | Ġworld"},
		{"r50k_base", "", false, 0, "empty"},
		{"r50k_base", "", true, 0, "empty, nothing added"},
		{"o200k_base", "", false, 0, "empty"},
		{"r50k_base", "<|endoftext|>", false, 1, "special token string is one token"},
		{"r50k_base", "a<|endoftext|>b", false, 3, "a | <|endoftext|> | b"},
		{"cl100k_base", "<|fim_prefix|><|endofprompt|>", false, 2, "two specials"},
		{"r50k_base", "<|endofprompt|>", false, 8, "not special in r50k: < | end of prom pt | >"},

		{"testdata/tiny-bytelevel.json", "hello world", false, 2, "hello | Ġworld"},
		{"testdata/tiny-bytelevel.json", "hello world", true, 2, "ByteLevel post-processor adds nothing"},
		{"testdata/tiny-bytelevel.json", "é", false, 2, "two byte symbols Ã ©, no merge"},
		{"testdata/tiny-bytelevel.json", "hello<|endoftext|>", false, 2, "hello | added token"},
		{"testdata/tiny-bytelevel.json", "", false, 0, "empty"},

		{"testdata/tiny-llama.json", "hello world", false, 2, "▁hello | ▁world"},
		{"testdata/tiny-llama.json", "hello world", true, 3, "<s> ▁hello ▁world"},
		{"testdata/tiny-llama.json", "", false, 0, "empty"},
		{"testdata/tiny-llama.json", "", true, 1, "BOS alone, LLMPerf's count for an empty output"},
		{"testdata/tiny-llama.json", "é", false, 3, "▁ | <0xC3> | <0xA9> (byte fallback)"},
		{"testdata/tiny-llama.json", "<s>", false, 1, "added token in text"},

		{"testdata/tiny-metaspace.json", "AB ab 123 abc", false, 8, "▁ab ▁ab ▁ 1 2 3 ▁ab c"},
		{"testdata/tiny-metaspace.json", "AB ab 123 abc", true, 10, "<s> … </s>"},
		{"testdata/tiny-metaspace.json", "ＡＢ", false, 1, "NFKC+lowercase then ▁ab"},
		{"testdata/tiny-metaspace.json", "xyz", false, 2, "▁ | <unk> (fused)"},

		{"testdata/tiny-sp.model", "hello world", false, 2, "▁hello | ▁world"},
		{"testdata/tiny-sp.model", "hello world", true, 3, "BOS ▁hello ▁world"},
		{"testdata/tiny-sp.model", "", false, 0, "empty"},
		{"testdata/tiny-sp.model", "", true, 1, "BOS alone"},
		{"testdata/tiny-sp.model", " hello", false, 2, "dummy prefix gives ▁▁hello: ▁ | ▁hello"},
		{"testdata/tiny-sp.model", "x", false, 2, "▁ | <0x78>"},
		{"testdata/tiny-sp.model", "<s>", false, 4, "control pieces are text: ▁ < s >"},
		{"testdata/tiny-sp-squeeze.model", "  hello   world  ", false, 2, "whitespace squeezed: ▁hello ▁world"},
		{"testdata/tiny-sp-squeeze.model", "hello", true, 1, "bos_id -1: nothing added"},
		{"testdata/tiny-sp-squeeze.model", "   ", false, 0, "only spaces: empty after squeeze"},
	}
	for _, c := range cases {
		tok := mustOpen(t, c.spec)
		if got := mustCount(t, tok, c.text, c.addSpecial); got != c.want {
			t.Errorf("%s.Count(%q, %v) = %d, want %d (%s)", c.spec, c.text, c.addSpecial, got, c.want, c.why)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec    string
		is      error
		mention string
	}{
		{"llama-2", ErrUnknown, "cl100k_base, gpt2, o200k_base, p50k_base, r50k_base"},
		{"meta-llama/Llama-2-7b-hf", ErrUnknown, "neither a built-in"},
		{"", ErrUnknown, "empty spec"},
		{empty, ErrUnknown, "neither tokenizer.json nor tokenizer.model"},
		{write("bad.json", "{not json"), nil, "not a tokenizer.json"},
		{write("nomodel.json", `{"added_tokens": []}`), nil, `no "model"`},
		{write("wp.json", `{"model": {"type": "WordPiece", "vocab": {}}}`), ErrUnsupported, "WordPiece"},
		{write("uni.json", `{"model": {"type": "Unigram", "vocab": []}}`), ErrUnsupported, "Unigram"},
		{write("drop.json", `{"model": {"type": "BPE", "dropout": 0.1, "vocab": {}, "merges": []}}`), ErrUnsupported, "dropout"},
		{write("norm.json", `{"normalizer": {"type": "BertNormalizer"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`), ErrUnsupported, "BertNormalizer"},
		{write("pre.json", `{"pre_tokenizer": {"type": "UnicodeScripts"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`), ErrUnsupported, "UnicodeScripts"},
		{write("merge.json", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}`), nil, "not in the vocabulary"},
		{write("garbage.model", "\xff\xff\xff\xff"), nil, "not a SentencePiece model"},
		{write("unigram.model", string(unigramModel())), ErrUnsupported, "unigram"},
	}
	for _, c := range cases {
		_, err := Open(c.spec)
		if err == nil {
			t.Errorf("Open(%q): no error", c.spec)
			continue
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("Open(%q) = %v, want errors.Is %v", c.spec, err, c.is)
		}
		if !strings.Contains(err.Error(), c.mention) {
			t.Errorf("Open(%q) = %q, want it to mention %q", c.spec, err, c.mention)
		}
	}
}

// unigramModel is tinySPModel with model_type UNIGRAM appended (a later
// field value wins in protobuf).
func unigramModel() []byte {
	m := tinySPModel(true, false, 1)
	// trainer_spec { model_type: UNIGRAM }
	return append(m, 0x12, 0x02, 0x18, 0x01)
}

func TestOpenDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/tiny-llama.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	tok := mustOpen(t, dir)
	if tok.Name() != "tokenizer.json:my-model" {
		t.Errorf("Name() = %q", tok.Name())
	}
	if n := mustCount(t, tok, "hello world", true); n != 3 {
		t.Errorf("count = %d, want 3", n)
	}
	// A .model in a folder without tokenizer.json, and content sniffing
	// for files with other extensions.
	dir2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir2, "tokenizer.model"), tinySPModel(true, false, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, mustOpen(t, dir2), "hello world", true); n != 3 {
		t.Errorf("folder with tokenizer.model: count = %d, want 3", n)
	}
	sniff := filepath.Join(dir2, "tok.bin")
	if err := os.WriteFile(sniff, append([]byte("\n  "), src...), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, mustOpen(t, sniff), "hello world", false); n != 2 {
		t.Errorf("sniffed JSON: count = %d, want 2", n)
	}
}

func TestSanitizeUTF8(t *testing.T) {
	const r = "\uFFFD"
	cases := map[string]string{
		"plain":            "plain",
		"a\xffb":           "a" + r + "b",
		"\xe2\x82":         r,             // truncated 3-byte sequence: one maximal subpart
		"\xe2\x82a":        r + "a",       //
		"\xf0\x9f\x98":     r,             // truncated emoji
		"\xc0\xaf":         r + r,         // C0 is never a lead byte
		"\xed\xa0\x80":     r + r + r,     // surrogate: ED then bytes out of A0..BF range
		"\xf4\x90\x80\x80": r + r + r + r, // above U+10FFFF
		"ok\xe2\x82\xac":   "ok€",
	}
	for in, want := range cases {
		if got := sanitizeUTF8(in); got != want {
			t.Errorf("sanitizeUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

// allLocalSpecs are tokenizers that need no npm fixture.
var allLocalSpecs = []string{
	"r50k_base", "p50k_base", "cl100k_base", "o200k_base",
	"testdata/tiny-bytelevel.json", "testdata/tiny-llama.json", "testdata/tiny-metaspace.json",
	"testdata/tiny-sp.model", "testdata/tiny-sp-squeeze.model",
}

func TestInvalidUTF8CountsAsReplaced(t *testing.T) {
	inputs := []string{"a\xffb", "\xe2\x82 hello", "\xf0\x9f\x98 x \xc0\xaf", "\x80\x80\x80"}
	for _, spec := range allLocalSpecs {
		tok := mustOpen(t, spec)
		for _, in := range inputs {
			got := mustCount(t, tok, in, false)
			want := mustCount(t, tok, sanitizeUTF8(in), false)
			if got != want {
				t.Errorf("%s: Count(%q) = %d, Count(replaced) = %d", spec, in, got, want)
			}
		}
	}
}

func TestConcurrentCount(t *testing.T) {
	texts := []string{"hello world", "CJK 你好世界 ", strings.Repeat("ab ", 50), "emoji 😀👍🏽", "<|endoftext|> x", ""}
	for _, spec := range allLocalSpecs {
		tok := mustOpen(t, spec)
		want := make([]int, len(texts))
		for i, s := range texts {
			want[i] = mustCount(t, tok, s, true)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for rep := 0; rep < 20; rep++ {
					for i, s := range texts {
						n, err := tok.Count(s, true)
						if err != nil || n != want[i] {
							errs <- spec + ": " + s
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("concurrent count differs: %s", e)
		}
	}
}
