package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The independent reader checks: files written by ParquetWriter, read by
// DuckDB (tools/duckdb-check, pinned @duckdb/node-api) and, when present,
// pyarrow. Nothing of tokentrace's reading code is involved.

const duckdbCheckDir = "../tools/duckdb-check"

// requireTool skips the test when an external reader is not installed,
// unless CI=true, where its absence is a failure (CI installs it).
func requireTool(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s missing on CI", what)
	}
	t.Skipf("%s missing; skipping the independent reader check", what)
}

type duckColumn struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Nulls int64  `json:"nulls"`
}

type duckTable struct {
	Rows     int64             `json:"rows"`
	Columns  []duckColumn      `json:"columns"`
	Metadata map[string]string `json:"metadata"`
}

type duckOutput struct {
	Version string               `json:"duckdb_version"`
	Tables  map[string]duckTable `json:"tables"`
	Queries []struct {
		SQL  string           `json:"sql"`
		Rows []map[string]any `json:"rows"`
	} `json:"queries"`
}

// exampleQuery returns the SQL block of SCHEMA.md marked with
// "<!-- example-query: name -->".
func exampleQuery(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- example-query: " + regexp.QuoteMeta(name) + " -->\\s*```sql\n(.*?)```")
	m := re.FindSubmatch(b)
	if m == nil {
		t.Fatalf("SCHEMA.md: no example query %q", name)
	}
	return string(m[1])
}

// nullCounts counts, per column, the rows of rows whose pointer field is
// nil or whose nullable string is "" (null in the files).
func nullCounts[T any](rows []T) map[string]int64 {
	n := map[string]int64{}
	fields := columnFields(reflect.TypeFor[T]())
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for _, f := range fields {
			fv := v.FieldByIndex(f.Index)
			if fv.Kind() == reflect.Pointer && fv.IsNil() || nullableString(f) && fv.String() == "" {
				n[ColumnName(f)]++
			}
		}
	}
	return n
}

// asRequestRows returns the requests as the files hold them.
func asRequestRows(rs []Request) []requestRow {
	out := make([]requestRow, len(rs))
	for i := range rs {
		out[i] = newRequestRow(&rs[i])
	}
	return out
}

// duckTypeFor is the DuckDB type a Go field type must read as.
func duckTypeFor(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "VARCHAR"
	case reflect.Int64:
		return "BIGINT"
	case reflect.Int32:
		return "INTEGER"
	case reflect.Float64:
		return "DOUBLE"
	case reflect.Bool:
		return "BOOLEAN"
	case reflect.Slice:
		return duckTypeFor(t.Elem()) + "[]"
	case reflect.Struct:
		var parts []string
		for i := 0; i < t.NumField(); i++ {
			name := ColumnName(t.Field(i))
			if name == "" {
				continue
			}
			if slices.Contains([]string{"role", "value", "text"}, name) { // quoted by DuckDB as keywords
				name = strconv.Quote(name)
			}
			parts = append(parts, name+" "+duckTypeFor(t.Field(i).Type))
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")"
	}
	return "?"
}

// quantileCont is DuckDB's quantile_cont: linear interpolation between
// closest ranks, over sorted xs.
func quantileCont(xs []float64, q float64) float64 {
	sort.Float64s(xs)
	h := float64(len(xs)-1) * q
	lo := math.Floor(h)
	if int(lo)+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[int(lo)] + (h-lo)*(xs[int(lo)+1]-xs[int(lo)])
}

func TestDuckDBReadsTables(t *testing.T) {
	_, errNode := exec.LookPath("node")
	requireTool(t, errNode == nil, "node")
	_, errMod := os.Stat(filepath.Join(duckdbCheckDir, "node_modules/@duckdb/node-api/package.json"))
	requireTool(t, errMod == nil, "tools/duckdb-check/node_modules (run: npm ci --prefix tools/duckdb-check)")

	dir := t.TempDir()
	const nb = 40
	writeSample(t, dir, nb, WriteOptions{})
	want := collectSample(t, nb)

	p99 := strings.ReplaceAll(exampleQuery(t, "p99-ttft"), "'out/", "'"+dir+"/")
	lists := "SELECT run_id, len(source_files) AS nsf, notes, reported[2].text AS t2, reported[2].value IS NULL AS v2null FROM '" +
		filepath.Join(dir, "runs.parquet") + "' ORDER BY run_id"
	// the load series unnested into one row per sample (list order kept by
	// generate_subscripts)
	load := "SELECT run_id, i, l.time_ns, l.clock_domain, l.running, l.waiting, l.swapped, l.gpu_kv_cache_pct, l.cpu_kv_cache_pct, " +
		"l.prefix_cache_hit_pct, l.prompt_tokens_per_s, l.generation_tokens_per_s FROM (SELECT run_id, generate_subscripts(load, 1) AS i, unnest(load) AS l FROM '" +
		filepath.Join(dir, "runs.parquet") + "') ORDER BY run_id, i"
	cmd := exec.Command("node", filepath.Join(duckdbCheckDir, "check.mjs"), dir, p99, lists, load)
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
	t.Logf("DuckDB %s", got.Version)

	doc := parseSchemaDoc(t)
	wantRows := map[string]int{TableEvents: len(want.Events), TableRequests: len(want.Requests), TableRuns: len(want.Runs)}
	wantNulls := map[string]map[string]int64{
		TableEvents: nullCounts(want.Events), TableRequests: nullCounts(asRequestRows(want.Requests)), TableRuns: nullCounts(want.Runs),
	}
	for table, rt := range tableTypes {
		dt, ok := got.Tables[table]
		if !ok {
			t.Errorf("DuckDB output lacks table %s", table)
			continue
		}
		if dt.Rows != int64(wantRows[table]) {
			t.Errorf("%s: DuckDB counts %d rows, want %d", table, dt.Rows, wantRows[table])
		}
		if dt.Metadata[MetaTable] != table || dt.Metadata[MetaSchemaVersion] != strconv.Itoa(SchemaVersion) || dt.Metadata[MetaVersion] != Version {
			t.Errorf("%s: metadata as DuckDB sees it: %v", table, dt.Metadata)
		}
		var names []string
		for _, c := range dt.Columns {
			names = append(names, c.Name)
		}
		if tags := tagColumns(rt); !slices.Equal(names, slices.DeleteFunc(tags, func(s string) bool { return strings.Contains(s, "[]") })) {
			t.Errorf("%s: DuckDB columns %v, want %v", table, names, tags)
		}
		for _, c := range dt.Columns {
			f := rt.FieldByIndex(fieldByColumn(rt, c.Name))
			w := duckTypeFor(f.Type)
			if isTimestamp(f) {
				w = "TIMESTAMP WITH TIME ZONE"
			}
			if c.Type != w {
				t.Errorf("%s.%s: DuckDB type %s, want %s", table, c.Name, c.Type, w)
			}
			if strings.HasSuffix(c.Name, "_ns") && c.Type != "BIGINT" {
				t.Errorf("%s.%s: time column reads as %s, want BIGINT", table, c.Name, c.Type)
			}
			if d, ok := doc[table][c.Name]; ok && d.DuckDBType != c.Type {
				t.Errorf("SCHEMA.md:%d: %s.%s: DuckDB type documented %q, DuckDB says %q", d.Line, table, c.Name, d.DuckDBType, c.Type)
			}
			if c.Nulls != wantNulls[table][c.Name] {
				t.Errorf("%s.%s: DuckDB sees %d nulls, want %d", table, c.Name, c.Nulls, wantNulls[table][c.Name])
			}
			if (f.Type.Kind() == reflect.Pointer || nullableString(f)) && c.Nulls == 0 {
				t.Errorf("%s.%s: nullable column holds no NULL in the sample", table, c.Name)
			}
		}
	}

	// The documented example query, checked against the same statistic
	// computed here.
	if len(got.Queries) != 3 {
		t.Fatalf("queries: %d results", len(got.Queries))
	}
	ttfts := map[string][]float64{}
	okCount := map[string]int{}
	for _, r := range want.Requests {
		if r.Status != StatusOK {
			continue
		}
		okCount[r.RunID]++
		if r.FirstTokenOffsetNs != nil {
			ttfts[r.RunID] = append(ttfts[r.RunID], float64(*r.FirstTokenOffsetNs)/1e6)
		}
	}
	runs := slices.Sorted(mapsKeys(okCount))
	rows := got.Queries[0].Rows
	if len(rows) != len(runs) {
		t.Fatalf("example query: %d rows, want %d: %v", len(rows), len(runs), rows)
	}
	for i, id := range runs {
		r := rows[i]
		if r["run_id"] != id || jsonInt(r["requests"]) != int64(okCount[id]) {
			t.Errorf("example query row %d: %v, want run %s with %d requests", i, r, id, okCount[id])
		}
		p, _ := r["p99_ttft_ms"].(float64)
		if w := quantileCont(ttfts[id], 0.99); math.Abs(p-w) > 1e-9*w {
			t.Errorf("example query: run %s p99_ttft_ms %v, want %v", id, r["p99_ttft_ms"], w)
		}
	}

	// Lists and nested nulls.
	lrows := got.Queries[1].Rows
	byRun := map[string]map[string]any{}
	for _, r := range lrows {
		byRun[r["run_id"].(string)] = r
	}
	for _, run := range want.Runs {
		r := byRun[run.RunID]
		if jsonInt(r["nsf"]) != int64(len(run.SourceFiles)) {
			t.Errorf("run %s: DuckDB len(source_files) = %v, want %d", run.RunID, r["nsf"], len(run.SourceFiles))
		}
		notes, _ := r["notes"].([]any)
		if len(notes) != len(run.Notes) {
			t.Errorf("run %s: DuckDB notes %v, want %q", run.RunID, r["notes"], run.Notes)
		}
		for i := range notes {
			if notes[i] != run.Notes[i] {
				t.Errorf("run %s: DuckDB note %d %q, want %q", run.RunID, i, notes[i], run.Notes[i])
			}
		}
		if len(run.Reported) > 1 && (r["t2"] != run.Reported[1].Text || r["v2null"] != (run.Reported[1].Value == nil)) {
			t.Errorf("run %s: DuckDB reported[2] text %v value-null %v", run.RunID, r["t2"], r["v2null"])
		}
	}

	// The load series, unnested: one row per sample, nulls kept.
	var wantLoad []map[string]any
	for _, run := range want.Runs {
		for i, l := range run.Load {
			i64 := func(p *int64) any {
				if p == nil {
					return nil
				}
				return *p
			}
			f64 := func(p *float64) any {
				if p == nil {
					return nil
				}
				return *p
			}
			wantLoad = append(wantLoad, map[string]any{"run_id": run.RunID, "i": int64(i + 1), "time_ns": i64(l.TimeNs), "clock_domain": nullIfEmpty(l.ClockDomain),
				"running": i64(l.Running), "waiting": i64(l.Waiting), "swapped": i64(l.Swapped), "gpu_kv_cache_pct": f64(l.GPUKVCachePct),
				"cpu_kv_cache_pct": f64(l.CPUKVCachePct), "prefix_cache_hit_pct": f64(l.PrefixCacheHitPct),
				"prompt_tokens_per_s": f64(l.PromptTokensPerS), "generation_tokens_per_s": f64(l.GenerationTokensPerS)})
		}
	}
	urows := got.Queries[2].Rows
	if len(wantLoad) == 0 || len(urows) != len(wantLoad) {
		t.Fatalf("unnest(load): %d rows, want %d: %v", len(urows), len(wantLoad), urows)
	}
	for i, w := range wantLoad {
		for k, wv := range w {
			gv := urows[i][k]
			switch wv := wv.(type) {
			case int64:
				if gv == nil || jsonInt(gv) != wv {
					t.Errorf("unnest(load) row %d %s = %v, want %d", i, k, gv, wv)
				}
			default:
				if gv != wv {
					t.Errorf("unnest(load) row %d %s = %v (%T), want %v", i, k, gv, gv, wv)
				}
			}
		}
	}
}

// nullIfEmpty is a nullable string column's value as DuckDB's JSON gives
// it: "" is null.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonInt reads a count DuckDB's JSON conversion gives as a number or a
// string (BIGINT).
func jsonInt(v any) int64 {
	switch v := v.(type) {
	case float64:
		return int64(v)
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return -1
}

const pyarrowCheck = `
import json, sys
import pyarrow.parquet as pq
out = {}
for table in ("events", "requests", "runs"):
    t = pq.read_table(f"{sys.argv[1]}/{table}.parquet")
    md = pq.read_metadata(f"{sys.argv[1]}/{table}.parquet").metadata or {}
    out[table] = {
        "rows": t.num_rows,
        "types": {f.name: str(f.type) for f in t.schema},
        "nulls": {c: t.column(c).null_count for c in t.column_names},
        "table_meta": md.get(b"tokentrace.table", b"").decode(),
    }
print(json.dumps(out))
`

// TestPyarrowReadsTables reads the tables with pyarrow when it is already
// installed (it is never installed for this test).
func TestPyarrowReadsTables(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	if err := exec.Command(py, "-c", "import pyarrow.parquet").Run(); err != nil {
		t.Skip("pyarrow not installed; skipping (optional check)")
	}
	dir := t.TempDir()
	const nb = 40
	writeSample(t, dir, nb, WriteOptions{})
	want := collectSample(t, nb)
	out, err := exec.Command(py, "-c", pyarrowCheck, dir).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("pyarrow: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got map[string]struct {
		Rows      int               `json:"rows"`
		Types     map[string]string `json:"types"`
		Nulls     map[string]int64  `json:"nulls"`
		TableMeta string            `json:"table_meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantRows := map[string]int{TableEvents: len(want.Events), TableRequests: len(want.Requests), TableRuns: len(want.Runs)}
	wantNulls := map[string]map[string]int64{
		TableEvents: nullCounts(want.Events), TableRequests: nullCounts(asRequestRows(want.Requests)), TableRuns: nullCounts(want.Runs),
	}
	for table, rt := range tableTypes {
		g := got[table]
		if g.Rows != wantRows[table] || g.TableMeta != table {
			t.Errorf("%s: pyarrow rows %d meta %q, want %d %q", table, g.Rows, g.TableMeta, wantRows[table], table)
		}
		for _, f := range columnFields(rt) {
			name := ColumnName(f)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			w := map[reflect.Kind]string{reflect.String: "string", reflect.Int64: "int64", reflect.Int32: "int32",
				reflect.Float64: "double", reflect.Bool: "bool", reflect.Slice: "list<"}[ft.Kind()]
			if isTimestamp(f) {
				w = "timestamp[ns, tz=UTC]"
			}
			if typ := g.Types[name]; !strings.HasPrefix(typ, w) || (ft.Kind() != reflect.Slice && typ != w) {
				t.Errorf("%s.%s: pyarrow type %q, want %q", table, name, typ, w)
			}
			if g.Nulls[name] != wantNulls[table][name] {
				t.Errorf("%s.%s: pyarrow sees %d nulls, want %d", table, name, g.Nulls[name], wantNulls[table][name])
			}
		}
	}
}

// TestDuckDBEngineAtStart runs SCHEMA.md's ASOF example: each request gets
// the latest vllm:num_requests_waiting sample at or before its start, from
// its run's series (one hand-made run: samples 3 at t, 7 at t+10 s;
// requests at t−1 s, t+5 s, t+10 s, t+20 s) — null, 3, 7, 7 — beside
// in_flight_at_start (three requests of 1 s, one at a time: 1 each).
func TestDuckDBEngineAtStart(t *testing.T) {
	_, errNode := exec.LookPath("node")
	requireTool(t, errNode == nil, "node")
	_, errMod := os.Stat(filepath.Join(duckdbCheckDir, "node_modules/@duckdb/node-api/package.json"))
	requireTool(t, errMod == nil, "tools/duckdb-check/node_modules (run: npm ci --prefix tools/duckdb-check)")
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const t0 = int64(1_700_000_000) * 1e9
	for k, off := range []int64{-1, 5, 10, 20} {
		st := t0 + off*1e9
		if err := w.Request(&Request{RunID: "r", RequestKey: int64(k), Status: StatusOK, StartNs: &st, ClockDomain: ClockUnix, StreamEndOffsetNs: i64p(1e9)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	run := &Run{RunID: "r", ClockDomain: ClockUnix, Series: []SeriesPoint{
		{Metric: "vllm:num_requests_waiting", TimeNs: t0, ClockDomain: ClockUnix, Value: 3},
		{Metric: "vllm:num_requests_waiting", TimeNs: t0 + 10e9, ClockDomain: ClockUnix, Value: 7},
		{Metric: "gpu:gpu_power_usage", TimeNs: t0 + 1e9, ClockDomain: ClockUnix, Unit: "W", Value: 300},
	}}
	if err := w.Run(run); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	q := strings.NewReplacer("'runs.parquet'", "'"+filepath.Join(dir, "runs.parquet")+"'", "'requests.parquet'", "'"+filepath.Join(dir, "requests.parquet")+"'").
		Replace(exampleQuery(t, "engine-at-start"))
	cmd := exec.Command("node", filepath.Join(duckdbCheckDir, "check.mjs"), dir, q)
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
	var waiting, inFlight []string
	for _, r := range got.Queries[0].Rows {
		waiting = append(waiting, fmt.Sprint(r["waiting_at_start"]))
		inFlight = append(inFlight, fmt.Sprint(r["in_flight_at_start"]))
	}
	if strings.Join(waiting, " ") != "<nil> 3 7 7" || strings.Join(inFlight, " ") != "1 1 1 1" {
		t.Errorf("waiting %v, in flight %v", waiting, inFlight)
	}
}
