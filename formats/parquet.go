package formats

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// Table names, and the file names the writers give them in their output
// directory (events.parquet, requests.parquet, runs.parquet for Parquet;
// events.arrow, … for Arrow IPC).
const (
	TableEvents   = "events"
	TableRequests = "requests"
	TableRuns     = "runs"
)

// Key-value metadata keys written to every Parquet file (and to the schema
// metadata of every Arrow IPC file).
const (
	// MetaSchemaVersion holds SchemaVersion as a decimal integer.
	MetaSchemaVersion = "tokentrace.schema_version"
	// MetaVersion holds Version, the writing tokentrace's version.
	MetaVersion = "tokentrace.version"
	// MetaTable holds the table name: "events", "requests" or "runs".
	MetaTable = "tokentrace.table"
	// MetaImportID holds a random id shared by the three files of one
	// write; ReadTables refuses a directory whose files carry different ids
	// (tables from different imports mixed together).
	MetaImportID = "tokentrace.import_id"
	// MetaArrowSchema holds the table's Arrow schema (ArrowSchema) as an
	// Arrow IPC schema message, base64-encoded: the key and encoding that
	// pyarrow, arrow-rs and Arrow Go's pqarrow write and read, so that
	// Arrow-based readers take the column types from it (TIMESTAMP with
	// its UTC zone, non-nullable list elements). Parquet files only.
	MetaArrowSchema = "ARROW:schema"
)

// Default row-group bounds of ParquetWriter (see WriteOptions).
const (
	DefaultRowGroupRows  = 128 * 1024
	DefaultRowGroupBytes = 64 << 20
)

// Compression codec names accepted by WriteOptions.Compression.
const (
	CompressionZstd   = "zstd"
	CompressionSnappy = "snappy"
	CompressionNone   = "none"
)

// WriteOptions configures NewParquetWriter. The zero value is the default:
// text kept, zstd compression, row groups of at most DefaultRowGroupRows
// rows and about DefaultRowGroupBytes bytes.
type WriteOptions struct {
	// NoText writes the events table's text and reasoning_text columns as
	// null on every row (the columns stay in the schema). Use it to keep
	// generated text out of shared files, or to make them much smaller.
	NoText bool
	// Compression is the page codec: "zstd" (default when ""), "snappy" or
	// "none". NewParquetWriter rejects any other value.
	Compression string
	// RowGroupRows caps the rows per row group (0: DefaultRowGroupRows).
	// Memory use while writing is about one row group's compressed pages
	// per table, so this bounds it whatever the number of rows.
	RowGroupRows int
	// RowGroupBytes ends a row group early once its rows' approximate
	// in-memory size (fixed-width fields plus string bytes) reaches it
	// (0: DefaultRowGroupBytes). It bounds memory when rows carry long texts.
	RowGroupBytes int64
	// Layout is the directory layout: LayoutFlat ("" or "flat": one file
	// per table) or LayoutHive (hive-partitioned by run_id; see
	// partition.go and SCHEMA.md). NewParquetWriter rejects any other value.
	Layout string
	// PartRows caps the rows of one part file of LayoutHive before the
	// partition continues in the next part (0: DefaultPartRows). Ignored
	// by LayoutFlat.
	PartRows int64
	// CSVSafe, for NewCSVWriter only, writes every text cell a spreadsheet
	// would evaluate as a formula with a leading ' (SpreadsheetSafe). Off,
	// cells are the tables' values, raw: CSV is a machine format.
	CSVSafe bool
}

func (o WriteOptions) codec() (compress.Codec, error) {
	switch o.Compression {
	case "", CompressionZstd:
		return zstdPages, nil // parquet.Zstd's format with bounded memory (parquet_codec.go)
	case CompressionSnappy:
		return &parquet.Snappy, nil
	case CompressionNone:
		return &parquet.Uncompressed, nil
	}
	return nil, fmt.Errorf("formats: unknown Parquet compression %q (want %q, %q or %q)",
		o.Compression, CompressionZstd, CompressionSnappy, CompressionNone)
}

// Batch sizes: rows handed to the parquet-go writer (and read from it) per
// call. The writer and the reader each hold one batch per table.
const (
	writeBatchRows = 1024
	readBatchRows  = 1024
)

// ParquetWriter is a Sink that streams rows into events.parquet,
// requests.parquet and runs.parquet in one directory. Create it with
// NewParquetWriter; finish with Close (commit) or Abort (discard).
//
// Rows are written in the order they arrive: requests.parquet holds each
// run's requests contiguously in arrival order, events.parquet holds each
// request's events contiguously in the same order as the requests, and
// runs.parquet holds runs in the order of their Run rows (which may differ
// from the order of their requests).
//
// The writer checks the Sink contract and fails the call that breaks it: a
// run's requests must be contiguous, with increasing RequestKey, and come
// before its Run row; every event must carry its request's RunID and
// RequestKey; a RunID must not be empty and gets exactly one Run row; and by
// Close every run that has requests must have had its Run row.
// Run.SchemaVersion and Run.TokentraceVersion are set to SchemaVersion and
// Version when zero.
//
// After any failed call the writer is unusable: later calls return the same
// error, and Close discards the output. A ParquetWriter is not safe for
// concurrent use.
type ParquetWriter struct {
	tableSink
	dir  string
	opt  WriteOptions
	hive *hiveLayout // nil for LayoutFlat
}

// NewParquetWriter returns a ParquetWriter writing into dir, which it
// creates if needed. Nothing is visible under the final names until Close
// succeeds: rows go to hidden temporary files in dir (".events.parquet.tmp-…")
// that Close renames over events.parquet, requests.parquet and runs.parquet,
// replacing any previous tables; Abort (or a failed Close) removes them and
// leaves previous tables untouched. With opt.Layout LayoutHive the tables
// are hive-partitioned datasets (DIR/events/run_id=…/part-NNNNN.parquet,
// …) written under a hidden staging directory whose table directories Close
// renames into place (see partition.go). It fails if dir cannot be created
// or written, if opt is invalid, or (LayoutHive) if a directory named like a
// table is in the way and is not a dataset.
func NewParquetWriter(dir string, opt WriteOptions) (*ParquetWriter, error) {
	codec, err := opt.codec()
	if err != nil {
		return nil, err
	}
	if opt.RowGroupRows <= 0 {
		opt.RowGroupRows = DefaultRowGroupRows
	}
	if opt.RowGroupBytes <= 0 {
		opt.RowGroupBytes = DefaultRowGroupBytes
	}
	if opt.PartRows <= 0 {
		opt.PartRows = DefaultPartRows
	}
	switch opt.Layout {
	case "", LayoutFlat, LayoutHive:
	default:
		return nil, fmt.Errorf("formats: unknown table layout %q (want %q or %q)", opt.Layout, LayoutFlat, LayoutHive)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("formats: %w", err)
	}
	importID := newImportID()
	w := &ParquetWriter{dir: dir, opt: opt}
	w.noText, w.spool.dir = opt.NoText, dir
	if opt.Layout == LayoutHive {
		if err := w.openHive(importID, codec); err != nil {
			return nil, err
		}
		return w, nil
	}
	ev, err := newParquetTable[Event](dir, TableEvents, importID, codec, opt)
	if err != nil {
		return nil, err
	}
	rq, err := newParquetTable[requestRow](dir, TableRequests, importID, codec, opt)
	if err != nil {
		ev.abort()
		return nil, err
	}
	rn, err := newParquetTable[Run](dir, TableRuns, importID, codec, opt)
	if err != nil {
		ev.abort()
		rq.abort()
		return nil, err
	}
	w.events, w.reqs, w.runs = ev, requestRows{rq}, rn
	w.commit = func() error {
		err := commit(dir, []*tempFile{&ev.file, &rq.file, &rn.file})
		if err == nil {
			removeStaleDatasets(dir)
		}
		return err
	}
	return w, nil
}

var errClosed = errors.New("formats: writer already closed or aborted")

// cmpErr returns the first non-nil error.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stampRun returns a copy of r with SchemaVersion and TokentraceVersion
// filled when zero.
func stampRun(r *Run) Run {
	row := *r
	if row.SchemaVersion == 0 {
		row.SchemaVersion = SchemaVersion
	}
	if row.TokentraceVersion == "" {
		row.TokentraceVersion = Version
	}
	return row
}

// Approximate in-memory sizes of rows, for the row-group byte budget.
func eventSize(e *Event) int64 {
	n := int64(64 + len(e.RunID) + len(e.Kind) + len(e.FinishReason))
	if e.Text != nil {
		n += int64(len(*e.Text))
	}
	if e.ReasoningText != nil {
		n += int64(len(*e.ReasoningText))
	}
	return n
}

func requestSize(r *Request) int64 {
	return int64(320 + len(r.RunID) + len(r.SourceID) + len(r.XRequestID) + len(r.ResponseID) +
		len(r.TraceID) + len(r.Status) + len(r.ErrorType) + len(r.ErrorText) + len(r.ClockDomain) +
		len(r.InputTokensSource) + len(r.OutputTokensSource) + len(r.ServerKind) + len(r.ServerSource) +
		len(r.ServerRequestID) + len(r.ServerClockDomain) + len(r.MatchQuality))
}

func runSize(r *Run) int64 {
	n := int64(256 + len(r.RunID) + len(r.Tool) + len(r.ToolVersion) + len(r.Model) + len(r.Endpoint) +
		len(r.ConfigJSON) + len(r.Tokenizer) + len(r.Convention))
	for _, s := range r.Notes {
		n += int64(16 + len(s))
	}
	for _, f := range r.SourceFiles {
		n += int64(32 + len(f.Path) + len(f.Role) + len(f.SHA256))
	}
	for _, s := range r.Reported {
		n += int64(48 + len(s.Metric) + len(s.Stat) + len(s.Unit) + len(s.Text) + len(s.File))
	}
	n += int64(80 * len(r.Load))
	for _, c := range r.Checks {
		n += int64(40 + len(c.Code) + len(c.Field) + len(c.Detail))
	}
	return n
}

// freeTextColumns lists, per table, the columns holding free text.
var freeTextColumns = map[string][]string{
	TableEvents:   {"text", "reasoning_text"},
	TableRequests: {"error_text"},
	TableRuns:     {"config_json"},
}

// parquetTable streams rows of one table into a temporary file.
type parquetTable[T any] struct {
	file      tempFile
	w         *parquet.GenericWriter[T]
	batch     []T
	rows      int64 // rows added
	groupRows int64 // rows added since the last row group ended
	groupSize int64 // approximate bytes added since the last row group ended
	maxRows   int64
	maxBytes  int64
	err       error
}

func newParquetTable[T any](dir, table, importID string, codec compress.Codec, opt WriteOptions) (*parquetTable[T], error) {
	return newParquetFile[T](dir, table+".parquet", table, importID, codec, opt)
}

// newParquetFile starts dir/name (under a temporary name) holding rows of
// table; extra are more writer options (key-value metadata).
func newParquetFile[T any](dir, name, table, importID string, codec compress.Codec, opt WriteOptions, extra ...parquet.WriterOption) (*parquetTable[T], error) {
	t := &parquetTable[T]{maxRows: int64(opt.RowGroupRows), maxBytes: opt.RowGroupBytes, batch: make([]T, 0, writeBatchRows)}
	if err := t.file.create(dir, name); err != nil {
		return nil, err
	}
	opts := []parquet.WriterOption{
		parquet.Compression(codec),
		// Version 1 data pages and dictionary-encoded strings (falling
		// back to plain once a column's dictionary passes 1 MiB in a row
		// group): what pyarrow writes by default, so every reader (older
		// Spark included) handles it, and smaller and faster than
		// parquet-go's default DELTA_LENGTH_BYTE_ARRAY on these tables.
		parquet.DataPageVersion(1),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.RLEDictionary),
		parquet.DictionaryMaxBytes(1 << 20),
		parquet.MaxRowsPerRowGroup(int64(opt.RowGroupRows)),
		// Not parquet.CreatedBy, whose format lacks a space ("…(build )").
		&parquet.WriterConfig{CreatedBy: "tokentrace version " + Version},
		parquet.KeyValueMetadata(MetaSchemaVersion, strconv.Itoa(SchemaVersion)),
		parquet.KeyValueMetadata(MetaVersion, Version),
		parquet.KeyValueMetadata(MetaTable, table),
		parquet.KeyValueMetadata(MetaImportID, importID),
		// The Arrow schema, as pyarrow, arrow-rs and Arrow Go's pqarrow
		// store it: Arrow-based readers take the column types from it.
		parquet.KeyValueMetadata(MetaArrowSchema, arrowSchemaMeta(reflect.TypeFor[T]())),
	}
	// Free text gets no min/max page statistics: they cost time, bloat the
	// page index with long values, and no query filters on them.
	for _, col := range freeTextColumns[table] {
		opts = append(opts, parquet.SkipPageBounds(col))
	}
	opts = append(opts, extra...)
	t.w = parquet.NewGenericWriter[T](t.file.f, opts...)
	return t, nil
}

// add copies *row into the batch, writing the batch out when full and ending
// the row group when the byte budget is reached. Errors are kept in t.err.
func (t *parquetTable[T]) add(row *T, size int64) {
	if t.err != nil {
		return
	}
	t.batch = append(t.batch, *row)
	t.rows++
	t.groupRows++
	t.groupSize += size
	switch {
	case t.groupSize >= t.maxBytes:
		// End the row group early.
		t.writeBatch()
		if t.err == nil {
			if err := t.w.Flush(); err != nil {
				t.err = t.file.errorf("ending row group: %w", err)
			}
		}
		t.groupRows, t.groupSize = 0, 0
	case t.groupRows >= t.maxRows:
		// parquet-go ends the row group itself at this row.
		t.groupRows, t.groupSize = 0, 0
	}
	if len(t.batch) == cap(t.batch) {
		t.writeBatch()
	}
}

func (t *parquetTable[T]) writeBatch() {
	if len(t.batch) == 0 || t.err != nil {
		return
	}
	if _, err := t.w.Write(t.batch); err != nil {
		t.err = t.file.errorf("writing rows %d–%d: %w", t.rows-int64(len(t.batch)), t.rows-1, err)
	}
	clear(t.batch) // drop references to strings and lists
	t.batch = t.batch[:0]
}

// finish writes the last batch, the footer, and syncs the file.
func (t *parquetTable[T]) finish() error {
	t.writeBatch()
	if t.err != nil {
		return t.err
	}
	if err := t.w.Close(); err != nil {
		t.err = t.file.errorf("finishing file: %w", err)
		return t.err
	}
	t.w, t.batch = nil, nil // the encoder's buffers, for the collector
	t.err = t.file.finish()
	return t.err
}

func (t *parquetTable[T]) abort() { t.file.abort() }

func (t *parquetTable[T]) failed() error { return t.err }

// tempFile is an output file written under a hidden temporary name in its
// final directory and renamed into place by commit.
type tempFile struct {
	final string // dir/name
	tmp   string // dir/.name.tmp-<random>
	f     *os.File
}

func (t *tempFile) create(dir, name string) error {
	t.final = filepath.Join(dir, name)
	for range 100 {
		t.tmp = filepath.Join(dir, "."+name+".tmp-"+randomHex(6))
		// O_EXCL with 0666 (not os.CreateTemp's 0600): the table gets the
		// permissions of an ordinary new file under the user's umask.
		f, err := os.OpenFile(t.tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("formats: creating %s: %w", t.final, err)
		}
		t.f = f
		return nil
	}
	return fmt.Errorf("formats: creating %s: no free temporary name", t.final)
}

func (t *tempFile) errorf(format string, args ...any) error {
	return fmt.Errorf("formats: %s: "+format, append([]any{t.final}, args...)...)
}

// finish syncs and closes the file.
func (t *tempFile) finish() error {
	if err := t.f.Sync(); err != nil {
		return t.errorf("sync: %w", err)
	}
	err := t.f.Close()
	t.f = nil
	if err != nil {
		return t.errorf("close: %w", err)
	}
	return nil
}

// abort closes and removes the temporary file, if any.
func (t *tempFile) abort() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
	if t.tmp != "" {
		os.Remove(t.tmp)
		t.tmp = ""
	}
}

// commit renames finished temporary files into place and syncs dir. On a
// rename failure the files not yet renamed stay temporary (the caller
// removes them).
func commit(dir string, files []*tempFile) error {
	for _, f := range files {
		if err := os.Rename(f.tmp, f.final); err != nil {
			return fmt.Errorf("formats: %w", err)
		}
		f.tmp = ""
	}
	if d, err := os.Open(dir); err == nil {
		// Best effort: some file systems do not support syncing directories.
		d.Sync()
		d.Close()
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func newImportID() string { return randomHex(16) }

// sinkChecker enforces the Sink contract for the table writers.
type sinkChecker struct {
	curRun   string          // run of the latest request
	curKey   int64           // request_key of the latest request
	started  bool            // a request has been seen
	ended    map[string]bool // runs whose request group has ended
	needRun  map[string]bool // runs with requests and no Run row yet
	haveRun  map[string]bool // runs with a Run row
	requests int64
}

func (c *sinkChecker) request(r *Request, events []Event) error {
	if c.ended == nil {
		c.ended, c.needRun, c.haveRun = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	n := c.requests
	c.requests++
	if r.RunID == "" {
		return fmt.Errorf("formats: request %d (key %d): empty run_id", n, r.RequestKey)
	}
	if c.haveRun[r.RunID] {
		return fmt.Errorf("formats: request %d: run %q already had its Run row; requests must come before it", n, r.RunID)
	}
	if !c.started || r.RunID != c.curRun {
		if c.started {
			c.ended[c.curRun] = true
		}
		if c.ended[r.RunID] {
			return fmt.Errorf("formats: request %d: requests of run %q are not contiguous (another run's requests came between)", n, r.RunID)
		}
		c.curRun, c.started = r.RunID, true
		c.needRun[r.RunID] = true
	} else if r.RequestKey <= c.curKey {
		return fmt.Errorf("formats: request %d: run %q request_key %d after %d; keys must increase within a run",
			n, r.RunID, r.RequestKey, c.curKey)
	}
	c.curKey = r.RequestKey
	for i := range events {
		if events[i].RunID != r.RunID || events[i].RequestKey != r.RequestKey {
			return fmt.Errorf("formats: request %d (run %q key %d): event %d has run_id %q request_key %d",
				n, r.RunID, r.RequestKey, i, events[i].RunID, events[i].RequestKey)
		}
	}
	return nil
}

func (c *sinkChecker) run(r *Run) error {
	if c.ended == nil {
		c.ended, c.needRun, c.haveRun = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	if r.RunID == "" {
		return errors.New("formats: Run row with empty run_id")
	}
	if c.haveRun[r.RunID] {
		return fmt.Errorf("formats: second Run row for run %q", r.RunID)
	}
	c.haveRun[r.RunID] = true
	delete(c.needRun, r.RunID)
	if c.started && c.curRun == r.RunID {
		c.ended[r.RunID] = true
	}
	return nil
}

func (c *sinkChecker) finish() error {
	if len(c.needRun) > 0 {
		ids := slices.Sorted(maps.Keys(c.needRun))
		return fmt.Errorf("formats: run %q has requests but no Run row (%d such runs)", ids[0], len(ids))
	}
	return nil
}
