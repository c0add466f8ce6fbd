package guidellm

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetedStartOnlyForRates: targeted_start is a request's intended
// start only under a strategy with a schedule (constant, poisson). In the
// v0.3 fixture the constant 2 req/s benchmark's records get theirs
// (scheduler_info.targeted_start_time, to the microsecond); the
// synchronous benchmark's do not, with a note saying why; the v0.4
// concurrent benchmark's neither.
func TestTargetedStartOnlyForRates(t *testing.T) {
	path := filepath.Join("testdata", "v03-requests", "benchmarks.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Benchmarks []struct {
			Args struct {
				Strategy struct {
					Type string `json:"type_"`
				} `json:"strategy"`
			} `json:"args"`
			Requests map[string][]struct {
				SchedulerInfo struct {
					TargetedStartTime float64 `json:"targeted_start_time"`
				} `json:"scheduler_info"`
			} `json:"requests"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c, _ := importFile(t, path, "v03")
	if len(c.Runs) != len(doc.Benchmarks) {
		t.Fatalf("%d runs for %d benchmarks", len(c.Runs), len(doc.Benchmarks))
	}
	byRun := map[string][]int{}
	for i, q := range c.Requests {
		byRun[q.RunID] = append(byRun[q.RunID], i)
	}
	for bi, b := range doc.Benchmarks {
		run := c.Runs[bi]
		var targets []float64
		for _, list := range []string{"successful", "incomplete", "errored"} {
			for _, r := range b.Requests[list] {
				targets = append(targets, r.SchedulerInfo.TargetedStartTime)
			}
		}
		rows := byRun[run.RunID]
		switch b.Args.Strategy.Type {
		case "constant":
			if len(rows) != len(targets) {
				t.Fatalf("%s: %d rows for %d records", run.RunID, len(rows), len(targets))
			}
			for k, i := range rows {
				q := c.Requests[i]
				if q.ScheduledStartNs == nil || q.ScheduledStartSource != SourceTargetedStart {
					t.Fatalf("%s request %d: no intended start", run.RunID, q.RequestKey)
				}
				if d := math.Abs(float64(*q.ScheduledStartNs) - targets[k]*1e9); d > 1e3 {
					t.Errorf("%s request %d: intended start %d, targeted_start_time %v (off by %v ns)", run.RunID, q.RequestKey, *q.ScheduledStartNs, targets[k], d)
				}
			}
		case "synchronous":
			for _, i := range rows {
				if q := c.Requests[i]; q.ScheduledStartNs != nil {
					t.Errorf("%s request %d: a synchronous run's targeted_start taken as a schedule", run.RunID, q.RequestKey)
				}
			}
			if !strings.Contains(notes(run), "synchronous strategy has no schedule") {
				t.Errorf("%s: no note on the unused targeted_start: %s", run.RunID, notes(run))
			}
		default:
			t.Fatalf("fixture strategy %q", b.Args.Strategy.Type)
		}
	}

	c, _ = importFile(t, filepath.Join("testdata", "v04-requests", "benchmarks.json"), "v04")
	for _, q := range c.Requests {
		if q.ScheduledStartNs != nil {
			t.Errorf("v04 concurrent request %d: intended start from targeted_start", q.RequestKey)
		}
	}
}
