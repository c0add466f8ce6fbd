package formats

import (
	"bufio"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// DumpTextLimit is the number of characters of an event's generated text
// the dump shows; longer texts are cut and their full length given.
const DumpTextLimit = 48

// DumpFieldLimit is the same limit for every other string (notes, error
// texts, configs), long enough to read a note whole.
const DumpFieldLimit = 400

// NewDumper returns a Sink that writes every row as one readable line: the
// golden-file format of the importer tests. Null fields are left out; texts
// are quoted Go-style and cut at DumpTextLimit characters. Call Flush when
// done.
//
//	request run=r key=0 status=ok start_ns=… first_token_offset_ns=…
//	  event index=0 read_index=0 offset_ns=… kind=role has_choices=true bytes=…
//	run run_id=r tool=genai-perf …
func NewDumper(w io.Writer) *Dumper { return &Dumper{w: bufio.NewWriter(w)} }

// Dumper is the Sink returned by NewDumper.
type Dumper struct {
	w   *bufio.Writer
	err error
}

// Batch implements Sink.
func (d *Dumper) Batch(b *Batch) error { return b.EachRow(d.Request) }

// Request writes one request row and its events.
func (d *Dumper) Request(r *Request, ev []Event) error {
	d.line("request", r, DumpFieldLimit, "run_id")
	for i := range ev {
		d.line("  event", &ev[i], DumpTextLimit, "run_id", "request_key")
	}
	return d.err
}

// Run implements Sink.
func (d *Dumper) Run(r *Run) error {
	d.line("run", r, DumpFieldLimit)
	return d.err
}

// Flush writes buffered lines.
func (d *Dumper) Flush() error {
	if d.err != nil {
		return d.err
	}
	return d.w.Flush()
}

func (d *Dumper) line(prefix string, row any, limit int, skip ...string) {
	if d.err != nil {
		return
	}
	var b strings.Builder
	b.WriteString(prefix)
	appendFields(&b, reflect.ValueOf(row).Elem(), limit, skip)
	b.WriteByte('\n')
	_, d.err = d.w.WriteString(b.String())
}

func appendFields(b *strings.Builder, v reflect.Value, limit int, skip []string) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := ColumnName(t.Field(i))
		if name == "" || slices.Contains(skip, name) {
			continue
		}
		s, ok := dumpValue(v.Field(i), limit)
		if !ok {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(s)
	}
}

// dumpValue renders one field; ok is false for null or empty values (a
// non-null pointer is always shown, even to "" or false).
func dumpValue(v reflect.Value, limit int) (string, bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "", false
		}
		switch e := v.Elem(); e.Kind() {
		case reflect.String:
			return quoteCut(e.String(), limit), true
		case reflect.Bool:
			return strconv.FormatBool(e.Bool()), true
		}
		s, _ := dumpValue(v.Elem(), limit)
		return s, true
	case reflect.String:
		if v.String() == "" {
			return "", false
		}
		return quoteCut(v.String(), limit), true
	case reflect.Bool:
		if !v.Bool() {
			return "", false
		}
		return "true", true
	case reflect.Int, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), true
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), true
	case reflect.Slice:
		if v.Len() == 0 {
			return "", false
		}
		parts := make([]string, v.Len())
		for i := range parts {
			e := v.Index(i)
			if e.Kind() == reflect.Struct {
				var b strings.Builder
				appendFields(&b, e, limit, nil)
				parts[i] = "{" + strings.TrimSpace(b.String()) + "}"
			} else {
				parts[i], _ = dumpValue(e, limit)
			}
		}
		return "[" + strings.Join(parts, " ") + "]", true
	}
	return fmt.Sprint(v.Interface()), true
}

func quoteCut(s string, limit int) string {
	c := CutRunes(s, limit)
	if c == s {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.TrimSuffix(c, "…")) + "…(" + strconv.Itoa(len(s)) + "B)"
}

// ColumnName returns the table column name of a struct field (its parquet
// tag name), or "" for fields that are not columns.
func ColumnName(f reflect.StructField) string {
	tag := f.Tag.Get("parquet")
	if tag == "" || tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	return name
}
