package formats

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

func ptr[T any](v T) *T { return &v }

// sampleStream sends a table set exercising every column, nulls, empty and
// non-ASCII strings, empty and non-empty lists, batch and row-group
// boundaries, and Run rows delayed past later runs' requests:
//
//	requests of a, requests of b, Run a, Run c (no requests),
//	requests of d, Run d, Run b
//
// nb is the number of requests of run b (each with i%7 events).
func sampleStream(s Sink, nb int) error {
	var evs []Event
	mkEvents := func(run string, key int64, n int) []Event {
		evs = evs[:0]
		for j := 0; j < n; j++ {
			e := Event{
				RunID: run, RequestKey: key, Index: int32(j), ReadIndex: int32(j / 2),
				OffsetNs:   key*1_000_000 + int64(j)*25_000_000,
				Kind:       []string{KindRole, KindContent, KindReasoning, KindContent, KindEmpty, KindUsage, KindDone}[j%7],
				HasChoices: j%7 < 5,
				Bytes:      int32(100 + j),
			}
			switch j % 4 {
			case 0: // both null
			case 1:
				e.Text = ptr("")
			case 2:
				e.Text = ptr("tok" + strconv.Itoa(j))
				e.Tokens = ptr(int32(1))
			case 3:
				e.Text = ptr("é😀\n\"q\"")
				e.ReasoningText = ptr("think " + strconv.FormatInt(key, 10))
				e.Tokens = ptr(int32(0))
			}
			if j == n-1 {
				e.FinishReason = "stop"
			}
			evs = append(evs, e)
		}
		return evs
	}
	req := func(run string, key int64) *Request {
		r := &Request{RunID: run, RequestKey: key, Status: StatusOK, ClockDomain: ClockUnix,
			MessageCount: key % 7, TokenMessageCount: key % 5}
		if key%3 != 0 {
			r.StartNs = ptr(int64(1_700_000_000_000_000_000) + key*1_000_000)
			r.FirstTokenOffsetNs = ptr(int64(20_000_000 + key))
			r.FirstContentOffsetNs = ptr(int64(21_000_000 + key))
			r.SecondTokenOffsetNs = ptr(int64(40_000_000))
			r.LastTokenOffsetNs = ptr(int64(900_000_000))
			r.StreamEndOffsetNs = ptr(int64(901_000_000))
			r.InputTokens, r.InputTokensSource = ptr(int64(128)), SourceToolReported
			r.OutputTokens, r.OutputTokensSource = ptr(key), SourceServerUsage
			r.ReasoningTokens = ptr(int64(0))
			r.MaxTokens = ptr(int64(256))
			r.ReportedTTFTMs = ptr(20.0 + float64(key)/1e6)
			r.ReportedTTFOMs = ptr(21.5)
			r.ReportedTTSTMs = ptr(40.0)
			r.ReportedE2EMs = ptr(901.25)
			r.ReportedITLMs = ptr(2.125)
			r.ReportedOutputTokens = ptr(float64(key))
			r.ReportedInputTokens = ptr(128.0)
			r.ReportedOutputTokensPS = ptr(1234.5)
			r.SourceID = "conv-" + strconv.FormatInt(key, 10)
			r.XRequestID = "x-" + strconv.FormatInt(key, 10)
			r.ResponseID = "chatcmpl-" + strconv.FormatInt(key, 10)
			r.TraceID = "0af7651916cd43dd8448eb211c80319c"
		} else {
			r.ClockDomain = ""
		}
		if key%10 == 9 {
			r.Status, r.ErrorCode, r.ErrorType, r.ErrorText = StatusError, ptr(int64(503)), "http", "Service Unavailable: ünïcode"
		}
		if key%4 == 1 {
			r.ServerFinishReason = "length"
		}
		return r
	}

	// Run a: three requests.
	for k := int64(0); k < 3; k++ {
		if err := SendRow(s, req("a", k), mkEvents("a", k, int(k)+2)); err != nil {
			return err
		}
	}
	// Run b: nb requests.
	for k := int64(0); k < int64(nb); k++ {
		if err := SendRow(s, req("b", k), mkEvents("b", k, int(k%7))); err != nil {
			return err
		}
	}
	runA := &Run{
		RunID: "a", Tool: "genai-perf", ToolVersion: "0.0.15", Model: "Qwen/Qwen3-0.6B",
		Endpoint: "v1/chat/completions", Streaming: ptr(true), LoadMode: "concurrency",
		Concurrency: ptr(4.0), ClockDomain: ClockUnix, Tokenizer: "hf-internal-testing/llama-tokenizer",
		Convention: "genai-perf",
		SourceFiles: []SourceFile{
			{Path: "in/a/profile_export.json", Role: "raw", SHA256: strings.Repeat("ab", 32), Bytes: 123456789},
			{Path: "in/a/profile_export_genai_perf.json", Role: "summary", SHA256: strings.Repeat("0f", 32), Bytes: 2048},
		},
		TokentraceVersion: "0.0.1-test", SchemaVersion: SchemaVersion, RequestCount: 3, Truncated: true,
		Notes:      []string{"truncated at byte 1234", "", "ünïcode note"},
		ConfigJSON: `{"model":"Qwen/Qwen3-0.6B","headers":{"Authorization":"REDACTED"}}`,
		Reported: []ReportedStat{
			{Metric: "time_to_first_token", Stat: "avg", Unit: "ms", Value: ptr(20.5), File: "profile_export_genai_perf.json"},
			{Metric: "request_goodput", Stat: "value", Unit: "", Value: nil, Text: "N/A", File: "profile_export_genai_perf.json"},
		},
	}
	if err := s.Run(runA); err != nil {
		return err
	}
	// Run c: no requests, mostly zero values.
	if err := s.Run(&Run{RunID: "c", Tool: "llmperf", RequestRateRPS: ptr(math.Inf(1)),
		TokentraceVersion: "0.0.1-test", SchemaVersion: SchemaVersion}); err != nil {
		return err
	}
	// Run d: one failed request without events.
	d := &Request{RunID: "d", RequestKey: 0, Status: StatusError, ErrorType: "TimeoutError", ErrorText: ""}
	if err := SendRow(s, d, nil); err != nil {
		return err
	}
	if err := s.Run(&Run{RunID: "d", Tool: "aiperf", Streaming: ptr(false), RequestRateRPS: ptr(2.5),
		LoadMode: "request_rate", TokentraceVersion: "0.0.1-test", SchemaVersion: SchemaVersion,
		RequestCount: 1, Notes: []string{"one"},
		Load: []LoadSample{
			{TimeNs: ptr(int64(1_785_619_449_000_000_000)), ClockDomain: ClockLocal, Running: ptr(int64(4)), Waiting: ptr(int64(2)),
				Swapped: ptr(int64(0)), GPUKVCachePct: ptr(18.7), CPUKVCachePct: ptr(0.0), PrefixCacheHitPct: ptr(97.3),
				PromptTokensPerS: ptr(11.6), GenerationTokensPerS: ptr(17.2)},
			{Running: ptr(int64(0)), Waiting: ptr(int64(0)), GPUKVCachePct: ptr(0.0)}, // no timestamp, V1 fields missing
		}}); err != nil {
		return err
	}
	return s.Run(&Run{RunID: "b", Tool: "genai-perf", TokentraceVersion: "0.0.1-test",
		SchemaVersion: SchemaVersion, RequestCount: int64(nb),
		SourceFiles: []SourceFile{{Path: "b.json", Role: "raw", Bytes: 0}}})
}

// orderCheck is a Sink that fails when the rows it receives break the Sink
// contract (it reuses the writers' checker).
type orderCheck struct{ c sinkChecker }

func (o *orderCheck) Request(r *Request, ev []Event) error { return o.c.request(r, ev) }
func (o *orderCheck) Run(r *Run) error                     { return o.c.run(r) }

func collectSample(t testing.TB, nb int) *Collector {
	t.Helper()
	var c Collector
	if err := sampleStream(&c, nb); err != nil {
		t.Fatal(err)
	}
	fillCollected(&c)
	return &c
}

// fillCollected sets the in-flight columns of c's requests, run by run, as
// the table writers fill them.
func fillCollected(c *Collector) {
	for i := 0; i < len(c.Requests); {
		j := i
		for j < len(c.Requests) && c.Requests[j].RunID == c.Requests[i].RunID {
			j++
		}
		var run *Run
		for k := range c.Runs {
			if c.Runs[k].RunID == c.Requests[i].RunID {
				run = &c.Runs[k]
			}
		}
		FillInFlight(run, c.Requests[i:j])
		i = j
	}
}

func writeSample(t testing.TB, dir string, nb int, opt WriteOptions) {
	t.Helper()
	w, err := NewParquetWriter(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := sampleStream(w, nb); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t testing.TB, dir string) *Collector {
	t.Helper()
	var got Collector
	oc := &orderCheck{}
	if err := ReadTables(dir, Tee(&got, oc)); err != nil {
		t.Fatal(err)
	}
	if err := oc.c.finish(); err != nil {
		t.Fatalf("ReadTables broke the Sink order: %v", err)
	}
	return &got
}

func diffCollectors(t *testing.T, want, got *Collector) {
	t.Helper()
	if len(want.Runs) != len(got.Runs) || len(want.Requests) != len(got.Requests) || len(want.Events) != len(got.Events) {
		t.Fatalf("row counts: got runs/requests/events %d/%d/%d, want %d/%d/%d",
			len(got.Runs), len(got.Requests), len(got.Events), len(want.Runs), len(want.Requests), len(want.Events))
	}
	for i := range want.Runs {
		if !reflect.DeepEqual(want.Runs[i], got.Runs[i]) {
			t.Fatalf("run %d:\n got %+v\nwant %+v", i, got.Runs[i], want.Runs[i])
		}
	}
	for i := range want.Requests {
		if !reflect.DeepEqual(want.Requests[i], got.Requests[i]) {
			t.Fatalf("request %d:\n got %+v\nwant %+v", i, got.Requests[i], want.Requests[i])
		}
	}
	for i := range want.Events {
		if !reflect.DeepEqual(want.Events[i], got.Events[i]) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got.Events[i], want.Events[i])
		}
	}
}

func TestParquetRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  WriteOptions
	}{
		{"default", WriteOptions{}},
		// Small row groups and byte budget: many row groups per file.
		{"small-row-groups", WriteOptions{RowGroupRows: 100, RowGroupBytes: 8 << 10, Compression: CompressionSnappy}},
		{"uncompressed", WriteOptions{Compression: CompressionNone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			const nb = 1500 // > readBatchRows requests and events
			writeSample(t, dir, nb, tc.opt)
			want := collectSample(t, nb)
			got := readAll(t, dir)
			diffCollectors(t, want, got)
			if want.Runs[1].RunID != "c" || got.Runs[3].RunID != "b" {
				t.Fatalf("run order not kept: %q…", got.Runs[0].RunID)
			}
		})
	}
}

func TestParquetEmptyTables(t *testing.T) {
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"events.parquet", "requests.parquet", "runs.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	got := readAll(t, dir)
	if len(got.Runs)+len(got.Requests)+len(got.Events) != 0 {
		t.Fatalf("rows from empty tables: %+v", got)
	}
}

func TestParquetMetadataAndLayout(t *testing.T) {
	dir := t.TempDir()
	writeSample(t, dir, 1500, WriteOptions{RowGroupRows: 500})
	for _, table := range []string{TableEvents, TableRequests, TableRuns} {
		pf := openPF(t, filepath.Join(dir, table+".parquet"))
		for k, want := range map[string]string{
			MetaSchemaVersion: strconv.Itoa(SchemaVersion),
			MetaVersion:       Version,
			MetaTable:         table,
		} {
			if got, ok := pf.Lookup(k); !ok || got != want {
				t.Errorf("%s: %s = %q, %v; want %q", table, k, got, ok, want)
			}
		}
		if id, ok := pf.Lookup(MetaImportID); !ok || len(id) != 32 {
			t.Errorf("%s: %s = %q", table, MetaImportID, id)
		}
		if cb := pf.Metadata().CreatedBy; cb != "tokentrace version "+Version {
			t.Errorf("%s: created_by %q", table, cb)
		}
		for _, rg := range pf.Metadata().RowGroups {
			if rg.NumRows > 500 {
				t.Errorf("%s: row group of %d rows > 500", table, rg.NumRows)
			}
			for _, cc := range rg.Columns {
				if cc.MetaData.Codec != format.Zstd {
					t.Errorf("%s: column %v codec %v", table, cc.MetaData.PathInSchema, cc.MetaData.Codec)
				}
			}
		}
	}
	if n := len(openPF(t, filepath.Join(dir, "events.parquet")).RowGroups()); n < 3 {
		t.Errorf("events.parquet has %d row groups, want several", n)
	}
}

func openPF(t testing.TB, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

func TestParquetNoText(t *testing.T) {
	dir := t.TempDir()
	writeSample(t, dir, 50, WriteOptions{NoText: true})
	want := collectSample(t, 50)
	for i := range want.Events {
		want.Events[i].Text, want.Events[i].ReasoningText = nil, nil
	}
	got := readAll(t, dir)
	diffCollectors(t, want, got)
	// The columns stay in the schema.
	sch := openPF(t, filepath.Join(dir, "events.parquet")).Schema()
	for _, col := range []string{"text", "reasoning_text"} {
		if _, ok := sch.Lookup(col); !ok {
			t.Errorf("column %s dropped from the schema", col)
		}
	}
}

func TestParquetStampsRun(t *testing.T) {
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(&Run{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, dir)
	if r := got.Runs[0]; r.SchemaVersion != SchemaVersion || r.TokentraceVersion != Version {
		t.Fatalf("run not stamped: schema_version=%d tokentrace_version=%q", r.SchemaVersion, r.TokentraceVersion)
	}
}

// dirFiles returns the names and contents of the files in dir.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestParquetAtomic(t *testing.T) {
	t.Run("abort-empty-dir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		w, err := NewParquetWriter(dir, WriteOptions{RowGroupRows: 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := sampleStream(w, 200); err != nil {
			t.Fatal(err)
		}
		w.Abort()
		w.Abort() // idempotent
		if err := w.Close(); err != nil {
			t.Fatalf("Close after Abort: %v", err)
		}
		if files := dirFiles(t, dir); len(files) != 0 {
			t.Fatalf("files left after Abort: %v", slices.Sorted(mapsKeys(files)))
		}
		if err := w.Run(&Run{RunID: "z"}); err == nil {
			t.Fatal("Run after Abort succeeded")
		}
	})

	t.Run("previous-tables-kept-until-close", func(t *testing.T) {
		dir := t.TempDir()
		writeSample(t, dir, 5, WriteOptions{})
		before := dirFiles(t, dir)

		// A second import in progress: previous tables untouched, and
		// only hidden temporaries added.
		w, err := NewParquetWriter(dir, WriteOptions{RowGroupRows: 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := sampleStream(w, 300); err != nil {
			t.Fatal(err)
		}
		during := dirFiles(t, dir)
		for name, b := range before {
			if !bytes.Equal(b, during[name]) {
				t.Fatalf("%s changed before Close", name)
			}
		}
		for name := range during {
			if _, ok := before[name]; !ok && !strings.HasPrefix(name, ".") {
				t.Fatalf("visible file %s before Close", name)
			}
		}
		diffCollectors(t, collectSample(t, 5), readAll(t, dir))

		// Aborted: exactly the old files.
		w.Abort()
		if !sameFiles(before, dirFiles(t, dir)) {
			t.Fatal("directory changed by an aborted import")
		}

		// Committed: the new tables.
		writeSample(t, dir, 300, WriteOptions{})
		after := dirFiles(t, dir)
		if len(after) != 3 {
			t.Fatalf("files after Close: %v", slices.Sorted(mapsKeys(after)))
		}
		diffCollectors(t, collectSample(t, 300), readAll(t, dir))
	})

	// Finish completes the tables without showing them: Close then
	// commits them, Abort discards them; no rows are taken after Finish.
	for _, layout := range []string{LayoutFlat, LayoutHive} {
		t.Run("finish-then-close-or-abort-"+layout, func(t *testing.T) {
			dir := t.TempDir()
			writeSample(t, dir, 5, WriteOptions{Layout: layout})
			for _, commit := range []bool{false, true} {
				w, err := NewParquetWriter(dir, WriteOptions{RowGroupRows: 10, Layout: layout})
				if err != nil {
					t.Fatal(err)
				}
				if err := sampleStream(w, 300); err != nil {
					t.Fatal(err)
				}
				if err := w.Finish(); err != nil {
					t.Fatal(err)
				}
				if err := w.Finish(); err != nil {
					t.Fatalf("second Finish: %v", err)
				}
				if err := w.Run(&Run{RunID: "late"}); err == nil {
					t.Fatal("Run after Finish succeeded")
				}
				diffCollectors(t, collectSample(t, 5), readAll(t, dir)) // not yet visible
				if !commit {
					w.Abort()
					diffCollectors(t, collectSample(t, 5), readAll(t, dir))
					continue
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				diffCollectors(t, collectSample(t, 300), readAll(t, dir))
			}
		})
	}

	t.Run("failed-import", func(t *testing.T) {
		dir := t.TempDir()
		writeSample(t, dir, 5, WriteOptions{})
		before := dirFiles(t, dir)
		w, err := NewParquetWriter(dir, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Requests of run "x" but no Run row: Close must fail.
		if err := w.Request(&Request{RunID: "x"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err == nil || !strings.Contains(err.Error(), `run "x" has requests but no Run row`) {
			t.Fatalf("Close: %v", err)
		}
		if err := w.Close(); err == nil {
			t.Fatal("second Close after a failed Close returned nil")
		}
		if !sameFiles(before, dirFiles(t, dir)) {
			t.Fatal("directory changed by a failed import")
		}
	})
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestParquetWriterSinkContract(t *testing.T) {
	ev := func(run string, key int64) []Event { return []Event{{RunID: run, RequestKey: key}} }
	for _, tc := range []struct {
		name string
		do   func(s Sink) error
		want string
	}{
		{"empty run_id", func(s Sink) error { return SendRow(s, &Request{}, nil) }, "empty run_id"},
		{"empty Run run_id", func(s Sink) error { return s.Run(&Run{}) }, "empty run_id"},
		{"event of another request", func(s Sink) error {
			return s.(*ParquetWriter).Request(&Request{RunID: "a", RequestKey: 1}, ev("a", 2))
		}, "event 0 has run_id"},
		{"interleaved runs", func(s Sink) error {
			return cmpErr(SendRow(s, &Request{RunID: "a"}, nil), SendRow(s, &Request{RunID: "b"}, nil),
				SendRow(s, &Request{RunID: "a", RequestKey: 1}, nil))
		}, "not contiguous"},
		{"request after Run", func(s Sink) error {
			return cmpErr(SendRow(s, &Request{RunID: "a"}, nil), s.Run(&Run{RunID: "a"}),
				SendRow(s, &Request{RunID: "a", RequestKey: 1}, nil))
		}, "already had its Run row"},
		{"request keys not increasing", func(s Sink) error {
			return cmpErr(SendRow(s, &Request{RunID: "a", RequestKey: 3}, nil), SendRow(s, &Request{RunID: "a", RequestKey: 3}, nil))
		}, "keys must increase"},
		{"duplicate Run", func(s Sink) error {
			return cmpErr(s.Run(&Run{RunID: "a"}), s.Run(&Run{RunID: "a"}))
		}, "second Run row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewParquetWriter(dir, WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.do(w)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want error containing %q", err, tc.want)
			}
			// Sticky: the writer stays failed and Close discards.
			if err2 := w.Run(&Run{RunID: "zz"}); err2 == nil {
				t.Fatal("writer usable after an error")
			}
			if err := w.Close(); err == nil {
				t.Fatal("Close succeeded after an error")
			}
			if files := dirFiles(t, dir); len(files) != 0 {
				t.Fatalf("files left: %v", slices.Sorted(mapsKeys(files)))
			}
		})
	}
}

func TestNewParquetWriterBadOptions(t *testing.T) {
	if _, err := NewParquetWriter(t.TempDir(), WriteOptions{Compression: "lzma"}); err == nil {
		t.Fatal("unknown codec accepted")
	}
}

// writeRaw writes rows to dir/name with parquet-go directly, with the given
// key-value metadata.
func writeRaw[T any](t *testing.T, dir, name string, rows []T, kv map[string]string) {
	t.Helper()
	var opts []parquet.WriterOption
	for k, v := range kv {
		opts = append(opts, parquet.KeyValueMetadata(k, v))
	}
	if err := parquet.WriteFile(filepath.Join(dir, name), rows, opts...); err != nil {
		t.Fatal(err)
	}
}

func TestReadTablesErrors(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		dir := t.TempDir()
		writeSample(t, dir, 5, WriteOptions{})
		os.Remove(filepath.Join(dir, "events.parquet"))
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), "events.parquet") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("newer schema version", func(t *testing.T) {
		dir := t.TempDir()
		writeSample(t, dir, 5, WriteOptions{})
		writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}}, map[string]string{
			MetaSchemaVersion: strconv.Itoa(SchemaVersion + 1), MetaVersion: "9.9.9", MetaTable: TableRuns,
		})
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), "runs.parquet") || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("got %v", err)
		}
		t.Log(err)
	})
	t.Run("wrong table", func(t *testing.T) {
		dir := t.TempDir()
		writeSample(t, dir, 5, WriteOptions{})
		writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}}, map[string]string{MetaTable: TableEvents})
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), `holds the "events" table`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("mixed imports", func(t *testing.T) {
		a, b := t.TempDir(), t.TempDir()
		writeSample(t, a, 5, WriteOptions{})
		writeSample(t, b, 5, WriteOptions{})
		data, _ := os.ReadFile(filepath.Join(b, "events.parquet"))
		os.WriteFile(filepath.Join(a, "events.parquet"), data, 0o666)
		err := ReadTables(a, &Collector{})
		if err == nil || !strings.Contains(err.Error(), "different writes") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("missing required column", func(t *testing.T) {
		type thinRun struct {
			RunID string `parquet:"run_id"`
		}
		dir := t.TempDir()
		writeRaw(t, dir, "runs.parquet", []thinRun{{"a"}}, nil)
		writeRaw(t, dir, "requests.parquet", []Request{}, nil)
		writeRaw(t, dir, "events.parquet", []Event{}, nil)
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), `runs.parquet: column "tool" missing`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("missing nullable column reads as null", func(t *testing.T) {
		// requests.parquet as a writer that predates a nullable column
		// would have written it: every column but reported_ttft_ms.
		dir := t.TempDir()
		writeSample(t, dir, 20, WriteOptions{})
		want := collectSample(t, 20)
		for i := range want.Requests {
			want.Requests[i].ReportedTTFTMs = nil
		}
		old := parquet.Group{}
		for _, f := range parquet.SchemaOf(Request{}).Fields() {
			if f.Name() != "reported_ttft_ms" {
				old[f.Name()] = f
			}
		}
		var c Collector
		if err := sampleStream(&c, 20); err != nil {
			t.Fatal(err)
		}
		fillCollected(&c)
		f, err := os.Create(filepath.Join(dir, "requests.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[Request](f, parquet.NewSchema("Request", old))
		if _, err := w.Write(c.Requests); err != nil {
			t.Fatal(err)
		}
		if err := cmpErr(w.Close(), f.Close()); err != nil {
			t.Fatal(err)
		}
		if _, ok := openPF(t, filepath.Join(dir, "requests.parquet")).Schema().Lookup("reported_ttft_ms"); ok {
			t.Fatal("column still there")
		}
		diffCollectors(t, want, readAll(t, dir))
	})
	t.Run("tables predating server_finish_reason and load", func(t *testing.T) {
		// requests.parquet without server_finish_reason and runs.parquet
		// without load, as written before those columns existed: they read
		// as "" and an empty list (zeroIfMissing).
		dir := t.TempDir()
		writeSample(t, dir, 20, WriteOptions{})
		want := collectSample(t, 20)
		for i := range want.Requests {
			want.Requests[i].ServerFinishReason = ""
		}
		for i := range want.Runs {
			want.Runs[i].Load = nil
		}
		var c Collector
		if err := sampleStream(&c, 20); err != nil {
			t.Fatal(err)
		}
		fillCollected(&c)
		rewrite := func(name, drop string, schema *parquet.Schema, write func(f *os.File, s *parquet.Schema) error) {
			old := parquet.Group{}
			for _, f := range schema.Fields() {
				if f.Name() != drop {
					old[f.Name()] = f
				}
			}
			f, err := os.Create(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := cmpErr(write(f, parquet.NewSchema("old", old)), f.Close()); err != nil {
				t.Fatal(err)
			}
			if _, ok := openPF(t, filepath.Join(dir, name)).Schema().Lookup(drop); ok {
				t.Fatalf("%s: column %s still there", name, drop)
			}
		}
		// the metadata of the original files (import id, table) is kept
		meta := func(name string) []parquet.WriterOption {
			var opts []parquet.WriterOption
			pf := openPF(t, filepath.Join(dir, name))
			for _, kv := range pf.Metadata().KeyValueMetadata {
				opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
			}
			return opts
		}
		rq, rn := meta("requests.parquet"), meta("runs.parquet")
		rewrite("requests.parquet", "server_finish_reason", parquet.SchemaOf(Request{}), func(f *os.File, s *parquet.Schema) error {
			w := parquet.NewGenericWriter[Request](f, append(rq, s)...)
			if _, err := w.Write(c.Requests); err != nil {
				return err
			}
			return w.Close()
		})
		rewrite("runs.parquet", "load", parquet.SchemaOf(Run{}), func(f *os.File, s *parquet.Schema) error {
			w := parquet.NewGenericWriter[Run](f, append(rn, s)...)
			if _, err := w.Write(c.Runs); err != nil {
				return err
			}
			return w.Close()
		})
		diffCollectors(t, want, readAll(t, dir))
	})
	t.Run("tables predating the in-flight columns and series", func(t *testing.T) {
		// requests.parquet without in_flight_at_start, end_bound_offset_ns
		// and end_bound_rule, runs.parquet without series: null, "" and an
		// empty list.
		dir := t.TempDir()
		writeSample(t, dir, 20, WriteOptions{})
		want := collectSample(t, 20)
		for i := range want.Requests {
			r := &want.Requests[i]
			r.InFlightAtStart, r.EndBoundOffsetNs, r.EndBoundRule = nil, nil, ""
		}
		var c Collector
		if err := sampleStream(&c, 20); err != nil {
			t.Fatal(err)
		}
		drop := map[string]bool{"in_flight_at_start": true, "end_bound_offset_ns": true, "end_bound_rule": true, "series": true}
		without := func(schema *parquet.Schema) *parquet.Schema {
			g := parquet.Group{}
			for _, f := range schema.Fields() {
				if !drop[f.Name()] {
					g[f.Name()] = f
				}
			}
			return parquet.NewSchema("old", g)
		}
		meta := func(name string) []parquet.WriterOption {
			var opts []parquet.WriterOption
			for _, kv := range openPF(t, filepath.Join(dir, name)).Metadata().KeyValueMetadata {
				opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
			}
			return opts
		}
		rq, rn := meta("requests.parquet"), meta("runs.parquet")
		f, err := os.Create(filepath.Join(dir, "requests.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[Request](f, append(rq, without(parquet.SchemaOf(Request{})))...)
		if _, err := w.Write(c.Requests); err != nil {
			t.Fatal(err)
		}
		if err := cmpErr(w.Close(), f.Close()); err != nil {
			t.Fatal(err)
		}
		f, err = os.Create(filepath.Join(dir, "runs.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		wr := parquet.NewGenericWriter[Run](f, append(rn, without(parquet.SchemaOf(Run{})))...)
		if _, err := wr.Write(c.Runs); err != nil {
			t.Fatal(err)
		}
		if err := cmpErr(wr.Close(), f.Close()); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"requests.parquet", "runs.parquet"} {
			for col := range drop {
				if _, ok := openPF(t, filepath.Join(dir, name)).Schema().Lookup(col); ok {
					t.Fatalf("%s: column %s still there", name, col)
				}
			}
		}
		diffCollectors(t, want, readAll(t, dir))
	})
	t.Run("request without run", func(t *testing.T) {
		dir := t.TempDir()
		writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}}, nil)
		writeRaw(t, dir, "requests.parquet", []Request{{RunID: "a"}, {RunID: "zz", RequestKey: 0}}, nil)
		writeRaw(t, dir, "events.parquet", []Event{}, nil)
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), `requests.parquet row 1: run_id "zz" has no row`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("non-contiguous run", func(t *testing.T) {
		dir := t.TempDir()
		writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}, {RunID: "b"}}, nil)
		writeRaw(t, dir, "requests.parquet", []Request{{RunID: "a"}, {RunID: "b"}, {RunID: "a", RequestKey: 1}}, nil)
		writeRaw(t, dir, "events.parquet", []Event{}, nil)
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), `requests.parquet row 2: requests of run "a" are not contiguous`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("request keys not increasing", func(t *testing.T) {
		dir := t.TempDir()
		writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}}, nil)
		writeRaw(t, dir, "requests.parquet", []Request{{RunID: "a", RequestKey: 1}, {RunID: "a", RequestKey: 0}}, nil)
		writeRaw(t, dir, "events.parquet", []Event{}, nil)
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), `requests.parquet row 1: run "a" request_key 0 after 1`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("orphan event", func(t *testing.T) {
		dir := t.TempDir()
		writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}}, nil)
		writeRaw(t, dir, "requests.parquet", []Request{{RunID: "a"}, {RunID: "a", RequestKey: 1}}, nil)
		writeRaw(t, dir, "events.parquet", []Event{{RunID: "a"}, {RunID: "a", RequestKey: 7}, {RunID: "a", RequestKey: 1}}, nil)
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), "events.parquet row 1: event of run \"a\" request_key 7 matches no request") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("duplicate run", func(t *testing.T) {
		dir := t.TempDir()
		writeRaw(t, dir, "runs.parquet", []Run{{RunID: "a"}, {RunID: "a"}}, nil)
		writeRaw(t, dir, "requests.parquet", []Request{}, nil)
		writeRaw(t, dir, "events.parquet", []Event{}, nil)
		err := ReadTables(dir, &Collector{})
		if err == nil || !strings.Contains(err.Error(), `runs.parquet row 1: second row for run "a"`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("sink error returned unchanged", func(t *testing.T) {
		dir := t.TempDir()
		writeSample(t, dir, 5, WriteOptions{})
		stop := errors.New("stop")
		err := ReadTables(dir, failingSink{stop})
		if err != stop {
			t.Fatalf("got %v", err)
		}
	})
}

type failingSink struct{ err error }

func (f failingSink) Request(*Request, []Event) error { return f.err }
func (f failingSink) Run(*Run) error                  { return f.err }

// TestParquetDictionaryFallback writes more distinct text than a string
// dictionary may hold in one row group (1 MiB), so text pages switch from
// dictionary to plain encoding mid row group, and reads it back.
func TestParquetDictionaryFallback(t *testing.T) {
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var c Collector
	sink := Tee(w, &c)
	evs := make([]Event, 100)
	for k := 0; k < 40; k++ { // 4000 distinct texts of ~1 KB
		for j := range evs {
			txt := strings.Repeat(fmt.Sprintf("%06d ", k*1000+j), 150)[:1000+j%7]
			evs[j] = Event{RunID: "r", RequestKey: int64(k), Index: int32(j), Kind: KindContent, Text: &txt}
		}
		if err := SendRow(sink, &Request{RunID: "r", RequestKey: int64(k)}, evs); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmpErr(sink.Run(&Run{RunID: "r", SchemaVersion: SchemaVersion, TokentraceVersion: Version}), w.Close()); err != nil {
		t.Fatal(err)
	}
	pf := openPF(t, filepath.Join(dir, "events.parquet"))
	var encs []format.Encoding
	for _, cc := range pf.Metadata().RowGroups[0].Columns {
		if slices.Equal(cc.MetaData.PathInSchema, []string{"text"}) {
			encs = cc.MetaData.Encoding
		}
	}
	if !slices.Contains(encs, format.RLEDictionary) || !slices.Contains(encs, format.Plain) {
		t.Errorf("text column encodings %v: want dictionary then plain", encs)
	}
	diffCollectors(t, &c, readAll(t, dir))
}

// writeManyEvents streams nReq requests of 400 events with text through a
// ParquetWriter and returns the peak live heap (after GC) seen while writing.
func writeManyEvents(t *testing.T, nReq int) uint64 {
	dir := t.TempDir()
	w, err := NewParquetWriter(dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	evs := make([]Event, 400)
	var peak uint64
	var ms runtime.MemStats
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = " word" + strconv.Itoa(i*7919%100003)
	}
	for k := 0; k < nReq; k++ {
		for j := range evs {
			evs[j] = Event{RunID: "run-0", RequestKey: int64(k), Index: int32(j), ReadIndex: int32(j),
				OffsetNs: int64(j)*20_000_000 + int64(k%97), Kind: KindContent, HasChoices: true, Bytes: 180,
				Text: &texts[(j*31+k)%len(texts)]}
		}
		if err := w.Request(&Request{RunID: "run-0", RequestKey: int64(k), Status: StatusOK}, evs); err != nil {
			t.Fatal(err)
		}
		if k%200 == 199 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if err := cmpErr(w.Run(&Run{RunID: "run-0"}), w.Close()); err != nil {
		t.Fatal(err)
	}
	return peak
}

// TestParquetWriteMemoryBounded checks that the writer does not hold the
// rows it was given: while 2.4M events (18 row groups; several hundred MB
// as Go values) stream through it, the live heap after GC stays under a
// fixed budget. The budget covers one row group's compressed pages per
// table, page buffers and zstd encoder state (about 50 MB in practice,
// independent of the number of rows and of GOMAXPROCS).
func TestParquetWriteMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const budget = 96 << 20
	peak := writeManyEvents(t, 6000)
	t.Logf("peak live heap while writing 2.4M events: %.1f MB", float64(peak)/1e6)
	if peak > budget {
		t.Fatalf("live heap reached %.1f MB while writing (budget %d MB): rows are being retained",
			float64(peak)/1e6, budget>>20)
	}
}

// BenchmarkParquetWrite measures events/s through ParquetWriter for a
// GenAI-Perf-like stream: requests of 430 events (role, 428 content
// messages of one short token each, done), jittered offsets, texts drawn
// from a 5000-word vocabulary. It reports events/s and the events file's
// bytes per event.
func BenchmarkParquetWrite(b *testing.B) {
	for _, noText := range []bool{false, true} {
		b.Run(fmt.Sprintf("noText=%v", noText), func(b *testing.B) {
			const nReq, nEv = 500, 430
			rng := rand.New(rand.NewPCG(1, 2))
			words := make([]string, 5000)
			for i := range words {
				words[i] = " w" + strconv.Itoa(rng.IntN(100000))
			}
			evs := make([]Event, nEv)
			dir := b.TempDir()
			b.ReportAllocs()
			b.ResetTimer()
			var events, size int64
			for i := 0; i < b.N; i++ {
				w, err := NewParquetWriter(dir, WriteOptions{NoText: noText})
				if err != nil {
					b.Fatal(err)
				}
				for k := 0; k < nReq; k++ {
					off := int64(20_000_000 + rng.IntN(5_000_000))
					for j := range evs {
						off += int64(5_000_000 + rng.IntN(4_000_000))
						evs[j] = Event{RunID: "genai-perf/c8#1", RequestKey: int64(k), Index: int32(j), ReadIndex: int32(j),
							OffsetNs: off, Kind: KindContent, HasChoices: true, Text: &words[rng.IntN(len(words))]}
						evs[j].Bytes = int32(160 + len(*evs[j].Text))
					}
					evs[0].Kind, evs[0].Text = KindRole, nil
					evs[nEv-1].Kind, evs[nEv-1].Text, evs[nEv-1].HasChoices = KindDone, nil, false
					r := &Request{RunID: "genai-perf/c8#1", RequestKey: int64(k), Status: StatusOK,
						StartNs: ptr(int64(1_700_000_000_000_000_000 + k*10_000_000)), FirstTokenOffsetNs: ptr(int64(20_000_000))}
					if err := w.Request(r, evs); err != nil {
						b.Fatal(err)
					}
					events += nEv
				}
				if err := cmpErr(w.Run(&Run{RunID: "genai-perf/c8#1"}), w.Close()); err != nil {
					b.Fatal(err)
				}
				st, _ := os.Stat(filepath.Join(dir, "events.parquet"))
				size = st.Size()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(size)/(nReq*nEv), "B/event")
		})
	}
}

func (o *orderCheck) Batch(b *Batch) error { return b.EachRow(o.Request) }

func (f failingSink) Batch(b *Batch) error { return b.EachRow(f.Request) }
