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
	"time"
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
// "false"; TIMESTAMP columns (requests.start_time) in RFC 3339, UTC, with up
// to nine fraction digits; null as an empty field (so a nullable string
// column cannot tell null from ""; in the JSON arrays a nullable string's ""
// is null). The list columns of runs (source_files, notes, reported, load, series)
// are one field each holding a JSON array — of strings, or of objects keyed
// by the list's field names (source_files[].path, …), with null for a null
// field and the strings "inf", "-inf", "nan" for non-finite numbers.
//
// Cells are raw: a text value that starts with = (a run id or error text
// from an input) is written as it is, which a spreadsheet would evaluate;
// opt.CSVSafe prefixes such cells with ' (SpreadsheetSafe) for files a
// person opens.
//
// Files are written under hidden temporary names and renamed into place by
// Close when everything succeeded, replacing previous files; the writer
// checks the Sink contract as ParquetWriter does.
type CSVWriter struct {
	tableSink
}

// NewCSVWriter returns a CSVWriter writing into dir, which it creates if
// needed. opt.NoText writes the events' text columns empty, opt.CSVSafe
// neutralises formula-like text cells; the other options do not apply to
// CSV.
func NewCSVWriter(dir string, opt WriteOptions) (*CSVWriter, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("formats: %w", err)
	}
	ev, err := newCSVTable(dir, TableEvents, reflect.TypeFor[Event](), opt.CSVSafe)
	if err != nil {
		return nil, err
	}
	rq, err := newCSVTable(dir, TableRequests, reflect.TypeFor[requestRow](), opt.CSVSafe)
	if err != nil {
		ev.abort()
		return nil, err
	}
	rn, err := newCSVTable(dir, TableRuns, reflect.TypeFor[Run](), opt.CSVSafe)
	if err != nil {
		ev.abort()
		rq.abort()
		return nil, err
	}
	w := &CSVWriter{}
	w.noText, w.spool.dir = opt.NoText, dir
	w.events, w.reqs, w.runs = csvRows[Event]{ev}, requestRows{csvRows[requestRow]{rq}}, csvRows[Run]{rn}
	w.commit = func() error { return commit(dir, []*tempFile{&ev.file, &rq.file, &rn.file}) }
	return w, nil
}

type csvTable struct {
	file   tempFile
	buf    *bufio.Writer
	w      *csv.Writer
	fields []csvColumn
	record []string
	rows   int64
	err    error
	safe   bool // SpreadsheetSafe on text cells
}

func newCSVTable(dir, table string, t reflect.Type, safe bool) (*csvTable, error) {
	c := &csvTable{safe: safe}
	var header []string
	for _, f := range columnFields(t) {
		header = append(header, ColumnName(f))
		c.fields = append(c.fields, csvColumn{f.Index, isTimestamp(f)})
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

// csvColumn is where a column's value is in the row struct, and whether
// it is a TIMESTAMP (written as RFC 3339 in UTC with nanoseconds).
type csvColumn struct {
	index     []int
	timestamp bool
}

func (c *csvTable) add(v reflect.Value) {
	if c.err != nil {
		return
	}
	for i, f := range c.fields {
		fv := v.FieldByIndex(f.index)
		if f.timestamp {
			c.record[i] = ""
			if !fv.IsNil() {
				c.record[i] = time.Unix(0, fv.Elem().Int()).UTC().Format(time.RFC3339Nano)
			}
			continue
		}
		s, err := csvField(fv)
		if err != nil {
			c.err = c.file.errorf("row %d: %w", c.rows, err)
			return
		}
		if c.safe && (fv.Kind() == reflect.String || fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.String) {
			s = SpreadsheetSafe(s)
		}
		c.record[i] = s
	}
	if err := c.w.Write(c.record); err != nil {
		c.err = c.file.errorf("row %d: %w", c.rows, err)
	}
	c.rows++
}

func (c *csvTable) abort() { c.file.abort() }

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
		for _, f := range columnFields(v.Type()) {
			fv := v.FieldByIndex(f.Index)
			if nullableString(f) && fv.String() == "" {
				obj = append(obj, kv{ColumnName(f), nil})
				continue
			}
			obj = append(obj, kv{ColumnName(f), jsonValue(fv)})
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
