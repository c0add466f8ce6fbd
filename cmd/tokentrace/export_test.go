package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

const exportRun = "../../testdata/aiperf/qwen3vl30b-local-agent-c2"

func readCSVFile(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// TestExportCSV: a real AIPerf run exported to CSV, straight from the
// tool's files and from hive-partitioned tables, gives the same files; the
// CSV alone reproduces AIPerf's own reported TTFT and request latency
// (mean and P99 over its 20 requests, numpy-linear).
func TestExportCSV(t *testing.T) {
	direct, tables, fromTables := t.TempDir(), t.TempDir(), t.TempDir()
	if _, err := run(t, "export", exportRun, "--format", "csv", "-o", direct); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "import", exportRun, "--layout", "hive", "-o", tables); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "export", tables, "--format", "csv", "-o", fromTables)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "exported 1 run, 20 requests, 4510 events") {
		t.Errorf("export says %q", out)
	}
	for _, f := range []string{"events.csv", "requests.csv", "runs.csv"} {
		a, _ := os.ReadFile(filepath.Join(direct, f))
		b, _ := os.ReadFile(filepath.Join(fromTables, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: export from the raw files (%d bytes) and from the tables (%d bytes) differ", f, len(a), len(b))
		}
	}

	reqs := readCSVFile(t, filepath.Join(direct, "requests.csv"))
	if len(reqs) != 20 {
		t.Fatalf("requests.csv: %d rows, want 20", len(reqs))
	}
	var ttft, e2e []float64
	for _, r := range reqs {
		if r["status"] != "ok" {
			continue
		}
		ft, err1 := strconv.ParseInt(r["first_token_offset_ns"], 10, 64)
		lt, err2 := strconv.ParseInt(r["last_token_offset_ns"], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("offsets %q %q", r["first_token_offset_ns"], r["last_token_offset_ns"])
		}
		ttft = append(ttft, float64(ft)/1e6)
		e2e = append(e2e, float64(lt)/1e6)
	}
	runs := readCSVFile(t, filepath.Join(direct, "runs.csv"))
	var reported []struct {
		Metric, Stat string
		Value        *float64
	}
	if err := json.Unmarshal([]byte(runs[0]["reported"]), &reported); err != nil {
		t.Fatalf("runs.csv reported: %v", err)
	}
	want := map[string]float64{}
	for _, s := range reported {
		if s.Value != nil {
			want[s.Metric+"."+s.Stat] = *s.Value
		}
	}
	check := func(what string, got, w float64) {
		if math.Abs(got-w) > 1e-9*math.Abs(w) {
			t.Errorf("%s from CSV: %.12g, AIPerf reported %.12g", what, got, w)
		}
	}
	check("time_to_first_token avg", mean(ttft), want["time_to_first_token.avg"])
	check("time_to_first_token p99", p99(ttft), want["time_to_first_token.p99"])
	check("request_latency avg", mean(e2e), want["request_latency.avg"])
	check("request_latency p99", p99(e2e), want["request_latency.p99"])
	if len(want) < 20 {
		t.Errorf("runs.csv reported: %d values", len(want))
	}

	evs := readCSVFile(t, filepath.Join(direct, "events.csv"))
	if len(evs) != 4510 || evs[0]["run_id"] != "qwen3vl30b-local-agent-c2" || evs[0]["kind"] == "" {
		t.Errorf("events.csv: %d rows, first %v", len(evs), evs[0])
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func p99(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	h := float64(len(s)-1) * 0.99
	lo := math.Floor(h)
	return s[int(lo)] + (h-lo)*(s[int(lo)+1]-s[int(lo)])
}

// TestExportArrow: the Arrow IPC files hold the same rows and values as the
// CSV export of the same run.
func TestExportArrow(t *testing.T) {
	adir, cdir := t.TempDir(), t.TempDir()
	if _, err := run(t, "export", exportRun, "--format", "arrow", "-o", adir); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "export", exportRun, "--format", "csv", "-o", cdir); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"events", "requests", "runs"} {
		rows := readCSVFile(t, filepath.Join(cdir, table+".csv"))
		f, err := os.Open(filepath.Join(adir, table+".arrow"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
		if err != nil {
			t.Fatalf("%s.arrow: %v", table, err)
		}
		n := 0
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			ids := rec.Column(rec.Schema().FieldIndices("run_id")[0]).(*array.String)
			for j := 0; j < ids.Len(); j++ {
				if ids.Value(j) != rows[n+j]["run_id"] {
					t.Fatalf("%s row %d: run_id %q in Arrow, %q in CSV", table, n+j, ids.Value(j), rows[n+j]["run_id"])
				}
			}
			if table == "requests" {
				col := rec.Column(rec.Schema().FieldIndices("first_token_offset_ns")[0]).(*array.Int64)
				for j := 0; j < col.Len(); j++ {
					if got := strconv.FormatInt(col.Value(j), 10); !col.IsNull(j) && got != rows[n+j]["first_token_offset_ns"] {
						t.Errorf("requests row %d: first_token_offset_ns %s in Arrow, %s in CSV", n+j, got, rows[n+j]["first_token_offset_ns"])
					}
				}
			}
			n += int(rec.NumRows())
		}
		r.Close()
		f.Close()
		if n != len(rows) || n == 0 {
			t.Errorf("%s: %d Arrow rows, %d CSV rows", table, n, len(rows))
		}
	}
	if _, err := run(t, "export", exportRun, "--format", "xlsx", "-o", t.TempDir()); err == nil || !strings.Contains(err.Error(), "want arrow, csv or perfetto") {
		t.Errorf("bad format: %v", err)
	}
}
