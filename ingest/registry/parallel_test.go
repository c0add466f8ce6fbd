package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// callLog is a sink that writes down every call it gets, with the rows in
// full (JSON), and the warnings, in order.
type callLog struct{ calls []string }

func (l *callLog) add(kind string, v any) {
	var b strings.Builder
	dump(&b, reflect.ValueOf(v))
	l.calls = append(l.calls, kind+" "+b.String())
}

// dump writes v with the values its pointers point to (not addresses).
func dump(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		dump(b, v.Elem())
	case reflect.Struct:
		b.WriteString("{")
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				b.WriteString(v.Type().Field(i).Name + ":")
				dump(b, v.Field(i))
				b.WriteString(" ")
			}
		}
		b.WriteString("}")
	case reflect.Slice, reflect.Array:
		b.WriteString("[")
		for i := range v.Len() {
			dump(b, v.Index(i))
			b.WriteString(" ")
		}
		b.WriteString("]")
	case reflect.Map:
		b.WriteString(fmt.Sprint(v.Interface())) // fmt sorts the keys
	default:
		fmt.Fprintf(b, "%q", fmt.Sprint(v.Interface()))
	}
}

func (l *callLog) Request(r *formats.Request, ev []formats.Event) error {
	l.add("request", struct {
		R  *formats.Request
		Ev []formats.Event
	}{r, ev})
	// a sink may not keep them, and a producer may reuse them: scribble
	// over them, so that a row the recorder did not copy shows up changed
	r.RunID, r.StartNs = "scribbled", nil
	for i := range ev {
		ev[i].OffsetNs, ev[i].Tokens = -1, nil
	}
	return nil
}
func (l *callLog) StartRun(r *formats.Run) error { l.add("start", r); return nil }
func (l *callLog) Run(r *formats.Run) error      { l.add("run", r); return nil }
func (l *callLog) ToolHint(tool string)          { l.calls = append(l.calls, "hint "+tool) }

// importLog resolves inputs and imports them with parallel workers,
// returning every call the sink got and the error.
func importLog(t *testing.T, inputs []string, parallel int) ([]string, error) {
	t.Helper()
	var l callLog
	opt := ingest.Options{Parallel: parallel, NoHash: true, Warn: func(msg string) { l.calls = append(l.calls, "warn "+msg) }}
	jobs, skipped, err := ResolveInputs(inputs, "", opt)
	if err != nil {
		return nil, err
	}
	l.calls = append(l.calls, fmt.Sprintf("jobs %d, skipped %q", len(jobs), skipped))
	for _, j := range jobs {
		l.calls = append(l.calls, "job "+j.Path+" "+j.Importer.Name())
	}
	err = Import(jobs, nil, opt, &l)
	return l.calls, err
}

// sameCalls fails t where got and want first differ.
func sameCalls(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: call %d differs:\n got %.300s\nwant %.300s", what, i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d calls, want %d", what, len(got), len(want))
	}
}

// TestParallelImportSameAsSerial: every bundled real run (each importer's
// formats, warnings, multi-run files, companions) and a directory of many
// small runs reach the sink with the same calls, rows and warnings in the
// same order whether the files are read one after another or on several
// workers — with the buffer budget large (runs decoded ahead held whole)
// and tiny (every run ahead waits for its turn, then streams).
func TestParallelImportSameAsSerial(t *testing.T) {
	many := t.TempDir()
	src := "../../testdata/aiperf/llama31-8b-cloudflare-chatbot-c1"
	for i := range 8 {
		copyDir(t, src, filepath.Join(many, fmt.Sprintf("run_%02d", i)))
	}
	for _, inputs := range [][]string{{"../../testdata"}, {many}} {
		want, err := importLog(t, inputs, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) < 50 {
			t.Fatalf("%v: only %d calls", inputs, len(want))
		}
		for _, c := range []struct {
			budget  int64
			workers int
		}{{32 << 20, 2}, {1, 4}} {
			t.Run(fmt.Sprintf("%s/budget=%d/workers=%d", filepath.Base(inputs[0]), c.budget, c.workers), func(t *testing.T) {
				defer func(b int64) { bufferBudget = b }(bufferBudget)
				bufferBudget = c.budget
				got, err := importLog(t, inputs, c.workers)
				if err != nil {
					t.Fatal(err)
				}
				sameCalls(t, "parallel import", got, want)
			})
		}
	}
}

// TestParallelImportFirstErrorInOrder: with two broken runs among good
// ones, the parallel import fails with the first broken run's error, after
// the same rows as the serial import (the runs before it, and what the
// broken one sent before its bad line), whatever run a worker reached
// first.
func TestParallelImportFirstErrorInOrder(t *testing.T) {
	dir := t.TempDir()
	src := "../../testdata/aiperf/llama31-8b-cloudflare-chatbot-c1"
	for i := range 8 {
		d := filepath.Join(dir, fmt.Sprintf("run_%02d", i))
		copyDir(t, src, d)
		if i == 3 || i == 6 {
			p := filepath.Join(d, "profile_export.jsonl")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			first, rest, _ := strings.Cut(string(b), "\n")
			broken := first + "\n" + `{"metadata": {"x_request_id": 7}, "metrics": [1,` + "\n" + rest
			if err := os.WriteFile(p, []byte(broken), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, wantErr := importLog(t, []string{dir}, 1)
	if wantErr == nil || !strings.Contains(wantErr.Error(), "run_03") {
		t.Fatalf("serial import: %v, want run_03's error", wantErr)
	}
	for _, budget := range []int64{32 << 20, 1} {
		t.Run(fmt.Sprint("budget=", budget), func(t *testing.T) {
			defer func(b int64) { bufferBudget = b }(bufferBudget)
			bufferBudget = budget
			got, err := importLog(t, []string{dir}, 4)
			if err == nil || err.Error() != wantErr.Error() {
				t.Fatalf("error %v, want %v", err, wantErr)
			}
			sameCalls(t, "parallel import", got, want)
		})
	}
}

// TestParallelResolveFirstErrorInOrder: recognition on several workers
// reports the first failing input in order (an explicit file no importer
// claims), not whichever a worker met first.
func TestParallelResolveFirstErrorInOrder(t *testing.T) {
	dir := t.TempDir()
	var inputs []string
	for i := range 10 {
		p := filepath.Join(dir, fmt.Sprintf("f%02d.txt", i))
		body := "not a trace\n"
		if i < 4 {
			p = filepath.Join(dir, fmt.Sprintf("r%02d", i))
			copyDir(t, "../../testdata/aiperf/llama31-8b-cloudflare-chatbot-c1", p)
		}
		if i >= 4 {
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		inputs = append(inputs, p)
	}
	_, _, want := ResolveInputs(inputs, "", ingest.Options{Parallel: 1})
	if want == nil || !strings.Contains(want.Error(), "f04.txt") {
		t.Fatalf("serial: %v, want f04.txt unrecognized", want)
	}
	for range 20 {
		_, _, err := ResolveInputs(inputs, "", ingest.Options{Parallel: 4})
		if err == nil || err.Error() != want.Error() {
			t.Fatalf("parallel: %v, want %v", err, want)
		}
	}
}

// TestDeepCopyRun: a recorded Run row shares no memory its producer
// could change.
func TestDeepCopyRun(t *testing.T) {
	run := &formats.Run{RunID: "a", Notes: []string{"n"}, Reported: []formats.ReportedStat{{Metric: "ttft"}}}
	cr := deepCopy(run)
	run.Notes[0], run.Reported[0].Metric = "changed", "changed"
	if cr.Notes[0] != "n" || cr.Reported[0].Metric != "ttft" {
		t.Errorf("cloned run follows the original: %+v", cr)
	}
}

// copyDir copies the regular files of src into a new directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (l *callLog) Batch(b *formats.Batch) error { return b.EachRow(l.Request) }
