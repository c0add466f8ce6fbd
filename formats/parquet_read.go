package formats

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// EventColumns is a set of the events table's columns (formats/SCHEMA.md),
// as a sink tells ReadTables which Event fields it reads
// (EventColumnSelector). run_id and request_key are always read: rows are
// matched to their requests by them.
type EventColumns uint32

// The events columns, one bit each.
const (
	ColIndex         EventColumns = 1 << iota // index → Event.Index
	ColReadIndex                              // read_index → Event.ReadIndex
	ColOffsetNs                               // offset_ns → Event.OffsetNs
	ColKind                                   // kind → Event.Kind
	ColHasChoices                             // has_choices → Event.HasChoices
	ColTokens                                 // tokens → Event.Tokens
	ColBytes                                  // bytes → Event.Bytes
	ColText                                   // text → Event.Text
	ColReasoningText                          // reasoning_text → Event.ReasoningText
	ColFinishReason                           // finish_reason → Event.FinishReason

	// AllEventColumns is every column: what ReadTables reads for a sink
	// that does not implement EventColumnSelector.
	AllEventColumns = ColIndex | ColReadIndex | ColOffsetNs | ColKind | ColHasChoices | ColTokens |
		ColBytes | ColText | ColReasoningText | ColFinishReason
)

// EventColumnSelector is an optional Sink extension for table readers
// (ReadTables): a sink that reads only some fields of the events it is
// given says which, so that the other columns are not decoded at all — the
// generated text above all, usually the largest column, which a report
// needs only to re-tokenize.
//
// ReadTables calls EventColumns once for each row of runs.parquet, after
// reading the runs table and before sending any row (so before StartRun),
// and reads the union of the answers for every event of the directory.
// Fields of columns not in the set are zero (nil pointers, "", 0, false)
// in the events the sink receives — unless another run or another sink of
// a Tee needed the column, so a sink must not rely on them being zero.
type EventColumnSelector interface {
	EventColumns(r *Run) EventColumns
}

// EventColumnsOf returns the events columns s reads for run r: its answer
// when it implements EventColumnSelector, else AllEventColumns.
func EventColumnsOf(s Sink, r *Run) EventColumns {
	if cs, ok := s.(EventColumnSelector); ok {
		return cs.EventColumns(r)
	}
	return AllEventColumns
}

// EventColumns implements EventColumnSelector: the union of what each sink
// reads (AllEventColumns when one of them does not say).
func (t tee) EventColumns(r *Run) EventColumns {
	var c EventColumns
	for _, s := range t {
		c |= EventColumnsOf(s, r)
	}
	return c
}

// ReadTables streams the tables in dir (events.parquet, requests.parquet,
// runs.parquet, as written by ParquetWriter; or the hive-partitioned
// datasets events/, requests/, runs/ of LayoutHive) into sink, in Sink order: each
// request with its events, and each run's Run row once all its requests
// have been sent. Runs are sent in runs.parquet order; a run is held back
// until the runs before it have been sent, and runs without requests are
// sent once their turn comes and at the end at the latest. Replaying a
// Collector through a ParquetWriter and back reproduces it exactly.
//
// runs.parquet is read whole first (one row per run); requests and events
// are read in batches, and only one request's events are held at a time, so
// memory does not grow with the table size. Requests are matched to events
// by (run_id, request_key) in file order: events must be grouped per
// request in the order of the requests.
//
// Events are read column by column, and only the columns the sink reads
// when it implements EventColumnSelector (every column otherwise); a
// goroutine decodes the next events while the sink works. A file whose
// columns do not have the types ParquetWriter writes (rewritten by another
// tool with other types) is read row by row through parquet-go's
// reflection, every column, as before.
//
// Tables are untrusted input: every file is checked before parquet-go
// reads it (its footer, schema, column chunks and page headers: every
// length parquet-go would allocate from, within the caps of
// formats/SCHEMA.md "Reading untrusted tables"), and a damaged file is an
// error naming the file, row group, column and page, never a panic.
//
// Errors name the file and, where known, the row: a missing file, a file
// whose tokentrace.schema_version is newer than SchemaVersion, a file
// lacking a non-nullable column, files from different imports (different
// tokentrace.import_id), a requests' run_id without a Run row, a run's
// requests not contiguous or their request_key not increasing, events that
// match no request, duplicate runs.
// Files without tokentrace metadata (rewritten by another tool) are read if
// their columns fit. An error returned by sink stops reading and is returned
// unchanged.
func ReadTables(dir string, sink Sink) error {
	sink = Checked(sink)
	layout, err := DetectLayout(dir)
	if err != nil {
		return err
	}
	runsT, err := openTable[Run](dir, TableRuns, layout)
	if err != nil {
		return err
	}
	defer runsT.close()
	reqT, err := openTable[Request](dir, TableRequests, layout)
	if err != nil {
		return err
	}
	defer reqT.close()
	evT, err := openTable[Event](dir, TableEvents, layout)
	if err != nil {
		return err
	}
	defer evT.close()
	if err := sameImport(slices.Concat(runsT.infos(), reqT.infos(), evT.infos())...); err != nil {
		return err
	}

	// Runs, whole.
	var runs []Run
	runIndex := map[string]int{}
	for {
		r, row, err := runsT.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if _, dup := runIndex[r.RunID]; dup {
			return fmt.Errorf("formats: %s row %d: second row for run %q", runsT.file(), row, r.RunID)
		}
		if len(runs) == maxRuns {
			return errTooManyRuns(runsT.file())
		}
		runIndex[r.RunID] = len(runs)
		runs = append(runs, *r)
		nilIfEmpty(&runs[len(runs)-1])
	}
	var cols EventColumns
	for i := range runs {
		cols |= EventColumnsOf(sink, &runs[i])
	}
	evT.setColumns(cols)

	done := make([]bool, len(runs)) // run's requests all sent
	nextRun := 0                    // runs[:nextRun] sent
	rows := NewRowWriter(sink)
	sendReady := func() error {
		for nextRun < len(runs) && done[nextRun] {
			if err := rows.Run(&runs[nextRun]); err != nil {
				return err
			}
			nextRun++
		}
		return nil
	}

	var evs []Event
	cur := -1 // index in runs of the current request group
	var prevKey int64
	for {
		r, row, err := reqT.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if cur < 0 || r.RunID != runs[cur].RunID {
			ri, ok := runIndex[r.RunID]
			if !ok {
				return fmt.Errorf("formats: %s row %d: run_id %q has no row in %s", reqT.file(), row, r.RunID, runsT.file())
			}
			if done[ri] {
				return fmt.Errorf("formats: %s row %d: requests of run %q are not contiguous", reqT.file(), row, r.RunID)
			}
			cur = ri
			if err := rows.StartRun(&runs[ri]); err != nil {
				return err
			}
		} else if r.RequestKey <= prevKey {
			return fmt.Errorf("formats: %s row %d: run %q request_key %d after %d; keys must increase within a run",
				reqT.file(), row, r.RunID, r.RequestKey, prevKey)
		}
		prevKey = r.RequestKey
		evs = evs[:0]
		for {
			// the request's events in the batch, copied at once
			rest, err := evT.peekRest()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			k := 0
			for k < len(rest) && rest[k].RequestKey == r.RequestKey && rest[k].RunID == r.RunID {
				k++
			}
			evs = append(evs, rest[:k]...)
			evT.skip(k)
			if k < len(rest) {
				break
			}
		}
		// A message's index is its position: a table's index must say
		// so, or be 0 (the column not read, or null in a rewritten table).
		for k := range evs {
			if evs[k].Index != int32(k) && evs[k].Index != 0 {
				return fmt.Errorf("formats: %s: run %q request_key %d: event %d has index %d: events must be in index order 0, 1, …",
					evT.file(), r.RunID, r.RequestKey, k, evs[k].Index)
			}
			evs[k].Index = int32(k)
		}
		if err := rows.Request(r, evs); err != nil {
			return fmt.Errorf("formats: %s row %d: %w", reqT.file(), row, err)
		}
		clear(evs) // drop text references
		// The group ends at the end of the file or at a change of run.
		nr, _, err := reqT.peek()
		if err != nil && err != io.EOF {
			return err
		}
		if err == io.EOF || nr.RunID != runs[cur].RunID {
			done[cur] = true
			if err := sendReady(); err != nil {
				return err
			}
		}
	}
	if e, row, err := evT.peek(); err == nil {
		return fmt.Errorf("formats: %s row %d: event of run %q request_key %d matches no request in %s (or events are not in request order)",
			evT.file(), row, e.RunID, e.RequestKey, reqT.file())
	} else if err != io.EOF {
		return err
	}
	for i := range done {
		done[i] = true
	}
	if err := sendReady(); err != nil {
		return err
	}
	return rows.Flush()
}

// nilIfEmpty makes a run's empty lists nil: Parquet does not distinguish a
// nil slice from an empty one, and nil is what importers produce.
func nilIfEmpty(r *Run) {
	if len(r.SourceFiles) == 0 {
		r.SourceFiles = nil
	}
	if len(r.Notes) == 0 {
		r.Notes = nil
	}
	if len(r.Reported) == 0 {
		r.Reported = nil
	}
	if len(r.Load) == 0 {
		r.Load = nil
	}
	if len(r.Series) == 0 {
		r.Series = nil
	}
	if len(r.Checks) == 0 {
		r.Checks = nil
	}
}

// fileInfo is what sameImport compares.
type fileInfo struct {
	path, importID string
}

func sameImport(infos ...fileInfo) error {
	var first fileInfo
	for _, in := range infos {
		if in.importID == "" {
			continue
		}
		if first.importID == "" {
			first = in
		} else if in.importID != first.importID {
			return fmt.Errorf("formats: %s and %s come from different writes (%s %s ≠ %s); the table set is inconsistent",
				first.path, in.path, MetaImportID, first.importID, in.importID)
		}
	}
	return nil
}

// parquetReader reads one table file in batches. When the file's columns
// have the types ParquetWriter writes (or are nullable versions of them, as
// DuckDB and pyarrow rewrite them): events column by column
// (eventColumnReader, decoding ahead on a goroutine: eventPipe), requests
// column by column through reflection (flatColumnReader). Runs (lists), and
// files with other column types, row by row through parquet-go's
// GenericReader, which converts types.
type parquetReader[T any] struct {
	path     string
	f        *os.File
	pf       *parquet.File
	r        *parquet.GenericReader[T] // nil when cols reads
	cols     *eventColumnReader        // events only
	pipe     *eventPipe                // cols reading ahead; started by the first peek
	flat     *flatColumnReader[T]      // other flat tables (requests)
	buf      []T
	pos, n   int
	base     int64 // file row index of buf[0]
	err      error // sticky read error (io.EOF at the end)
	importID string
	missing  [][]int // row reader: fields of columns the file lacks, set to zero
}

func openParquetTable[T any](dir, table string) (*parquetReader[T], error) {
	return openParquetFile[T](filepath.Join(dir, table+".parquet"), table, false)
}

// openParquetFile opens one file of table. In a hive partition (partition
// true) the run_id column may be missing (the partition's directory gives
// it, as Spark's partitionBy writes).
func openParquetFile[T any](path, table string, partition bool) (*parquetReader[T], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("formats: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("formats: %w", err)
	}
	var zero T
	want := parquet.SchemaOf(zero)
	// Tables are untrusted input: every length parquet-go would allocate
	// from is checked first (checkTableFile), the metadata too, and the
	// columns against the table's row type as written (tableRowTypes: a
	// requests file's derived columns too, which are not read back).
	check := want
	if rt, ok := tableRowTypes[table]; ok && rt != reflect.TypeFor[T]() {
		check = parquet.SchemaOf(reflect.New(rt).Elem().Interface())
	}
	if _, err := checkTableFile(f, st.Size(), path, table, check); err != nil {
		f.Close()
		return nil, err
	}
	// The page index and bloom filters serve filtered reads; a full scan
	// needs neither (they are not read).
	var pf *parquet.File
	err = protect(func() (err error) {
		pf, err = parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		return err
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("formats: %s: not a readable Parquet file: %w", path, err)
	}
	if err := checkColumns(path, want, pf.Schema(), partition); err != nil {
		f.Close()
		return nil, err
	}
	id, _ := pf.Lookup(MetaImportID)
	t := &parquetReader[T]{path: path, f: f, pf: pf, importID: id}
	if !forceRowReader {
		if _, isEvent := any(zero).(Event); isEvent {
			t.cols = newEventColumnReader(pf, path)
		} else {
			t.flat = newFlatColumnReader[T](pf)
		}
	}
	if t.cols == nil {
		t.buf = make([]T, readBatchRows) // the pipe brings its own
	}
	if t.cols == nil && t.flat == nil {
		// Columns the file lacks: parquet-go's conversion gives a missing
		// list of structs whose fields are all nullable one element of
		// nulls; they read as their zero value (checkColumns: nullable or
		// zeroIfMissing).
		have := map[string]bool{}
		for _, f := range pf.Schema().Fields() {
			have[f.Name()] = true
		}
		for _, f := range columnFields(reflect.TypeFor[T]()) {
			if !have[ColumnName(f)] {
				t.missing = append(t.missing, f.Index)
			}
		}
		// parquet-go's reader panics on columns it cannot convert
		if err := protect(func() error { _, err := parquet.Convert(want, pf.Schema()); return err }); err != nil {
			f.Close()
			return nil, fmt.Errorf("formats: %s: the columns do not convert to the %s table's types: %w", path, table, err)
		}
		if err := protect(func() error { t.r = parquet.NewGenericReader[T](pf); return nil }); err != nil {
			f.Close()
			return nil, fmt.Errorf("formats: %s: %w", path, err)
		}
	}
	return t, nil
}

// forceRowReader makes every file read row by row (tests compare the two
// readers).
var forceRowReader = false

// checkFileMeta checks a file's tokentrace metadata: table name and schema
// version. Absent keys are accepted.
func checkFileMeta(path, table string, lookup func(string) (string, bool)) error {
	if v, ok := lookup(MetaSchemaVersion); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("formats: %s: bad %s %q", path, MetaSchemaVersion, v)
		}
		if n > SchemaVersion {
			wrote, _ := lookup(MetaVersion)
			return fmt.Errorf("formats: %s: table schema version %d (written by tokentrace %s) is newer than this tokentrace (%s) reads (%d); use a newer tokentrace",
				path, n, wrote, Version, SchemaVersion)
		}
	}
	if v, ok := lookup(MetaTable); ok && v != table {
		return fmt.Errorf("formats: %s: file holds the %q table, not %q", path, v, table)
	}
	return nil
}

// zeroIfMissing lists the non-nullable columns added after tables were
// first written; a file without one reads it as its zero value ("" or an
// empty list), as the writer of that file meant.
var zeroIfMissing = map[string]bool{"server_finish_reason": true, "load": true, "checks": true, "corrections": true,
	"end_bound_rule": true, "series": true}

// checkColumns checks that every non-nullable top-level column of want is in
// the file (nullable ones, and zeroIfMissing ones, may be missing: they read
// as null or as their zero value).
func checkColumns(path string, want, file *parquet.Schema, partition bool) error {
	have := map[string]bool{}
	for _, f := range file.Fields() {
		have[f.Name()] = true
	}
	for _, f := range want.Fields() {
		if !have[f.Name()] && !f.Optional() && !zeroIfMissing[f.Name()] && !(partition && f.Name() == "run_id") {
			return fmt.Errorf("formats: %s: column %q missing", path, f.Name())
		}
	}
	return nil
}

// setColumns restricts an events file's column reader to cols (run_id and
// request_key always read); a no-op for other tables and row readers.
// Call it before the first peek (the reader then starts reading ahead).
func (t *parquetReader[T]) setColumns(cols EventColumns) {
	if t.cols != nil && t.pipe == nil {
		t.cols.want = cols
	}
}

// peek returns the next row without consuming it, with its row index in the
// file. The pointer is valid until the next advance or peek past the batch.
func (t *parquetReader[T]) peek() (*T, int64, error) {
	if t.pos < t.n {
		return &t.buf[t.pos], t.base + int64(t.pos), nil
	}
	if t.err != nil {
		return nil, t.base + int64(t.n), t.err
	}
	t.base += int64(t.n)
	t.pos = 0
	var n int
	var err error
	if t.cols != nil {
		if t.pipe == nil {
			t.pipe = startEventPipe(t.cols)
		}
		var buf []Event
		buf, n, err = t.pipe.next()
		t.buf = any(buf).([]T)
	} else if t.flat != nil {
		// every field of every row is set: nothing to clear
		err = protect(func() (err error) {
			n, err = t.flat.read(t.buf)
			return err
		})
	} else {
		clear(t.buf) // fresh values: nothing left over from the last batch
		// At most the rows left: asked for more, parquet-go's reader goes
		// on reading page headers past the end of every column (30 ms and
		// 17 MB for the one row of a runs table read into 1024 slots).
		err = protect(func() (err error) {
			if left := t.pf.NumRows() - t.base; left < int64(len(t.buf)) {
				n, err = t.r.Read(t.buf[:max(left, 1)])
			} else {
				n, err = t.r.Read(t.buf)
			}
			return err
		})
		if err != nil && err != io.EOF {
			// the row reader does not say which column failed
			err = fmt.Errorf("row group %d: %w", t.rowGroupAt(t.base+int64(n)), err)
		}
		for i := range n {
			for _, idx := range t.missing {
				reflect.ValueOf(&t.buf[i]).Elem().FieldByIndex(idx).SetZero()
			}
		}
	}
	t.n = n
	if err != nil {
		if err == io.EOF {
			t.err = io.EOF
		} else {
			t.err = fmt.Errorf("formats: %s: %w (reading rows from %d)", t.path, err, t.base)
		}
		if n == 0 {
			return nil, t.base, t.err
		}
	} else if n == 0 {
		t.err = io.EOF
		return nil, t.base, t.err
	}
	return &t.buf[0], t.base, nil
}

func (t *parquetReader[T]) advance() { t.pos++ }

// rowGroupAt returns the row group holding row (a file row index).
func (t *parquetReader[T]) rowGroupAt(row int64) int {
	groups := t.pf.RowGroups()
	for g, rg := range groups {
		if row < rg.NumRows() {
			return g
		}
		row -= rg.NumRows()
	}
	return max(len(groups)-1, 0)
}

// panicked begins the error protect returns for a panic.
const panicked = "parquet-go failed on the file's data"

// protect runs fn and turns a panic into an error: the last line of
// defence behind checkTableFile, which checks every length parquet-go
// allocates from but not the encoded values inside the pages (a dictionary
// index beyond the dictionary in a file whose page checksums were
// recomputed after the damage, say).
func protect(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%s (corrupt): %v", panicked, v)
		}
	}()
	return fn()
}

func (t *parquetReader[T]) close() {
	if t.r != nil {
		t.r.Close()
	}
	if t.pipe != nil {
		t.pipe.stop()
	}
	if t.cols != nil {
		t.cols.close()
	}
	if t.flat != nil {
		t.flat.closeGroup()
	}
	t.f.Close()
}

// peekRest returns the rows left in the current batch (at least one; see
// peek), the run_id of a partition's rows filled in as peek does, up to a
// row that peek would fail on. Consume them with skip.
func (t *tableReader[T]) peekRest() ([]T, error) {
	if _, _, err := t.peek(); err != nil {
		return nil, err
	}
	rest := t.cur.buf[t.cur.pos:t.cur.n]
	if p := t.parts[t.i]; p.partition {
		for i := 1; i < len(rest); i++ {
			id := runIDOf(&rest[i])
			if *id == "" {
				*id = p.value
			} else if *id != p.value && *id != *runIDOf(&rest[i-1]) && PartitionDirValue(*id) != p.dirValue {
				return rest[:i], nil // peek reports it
			}
		}
	}
	return rest, nil
}

// skip consumes n rows of those peekRest returned.
func (t *tableReader[T]) skip(n int) { t.cur.pos += n }

// setColumns restricts the events read from every file of the table to
// cols (see parquetReader.setColumns).
func (t *tableReader[T]) setColumns(cols EventColumns) {
	t.cols = &cols
	if t.cur != nil {
		t.cur.setColumns(cols)
	}
}

// ReadRuns returns the rows of dir/runs.parquet, or of the runs/ dataset
// in Run-row order (small: one per run), for
// callers that must know the runs before streaming their requests.
func ReadRuns(dir string) ([]Run, error) {
	layout, err := DetectLayout(dir)
	if err != nil {
		return nil, err
	}
	runsT, err := openTable[Run](dir, TableRuns, layout)
	if err != nil {
		return nil, err
	}
	defer runsT.close()
	var runs []Run
	for {
		r, _, err := runsT.next()
		if err == io.EOF {
			return runs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(runs) == maxRuns {
			return nil, errTooManyRuns(runsT.file())
		}
		runs = append(runs, *r)
		nilIfEmpty(&runs[len(runs)-1])
	}
}

// MaxRuns caps the rows of a runs table: ReadTables and ReadRuns hold the
// runs in memory (a few hundred bytes each), and a damaged or hostile file
// can claim many millions of empty rows in a few kilobytes.
const MaxRuns = 1_000_000

var maxRuns = MaxRuns // tests lower it

func errTooManyRuns(file string) error {
	return fmt.Errorf("formats: %s: more than %d runs (MaxRuns: the runs table is held in memory)", file, maxRuns)
}

// The Event fields the column reader fills, in column order.
const (
	fRunID = iota
	fRequestKey
	fIndex
	fReadIndex
	fOffsetNs
	fKind
	fHasChoices
	fTokens
	fBytes
	fText
	fReasoningText
	fFinishReason
	numEventFields
)

// eventFields are the events columns: name, the physical type
// ParquetWriter writes, and the EventColumns bit (0: always read).
var eventFields = [numEventFields]struct {
	name string
	kind parquet.Kind
	bit  EventColumns
}{
	fRunID:         {"run_id", parquet.ByteArray, 0},
	fRequestKey:    {"request_key", parquet.Int64, 0},
	fIndex:         {"index", parquet.Int32, ColIndex},
	fReadIndex:     {"read_index", parquet.Int32, ColReadIndex},
	fOffsetNs:      {"offset_ns", parquet.Int64, ColOffsetNs},
	fKind:          {"kind", parquet.ByteArray, ColKind},
	fHasChoices:    {"has_choices", parquet.Boolean, ColHasChoices},
	fTokens:        {"tokens", parquet.Int32, ColTokens},
	fBytes:         {"bytes", parquet.Int32, ColBytes},
	fText:          {"text", parquet.ByteArray, ColText},
	fReasoningText: {"reasoning_text", parquet.ByteArray, ColReasoningText},
	fFinishReason:  {"finish_reason", parquet.ByteArray, ColFinishReason},
}

// eventColumnReader reads an events file column by column, straight from
// the decoded pages into Event fields: no row reconstruction, no
// reflection, strings of dictionary pages converted once per dictionary
// entry, and columns outside want never decoded.
type eventColumnReader struct {
	path   string
	groups []parquet.RowGroup
	g      int   // row groups opened
	rows   int64 // rows of the current row group
	pos    int64 // rows of the current row group read
	leaf   [numEventFields]leafColumn
	cur    [numEventFields]*columnCursor // of the current row group; nil until needed
	want   EventColumns
	// per-batch scratch
	i64        []int64
	i32        []int32
	str        []string
	bools      []bool
	null       []bool
	vals       []parquet.Value
	dictCaches [numEventFields]dictStrings
}

// leafColumn is where a field's column is in the file.
type leafColumn struct {
	index  int // -1: not in the file (reads as the zero value)
	maxDef byte
}

// newEventColumnReader returns a column reader for an events file, or nil
// when a column is not the type (or the shape: nested, repeated) that
// ParquetWriter writes, for the row reader to convert.
func newEventColumnReader(pf *parquet.File, path string) *eventColumnReader {
	r := &eventColumnReader{path: path, groups: pf.RowGroups(), want: AllEventColumns}
	for f := range eventFields {
		r.leaf[f].index = -1
		leaf, ok := pf.Schema().Lookup(eventFields[f].name)
		if !ok {
			continue
		}
		if !leaf.Node.Leaf() || leaf.MaxRepetitionLevel != 0 || leaf.MaxDefinitionLevel > 1 ||
			leaf.Node.Type().Kind() != eventFields[f].kind {
			return nil
		}
		r.leaf[f] = leafColumn{index: leaf.ColumnIndex, maxDef: byte(leaf.MaxDefinitionLevel)}
	}
	return r
}

// eventBuf is a batch of events the column reader fills.
type eventBuf struct {
	ev []Event
	// zero marks the fields not read that are zero in every row of ev:
	// they are not cleared again (only the reader writes ev, but for the
	// run_id a hive partition's reader fills in)
	zero [numEventFields]bool
}

// read fills b.ev with the next rows of the current row group (moving on
// to the next row group at the end of one) and returns how many; io.EOF
// after the last.
func (r *eventColumnReader) read(b *eventBuf) (int, error) {
	buf := b.ev
	for r.pos >= r.rows {
		if r.g >= len(r.groups) {
			return 0, io.EOF
		}
		r.closeGroup()
		r.rows, r.pos = r.groups[r.g].NumRows(), 0
		r.g++
	}
	n := int(min(int64(len(buf)), r.rows-r.pos))
	full := buf
	buf = buf[:n]
	if cap(r.null) < n {
		r.i64, r.i32, r.str = make([]int64, n), make([]int32, n), make([]string, n)
		r.bools, r.null, r.vals = make([]bool, n), make([]bool, n), make([]parquet.Value, n)
	}
	null := r.null[:n]
	for f := range eventFields {
		bit := eventFields[f].bit
		if r.leaf[f].index < 0 || bit != 0 && r.want&bit == 0 {
			// run_id is cleared every time: a partition's reader fills it
			// in (tableReader.peek)
			if !b.zero[f] || bit == 0 {
				zeroField(full, f)
				b.zero[f] = true
			}
			continue
		}
		b.zero[f] = false
		c, err := r.cursor(f)
		if err != nil {
			return 0, err
		}
		switch eventFields[f].kind {
		case parquet.Int64:
			v := r.i64[:n]
			if err := readNumbers(c, v, null, (*encoding.Values).Int64); err != nil {
				return 0, r.colErr(f, err)
			}
			switch f {
			case fRequestKey:
				for i := range buf {
					buf[i].RequestKey = v[i]
				}
			case fOffsetNs:
				for i := range buf {
					buf[i].OffsetNs = v[i]
				}
			}
		case parquet.Int32:
			v := r.i32[:n]
			if err := readNumbers(c, v, null, (*encoding.Values).Int32); err != nil {
				return 0, r.colErr(f, err)
			}
			switch f {
			case fIndex:
				for i := range buf {
					buf[i].Index = v[i]
				}
			case fReadIndex:
				for i := range buf {
					buf[i].ReadIndex = v[i]
				}
			case fBytes:
				for i := range buf {
					buf[i].Bytes = v[i]
				}
			case fTokens:
				var slab []int32 // one allocation per batch for the pointers
				for i := range buf {
					if null[i] {
						buf[i].Tokens = nil
						continue
					}
					if slab == nil {
						slab = make([]int32, n)
					}
					slab[i] = v[i]
					buf[i].Tokens = &slab[i]
				}
			}
		case parquet.Boolean:
			v := r.bools[:n]
			if err := c.readBools(v, null, r.vals[:n]); err != nil {
				return 0, r.colErr(f, err)
			}
			for i := range buf {
				buf[i].HasChoices = v[i]
			}
		case parquet.ByteArray:
			v := r.str[:n]
			if err := c.readStrings(v, null, &r.dictCaches[f]); err != nil {
				return 0, r.colErr(f, err)
			}
			switch f {
			case fRunID:
				for i := range buf {
					buf[i].RunID = v[i]
				}
			case fKind:
				for i := range buf {
					buf[i].Kind = v[i]
				}
			case fFinishReason:
				for i := range buf {
					buf[i].FinishReason = v[i]
				}
			case fText, fReasoningText:
				var slab []string
				for i := range buf {
					var p *string
					if !null[i] {
						if slab == nil {
							slab = make([]string, n)
						}
						slab[i] = v[i]
						p = &slab[i]
					}
					if f == fText {
						buf[i].Text = p
					} else {
						buf[i].ReasoningText = p
					}
				}
			}
			clear(v) // drop string references
		}
	}
	r.pos += int64(n)
	return n, nil
}

func (r *eventColumnReader) colErr(f int, err error) error {
	return fmt.Errorf("row group %d, column %s: %w", r.g-1, eventFields[f].name, err)
}

// zeroField sets field f of every row to its zero value.
func zeroField(buf []Event, f int) {
	for i := range buf {
		e := &buf[i]
		switch f {
		case fRunID:
			e.RunID = ""
		case fRequestKey:
			e.RequestKey = 0
		case fIndex:
			e.Index = 0
		case fReadIndex:
			e.ReadIndex = 0
		case fOffsetNs:
			e.OffsetNs = 0
		case fKind:
			e.Kind = ""
		case fHasChoices:
			e.HasChoices = false
		case fTokens:
			e.Tokens = nil
		case fBytes:
			e.Bytes = 0
		case fText:
			e.Text = nil
		case fReasoningText:
			e.ReasoningText = nil
		case fFinishReason:
			e.FinishReason = ""
		}
	}
}

// cursor returns field f's cursor in the current row group, opening it
// (positioned at the current row) on first use.
func (r *eventColumnReader) cursor(f int) (*columnCursor, error) {
	if c := r.cur[f]; c != nil {
		return c, nil
	}
	chunk := r.groups[r.g-1].ColumnChunks()[r.leaf[f].index]
	c := &columnCursor{pages: chunk.Pages(), maxDef: r.leaf[f].maxDef}
	if r.pos > 0 {
		// the column was not wanted for the first rows
		if err := c.pages.SeekToRow(r.pos); err != nil {
			c.close()
			return nil, r.colErr(f, err)
		}
	}
	r.cur[f] = c
	return c, nil
}

func (r *eventColumnReader) closeGroup() {
	for f, c := range r.cur {
		if c != nil {
			c.close()
			r.cur[f] = nil
		}
	}
}

func (r *eventColumnReader) close() { r.closeGroup() }

// columnCursor walks the pages of one column chunk.
type columnCursor struct {
	pages  parquet.Pages
	page   parquet.Page
	maxDef byte
	defs   []byte          // the page's definition levels; nil when required
	data   encoding.Values // the page's non-null values, or dictionary indexes
	dict   parquet.Dictionary
	vr     parquet.ValueReader // booleans
	rows   int                 // rows of the page
	row    int                 // next row of the page
	val    int                 // next non-null value of the page
}

var errShortColumn = errors.New("column chunk ended before its row group")

// avail loads pages until one has rows left and returns how many.
func (c *columnCursor) avail() (int, error) {
	for c.row >= c.rows {
		if c.page != nil {
			parquet.Release(c.page)
			c.page = nil
		}
		p, err := c.pages.ReadPage()
		if err != nil {
			if err == io.EOF {
				return 0, errShortColumn
			}
			return 0, err
		}
		c.page, c.rows, c.row, c.val, c.vr = p, int(p.NumRows()), 0, 0, nil
		c.defs = nil
		if c.maxDef > 0 {
			c.defs = p.DefinitionLevels()
			if len(c.defs) != c.rows {
				return 0, fmt.Errorf("page of %d rows has %d definition levels", c.rows, len(c.defs))
			}
		}
		c.dict = p.Dictionary()
		c.data = p.Data()
	}
	return c.rows - c.row, nil
}

func (c *columnCursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	c.pages.Close()
}

// nonNull reports whether row i of the page holds a value.
func (c *columnCursor) nonNull(i int) bool { return c.defs == nil || c.defs[i] == c.maxDef }

// readNumbers reads len(out) rows of an INT32, INT64 or DOUBLE column (plain
// or dictionary pages) into out, and whether each is null into null (its
// out value then 0).
func readNumbers[T int32 | int64 | float64](c *columnCursor, out []T, null []bool, typed func(*encoding.Values) []T) error {
	for i := 0; i < len(out); {
		k, err := c.avail()
		if err != nil {
			return err
		}
		k = min(k, len(out)-i)
		var src []T
		var idx []int32
		if c.dict != nil {
			idx = c.data.Int32()
			d := c.dict.Page().Data()
			src = typed(&d)
		} else {
			src = typed(&c.data)
		}
		for j := range k {
			if !c.nonNull(c.row + j) {
				out[i+j], null[i+j] = 0, true
				continue
			}
			v := c.val
			c.val++
			if idx != nil {
				if v >= len(idx) || int(idx[v]) >= len(src) || idx[v] < 0 {
					return errors.New("dictionary index out of range")
				}
				out[i+j] = src[idx[v]]
			} else {
				if v >= len(src) {
					return errors.New("fewer values than rows")
				}
				out[i+j] = src[v]
			}
			null[i+j] = false
		}
		c.row += k
		i += k
	}
	return nil
}

// dictStrings caches the strings of one dictionary: each entry is
// converted once, however many rows use it.
type dictStrings struct {
	dict parquet.Dictionary
	strs []string
	set  []bool
}

// readStrings reads len(out) rows of a BYTE_ARRAY column into out (and
// null). Strings of dictionary pages come from cache; equal consecutive
// values of plain pages share one string.
func (c *columnCursor) readStrings(out []string, null []bool, cache *dictStrings) error {
	for i := 0; i < len(out); {
		k, err := c.avail()
		if err != nil {
			return err
		}
		k = min(k, len(out)-i)
		if c.dict != nil {
			if cache.dict != c.dict {
				n := c.dict.Len()
				*cache = dictStrings{dict: c.dict, strs: make([]string, n), set: make([]bool, n)}
			}
			idx := c.data.Int32()
			d := c.dict.Page().Data()
			vals, offs := d.ByteArray()
			for j := range k {
				if !c.nonNull(c.row + j) {
					out[i+j], null[i+j] = "", true
					continue
				}
				v := c.val
				c.val++
				if v >= len(idx) || idx[v] < 0 || int(idx[v]) >= len(cache.strs) || int(idx[v])+1 >= len(offs) {
					return errors.New("dictionary index out of range")
				}
				d := idx[v]
				if !cache.set[d] {
					cache.strs[d], cache.set[d] = string(vals[offs[d]:offs[d+1]]), true
				}
				out[i+j], null[i+j] = cache.strs[d], false
			}
		} else {
			vals, offs := c.data.ByteArray()
			prev := ""
			for j := range k {
				if !c.nonNull(c.row + j) {
					out[i+j], null[i+j] = "", true
					continue
				}
				v := c.val
				c.val++
				if v+1 >= len(offs) {
					return errors.New("fewer values than rows")
				}
				b := vals[offs[v]:offs[v+1]]
				if string(b) != prev {
					prev = string(b)
				}
				out[i+j], null[i+j] = prev, false
			}
		}
		c.row += k
		i += k
	}
	return nil
}

// readBools reads len(out) rows of a BOOLEAN column through the page's
// value reader (booleans are bit-packed; vals is scratch).
func (c *columnCursor) readBools(out, null []bool, vals []parquet.Value) error {
	for i := 0; i < len(out); {
		k, err := c.avail()
		if err != nil {
			return err
		}
		k = min(k, len(out)-i)
		if c.vr == nil {
			c.vr = c.page.Values()
		}
		if br, ok := c.vr.(parquet.BooleanReader); ok && c.defs == nil {
			// required column: no nulls, no Value boxing
			for n := 0; n < k; {
				m, err := br.ReadBooleans(out[i+n : i+k])
				n += m
				if n < k && (err == io.EOF || err == nil && m == 0) {
					return errors.New("fewer values than rows")
				}
				if err != nil && err != io.EOF {
					return err
				}
			}
			clear(null[i : i+k])
			c.row += k
			i += k
			continue
		}
		for n := 0; n < k; {
			m, err := c.vr.ReadValues(vals[n:k])
			n += m
			if n < k && (err == io.EOF || err == nil && m == 0) {
				return errors.New("fewer values than rows")
			}
			if err != nil && err != io.EOF {
				return err
			}
		}
		for j, v := range vals[:k] {
			if v.IsNull() {
				out[i+j], null[i+j] = false, true
			} else {
				out[i+j], null[i+j] = v.Boolean(), false
			}
		}
		c.row += k
		i += k
	}
	return nil
}

// Read-ahead of the events: a goroutine decodes the next batches while the
// sink works on the current one (on two cores the decoding then costs
// little wall time). pipeBatches batches of pipeBatchRows rows circulate.
const (
	pipeBatches   = 3
	pipeBatchRows = 4096
)

// eventPipe runs an eventColumnReader on its own goroutine. Batches go to
// the consumer through full and come back through free once it asks for
// the next one; the reader's state is touched by the goroutine only.
type eventPipe struct {
	full   chan pipeBatch
	free   chan *eventBuf
	done   chan struct{}
	exited chan struct{}
	cur    *eventBuf // held by the consumer
}

type pipeBatch struct {
	b   *eventBuf
	n   int
	err error
}

func startEventPipe(r *eventColumnReader) *eventPipe {
	p := &eventPipe{full: make(chan pipeBatch, pipeBatches), free: make(chan *eventBuf, pipeBatches),
		done: make(chan struct{}), exited: make(chan struct{})}
	for range pipeBatches {
		p.free <- &eventBuf{ev: make([]Event, pipeBatchRows)}
	}
	go func() {
		defer close(p.exited)
		for {
			var b *eventBuf
			select {
			case b = <-p.free:
			case <-p.done:
				return
			}
			var n int
			err := protect(func() (err error) {
				n, err = r.read(b)
				return err
			})
			select {
			case p.full <- pipeBatch{b, n, err}:
			case <-p.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// next returns the next batch's events (valid until the following call),
// how many rows it holds, and the reader's error (io.EOF at the end).
func (p *eventPipe) next() ([]Event, int, error) {
	if p.cur != nil {
		p.free <- p.cur // never blocks: pipeBatches buffers in all
		p.cur = nil
	}
	b := <-p.full
	p.cur = b.b
	if b.b == nil {
		return nil, 0, b.err
	}
	return b.b.ev, b.n, b.err
}

// stop ends the goroutine and waits for it: the reader may then be closed.
func (p *eventPipe) stop() {
	close(p.done)
	<-p.exited
}

// flatColumnReader reads a table of flat rows — top-level fields of
// string, int32, int64, float64 and bool and pointers to them, as Request
// is — column by column, setting fields through reflection (parquet-go's
// row reconstruction of the ~50 request columns costs ~25 µs a row).
// Tables with lists (runs) keep the row reader.
type flatColumnReader[T any] struct {
	groups []parquet.RowGroup
	g      int   // row groups opened
	rows   int64 // rows of the current row group
	pos    int64 // rows of the current row group read
	fields []flatField
	cur    []*columnCursor // per field, of the current row group
	// per-batch scratch
	i64   []int64
	i32   []int32
	f64   []float64
	str   []string
	bools []bool
	null  []bool
	vals  []parquet.Value
	dicts []dictStrings
}

type flatField struct {
	name  string
	field int // index in T
	kind  parquet.Kind
	ptr   bool
	leaf  leafColumn
}

// newFlatColumnReader returns a column reader for a file of T rows, or nil
// when T is not flat or a column of the file has another type or shape.
func newFlatColumnReader[T any](pf *parquet.File) *flatColumnReader[T] {
	rt := reflect.TypeFor[T]()
	r := &flatColumnReader[T]{groups: pf.RowGroups()}
	for i := range rt.NumField() {
		sf := rt.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("parquet"), ",")
		if name == "" || name == "-" {
			return nil
		}
		ft := sf.Type
		ptr := ft.Kind() == reflect.Pointer
		if ptr {
			ft = ft.Elem()
		}
		var kind parquet.Kind
		switch ft.Kind() {
		case reflect.String:
			kind = parquet.ByteArray
		case reflect.Int64:
			kind = parquet.Int64
		case reflect.Int32:
			kind = parquet.Int32
		case reflect.Float64:
			kind = parquet.Double
		case reflect.Bool:
			kind = parquet.Boolean
		default:
			return nil
		}
		f := flatField{name: name, field: i, kind: kind, ptr: ptr, leaf: leafColumn{index: -1}}
		if leaf, ok := pf.Schema().Lookup(name); ok {
			if !leaf.Node.Leaf() || leaf.MaxRepetitionLevel != 0 || leaf.MaxDefinitionLevel > 1 || leaf.Node.Type().Kind() != kind {
				return nil
			}
			f.leaf = leafColumn{index: leaf.ColumnIndex, maxDef: byte(leaf.MaxDefinitionLevel)}
		}
		r.fields = append(r.fields, f)
	}
	r.cur = make([]*columnCursor, len(r.fields))
	r.dicts = make([]dictStrings, len(r.fields))
	return r
}

// read fills buf with the next rows (see eventColumnReader.read); every
// field of every row it returns is set.
func (r *flatColumnReader[T]) read(buf []T) (int, error) {
	for r.pos >= r.rows {
		if r.g >= len(r.groups) {
			return 0, io.EOF
		}
		r.closeGroup()
		r.rows, r.pos = r.groups[r.g].NumRows(), 0
		r.g++
		for i, f := range r.fields {
			if f.leaf.index >= 0 {
				chunk := r.groups[r.g-1].ColumnChunks()[f.leaf.index]
				r.cur[i] = &columnCursor{pages: chunk.Pages(), maxDef: f.leaf.maxDef}
			}
		}
	}
	n := int(min(int64(len(buf)), r.rows-r.pos))
	if cap(r.null) < n {
		r.i64, r.i32, r.f64, r.str = make([]int64, n), make([]int32, n), make([]float64, n), make([]string, n)
		r.bools, r.null, r.vals = make([]bool, n), make([]bool, n), make([]parquet.Value, n)
	}
	null := r.null[:n]
	rows := reflect.ValueOf(buf[:n])
	for fi, f := range r.fields {
		c := r.cur[fi]
		if c == nil { // column not in the file: zero (null)
			for i := range n {
				rows.Index(i).Field(f.field).SetZero()
			}
			continue
		}
		var vals reflect.Value // typed values of the batch
		var err error
		switch f.kind {
		case parquet.Int64:
			err = readNumbers(c, r.i64[:n], null, (*encoding.Values).Int64)
			vals = reflect.ValueOf(r.i64[:n])
		case parquet.Int32:
			err = readNumbers(c, r.i32[:n], null, (*encoding.Values).Int32)
			vals = reflect.ValueOf(r.i32[:n])
		case parquet.Double:
			err = readNumbers(c, r.f64[:n], null, (*encoding.Values).Double)
			vals = reflect.ValueOf(r.f64[:n])
		case parquet.Boolean:
			err = c.readBools(r.bools[:n], null, r.vals[:n])
			vals = reflect.ValueOf(r.bools[:n])
		case parquet.ByteArray:
			err = c.readStrings(r.str[:n], null, &r.dicts[fi])
			vals = reflect.ValueOf(r.str[:n])
		}
		if err != nil {
			return 0, fmt.Errorf("row group %d, column %s: %w", r.g-1, f.name, err)
		}
		var slab reflect.Value // backing array of the pointers of the batch
		for i := range n {
			dst := rows.Index(i).Field(f.field)
			switch {
			case null[i]:
				dst.SetZero()
			case f.ptr:
				if !slab.IsValid() {
					slab = reflect.MakeSlice(vals.Type(), n, n)
				}
				p := slab.Index(i)
				p.Set(vals.Index(i))
				dst.Set(p.Addr())
			default:
				dst.Set(vals.Index(i))
			}
		}
	}
	clear(r.str) // drop string references
	r.pos += int64(n)
	return n, nil
}

func (r *flatColumnReader[T]) closeGroup() {
	for i, c := range r.cur {
		if c != nil {
			c.close()
			r.cur[i] = nil
		}
	}
}
