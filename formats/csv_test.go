package formats

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readCSV reads dir/table.csv with encoding/csv: header and records.
func readCSV(t *testing.T, dir, table string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, table+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s.csv: no header", table)
	}
	return recs[0], recs[1:]
}

// parseCSVRow fills a row of type T from one record, the inverse of the
// documented CSV forms (lists decoded from their JSON).
func parseCSVRow[T any](t *testing.T, header, rec []string) T {
	t.Helper()
	var row T
	v := reflect.ValueOf(&row).Elem()
	for i, name := range header {
		fi := fieldByColumn(v.Type(), name)
		if fi == nil {
			t.Fatalf("unknown column %q", name)
		}
		f := v.FieldByIndex(fi)
		s := rec[i]
		if f.Kind() == reflect.Pointer {
			if s == "" {
				continue
			}
			f.Set(reflect.New(f.Type().Elem()))
			f = f.Elem()
		}
		var err error
		switch f.Kind() {
		case reflect.String:
			f.SetString(s)
		case reflect.Int64, reflect.Int32:
			var n int64
			if strings.HasSuffix(name, "_time") { // TIMESTAMP: RFC 3339 UTC
				var ts time.Time
				ts, err = time.Parse(time.RFC3339Nano, s)
				if err == nil && !strings.HasSuffix(s, "Z") {
					err = errors.New("not UTC")
				}
				n = ts.UnixNano()
			} else {
				n, err = strconv.ParseInt(s, 10, 64)
			}
			f.SetInt(n)
		case reflect.Float64:
			var x float64
			x, err = strconv.ParseFloat(s, 64) // accepts inf, -inf, nan
			f.SetFloat(x)
		case reflect.Bool:
			var b bool
			b, err = strconv.ParseBool(s)
			f.SetBool(b)
		case reflect.Slice:
			err = json.Unmarshal([]byte(s), f.Addr().Interface())
			if err == nil && f.Len() == 0 {
				f.Set(reflect.Zero(f.Type()))
			}
		}
		if err != nil {
			t.Fatalf("column %s %q: %v", name, s, err)
		}
	}
	return row
}

func TestCSVWriter(t *testing.T) {
	dir := t.TempDir()
	w, err := NewCSVWriter(dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const nb = 30
	if err := sampleStream(w, nb); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := collectSample(t, nb)

	// Headers are the Parquet columns, in order.
	for table, rt := range tableTypes {
		h, _ := readCSV(t, dir, table)
		if tags := slices.DeleteFunc(tagColumns(rt), func(s string) bool { return strings.Contains(s, "[]") }); !slices.Equal(h, tags) {
			t.Errorf("%s.csv header %q, want %q", table, h, tags)
		}
	}

	// Every row reads back; a nullable string that was "" reads as null
	// (the documented loss).
	h, recs := readCSV(t, dir, TableEvents)
	if len(recs) != len(want.Events) {
		t.Fatalf("events.csv: %d rows, want %d", len(recs), len(want.Events))
	}
	for i, rec := range recs {
		got := parseCSVRow[Event](t, h, rec)
		w := want.Events[i]
		if w.Text != nil && *w.Text == "" {
			w.Text = nil
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("events.csv row %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	h, recs = readCSV(t, dir, TableRequests)
	if len(recs) != len(want.Requests) {
		t.Fatalf("requests.csv: %d rows", len(recs))
	}
	for i, rec := range recs {
		if got, w := parseCSVRow[requestRow](t, h, rec), newRequestRow(&want.Requests[i]); !reflect.DeepEqual(got, w) {
			t.Fatalf("requests.csv row %d:\n got %+v\nwant %+v", i, got, w)
		}
		if st := rec[slices.Index(h, "start_time")]; (st != "") != (want.Requests[i].ClockDomain == ClockUnix && want.Requests[i].StartNs != nil) {
			t.Errorf("requests.csv row %d: start_time %q for clock %q", i, st, want.Requests[i].ClockDomain)
		}
	}
	h, recs = readCSV(t, dir, TableRuns)
	if len(recs) != len(want.Runs) {
		t.Fatalf("runs.csv: %d rows", len(recs))
	}
	for i, rec := range recs {
		got := parseCSVRow[Run](t, h, rec)
		w := stampRun(&want.Runs[i])
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("runs.csv row %d:\n got %+v\nwant %+v", i, got, w)
		}
	}

	// Hand-written expectations of the encoded forms.
	col := func(name string) int { return slices.Index(h, name) }
	runA, runC := recs[0], recs[1]
	for _, c := range []struct{ got, want string }{
		{runA[col("notes")], `["truncated at byte 1234","","ünïcode note"]`},
		{runA[col("reported")], `[{"metric":"time_to_first_token","stat":"avg","unit":"ms","value":20.5,"text":null,"file":"profile_export_genai_perf.json"},` +
			`{"metric":"request_goodput","stat":"value","unit":null,"value":null,"text":"N/A","file":"profile_export_genai_perf.json"}]`},
		{runA[col("streaming")], "true"},
		{runA[col("concurrency")], "4"},
		{runA[col("config_json")], `{"model":"Qwen/Qwen3-0.6B","headers":{"Authorization":"REDACTED"}}`},
		{runC[col("request_rate_rps")], "inf"},
		{runC[col("streaming")], ""},
		{runC[col("source_files")], "[]"},
	} {
		if c.got != c.want {
			t.Errorf("runs.csv: %s, want %s", c.got, c.want)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "events.csv"))
	if !strings.Contains(string(raw), "\"é😀\n\"\"q\"\"\"") {
		t.Error(`events.csv: text with newline and quotes not quoted as RFC 4180 asks`)
	}
}

func TestCSVWriterAtomic(t *testing.T) {
	dir := t.TempDir()
	w, err := NewCSVWriter(dir, WriteOptions{NoText: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Request(&Request{RunID: "r", Status: StatusOK}, []Event{{RunID: "r", Kind: KindContent, Text: ptr("x")}}); err != nil {
		t.Fatal(err)
	}
	// No Run row: Close fails and nothing is left.
	if err := w.Close(); err == nil {
		t.Fatal("Close without the Run row succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
	w, _ = NewCSVWriter(dir, WriteOptions{NoText: true})
	w.Request(&Request{RunID: "r", Status: StatusOK}, []Event{{RunID: "r", Kind: KindContent, Text: ptr("secret")}})
	w.Run(&Run{RunID: "r"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "events.csv"))
	if strings.Contains(string(raw), "secret") {
		t.Error("NoText: text written")
	}
}
