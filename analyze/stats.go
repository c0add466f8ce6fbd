package analyze

import (
	"math"
)

// Summary is the distribution of one metric over a run: count, mean,
// standard deviation, extremes and the P50/P90/P95/P99 percentiles, in the
// metric's unit (the JSON key says which: ttft_ms, osl_tokens, …).
// Undefined values (empty sample; std of one value) are NaN in Go and null
// in JSON.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	// CI holds the distribution-free CILevel confidence interval of P50,
	// P90, P95 and P99 ([lo, hi]; NaN where the sample is too small to
	// bound that side; see QuantileCI).
	CI [4][2]float64 `json:"-"`
}

// Summarize returns the Summary of xs (NaN values are ignored) with the
// given percentile method and standard-deviation divisor n − ddof (ddof 1 is
// the sample standard deviation, 0 the population one).
func Summarize(xs []float64, m PercentileMethod, ddof int) Summary {
	s := sortedCopy(xs)
	n := len(s)
	out := Summary{N: n}
	if n == 0 {
		nan := math.NaN()
		out.Mean, out.Std, out.Min, out.Max = nan, nan, nan, nan
		out.P50, out.P90, out.P95, out.P99 = nan, nan, nan, nan
		for i := range out.CI {
			out.CI[i] = [2]float64{nan, nan}
		}
		return out
	}
	out.Mean = mean(s)
	out.Std = stddev(s, out.Mean, ddof)
	out.Min, out.Max = s[0], s[n-1]
	out.P50 = Percentile(s, 0.50, m)
	out.P90 = Percentile(s, 0.90, m)
	out.P95 = Percentile(s, 0.95, m)
	out.P99 = Percentile(s, 0.99, m)
	for i, p := range []float64{0.5, 0.9, 0.95, 0.99} {
		lo, hi := QuantileCI(s, p, CILevel)
		out.CI[i] = [2]float64{lo, hi}
	}
	return out
}

// mean is the arithmetic mean computed with pairwise summation, as numpy's
// np.mean does, so results agree with the peer tools to the last bits.
func mean(xs []float64) float64 { return pairwiseSum(xs) / float64(len(xs)) }

// stddev is sqrt(Σ(x−mean)² / (n − ddof)); NaN when n − ddof ≤ 0.
func stddev(xs []float64, mu float64, ddof int) float64 {
	d := len(xs) - ddof
	if d <= 0 {
		return math.NaN()
	}
	return math.Sqrt(pairwiseSumSq(xs, mu) / float64(d))
}

// pairwiseSumSq is pairwiseSum of the squared deviations (x − mu)² without
// materializing them: the same blocks in the same order, so the same bits,
// with no allocation proportional to len(xs).
func pairwiseSumSq(xs []float64, mu float64) float64 {
	n := len(xs)
	if n <= 128 {
		var sq [128]float64
		for i, x := range xs {
			sq[i] = (x - mu) * (x - mu)
		}
		return pairwiseSum(sq[:n])
	}
	half := n / 2
	half -= half % 8
	return pairwiseSumSq(xs[:half], mu) + pairwiseSumSq(xs[half:], mu)
}

// pairwiseSum adds xs the way numpy's add.reduce does for contiguous
// float64 data: blocks of up to 128 values summed with 8 running partial
// sums, larger arrays split in halves (at a multiple of 8) recursively.
func pairwiseSum(xs []float64) float64 {
	n := len(xs)
	switch {
	case n < 8:
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], xs[:8])
		i := 8
		for ; i+8 <= n; i += 8 {
			for j := 0; j < 8; j++ {
				r[j] += xs[i+j]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += xs[i]
		}
		return s
	default:
		half := n / 2
		half -= half % 8
		return pairwiseSum(xs[:half]) + pairwiseSum(xs[half:])
	}
}
