package stats

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// PMFStat computes statistic stat of the values xs·scale (scale converts
// the caller's unit to the result's: 1e-3 for ms to s), weighted by ws
// (nil: equal weights), the way guidellm's DistributionSummary does:
// merged false follows its v0.2–v0.3 rules, merged true its v0.4+ rules. The result is in the tool's unit (count
// is not scaled, variance is in the unit squared). ok is false for a
// statistic guidellm does not report. An empty sample gives 0, as guidellm
// writes.
//
// Statistics: mean, median, mode, variance, std_dev, min, max, count,
// total_sum, and percentiles named "p<percent>" ("p0.1", "p99.9"). All come
// from the weighted pmf (values sorted, probabilities w/Σw): mean = Σ v·p,
// variance = Σ (v − mean)²·p (population), percentile p = the first value
// whose cumulative probability reaches p.
//
// v0.2–v0.3 (objects/statistics.py from_distribution_function): values are
// not merged, the percentile is argmax(cdf ≥ p) (the smallest value when
// rounding leaves every cdf below p), mode is the value of the largest
// single probability, count = number of values, total_sum = Σ values.
//
// v0.4+ (schemas/statistics.py from_values, from_pdf): equal values are
// merged (weights summed), zero weights dropped, all weights taken equal
// when they sum to ≤ 1e-6; the percentile is searchsorted(cdf, p, "left");
// count = round(Σ weights) (so the token-weighted TPOT's count is Σ N);
// total_sum = mean·count.
//
// Sums are numpy's pairwise sums, cumulative sums sequential, as numpy
// computes them.
func PMFStat(xs, ws []float64, scale float64, stat string, merged bool) (float64, bool) {
	p, isPct := pmfPercentile(stat)
	switch stat {
	case "mean", "median", "mode", "variance", "std_dev", "min", "max", "count", "total_sum":
	default:
		if !isPct {
			return math.NaN(), false
		}
	}
	v04 := merged
	type pt struct{ v, w float64 }
	pts := make([]pt, 0, len(xs))
	rawW := make([]float64, 0, len(xs))
	for i, x := range xs {
		w := 1.0
		if ws != nil {
			w = 0
			if i < len(ws) {
				w = ws[i]
			}
		}
		if math.IsNaN(x) || math.IsNaN(w) {
			continue
		}
		pts = append(pts, pt{x * scale, w})
		rawW = append(rawW, w)
	}
	var vals, probs []float64
	var count, totalSum float64
	if v04 {
		count = math.RoundToEven(pmfSum(rawW))
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].v < pts[j].v })
		var mw []float64
		for _, q := range pts {
			if n := len(vals); n > 0 && vals[n-1] == q.v {
				mw[n-1] += q.w
				continue
			}
			vals = append(vals, q.v)
			mw = append(mw, q.w)
		}
		k := 0
		for i := range vals {
			if mw[i] > 0 {
				vals[k], mw[k] = vals[i], mw[i]
				k++
			}
		}
		vals, mw = vals[:k], mw[:k]
		tw := pmfSum(mw)
		if tw <= 1e-6 {
			for i := range mw {
				mw[i] = 1
			}
			tw = pmfSum(mw)
		}
		probs = make([]float64, len(mw))
		for i, w := range mw {
			probs[i] = w / tw
		}
	} else {
		tw := pmfSum(rawW) // over the unsorted weights, as numpy
		probs0 := make([]float64, len(pts))
		for i, q := range pts {
			probs0[i] = q.w / tw
		}
		idx := make([]int, len(pts))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return pts[idx[a]].v < pts[idx[b]].v })
		for _, i := range idx {
			vals = append(vals, pts[i].v)
			probs = append(probs, probs0[i])
		}
		count = float64(len(vals))
		totalSum = pmfSum(vals)
	}
	if len(vals) == 0 {
		if stat == "count" {
			return count, true
		}
		return 0, true
	}
	prod := make([]float64, len(vals))
	for i := range vals {
		prod[i] = vals[i] * probs[i]
	}
	mean := pairwiseSum(prod)
	switch stat {
	case "mean":
		return mean, true
	case "min":
		return vals[0], true
	case "max":
		return vals[len(vals)-1], true
	case "count":
		return count, true
	case "total_sum":
		if v04 {
			return mean * count, true
		}
		return totalSum, true
	case "mode":
		best := 0
		for i := range probs {
			if probs[i] > probs[best] {
				best = i
			}
		}
		return vals[best], true
	case "variance", "std_dev":
		for i := range vals {
			d := vals[i] - mean
			prod[i] = d * d * probs[i]
		}
		v := pairwiseSum(prod)
		if stat == "std_dev" {
			return math.Sqrt(v), true
		}
		return v, true
	case "median":
		p = 0.5
	}
	cum := 0.0
	for i := range probs {
		cum += probs[i]
		if cum >= p {
			return vals[i], true
		}
	}
	if v04 {
		return vals[len(vals)-1], true // numpy would index past the end
	}
	return vals[0], true // np.argmax of all-False
}

// pmfPercentiles are the probabilities guidellm writes its percentiles
// at, under the names ingest/guidellm gives them (the literals of its
// Percentiles model, so that cdf ≥ p compares the same numbers).
var pmfPercentiles = map[string]float64{
	"p0.1": 0.001, "p1": 0.01, "p5": 0.05, "p10": 0.1, "p25": 0.25, "p50": 0.5,
	"p75": 0.75, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p99.9": 0.999,
}

// pmfPercentile reads "p<percent>" as a probability.
func pmfPercentile(stat string) (float64, bool) {
	if p, ok := pmfPercentiles[stat]; ok {
		return p, true
	}
	s, ok := strings.CutPrefix(stat, "p")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 100 {
		return 0, false
	}
	return v / 100, true
}

func pmfSum(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return pairwiseSum(xs)
}
