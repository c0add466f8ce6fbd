package analyze_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/render"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// The canonical convention in SQL (analyze/sql/canonical.sql), run in DuckDB
// (tools/duckdb-check, pinned @duckdb/node-api) on every bundled corpus run
// and compared statistic by statistic with the Go analyzer's report.

const duckdbCheck = "../tools/duckdb-check"

// What the SQL does not reproduce, and why; every other value of every run
// is compared:
//
//   - throughput (reported): sources without request start times (LLMPerf) show the tool's own throughput copied from its summary; nothing to recompute (SQL gives NULL).
//   - p*_ci95: distribution-free confidence intervals of percentiles (binomial order statistics, analyze/stats/ci.go) are not expressed in SQL.
//   - pooled: the pooled report (--pool) is not expressed in SQL.
//   - e2e_by_osl, ttft_by_isl, fits: length-conditioned buckets and least-squares fits are not expressed in SQL.
//   - tokenizer: re-tokenized output counts need a tokenizer; the Go analyzer here has none, as the SQL has none (SQL uses stored 'tokenizer:' counts only).
//   - goodput strict bounds: the SQL goodput macro takes <= bounds only.

func haveNodeModule(dir, module string) bool {
	_, errNode := exec.LookPath("node")
	_, errMod := os.Stat(filepath.Join(dir, "node_modules", module, "package.json"))
	return errNode == nil && errMod == nil
}

func haveDuckDB() bool { return haveNodeModule(duckdbCheck, "@duckdb/node-api") }

// requireDuckDB skips when node or the DuckDB package is missing, unless
// CI=true (where .ci/run installs them and their absence is a failure).
func requireDuckDB(t *testing.T) {
	t.Helper()
	if haveDuckDB() {
		return
	}
	msg := "node or tools/duckdb-check/node_modules missing (run: npm ci --prefix tools/duckdb-check)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " on CI")
	}
	t.Skip(msg + "; skipping the SQL agreement check")
}

// chdbCheck is the chDB runner's folder: ClickHouse embedded, about 550 MB
// installed, so `make test` installs it only under CI=true (`make chdb`
// installs it here, once; the folder's node_modules may be a symlink to an
// installation shared by several checkouts).
const chdbCheck = "../tools/chdb-check"

func haveChDB() bool { return haveNodeModule(chdbCheck, "chdb") }

// requireChDB skips with a message when chDB is not installed, unless
// CI=true, where `make test` installs it and its absence is a failure.
func requireChDB(t *testing.T) {
	t.Helper()
	if haveChDB() {
		return
	}
	msg := "node or tools/chdb-check/node_modules missing (about 550 MB: run make chdb)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " on CI")
	}
	t.Skip(msg + "; skipping the ClickHouse SQL agreement check")
}

// prefixRuns prefixes run ids with the corpus tool directory ("aiperf/…"),
// making them unique across the corpus (and putting a '/' in every
// partition name).
type prefixRuns struct {
	s        formats.Sink
	tool, in string // corpus tool directory and run directory names
}

func (p prefixRuns) id(orig string) string {
	if orig == p.in {
		return p.tool + "/" + orig
	}
	return p.tool + "/" + p.in + "/" + orig
}

func (p prefixRuns) Batch(b *formats.Batch) error {
	b.RunID = p.id(b.RunID)
	return p.s.Batch(b)
}

func (p prefixRuns) Run(r *formats.Run) error {
	c := *r
	c.RunID = p.id(r.RunID)
	return p.s.Run(&c)
}

// onlyRuns forwards the rows of the given runs.
type onlyRuns struct {
	s   formats.Sink
	ids map[string]bool
}

func (o onlyRuns) Batch(b *formats.Batch) error {
	if !o.ids[b.RunID] {
		return nil
	}
	return o.s.Batch(b)
}

func (o onlyRuns) Run(r *formats.Run) error {
	if !o.ids[r.RunID] {
		return nil
	}
	return o.s.Run(r)
}

type sqlOutput struct {
	Version           string `json:"duckdb_version"`
	ClickHouseVersion string `json:"clickhouse_version"`
	Layout            string `json:"layout"`
	Queries           []struct {
		Rows []map[string]any `json:"rows"`
	} `json:"queries"`
}

// num reads a value as DuckDB's JSON or the Go report's JSON gives it:
// a number, a BIGINT as a string, or null (ok false).
func num(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

type comparer struct {
	t        *testing.T
	compared int
}

// same checks that got (SQL) and want (Go) are both null or agree to 1e-9
// relative; scale widens the bound for values that are differences of
// large ones (std near 0).
func (c *comparer) same(what string, got, want any, scale float64) {
	c.t.Helper()
	c.compared++
	g, gok := num(got)
	w, wok := num(want)
	if gok != wok {
		c.t.Errorf("%s: SQL %v, Go %v", what, got, want)
		return
	}
	if !gok {
		return
	}
	tol := 1e-9 * math.Max(math.Max(math.Abs(g), math.Abs(w)), math.Abs(scale))
	if math.Abs(g-w) > tol {
		c.t.Errorf("%s: SQL %.17g, Go %.17g (diff %.3g)", what, g, w, math.Abs(g-w))
	}
}

func TestCanonicalSQLMatchesGo(t *testing.T) {
	if !haveDuckDB() && !haveChDB() && os.Getenv("CI") != "true" {
		t.Skip("neither DuckDB nor chDB installed (tools/duckdb-check, tools/chdb-check); skipping the SQL agreement checks")
	}
	dirs, _ := filepath.Glob("../testdata/*/*")
	out := t.TempDir()
	pw, err := formats.NewParquetWriter(out, formats.WriteOptions{Layout: formats.LayoutHive})
	if err != nil {
		t.Fatal(err)
	}
	a := analyze.NewAnalyzer(analyze.Canonical)
	a.SetCorrections(tools.Fixes(), true)
	imported := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		jobs, _, err := registry.Resolve([]string{dir}, "")
		if err != nil || len(jobs) == 0 {
			continue
		}
		sink := prefixRuns{formats.Tee(pw, a), filepath.Base(filepath.Dir(dir)), filepath.Base(dir)}
		if err := registry.Import(jobs, nil, ingest.Options{}, sink); err != nil {
			pw.Abort()
			t.Fatalf("%s: %v", dir, err)
		}
		imported++
	}
	if err := ruleCases(formats.Tee(pw, a)); err != nil {
		pw.Abort()
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if imported < 25 {
		t.Fatalf("imported %d corpus directories, expected the bundled ≥ 25", imported)
	}

	goodSLO, err := slo.ParseSLO("ttft<=1s,e2e<=20s")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), SLO: goodSLO})
	if err != nil {
		t.Fatal(err)
	}
	goRuns := reportRuns(t, rep)

	// TPOT goodput (with its vacuous rule) on the streaming runs: the Go
	// analyzer rejects a TPOT constraint on a non-streaming run.
	streaming := map[string]bool{}
	for _, rr := range rep.Runs {
		if rr.Streaming != nil && *rr.Streaming && rr.Requests.Total > 0 {
			streaming[rr.RunID] = true
		}
	}
	a2 := analyze.NewAnalyzer(analyze.Canonical)
	a2.SetCorrections(tools.Fixes(), true)
	if err := formats.ReadTables(out, onlyRuns{a2, streaming}); err != nil {
		t.Fatal(err)
	}
	slo2, err := slo.ParseSLO("ttft<=1s,tpot<=40ms,e2e<=20s")
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := a2.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), SLO: slo2})
	if err != nil {
		t.Fatal(err)
	}
	goRuns2 := reportRuns(t, rep2)

	t.Run("duckdb", func(t *testing.T) {
		requireDuckDB(t)
		got := runSQL(t, filepath.Join(duckdbCheck, "run-sql.mjs"), out, "sql/canonical.sql",
			"SELECT * FROM canonical_goodput(1000, NULL, NULL, 20000)",
			"SELECT * FROM canonical_goodput(1000, NULL, 40, 20000)")
		compareWithGo(t, "DuckDB "+got.Version, got, goRuns, goRuns2)
	})
	t.Run("clickhouse", func(t *testing.T) {
		requireChDB(t)
		got := runSQL(t, filepath.Join(chdbCheck, "run-sql.mjs"), out, "sql/canonical_clickhouse.sql",
			"SELECT * FROM canonical_goodput(ttft_max_ms = 1000, ttfo_max_ms = NULL, tpot_max_ms = NULL, e2e_max_ms = 20000)",
			"SELECT * FROM canonical_goodput(ttft_max_ms = 1000, ttfo_max_ms = NULL, tpot_max_ms = 40, e2e_max_ms = 20000)")
		compareWithGo(t, "ClickHouse (chDB) "+got.ClickHouseVersion, got, goRuns, goRuns2)
	})
}

// runSQL runs the canonical SQL file in an engine's runner (run-sql.mjs of
// tools/duckdb-check or tools/chdb-check) over the hive dataset out, then
// the statistics, counts, throughput and the two goodput queries.
func runSQL(t *testing.T, runner, out, file, goodput, goodputTPOT string) sqlOutput {
	t.Helper()
	queries := []string{
		"SELECT * FROM canonical_stats",
		"SELECT * FROM canonical_counts",
		"SELECT * FROM canonical_throughput",
		goodput,
		goodputTPOT,
	}
	cmd := exec.Command("node", append([]string{runner, out, file, "--"}, queries...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", runner, err, stderr.String())
	}
	var got sqlOutput
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s output: %v", runner, err)
	}
	if got.Layout != "hive" || len(got.Queries) != len(queries) {
		t.Fatalf("%s: layout %q, %d results", runner, got.Layout, len(got.Queries))
	}
	return got
}

// compareWithGo compares an engine's results (runSQL) with the Go
// reports: rep (SLO ttft<=1s,e2e<=20s) and rep2 (the streaming runs, SLO
// with tpot<=40ms too), value by value, and with the hand-computed values
// of the rule cases.
func compareWithGo(t *testing.T, engine string, got sqlOutput, goRuns, goRuns2 map[string]map[string]any) {
	byRun := func(q int) map[string][]map[string]any {
		m := map[string][]map[string]any{}
		for _, r := range got.Queries[q].Rows {
			id, _ := r["run_id"].(string)
			m[id] = append(m[id], r)
		}
		return m
	}
	stats, counts, thr, good, good2 := byRun(0), byRun(1), byRun(2), byRun(3), byRun(4)

	c := &comparer{t: t}
	excluded := map[string]int{}
	ids := make([]string, 0, len(goRuns))
	for id := range goRuns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(counts) != len(ids) {
		t.Errorf("SQL has %d runs, Go %d", len(counts), len(ids))
	}
	for _, id := range ids {
		g := goRuns[id]
		// Statistics of every metric.
		metrics := g["metrics"].(map[string]any)
		seen := 0
		for _, row := range stats[id] {
			name := row["metric"].(string)
			want, ok := metrics[name].(map[string]any)
			if n, _ := num(row["n"]); !ok && n == 0 && scheduledKey(name) {
				continue // no intended starts: the report has no such metric
			}
			if !ok {
				t.Errorf("%s: SQL metric %s not in the Go report", id, name)
				continue
			}
			seen++
			mean, _ := num(want["mean"])
			for _, st := range []string{"n", "mean", "std", "min", "p50", "p90", "p95", "p99", "max"} {
				c.same(fmt.Sprintf("%s %s %s", id, name, st), row[st], want[st], mean)
			}
		}
		if seen != len(metrics) {
			t.Errorf("%s: SQL gives %d of the report's %d metrics", id, seen, len(metrics))
		}
		// Request counts.
		if len(counts[id]) != 1 {
			t.Errorf("%s: %d count rows", id, len(counts[id]))
			continue
		}
		req := g["requests"].(map[string]any)
		for k, v := range req {
			c.same(id+" requests."+k, counts[id][0][k], v, 0)
		}
		// Throughput.
		tp := g["throughput"].(map[string]any)
		if tp["reported"] == true {
			excluded["throughput (reported)"]++
		} else {
			for _, k := range []string{"duration_s", "requests_per_s", "output_tokens_per_s", "total_tokens_per_s"} {
				c.same(id+" throughput."+k, thr[id][0][k], tp[k], 0)
			}
		}
		// Goodput.
		gp := g["goodput"].(map[string]any)
		for _, k := range []string{"good", "total", "fraction", "requests_per_s", "tpot_vacuous"} {
			c.same(id+" goodput."+k, good[id][0][k], gp[k], 0)
		}
		if g2, ok := goRuns2[id]; ok {
			gp2 := g2["goodput"].(map[string]any)
			for _, k := range []string{"good", "total", "fraction", "requests_per_s", "tpot_vacuous"} {
				c.same(id+" goodput(tpot)."+k, good2[id][0][k], gp2[k], 0)
			}
		}
	}
	// Hand-computed values of the rule cases (see ruleCases): the role
	// chunk does not start TTFT, reasoning does; a 3-token chunk's 60 ms
	// gap is three ITL samples of 20 ms; TPOT divides by N − 1 with N from
	// usage (5), the chunk count (3), the tool (7) and the message count (3).
	hand := map[string]map[string]float64{
		"ttft_ms":    {"n": 5, "min": 40, "max": 100, "mean": (100 + 50 + 40 + 70 + 60) / 5.0},
		"itl_ms":     {"n": 6, "min": 20, "max": 40, "mean": (20*3 + 30 + 30 + 40) / 6.0},
		"tpot_ms":    {"n": 4, "min": 15, "max": 55, "mean": (22.5 + 35 + 55 + 15) / 4},
		"ttfo_ms":    {"n": 1, "min": 120},
		"e2e_ms":     {"n": 5, "max": 400},
		"osl_tokens": {"n": 5, "mean": (5 + 3 + 1 + 7 + 3) / 5.0},
	}
	for _, row := range stats["rules/streaming-unknown"] {
		for k, w := range hand[row["metric"].(string)] {
			if v, _ := num(row[k]); math.Abs(v-w) > 1e-9*math.Abs(w) {
				t.Errorf("rules/streaming-unknown %s %s: %v, hand-computed %v", row["metric"], k, row[k], w)
			}
		}
	}
	for k, w := range map[string]float64{"total": 9, "completed": 5, "empty": 1, "failed": 2, "cancelled": 1, "tpot_undefined": 1} {
		if v, _ := num(counts["rules/streaming-unknown"][0][k]); v != w {
			t.Errorf("rules/streaming-unknown requests.%s: %v, want %v", k, v, w)
		}
	}
	for _, row := range stats["rules/non-streaming"] {
		m := row["metric"].(string)
		// every report metric over the 3 completed requests, but the
		// streaming ones (TPOT, TTST, ITL), TTFO (no reasoning) and the
		// schedule-relative ones (no intended starts): none
		want := 3.0
		for _, x := range analyze.Table {
			if x.Key == m && (x.Streaming || x.WithReasoning || x.Scheduled) {
				want = 0
			}
		}
		if n, _ := num(row["n"]); n != want {
			t.Errorf("rules/non-streaming %s: n = %v", m, row["n"])
		}
	}
	if len(goRuns2) < 10 {
		t.Errorf("only %d streaming runs for the TPOT goodput check", len(goRuns2))
	}
	t.Logf("%s: %d values of %d runs agree (%d streaming runs with TPOT goodput); excluded: %v",
		engine, c.compared, len(ids), len(goRuns2), excluded)
	if c.compared < 2000 {
		t.Errorf("only %d values compared", c.compared)
	}
}

// reportRuns decodes the report's JSON (the contract the SQL is checked
// against) into run_id → run object.
func reportRuns(t *testing.T, rep *analyze.Report) map[string]map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := render.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, r := range doc.Runs {
		id := r["run_id"].(string)
		if strings.TrimSpace(id) == "" || out[id] != nil {
			t.Fatalf("run id %q empty or repeated", id)
		}
		out[id] = r
	}
	return out
}

func p64(v int64) *int64 { return &v }

// ruleCases sends two hand-made runs exercising the convention's subtle
// rules that the corpus does not: a role-only first chunk, usage and [DONE]
// messages (not responses), multi-token chunks (ITL split), reasoning-only
// responses (TTFT at reasoning, TTFO at content), N = 1 (TPOT undefined,
// vacuous for goodput), N from server usage, from the tool, and from the
// chunk count, a request without events (offsets from the request row),
// empty, failed and cancelled requests, a failed request's partial stream
// (no ITL samples), streaming inferred from the
// responses (null flag), and a non-streaming run (no TPOT, TTST, ITL).
func ruleCases(s formats.Sink) error {
	const run = "rules/streaming-unknown"
	t0 := int64(1_700_000_000_000_000_000)
	ev := func(key int64, idx int32, kind string, offMs float64, tokens int32, reasoning string) formats.Event {
		e := formats.Event{RunID: run, RequestKey: key, Index: idx, ReadIndex: idx, OffsetNs: int64(offMs * 1e6), Kind: kind,
			HasChoices: kind != formats.KindUsage && kind != formats.KindDone}
		if tokens > 0 {
			e.Tokens = &tokens
		}
		if reasoning != "" {
			e.ReasoningText = &reasoning
		}
		return e
	}
	type rq struct {
		r  formats.Request
		ev []formats.Event
	}
	reqs := []rq{
		{formats.Request{Status: "ok", OutputTokens: p64(5), OutputTokensSource: "server_usage", InputTokens: p64(100)},
			[]formats.Event{ev(0, 0, "role", 10, 0, ""), ev(0, 1, "content", 100, 1, ""), ev(0, 2, "content", 160, 3, ""),
				ev(0, 3, "content", 190, 1, ""), ev(0, 4, "usage", 200, 0, ""), ev(0, 5, "done", 201, 0, "")}},
		{formats.Request{Status: "ok", InputTokens: p64(50), FirstContentOffsetNs: p64(120e6)},
			[]formats.Event{ev(1, 0, "role", 5, 0, ""), ev(1, 1, "reasoning", 50, 0, "hm"), ev(1, 2, "reasoning", 80, 0, "ok"),
				ev(1, 3, "content", 120, 0, ""), ev(1, 4, "empty", 130, 0, "")}},
		{formats.Request{Status: "ok", OutputTokens: p64(1), OutputTokensSource: "server_usage", InputTokens: p64(10)},
			[]formats.Event{ev(2, 0, "content", 40, 0, "")}},
		{formats.Request{Status: "empty"}, []formats.Event{ev(3, 0, "role", 30, 0, ""), ev(3, 1, "done", 31, 0, "")}},
		{formats.Request{Status: "error", ErrorCode: p64(500)}, nil},
		{formats.Request{Status: "ok", FirstTokenOffsetNs: p64(70e6), SecondTokenOffsetNs: p64(95e6), LastTokenOffsetNs: p64(400e6),
			TokenMessageCount: 5, OutputTokens: p64(7), OutputTokensSource: "tool_reported"}, nil},
		{formats.Request{Status: "cancelled"}, nil},
		{formats.Request{Status: "ok", TokenMessageCount: 3, FirstTokenOffsetNs: p64(60e6), LastTokenOffsetNs: p64(90e6)}, nil},
		// A failed request whose stream broke after three tokens: counted
		// as failed, its gaps stay out of ITL.
		{formats.Request{Status: "error", ErrorCode: p64(502)},
			[]formats.Event{ev(8, 0, "content", 100, 0, ""), ev(8, 1, "content", 130, 2, ""), ev(8, 2, "content", 170, 0, ""), ev(8, 3, "error", 171, 0, "")}},
	}
	for i := range reqs {
		r := &reqs[i].r
		r.RunID, r.RequestKey = run, int64(i)
		r.StartNs, r.ClockDomain = p64(t0+int64(i)*250e6), formats.ClockUnix
		if err := formats.SendRow(s, r, reqs[i].ev); err != nil {
			return err
		}
	}
	if err := s.Run(&formats.Run{RunID: run, Tool: "test"}); err != nil {
		return err
	}
	const ns = "rules/non-streaming"
	f := false
	for k := int64(0); k < 3; k++ {
		r := &formats.Request{RunID: ns, RequestKey: k, Status: "ok", StartNs: p64(t0 + k*1e9), ClockDomain: formats.ClockUnix,
			OutputTokens: p64(20 + k), OutputTokensSource: "server_usage", InputTokens: p64(30)}
		e := []formats.Event{{RunID: ns, RequestKey: k, Kind: "content", OffsetNs: 800e6 + k*1e6, HasChoices: true}}
		if err := formats.SendRow(s, r, e); err != nil {
			return err
		}
	}
	if err := s.Run(&formats.Run{RunID: ns, Tool: "test", Streaming: &f}); err != nil {
		return err
	}
	return correctionCases(s, t0)
}

// correctionCases sends a run whose requests name data checks in their
// corrections column: the TTFT repeated as the first gap (vLLM's, fix
// phantom_second_gap, a one-token reply among them), the role-only chunk
// timed as TTFT (first_not_token), a stored re-tokenized count below the
// token messages (raised to them), an unknown code (nothing done), and an
// output count stuck at the requested length (count_not_stuck: N is the
// 4 responses, not 16), times of messages without a token marked with
// tokens 0 (not_token_times), and per-message counts with a BOS each
// (bos_per_chunk).
func correctionCases(s formats.Sink, t0 int64) error {
	const run = "rules/corrections"
	tru := true
	type rq struct {
		code   string
		offsMs []float64
		n      int64
		src    string
	}
	reqs := []rq{
		{"vllm_ttft_in_itls", []float64{500, 1000, 1010, 1020}, 3, formats.SourceToolReported},
		{"vllm_ttft_in_itls", []float64{300, 600}, 1, formats.SourceToolReported},
		{"vllm_role_chunk_ttft", []float64{100, 600, 610, 620, 640}, 4, formats.SourceToolReported},
		{"", []float64{100, 150, 200, 250}, 2, "tokenizer:test"},
		{"no_such_check", []float64{90, 120, 150}, 3, formats.SourceToolReported},
		{"sglang_output_len_stuck", []float64{100, 150, 200, 250}, 16, formats.SourceToolReported},
		// not_token_times: the role chunk (first) and [DONE] (last) timed as
		// tokens, marked with tokens 0
		{"inference_perf_message_times", []float64{40, 41, 60, 80, 100, 100.01}, 4, formats.SourceToolReported},
		// bos_per_chunk: counts 2, 3, 2 (one BOS each): N 1 + 2 + 1 = 4, not 7
		{"inference_perf_bos_per_chunk", []float64{50, 70, 90}, 7, formats.SourceToolReported},
	}
	tok := func(n int32) *int32 { return &n }
	for k, q := range reqs {
		var evs []formats.Event
		for i, o := range q.offsMs {
			evs = append(evs, formats.Event{RunID: run, RequestKey: int64(k), Index: int32(i), ReadIndex: int32(i), OffsetNs: int64(o * 1e6),
				Kind: formats.KindContent, HasChoices: true})
			switch {
			case q.code == "inference_perf_message_times" && (i == 0 || i == len(q.offsMs)-1):
				evs[i].Tokens = tok(0)
			case q.code == "inference_perf_bos_per_chunk":
				evs[i].Tokens = tok([]int32{2, 3, 2}[i])
			}
		}
		r := &formats.Request{RunID: run, RequestKey: int64(k), StartNs: p64(t0 + int64(k)*2e9), ClockDomain: formats.ClockUnix,
			Corrections: q.code, OutputTokens: p64(q.n), OutputTokensSource: q.src}
		formats.FillFromEvents(r, evs)
		if err := formats.SendRow(s, r, evs); err != nil {
			return err
		}
	}
	return s.Run(&formats.Run{RunID: run, Tool: "test", Streaming: &tru})
}

// scheduledKey reports whether key is a Scheduled metric's: the report
// leaves it out of a run without intended starts, the SQL gives n = 0.
func scheduledKey(key string) bool {
	for _, x := range analyze.Table {
		if x.Key == key {
			return x.Scheduled
		}
	}
	return false
}
