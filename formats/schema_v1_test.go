package formats

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSchemaV1: tables written by schema version 1 (formats/testdata/
// schema-v1: non-nullable strings holding "", no TIMESTAMP columns, no
// ARROW:schema) read as that version's reader read them, line for line.
func TestReadSchemaV1(t *testing.T) {
	dir := filepath.Join("testdata", "schema-v1")
	for _, table := range []string{TableEvents, TableRequests, TableRuns} {
		pf := openPF(t, filepath.Join(dir, table+".parquet"))
		if v, _ := pf.Lookup(MetaSchemaVersion); v != "1" {
			t.Fatalf("%s: %s = %q; the fixture must stay version 1", table, MetaSchemaVersion, v)
		}
		if _, ok := pf.Lookup(MetaArrowSchema); ok {
			t.Errorf("%s: a version-1 file with %s", table, MetaArrowSchema)
		}
	}
	if col, ok := openPF(t, filepath.Join(dir, "requests.parquet")).Schema().Lookup("trace_id"); !ok || col.Node.Optional() {
		t.Fatal("requests.trace_id of the fixture is not the non-nullable string of version 1")
	}
	want, err := os.ReadFile(filepath.Join(dir, "read-by-v1.dump"))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	d := NewDumper(&got)
	if err := ReadTables(dir, d); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
	// Every row type, nullable strings included, as the version-1 reader
	// gave them: a report of the version-1 run must not change.
	if !bytes.Contains(want, []byte(`clock_domain="unix"`)) || !bytes.Contains(want, []byte("load=[{")) {
		t.Fatal("the fixture lost its wall-clock run or its load samples")
	}
}

// TestTimestampColumnShape: the shape check covers the derived TIMESTAMP
// columns too: start_time must be INT64 (annotated TIMESTAMP of any unit,
// or not annotated), not another type.
func TestTimestampColumnShape(t *testing.T) {
	type strTime struct {
		Request
		StartTime string `parquet:"start_time"`
	}
	type microTime struct {
		Request
		StartTime *int64 `parquet:"start_time,optional,timestamp(microsecond)"`
	}
	type intTime struct {
		Request
		StartTime int32 `parquet:"start_time"`
	}
	r := Request{RunID: "a", Status: StatusOK}
	dir := t.TempDir()
	writeRaw(t, dir, "str.parquet", []strTime{{r, "2024-01-01"}}, nil)
	writeRaw(t, dir, "int32.parquet", []intTime{{r, 5}}, nil)
	us := int64(5)
	writeRaw(t, dir, "micro.parquet", []microTime{{r, &us}}, nil)
	for name, want := range map[string]string{
		"str.parquet":   "column start_time is BYTE_ARRAY; tokentrace writes a TIMESTAMP (INT64) there",
		"int32.parquet": "column start_time is INT32; tokentrace writes a TIMESTAMP (INT64) there",
		"micro.parquet": "",
	} {
		pr, err := openParquetFile[Request](filepath.Join(dir, name), TableRequests, false)
		if err == nil {
			pr.close()
		}
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}
