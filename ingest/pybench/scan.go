package pybench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"

	"github.com/tokentrace/tokentrace/ingest"
)

// ColumnKind is how Scan reads a per-request array.
type ColumnKind uint8

const (
	// NumberColumn: numbers (ttfts, output_lens, …), held as float64.
	NumberColumn ColumnKind = iota + 1
	// ListColumn: lists of numbers (itls); only each list's length is
	// held (Stream.Lens), each list is passed to ScanOptions.OnList and
	// read again by a ColumnReader.
	ListColumn
	// StringColumn: strings (errors), held.
	StringColumn
	// TextColumn: strings (generated_texts), checked and counted, not
	// held: a ColumnReader reads them again.
	TextColumn
)

// Stream is a per-request array read by Scan. Its element count is N.
type Stream struct {
	Kind ColumnKind
	N    int
	// Floats are a NumberColumn's elements as written: null is a NaN of
	// its own bits (NumberValues tells them apart), NaN and ±Infinity
	// Python's bare tokens or numbers beyond a double's range.
	Floats []float64
	// Strings are a StringColumn's elements (null is "").
	Strings []string
	// Lens are a ListColumn's list lengths (a null list has 0).
	Lens []int32
	// Off is the content offset of the array's '['.
	Off int64
}

// nullBits mark a null element in Stream.Floats: a quiet NaN with a
// payload math.NaN() does not have.
const nullBits = 0x7ff8_dead_0000_0001

func isNull(x float64) bool { return math.Float64bits(x) == nullBits }

// ScanOptions say what Scan reads.
type ScanOptions struct {
	// Layout is Objects or Lines (Array is not streamed).
	Layout Layout
	// Columns are the per-request arrays read as columns; any other
	// member (and a column key whose value is not a list) is kept raw in
	// Value.Entries, as ReadValues keeps it.
	Columns map[string]ColumnKind
	// OnList, when set, is called with each list of a ListColumn (value:
	// the result object's index; i: the request; null elements NaN, a null
	// list nil; the slice is reused).
	OnList func(value int, key string, i int, list []float64)
}

// Scan reads a file of result objects (Objects: one or more objects;
// Lines: one object per line) as ReadValues does, streaming: the members
// that are not columns are kept raw (Python's bare tokens marked, as
// ReadValues marks them) with the column keys among them holding "[]";
// the columns are in Value.Arrays. What it holds (raw members, number
// columns at 8 bytes an element, list lengths at 4, error strings) is
// capped at max bytes: a *ingest.CapError in a *ingest.FormatError beyond
// it. Any input it does not read exactly as the general path would —
// damaged or cut JSON, an element of another type, an empty file — gives
// an error for which IsUnsure is true: read the file with ReadValues.
func Scan(src io.Reader, path string, max int64, so ScanOptions) ([]Value, error) {
	s := &scanner{l: newLex(src, lexBuf), path: path, max: max, so: so}
	var vals []Value
	for {
		c := s.l.peek()
		if c == 0 {
			if s.l.err != nil {
				return nil, s.l.err
			}
			break
		}
		if c != '{' {
			return nil, errUnsure
		}
		line := s.l.line
		where := fmt.Sprintf("object %d (line %d)", len(vals)+1, line)
		if so.Layout == Lines {
			where = fmt.Sprintf("line %d", line)
		}
		v := Value{Index: len(vals), Line: line, Where: where}
		if err := s.object(&v); err != nil {
			return nil, err
		}
		if so.Layout == Lines {
			if s.l.line != line {
				return nil, errUnsure
			}
			// only blanks up to the end of the line
			for s.l.ensure(1) && (s.l.buf[s.l.i] == ' ' || s.l.buf[s.l.i] == '\t' || s.l.buf[s.l.i] == '\r') {
				s.l.i++
			}
			if s.l.n > s.l.i && s.l.buf[s.l.i] != '\n' {
				return nil, errUnsure
			}
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, errUnsure
	}
	return vals, nil
}

type scanner struct {
	l       *lex
	path    string
	max     int64
	held    int64
	so      ScanOptions
	scratch []byte
	list    []float64
}

// hold counts n more bytes held; beyond the cap it is an error at where.
func (s *scanner) hold(n int64, where string) error {
	s.held += n
	if s.held > s.max {
		return &ingest.FormatError{File: s.path, Where: where, Err: &ingest.CapError{What: "the per-request data held", Cap: s.max}}
	}
	return nil
}

func (s *scanner) object(v *Value) error {
	l := s.l
	l.i++ // '{'
	if l.take('}') {
		return nil
	}
	for {
		raw, plain, capped, ok := l.str(&s.scratch, s.max)
		if capped {
			return s.hold(s.max+1, v.Where)
		}
		if !ok {
			return errUnsure
		}
		key, ok := decodeString(raw, plain)
		if !ok || !l.take(':') {
			return errUnsure
		}
		where := v.Where + ", " + key
		if kind, isCol := s.so.Columns[key]; isCol && l.peek() == '[' {
			if v.Arrays == nil {
				v.Arrays = map[string]*Stream{}
			}
			if v.Arrays[key] != nil {
				return errUnsure // a repeated array: the general path keeps the last
			}
			c, err := s.column(v.Index, key, kind, where)
			if err != nil {
				return err
			}
			v.Arrays[key] = c
			v.Entries = append(v.Entries, ingest.Entry{Key: key, Value: json.RawMessage("[]")})
		} else {
			val, err := s.capture(where)
			if err != nil {
				return err
			}
			val = NonFinite(val)
			if !json.Valid(val) {
				return errUnsure
			}
			v.Entries = append(v.Entries, ingest.Entry{Key: key, Value: val})
		}
		if err := s.hold(int64(len(key))+16, where); err != nil {
			return err
		}
		if l.take(',') {
			continue
		}
		if l.take('}') {
			return nil
		}
		return errUnsure
	}
}

// capture copies the raw bytes of the value at the next byte (not
// validated: the caller checks them with json.Valid).
func (s *scanner) capture(where string) ([]byte, error) {
	l := s.l
	l.peek()
	var out []byte
	depth := 0
	for {
		if !l.ensure(1) {
			return nil, errUnsure
		}
		c := l.buf[l.i]
		switch {
		case c == '"':
			raw, _, capped, ok := l.str(&s.scratch, s.max)
			if capped {
				return nil, s.hold(s.max+1, where)
			}
			if !ok {
				return nil, errUnsure
			}
			out = append(out, raw...)
		case c == '{' || c == '[':
			depth++
			out = append(out, c)
			l.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return out, nil
			}
			depth--
			out = append(out, c)
			l.i++
		case c == ',' && depth == 0:
			return out, nil
		case c == '\n':
			if depth == 0 {
				return out, nil
			}
			l.line++
			out = append(out, c)
			l.i++
		case (c == ' ' || c == '\t' || c == '\r') && depth == 0:
			return out, nil
		default:
			out = append(out, c)
			l.i++
		}
		if depth == 0 && (c == '}' || c == ']' || c == '"') {
			return out, nil
		}
		if int64(len(out)) > s.max {
			return nil, s.hold(s.max+1, where)
		}
	}
}

// column reads a per-request array starting at the next byte ('[').
func (s *scanner) column(value int, key string, kind ColumnKind, where string) (*Stream, error) {
	l := s.l
	c := &Stream{Kind: kind, Off: l.off()}
	l.i++ // '['
	if l.take(']') {
		return c, nil
	}
	for {
		switch kind {
		case NumberColumn:
			x, k, ok := l.number()
			if !ok {
				return nil, errUnsure
			}
			if k == elemNull {
				x = math.Float64frombits(nullBits)
			}
			c.Floats = append(c.Floats, x)
			if err := s.hold(8, where); err != nil {
				return nil, err
			}
		case ListColumn:
			list, isNil, err := s.l.list(s.list[:0], s.max, where, s.path)
			if err != nil {
				return nil, err
			}
			s.list = list
			if s.so.OnList != nil {
				if isNil {
					s.so.OnList(value, key, c.N, nil)
				} else {
					s.so.OnList(value, key, c.N, list)
				}
			}
			c.Lens = append(c.Lens, int32(len(list)))
			if err := s.hold(4, where); err != nil {
				return nil, err
			}
		case StringColumn, TextColumn:
			txt, err := s.l.text(&s.scratch, s.max, where, s.path, kind == StringColumn)
			if err != nil {
				return nil, err
			}
			if kind == StringColumn {
				c.Strings = append(c.Strings, txt)
				if err := s.hold(int64(len(txt))+16, where); err != nil {
					return nil, err
				}
			}
		}
		c.N++
		if l.take(',') {
			continue
		}
		if l.take(']') {
			return c, nil
		}
		return nil, errUnsure
	}
}

// list reads one element of a list column: a list of numbers (null
// elements a NaN of nullBits, bare tokens their value) or null (isNil). A list of more
// than max/8 elements is refused.
func (l *lex) list(dst []float64, max int64, where, path string) (out []float64, isNil bool, err error) {
	switch l.peek() {
	case 'n':
		if !l.word("null") {
			return nil, false, errUnsure
		}
		return dst, true, nil
	case '[':
		l.i++
	default:
		return nil, false, errUnsure
	}
	if l.take(']') {
		return dst, false, nil
	}
	for {
		x, k, ok := l.number()
		if !ok {
			return nil, false, errUnsure
		}
		if k == elemNull {
			x = math.Float64frombits(nullBits)
		}
		dst = append(dst, x)
		if int64(len(dst))*8 > max {
			return nil, false, &ingest.FormatError{File: path, Where: where, Err: &ingest.CapError{What: "a list", Cap: max}}
		}
		c := l.peek()
		l.i++
		switch c {
		case ',':
		case ']':
			return dst, false, nil
		default:
			return nil, false, errUnsure
		}
	}
}

// text reads one element of a string column: a string or null (""). It is
// decoded when decode is set; a string starting with NUL (which the
// general path takes for a marked bare token) is unsure.
func (l *lex) text(scratch *[]byte, max int64, where, path string, decode bool) (string, error) {
	if l.peek() == 'n' {
		if !l.word("null") {
			return "", errUnsure
		}
		return "", nil
	}
	raw, plain, capped, ok := l.str(scratch, max)
	if capped {
		return "", &ingest.FormatError{File: path, Where: where, Err: &ingest.CapError{What: "a string", Cap: max}}
	}
	if !ok || len(raw) >= 7 && string(raw[1:7]) == `\u0000` {
		return "", errUnsure
	}
	if !decode {
		return "", nil
	}
	s, ok := decodeString(raw, plain)
	if !ok || strings.HasPrefix(s, mark) {
		return "", errUnsure
	}
	return s, nil
}

// NumberValues reads a NumberColumn as Column reads the array: null is NaN
// (no value), every other element is checked (vals, at element i of name)
// against [0, maxV] and an offending one is NaN. maxV < 0 checks nothing
// and reads non-finite numbers as NaN, as Floats does.
func NumberValues(name string, c *Stream, vals *ingest.Values, at string, maxV float64) []float64 {
	out := make([]float64, len(c.Floats))
	for i, x := range c.Floats {
		switch {
		case isNull(x):
			x = math.NaN()
		case maxV < 0:
			if math.IsInf(x, 0) {
				x = math.NaN()
			}
		case !check(vals, name, at, i, -1, x, maxV):
			x = math.NaN()
		}
		out[i] = x
	}
	return out
}

// ColumnReader reads a ListColumn or a TextColumn again, element by
// element, from the file Scan read.
type ColumnReader struct {
	f       *os.File
	l       *lex
	name    string
	i       int
	n       int
	buf     []float64
	scratch []byte
	max     int64
	lb      *[]byte // the lex buffer, back to columnBufs on Close
}

// OpenColumn opens path again at column c (its content offset plus shift:
// 3 when the file starts with a byte-order mark).
func OpenColumn(path string, shift int64, name string, c *Stream, max int64) (*ColumnReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(c.Off+shift, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	// the read buffers come from a pool: a file of 4,000 appended results
	// allocated 2 GB of them, and the collector's work on that churn grew
	// with the runs held (27.7 s for 4,000 runs, 1.4 s for 1,000)
	lb := columnBufs.Get().(*[]byte)
	r := &ColumnReader{f: f, l: &lex{src: f, buf: *lb, line: 1}, lb: lb, name: name, n: c.N, max: max}
	r.l.base = c.Off
	if !r.l.take('[') {
		f.Close()
		return nil, r.changed()
	}
	return r, nil
}

func (r *ColumnReader) changed() error {
	return &ingest.FormatError{File: r.f.Name(), Where: fmt.Sprintf("%s[%d]", r.name, r.i), Msg: "the file changed while it was read"}
}

// next moves to the next element.
func (r *ColumnReader) next() error {
	if r.i >= r.n {
		return r.changed()
	}
	if r.i > 0 && !r.l.take(',') {
		return r.changed()
	}
	return nil
}

// List reads the next list as Columns does: null is nil, a null element
// NaN, and each other element is checked (vals, at element [i][j] of the
// column) against [0, maxV], an offending one NaN. The slice is reused by
// the next call.
func (r *ColumnReader) List(vals *ingest.Values, at string, maxV float64) ([]float64, error) {
	if err := r.next(); err != nil {
		return nil, err
	}
	list, isNil, err := r.l.list(r.buf[:0], r.max, "", r.f.Name())
	if err != nil {
		if IsUnsure(err) {
			return nil, r.changed()
		}
		return nil, err
	}
	r.buf = list
	i := r.i
	r.i++
	if isNil {
		return nil, nil
	}
	for j, x := range list {
		if isNull(x) {
			list[j] = math.NaN()
			continue
		}
		if !check(vals, r.name, at, i, j, x, maxV) {
			list[j] = math.NaN()
		}
	}
	return list, nil
}

// Text reads the next string ("" for null).
func (r *ColumnReader) Text() (string, error) {
	if err := r.next(); err != nil {
		return "", err
	}
	s, err := r.l.text(&r.scratch, r.max, "", r.f.Name(), true)
	if err != nil {
		if IsUnsure(err) {
			return "", r.changed()
		}
		return "", err
	}
	r.i++
	return s, nil
}

// Close closes the file.
func (r *ColumnReader) Close() error {
	if r.lb != nil {
		columnBufs.Put(r.lb)
		r.lb, r.l.buf = nil, nil
	}
	return r.f.Close()
}

// columnBufs are the ColumnReaders' 256 KiB read buffers.
var columnBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// Rows reads a streamed result's lists (itls) and texts
// (generated_texts) again, request by request, in step. A goroutine reads
// ahead in batches, so that decoding runs beside the caller's work on the
// previous requests (the second core).
type Rows struct {
	itls, texts *ColumnReader
	n           int // requests
	batches     chan *rowBatch
	free        chan *rowBatch
	quit        chan struct{}
	finished    chan struct{}
	cur         *rowBatch
	k           int // next request in cur
	started     bool
	vals        *ingest.Values
	at          string
	maxV        float64
}

// rowBatch is a run of requests read ahead: their gaps back to back
// (request k's are gaps[offs[k]:offs[k+1]]; nils[k] for a null list),
// their texts, or the error that stopped the reading.
type rowBatch struct {
	gaps  []float64
	offs  []int
	nils  []bool
	texts []string
	err   error
}

// rowBatchRequests and rowBatchGaps bound a batch: whichever comes first.
const (
	rowBatchRequests = 512
	rowBatchGaps     = 1 << 16
)

// OpenRows opens the columns itls and texts (either may be nil: not in
// the file, or not wanted) of the file at path (shift: see OpenColumn),
// for n requests.
func OpenRows(path string, shift, max int64, itls, texts *Stream) (*Rows, error) {
	r := &Rows{}
	var err error
	if itls != nil {
		if r.itls, err = OpenColumn(path, shift, "itls", itls, max); err != nil {
			return nil, err
		}
		r.n = itls.N
	}
	if texts != nil {
		if r.texts, err = OpenColumn(path, shift, "generated_texts", texts, max); err != nil {
			r.Close()
			return nil, err
		}
		r.n = texts.N
	}
	return r, nil
}

// Next reads the next request's gaps (ColumnReader.List with vals, at and
// maxV, the same for every call: the shared value checks are recorded in
// vals by the reading goroutine, complete once the last request is read;
// nil without itls; valid until the next call) and text (nil without
// texts; its own string, which events may keep).
func (r *Rows) Next(vals *ingest.Values, at string, maxV float64) (gaps []float64, text *string, err error) {
	if r.itls == nil && r.texts == nil {
		return nil, nil, nil
	}
	if !r.started {
		r.started = true
		r.vals, r.at, r.maxV = vals, at, maxV
		r.batches = make(chan *rowBatch, 2)
		r.free = make(chan *rowBatch, 4)
		r.quit = make(chan struct{})
		r.finished = make(chan struct{})
		for range 4 {
			r.free <- &rowBatch{}
		}
		go r.read()
	}
	if r.cur == nil || r.k >= len(r.cur.offs)-1 {
		if r.cur != nil {
			r.free <- r.cur
		}
		b, ok := <-r.batches
		if !ok {
			return nil, nil, fmt.Errorf("generated_texts/itls: more requests asked than read")
		}
		if b.err != nil {
			return nil, nil, b.err
		}
		r.cur, r.k = b, 0
	}
	b, k := r.cur, r.k
	r.k++
	if r.itls != nil && !b.nils[k] {
		gaps = b.gaps[b.offs[k]:b.offs[k+1]:b.offs[k+1]]
	}
	if r.texts != nil {
		t := b.texts[k]
		text = &t
	}
	return gaps, text, nil
}

// read is the reading goroutine: every request's list and text, in
// batches.
func (r *Rows) read() {
	defer close(r.finished)
	defer close(r.batches)
	i := 0
	for i < r.n {
		var b *rowBatch
		select {
		case b = <-r.free:
		case <-r.quit:
			return
		}
		b.gaps, b.offs, b.nils, b.texts, b.err = b.gaps[:0], append(b.offs[:0], 0), b.nils[:0], b.texts[:0], nil
		for ; i < r.n && len(b.nils) < rowBatchRequests && len(b.gaps) < rowBatchGaps; i++ {
			isNil := false
			if r.itls != nil {
				l, err := r.itls.List(r.vals, r.at, r.maxV)
				if err != nil {
					b.err = err
					break
				}
				isNil = l == nil
				b.gaps = append(b.gaps, l...)
			}
			if r.texts != nil {
				t, err := r.texts.Text()
				if err != nil {
					b.err = err
					break
				}
				b.texts = append(b.texts, t)
			}
			b.nils = append(b.nils, isNil)
			b.offs = append(b.offs, len(b.gaps))
		}
		select {
		case r.batches <- b:
		case <-r.quit:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// Close stops the reading and closes the files.
func (r *Rows) Close() {
	if r.started {
		close(r.quit)
		<-r.finished
	}
	if r.itls != nil {
		r.itls.Close()
	}
	if r.texts != nil {
		r.texts.Close()
	}
}
