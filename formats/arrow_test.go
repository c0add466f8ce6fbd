package formats

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// readArrowTable reads an Arrow IPC file into a slice of T (a table row
// type), independently of the writer's code: it walks the arrays by column
// name. Empty lists come back nil.
func readArrowTable[T any](t *testing.T, path, table string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	md := r.Schema().Metadata()
	for k, want := range map[string]string{MetaSchemaVersion: strconv.Itoa(SchemaVersion), MetaVersion: Version, MetaTable: table} {
		if i := md.FindKey(k); i < 0 || md.Values()[i] != want {
			t.Errorf("%s: metadata %s missing or not %q (%v)", path, k, want, md)
		}
	}
	if want := TableArrowSchema(table); !r.Schema().Equal(want) {
		t.Errorf("%s: schema\n%v\nwant\n%v", path, r.Schema(), want)
	}

	var rows []T
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		if rec.NumRows() > int64(arrowBatchRows) {
			t.Errorf("%s: record batch of %d rows", path, rec.NumRows())
		}
		base := len(rows)
		rows = append(rows, make([]T, rec.NumRows())...)
		for c := 0; c < int(rec.NumCols()); c++ {
			fi := fieldByColumn(reflect.TypeFor[T](), rec.ColumnName(c))
			if fi == nil {
				t.Fatalf("%s: unknown column %q", path, rec.ColumnName(c))
			}
			for j := 0; j < int(rec.NumRows()); j++ {
				setFromArrow(t, reflect.ValueOf(&rows[base+j]).Elem().FieldByIndex(fi), rec.Column(c), j)
			}
		}
	}
	return rows
}

// fieldByColumn returns the index path of column name's field in t (nil
// if none).
func fieldByColumn(t reflect.Type, name string) []int {
	for _, f := range columnFields(t) {
		if ColumnName(f) == name {
			return f.Index
		}
	}
	return nil
}

// setFromArrow sets v from row i of arr.
func setFromArrow(t *testing.T, v reflect.Value, arr arrow.Array, i int) {
	if v.Kind() == reflect.Pointer {
		if arr.IsNull(i) {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	} else if arr.IsNull(i) {
		if v.Kind() == reflect.String { // a nullable string column: "" in Go
			v.SetString("")
			return
		}
		t.Fatalf("null in non-nullable %v column", arr.DataType())
	}
	switch a := arr.(type) {
	case *array.String:
		v.SetString(a.Value(i))
	case *array.Int64:
		v.SetInt(a.Value(i))
	case *array.Timestamp:
		v.SetInt(int64(a.Value(i)))
	case *array.Int32:
		v.SetInt(int64(a.Value(i)))
	case *array.Float64:
		v.SetFloat(a.Value(i))
	case *array.Boolean:
		v.SetBool(a.Value(i))
	case *array.List:
		start, end := a.ValueOffsets(i)
		if end == start {
			return
		}
		s := reflect.MakeSlice(v.Type(), int(end-start), int(end-start))
		for k := start; k < end; k++ {
			setFromArrow(t, s.Index(int(k-start)), a.ListValues(), int(k))
		}
		v.Set(s)
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		for f := 0; f < a.NumField(); f++ {
			fi := fieldByColumn(v.Type(), st.Field(f).Name)
			setFromArrow(t, v.FieldByIndex(fi), a.Field(f), i)
		}
	default:
		t.Fatalf("unexpected Arrow array %T", arr)
	}
}

func TestArrowIPCRoundTrip(t *testing.T) {
	defer func(n int) { arrowBatchRows = n }(arrowBatchRows)
	arrowBatchRows = 700 // several record batches per file
	dir := filepath.Join(t.TempDir(), "arrow")
	w, err := NewArrowIPCWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	const nb = 1500
	if err := sampleStream(w, nb); err != nil {
		t.Fatal(err)
	}
	// Nothing visible before Close.
	for _, name := range []string{"events.arrow", "requests.arrow", "runs.arrow"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("%s visible before Close", name)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := collectSample(t, nb)
	rows := readArrowTable[requestRow](t, filepath.Join(dir, "requests.arrow"), TableRequests)
	got := &Collector{
		Runs:   readArrowTable[Run](t, filepath.Join(dir, "runs.arrow"), TableRuns),
		Events: readArrowTable[Event](t, filepath.Join(dir, "events.arrow"), TableEvents),
	}
	timed := 0
	for i, r := range rows {
		got.Requests = append(got.Requests, r.Request)
		// the derived TIMESTAMP columns: the start and server arrival in
		// the wall clock, null otherwise
		w := &want.Requests[i]
		if (r.StartTime != nil) != (w.StartNs != nil && w.ClockDomain == ClockUnix) || r.StartTime != nil && *r.StartTime != *w.StartNs ||
			(r.ServerArrivalTime != nil) != (w.ServerArrivalNs != nil && w.ServerClockDomain == ClockUnix) {
			t.Errorf("requests.arrow row %d: start_time %v server_arrival_time %v for start_ns %v (%q)", i, r.StartTime, r.ServerArrivalTime, w.StartNs, w.ClockDomain)
		}
		if r.StartTime != nil {
			timed++
		}
	}
	if timed == 0 || timed == len(rows) {
		t.Errorf("start_time set on %d of %d rows; the sample has both clocks", timed, len(rows))
	}
	diffCollectors(t, want, got)
	if files := dirFiles(t, dir); len(files) != 3 {
		t.Fatalf("files: %d", len(files))
	}
	f, err := os.Open(filepath.Join(dir, "events.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRecords() < 3 {
		t.Errorf("events.arrow has %d record batches, want several", r.NumRecords())
	}
}

func TestArrowIPCNoText(t *testing.T) {
	dir := t.TempDir()
	w, err := NewArrowIPCWriterWithOptions(dir, WriteOptions{NoText: true, RowGroupRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := sampleStream(w, 50); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := collectSample(t, 50)
	for i := range want.Events {
		want.Events[i].Text, want.Events[i].ReasoningText = nil, nil
	}
	got := readArrowTable[Event](t, filepath.Join(dir, "events.arrow"), TableEvents)
	diffCollectors(t, &Collector{Events: want.Events}, &Collector{Events: got})
}

func TestArrowIPCAbortAndContract(t *testing.T) {
	dir := t.TempDir()
	w, err := NewArrowIPCWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := sampleStream(w, 10); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if files := dirFiles(t, dir); len(files) != 0 {
		t.Fatalf("files left after Abort: %d", len(files))
	}

	w, err = NewArrowIPCWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Request(&Request{RunID: "a"}, []Event{{RunID: "b"}}); err == nil || !strings.Contains(err.Error(), "event 0") {
		t.Fatalf("mismatched event accepted: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close succeeded after an error")
	}
	if files := dirFiles(t, dir); len(files) != 0 {
		t.Fatalf("files left after failed Close: %d", len(files))
	}
}

// The Arrow and Parquet schemas agree on names, order and nullability.
func TestArrowSchemaMatchesParquet(t *testing.T) {
	for table, rt := range tableRowTypes {
		as := TableArrowSchema(table)
		var names []string
		for _, f := range as.Fields() {
			names = append(names, f.Name)
		}
		pq := parquet.SchemaOf(reflect.New(rt).Elem().Interface())
		var pnames []string
		for _, f := range pq.Fields() {
			pnames = append(pnames, f.Name())
		}
		if fmt.Sprint(names) != fmt.Sprint(pnames) {
			t.Errorf("%s: Arrow columns %v, Parquet columns %v", table, names, pnames)
		}
		for i, f := range as.Fields() {
			if want := pq.Fields()[i].Optional(); f.Nullable != want {
				t.Errorf("%s.%s: Arrow nullable %v, Parquet optional %v", table, f.Name, f.Nullable, want)
			}
		}
	}
	// the nullable strings of the list elements too
	rep := TableArrowSchema(TableRuns)
	i := rep.FieldIndices("reported")[0]
	elem := rep.Field(i).Type.(*arrow.ListType).ElemField().Type.(*arrow.StructType)
	for _, name := range []string{"unit", "text"} {
		if f, _ := elem.FieldByName(name); !f.Nullable {
			t.Errorf("reported[].%s not nullable in Arrow", name)
		}
	}
	if f, _ := elem.FieldByName("metric"); f.Nullable {
		t.Error("reported[].metric nullable in Arrow")
	}
	if ts := TableArrowSchema(TableRequests); ts.Field(ts.FieldIndices("start_time")[0]).Type.String() != "timestamp[ns, tz=UTC]" {
		t.Errorf("start_time: %v", ts.Field(ts.FieldIndices("start_time")[0]).Type)
	}
}

func TestFloat64Record(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	vals := []float64{1.5, math.NaN(), -2, 0}
	rec := Float64Record(mem, "ttft_ms", vals)
	defer rec.Release()
	if rec.NumRows() != 4 || rec.NumCols() != 1 || rec.ColumnName(0) != "ttft_ms" {
		t.Fatalf("shape: %d rows, %d cols, %q", rec.NumRows(), rec.NumCols(), rec.ColumnName(0))
	}
	col := rec.Column(0).(*array.Float64)
	for i, v := range vals {
		got := col.Value(i)
		if got != v && !(math.IsNaN(v) && math.IsNaN(got)) {
			t.Errorf("value %d = %v, want %v", i, got, v)
		}
	}
	if empty := Float64Record(nil, "x", nil); empty.NumRows() != 0 {
		t.Errorf("empty record has %d rows", empty.NumRows())
	} else {
		empty.Release()
	}
}
