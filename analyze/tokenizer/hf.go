package tokenizer

import (
	"encoding/json"
	"fmt"
)

// This file reads a Hugging Face tokenizer.json and runs its pipeline the
// way the Rust tokenizers crate (what transformers' *TokenizerFast wraps)
// does for tokenizer.encode(text, add_special_tokens=...):
//
//  1. split added tokens out of the raw text (those with normalized=false),
//  2. normalize each remaining segment, then split out added tokens with
//     normalized=true,
//  3. pre-tokenize each segment into words,
//  4. run the BPE model on each word,
//  5. when add_special_tokens, add the post-processor's special tokens.
//
// Only counts are produced, so offsets, type ids, truncation, padding and
// the decoder are not modelled.

// hfFile is the subset of tokenizer.json that matters for counting.
type hfFile struct {
	AddedTokens   []hfAddedToken  `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         json.RawMessage `json:"model"`
}

type hfAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// hfComponent holds the fields of every normalizer, pre-tokenizer and
// post-processor type this package implements; each type reads its own.
type hfComponent struct {
	Type string `json:"type"`

	Normalizers   []json.RawMessage `json:"normalizers"`   // Sequence normalizer
	PreTokenizers []json.RawMessage `json:"pretokenizers"` // Sequence pre-tokenizer
	Processors    []json.RawMessage `json:"processors"`    // Sequence post-processor

	Prepend             string     `json:"prepend"`              // Prepend
	Pattern             *hfPattern `json:"pattern"`              // Replace, Split
	Content             string     `json:"content"`              // Replace
	Behavior            string     `json:"behavior"`             // Split, Punctuation
	Invert              bool       `json:"invert"`               // Split
	StripLeft           *bool      `json:"strip_left"`           // Strip
	StripRight          *bool      `json:"strip_right"`          // Strip
	PrecompiledCharsmap *string    `json:"precompiled_charsmap"` // Precompiled

	AddPrefixSpace   *bool  `json:"add_prefix_space"`  // ByteLevel, Metaspace (old)
	UseRegex         *bool  `json:"use_regex"`         // ByteLevel
	Replacement      string `json:"replacement"`       // Metaspace
	PrependScheme    string `json:"prepend_scheme"`    // Metaspace
	Split            *bool  `json:"split"`             // Metaspace
	IndividualDigits bool   `json:"individual_digits"` // Digits

	Single        []map[string]json.RawMessage `json:"single"`         // TemplateProcessing
	SpecialTokens map[string]hfTemplateSpecial `json:"special_tokens"` // TemplateProcessing
}

type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

type hfTemplateSpecial struct {
	IDs []int `json:"ids"`
}

// hfTokenizer is a loaded tokenizer.json. All fields are read-only after
// parseHFJSON returns, so Count is safe for concurrent use.
type hfTokenizer struct {
	name       string
	rawAdded   *addedMatcher // added tokens matched on the raw text
	normAdded  *addedMatcher // added tokens matched on normalized text
	normalizer normalizer    // nil: identity
	pre        preTokenizer  // nil: the whole segment is one word
	model      *bpeModel
	nSpecial   int // tokens the post-processor adds to a single sequence
}

func parseHFJSON(data []byte, name string) (*hfTokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if isNull(f.Model) {
		return nil, fmt.Errorf("not a tokenizer.json: no \"model\" object")
	}
	t := &hfTokenizer{name: name}
	var err error
	if t.model, err = parseBPE(f.Model); err != nil {
		return nil, err
	}
	if t.normalizer, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	if t.nSpecial, err = parsePostProcessor(f.PostProcessor); err != nil {
		return nil, fmt.Errorf("post_processor: %w", err)
	}
	var raw, norm []hfAddedToken
	for _, a := range f.AddedTokens {
		if a.Content == "" {
			continue
		}
		if a.Normalized {
			// As the Rust crate does, match normalized added tokens by
			// their normalized form on the normalized text.
			if t.normalizer != nil {
				a.Content = t.normalizer.normalize(a.Content)
			}
			if a.Content != "" {
				norm = append(norm, a)
			}
		} else {
			raw = append(raw, a)
		}
	}
	t.rawAdded = newAddedMatcher(raw)
	t.normAdded = newAddedMatcher(norm)
	return t, nil
}

func isNull(m json.RawMessage) bool {
	return len(m) == 0 || string(m) == "null"
}

func (t *hfTokenizer) Name() string { return t.name }

// Count implements Tokenizer; see Open for what addSpecial adds.
func (t *hfTokenizer) Count(text string, addSpecial bool) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("tokenizer %s: internal error: %v", t.name, r)
		}
	}()
	text = sanitizeUTF8(text)
	if addSpecial {
		n = t.nSpecial
	}
	for _, seg := range t.rawAdded.split(text) {
		if seg.added {
			n++
			continue
		}
		s := seg.text
		if t.normalizer != nil {
			s = t.normalizer.normalize(s)
		}
		for _, seg2 := range t.normAdded.split(s) {
			if seg2.added {
				n++
				continue
			}
			c, err := t.countSegment(piece{s: seg2.text, first: seg.start == 0 && seg2.start == 0})
			if err != nil {
				return 0, err
			}
			n += c
		}
	}
	return n, nil
}

func (t *hfTokenizer) countSegment(p piece) (int, error) {
	if p.s == "" {
		return 0, nil
	}
	words := []piece{p}
	if t.pre != nil {
		var err error
		if words, err = t.pre.preTokenize(words); err != nil {
			return 0, fmt.Errorf("tokenizer %s: %w", t.name, err)
		}
	}
	n := 0
	for _, w := range words {
		n += t.model.count(w.s)
	}
	return n, nil
}

// parsePostProcessor returns how many tokens the post-processor adds to a
// single sequence when add_special_tokens is true.
func parsePostProcessor(raw json.RawMessage) (int, error) {
	if isNull(raw) {
		return 0, nil
	}
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return 0, err
	}
	switch c.Type {
	case "ByteLevel":
		return 0, nil // trims offsets only
	case "BertProcessing", "RobertaProcessing":
		return 2, nil // [CLS] A [SEP] / <s> A </s>
	case "TemplateProcessing":
		n := 0
		for _, item := range c.Single {
			st, ok := item["SpecialToken"]
			if !ok {
				continue
			}
			var ref struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(st, &ref); err != nil {
				return 0, err
			}
			sp, ok := c.SpecialTokens[ref.ID]
			if !ok {
				return 0, fmt.Errorf("TemplateProcessing uses undefined special token %q", ref.ID)
			}
			n += len(sp.IDs)
		}
		return n, nil
	case "Sequence":
		n := 0
		for _, p := range c.Processors {
			k, err := parsePostProcessor(p)
			if err != nil {
				return 0, err
			}
			n += k
		}
		return n, nil
	default:
		return 0, fmt.Errorf("type %q: %w", c.Type, ErrUnsupported)
	}
}
