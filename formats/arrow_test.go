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
	var zero T
	if want := ArrowSchema(zero); !r.Schema().Equal(want) {
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
			if fi < 0 {
				t.Fatalf("%s: unknown column %q", path, rec.ColumnName(c))
			}
			for j := 0; j < int(rec.NumRows()); j++ {
				setFromArrow(t, reflect.ValueOf(&rows[base+j]).Elem().Field(fi), rec.Column(c), j)
			}
		}
	}
	return rows
}

func fieldByColumn(t reflect.Type, name string) int {
	for i := 0; i < t.NumField(); i++ {
		if ColumnName(t.Field(i)) == name {
			return i
		}
	}
	return -1
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
		t.Fatalf("null in non-nullable %v column", arr.DataType())
	}
	switch a := arr.(type) {
	case *array.String:
		v.SetString(a.Value(i))
	case *array.Int64:
		v.SetInt(a.Value(i))
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
			setFromArrow(t, v.Field(fi), a.Field(f), i)
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
	got := &Collector{
		Runs:     readArrowTable[Run](t, filepath.Join(dir, "runs.arrow"), TableRuns),
		Requests: readArrowTable[Request](t, filepath.Join(dir, "requests.arrow"), TableRequests),
		Events:   readArrowTable[Event](t, filepath.Join(dir, "events.arrow"), TableEvents),
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
	for _, row := range []any{Run{}, Request{}, Event{}} {
		as := ArrowSchema(row)
		var names []string
		for _, f := range as.Fields() {
			names = append(names, f.Name)
		}
		var pnames []string
		rt := reflect.TypeOf(row)
		for i := 0; i < rt.NumField(); i++ {
			if n := ColumnName(rt.Field(i)); n != "" {
				pnames = append(pnames, n)
			}
		}
		if fmt.Sprint(names) != fmt.Sprint(pnames) {
			t.Errorf("%T: Arrow columns %v, Parquet columns %v", row, names, pnames)
		}
		for _, f := range as.Fields() {
			sf := rt.Field(fieldByColumn(rt, f.Name))
			if want := sf.Type.Kind() == reflect.Pointer; f.Nullable != want {
				t.Errorf("%T.%s: Arrow nullable %v", row, f.Name, f.Nullable)
			}
		}
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
