package formats

import (
	"hash/maphash"
	"math"
	"unsafe"
)

// AppendFrom appends request i of src (and its messages) to b, copying
// every value (strings included: src may be reused). src's run id is not
// checked: the caller moves rows between batches of one run.
func (b *Batch) AppendFrom(src *Batch, i int) {
	k := b.AddRequest(src.Req.Key[i])
	q, s := &b.Req, &src.Req
	q.Status[k] = s.Status[i]
	q.MessageCount[k] = s.MessageCount[i]
	q.TokenMessageCount[k] = s.TokenMessageCount[i]
	ds, ss := q.strings(), s.strings()
	for c := range ds {
		if v := ss[c].Get(i); v != "" {
			ds[c].Set(k, cloneString(v))
		}
	}
	di, si := q.int64s(), s.int64s()
	for c := range di {
		if v, ok := si[c].Get(i); ok {
			di[c].Set(k, v)
		}
	}
	df, sf := q.float64s(), s.float64s()
	for c := range df {
		if v, ok := sf[c].Get(i); ok {
			df[c].Set(k, v)
		}
	}
	lo, hi := src.Messages(i)
	m, sm := &b.Msg, &src.Msg
	for j := lo; j < hi; j++ {
		kind := sm.Kind[j]
		if kind >= MsgDict {
			kind = b.KindCode(src.KindName(kind))
		}
		n := b.AddMessage(sm.OffsetNs[j], kind)
		if len(sm.ReadIndex) > 0 || len(m.ReadIndex) > 0 {
			if r := src.ReadOf(j, lo); r != int32(j-lo) || len(m.ReadIndex) > 0 {
				b.SetReadIndex(n, r)
			}
		}
		if sm.Choices.Get(j) {
			m.Choices.Set(n)
		}
		if v, ok := sm.Tokens.Get(j); ok {
			m.Tokens.Set(n, v)
		}
		if v := src.BytesOf(j); v != 0 || len(m.Bytes) > 0 {
			b.SetBytes(n, v)
		}
		if v, ok := sm.Text.Get(j); ok {
			m.Text.Append(n, v)
		}
		if v, ok := sm.ReasoningText.Get(j); ok {
			m.ReasoningText.Append(n, v)
		}
		if v, ok := sm.FinishReason.Get(j); ok {
			m.FinishReason.Append(n, v)
		}
	}
}

// Compact keeps the requests i with keep(i) true (and their messages), in
// order, dropping the others; it returns how many it dropped.
func (b *Batch) Compact(keep func(i int) bool) int {
	n := b.Len()
	drop := 0
	for i := range n {
		if !keep(i) {
			drop++
		}
	}
	if drop == 0 {
		return 0
	}
	old := b.Clone()
	b.Reset(b.RunID)
	for i := range n {
		if keep(i) {
			b.AppendFrom(old, i)
		}
	}
	return drop
}

var fpSeed = maphash.MakeSeed()

// Fingerprint hashes every field of request i and its messages but the
// request key: two requests of one run with equal fingerprints are the
// same record (a repetition), up to the hash's 2^-64 collision chance.
// Each request field goes in as one word (a string as its seeded
// maphash, an optional value as a presence word and its value); each
// message column as the seeded hash of its bytes over the request's
// range.
func (b *Batch) Fingerprint(i int) uint64 {
	q := &b.Req
	f := fpState{h: maphash.Comparable(fpSeed, 0)}
	f.word(uint64(q.Status[i]))
	f.word(uint64(q.MessageCount[i]))
	f.word(uint64(q.TokenMessageCount[i]))
	for _, c := range q.strings() {
		f.word(maphash.String(fpSeed, c.Get(i)))
	}
	for _, c := range q.int64s() {
		v, ok := c.Get(i)
		f.opt(ok, uint64(v))
	}
	for _, c := range q.float64s() {
		v, ok := c.Get(i)
		f.opt(ok, math.Float64bits(v))
	}
	lo, hi := b.Messages(i)
	f.word(uint64(hi - lo))
	if hi == lo {
		return f.h
	}
	m := &b.Msg
	f.word(maphash.Bytes(fpSeed, int64Bytes(m.OffsetNs[lo:hi])))
	// kinds by name (a dictionary code differs between batches)
	var kh maphash.Hash
	kh.SetSeed(fpSeed)
	for _, k := range m.Kind[lo:hi] {
		if k < MsgDict {
			kh.WriteByte(byte(k))
		} else {
			kh.WriteString(b.KindName(k))
			kh.WriteByte(0xff)
		}
	}
	f.word(kh.Sum64())
	// HasChoices, 64 messages a word
	var cw [1]uint64
	var ch maphash.Hash
	ch.SetSeed(fpSeed)
	for j := lo; j < hi; j += 64 {
		cw[0] = 0
		for k := j; k < min(j+64, hi); k++ {
			if m.Choices.Get(k) {
				cw[0] |= 1 << uint(k-j)
			}
		}
		ch.Write(int64Bytes(cw[:]))
	}
	f.word(ch.Sum64())
	if !b.msgDetail(lo, hi) {
		// no read, size, count or text in the request's range: nothing
		// more to hash (the same for every such request)
		return f.h
	}
	var rest maphash.Hash
	rest.SetSeed(fpSeed)
	for j := lo; j < hi; j++ {
		var w [3]uint64
		t, ok := m.Tokens.Get(j)
		w[0] = uint64(uint32(b.ReadOf(j, lo))) | uint64(uint32(b.BytesOf(j)))<<32
		w[1] = uint64(uint32(t))
		if ok {
			w[2] |= 1
		}
		rest.Write(int64Bytes(w[:]))
		for _, c := range [...]*Texts{&m.Text, &m.ReasoningText, &m.FinishReason} {
			if v := c.Bytes(j); v != nil || c.Has(j) {
				rest.WriteByte(1)
				rest.Write(v)
				rest.WriteByte(0)
			} else {
				rest.WriteByte(0)
			}
		}
	}
	f.word(rest.Sum64())
	return f.h
}

func int64Bytes[T int64 | uint64](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

// fpState mixes 64-bit words: xor, then SplitMix64's finalizer (a
// bijection of the state, so states that differ stay different).
type fpState struct{ h uint64 }

func (f *fpState) word(v uint64) {
	x := (f.h ^ v) * 0x9e3779b97f4a7c15
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	f.h = x ^ x>>32
}

func (f *fpState) opt(ok bool, v uint64) {
	if !ok {
		f.word(0)
		return
	}
	f.word(1)
	f.word(v)
}

// Clone returns a deep copy of b (strings included): for a sink that
// keeps a batch past the call.
func (b *Batch) Clone() *Batch {
	c := NewBatch(b.RunID)
	c.Req.Key = append([]int64(nil), b.Req.Key...)
	c.Req.Status = append([]StatusCode(nil), b.Req.Status...)
	c.Req.MessageCount = append([]int64(nil), b.Req.MessageCount...)
	c.Req.TokenMessageCount = append([]int64(nil), b.Req.TokenMessageCount...)
	ds, ss := c.Req.strings(), b.Req.strings()
	for i := range ds {
		if len(ss[i].V) > 0 {
			ds[i].V = make([]string, len(ss[i].V))
			for j, v := range ss[i].V {
				ds[i].V[j] = cloneString(v)
			}
		}
	}
	di, si := c.Req.int64s(), b.Req.int64s()
	for i := range di {
		di[i].V, di[i].Valid = cloneSlice(si[i].V), cloneSlice(si[i].Valid)
	}
	df, sf := c.Req.float64s(), b.Req.float64s()
	for i := range df {
		df[i].V, df[i].Valid = cloneSlice(sf[i].V), cloneSlice(sf[i].Valid)
	}
	m, sm := &c.Msg, &b.Msg
	m.OffsetNs, m.Kind = cloneSlice(sm.OffsetNs), cloneSlice(sm.Kind)
	m.Tokens.V, m.Tokens.Valid = cloneSlice(sm.Tokens.V), cloneSlice(sm.Tokens.Valid)
	m.ReadIndex, m.Choices, m.Bytes = cloneSlice(sm.ReadIndex), cloneSlice(sm.Choices), cloneSlice(sm.Bytes)
	for _, p := range [...][2]*Texts{{&m.Text, &sm.Text}, {&m.ReasoningText, &sm.ReasoningText}, {&m.FinishReason, &sm.FinishReason}} {
		p[0].Off, p[0].Data, p[0].Valid = cloneSlice(p[1].Off), cloneSlice(p[1].Data), cloneSlice(p[1].Valid)
	}
	m.kinds = cloneSlice(sm.kinds)
	c.msgStart = cloneSlice(b.msgStart)
	return c
}

func cloneSlice[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append([]T(nil), s...)
}

// SizeBytes is about the bytes b's values take (for buffer budgets).
func (b *Batch) SizeBytes() int64 {
	n := int64(b.Len()) * 32
	for _, c := range b.Req.strings() {
		for _, s := range c.V {
			n += int64(len(s))
		}
		n += int64(len(c.V)) * 16
	}
	for _, c := range b.Req.int64s() {
		n += int64(len(c.V)) * 8
	}
	for _, c := range b.Req.float64s() {
		n += int64(len(c.V)) * 8
	}
	m := &b.Msg
	n += int64(len(m.OffsetNs))*9 + int64(len(m.Tokens.V)+len(m.ReadIndex)+len(m.Bytes))*4
	n += int64(len(m.Text.Data)+len(m.ReasoningText.Data)+len(m.FinishReason.Data)) + int64(len(m.Text.Off)+len(m.ReasoningText.Off)+len(m.FinishReason.Off))*8
	return n
}

// msgDetail reports whether a message in [lo, hi) has a read index other
// than its position, a size, a token count or a text.
func (b *Batch) msgDetail(lo, hi int) bool {
	m := &b.Msg
	for j := lo; j < min(hi, len(m.ReadIndex)); j++ {
		if b.ReadOf(j, lo) != int32(j-lo) {
			return true
		}
	}
	for j := lo; j < min(hi, len(m.Bytes)); j++ {
		if m.Bytes[j] != 0 {
			return true
		}
	}
	for j := lo; j < min(hi, len(m.Tokens.V)); j++ {
		if m.Tokens.Valid.Get(j) {
			return true
		}
	}
	for _, t := range [...]*Texts{&m.Text, &m.ReasoningText, &m.FinishReason} {
		for j := lo; j < min(hi, t.Len()); j++ {
			if t.Valid.Get(j) {
				return true
			}
		}
	}
	return false
}
