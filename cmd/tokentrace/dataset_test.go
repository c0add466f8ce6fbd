package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// The multi-import dataset: imports written side by side with
// `import --layout hive`, each into its own directory, read as one table
// per table with formats/SCHEMA.md's glob by DuckDB (tools/duckdb-check)
// and nodejs-polars (tools/reader-check/polars.mjs). Among them an LLMPerf run (no
// events), a summary-only vLLM run (no requests, no events) and an AIPerf
// run (all three tables).

const (
	duckdbCheckDir = "../../tools/duckdb-check"
	readerCheckDir = "../../tools/reader-check"
)

// requireNodeTool skips when node or an npm tool folder is not installed,
// unless CI=true, where .ci/run installs them and their absence fails.
func requireNodeTool(t *testing.T, dir, module string) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errMod := os.Stat(filepath.Join(dir, "node_modules", module, "package.json"))
	if errNode == nil && errMod == nil {
		return
	}
	msg := fmt.Sprintf("node or %s/node_modules missing (run: npm ci --prefix %s)", dir, strings.TrimPrefix(dir, "../../"))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " on CI")
	}
	t.Skip(msg + "; skipping")
}

// schemaExample returns the SQL block of formats/SCHEMA.md marked
// "<!-- example-query: name -->".
func schemaExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../formats/SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- example-query: " + regexp.QuoteMeta(name) + " -->\\s*```sql\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("SCHEMA.md: no example query %q", name)
	}
	return string(m[1])
}

// sweepImports writes the three imports into dir/<name> and returns what
// tokentrace reads back from each, merged: rows per table and run.
func sweepImports(t *testing.T, dir string) map[string]map[string]int {
	t.Helper()
	inputs := []string{
		"../../testdata/llmperf/leaderboard-bedrock-70b",
		"../../testdata/vllm-bench/er0080-sweep-opt125m-c2",
		"../../testdata/aiperf/qwen3vl30b-local-agent-c2",
	}
	counts := map[string]map[string]int{formats.TableEvents: {}, formats.TableRequests: {}, formats.TableRuns: {}}
	for _, in := range inputs {
		out := filepath.Join(dir, filepath.Base(in))
		if _, err := run(t, "import", in, "-o", out, "--layout", "hive"); err != nil {
			t.Fatalf("import %s: %v", in, err)
		}
		var c formats.Collector
		if err := formats.ReadTables(out, &c); err != nil {
			t.Fatal(err)
		}
		for _, r := range c.Runs {
			counts[formats.TableRuns][r.RunID]++
		}
		for _, r := range c.Requests {
			counts[formats.TableRequests][r.RunID]++
		}
		for _, e := range c.Events {
			counts[formats.TableEvents][e.RunID]++
		}
	}
	// what the test is about: tables without rows in some imports
	if len(counts[formats.TableEvents]) != 1 || len(counts[formats.TableRequests]) != 2 || len(counts[formats.TableRuns]) != 4 {
		t.Fatalf("imports: runs per table %v; want events of 1 run, requests of 2, 4 runs", counts)
	}
	return counts
}

func TestMultiImportDatasetReadsAsOne(t *testing.T) {
	requireNodeTool(t, duckdbCheckDir, "@duckdb/node-api")
	requireNodeTool(t, readerCheckDir, "nodejs-polars")
	dir := t.TempDir()
	want := sweepImports(t, dir)
	glob := func(table string) string { return filepath.Join(dir, "*", table, "**", "*.parquet") }
	tables := []string{formats.TableEvents, formats.TableRequests, formats.TableRuns}

	// DuckDB: rows per run of each table through the glob, and SCHEMA.md's
	// documented query over the sweep.
	var queries []string
	for _, tb := range tables {
		queries = append(queries, "SELECT run_id, count(*) AS n FROM read_parquet('"+glob(tb)+"', hive_partitioning = true) GROUP BY run_id ORDER BY run_id")
	}
	queries = append(queries, strings.ReplaceAll(schemaExample(t, "p99-ttft-sweeps"), "'sweeps/", "'"+dir+"/"))
	cmd := exec.Command("node", append([]string{filepath.Join(duckdbCheckDir, "check.mjs"), filepath.Join(dir, "qwen3vl30b-local-agent-c2")}, queries...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB: %v\n%s", err, stderr.String())
	}
	var duck struct {
		Queries []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(raw, &duck); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	for i, tb := range tables {
		got := map[string]int{}
		for _, r := range duck.Queries[i].Rows {
			n, _ := strconv.Atoi(fmt.Sprint(r["n"]))
			got[fmt.Sprint(r["run_id"])] = n
		}
		if fmt.Sprint(got) != fmt.Sprint(want[tb]) {
			t.Errorf("DuckDB %s rows per run: %v, want %v", tb, got, want[tb])
		}
	}
	p99 := duck.Queries[3].Rows
	if len(p99) != 2 || p99[0]["run_id"] != "leaderboard-bedrock-70b" || p99[1]["run_id"] != "qwen3vl30b-local-agent-c2" {
		t.Errorf("documented sweep query: %v", p99)
	}

	// nodejs-polars: the same globs, hive partitioning on.
	args := []string{filepath.Join(readerCheckDir, "polars.mjs")}
	for _, tb := range tables {
		args = append(args, glob(tb))
	}
	cmd = exec.Command("node", args...)
	stderr.Reset()
	cmd.Stderr = &stderr
	raw, err = cmd.Output()
	if err != nil {
		t.Fatalf("polars: %v\n%s", err, stderr.String())
	}
	var pol struct {
		Version string `json:"polars_version"`
		Tables  []struct {
			Rows    int `json:"rows"`
			Columns []struct {
				Name string `json:"name"`
			} `json:"columns"`
			RunIDs []string `json:"run_ids"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(raw, &pol); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	for i, tb := range tables {
		g := pol.Tables[i]
		total := 0
		var ids []string
		for id, n := range want[tb] {
			total += n
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if g.Rows != total || !slices.Equal(g.RunIDs, ids) {
			t.Errorf("polars %s: %d rows of runs %q, want %d of %q", tb, g.Rows, g.RunIDs, total, ids)
		}
		var cols []string
		for _, c := range g.Columns {
			cols = append(cols, c.Name)
		}
		var wantCols []string
		for _, f := range formats.TableArrowSchema(tb).Fields() {
			wantCols = append(wantCols, f.Name)
		}
		if !slices.Equal(cols, wantCols) {
			t.Errorf("polars %s columns %q, want %q", tb, cols, wantCols)
		}
	}
	t.Logf("DuckDB and nodejs-polars %s read %v rows per table and run", pol.Version, want)
}
