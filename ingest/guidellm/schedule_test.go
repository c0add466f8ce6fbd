package guidellm

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
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

// TestScheduleMetricsReproduced: the v07-schedule fixture (gen_fixtures.py:
// guidellm after v0.7.3, constant 2 req/s, three requests sent 0.3–0.7 s
// late) gets its intended starts from targeted_start; guidellm's own
// request_scheduled_latency (request_end − targeted_start) is reproduced
// in every statistic, and request_dispatch_delay wherever its value is not
// a sub-millisecond difference of two Unix-second floats, which differs
// with that reason. The run is flagged coordinated_omission.
func TestScheduleMetricsReproduced(t *testing.T) {
	c, rep, _ := reproduceRuns(t, filepath.Join("testdata", "v07-schedule", "benchmarks.json"))
	for _, q := range c.Requests {
		if q.ScheduledStartNs == nil {
			t.Fatalf("request %d: no intended start", q.RequestKey)
		}
	}
	rr := rep.Runs[0]
	got := map[string]map[string]int{}
	for _, it := range rr.Reproduction.Items {
		for _, m := range []string{"request_dispatch_delay.successful", "request_scheduled_latency.successful"} {
			if it.Metric != m {
				continue
			}
			if got[m] == nil {
				got[m] = map[string]int{}
			}
			got[m][it.Status]++
			if it.Status == "differs" && !strings.Contains(it.Reason, "Unix times in float seconds") || it.Status == "not_reproducible" {
				t.Errorf("%s/%s: %s (%s)", it.Metric, it.Stat, it.Status, it.Reason)
			}
			if it.Status == "differs" && math.Abs(float64(it.Reported)-0.0005) > 1e-6 {
				t.Errorf("%s/%s differs at %v: only the 0.5 ms delays may", it.Metric, it.Stat, float64(it.Reported))
			}
		}
	}
	if got["request_scheduled_latency.successful"]["reproduced"] < 15 || got["request_dispatch_delay.successful"]["reproduced"] < 8 {
		t.Errorf("reproduced %v", got)
	}
	flagged := false
	for _, w := range rr.Warnings {
		flagged = flagged || w.Code == analyze.TrapCoordinatedOmission
	}
	if !flagged {
		t.Error("no coordinated_omission warning")
	}
}
