package plots

import (
	"math"
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestLayoutLabelsNoOverlap: labels whose anchors coincide or nearly do
// (two runs' P99 at 138.8 and 142 ms, the "P99 138.8225.4" of a
// collision) are placed without overlapping, inside the bounds, each
// touching its anchor's neighbourhood; a lone label keeps the default
// place (right of the anchor, above it).
func TestLayoutLabelsNoOverlap(t *testing.T) {
	bounds := vg.Rectangle{Min: vg.Point{X: 0, Y: 0}, Max: vg.Point{X: 400, Y: 300}}
	size := vg.Point{X: 50, Y: 9}
	var anchors, sizes []vg.Point
	for i := 0; i < 6; i++ {
		anchors = append(anchors, vg.Point{X: 200 + vg.Length(i), Y: 100})
		sizes = append(sizes, size)
	}
	anchors = append(anchors, vg.Point{X: 395, Y: 295}) // at the corner: must go left and below
	sizes = append(sizes, size)
	rs := layoutLabels(anchors, sizes, bounds)
	for i, r := range rs {
		if r.Min.X < bounds.Min.X || r.Max.X > bounds.Max.X || r.Min.Y < bounds.Min.Y || r.Max.Y > bounds.Max.Y {
			t.Errorf("label %d %v outside the bounds", i, r)
		}
		if d := math.Abs(float64(r.Min.Y+r.Max.Y)/2 - float64(anchors[i].Y)); d > 9*9+20 {
			t.Errorf("label %d is %.0f pt from its anchor", i, d)
		}
		for j := 0; j < i; j++ {
			if overlapsAny(r, []vg.Rectangle{rs[j]}) {
				t.Errorf("labels %d %v and %d %v overlap", i, r, j, rs[j])
			}
		}
	}
	if rs[0].Min != (vg.Point{X: 203, Y: 102}) {
		t.Errorf("first label at %v, want right of and above its anchor", rs[0].Min)
	}
	if rs[6].Max.X > 395 || rs[6].Max.Y > 295 {
		t.Errorf("corner label %v not left of and below its anchor", rs[6])
	}
	// the control: without the layout, the six labels would overlap
	if !overlapsAny(vg.Rectangle{Min: vg.Point{X: 203, Y: 102}, Max: vg.Point{X: 253, Y: 111}}, []vg.Rectangle{{Min: vg.Point{X: 204, Y: 102}, Max: vg.Point{X: 254, Y: 111}}}) {
		t.Error("overlapsAny misses an overlap")
	}
}

// TestITLLogAxis: one 80 s gap among ~45 ms ones switches ITL by position
// to a log axis (values ≤ 0 drawn at half the smallest positive one); a
// plain spread does not.
func TestITLLogAxis(t *testing.T) {
	st := []PositionStats{{From: 1, To: 1, P50: 44, P99: 130}, {From: 2, To: 2, P50: 0, P99: 47}, {From: 3, To: 3, P50: 45, P99: 80000}, {From: 4, To: 4, P50: 46, P99: 52}}
	logY, floor, nonPos := itlLogAxis(st)
	if !logY || floor != 22 || nonPos != 1 {
		t.Errorf("80 s outlier: log %v floor %v non-positive %d; want log, 22, 1", logY, floor, nonPos)
	}
	st[2].P99 = 140
	if logY, _, _ := itlLogAxis(st); logY {
		t.Error("a 3× spread gets a log axis")
	}
}
