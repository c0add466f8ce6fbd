package formats

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// TestArrowSchemaStored: every Parquet file carries its table's Arrow
// schema under ARROW:schema, as an IPC stream holding the schema message,
// base64-encoded, in both layouts.
func TestArrowSchemaStored(t *testing.T) {
	for _, layout := range []string{LayoutFlat, LayoutHive} {
		dir := t.TempDir()
		if layout == LayoutFlat {
			writeSample(t, dir, 5, WriteOptions{})
		} else {
			writeHiveSample(t, dir, 5, WriteOptions{})
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
		if layout == LayoutHive {
			files, _ = filepath.Glob(filepath.Join(dir, "*", "*", "*.parquet"))
		}
		if len(files) < 3 {
			t.Fatalf("%s: %d files", layout, len(files))
		}
		for _, f := range files {
			pf := openPF(t, f)
			table, _ := pf.Lookup(MetaTable)
			v, ok := pf.Lookup(MetaArrowSchema)
			if !ok {
				t.Errorf("%s: no %s", f, MetaArrowSchema)
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatalf("%s: %s is not base64: %v", f, MetaArrowSchema, err)
			}
			r, err := ipc.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s: %s: %v", f, MetaArrowSchema, err)
			}
			if want := TableArrowSchema(table); !r.Schema().Equal(want) {
				t.Errorf("%s: stored Arrow schema\n%v\nwant\n%v", f, r.Schema(), want)
			}
			r.Release()
		}
	}
}

// TestArrowReaderTakesTypes reads the tables with an Arrow-based Parquet
// reader — arrow-rs through parquet-wasm (tools/reader-check/arrow.mjs) —
// and checks that it gives the stored Arrow schema's fields: names, order,
// nullability (the nullable strings nullable, with their nulls; the other
// strings and the lists not) and TIMESTAMP columns as timestamp[ns] in
// UTC. (For these types arrow-rs infers the same from the Parquet schema
// alone, so this checks that the two agree rather than that the key is
// read; TestArrowSchemaStored checks the key itself.)
func TestArrowReaderTakesTypes(t *testing.T) {
	const dir = "../tools/reader-check"
	_, errNode := exec.LookPath("node")
	requireTool(t, errNode == nil, "node")
	_, errMod := os.Stat(filepath.Join(dir, "node_modules/parquet-wasm/package.json"))
	requireTool(t, errMod == nil, "tools/reader-check/node_modules (run: npm ci --prefix tools/reader-check)")

	out := t.TempDir()
	const nb = 40
	writeSample(t, out, nb, WriteOptions{})
	want := collectSample(t, nb)
	var args []string
	for _, table := range []string{TableEvents, TableRequests, TableRuns} {
		args = append(args, filepath.Join(out, table+".parquet"))
	}
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "arrow.mjs")}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("arrow.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Files []struct {
			Rows   int `json:"rows"`
			Fields []struct {
				Name     string `json:"name"`
				Type     string `json:"type"`
				Nullable bool   `json:"nullable"`
				Nulls    int64  `json:"nulls"`
			} `json:"fields"`
		} `json:"files"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	nulls := []map[string]int64{nullCounts(want.Events), nullCounts(asRequestRows(want.Requests)), nullCounts(want.Runs)}
	rows := []int{len(want.Events), len(want.Requests), len(want.Runs)}
	for i, table := range []string{TableEvents, TableRequests, TableRuns} {
		f := got.Files[i]
		schema := TableArrowSchema(table)
		if f.Rows != rows[i] || len(f.Fields) != schema.NumFields() {
			t.Fatalf("%s: %d rows, %d fields; want %d, %d", table, f.Rows, len(f.Fields), rows[i], schema.NumFields())
		}
		for j, g := range f.Fields {
			w := schema.Field(j)
			if g.Name != w.Name || g.Nullable != w.Nullable || g.Nulls != nulls[i][w.Name] {
				t.Errorf("%s.%s: name %s nullable %v nulls %d; want nullable %v nulls %d", table, w.Name, g.Name, g.Nullable, g.Nulls, w.Nullable, nulls[i][w.Name])
			}
			if w.Type == arrowTimestamp && g.Type != "Timestamp<NANOSECOND, UTC>" {
				t.Errorf("%s.%s: Arrow type %s, want Timestamp<NANOSECOND, UTC>", table, w.Name, g.Type)
			}
		}
	}
}
