package vllmbench

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
)

// TestCoordinatedOmissionFixture: the co-stall fixture (gen_co_stall.py: a
// rate run whose server stalled 3 s while vLLM's semaphore held the
// arrivals back) reproduces every latency statistic vLLM wrote, the
// client-queue ones of PR #54136 included, from start_times − queue_times;
// its reported E2EL P99 (425 ms, from the send) and queue-inclusive P99
// (3425 ms, from the schedule) come out side by side, and the run is
// flagged coordinated_omission.
func TestCoordinatedOmissionFixture(t *testing.T) {
	conv, _ := withToolReported(Profile)
	rep := reportUnder(t, filepath.Join("testdata", "co-stall", "openai-chat-8.0qps-concurrency5-Llama-3.1-8B-Instruct-20261201-093000.json"), conv)
	rr := rep.Runs[0]
	seen := map[string]bool{}
	for _, it := range rr.Reproduction.Items {
		if !strings.HasSuffix(it.Metric, "_ms") {
			continue
		}
		seen[it.Metric] = true
		if it.Status != "reproduced" {
			t.Errorf("%s/%s: %s (%s): reported %.9g, recomputed %.9g", it.Metric, it.Stat, it.Status, it.Reason, float64(it.Reported), float64(it.Recomputed))
		}
	}
	for _, m := range []string{"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "client_queue_time_ms", "e2el_including_client_queue_ms"} {
		if !seen[m] {
			t.Errorf("%s not among the reproduced statistics", m)
		}
	}
	for _, c := range []struct {
		x    *analyze.Metric
		want float64
	}{{analyze.E2E, 425}, {analyze.SchedE2E, 3425}} {
		if got := rr.Metrics.Of(c.x).Value(0.99); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s P99 %v, want %v", c.x.Name, got, c.want)
		}
	}
	found := false
	for _, w := range rr.Warnings {
		if w.Code == analyze.TrapCoordinatedOmission {
			found = true
		}
	}
	if !found {
		t.Errorf("no %s warning", analyze.TrapCoordinatedOmission)
	}
}
