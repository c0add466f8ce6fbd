package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// bpeModel is the BPE model of tokenizer.json (tokenizers/src/models/bpe):
// a word starts as one symbol per character (vocabulary id, else its UTF-8
// bytes as <0xXX> pieces when byte_fallback, else the unknown token, fused
// with a neighbouring unknown when fuse_unk, else nothing), then pairs are
// merged by merge rank, lowest first, leftmost on ties, until none
// applies. With ignore_merges (Llama 3) a word found whole in the
// vocabulary is one token without merging. It is read-only after
// parseBPE.
type bpeModel struct {
	vocab        map[string]int
	merges       map[uint64]bpeMerge // key: left id << 32 | right id
	unkID        int                 // -1: no unknown token
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	byteIDs      [256]int // ids of <0x00>..<0xFF>; -1 when absent
	prefix       string   // continuing_subword_prefix
	suffix       string   // end_of_word_suffix
}

type bpeMerge struct {
	rank, id int
}

type hfModel struct {
	Type                    string          `json:"type"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	UnkToken                *string         `json:"unk_token"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	Dropout                 *float64        `json:"dropout"`
}

func parseBPE(raw json.RawMessage) (*bpeModel, error) {
	var m hfModel
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if m.Type == "" && !isNull(m.Merges) {
		m.Type = "BPE" // files from old tokenizers versions omit the type
	}
	if m.Type != "BPE" {
		return nil, fmt.Errorf("model type %q: %w (only BPE models are implemented)", m.Type, ErrUnsupported)
	}
	if m.Dropout != nil && *m.Dropout > 0 {
		return nil, fmt.Errorf("BPE dropout %v makes counts random: %w", *m.Dropout, ErrUnsupported)
	}
	b := &bpeModel{
		unkID:        -1,
		fuseUnk:      m.FuseUnk,
		byteFallback: m.ByteFallback,
		ignoreMerges: m.IgnoreMerges,
	}
	if m.ContinuingSubwordPrefix != nil {
		b.prefix = *m.ContinuingSubwordPrefix
	}
	if m.EndOfWordSuffix != nil {
		b.suffix = *m.EndOfWordSuffix
	}
	if err := json.Unmarshal(m.Vocab, &b.vocab); err != nil {
		return nil, fmt.Errorf("model vocab: %w", err)
	}
	if m.UnkToken != nil {
		id, ok := b.vocab[*m.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model unk_token %q is not in the vocabulary", *m.UnkToken)
		}
		b.unkID = id
	}
	for i := range b.byteIDs {
		id, ok := b.vocab[fmt.Sprintf("<0x%02X>", i)]
		if !ok {
			id = -1
		}
		b.byteIDs[i] = id
	}
	merges, err := parseMerges(m.Merges)
	if err != nil {
		return nil, err
	}
	b.merges = make(map[uint64]bpeMerge, len(merges))
	for rank, mg := range merges {
		left, right := mg[0], mg[1]
		l, ok1 := b.vocab[left]
		r, ok2 := b.vocab[right]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("model merges[%d]: %q or %q is not in the vocabulary", rank, left, right)
		}
		merged := left + strings.TrimPrefix(right, b.prefix)
		id, ok := b.vocab[merged]
		if !ok {
			return nil, fmt.Errorf("model merges[%d]: merged %q is not in the vocabulary", rank, merged)
		}
		key := pairKey(l, r)
		if _, dup := b.merges[key]; !dup { // the first (best) rank wins
			b.merges[key] = bpeMerge{rank: rank, id: id}
		}
	}
	return b, nil
}

// parseMerges reads the merges list: "left right" strings (tokenizers
// < 0.20) or ["left", "right"] pairs (newer files).
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var pairs [][]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		out := make([][2]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return nil, fmt.Errorf("model merges[%d]: %d tokens, want 2", i, len(p))
			}
			out[i] = [2]string{p[0], p[1]}
		}
		return out, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, fmt.Errorf("model merges: neither \"a b\" strings nor [\"a\", \"b\"] pairs: %w", err)
	}
	out := make([][2]string, len(lines))
	for i, l := range lines {
		left, right, ok := strings.Cut(l, " ")
		if !ok || strings.Contains(right, " ") {
			return nil, fmt.Errorf("model merges[%d]: %q is not two space-separated tokens", i, l)
		}
		out[i] = [2]string{left, right}
	}
	return out, nil
}

func pairKey(l, r int) uint64 { return uint64(uint32(l))<<32 | uint64(uint32(r)) }

// count returns the number of tokens of one pre-tokenized word.
func (b *bpeModel) count(word string) int {
	if word == "" {
		return 0
	}
	if b.ignoreMerges {
		if _, ok := b.vocab[word]; ok {
			return 1
		}
	}
	syms := b.initialSymbols(word)
	if len(syms) < 2 || len(b.merges) == 0 {
		return len(syms)
	}
	return b.mergeAll(syms)
}

// symbol is one element of the doubly linked list a word is merged in.
type symbol struct {
	id         int
	prev, next int
	dead       bool
}

func (b *bpeModel) initialSymbols(word string) []symbol {
	ids := make([]int, 0, len(word))
	pendingUnk := false // an unknown token not yet appended (merge_word's unk)
	for i, r := range word {
		size := utf8.RuneLen(r)
		if size < 0 {
			size = 1
		}
		s := word[i : i+size]
		if b.prefix != "" && i > 0 {
			s = b.prefix + s
		}
		if b.suffix != "" && i+size == len(word) {
			s += b.suffix
		}
		if id, ok := b.vocab[s]; ok {
			if pendingUnk {
				ids = append(ids, b.unkID)
				pendingUnk = false
			}
			ids = append(ids, id)
			continue
		}
		if b.byteFallback && b.allBytesKnown(s) {
			for j := 0; j < len(s); j++ {
				ids = append(ids, b.byteIDs[s[j]])
			}
			continue
		}
		if b.unkID < 0 {
			continue // no unknown token: the character yields nothing
		}
		if pendingUnk && !b.fuseUnk {
			ids = append(ids, b.unkID)
		}
		pendingUnk = true
	}
	if pendingUnk {
		ids = append(ids, b.unkID)
	}
	syms := make([]symbol, len(ids))
	for i, id := range ids {
		syms[i] = symbol{id: id, prev: i - 1, next: i + 1}
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

func (b *bpeModel) allBytesKnown(s string) bool {
	for j := 0; j < len(s); j++ {
		if b.byteIDs[s[j]] < 0 {
			return false
		}
	}
	return true
}

// mergeCand is a queued merge of the symbol at pos with its successor.
type mergeCand struct {
	pos, rank, id int
}

// mergeBefore orders candidates as the Rust crate's Merge: lowest rank
// first, then leftmost.
func mergeBefore(a, b mergeCand) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

// mergeAll is Word::merge_all of the Rust crate (without dropout) and
// returns the number of symbols left.
func (b *bpeModel) mergeAll(syms []symbol) int {
	q := minHeap[mergeCand]{items: make([]mergeCand, 0, len(syms)), less: mergeBefore}
	for i := 0; i+1 < len(syms); i++ {
		if m, ok := b.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			q.push(mergeCand{pos: i, rank: m.rank, id: m.id})
		}
	}
	n := len(syms)
	for q.len() > 0 {
		top := q.pop()
		cur := &syms[top.pos]
		if cur.dead || cur.next < 0 {
			continue
		}
		right := syms[cur.next]
		if m, ok := b.merges[pairKey(cur.id, right.id)]; !ok || m.id != top.id {
			continue // stale entry
		}
		cur.id = top.id
		syms[cur.next].dead = true
		cur.next = right.next
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		n--
		if cur.prev >= 0 {
			if m, ok := b.merges[pairKey(syms[cur.prev].id, cur.id)]; ok {
				q.push(mergeCand{pos: cur.prev, rank: m.rank, id: m.id})
			}
		}
		if cur.next >= 0 {
			if m, ok := b.merges[pairKey(cur.id, syms[cur.next].id)]; ok {
				q.push(mergeCand{pos: top.pos, rank: m.rank, id: m.id})
			}
		}
	}
	return n
}
