package inferenceperf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestScheduledTime: a record with scheduled_time (RequestLifecycleMetric's
// field, which upstream does not write per request at 7de5ef2 but forks
// and later versions may) gets it as its intended start, on the request's
// clock; a record without one gets none, never its start_time.
func TestScheduledTime(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "edge-v06", "per_request_lifecycle_metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(src, &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 {
		t.Fatalf("%d records", len(recs))
	}
	want := map[int64]int64{}
	for i, r := range recs {
		if i == len(recs)-1 {
			break // the last keeps no scheduled_time
		}
		sched := r["start_time"].(float64) - 0.25*float64(i+1) // sent late by 250 ms × (i+1)
		r["scheduled_time"] = sched
		want[int64(i)] = int64(0.25 * float64(i+1) * 1e9)
	}
	out, _ := json.Marshal(recs)
	path := filepath.Join(t.TempDir(), "per_request_lifecycle_metrics.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := importFile(t, path)
	if len(c.Requests) != len(recs) {
		t.Fatalf("%d requests, want %d", len(c.Requests), len(recs))
	}
	for _, q := range c.Requests {
		d, ok := want[q.RequestKey]
		if !ok {
			if q.ScheduledStartNs != nil || q.ScheduledStartSource != "" {
				t.Errorf("request %d without scheduled_time: intended start %v %q", q.RequestKey, q.ScheduledStartNs, q.ScheduledStartSource)
			}
			continue
		}
		if q.ScheduledStartNs == nil || q.StartNs == nil {
			t.Fatalf("request %d: no intended start", q.RequestKey)
		}
		if got := *q.StartNs - *q.ScheduledStartNs; got < d-1000 || got > d+1000 {
			t.Errorf("request %d: dispatch delay %d ns, want %d", q.RequestKey, got, d)
		}
		if q.ScheduledStartSource != SourceScheduledTime {
			t.Errorf("request %d: source %q", q.RequestKey, q.ScheduledStartSource)
		}
	}
	if !hasNote(c.Runs[0], "scheduled_start_ns = scheduled_time") {
		t.Errorf("no note on the intended starts: %q", c.Runs[0].Notes)
	}
}
