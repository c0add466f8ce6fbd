package vllmbench

import (
	"math"
	"slices"
	"testing"
)

// TestMayExceedMedianTiny: the shortcut must not refuse what the
// exact test (median > 0 and first gap > 5 × median) takes, at any
// magnitude: with subnormal gaps g0/5 rounds to a whole multiple of the
// smallest double (11u/5 → 2u), so a gap of 2u was not counted below it
// though 5 × 2u = 10u < 11u.
func TestMayExceedMedianTiny(t *testing.T) {
	u := math.SmallestNonzeroFloat64
	for _, c := range []struct {
		g0   float64
		rest []float64
	}{
		{11 * u, []float64{2 * u, 2 * u, 2 * u, 2 * u}},
		{11 * u, []float64{2 * u, 2 * u, 2 * u, 9 * u, 9 * u}},
		{2021 * u, []float64{404 * u, 404 * u, 404 * u, 1}},
		{math.MaxFloat64, []float64{math.MaxFloat64 / 5.000001, math.MaxFloat64 / 5.000001, math.MaxFloat64 / 5.000001, 1e308}},
	} {
		med := median(slices.Clone(c.rest))
		exact := med > 0 && c.g0 > roleChunkFactor*med
		if !exact {
			t.Fatalf("%v %v: the exact test does not take it (median %v)", c.g0, c.rest, med)
		}
		if !mayExceedMedian(c.g0, c.rest) {
			t.Errorf("first gap %v, others %v (median %v): refused", c.g0, c.rest, med)
		}
	}
}
