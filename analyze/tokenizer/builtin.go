package tokenizer

import (
	"fmt"
	"sort"
	"strings"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// builtinSpecials are the special tokens of each tiktoken encoding
// (tiktoken_ext/openai_public.py). A literal occurrence in the text counts
// as one token, as Hugging Face's added-token matching does.
var builtinSpecials = map[string][]string{
	"r50k_base":   {"<|endoftext|>"},
	"p50k_base":   {"<|endoftext|>"},
	"cl100k_base": {"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>"},
	"o200k_base":  {"<|endoftext|>", "<|endofprompt|>"},
}

// builtinAliases maps accepted spec names to canonical encodings.
var builtinAliases = map[string]string{
	"gpt2":        "r50k_base",
	"r50k_base":   "r50k_base",
	"p50k_base":   "p50k_base",
	"cl100k_base": "cl100k_base",
	"o200k_base":  "o200k_base",
}

// Builtins returns the spec names Open accepts without a file, sorted.
func Builtins() []string {
	names := make([]string, 0, len(builtinAliases))
	for n := range builtinAliases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// builtin wraps a tiktoken-go codec. The codec's vocabulary maps and its
// regexp2 split pattern are read-only after construction, so Count is safe
// for concurrent use.
type builtin struct {
	name     string
	codec    tiktoken.Codec
	specials []string // longest first, for leftmost-longest matching
}

func openBuiltin(spec string) (Tokenizer, bool) {
	name, ok := builtinAliases[spec]
	if !ok {
		return nil, false
	}
	c, err := tiktoken.Get(tiktoken.Encoding(name))
	if err != nil {
		// Every canonical name above is served by tiktoken-go; reaching
		// this is a programming error in the alias table.
		panic(fmt.Sprintf("tokenizer: tiktoken-go lacks %s: %v", name, err))
	}
	// Invalid UTF-8 is replaced by sanitizeUTF8 before the codec sees it.
	c.SetErrorMode(tiktoken.ErrorModeNone)
	sp := append([]string(nil), builtinSpecials[name]...)
	sort.Slice(sp, func(i, j int) bool { return len(sp[i]) > len(sp[j]) })
	return &builtin{name: name, codec: c, specials: sp}, true
}

func (b *builtin) Name() string { return b.name }

// Count implements Tokenizer. addSpecial is ignored: see Open.
func (b *builtin) Count(text string, addSpecial bool) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("tokenizer %s: internal error: %v", b.name, r)
		}
	}()
	text = sanitizeUTF8(text)
	total := 0
	for text != "" {
		i, sp := b.nextSpecial(text)
		if i < 0 {
			break
		}
		k, err := b.count(text[:i])
		if err != nil {
			return 0, err
		}
		total += k + 1
		text = text[i+len(sp):]
	}
	k, err := b.count(text)
	if err != nil {
		return 0, err
	}
	return total + k, nil
}

func (b *builtin) count(text string) (int, error) {
	if text == "" {
		return 0, nil
	}
	n, err := b.codec.Count(text)
	if err != nil {
		return 0, fmt.Errorf("tokenizer %s: %w", b.name, err)
	}
	return n, nil
}

// nextSpecial finds the leftmost special token in text (the longest one
// when several start at the same byte).
func (b *builtin) nextSpecial(text string) (int, string) {
	best, bestTok := -1, ""
	for _, sp := range b.specials {
		if i := strings.Index(text, sp); i >= 0 && (best < 0 || i < best) {
			best, bestTok = i, sp
		}
	}
	return best, bestTok
}
