package formats

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ArrowBatchRows is the most rows an ArrowIPCWriter puts in one record
// batch by default; a batch also ends early once its rows' approximate size
// reaches DefaultRowGroupBytes.
const ArrowBatchRows = 64 * 1024

var arrowBatchRows = ArrowBatchRows // tests lower it

// ArrowSchema returns the Arrow schema of a table row type (Run, Request or
// Event), with the same column names, order and nullability as the Parquet
// files: Go string → utf8 (nullable for a field tagged optional, whose ""
// is null), int64 → int64, int32 → int32, float64 → float64, bool → bool, a
// pointer → the same type, nullable; a `list` slice → a non-nullable
// list<element: T not null> (struct elements become structs). Time columns
// are plain int64 nanoseconds, as in Parquet. For the columns as the files
// hold them — a Request's followed by the derived TIMESTAMP columns — use
// TableArrowSchema. It panics on a field type outside that set (a
// programming error in types.go).
func ArrowSchema(row any) *arrow.Schema {
	t := reflect.TypeOf(row)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return arrow.NewSchema(arrowFields(t), nil)
}

// TableArrowSchema returns the Arrow schema of a table's files ("events",
// "requests" or "runs"): ArrowSchema of its row type, and for requests the
// derived columns start_time and server_arrival_time,
// timestamp[ns, tz=UTC]. It is what Parquet files carry as ARROW:schema
// and what Arrow IPC exports are written with. Nil for an unknown table.
func TableArrowSchema(table string) *arrow.Schema {
	t, ok := tableRowTypes[table]
	if !ok {
		return nil
	}
	return arrow.NewSchema(arrowFields(t), nil)
}

// arrowTimestamp is the Arrow type of TIMESTAMP columns.
var arrowTimestamp = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

func arrowFields(t reflect.Type) []arrow.Field {
	var fs []arrow.Field
	for _, f := range columnFields(t) {
		dt, nullable := arrowType(f.Type)
		switch {
		case isTimestamp(f):
			dt = arrowTimestamp
		case nullableString(f):
			nullable = true
		}
		fs = append(fs, arrow.Field{Name: ColumnName(f), Type: dt, Nullable: nullable})
	}
	return fs
}

func arrowType(t reflect.Type) (arrow.DataType, bool) {
	switch t.Kind() {
	case reflect.Pointer:
		dt, _ := arrowType(t.Elem())
		return dt, true
	case reflect.String:
		return arrow.BinaryTypes.String, false
	case reflect.Int64:
		return arrow.PrimitiveTypes.Int64, false
	case reflect.Int32:
		return arrow.PrimitiveTypes.Int32, false
	case reflect.Float64:
		return arrow.PrimitiveTypes.Float64, false
	case reflect.Bool:
		return arrow.FixedWidthTypes.Boolean, false
	case reflect.Slice:
		et, _ := arrowType(t.Elem())
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: false}), false
	case reflect.Struct:
		return arrow.StructOf(arrowFields(t)...), false
	}
	panic(fmt.Sprintf("formats: no Arrow type for Go type %v", t))
}

// arrowSchemaMetas caches arrowSchemaMeta per row type.
var arrowSchemaMetas sync.Map // reflect.Type → string

// arrowSchemaMeta returns the value of MetaArrowSchema for row type t: its
// Arrow schema (arrowFields) serialized as an Arrow IPC stream holding only
// the schema message, base64-encoded (standard alphabet, padded), as
// pyarrow's and Arrow Go's Parquet writers store it.
func arrowSchemaMeta(t reflect.Type) string {
	if v, ok := arrowSchemaMetas.Load(t); ok {
		return v.(string)
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(arrow.NewSchema(arrowFields(t), nil)))
	if err := w.Close(); err != nil {
		panic(fmt.Sprintf("formats: serializing the Arrow schema of %v: %v", t, err)) // writes to memory only
	}
	s := base64.StdEncoding.EncodeToString(buf.Bytes())
	arrowSchemaMetas.Store(t, s)
	return s
}

// appender appends one Go value to an Arrow builder of the matching type.
type appender func(b array.Builder, v reflect.Value)

func appenderOf(t reflect.Type) appender {
	switch t.Kind() {
	case reflect.Pointer:
		elem := appenderOf(t.Elem())
		return func(b array.Builder, v reflect.Value) {
			if v.IsNil() {
				b.AppendNull()
			} else {
				elem(b, v.Elem())
			}
		}
	case reflect.String:
		return func(b array.Builder, v reflect.Value) { b.(*array.StringBuilder).Append(v.String()) }
	case reflect.Int64:
		return func(b array.Builder, v reflect.Value) { b.(*array.Int64Builder).Append(v.Int()) }
	case reflect.Int32:
		return func(b array.Builder, v reflect.Value) { b.(*array.Int32Builder).Append(int32(v.Int())) }
	case reflect.Float64:
		return func(b array.Builder, v reflect.Value) { b.(*array.Float64Builder).Append(v.Float()) }
	case reflect.Bool:
		return func(b array.Builder, v reflect.Value) { b.(*array.BooleanBuilder).Append(v.Bool()) }
	case reflect.Slice:
		elem := appenderOf(t.Elem())
		return func(b array.Builder, v reflect.Value) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder()
			for i := 0; i < v.Len(); i++ {
				elem(vb, v.Index(i))
			}
		}
	case reflect.Struct:
		fields := structAppenders(t)
		return func(b array.Builder, v reflect.Value) {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			for i, f := range fields {
				f.app(sb.FieldBuilder(i), v.FieldByIndex(f.index))
			}
		}
	}
	panic(fmt.Sprintf("formats: no Arrow appender for Go type %v", t))
}

// fieldAppenderOf is appenderOf for a column field: a nullable string
// appends "" as null, a TIMESTAMP column its nanoseconds.
func fieldAppenderOf(f reflect.StructField) appender {
	switch {
	case isTimestamp(f):
		return func(b array.Builder, v reflect.Value) {
			if v.IsNil() {
				b.AppendNull()
			} else {
				b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.Elem().Int()))
			}
		}
	case nullableString(f):
		return func(b array.Builder, v reflect.Value) {
			if s := v.String(); s == "" {
				b.AppendNull()
			} else {
				b.(*array.StringBuilder).Append(s)
			}
		}
	}
	return appenderOf(f.Type)
}

type fieldAppender struct {
	index []int // struct field index path
	app   appender
}

func structAppenders(t reflect.Type) []fieldAppender {
	var fs []fieldAppender
	for _, f := range columnFields(t) {
		fs = append(fs, fieldAppender{f.Index, fieldAppenderOf(f)})
	}
	return fs
}

// ArrowIPCWriter is a Sink that writes events.arrow, requests.arrow and
// runs.arrow in one directory, in the Arrow IPC file format, uncompressed
// (pyarrow.ipc.open_file, polars.read_ipc, arrow/go's ipc.NewFileReader).
// Columns, their order, types and nullability are those of the Parquet
// tables (see TableArrowSchema); rows are in the same order as ParquetWriter
// writes them. Each file's schema metadata carries the same tokentrace.*
// keys as the Parquet files.
//
// Rows are buffered in builders and written as record batches of at most
// ArrowBatchRows rows (or about DefaultRowGroupBytes bytes; see
// NewArrowIPCWriterWithOptions), so memory does not grow with the number of
// rows. Like ParquetWriter, it writes to hidden temporary files that Close
// renames into place (Abort or a failed Close removes them, leaving previous
// files untouched), checks the Sink contract, stamps Run.SchemaVersion and
// Run.TokentraceVersion when zero, and is unusable after its first error.
// Not safe for concurrent use.
type ArrowIPCWriter struct {
	tableSink
}

// NewArrowIPCWriter returns an ArrowIPCWriter writing into dir, which it
// creates if needed, with default options (text kept). It fails if dir
// cannot be created or written.
func NewArrowIPCWriter(dir string) (*ArrowIPCWriter, error) {
	return NewArrowIPCWriterWithOptions(dir, WriteOptions{})
}

// NewArrowIPCWriterWithOptions is NewArrowIPCWriter with options: NoText
// nulls the event texts as in Parquet; RowGroupRows and RowGroupBytes bound
// the record batches instead of row groups (0: ArrowBatchRows and
// DefaultRowGroupBytes). Compression is ignored: IPC files are written
// uncompressed, which every Arrow reader accepts.
func NewArrowIPCWriterWithOptions(dir string, opt WriteOptions) (*ArrowIPCWriter, error) {
	if opt.RowGroupRows <= 0 {
		opt.RowGroupRows = arrowBatchRows
	}
	if opt.RowGroupBytes <= 0 {
		opt.RowGroupBytes = DefaultRowGroupBytes
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("formats: %w", err)
	}
	id := newImportID()
	ev, err := newArrowTable(dir, TableEvents, id, reflect.TypeFor[Event](), opt)
	if err != nil {
		return nil, err
	}
	rq, err := newArrowTable(dir, TableRequests, id, reflect.TypeFor[requestRow](), opt)
	if err != nil {
		ev.abort()
		return nil, err
	}
	rn, err := newArrowTable(dir, TableRuns, id, reflect.TypeFor[Run](), opt)
	if err != nil {
		ev.abort()
		rq.abort()
		return nil, err
	}
	w := &ArrowIPCWriter{}
	w.noText, w.spool.dir = opt.NoText, dir
	w.events, w.reqs, w.runs = arrowRows[Event]{ev}, requestRows{arrowRows[requestRow]{rq}}, arrowRows[Run]{rn}
	w.commit = func() error { return commit(dir, []*tempFile{&ev.file, &rq.file, &rn.file}) }
	return w, nil
}

// arrowTable streams rows of one table into an Arrow IPC file.
type arrowTable struct {
	file     tempFile
	rb       *array.RecordBuilder
	fw       *ipc.FileWriter
	fields   []fieldAppender
	rows     int // rows in the builder
	size     int64
	maxRows  int
	maxBytes int64
	err      error
}

func newArrowTable(dir, table, importID string, t reflect.Type, opt WriteOptions) (*arrowTable, error) {
	a := &arrowTable{fields: structAppenders(t), maxRows: opt.RowGroupRows, maxBytes: opt.RowGroupBytes}
	md := arrow.NewMetadata(
		[]string{MetaSchemaVersion, MetaVersion, MetaTable, MetaImportID},
		[]string{strconv.Itoa(SchemaVersion), Version, table, importID})
	schema := arrow.NewSchema(arrowFields(t), &md)
	if err := a.file.create(dir, table+".arrow"); err != nil {
		return nil, err
	}
	mem := memory.DefaultAllocator
	fw, err := ipc.NewFileWriter(a.file.f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		a.file.abort()
		return nil, a.file.errorf("%w", err)
	}
	a.fw = fw
	a.rb = array.NewRecordBuilder(mem, schema)
	return a, nil
}

func (a *arrowTable) add(v reflect.Value, size int64) {
	if a.err != nil {
		return
	}
	for i, f := range a.fields {
		f.app(a.rb.Field(i), v.FieldByIndex(f.index))
	}
	a.rows++
	a.size += size
	if a.rows >= a.maxRows || a.size >= a.maxBytes {
		a.flush()
	}
}

func (a *arrowTable) flush() {
	if a.rows == 0 || a.err != nil {
		return
	}
	rec := a.rb.NewRecord()
	defer rec.Release()
	if err := a.fw.Write(rec); err != nil {
		a.err = a.file.errorf("writing record batch: %w", err)
	}
	a.rows, a.size = 0, 0
}

func (a *arrowTable) finish() error {
	a.flush()
	if a.err != nil {
		return a.err
	}
	err := a.fw.Close()
	a.fw = nil
	a.rb.Release()
	a.rb = nil
	if err != nil {
		a.err = a.file.errorf("finishing file: %w", err)
		return a.err
	}
	a.err = a.file.finish()
	return a.err
}

func (a *arrowTable) abort() {
	if a.rb != nil {
		a.rb.Release()
		a.rb = nil
	}
	a.file.abort()
}

// Float64Record returns a one-column record named name holding values
// (non-nullable float64; NaN stays NaN), for handing a metric column to
// Arrow-based code. mem may be nil (memory.DefaultAllocator). The caller
// must Release the record.
func Float64Record(mem memory.Allocator, name string, values []float64) arrow.Record {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.AppendValues(values, nil)
	col := b.NewFloat64Array()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.PrimitiveTypes.Float64}}, nil)
	return array.NewRecord(schema, []arrow.Array{col}, int64(len(values)))
}
