package tokenizer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Tokenizer counts the tokens of a text. Implementations are safe for
// concurrent use by multiple goroutines and keep no state between calls.
type Tokenizer interface {
	// Name identifies the tokenizer in reports: the canonical built-in
	// encoding name ("r50k_base" also for the spec "gpt2"),
	// "tokenizer.json:<name>" or "sentencepiece:<name>", where <name> is
	// the file's base name, or its folder's base name when the file has
	// the conventional name (tokenizer.json, tokenizer.model).
	Name() string

	// Count returns the number of token ids that encoding text yields.
	//
	// addSpecial mirrors Hugging Face's add_special_tokens: false counts
	// the text alone (GenAI-Perf, AIPerf, vLLM and SGLang fallbacks);
	// true also counts what the tokenizer adds around a single sequence
	// (the BOS "<s>" of Llama tokenizers, which LLMPerf counts). What
	// each kind adds is documented on Open.
	//
	// The empty string counts 0 tokens (plus the added ones when
	// addSpecial). Invalid UTF-8 is first replaced, one U+FFFD per
	// maximal invalid subsequence, as Python's bytes.decode(errors=
	// "replace") does before any of the Python tools sees the text.
	// Count never panics on any input; an error means the tokenizer's
	// own machinery failed (for example a regular expression engine
	// error), not that the text was unusual.
	Count(text string, addSpecial bool) (int, error)
}

// ErrUnknown is wrapped by Open's error when spec names neither a built-in
// encoding nor an existing file.
var ErrUnknown = errors.New("unknown tokenizer")

// ErrUnsupported is wrapped by Open's error when a tokenizer file uses a
// feature this package does not implement (for example a WordPiece model
// or a SentencePiece unigram model). Open refuses such files rather than
// returning counts that would silently differ from the reference tool.
var ErrUnsupported = errors.New("unsupported tokenizer feature")

// Open returns the tokenizer that spec names. spec is one of:
//
//   - a built-in byte-level BPE encoding, vocabularies embedded in the
//     binary (tiktoken-go): "r50k_base" (alias "gpt2"), "p50k_base",
//     "cl100k_base", "o200k_base"; see [Builtins]. addSpecial adds
//     nothing: tiktoken encodings have no BOS, and Hugging Face's GPT-2
//     tokenizer (what GenAI-Perf loads for --tokenizer gpt2) has no
//     post-processor that adds one. A special-token string such as
//     "<|endoftext|>" inside the text counts as one token, as in
//     Hugging Face (split_special_tokens=False, the default).
//   - a path to a Hugging Face tokenizer.json (a file ending in .json, or
//     any file whose first non-blank byte is '{'). Only BPE models are
//     supported: checked on Llama 3, Mistral 7B and GPT-4o files; GPT-2,
//     Llama 2 and Qwen files are made of the same components. addSpecial adds the special tokens of the file's
//     post_processor for a single sequence: one "<s>" for a Llama/Mistral
//     TemplateProcessing, none for a bare ByteLevel processor, two for
//     Bert/Roberta processing. tokenizer_config.json is not read, so a
//     transformers class that rewrites the post-processor at load time
//     (LlamaTokenizerFast with add_bos_token/add_eos_token) is honoured
//     only as far as the file already reflects it. Added tokens in the
//     text count as one token each, with or without addSpecial.
//   - a path to a SentencePiece model (a file ending in .model, or any
//     other file). Only BPE models with an identity normalizer are
//     supported (checked on Llama 2's, which LLaMA 1 and Mistral v0.1
//     share in form). addSpecial adds the BOS piece (trainer bos_id,
//     1 for Llama) as LlamaTokenizer (add_bos_token=True,
//     add_eos_token=False) does; nothing when the model has no BOS.
//     Control pieces such as "<s>" written in the text are plain text, as
//     in sentencepiece itself.
//   - a directory: its tokenizer.json, or failing that its
//     tokenizer.model (the layout of a Hugging Face model folder).
//
// A built-in name wins over a file or folder of the same name (write
// "./gpt2" for the file). Nothing is ever downloaded: a Hugging Face model
// id such as
// "meta-llama/Llama-2-7b-hf" is an error unless it is also a local path.
// Errors wrap ErrUnknown (with the list of built-ins) for a spec that is
// neither a built-in name nor an existing path, ErrUnsupported for files
// using features outside the list above, and the os or encoding error
// for unreadable or malformed files.
func Open(spec string) (Tokenizer, error) {
	if t, ok := openBuiltin(spec); ok {
		return t, nil
	}
	if spec == "" {
		return nil, fmt.Errorf("tokenizer: empty spec: %w; want a built-in encoding (%s) or a path to tokenizer.json or a SentencePiece .model", ErrUnknown, strings.Join(Builtins(), ", "))
	}
	fi, err := os.Stat(spec)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("tokenizer: %q is neither a built-in encoding (%s) nor an existing file or folder: %w", spec, strings.Join(Builtins(), ", "), ErrUnknown)
		}
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	path := spec
	if fi.IsDir() {
		path, err = findInDir(spec)
		if err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if isJSON(path, data) {
		t, err := parseHFJSON(data, displayName("tokenizer.json", path))
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
		}
		return t, nil
	}
	t, err := parseSentencePiece(data, displayName("sentencepiece", path))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return t, nil
}

// findInDir returns the tokenizer file of a Hugging Face model folder.
func findInDir(dir string) (string, error) {
	for _, name := range []string{"tokenizer.json", "tokenizer.model"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("tokenizer: folder %q holds neither tokenizer.json nor tokenizer.model: %w", dir, ErrUnknown)
}

func isJSON(path string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return true
	}
	if strings.EqualFold(filepath.Ext(path), ".model") {
		return false
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// displayName builds Name() for a file-backed tokenizer.
func displayName(kind, path string) string {
	base := filepath.Base(path)
	if base == "tokenizer.json" || base == "tokenizer.model" {
		if dir := filepath.Base(filepath.Dir(path)); dir != "." && dir != string(filepath.Separator) {
			base = dir
		}
	}
	return kind + ":" + base
}

// sanitizeUTF8 replaces each maximal invalid UTF-8 subsequence by one
// U+FFFD, the rule of Python's bytes.decode(errors="replace") (Unicode
// "substitution of maximal subparts"). Valid input is returned as is.
func sanitizeUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
			n = maximalSubpart(s)
		} else {
			sb.WriteString(s[:n])
		}
		s = s[n:]
	}
	return sb.String()
}

// maximalSubpart returns the length (>= 1) of the maximal prefix of s that
// starts a well-formed UTF-8 sequence but does not complete one.
func maximalSubpart(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i <= need && i < len(s); i++ {
		c := s[i]
		if i == 1 && (c < lo || c > hi) || i > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
	}
	return i
}
