package stats

import (
	"math/rand/v2"
	"testing"
)

// TestPairwiseSumSq: the allocation-free sum of squared deviations gives
// the same bits as pairwiseSum over the materialized squares (what numpy's
// std computes), at sizes around every block boundary.
func TestPairwiseSumSq(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 8, 9, 127, 128, 129, 135, 136, 1000, 4099, 100_003} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 20 + 7*r.NormFloat64()
		}
		mu := 19.5
		sq := make([]float64, n)
		for i, x := range xs {
			sq[i] = (x - mu) * (x - mu)
		}
		if got, want := pairwiseSumSq(xs, mu), pairwiseSum(sq); got != want {
			t.Errorf("n=%d: %v, want %v", n, got, want)
		}
	}
}
