package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapePartitionValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain-run_1.2", "plain-run_1.2"},
		{"a/b", "a%2Fb"},
		{"x=1:y", "x%3D1%3Ay"},
		{"100%", "100%25"},
		{`q"'*?\#`, "q%22%27%2A%3F%5C%23"},
		{"{[]}^", "%7B%5B%5D}%5E"}, // '}' is not in Hive's set
		{"tab\there\n", "tab%09here%0A"},
		{"\x7f", "%7F"},
		{"é 😀 space", "é 😀 space"}, // UTF-8 and spaces kept (as Hive on Linux)
		{"..", ".."},
		{"run#2", "run%232"},
	} {
		if got := EscapePartitionValue(tc.in); got != tc.want {
			t.Errorf("EscapePartitionValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back := UnescapePartitionValue(tc.want); back != tc.in {
			t.Errorf("UnescapePartitionValue(%q) = %q, want %q", tc.want, back, tc.in)
		}
	}
	// Unescaping as Spark does: lower-case hex accepted, a stray % kept.
	for in, want := range map[string]string{"a%2fb": "a/b", "50%": "50%", "%zz": "%zz", "%4": "%4", "%41%": "A%"} {
		if got := UnescapePartitionValue(in); got != want {
			t.Errorf("UnescapePartitionValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzEscapePartitionValue(f *testing.F) {
	for _, s := range []string{"a/b", "%", "x=1", "é", "\x00\x1f", "%2F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EscapePartitionValue(s)
		if strings.ContainsAny(e, "/\\:=\x00") {
			t.Fatalf("escaped %q still holds a path-unsafe byte: %q", s, e)
		}
		if back := UnescapePartitionValue(e); back != s {
			t.Fatalf("round trip %q → %q → %q", s, e, back)
		}
	})
}

// renameRuns is a Sink giving the sample's runs path-unsafe ids.
type renameRuns struct {
	s   Sink
	ids map[string]string
}

func (r renameRuns) Request(q *Request, ev []Event) error {
	c := *q
	c.RunID = r.ids[q.RunID]
	evs := slices.Clone(ev)
	for i := range evs {
		evs[i].RunID = c.RunID
	}
	return SendRow(r.s, &c, evs)
}

func (r renameRuns) Run(run *Run) error {
	c := *run
	c.RunID = r.ids[run.RunID]
	return r.s.Run(&c)
}

var unsafeIDs = map[string]string{"a": "gp/run a:1=x%", "b": "b é #2", "c": "c", "d": ".."}

func writeHiveSample(t *testing.T, dir string, nb int, opt WriteOptions) *Collector {
	t.Helper()
	opt.Layout = LayoutHive
	w, err := NewParquetWriter(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := sampleStream(renameRuns{w, unsafeIDs}, nb); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var want Collector
	if err := sampleStream(renameRuns{&want, unsafeIDs}, nb); err != nil {
		t.Fatal(err)
	}
	fillCollected(&want)
	return &want
}

// datasetFiles lists dir's files relative to dir, sorted.
func datasetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func TestHiveRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  WriteOptions
	}{
		{"default", WriteOptions{}},
		// Several part files per partition and row groups per file.
		{"small-parts", WriteOptions{PartRows: 400, RowGroupRows: 100, Compression: CompressionSnappy}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			const nb = 1500
			want := writeHiveSample(t, dir, nb, tc.opt)
			got := readAll(t, dir)
			diffCollectors(t, want, got)
			if l, err := DetectLayout(dir); err != nil || l != LayoutHive || !IsTableDir(dir) {
				t.Errorf("DetectLayout = %q, %v; IsTableDir %v", l, err, IsTableDir(dir))
			}
			runs, err := ReadRuns(dir)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.RunID)
			}
			// Run-row order of the write, not directory order.
			if w := []string{"gp/run a:1=x%", "c", "..", "b é #2"}; !slices.Equal(ids, w) {
				t.Errorf("ReadRuns order %q, want %q", ids, w)
			}
		})
	}
}

func TestHiveLayoutFiles(t *testing.T) {
	dir := t.TempDir()
	// Run b: 1500 requests → parts of 400, 400, 400, 300.
	writeHiveSample(t, dir, 1500, WriteOptions{PartRows: 400})
	files := datasetFiles(t, dir)
	has := func(f string) bool { return slices.Contains(files, filepath.FromSlash(f)) }
	for _, f := range []string{
		"requests/run_id=gp%2Frun a%3A1%3Dx%25/part-00000.parquet",
		"requests/run_id=b é %232/part-00000.parquet",
		"requests/run_id=b é %232/part-00003.parquet",
		"requests/run_id=../part-00000.parquet",
		"runs/run_id=c/part-00000.parquet",
		"runs/run_id=../part-00000.parquet",
		"events/run_id=gp%2Frun a%3A1%3Dx%25/part-00000.parquet",
	} {
		if !has(f) {
			t.Errorf("missing %s; files: %q", f, files)
		}
	}
	for _, f := range []string{
		"requests/run_id=b é %232/part-00004.parquet", // 1500 rows fill 4 parts
		"requests/run_id=c/part-00000.parquet",        // run c has no requests
		"events/run_id=../part-00000.parquet",         // run d has no events
		"events.parquet", "runs.parquet",
	} {
		if has(f) {
			t.Errorf("unexpected %s", f)
		}
	}
	for _, f := range files {
		if strings.Contains(f, "tmp") {
			t.Errorf("temporary file left: %s", f)
		}
	}
	// Every file carries the import's metadata and its partition position.
	ids := map[string]bool{}
	for _, f := range files {
		pf := openPF(t, filepath.Join(dir, f))
		id, _ := pf.Lookup(MetaImportID)
		ids[id] = true
		table, _ := pf.Lookup(MetaTable)
		if !strings.HasPrefix(f, table+string(filepath.Separator)) {
			t.Errorf("%s: %s = %q", f, MetaTable, table)
		}
		seq, ok := pf.Lookup(MetaPartitionSeq)
		wantSeq := map[string]string{"requests/run_id=gp%2Frun a%3A1%3Dx%25": "0", "requests/run_id=b é %232": "1",
			"runs/run_id=c": "1", "runs/run_id=..": "2"}[filepath.ToSlash(filepath.Dir(f))]
		if !ok || (wantSeq != "" && seq != wantSeq) {
			t.Errorf("%s: %s = %q, want %q", f, MetaPartitionSeq, seq, wantSeq)
		}
	}
	if len(ids) != 1 {
		t.Errorf("import ids %v, want one", ids)
	}
}

func TestHiveEmptyTables(t *testing.T) {
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{Layout: LayoutHive})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(&Run{RunID: "only"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The empty tables' schema files are in the run's partition, not at
	// the dataset's root: a glob over several writes' datasets then finds
	// only run_id partitions.
	files := datasetFiles(t, dir)
	if w := []string{"events/run_id=only/part-00000.parquet", "requests/run_id=only/part-00000.parquet", "runs/run_id=only/part-00000.parquet"}; !slices.Equal(files, w) {
		t.Fatalf("files %q, want %q", files, w)
	}
	for _, f := range files[:2] {
		pf := openPF(t, filepath.Join(dir, f))
		if pf.NumRows() != 0 || len(pf.Schema().Fields()) < 10 {
			t.Errorf("%s: %d rows, %d columns; want an empty file with the table's schema", f, pf.NumRows(), len(pf.Schema().Fields()))
		}
	}
	got := readAll(t, dir)
	if len(got.Runs) != 1 || got.Runs[0].RunID != "only" || len(got.Requests) != 0 {
		t.Fatalf("read back %+v", got)
	}

	// A write without runs leaves three empty dataset directories, read
	// back as no rows.
	dir2 := t.TempDir()
	w2, err := NewParquetWriter(dir2, WriteOptions{Layout: LayoutHive})
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if files := datasetFiles(t, dir2); len(files) != 0 {
		t.Fatalf("a write without runs left %q", files)
	}
	if got := readAll(t, dir2); len(got.Runs)+len(got.Requests)+len(got.Events) != 0 {
		t.Fatalf("read back %+v", got)
	}
}

// TestLayoutReplacement: a write replaces the previous tables in either
// layout; a failed write leaves them untouched; a directory in the way
// that is not a dataset is refused.
func TestLayoutReplacement(t *testing.T) {
	dir := t.TempDir()
	writeSample(t, dir, 5, WriteOptions{})
	want := writeHiveSample(t, dir, 7, WriteOptions{})
	if _, err := os.Stat(filepath.Join(dir, "runs.parquet")); err == nil {
		t.Fatal("hive write left the flat runs.parquet")
	}
	diffCollectors(t, want, readAll(t, dir))

	// A failed hive write leaves the dataset as it was.
	w, err := NewParquetWriter(dir, WriteOptions{Layout: LayoutHive})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Request(&Request{RunID: "z", Status: StatusOK}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "no Run row") {
		t.Fatalf("Close: %v", err)
	}
	diffCollectors(t, want, readAll(t, dir))
	if ents, _ := filepath.Glob(filepath.Join(dir, ".*")); len(ents) != 0 {
		t.Errorf("leftovers after a failed write: %q", ents)
	}

	// A second hive write replaces the first.
	want = writeHiveSample(t, dir, 3, WriteOptions{})
	diffCollectors(t, want, readAll(t, dir))

	// A flat write replaces the datasets.
	writeSample(t, dir, 4, WriteOptions{})
	if IsTableDir(dir) != true || isDataset(filepath.Join(dir, "runs")) {
		t.Fatal("flat write left the runs/ dataset")
	}
	diffCollectors(t, collectSample(t, 4), readAll(t, dir))

	// Both layouts at once: an error, not a guess.
	writeHiveSample(t, filepath.Join(dir, "h"), 3, WriteOptions{})
	if err := os.Rename(filepath.Join(dir, "h", "runs"), filepath.Join(dir, "runs")); err != nil {
		t.Fatal(err)
	}
	if err := ReadTables(dir, &Collector{}); err == nil || !strings.Contains(err.Error(), "two layouts") {
		t.Errorf("ReadTables on both layouts: %v", err)
	}

	// A foreign directory named like a table is not replaced.
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, "events", "mine"), 0o777)
	if _, err := NewParquetWriter(other, WriteOptions{Layout: LayoutHive}); err == nil || !strings.Contains(err.Error(), "not a table dataset") {
		t.Errorf("NewParquetWriter over a foreign events/: %v", err)
	}
	// A flat write does not remove a directory of other Parquet files
	// named like a table.
	mine := t.TempDir()
	os.MkdirAll(filepath.Join(mine, "events"), 0o777)
	os.WriteFile(filepath.Join(mine, "events", "mine.parquet"), []byte("x"), 0o666)
	writeSample(t, mine, 2, WriteOptions{})
	if _, err := os.Stat(filepath.Join(mine, "events", "mine.parquet")); err != nil {
		t.Errorf("flat write removed a foreign events/ directory: %v", err)
	}
	if _, err := NewParquetWriter(mine, WriteOptions{Layout: LayoutHive}); err == nil || !strings.Contains(err.Error(), "not a table dataset") {
		t.Errorf("NewParquetWriter over events/mine.parquet: %v", err)
	}
	if _, err := NewParquetWriter(other, WriteOptions{Layout: "tree"}); err == nil {
		t.Error("unknown layout accepted")
	}
}

// TestHiveReadErrors: a row whose run_id contradicts its partition, files
// of two imports mixed, a stray directory.
func TestHiveReadErrors(t *testing.T) {
	dir := t.TempDir()
	writeHiveSample(t, dir, 5, WriteOptions{})
	// Move run c's runs file under run d's partition name.
	c := filepath.Join(dir, "runs", "run_id=c", "part-00000.parquet")
	if err := os.Rename(c, filepath.Join(dir, "runs", "run_id=..", "part-00001.parquet")); err != nil {
		t.Fatal(err)
	}
	err := ReadTables(dir, &Collector{})
	if err == nil || !strings.Contains(err.Error(), `run_id "c" in the partition of run_id ".."`) {
		t.Errorf("moved file: %v", err)
	}

	dir2 := t.TempDir()
	writeHiveSample(t, dir2, 5, WriteOptions{})
	other := t.TempDir()
	writeHiveSample(t, other, 5, WriteOptions{})
	src := filepath.Join(other, "events", "run_id=gp%2Frun a%3A1%3Dx%25", "part-00000.parquet")
	if err := os.Rename(src, filepath.Join(dir2, "events", "run_id=gp%2Frun a%3A1%3Dx%25", "part-00000.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := ReadTables(dir2, &Collector{}); err == nil || !strings.Contains(err.Error(), "different writes") {
		t.Errorf("mixed imports: %v", err)
	}

	dir3 := t.TempDir()
	writeHiveSample(t, dir3, 5, WriteOptions{})
	os.MkdirAll(filepath.Join(dir3, "requests", "date=2025"), 0o777)
	if err := ReadTables(dir3, &Collector{}); err == nil || !strings.Contains(err.Error(), "want run_id=") {
		t.Errorf("stray directory: %v", err)
	}
}

// TestDuckDBReadsHiveDataset: DuckDB reads each partitioned table as one
// table with hive_partitioning, the run_id it derives from the directory
// names is the unescaped run id, and a query over all runs gives the same
// statistic as the flat layout.
func TestDuckDBReadsHiveDataset(t *testing.T) {
	_, errNode := exec.LookPath("node")
	requireTool(t, errNode == nil, "node")
	_, errMod := os.Stat(filepath.Join(duckdbCheckDir, "node_modules/@duckdb/node-api/package.json"))
	requireTool(t, errMod == nil, "tools/duckdb-check/node_modules (run: npm ci --prefix tools/duckdb-check)")

	dir := t.TempDir()
	const nb = 300
	want := writeHiveSample(t, dir, nb, WriteOptions{PartRows: 128})
	glob := func(table string) string {
		return "read_parquet('" + filepath.Join(dir, table, "**", "*.parquet") + "', hive_partitioning = true)"
	}
	p99 := strings.ReplaceAll(exampleQuery(t, "p99-ttft-hive"), "'out/requests/**/*.parquet'", "'"+filepath.Join(dir, "requests", "**", "*.parquet")+"'")
	perRun := "SELECT run_id, count(*) AS n FROM " + glob("requests") + " GROUP BY run_id ORDER BY run_id"
	join := "SELECT count(*) AS n FROM " + glob("events") + " e JOIN " + glob("requests") + " r USING (run_id, request_key)"
	runIDs := "SELECT run_id FROM " + glob("runs") + " ORDER BY run_id"
	cmd := exec.Command("node", filepath.Join(duckdbCheckDir, "check.mjs"), dir, p99, perRun, join, runIDs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check.mjs: %v\n%s", err, stderr.String())
	}
	var got duckOutput
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("check.mjs output: %v\n%s", err, out)
	}
	wantRows := map[string]int{TableEvents: len(want.Events), TableRequests: len(want.Requests), TableRuns: len(want.Runs)}
	for table, rt := range tableTypes {
		dt := got.Tables[table]
		if dt.Rows != int64(wantRows[table]) {
			t.Errorf("%s: DuckDB counts %d rows, want %d", table, dt.Rows, wantRows[table])
		}
		// Same columns as the flat file: run_id is both in the files and
		// the partition key, and DuckDB shows it once.
		var names []string
		for _, c := range dt.Columns {
			names = append(names, c.Name)
		}
		if tags := tagColumns(rt); !slices.Equal(names, slices.DeleteFunc(tags, func(s string) bool { return strings.Contains(s, "[]") })) {
			t.Errorf("%s: DuckDB columns %v, want %v", table, names, tags)
		}
	}
	if len(got.Queries) != 4 {
		t.Fatalf("%d query results", len(got.Queries))
	}
	// P99 TTFT per run, unescaped ids.
	ttfts := map[string][]float64{}
	for _, r := range want.Requests {
		if r.Status == StatusOK && r.FirstTokenOffsetNs != nil {
			ttfts[r.RunID] = append(ttfts[r.RunID], float64(*r.FirstTokenOffsetNs)/1e6)
		}
	}
	if len(got.Queries[0].Rows) != len(ttfts) {
		t.Fatalf("p99 query: %v", got.Queries[0].Rows)
	}
	for _, r := range got.Queries[0].Rows {
		id, _ := r["run_id"].(string)
		p, _ := r["p99_ttft_ms"].(float64)
		if w := quantileCont(ttfts[id], 0.99); len(ttfts[id]) == 0 || math.Abs(p-w) > 1e-9*w {
			t.Errorf("p99 query: run %q p99 %v, want %v", id, p, w)
		}
	}
	perRunWant := map[string]int64{}
	for _, r := range want.Requests {
		perRunWant[r.RunID]++
	}
	for _, r := range got.Queries[1].Rows {
		id, _ := r["run_id"].(string)
		if jsonInt(r["n"]) != perRunWant[id] {
			t.Errorf("requests of run %q: DuckDB %v, want %d", id, r["n"], perRunWant[id])
		}
		delete(perRunWant, id)
	}
	if len(perRunWant) != 0 {
		t.Errorf("runs DuckDB did not see (run_id not unescaped?): %v", perRunWant)
	}
	if n := jsonInt(got.Queries[2].Rows[0]["n"]); n != int64(len(want.Events)) {
		t.Errorf("events ⋈ requests: %d rows, want %d", n, len(want.Events))
	}
	var ids []string
	for _, r := range got.Queries[3].Rows {
		ids = append(ids, r["run_id"].(string))
	}
	if w := []string{"..", "b é #2", "c", "gp/run a:1=x%"}; !slices.Equal(ids, w) {
		t.Errorf("runs.run_id as DuckDB reads it: %q, want %q", ids, w)
	}
}

// sparkEvent is Event without run_id, as Spark's partitionBy writes it.
type sparkEvent struct {
	RequestKey    int64   `parquet:"request_key"`
	Index         int32   `parquet:"index"`
	ReadIndex     int32   `parquet:"read_index"`
	OffsetNs      int64   `parquet:"offset_ns"`
	Kind          string  `parquet:"kind"`
	HasChoices    bool    `parquet:"has_choices"`
	Tokens        *int32  `parquet:"tokens,optional"`
	Bytes         int32   `parquet:"bytes"`
	Text          *string `parquet:"text,optional"`
	ReasoningText *string `parquet:"reasoning_text,optional"`
	FinishReason  string  `parquet:"finish_reason"`
}

// TestHiveReadsFilesWithoutRunID: a partition file without the run_id
// column (another tool's partitionBy output, no tokentrace metadata) reads
// with run_id from its directory name.
func TestHiveReadsFilesWithoutRunID(t *testing.T) {
	dir := t.TempDir()
	want := writeHiveSample(t, dir, 20, WriteOptions{})
	id := unsafeIDs["b"]
	var rows []sparkEvent
	for _, e := range want.Events {
		if e.RunID == id {
			rows = append(rows, sparkEvent{e.RequestKey, e.Index, e.ReadIndex, e.OffsetNs, e.Kind, e.HasChoices,
				e.Tokens, e.Bytes, e.Text, e.ReasoningText, e.FinishReason})
		}
	}
	pdir := filepath.Join(dir, "events", "run_id="+EscapePartitionValue(id))
	if err := os.Remove(filepath.Join(pdir, "part-00000.parquet")); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, pdir, "part-00000.parquet", rows, nil)
	diffCollectors(t, want, readAll(t, dir))
}

func (r renameRuns) Batch(b *Batch) error { return b.EachRow(r.Request) }

// TestPartitionDirValue checks the directory values of the ids a hive
// reader would misread: NULL look-alikes and ids too long for one name.
func TestPartitionDirValue(t *testing.T) {
	for id, want := range map[string]string{
		"run":                        "run",
		"a/b:c":                      "a%2Fb%3Ac",
		"null":                       "%6Eull",
		"NULL":                       "%4EULL",
		"Null":                       "%4Eull",
		"__HIVE_DEFAULT_PARTITION__": "%5F_HIVE_DEFAULT_PARTITION__",
		"nullx":                      "nullx",
	} {
		if got := PartitionDirValue(id); got != want {
			t.Errorf("PartitionDirValue(%q) = %q, want %q", id, got, want)
		}
		if got := UnescapePartitionValue(PartitionDirValue(id)); got != id {
			t.Errorf("%q does not unescape to itself: %q", id, got)
		}
	}
	long := strings.Repeat("é", 40) + strings.Repeat("/", 30) + strings.Repeat("x", 200)
	v := PartitionDirValue(long)
	if len(v) > 150+17 || !strings.Contains(v, "~") || !utf8.ValidString(UnescapePartitionValue(v)) {
		t.Errorf("long id: %q (%d bytes)", v, len(v))
	}
	if v2 := PartitionDirValue(long + "y"); v2 == v {
		t.Errorf("two long ids share the directory %q", v)
	}
}

// TestHiveHostileRunIDs writes runs whose ids a hive reader would read as
// NULL or could not name (250 bytes) and reads them back: every id whole,
// every request in its run.
func TestHiveHostileRunIDs(t *testing.T) {
	ids := []string{"null", "NULL", "__HIVE_DEFAULT_PARTITION__", strings.Repeat("r", 250)}
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{Layout: LayoutHive})
	if err != nil {
		t.Fatal(err)
	}
	for k, id := range ids {
		b := NewBatch(id)
		for i := range 3 {
			b.Req.Status[b.AddRequest(int64(i))] = CodeOK
			b.Req.OutputTokens.Set(i, int64(k))
		}
		if err := w.Batch(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Run(&Run{RunID: id, Tool: "synth", RequestCount: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, dir)
	if len(got.Runs) != len(ids) || len(got.Requests) != 3*len(ids) {
		t.Fatalf("%d runs, %d requests", len(got.Runs), len(got.Requests))
	}
	for k, id := range ids {
		if got.Runs[k].RunID != id {
			t.Errorf("run %d: id %q, want %q", k, got.Runs[k].RunID, id)
		}
		for _, r := range got.Requests[3*k : 3*k+3] {
			if r.RunID != id || *r.OutputTokens != int64(k) {
				t.Errorf("run %q: request of run %q, %d tokens", id, r.RunID, *r.OutputTokens)
			}
		}
	}
}

// TestDuckDBReadsHostileRunIDs: DuckDB reads the NULL look-alikes back as
// their ids under hive_partitioning = true (the escaped first byte), and
// every id, the 250-byte one included, from the files' run_id column under
// hive_partitioning = false.
func TestDuckDBReadsHostileRunIDs(t *testing.T) {
	_, errNode := exec.LookPath("node")
	requireTool(t, errNode == nil, "node")
	_, errMod := os.Stat(filepath.Join(duckdbCheckDir, "node_modules/@duckdb/node-api/package.json"))
	requireTool(t, errMod == nil, "tools/duckdb-check/node_modules (run: npm ci --prefix tools/duckdb-check)")
	long := strings.Repeat("r", 250)
	ids := []string{"null", "NULL", "__HIVE_DEFAULT_PARTITION__", long}
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{Layout: LayoutHive})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		b := NewBatch(id)
		b.Req.Status[b.AddRequest(0)] = CodeOK
		if err := w.Batch(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Run(&Run{RunID: id, Tool: "synth", RequestCount: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	q := func(hive bool) string {
		return fmt.Sprintf("SELECT run_id FROM read_parquet('%s', hive_partitioning = %v) ORDER BY run_id",
			filepath.Join(dir, "requests", "**", "*.parquet"), hive)
	}
	cmd := exec.Command("node", filepath.Join(duckdbCheckDir, "check.mjs"), dir, q(true), q(false))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check.mjs: %v\n%s", err, stderr.String())
	}
	var got duckOutput
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range []string{"NULL __HIVE_DEFAULT_PARTITION__ null " + PartitionDirValue(long), "NULL __HIVE_DEFAULT_PARTITION__ null " + long} {
		var ids []string
		for _, r := range got.Queries[k].Rows {
			s, ok := r["run_id"].(string)
			if !ok {
				s = "<NULL>"
			}
			ids = append(ids, s)
		}
		if s := strings.Join(ids, " "); s != want {
			t.Errorf("hive_partitioning = %v: run ids %s, want %s", k == 0, s, want)
		}
	}
}
