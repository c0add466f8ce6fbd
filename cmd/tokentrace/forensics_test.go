package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
)

const run524 = "../../testdata/aiperf/llama31-8b-cloudflare-agent-c2-524errors"

func reportJSON(t *testing.T, args ...string) *analyze.Report {
	t.Helper()
	out, err := run(t, append([]string{"report", "--format", "json"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// TestFailuresOnTheClock524: the bundled AIPerf run's ten HTTP 524 errors
// on the clock. AIPerf writes their end = start, so their ends are
// unknown; the run is closed-loop at concurrency 2, so each is bounded by
// the next start into its slot, about 125 s later (request 35 at
// 22:44:07.928 until request 38 starts at 22:46:13.026: 125.098 s). Seven
// of them (keys 35, 37–42) came between two completed requests: one
// burst, 22:44:07.928–22:50:23.106 UTC.
func TestFailuresOnTheClock524(t *testing.T) {
	rr := reportJSON(t, run524).Runs[0]
	f := rr.Failures
	if f == nil || len(f.Requests) != 10 || rr.ClockDomain != "unix" {
		t.Fatalf("failures %+v", f)
	}
	var bursts [][]int64
	for _, b := range f.Bursts {
		bursts = append(bursts, b.Keys)
	}
	if !slices.EqualFunc(bursts, [][]int64{{0}, {28}, {35, 37, 38, 39, 40, 41, 42}, {53}}, slices.Equal) {
		t.Errorf("bursts %v", bursts)
	}
	b := f.Bursts[2]
	if b.Count != 7 || b.From != "2026-07-29T22:44:07.928Z" || b.To != "2026-07-29T22:50:23.106Z" ||
		b.Kind != "error 524: HTML page: trycloudflare.com | 524: A timeout occurred" || b.OtherKinds != 0 {
		t.Errorf("burst %+v", b)
	}
	r := f.Requests[2]
	if r.Key != 35 || r.ID != "session_000036/0" || r.Start != "2026-07-29T22:44:07.928Z" || r.Code != "524" || r.HeldBoundRule != formats.EndSlotReused ||
		fmt.Sprintf("%.3f", float64(r.HeldBoundMs)) != "125098.044" || r.InFlightAtStart != 2 {
		t.Errorf("request 35: %+v", r)
	}
	if in := rr.InFlight; in.Max != 2 || in.Concurrency != 2 || in.UnknownEnd != 10 || in.Bounds[formats.EndSlotReused] != 10 {
		t.Errorf("in flight %+v", in)
	}
	// the writers fill the same into the requests table
	dir := t.TempDir()
	if _, err := run(t, "import", run524, "-o", dir); err != nil {
		t.Fatal(err)
	}
	var c formats.Collector
	if err := formats.ReadTables(dir, &c); err != nil {
		t.Fatal(err)
	}
	for _, q := range c.Requests {
		if q.RequestKey == 35 && (q.InFlightAtStart == nil || *q.InFlightAtStart != 2 || q.EndBoundRule != formats.EndSlotReused || *q.EndBoundOffsetNs != 125098043723) {
			t.Errorf("table row 35: in flight %v rule %q bound %v", q.InFlightAtStart, q.EndBoundRule, q.EndBoundOffsetNs)
		}
		if q.RequestKey == 1 && (*q.InFlightAtStart != 2 || q.EndBoundRule != "" || q.EndBoundOffsetNs != nil) {
			t.Errorf("table row 1: %v %q", *q.InFlightAtStart, q.EndBoundRule)
		}
	}
	// the tables report the same failures
	if got := reportJSON(t, dir).Runs[0].Failures; len(got.Requests) != 10 || got.Bursts[2].Count != 7 {
		t.Errorf("from tables: %+v", got)
	}
}

// TestTrimOnTheCorpus: --trim auto on every bundled run with request
// start times: it either keeps a steady window (kept + left out = the
// run's requests, the window inside the run) or, for a run without start
// times, reports all of it with a warning.
func TestTrimOnTheCorpus(t *testing.T) {
	dirs, _ := filepath.Glob("../../testdata/*/*")
	checked := 0
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() || strings.Contains(d, "server-logs") || strings.Contains(d, "joined") {
			continue
		}
		full := reportJSON(t, d)
		trimmed := reportJSON(t, "--trim", "auto", d)
		for i, rr := range trimmed.Runs {
			total := full.Runs[i].Requests.Total
			s := rr.Selection
			if full.Runs[i].FirstStartNs == nil {
				if s != nil || total > 0 && !hasWarning(rr, "selection_not_applied") {
					t.Errorf("%s %s: no start times, selection %+v", d, rr.RunID, s)
				}
				continue
			}
			left := 0
			for _, l := range s.LeftOut {
				left += l.Count
			}
			if s.Kept+left != total || s.Kept != rr.Requests.Total || s.Kept == 0 || s.Trim == nil || s.Trim.PeakInFlight < 1 {
				t.Errorf("%s %s: kept %d + left %d ≠ %d (report %d) %+v", d, rr.RunID, s.Kept, left, total, rr.Requests.Total, s.Trim)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("trimmed %d corpus runs", checked)
	}
}

func hasWarning(rr *analyze.RunReport, code string) bool {
	for _, w := range rr.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}

// TestServerSeriesBesideARun: a Prometheus range query over the 524 run's
// span, given beside it, is attached to it: the failures and the slowest
// requests show the engine's queue (the sum over engines) and KV cache (the
// fullest engine) at their start; a series on another span is not.
func TestServerSeriesBesideARun(t *testing.T) {
	dir := t.TempDir()
	// samples every 60 s from 22:10 to 23:50 UTC; engine 0 waits 2, engine
	// 1 waits 5 from 22:44:00 on (0 before); KV 0.4 and 0.9. The run's span
	// (22:10:40 − 5 min to 23:45:24) holds 96 samples of each.
	var w0, w1, kv0, kv1 []string
	for ts := int64(1785363000); ts <= 1785369000; ts += 60 {
		wait1 := 0
		if ts >= 1785364920+120 {
			wait1 = 5
		}
		w0 = append(w0, fmt.Sprintf(`[%d,"2"]`, ts))
		w1 = append(w1, fmt.Sprintf(`[%d,"%d"]`, ts, wait1))
		kv0 = append(kv0, fmt.Sprintf(`[%d,"0.4"]`, ts))
		kv1 = append(kv1, fmt.Sprintf(`[%d,"0.9"]`, ts))
	}
	series := func(name, engine string, vals []string) string {
		return fmt.Sprintf(`{"metric":{"__name__":%q,"engine":%q},"values":[%s]}`, name, engine, strings.Join(vals, ","))
	}
	doc := `{"status":"success","data":{"resultType":"matrix","result":[` + strings.Join([]string{
		series("vllm:num_requests_waiting", "0", w0), series("vllm:num_requests_waiting", "1", w1),
		series("vllm:kv_cache_usage_perc", "0", kv0), series("vllm:kv_cache_usage_perc", "1", kv1)}, ",") + `]}}`
	prom := filepath.Join(dir, "prom.json")
	must(t, os.WriteFile(prom, []byte(doc), 0o644))
	rep := reportJSON(t, "--top", "2", run524, prom)
	rr := rep.Runs[0]
	if len(rr.Series) != 2 || rr.Series[0].Metric != "vllm:kv_cache_usage_perc" || rr.Series[0].LabelSets != 2 || rr.Series[1].Role != "waiting" || rr.Series[1].Run != "prom" {
		t.Fatalf("series %+v", rr.Series)
	}
	r0 := rr.Failures.Requests[0]  // 22:10:40: the 22:10:00 samples, 2 + 0
	r28 := rr.Failures.Requests[1] // 22:39:19: 2 + 0
	r35 := rr.Failures.Requests[2] // 22:44:07.9: the 22:44:00 samples, 2 + 5
	if r0.EngineWaiting != 2 || r0.EngineKVCachePct != 90 || r28.EngineWaiting != 2 || r35.EngineWaiting != 7 {
		t.Errorf("engine at start: %v %v %v %v", r0.EngineWaiting, r0.EngineKVCachePct, r28.EngineWaiting, r35.EngineWaiting)
	}
	if s := rr.Slowest; s == nil || len(s.ByTTFT) != 2 || s.ByTTFT[0].EngineWaiting != 7 {
		t.Errorf("slowest %+v", s)
	}
	// the series-only run itself has no requests and no forensic sections
	if p := rep.Runs[1]; p.Tool != "prometheus" || p.Requests.Total != 0 || p.Failures != nil {
		t.Errorf("prometheus run %+v", p)
	}
	out, err := run(t, "report", run524, prom)
	if err != nil || !strings.Contains(out, "series beside the run: vllm:kv_cache_usage_perc (2 label set(s), 192 points, from run prom), vllm:num_requests_waiting (2 label set(s), 192 points, from run prom)") {
		t.Errorf("text: %v\n%s", err, out)
	}
}

// TestReportTimeFlags: windows as CSV, the flags' errors.
func TestReportTimeFlags(t *testing.T) {
	out, err := run(t, "report", run524, "--window", "30m", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// 22:00 … 23:30: four 30-minute windows
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "run_id,width_s,by,start_ns,start,offset_s,started") ||
		!strings.HasPrefix(lines[1], "llama31-8b-cloudflare-agent-c2-524errors,1800,start,1785362400000000000,2026-07-29T22:00:00.000Z,") {
		t.Errorf("csv:\n%s", out)
	}
	var ue usageError
	for _, args := range [][]string{
		{"--format", "csv"}, {"--window", "0s"}, {"--since", "yesterday"}, {"--trim", "auto:2"}, {"--by", "middle"}, {"--tz", "Mars/Olympus"}, {"--top", "-1"},
	} {
		if _, err := run(t, append([]string{"report", run524}, args...)...); err == nil || !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	out, err = run(t, "report", run524, "--since", "2026-07-29T22:44:00Z", "--until", "2026-07-29T22:51:00Z", "--tz", "Europe/Paris")
	if err != nil || !strings.Contains(out, "selection: requests by start in [00:44:00.000, 00:51:00.000) Europe/Paris: 7 kept; left out: 36 before --since, 57 after --until") ||
		!strings.Contains(out, "burst: 7 failures 00:44:07.928–00:50:23.106 Europe/Paris") {
		t.Errorf("%v\n%s", err, out)
	}
}

// traceCheck is the independent reader of exported traces: the Chrome
// DevTools trace model from npm (tools/trace-check).
type traceCheck struct {
	Events    int `json:"events"`
	Processes []struct {
		PID     int `json:"pid"`
		Threads []struct {
			TID    int            `json:"tid"`
			Name   string         `json:"name"`
			Slices map[string]int `json:"slices"`
		} `json:"threads"`
	} `json:"processes"`
	Counters map[string]int `json:"counters"`
}

func readTrace(t *testing.T, path string) *traceCheck {
	t.Helper()
	node, errNode := exec.LookPath("node")
	_, errMod := os.Stat("../../tools/trace-check/node_modules/@paulirish/trace_engine/package.json")
	if errNode != nil || errMod != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or tools/trace-check/node_modules missing on CI (%v, %v)", errNode, errMod)
		}
		t.Skip("node or tools/trace-check/node_modules missing (run: npm ci --prefix tools/trace-check); skipping the independent trace reader")
	}
	out, err := exec.Command(node, "../../tools/trace-check/check.mjs", path).Output()
	if err != nil {
		t.Fatalf("trace reader: %v", err)
	}
	var tc traceCheck
	if err := json.Unmarshal(out, &tc); err != nil {
		t.Fatalf("trace reader output: %v\n%s", err, out)
	}
	return &tc
}

// TestPerfettoExportReadByDevTools: export --format perfetto of the 524
// run (and a Prometheus dump beside it), read back by the Chrome DevTools
// trace model: one process with two slot threads (concurrency 2), a
// prefill slice per request with a first token, a decode slice per request
// whose last token came after its first, an "error 524 (end not
// recorded)" slice and an "error 524" marker per failure, the in-flight
// counters and each series as a counter track with all its points — the
// counts taken from the written tables and the JSON itself, not from the
// exporter.
func TestPerfettoExportReadByDevTools(t *testing.T) {
	dir := t.TempDir()
	prom := filepath.Join(dir, "prom.json")
	must(t, os.WriteFile(prom, []byte(`{"status":"success","data":{"resultType":"matrix","result":[`+
		`{"metric":{"__name__":"vllm:num_requests_waiting","engine":"0"},"values":[[1785363060,"1"],[1785364000,"3"],[1785365000,"NaN"]]}]}}`), 0o644))
	trace := filepath.Join(dir, "trace.json")
	out, err := run(t, "export", run524, prom, "--format", "perfetto", "-o", trace)
	if err != nil || !strings.Contains(out, "exported 1 run (100 requests) and 1 series-only run to") {
		t.Fatalf("%v: %s", err, out)
	}
	// expectations from the tables
	tables := filepath.Join(dir, "tables")
	if _, err := run(t, "import", run524, "-o", tables); err != nil {
		t.Fatal(err)
	}
	var c formats.Collector
	must(t, formats.ReadTables(tables, &c))
	prefill, decode, failed, maxInFlight := 0, 0, 0, int64(0)
	for _, r := range c.Requests {
		if r.FirstTokenOffsetNs != nil {
			prefill++
			if r.LastTokenOffsetNs != nil && *r.LastTokenOffsetNs > *r.FirstTokenOffsetNs {
				decode++
			}
		} else if r.Status != formats.StatusOK {
			failed++
		}
		maxInFlight = max(maxInFlight, *r.InFlightAtStart)
	}
	// counters as written
	raw, err := os.ReadFile(trace)
	must(t, err)
	var doc struct {
		TraceEvents []struct{ Name, Ph string } `json:"traceEvents"`
		Metadata    map[string]any              `json:"metadata"`
	}
	must(t, json.Unmarshal(raw, &doc))
	written := map[string]int{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "C" {
			written[e.Name]++
		}
	}
	tc := readTrace(t, trace)
	if tc.Events != len(doc.TraceEvents) || len(tc.Processes) != 1 || len(tc.Processes[0].Threads) != int(maxInFlight) || maxInFlight != 2 {
		t.Fatalf("reader: %d events (%d written), processes %+v", tc.Events, len(doc.TraceEvents), tc.Processes)
	}
	got := map[string]int{}
	for _, th := range tc.Processes[0].Threads {
		if !strings.HasPrefix(th.Name, "slot ") {
			t.Errorf("thread %q", th.Name)
		}
		for n, k := range th.Slices {
			got[n] += k
		}
	}
	want := map[string]int{"prefill": prefill, "decode": decode, "error 524 (end not recorded)": failed, "error 524": failed}
	if prefill != 90 || failed != 10 || !maps.Equal(got, want) {
		t.Errorf("slices %v, want %v", got, want)
	}
	if !maps.Equal(tc.Counters, written) || written["in flight"] < 100 || written["vllm:num_requests_waiting{engine=\"0\"}"] != 2 {
		t.Errorf("counters read %v, written %v", tc.Counters, written)
	}
	if doc.Metadata["series_points_not_finite"] != 1.0 {
		t.Errorf("metadata %v", doc.Metadata)
	}
}

// TestForensicsOnTheCorpus: windows, failures and the ITL attribution on
// every bundled run with start times, checked for what must hold whatever
// the data: each window's requests add up by status and over the windows
// to the run's; a window's percentile is given exactly when it has enough
// values; the failures listed are the run's failed, cancelled and empty
// requests, each burst's within them; the attribution's counts nest and
// its shares are fractions.
func TestForensicsOnTheCorpus(t *testing.T) {
	dirs, _ := filepath.Glob("../../testdata/*/*")
	runs := 0
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() || strings.Contains(d, "server-logs") || strings.Contains(d, "joined") {
			continue
		}
		for _, rr := range reportJSON(t, "--window", "1m", d).Runs {
			if rr.FirstStartNs == nil {
				continue
			}
			runs++
			started := 0
			for _, w := range rr.Windows.Items {
				started += w.Started
				if w.Completed+w.Failed+w.Cancelled+w.Empty != w.Started || w.InFlightMax > rr.InFlight.Max {
					t.Errorf("%s window %s: %+v", rr.RunID, w.Start, w)
				}
				for _, s := range []analyze.WindowStat{w.TTFT, w.E2E} {
					if math.IsNaN(float64(s.P99)) != (s.N < 100) || math.IsNaN(float64(s.P50)) != (s.N < 2) {
						t.Errorf("%s window %s: %+v", rr.RunID, w.Start, s)
					}
				}
			}
			if started != rr.Requests.Total {
				t.Errorf("%s: windows hold %d requests, the run %d", rr.RunID, started, rr.Requests.Total)
			}
			f := rr.Failures
			inBursts := 0
			for _, b := range f.Bursts {
				inBursts += b.Count
			}
			if n := len(f.Requests) + f.Omitted; n != rr.Requests.Failed+rr.Requests.Cancelled+rr.Requests.Empty || inBursts > n {
				t.Errorf("%s: %d failures listed, %d in bursts, requests %+v", rr.RunID, n, inBursts, rr.Requests)
			}
			if in := rr.Interference; in != nil {
				if in.WithPrefill > in.TailGaps || in.TailGaps > in.AllGaps || in.AllWithPrefill > in.AllGaps || in.AllWithPrefill < in.WithPrefill ||
					in.Share < 0 || in.Share > 1 || in.ExpectedShare < 0 || in.ExpectedShare > 1 || in.AllGaps != rr.Metrics.Of(analyze.ITL).N {
					t.Errorf("%s: interference %+v (ITL n %d)", rr.RunID, in, rr.Metrics.Of(analyze.ITL).N)
				}
			}
		}
	}
	if runs < 10 {
		t.Errorf("%d corpus runs", runs)
	}
}

// TestEngineStatsLogAsSeries: the bundled vLLM 0.25 engine-stats log's
// load lines (runs.load) read as series vllm_log:* (formats.AllSeries),
// and give the engine's queue and KV cache at a moment on the log's local
// clock as its lines say them.
func TestEngineStatsLogAsSeries(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(t, "import", "../../testdata/server-logs/vllm-v0.25-engine-stats-log", "-o", dir); err != nil {
		t.Fatal(err)
	}
	runs, err := formats.ReadRuns(dir)
	if err != nil || len(runs) != 1 || len(runs[0].Load) == 0 {
		t.Fatalf("%v %+v", err, runs)
	}
	l := runs[0].Load[len(runs[0].Load)-1]
	pts := formats.AllSeries(&runs[0])
	e := analyze.NewEngineState(pts, l.ClockDomain)
	w, kv := e.At(*l.TimeNs)
	if l.Waiting == nil || l.GPUKVCachePct == nil || w != float64(*l.Waiting) || kv != *l.GPUKVCachePct {
		t.Errorf("at the last line: waiting %v kv %v, the line says %v %v", w, kv, l.Waiting, l.GPUKVCachePct)
	}
	n := 0
	for _, p := range pts {
		if p.Metric == "vllm_log:waiting" {
			n++
		}
	}
	if n != len(runs[0].Load) {
		t.Errorf("%d waiting points for %d lines", n, len(runs[0].Load))
	}
}
