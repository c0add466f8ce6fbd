package formats

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// docColumn is one row of a table section of SCHEMA.md.
type docColumn struct {
	ParquetType, DuckDBType, Unit, Nullable, Meaning string
	Line                                             int
}

var tableHeading = regexp.MustCompile("^## Table `([a-z_]+)`\\s*$")

// parseSchemaDoc reads SCHEMA.md: for each "## Table `name`" section, the
// rows of its column table, keyed by column name (nested list fields as
// "list[].field").
func parseSchemaDoc(t testing.TB) map[string]map[string]docColumn {
	t.Helper()
	f, err := os.Open("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc := map[string]map[string]docColumn{}
	table := ""
	var header []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			table, header = "", nil
			if m := tableHeading.FindStringSubmatch(line); m != nil {
				table = m[1]
				if doc[table] != nil {
					t.Fatalf("SCHEMA.md:%d: second section for table %s", n, table)
				}
				doc[table] = map[string]docColumn{}
			}
			continue
		}
		if table == "" || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil:
			header = cells
			if want := []string{"column", "Parquet type", "DuckDB type", "unit", "nullable", "meaning"}; !slices.Equal(header, want) {
				t.Fatalf("SCHEMA.md:%d: table header %q, want %q", n, header, want)
			}
		case strings.HasPrefix(cells[0], "---"):
		default:
			if len(cells) != len(header) {
				t.Fatalf("SCHEMA.md:%d: %d cells, want %d", n, len(cells), len(header))
			}
			name := strings.Trim(cells[0], "`")
			if _, dup := doc[table][name]; dup {
				t.Fatalf("SCHEMA.md:%d: column %s documented twice", n, name)
			}
			doc[table][name] = docColumn{cells[1], cells[2], cells[3], cells[4], cells[5], n}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return doc
}

// parquetTypeString renders a column's type in SCHEMA.md's notation:
// "PHYSICAL (LOGICAL)" for leaves, "LIST<element>" for lists, with
// "STRUCT" for a group element.
func parquetTypeString(n parquet.Node) string {
	if n.Leaf() {
		s := n.Type().Kind().String()
		if lt := n.Type().LogicalType(); lt != nil && lt.String() != "" {
			s += " (" + lt.String() + ")"
		}
		return s
	}
	if lt := n.Type().LogicalType(); lt != nil && lt.String() == "LIST" {
		elem := n.Fields()[0].Fields()[0]
		if elem.Leaf() {
			return "LIST<" + parquetTypeString(elem) + ">"
		}
		return "LIST<STRUCT>"
	}
	return "STRUCT"
}

// codeColumn is a column as the code defines it and parquet-go writes it.
type codeColumn struct {
	ParquetType string
	Nullable    bool
}

// writtenColumns returns the columns of a table file as parquet-go wrote
// it, read back from the file's footer: top-level columns and, for lists of
// structs, "list[].field".
func writtenColumns(t testing.TB, path string) (map[string]codeColumn, []string) {
	t.Helper()
	pf := openPF(t, path)
	cols := map[string]codeColumn{}
	var order []string
	add := func(name string, n parquet.Node) {
		cols[name] = codeColumn{parquetTypeString(n), n.Optional()}
		order = append(order, name)
	}
	for _, f := range pf.Schema().Fields() {
		add(f.Name(), f)
		if parquetTypeString(f) == "LIST<STRUCT>" {
			for _, sub := range f.Fields()[0].Fields()[0].Fields() {
				add(f.Name()+"[]."+sub.Name(), sub)
			}
		}
	}
	return cols, order
}

// tagColumns lists a row type's columns from its struct tags, in the same
// naming as writtenColumns.
func tagColumns(t reflect.Type) []string {
	var names []string
	for _, f := range columnFields(t) {
		name := ColumnName(f)
		names = append(names, name)
		if ft := f.Type; ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			for _, sub := range tagColumns(ft.Elem()) {
				names = append(names, name+"[]."+sub)
			}
		}
	}
	return names
}

// tableTypes are the tables' row types as the files hold them.
var tableTypes = tableRowTypes

// TestSchemaDocumented keeps SCHEMA.md in step with the code: every column
// of every table (from the struct tags, as parquet-go writes it) is
// documented in its table's section with the Parquet type and nullability
// read back from a written file, a meaning, and the unit its name implies;
// and every documented column exists.
func TestSchemaDocumented(t *testing.T) {
	doc := parseSchemaDoc(t)
	dir := t.TempDir()
	writeSample(t, dir, 3, WriteOptions{})
	for table, rt := range tableTypes {
		cols, order := writtenColumns(t, filepath.Join(dir, table+".parquet"))
		if tags := tagColumns(rt); !slices.Equal(tags, order) {
			t.Errorf("%s: struct tag columns %v\nbut the file has %v", table, tags, order)
		}
		d := doc[table]
		if d == nil {
			t.Errorf("SCHEMA.md: no \"## Table `%s`\" section", table)
			continue
		}
		for _, name := range order {
			c := cols[name]
			dc, ok := d[name]
			if !ok {
				t.Errorf("SCHEMA.md: column %s.%s (%s) not documented", table, name, c.ParquetType)
				continue
			}
			if dc.ParquetType != c.ParquetType {
				t.Errorf("SCHEMA.md:%d: %s.%s: Parquet type %q, parquet-go writes %q", dc.Line, table, name, dc.ParquetType, c.ParquetType)
			}
			if want := map[bool]string{true: "yes", false: "no"}[c.Nullable]; dc.Nullable != want {
				t.Errorf("SCHEMA.md:%d: %s.%s: nullable %q, want %q", dc.Line, table, name, dc.Nullable, want)
			}
			if dc.Meaning == "" || dc.DuckDBType == "" || dc.Unit == "" {
				t.Errorf("SCHEMA.md:%d: %s.%s: empty cell", dc.Line, table, name)
			}
			switch {
			case strings.HasSuffix(name, "_ns") && dc.Unit != "ns":
				t.Errorf("SCHEMA.md:%d: %s.%s: unit %q, want ns", dc.Line, table, name, dc.Unit)
			case strings.HasSuffix(name, "_ms") && dc.Unit != "ms":
				t.Errorf("SCHEMA.md:%d: %s.%s: unit %q, want ms", dc.Line, table, name, dc.Unit)
			}
		}
		for name, dc := range d {
			if _, ok := cols[name]; !ok {
				t.Errorf("SCHEMA.md:%d: documented column %s.%s does not exist in the code", dc.Line, table, name)
			}
		}
	}
	for table := range doc {
		if tableTypes[table] == nil {
			t.Errorf("SCHEMA.md: section for unknown table %q", table)
		}
	}
}

// TestSchemaTypes pins the column types notebooks rely on: *_ns times are
// plain INT64 (no timestamp logical type), the derived *_time columns
// TIMESTAMP (UTC, ns), strings are UTF-8 STRING, lists are LIST, and
// exactly the pointer fields and the optional strings are nullable.
func TestSchemaTypes(t *testing.T) {
	dir := t.TempDir()
	writeSample(t, dir, 3, WriteOptions{})
	for table, rt := range tableTypes {
		cols, _ := writtenColumns(t, filepath.Join(dir, table+".parquet"))
		for _, f := range columnFields(rt) {
			name := ColumnName(f)
			c := cols[name]
			if c.Nullable != (f.Type.Kind() == reflect.Pointer || nullableString(f)) {
				t.Errorf("%s.%s: nullable=%v for Go type %v", table, name, c.Nullable, f.Type)
			}
			if isTimestamp(f) {
				if want := "INT64 (TIMESTAMP(isAdjustedToUTC=true,unit=NANOS))"; c.ParquetType != want || !strings.HasSuffix(name, "_time") {
					t.Errorf("%s.%s: %s, want %s named *_time", table, name, c.ParquetType, want)
				}
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			want := map[reflect.Kind]string{
				reflect.String:  "BYTE_ARRAY (STRING)",
				reflect.Int64:   "INT64 (INT(64,true))",
				reflect.Int32:   "INT32 (INT(32,true))",
				reflect.Float64: "DOUBLE",
				reflect.Bool:    "BOOLEAN",
			}[ft.Kind()]
			if ft.Kind() == reflect.Slice {
				want = "LIST<STRUCT>"
				if ft.Elem().Kind() == reflect.String {
					want = "LIST<BYTE_ARRAY (STRING)>"
				}
			}
			if c.ParquetType != want {
				t.Errorf("%s.%s: Parquet type %s, want %s", table, name, c.ParquetType, want)
			}
			if strings.HasSuffix(name, "_ns") && c.ParquetType != "INT64 (INT(64,true))" {
				t.Errorf("%s.%s: time column is %s, want plain INT64", table, name, c.ParquetType)
			}
		}
	}
}

// TestIsServerRow: a row with a server kind and no client timing is a
// server row; a client row joined to a server record (server kind set,
// client timing kept) and a plain client row are not.
func TestIsServerRow(t *testing.T) {
	start := int64(1)
	cases := []struct {
		r    Request
		want bool
	}{
		{Request{ServerKind: "vllm.otlp_span"}, true},
		{Request{ServerKind: "vllm.otlp_span", StartNs: &start}, false},
		{Request{ServerKind: "tgi.success", MessageCount: 3}, false},
		{Request{}, false},
	}
	for i, c := range cases {
		if got := c.r.IsServerRow(); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}
