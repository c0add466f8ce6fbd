package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
)

const joinedDir = "../../testdata/joined/aiperf-vllm"

// TestServerJoinEndToEnd: an AIPerf client trace and vLLM OTLP spans
// (testdata/joined/aiperf-vllm, constructed from the documented formats;
// SOURCE.md gives every value) through `analyze --server-log`: the joined
// rows land in requests.parquet with the server's values, and report.json's
// server_join section has the hand-computed decomposition.
func TestServerJoinEndToEnd(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "analyze", filepath.Join(joinedDir, "profile_export.jsonl"),
		"--server-log", filepath.Join(joinedDir, "vllm-spans.json"), "-o", dir, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	sj := rep.ServerJoin
	if sj == nil {
		t.Fatal("no server_join section")
	}
	// 5 client requests, 5 server records: req-0001..3 by id (X-Request-Id
	// "req-0001" ↔ "chatcmpl-req-0001"), the 4th (no X-Request-Id) by time
	// and tokens, req-0005 has no server record, chatcmpl-req-0099 no client
	if sj.ClientRequests != 5 || sj.ServerRecords != 5 || sj.Matched["request_id"] != 3 || sj.Matched["time_tokens"] != 1 ||
		sj.UnmatchedClients != 1 || sj.UnmatchedServers != 1 {
		t.Fatalf("join counts: %+v", sj)
	}
	// every span arrives 2 ms after the send; server end = client end − 2 ms
	if len(sj.ClockOffsets) != 1 {
		t.Fatalf("offsets %+v", sj.ClockOffsets)
	}
	o := sj.ClockOffsets[0]
	if o.N != 4 || o.MedianMs != 2 || o.LoMs != -2 || o.HiMs != 2 || !o.Consistent {
		t.Fatalf("offset %+v", o)
	}
	d := sj.Decomposition
	// hand-computed (SOURCE.md): TTFT 120, 250, 90, 100; queue 10, 150, 30,
	// 5; prefill 80, 60, 70, 60 → remainder 30, 40, −10, 35
	if d.N != 4 || d.NegativeRemainder != 1 || d.NotDecomposable != 0 {
		t.Fatalf("decomposition counts %+v", d)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("mean TTFT", d.TTFTMs.Mean, (120+250+90+100)/4.0)
	near("mean queue", d.QueueMs.Mean, (10+150+30+5)/4.0)
	near("mean prefill", d.PrefillMs.Mean, (80+60+70+60)/4.0)
	near("mean remainder", d.RemainderMs.Mean, (30+40-10+35)/4.0)
	near("min remainder", d.RemainderMs.Min, -10)
	near("p50 remainder", d.RemainderMs.Value(0.5), 32.5) // sorted −10, 30, 35, 40
	near("mean decode", d.DecodeMs.Mean, 80)
	// P99 TTFT (linear) = 120 + 0.97·(250 − 120) = 246.1: only request 2
	// (250 ms: queue 150, prefill 60, remainder 40)
	tl := d.Tail
	if tl == nil || tl.N != 1 || tl.Driver != "queue" {
		t.Fatalf("tail %+v", tl)
	}
	near("tail threshold", float64(tl.ThresholdMs), 246.1)
	near("queue share", float64(tl.QueueShare), 0.6)
	near("prefill share", float64(tl.PrefillShare), 0.24)
	near("remainder share", float64(tl.RemainderShare), 0.16)

	// the tables: client rows carry the server's values and the quality
	var c formats.Collector
	if err := formats.ReadTables(dir, &c); err != nil {
		t.Fatal(err)
	}
	type want struct {
		quality, id     string
		queueMs, prefMs int64
		remMs           int64 // TTFT − queue − prefill, from the table's columns
	}
	wants := []want{{"request_id", "chatcmpl-req-0001", 10, 80, 30}, {"request_id", "chatcmpl-req-0002", 150, 60, 40},
		{"request_id", "chatcmpl-req-0003", 30, 70, -10}, {"time_tokens", "chatcmpl-0c1d2e3f4a5b6c7d", 5, 60, 35}, {"", "", 0, 0, 0}}
	var clients, servers []formats.Request
	for _, r := range c.Requests {
		if r.StartNs != nil {
			clients = append(clients, r)
		} else {
			servers = append(servers, r)
		}
	}
	if len(clients) != 5 || len(servers) != 5 {
		t.Fatalf("%d client rows, %d server rows", len(clients), len(servers))
	}
	for i, w := range wants {
		r := clients[i]
		if r.MatchQuality != w.quality || r.ServerRequestID != w.id {
			t.Errorf("client %d: quality %q id %q, want %q %q", i, r.MatchQuality, r.ServerRequestID, w.quality, w.id)
			continue
		}
		if w.quality == "" {
			if r.ServerQueueNs != nil || r.ServerKind != "" {
				t.Errorf("unmatched client %d has server values", i)
			}
			continue
		}
		if *r.ServerQueueNs != w.queueMs*1e6 || *r.ServerPrefillNs != w.prefMs*1e6 || r.ServerKind != "vllm.otlp_span" {
			t.Errorf("client %d: queue %d prefill %d kind %q", i, *r.ServerQueueNs, *r.ServerPrefillNs, r.ServerKind)
		}
		// the per-request split is in the table (formats/SCHEMA.md's query)
		if rem := *r.FirstTokenOffsetNs - *r.ServerQueueNs - *r.ServerPrefillNs; rem != w.remMs*1e6 {
			t.Errorf("client %d: remainder %d ns, want %d ms", i, rem, w.remMs)
		}
	}
	matchedServers := 0
	for _, r := range servers {
		if r.MatchQuality != "" {
			matchedServers++
		} else if r.ServerRequestID != "chatcmpl-req-0099" {
			t.Errorf("server %s unmatched", r.ServerRequestID)
		}
	}
	if matchedServers != 4 {
		t.Errorf("%d matched server rows, want 4", matchedServers)
	}

	// report DIR recomputes the same section from the written tables
	again, err := run(t, "report", dir, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep2 analyze.Report
	if err := json.Unmarshal([]byte(again), &rep2); err != nil {
		t.Fatal(err)
	}
	if sj2 := rep2.ServerJoin; sj2 == nil || sj2.Decomposition.N != 4 || sj2.Decomposition.RemainderMs.Mean != d.RemainderMs.Mean ||
		sj2.UnmatchedClients != 1 || sj2.UnmatchedServers != 1 || sj2.Matched["time_tokens"] != 1 || len(sj2.ClockOffsets) != 1 || sj2.ClockOffsets[0] != o {
		t.Errorf("report from tables: %+v", rep2.ServerJoin)
	}

	// the text report shows the section and flags the negative remainder
	txt, err := run(t, "analyze", filepath.Join(joinedDir, "profile_export.jsonl"),
		"--server-log", filepath.Join(joinedDir, "vllm-spans.json"), "-o", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Server join", "matched 4 of 5 client requests", "driven by queue", "1 of 4 decomposed requests have a negative remainder"} {
		if !strings.Contains(txt, s) {
			t.Errorf("text report lacks %q", s)
		}
	}
}

// TestServerJoinRequestLog joins the same client trace to vLLM's request
// log: ids only (the engine's "-<8 hex>" suffix stripped), arrival at 1 s
// resolution, nothing to decompose.
func TestServerJoinRequestLog(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "analyze", filepath.Join(joinedDir, "profile_export.jsonl"),
		"--server-log", filepath.Join(joinedDir, "vllm-request.log"), "-o", dir, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	sj := rep.ServerJoin
	if sj == nil || sj.ServerRecords != 3 || sj.Matched["request_id"] != 3 || sj.UnmatchedClients != 2 || sj.UnmatchedServers != 0 {
		t.Fatalf("join %+v", sj)
	}
	if d := sj.Decomposition; d == nil || d.N != 0 || d.NotDecomposable != 3 {
		t.Fatalf("decomposition %+v", sj.Decomposition)
	}
}

// TestServerJoinRealOTLPClientAndServerSpans: the real OpenLLMetry +
// vLLM spans (testdata/server-logs/anud18-trace-samples): the two server
// spans are children of two client spans (same trace id).
func TestServerJoinRealOTLPClientAndServerSpans(t *testing.T) {
	p := "../../testdata/server-logs/anud18-trace-samples/sample_openllmetry_spans.jsonl"
	out, err := run(t, "analyze", p, "--server-log", p, "-o", t.TempDir(), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	sj := rep.ServerJoin
	if sj == nil || sj.ClientRequests != 3 || sj.Matched["trace_id"] != 2 || sj.UnmatchedClients != 1 {
		t.Fatalf("join %+v", sj)
	}
	// only the streamed client span is decomposed: its first chunk event
	// is 76.633856 ms after the span start (1782187866678571527 −
	// 1782187866601937580 = 76633947 ns), the server queue 0.006080 ms
	// (6.079673767089844e-06 s) and prefill 66.375794 ms
	d := sj.Decomposition
	if d.N != 1 || d.NotDecomposable != 1 {
		t.Fatalf("decomposition %+v", d)
	}
	if want := 76.633947 - 0.006080 - 66.375794; math.Abs(d.RemainderMs.Mean-want) > 1e-6 {
		t.Errorf("remainder %v, want %v", d.RemainderMs.Mean, want)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}

// A server log without per-request timing is recognized and named in the
// section's notes (not mis-parsed); a missing log is an error.
func TestServerJoinNoTimingLog(t *testing.T) {
	out, err := run(t, "analyze", filepath.Join(joinedDir, "profile_export.jsonl"),
		"--server-log", "../../testdata/server-logs/sglang-metrics-pr1853/metrics-excerpt.prom", "-o", t.TempDir(), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	sj := rep.ServerJoin
	if sj == nil || sj.ServerRecords != 0 || sj.UnmatchedClients != 5 || len(sj.Notes) == 0 || !strings.Contains(sj.Notes[0], "no per-request timing: a Prometheus exposition") {
		t.Fatalf("%+v", sj)
	}
	if _, err := run(t, "analyze", filepath.Join(joinedDir, "profile_export.jsonl"), "--server-log", "nonexistent.log", "-o", t.TempDir()); err == nil || !strings.Contains(err.Error(), "nonexistent.log") {
		t.Fatalf("err = %v", err)
	}
}

// A --server-log file that yields no server record and is not a
// recognized log without per-request timing is an error naming the file:
// a client trace given as --server-log (also given as the input, or a
// copy), a JSON export cut before its first complete span. A cut export
// with complete spans imports them, with a warning naming the position.
func TestServerJoinNotAServerLog(t *testing.T) {
	client := filepath.Join(joinedDir, "profile_export.jsonl")
	cp := filepath.Join(t.TempDir(), "copy.jsonl")
	data, err := os.ReadFile(client)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, log := range []string{client, cp} {
		_, err := run(t, "analyze", client, "--server-log", log, "-o", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), log) || !strings.Contains(err.Error(), "no server records") ||
			!strings.Contains(err.Error(), "5 lines (first: line 1) match no server") || !strings.Contains(err.Error(), "aiperf") {
			t.Errorf("--server-log %s: err = %v", log, err)
		}
	}
	spans, err := os.ReadFile(filepath.Join(joinedDir, "vllm-spans.json"))
	if err != nil {
		t.Fatal(err)
	}
	head := filepath.Join(t.TempDir(), "head.json")
	if err := os.WriteFile(head, spans[:300], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "analyze", client, "--server-log", head, "-o", t.TempDir()); err == nil || !strings.Contains(err.Error(), head) ||
		!strings.Contains(err.Error(), "cut at byte 300 (line 20)") {
		t.Errorf("cut head: err = %v", err)
	}
	half := filepath.Join(t.TempDir(), "half.json")
	if err := os.WriteFile(half, spans[:len(spans)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "analyze", client, "--server-log", half, "-o", t.TempDir(), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// spans 1 and 2 are complete in the first half (req-0001, req-0002)
	sj := rep.ServerJoin
	if sj == nil || sj.ServerRecords != 2 || sj.Matched["request_id"] != 2 || !strings.Contains(strings.Join(sj.Notes, "\n"), "cut at byte 4492 (line 200)") {
		t.Fatalf("half: %+v", sj)
	}
}

// The directory holding the client trace and its server logs gives the
// same join as the client file: a --server-log file found again in the
// directory is not imported twice, the directory's other server log
// (vllm-request.log) is not joined but named in the notes, and make.py is
// not a server log (no run "make").
func TestServerJoinDirectoryInput(t *testing.T) {
	spans := filepath.Join(joinedDir, "vllm-spans.json")
	get := func(input string) *analyze.Report {
		t.Helper()
		out, err := run(t, "analyze", input, "--server-log", spans, "-o", t.TempDir(), "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		var rep analyze.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return &rep
	}
	file, dir := get(filepath.Join(joinedDir, "profile_export.jsonl")), get(joinedDir)
	var runs []string
	for _, r := range dir.Runs {
		runs = append(runs, r.RunID)
	}
	if len(runs) != 1 || runs[0] != "aiperf-vllm" {
		t.Errorf("runs from the directory: %q", runs)
	}
	a, b := file.ServerJoin, dir.ServerJoin
	if b.ClientRequests != 5 || b.ServerRecords != 5 || b.Matched["request_id"] != 3 || b.Matched["time_tokens"] != 1 || b.UnmatchedServers != 1 {
		t.Fatalf("directory join %+v", b)
	}
	if a.ClientRequests != b.ClientRequests || a.ServerRecords != b.ServerRecords || len(a.Matched) != len(b.Matched) ||
		a.UnmatchedClients != b.UnmatchedClients || a.UnmatchedServers != b.UnmatchedServers || a.AmbiguousKeys != b.AmbiguousKeys ||
		a.ClockOffsets[0] != b.ClockOffsets[0] || !sameJSON(t, a.Decomposition.RemainderMs, b.Decomposition.RemainderMs) {
		t.Errorf("file %+v\ndirectory %+v", a, b)
	}
	notes := strings.Join(b.Notes, "\n")
	if !strings.Contains(notes, "vllm-request.log") || strings.Contains(notes, "vllm-spans.json") {
		t.Errorf("notes %q", b.Notes)
	}
}

// The request log's arrivals are stamped to the second: the clock-offset
// bound allows the true offset (0: one clock, 2 ms network) — θ ≤ +500 ms,
// not −500 ms as before (join.TestOffsetsResolution has the arithmetic).
func TestServerJoinRequestLogOffset(t *testing.T) {
	out, err := run(t, "analyze", filepath.Join(joinedDir, "profile_export.jsonl"),
		"--server-log", filepath.Join(joinedDir, "vllm-request.log"), "-o", t.TempDir(), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	o := rep.ServerJoin.ClockOffsets
	if len(o) != 1 || o[0].N != 3 || o[0].MedianMs != 0 || o[0].HiMs != 500 || o[0].ResolutionMs != 1000 || !o[0].Consistent {
		t.Fatalf("offsets %+v", o)
	}
	// no pair has the server's end: no lower bound (null)
	var raw struct {
		ServerJoin struct {
			ClockOffsets []map[string]any `json:"clock_offsets"`
		} `json:"server_join"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if lo, ok := raw.ServerJoin.ClockOffsets[0]["lo_ms"]; !ok || lo != nil {
		t.Errorf("lo_ms = %v (present %v), want null", lo, ok)
	}
}

// TestServerJoinYearFromTheClientTrace: vLLM's request-log timestamps have
// no year; they take the client trace's, so the join does not depend on
// the log file's modification date (a checkout in another year once put
// the server a year away: a 365-day "clock offset").
func TestServerJoinYearFromTheClientTrace(t *testing.T) {
	for _, year := range []int{2019, 2027} {
		dir := t.TempDir()
		for _, f := range []string{"profile_export.jsonl", "vllm-request.log"} {
			b, err := os.ReadFile(filepath.Join(joinedDir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		stamp := time.Date(year, 3, 1, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(filepath.Join(dir, "vllm-request.log"), stamp, stamp); err != nil {
			t.Fatal(err)
		}
		out, err := run(t, "analyze", filepath.Join(dir, "profile_export.jsonl"),
			"--server-log", filepath.Join(dir, "vllm-request.log"), "-o", t.TempDir(), "--format", "json", "--no-plots")
		if err != nil {
			t.Fatal(err)
		}
		var rep analyze.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if o := rep.ServerJoin.ClockOffsets; len(o) != 1 || o[0].MedianMs != 0 || o[0].N != 3 {
			t.Errorf("log dated %d: offsets %+v", year, o)
		}
	}
}

// sameJSON compares two values by their JSON (NaN statistics are null on
// both sides, where reflect.DeepEqual calls NaN unequal to itself).
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
