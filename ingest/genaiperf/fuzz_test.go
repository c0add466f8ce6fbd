package genaiperf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// FuzzImport imports arbitrary bytes as a raw export. It must never panic;
// errors are fine but must be *ingest.FormatError or come from the file
// system. On success every request belongs to an emitted run, RequestCount
// adds up, and events are numbered 0, 1, … within their request: a
// request's MessageCount events, or none when its times are unknown (no
// start: a value check left them null; the counts stand, but an event
// needs an offset). A request whose start the start_time_far check
// nulled keeps its events (their offsets are its own).
func FuzzImport(f *testing.F) {
	for _, fx := range fixtures {
		f.Add(fx.encode())
	}
	if b, err := os.ReadFile(filepath.Join(corpusDir, "openrouter-gpt4omini-c1-nonstream", "profile_export.json")); err == nil {
		f.Add(b[:4096])
	}
	f.Add([]byte(`{"experiments":[{"requests":[{"timestamp":5,"response_timestamps":[6,7],"response_outputs":[{"response":"data: x\r"},{"text_output":["a","b"]}]}]}]}`))
	dir := f.TempDir() // one file per worker process, rewritten per input
	path := filepath.Join(dir, "profile_export.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var col formats.Collector
		err := ingest.ImportFile(New(), path, ingest.Options{Warn: func(string) {}}, &col)
		if err != nil {
			var fe *ingest.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a FormatError", err, err)
			}
			return
		}
		runs := map[string]int64{}
		for _, r := range col.Runs {
			runs[r.RunID] = r.RequestCount
		}
		counts := map[string]int64{}
		ev := col.Events
		for _, r := range col.Requests {
			if _, ok := runs[r.RunID]; !ok {
				t.Fatalf("request of unknown run %q", r.RunID)
			}
			counts[r.RunID]++
			n := 0 // the request's events: the next ones with its key
			for n < len(ev) && ev[n].RunID == r.RunID && ev[n].RequestKey == r.RequestKey {
				n++
			}
			switch {
			case n > 0 && int64(n) != r.MessageCount:
				t.Fatalf("request %d claims %d messages, has %d events", r.RequestKey, r.MessageCount, n)
			case n == 0 && r.MessageCount > 0 && r.StartNs != nil:
				t.Fatalf("request %d claims %d messages, has no events, and its start is known", r.RequestKey, r.MessageCount)
			}
			for i, e := range ev[:n] {
				if int(e.Index) != i || e.RequestKey != r.RequestKey || e.RunID != r.RunID {
					t.Fatalf("event %+v at position %d of request %d", e, i, r.RequestKey)
				}
			}
			ev = ev[n:]
		}
		for id, n := range runs {
			if counts[id] != n {
				t.Fatalf("run %s: request_count %d, %d requests", id, n, counts[id])
			}
		}
	})
}
