package formats

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
)

// CSVWriter is a Sink that streams rows into events.csv, requests.csv and
// runs.csv in one directory: RFC 4180 files (encoding/csv: comma-separated,
// fields quoted when they hold a comma, quote, CR or LF, quotes doubled,
// lines ended by \n), UTF-8, one header line of column names, then one line
// per row, columns in the order and with the names of the Parquet tables
// (SCHEMA.md). Create it with NewCSVWriter; finish with Close or Abort.
//
// Values: strings as they are; integers in decimal; DOUBLE in the shortest
// decimal that reads back to the same float64 (strconv 'g', -1), with
// "inf", "-inf" and "nan" for the non-finite values; booleans "true" and
// "false"; null as an empty field (so a nullable string column cannot tell
// null from ""). The list columns of runs (source_files, notes, reported)
// are one field each holding a JSON array — of strings, or of objects keyed
// by the list's field names (source_files[].path, …), with null for a null
// field and the strings "inf", "-inf", "nan" for non-finite numbers.
//
// Files are written under hidden temporary names and renamed into place by
// Close when everything succeeded, replacing previous files; the writer
// checks the Sink contract as ParquetWriter does.
type CSVWriter struct {
	dir    string
	noText bool
	check  sinkChecker
	events *csvTable
	reqs   *csvTable
	runs   *csvTable
	err    error
	closed bool
}

// NewCSVWriter returns a CSVWriter writing into dir, which it creates if
// needed. opt.NoText writes the events' text columns empty; the other
// options do not apply to CSV.
func NewCSVWriter(dir string, opt WriteOptions) (*CSVWriter, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("formats: %w", err)
	}
	w := &CSVWriter{dir: dir, noText: opt.NoText}
	var err error
	w.events, err = newCSVTable(dir, TableEvents, reflect.TypeFor[Event]())
	if err == nil {
		w.reqs, err = newCSVTable(dir, TableRequests, reflect.TypeFor[Request]())
	}
	if err == nil {
		w.runs, err = newCSVTable(dir, TableRuns, reflect.TypeFor[Run]())
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// Request implements Sink: one line of requests.csv, one line of
// events.csv per event.
func (w *CSVWriter) Request(r *Request, events []Event) error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.check.request(r, events); err != nil {
		return w.fail(err)
	}
	w.reqs.add(reflect.ValueOf(r).Elem())
	for i := range events {
		e := &events[i]
		if w.noText && (e.Text != nil || e.ReasoningText != nil) {
			c := *e
			c.Text, c.ReasoningText = nil, nil
			e = &c
		}
		w.events.add(reflect.ValueOf(e).Elem())
	}
	if err := cmpErr(w.reqs.err, w.events.err); err != nil {
		return w.fail(err)
	}
	return nil
}

// Run implements Sink: one line of runs.csv (SchemaVersion and
// TokentraceVersion filled when zero).
func (w *CSVWriter) Run(r *Run) error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.check.run(r); err != nil {
		return w.fail(err)
	}
	row := stampRun(r)
	w.runs.add(reflect.ValueOf(&row).Elem())
	if w.runs.err != nil {
		return w.fail(w.runs.err)
	}
	return nil
}

// Close flushes and syncs the three files and renames them into place; on
// any error it removes them and returns it (see ParquetWriter.Close).
func (w *CSVWriter) Close() error {
	if w.closed {
		if w.err == errClosed {
			return nil
		}
		return w.err
	}
	err := w.err
	if err == nil {
		err = w.check.finish()
	}
	if err == nil {
		err = cmpErr(w.events.finish(), w.reqs.finish(), w.runs.finish())
	}
	if err == nil {
		err = commit(w.dir, []*tempFile{&w.events.file, &w.reqs.file, &w.runs.file})
	}
	if err != nil {
		w.fail(err)
		w.Abort()
		return err
	}
	w.closed = true
	return nil
}

// Abort removes the temporary files; safe at any time, a no-op after Close.
func (w *CSVWriter) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	if w.err == nil {
		w.err = errClosed
	}
	for _, t := range []*csvTable{w.events, w.reqs, w.runs} {
		if t != nil {
			t.file.abort()
		}
	}
}

func (w *CSVWriter) usable() error {
	if w.closed && w.err == nil {
		return errClosed
	}
	return w.err
}

func (w *CSVWriter) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

type csvTable struct {
	file   tempFile
	buf    *bufio.Writer
	w      *csv.Writer
	fields []int // struct field indexes of the columns
	record []string
	rows   int64
	err    error
}

func newCSVTable(dir, table string, t reflect.Type) (*csvTable, error) {
	c := &csvTable{}
	var header []string
	for i := 0; i < t.NumField(); i++ {
		if name := ColumnName(t.Field(i)); name != "" {
			header = append(header, name)
			c.fields = append(c.fields, i)
		}
	}
	if err := c.file.create(dir, table+".csv"); err != nil {
		return nil, err
	}
	c.buf = bufio.NewWriterSize(c.file.f, 1<<20)
	c.w = csv.NewWriter(c.buf)
	c.record = make([]string, len(header))
	if err := c.w.Write(header); err != nil {
		c.file.abort()
		return nil, c.file.errorf("%w", err)
	}
	return c, nil
}

func (c *csvTable) add(v reflect.Value) {
	if c.err != nil {
		return
	}
	for i, f := range c.fields {
		s, err := csvField(v.Field(f))
		if err != nil {
			c.err = c.file.errorf("row %d: %w", c.rows, err)
			return
		}
		c.record[i] = s
	}
	if err := c.w.Write(c.record); err != nil {
		c.err = c.file.errorf("row %d: %w", c.rows, err)
	}
	c.rows++
}

func (c *csvTable) finish() error {
	if c.err != nil {
		return c.err
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		c.err = c.file.errorf("%w", err)
		return c.err
	}
	if err := c.buf.Flush(); err != nil {
		c.err = c.file.errorf("%w", err)
		return c.err
	}
	c.err = c.file.finish()
	return c.err
}

// csvField formats one column value (see CSVWriter).
func csvField(v reflect.Value) (string, error) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "", nil
		}
		return csvField(v.Elem())
	case reflect.String:
		return v.String(), nil
	case reflect.Int64, reflect.Int32:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Float64:
		return formatFloat(v.Float()), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Slice:
		b, err := marshalJSON(jsonValue(v))
		return string(b), err
	}
	return "", fmt.Errorf("no CSV form for %v", v.Type())
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// jsonValue converts a list value to what encoding/json marshals as the
// CSV cell's JSON: structs become ordered objects keyed by column names.
func jsonValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return jsonValue(v.Elem())
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonValue(v.Index(i))
		}
		return out
	case reflect.Struct:
		var obj orderedObject
		for i := 0; i < v.NumField(); i++ {
			if name := ColumnName(v.Type().Field(i)); name != "" {
				obj = append(obj, kv{name, jsonValue(v.Field(i))})
			}
		}
		return obj
	case reflect.Float64:
		if f := v.Float(); math.IsInf(f, 0) || math.IsNaN(f) {
			return formatFloat(f)
		}
		return v.Float()
	}
	return v.Interface()
}

type kv struct {
	k string
	v any
}

// orderedObject marshals as a JSON object with its keys in order.
type orderedObject []kv

func (o orderedObject) MarshalJSON() ([]byte, error) {
	out := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			out = append(out, ',')
		}
		k, _ := marshalJSON(f.k)
		out = append(out, k...)
		out = append(out, ':')
		v, err := marshalJSON(f.v)
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

// marshalJSON is json.Marshal without HTML escaping (<, >, & kept).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
