package ingest

import (
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// TestSeriesBufThins adds 10,000 samples of 3 points under a cap of 4,000
// points: every 8th sample is kept (1,250 of them, 3,750 points), evenly,
// with a note; under the cap everything is kept and nothing is said.
func TestSeriesBufThins(t *testing.T) {
	s := SeriesBuf{Max: 4000}
	for k := range int64(10_000) {
		for _, m := range []string{"gpu:a", "gpu:b", "gpu:c"} {
			s.Add(formats.SeriesPoint{Metric: m, Labels: `gpu_index="0"`, TimeNs: k * 1e9, ClockDomain: formats.ClockUnix, Value: float64(k)}, k)
		}
	}
	pts := s.Points()
	if len(pts) != 3750 {
		t.Fatalf("%d points kept, want 3750", len(pts))
	}
	for i, p := range pts {
		if int64(p.Value)%8 != 0 || int64(p.Value) != int64(i/3)*8 {
			t.Fatalf("point %d: sample %v", i, p.Value)
		}
	}
	if n := s.Note(); !strings.Contains(n, "every 8th sample: 3750 of 30000 points kept (the cap is 4000 points") {
		t.Errorf("note %q", n)
	}
	var small SeriesBuf
	small.Add(formats.SeriesPoint{Metric: "m"}, 0)
	if len(small.Points()) != 1 || small.Note() != "" {
		t.Errorf("under the cap: %d points, note %q", len(small.Points()), small.Note())
	}
}
