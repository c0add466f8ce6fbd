package formats

import (
	"math/bits"
	"unsafe"
)

// The column types of the core (Batch): typed slices with validity
// bitmaps instead of a pointer per optional value, so that a batch of a
// few thousand requests is a few dozen allocations, none of which the
// garbage collector scans word by word (Strings excepted: a slice of
// string headers). Each grows on demand: a column no row has set is nil
// and costs nothing, and reading a row past its end reads null (or zero
// for the required columns). Not safe for concurrent writes; concurrent
// reads are.

// Bits is a bitmap: bit i is word i/64, bit i%64. The zero value is an
// empty bitmap (every bit clear).
type Bits []uint64

// Get reports whether bit i is set (false past the end).
func (b Bits) Get(i int) bool {
	w := i >> 6
	return w < len(b) && b[w]&(1<<(uint(i)&63)) != 0
}

// Set sets bit i, growing b as needed.
func (b *Bits) Set(i int) {
	w := i >> 6
	if w >= len(*b) {
		*b = grow(*b, w+1)
	}
	(*b)[w] |= 1 << (uint(i) & 63)
}

// Clear clears bit i.
func (b Bits) Clear(i int) {
	if w := i >> 6; w < len(b) {
		b[w] &^= 1 << (uint(i) & 63)
	}
}

// Put sets bit i to v.
func (b *Bits) Put(i int, v bool) {
	if v {
		b.Set(i)
	} else {
		b.Clear(i)
	}
}

// SetRange sets bits [lo, hi).
func (b *Bits) SetRange(lo, hi int) {
	if lo >= hi {
		return
	}
	if w := (hi - 1) >> 6; w >= len(*b) {
		*b = grow(*b, w+1)
	}
	for i := lo; i < hi; {
		w, o := i>>6, uint(i)&63
		n := min(64-int(o), hi-i)
		mask := ^uint64(0)
		if n < 64 {
			mask = (1<<uint(n) - 1) << o
		}
		(*b)[w] |= mask
		i += n
	}
}

// truncate clears every bit from n on.
func (b *Bits) truncate(n int) {
	w := (n + 63) >> 6
	if w < len(*b) {
		*b = (*b)[:w]
	}
	if r := uint(n) & 63; r != 0 && w > 0 && w <= len(*b) {
		(*b)[w-1] &= 1<<r - 1
	}
}

// Count returns the number of set bits among the first n.
func (b Bits) Count(n int) int {
	c := 0
	for w := 0; w < len(b) && w*64 < n; w++ {
		x := b[w]
		if rest := n - w*64; rest < 64 {
			x &= 1<<uint(rest) - 1
		}
		c += bits.OnesCount64(x)
	}
	return c
}

// grow returns s extended with zero values to length n (n ≥ len(s)),
// doubling its capacity as append does.
func grow[T any](s []T, n int) []T {
	if n <= cap(s) {
		old := len(s)
		s = s[:n]
		clear(s[old:])
		return s
	}
	c := max(n, 2*cap(s), 16)
	t := make([]T, n, c)
	copy(t, s)
	return t
}

// Int64s is a column of optional int64 values. The zero value is an
// empty column: every row null.
type Int64s struct {
	V     []int64 // V[i] is meaningful only where Valid.Get(i)
	Valid Bits
}

// Get returns row i's value and whether it is set.
func (c *Int64s) Get(i int) (int64, bool) {
	if i < len(c.V) && c.Valid.Get(i) {
		return c.V[i], true
	}
	return 0, false
}

// Has reports whether row i is set.
func (c *Int64s) Has(i int) bool { return i < len(c.V) && c.Valid.Get(i) }

// Or returns row i's value, or def when it is null.
func (c *Int64s) Or(i int, def int64) int64 {
	if v, ok := c.Get(i); ok {
		return v
	}
	return def
}

// Set sets row i to v.
func (c *Int64s) Set(i int, v int64) {
	if i >= len(c.V) {
		c.V = grow(c.V, i+1)
	}
	c.V[i] = v
	c.Valid.Set(i)
}

// Null makes row i null.
func (c *Int64s) Null(i int) { c.Valid.Clear(i) }

// SetPtr sets row i to *p, or null when p is nil.
func (c *Int64s) SetPtr(i int, p *int64) {
	if p == nil {
		c.Null(i)
		return
	}
	c.Set(i, *p)
}

// Ptr returns a pointer to a copy of row i's value, nil when null (for
// the row view, Request).
func (c *Int64s) Ptr(i int) *int64 {
	if v, ok := c.Get(i); ok {
		return &v
	}
	return nil
}

// Any reports whether some row is set.
func (c *Int64s) Any() bool {
	for _, w := range c.Valid {
		if w != 0 {
			return true
		}
	}
	return false
}

func (c *Int64s) reset() { c.V, c.Valid = c.V[:0], c.Valid[:0] }

// Int32s is a column of optional int32 values (Int64s' twin).
type Int32s struct {
	V     []int32
	Valid Bits
}

// Get returns row i's value and whether it is set.
func (c *Int32s) Get(i int) (int32, bool) {
	if i < len(c.V) && c.Valid.Get(i) {
		return c.V[i], true
	}
	return 0, false
}

// Set sets row i to v.
func (c *Int32s) Set(i int, v int32) {
	if i >= len(c.V) {
		c.V = grow(c.V, i+1)
	}
	c.V[i] = v
	c.Valid.Set(i)
}

// Null makes row i null.
func (c *Int32s) Null(i int) { c.Valid.Clear(i) }

// Ptr returns a pointer to a copy of row i's value, nil when null.
func (c *Int32s) Ptr(i int) *int32 {
	if v, ok := c.Get(i); ok {
		return &v
	}
	return nil
}

// Any reports whether some row is set.
func (c *Int32s) Any() bool {
	for _, w := range c.Valid {
		if w != 0 {
			return true
		}
	}
	return false
}

func (c *Int32s) reset() { c.V, c.Valid = c.V[:0], c.Valid[:0] }

// Float64s is a column of optional float64 values (Int64s' twin).
type Float64s struct {
	V     []float64
	Valid Bits
}

// Get returns row i's value and whether it is set.
func (c *Float64s) Get(i int) (float64, bool) {
	if i < len(c.V) && c.Valid.Get(i) {
		return c.V[i], true
	}
	return 0, false
}

// Has reports whether row i is set.
func (c *Float64s) Has(i int) bool { return i < len(c.V) && c.Valid.Get(i) }

// Set sets row i to v.
func (c *Float64s) Set(i int, v float64) {
	if i >= len(c.V) {
		c.V = grow(c.V, i+1)
	}
	c.V[i] = v
	c.Valid.Set(i)
}

// Null makes row i null.
func (c *Float64s) Null(i int) { c.Valid.Clear(i) }

// SetPtr sets row i to *p, or null when p is nil.
func (c *Float64s) SetPtr(i int, p *float64) {
	if p == nil {
		c.Null(i)
		return
	}
	c.Set(i, *p)
}

// Ptr returns a pointer to a copy of row i's value, nil when null.
func (c *Float64s) Ptr(i int) *float64 {
	if v, ok := c.Get(i); ok {
		return &v
	}
	return nil
}

// Any reports whether some row is set.
func (c *Float64s) Any() bool {
	for _, w := range c.Valid {
		if w != 0 {
			return true
		}
	}
	return false
}

func (c *Float64s) reset() { c.V, c.Valid = c.V[:0], c.Valid[:0] }

// Strings is a column of optional strings, "" meaning null (the tables'
// rule for optional strings; SCHEMA.md). Values may point into the
// producer's buffers: like every column of a Batch they are valid until
// the batch is reused (strings.Clone what you keep).
type Strings struct {
	V []string
}

// Get returns row i's value ("" when null).
func (c *Strings) Get(i int) string {
	if i < len(c.V) {
		return c.V[i]
	}
	return ""
}

// Set sets row i to s ("" is null).
func (c *Strings) Set(i int, s string) {
	if i >= len(c.V) {
		if s == "" {
			return
		}
		c.V = grow(c.V, i+1)
	}
	c.V[i] = s
}

// Any reports whether some row is set.
func (c *Strings) Any() bool {
	for _, s := range c.V {
		if s != "" {
			return true
		}
	}
	return false
}

func (c *Strings) reset() {
	clear(c.V) // drop references into the producer's buffers
	c.V = c.V[:0]
}

// Texts is an append-only column of optional strings held in one byte
// buffer (offsets into Data), null distinct from "": the events' text
// columns, millions of values, none of them an allocation. Rows are
// appended in order (Append, AppendNull); a row past the last appended
// is null.
type Texts struct {
	// Off[i], Off[i+1] bound row i's bytes in Data; len(Off) is the rows
	// appended + 1 (or 0 when none is).
	Off   []int64
	Data  []byte
	Valid Bits
}

// Len returns the number of rows appended.
func (c *Texts) Len() int { return max(len(c.Off)-1, 0) }

// pad appends null rows up to row i (exclusive).
func (c *Texts) pad(i int) {
	if len(c.Off) == 0 {
		c.Off = append(c.Off, 0)
	}
	end := c.Off[len(c.Off)-1]
	for c.Len() < i {
		c.Off = append(c.Off, end)
	}
}

// Append sets row i (≥ Len()) to s, the rows between null.
func (c *Texts) Append(i int, s string) {
	c.pad(i)
	c.Data = append(c.Data, s...)
	c.Off = append(c.Off, int64(len(c.Data)))
	c.Valid.Set(i)
}

// AppendBytes is Append of a byte slice.
func (c *Texts) AppendBytes(i int, s []byte) {
	c.pad(i)
	c.Data = append(c.Data, s...)
	c.Off = append(c.Off, int64(len(c.Data)))
	c.Valid.Set(i)
}

// Get returns row i's text and whether it is set. The string shares the
// column's buffer (valid until the batch is reused).
func (c *Texts) Get(i int) (string, bool) {
	if i+1 >= len(c.Off) || !c.Valid.Get(i) {
		return "", false
	}
	b := c.Data[c.Off[i]:c.Off[i+1]]
	if len(b) == 0 {
		return "", true
	}
	return unsafeString(b), true
}

// Has reports whether row i is set.
func (c *Texts) Has(i int) bool { return i+1 < len(c.Off) && c.Valid.Get(i) }

// Bytes returns row i's bytes (nil when null).
func (c *Texts) Bytes(i int) []byte {
	if i+1 >= len(c.Off) || !c.Valid.Get(i) {
		return nil
	}
	return c.Data[c.Off[i]:c.Off[i+1]:c.Off[i+1]]
}

// Truncate keeps the first n rows.
func (c *Texts) Truncate(n int) {
	if n >= c.Len() {
		return
	}
	c.Data = c.Data[:c.Off[n]]
	c.Off = c.Off[:n+1]
	c.Valid.truncate(n)
}

// Any reports whether some row is set.
func (c *Texts) Any() bool {
	for _, w := range c.Valid {
		if w != 0 {
			return true
		}
	}
	return false
}

func (c *Texts) reset() { c.Off, c.Data, c.Valid = c.Off[:0], c.Data[:0], c.Valid[:0] }

// unsafeString is b as a string without a copy: b must not change while
// the string is used.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
