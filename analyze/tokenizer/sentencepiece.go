package tokenizer

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// SentencePiece .model files (sentencepiece_model.proto) are read with
// protowire and encoded by a port of the C++ library (google/sentencepiece
// at 2734490, src/normalizer.cc Normalizer::Normalize, src/bpe_model.cc
// Model::SampleEncode without dropout, src/sentencepiece_processor.cc
// PopulateSentencePieceText for byte fallback and unknown runs):
//
//   - normalization: identity charsmap only; the dummy prefix "▁",
//     remove_extra_whitespaces (leading, trailing and repeated U+0020
//     dropped) and the escaping of U+0020 as "▁";
//   - segmentation: user-defined pieces matched whole (longest first) and
//     never merged, every other character its own symbol; then the
//     adjacent pair whose concatenation is a piece with the highest score
//     is merged (leftmost on ties) until none is left; UNUSED pieces are
//     split back into the pieces they were merged from;
//   - output: a symbol that is no piece is the unknown token; with
//     byte_fallback it becomes one <0xXX> token per UTF-8 byte, otherwise
//     a run of unknowns is one token.
//
// github.com/eliben/go-sentencepiece v0.6.0 was tried first and rejected:
// it refuses add_dummy_prefix models (Llama 1/2, Mistral) and panics when
// two merged symbols are together longer than the longest piece (for
// Llama 2, 40 spaces in a row).

// Field numbers and enum values of sentencepiece_model.proto.
const (
	spModelPieces         = 1
	spModelTrainerSpec    = 2
	spModelNormalizerSpec = 3

	spPiecePiece = 1
	spPieceScore = 2
	spPieceType  = 3

	spTrainerModelType       = 3
	spTrainerTreatWSAsSuffix = 24
	spTrainerByteFallback    = 35
	spTrainerBosID           = 41

	spNormName                = 1
	spNormPrecompiledCharsmap = 2
	spNormAddDummyPrefix      = 3
	spNormRemoveExtraWS       = 4
	spNormEscapeWhitespaces   = 5

	spTypeNormal      = 1
	spTypeUnknown     = 2
	spTypeControl     = 3
	spTypeUserDefined = 4
	spTypeUnused      = 5
	spTypeByte        = 6

	spModelTypeUnigram = 1
	spModelTypeBPE     = 2
)

const spSpace = "\u2581" // "▁"

// sentencePieceTokenizer is read-only after parseSentencePiece, so Count
// is safe for concurrent use.
type sentencePieceTokenizer struct {
	name string

	pieces      map[string]int // NORMAL, USER_DEFINED and UNUSED pieces
	reserved    map[string]int // CONTROL, UNKNOWN and BYTE pieces
	scores      []float32
	types       []uint64
	userDefined []string // longest first
	unkID       int

	byteFallback   bool
	bos            int // 1 when the model has a BOS piece (bos_id >= 0)
	addDummyPrefix bool
	removeExtraWS  bool
}

func (t *sentencePieceTokenizer) Name() string { return t.name }

// Count implements Tokenizer: addSpecial adds the BOS piece when the model
// defines one (trainer bos_id >= 0), as LlamaTokenizer(add_bos_token=True)
// and sentencepiece's add_bos do.
func (t *sentencePieceTokenizer) Count(text string, addSpecial bool) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("tokenizer %s: internal error: %v", t.name, r)
		}
	}()
	if addSpecial {
		n = t.bos
	}
	return n + t.encodeCount(t.normalize(sanitizeUTF8(text))), nil
}

// normalize is Normalizer::Normalize for an identity charsmap.
func (t *sentencePieceTokenizer) normalize(s string) string {
	if t.removeExtraWS {
		s = strings.TrimLeft(s, " ")
	}
	if s == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(len(s) + 2*strings.Count(s, " ") + len(spSpace))
	if t.addDummyPrefix {
		b.WriteString(spSpace)
	}
	prevSpace := t.removeExtraWS
	for _, r := range s {
		if r == ' ' {
			if prevSpace {
				continue
			}
			b.WriteString(spSpace)
			prevSpace = t.removeExtraWS
			continue
		}
		b.WriteRune(r)
		prevSpace = false
	}
	out := b.String()
	if t.removeExtraWS {
		for strings.HasSuffix(out, spSpace) {
			out = out[:len(out)-len(spSpace)]
		}
	}
	return out
}

type spSymbol struct {
	start, end int // byte range in the normalized text; start == end: merged away
	prev, next int
	freeze     bool
}

type spPair struct {
	left, right int
	score       float32
	size        int
}

// spBefore is sentencepiece's SymbolPairComparator: highest score first,
// then leftmost.
func spBefore(a, b spPair) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.left < b.left
}

// encodeCount segments normalized text and returns the number of ids.
func (t *sentencePieceTokenizer) encodeCount(s string) int {
	if s == "" {
		return 0
	}
	syms := make([]spSymbol, 0, len(s))
	for i := 0; i < len(s); {
		size, freeze := t.prefixMatch(s[i:])
		syms = append(syms, spSymbol{start: i, end: i + size, prev: len(syms) - 1, next: len(syms) + 1, freeze: freeze})
		i += size
	}
	syms[len(syms)-1].next = -1

	var revMerge map[string][2]string
	agenda := minHeap[spPair]{items: make([]spPair, 0, len(syms)), less: spBefore}
	maybeAdd := func(left, right int) {
		if left < 0 || right < 0 || syms[left].freeze || syms[right].freeze {
			return
		}
		p := s[syms[left].start:syms[right].end]
		id, ok := t.pieces[p]
		if !ok {
			return
		}
		agenda.push(spPair{left: left, right: right, score: t.scores[id], size: len(p)})
		if t.types[id] == spTypeUnused {
			if revMerge == nil {
				revMerge = map[string][2]string{}
			}
			revMerge[p] = [2]string{s[syms[left].start:syms[left].end], s[syms[right].start:syms[right].end]}
		}
	}
	for i := 1; i < len(syms); i++ {
		maybeAdd(i-1, i)
	}
	for agenda.len() > 0 {
		top := agenda.pop()
		l, r := &syms[top.left], &syms[top.right]
		if l.start == l.end || r.start == r.end || (l.end-l.start)+(r.end-r.start) != top.size {
			continue // stale
		}
		l.end = r.end
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = top.left
		}
		r.start, r.end = 0, 0
		maybeAdd(l.prev, top.left)
		maybeAdd(top.left, l.next)
	}

	n := 0
	prevUnk := false
	var emit func(w string)
	emit = func(w string) {
		id := t.pieceToID(w)
		if id >= 0 && t.types[id] == spTypeUnused {
			if parts, ok := revMerge[w]; ok {
				emit(parts[0])
				emit(parts[1])
				return
			}
		}
		isUnk := id == t.unkID
		switch {
		case isUnk && t.byteFallback:
			n += len(w)
		case isUnk && prevUnk:
			// a run of unknown pieces is one token
		default:
			n++
		}
		prevUnk = isUnk
	}
	for i := 0; i >= 0; i = syms[i].next {
		emit(s[syms[i].start:syms[i].end])
	}
	return n
}

// prefixMatch returns the length of the next symbol: the longest
// user-defined piece at the start of s (frozen), else one character.
func (t *sentencePieceTokenizer) prefixMatch(s string) (int, bool) {
	for _, u := range t.userDefined {
		if strings.HasPrefix(s, u) {
			return len(u), true
		}
	}
	_, size := utf8.DecodeRuneInString(s)
	return size, false
}

func (t *sentencePieceTokenizer) pieceToID(w string) int {
	if id, ok := t.reserved[w]; ok {
		return id
	}
	if id, ok := t.pieces[w]; ok {
		return id
	}
	return t.unkID
}

func parseSentencePiece(data []byte, name string) (*sentencePieceTokenizer, error) {
	t := &sentencePieceTokenizer{
		name:           name,
		pieces:         map[string]int{},
		reserved:       map[string]int{},
		unkID:          -1,
		bos:            1, // bos_id defaults to 1
		addDummyPrefix: true,
		removeExtraWS:  true,
	}
	modelType := uint64(spModelTypeUnigram)
	escapeWS, wsAsSuffix, charsmap, normName := true, false, false, ""
	bytePieces := 0
	err := forEachField(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case spModelPieces:
			id := len(t.scores)
			piece, score, ptype := "", float32(0), uint64(spTypeNormal)
			err := forEachField(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == spPiecePiece && typ == protowire.BytesType:
					piece = string(v)
				case num == spPieceScore && typ == protowire.Fixed32Type:
					score = math.Float32frombits(uint32(x))
				case num == spPieceType && typ == protowire.VarintType:
					ptype = x
				}
				return nil
			})
			if err != nil {
				return err
			}
			if piece == "" {
				return fmt.Errorf("piece %d is empty", id)
			}
			t.scores = append(t.scores, score)
			t.types = append(t.types, ptype)
			m := t.reserved
			if ptype == spTypeNormal || ptype == spTypeUserDefined || ptype == spTypeUnused {
				m = t.pieces
			}
			if _, dup := m[piece]; dup {
				return fmt.Errorf("piece %q is defined twice", piece)
			}
			m[piece] = id
			switch ptype {
			case spTypeUserDefined:
				t.userDefined = append(t.userDefined, piece)
			case spTypeUnknown:
				if t.unkID >= 0 {
					return fmt.Errorf("unknown piece defined twice")
				}
				t.unkID = id
			case spTypeByte:
				bytePieces++
			}
		case spModelTrainerSpec:
			return forEachField(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				if typ != protowire.VarintType {
					return nil
				}
				switch num {
				case spTrainerModelType:
					modelType = x
				case spTrainerTreatWSAsSuffix:
					wsAsSuffix = x != 0
				case spTrainerByteFallback:
					t.byteFallback = x != 0
				case spTrainerBosID:
					if int32(x) < 0 {
						t.bos = 0
					} else {
						t.bos = 1
					}
				}
				return nil
			})
		case spModelNormalizerSpec:
			return forEachField(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == spNormName && typ == protowire.BytesType:
					normName = string(v)
				case num == spNormPrecompiledCharsmap && typ == protowire.BytesType:
					charsmap = len(v) > 0
				case num == spNormAddDummyPrefix && typ == protowire.VarintType:
					t.addDummyPrefix = x != 0
				case num == spNormRemoveExtraWS && typ == protowire.VarintType:
					t.removeExtraWS = x != 0
				case num == spNormEscapeWhitespaces && typ == protowire.VarintType:
					escapeWS = x != 0
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("not a SentencePiece model: %w", err)
	}
	switch {
	case len(t.scores) == 0:
		return nil, fmt.Errorf("not a SentencePiece model: no pieces")
	case t.unkID < 0:
		return nil, fmt.Errorf("SentencePiece model defines no unknown piece")
	case modelType != spModelTypeBPE:
		kind := map[uint64]string{1: "unigram", 3: "word", 4: "char"}[modelType]
		return nil, fmt.Errorf("SentencePiece model type %s (%d): %w (only BPE models are implemented)", kind, modelType, ErrUnsupported)
	case charsmap:
		return nil, fmt.Errorf("SentencePiece normalizer %q with a precompiled charsmap: %w (only identity normalization is implemented)", normName, ErrUnsupported)
	case !escapeWS:
		return nil, fmt.Errorf("SentencePiece escape_whitespaces=false: %w", ErrUnsupported)
	case wsAsSuffix:
		return nil, fmt.Errorf("SentencePiece treat_whitespace_as_suffix=true: %w", ErrUnsupported)
	case t.byteFallback && bytePieces != 256:
		return nil, fmt.Errorf("SentencePiece byte_fallback with %d byte pieces, want 256", bytePieces)
	}
	// Longest user-defined piece first: the C++ PrefixMatcher's longest match.
	sortByLenDesc(t.userDefined)
	return t, nil
}

func sortByLenDesc(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && len(s[j]) > len(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// forEachField calls f for each field of a protobuf message: v holds the
// payload of length-delimited fields, x the value of varint and fixed
// fields.
func forEachField(msg []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(msg)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(msg)
			x = uint64(x32)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(msg)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(msg)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}
