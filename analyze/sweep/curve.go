package sweep

import (
	"fmt"
	"math"

	"github.com/tokentrace/tokentrace/analyze"
)

// markPareto marks the points on the Pareto frontier of per-user speed
// (PerUserTokensPerS, higher is better) against total output throughput
// (per GPU when given, else OutputTokensPerS; higher is better): a point
// is on it when no other point is at least as good on both and strictly
// better on one. Points missing either value are never on it.
func markPareto(pts []Point) {
	x := func(p Point) float64 {
		if !math.IsNaN(float64(p.OutputTokensPerSPerGPU)) && p.OutputTokensPerSPerGPU != 0 {
			return float64(p.OutputTokensPerSPerGPU)
		}
		return float64(p.OutputTokensPerS)
	}
	ok := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	for i := range pts {
		xi, yi := x(pts[i]), float64(pts[i].PerUserTokensPerS)
		if !ok(xi) || !ok(yi) {
			continue
		}
		dominated := false
		for j := range pts {
			xj, yj := x(pts[j]), float64(pts[j].PerUserTokensPerS)
			if j == i || !ok(xj) || !ok(yj) {
				continue
			}
			if xj >= xi && yj >= yi && (xj > xi || yj > yi) {
				dominated = true
				break
			}
		}
		pts[i].Pareto = !dominated
	}
}

// kneeOf finds the knee of P99 E2E against the achieved request rate
// with Kneedle over the points in load order, or says why there is none.
// Past saturation a higher load can complete fewer requests per second
// (the curve folds back): Kneedle needs the rate to rise, so it runs over
// the levels before the first whose achieved rate does not exceed the
// previous one's — the knee lies before that level.
func kneeOf(pts []Point) (*Knee, string) {
	var xs, ys []float64
	var idx []int
	folded := ""
	for i, p := range pts {
		x, y := float64(p.RequestsPerS), float64(p.Latency[LatencyKey(analyze.E2E, 0.99)])
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			continue
		}
		if len(xs) > 0 && x <= xs[len(xs)-1] {
			folded = p.Load
			break
		}
		xs, ys = append(xs, x), append(ys, y)
		idx = append(idx, i)
	}
	if len(xs) < MinKneeLevels {
		why := fmt.Sprintf("%d load levels with both a request rate and a P99 E2E: a knee needs at least %d", len(xs), MinKneeLevels)
		if folded != "" {
			why = fmt.Sprintf("the achieved rate stops rising at %s (past saturation), leaving %d rising load levels: a knee needs at least %d", ShortLoad(folded), len(xs), MinKneeLevels)
		}
		return nil, why
	}
	k, why := Kneedle(xs, ys, KneeSensitivity)
	if k < 0 {
		return nil, why
	}
	p := pts[idx[k]]
	return &Knee{Load: p.Load, RequestsPerS: p.RequestsPerS, E2EP99Ms: p.Latency[LatencyKey(analyze.E2E, 0.99)]}, ""
}

// Kneedle returns the index of the knee of an increasing convex curve
// (x ascending), or -1 and why there is none, by the offline Kneedle
// method (Satopää, Albrecht, Irwin and Raghavan, "Finding a 'Kneedle' in
// a Haystack: Detecting Knee Points in System Behavior", ICDCS Workshops
// 2011), without smoothing:
//
//  1. normalize both axes to [0, 1]: xn = (x − min x)/(max x − min x),
//     likewise yn;
//  2. the difference curve d = xn − yn (how far the convex curve lies
//     below the chord from its first to its last point);
//  3. every local maximum d(i) of d sets a threshold T = d(i) − S·Σ(xn(j+1)
//     − xn(j))/(n − 1) = d(i) − S/(n − 1);
//  4. the knee is the first local maximum after which d falls below its
//     threshold before the next local maximum (the first knee, as the
//     kneed library reports by default).
//
// A curve that never rises (max y = min y), x values that are all equal,
// or a difference curve that never clears its threshold (a straight or
// concave curve) has no knee.
func Kneedle(x, y []float64, s float64) (int, string) {
	n := len(x)
	if n < 3 {
		return -1, "fewer than three points"
	}
	xmin, xmax, ymin, ymax := x[0], x[n-1], math.Inf(1), math.Inf(-1)
	for _, v := range y {
		ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
	}
	if !(xmax > xmin) {
		return -1, "every load level has the same request rate"
	}
	if !(ymax > ymin) {
		return -1, "P99 E2E does not change across the load levels"
	}
	d := make([]float64, n)
	for i := range x {
		d[i] = (x[i]-xmin)/(xmax-xmin) - (y[i]-ymin)/(ymax-ymin)
	}
	step := s / float64(n-1)
	for i := 1; i < n-1; i++ {
		if !(d[i] >= d[i-1] && d[i] > d[i+1]) || d[i] <= 0 {
			continue
		}
		t := d[i] - step
		for j := i + 1; j < n; j++ {
			if j < n-1 && d[j] >= d[j-1] && d[j] > d[j+1] {
				break // the next local maximum came first
			}
			if d[j] < t {
				return i, ""
			}
		}
	}
	return -1, "no knee: P99 E2E rises about as fast as the request rate (Kneedle's difference curve never falls below its threshold)"
}

// capacityRows compares each curve's capacity with the first curve's
// (the base side's when it has the series).
func capacityRows(curves []Curve) []CapacityRow {
	var out []CapacityRow
	var base float64 = math.NaN()
	for i, c := range curves {
		if c.Capacity == nil {
			continue
		}
		r := float64(c.Capacity.RateRPS)
		row := CapacityRow{Side: c.Side, Label: c.Label, RateRPS: c.Capacity.RateRPS, AtLeast: c.Capacity.AtLeast, Change: analyze.F(math.NaN()), Note: c.Capacity.Note}
		if i == 0 {
			base = r
		} else if base > 0 {
			row.Change = analyze.F(r/base - 1)
		}
		out = append(out, row)
	}
	return out
}
