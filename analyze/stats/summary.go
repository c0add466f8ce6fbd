package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// DefaultPercentiles are the percentiles a Summary holds unless asked
// for others: P50, P90, P95 and P99.
var DefaultPercentiles = []float64{0.50, 0.90, 0.95, 0.99}

// Quantile is one percentile of a sample: P is the probability (0.99 for
// P99), Value the percentile by the summary's Method, and [Lo, Hi] its
// distribution-free CILevel confidence interval (QuantileCI; either side
// NaN where the sample is too small to bound it, both NaN for weighted
// samples). Values are in the sample's unit.
type Quantile struct {
	P, Value, Lo, Hi float64
}

// Summary is the distribution of one sample: count, mean, standard
// deviation, extremes and the percentiles at the probabilities it was
// asked for (Quantiles, in the order asked), in the sample's unit.
// Undefined values (an empty sample; the std of one value) are NaN in Go
// and null in JSON (MarshalJSON).
type Summary struct {
	N         int
	Mean      float64
	Std       float64
	Min       float64
	Max       float64
	Quantiles []Quantile
	// Infinite is how many of the N samples are +∞ (failed requests under
	// a convention that counts them so): the mean is then +∞, the std
	// undefined, and a percentile +∞ where they hold its rank; the JSON
	// writes those as null and the count as "infinite".
	Infinite int
}

// Value returns the percentile at probability p (NaN when the summary
// does not hold it). Probabilities compare within 1e-12, so 0.999 finds
// the quantile parsed from "99.9".
func (s Summary) Value(p float64) float64 {
	if q, ok := s.Quantile(p); ok {
		return q.Value
	}
	return math.NaN()
}

// Quantile returns the quantile at probability p, if the summary holds it.
func (s Summary) Quantile(p float64) (Quantile, bool) {
	for _, q := range s.Quantiles {
		if math.Abs(q.P-p) < 1e-12 {
			return q, true
		}
	}
	return Quantile{}, false
}

// empty is the summary of no values at ps: every statistic NaN.
func empty(n int, ps []float64) Summary {
	nan := math.NaN()
	out := Summary{N: n, Mean: nan, Std: nan, Min: nan, Max: nan, Quantiles: make([]Quantile, len(ps))}
	for i, p := range ps {
		out.Quantiles[i] = Quantile{P: p, Value: nan, Lo: nan, Hi: nan}
	}
	return out
}

// Summarize returns the Summary of xs (NaN values are ignored) with the
// percentiles at ps (nil: DefaultPercentiles) by method m, each with its
// CILevel interval, and the standard deviation with divisor n − ddof (ddof
// 1 is the sample standard deviation, 0 the population one).
func Summarize(xs []float64, ps []float64, m Method, ddof int) Summary {
	if ps == nil {
		ps = DefaultPercentiles
	}
	if len(xs) >= SelectMin {
		return summarizeLarge(xs, ps, m, ddof)
	}
	s := SortedCopy(xs)
	n := len(s)
	if n == 0 {
		return empty(0, ps)
	}
	out := Summary{N: n, Quantiles: make([]Quantile, len(ps))}
	for k := n - 1; k >= 0 && math.IsInf(s[k], 1); k-- {
		out.Infinite++
	}
	out.Mean = mean(s)
	out.Std = stddev(s, out.Mean, ddof)
	out.Min, out.Max = s[0], s[n-1]
	for i, p := range ps {
		lo, hi := QuantileCI(s, p, CILevel)
		out.Quantiles[i] = Quantile{P: p, Value: Percentile(s, p, m), Lo: lo, Hi: hi}
	}
	return out
}

// SummarizeWeighted is guidellm's weighted distribution summary: the values
// with their weights form a probability mass function; mean and population
// std come from it, and the percentile at p (each of ps; nil:
// DefaultPercentiles) is the first value whose cumulative probability
// reaches p (duplicates merged). Values without a positive weight, and NaN
// values, are left out. There is no distribution-free interval for a
// weighted sample: Lo and Hi are NaN. Source: vllm-project/guidellm v0.4+
// src/guidellm/schemas/statistics.py (v0.3 objects/statistics.py).
func SummarizeWeighted(xs, ws []float64, ps []float64) Summary {
	if ps == nil {
		ps = DefaultPercentiles
	}
	type vw struct{ v, w float64 }
	var pts []vw
	total := 0.0
	for i, x := range xs {
		if i < len(ws) && ws[i] > 0 && !math.IsNaN(x) {
			pts = append(pts, vw{x, ws[i]})
			total += ws[i]
		}
	}
	out := empty(len(pts), ps)
	if len(pts) == 0 {
		return out
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].v < pts[j].v })
	mean := 0.0
	for _, p := range pts {
		mean += p.v * p.w / total
	}
	variance := 0.0
	for _, p := range pts {
		variance += p.w / total * (p.v - mean) * (p.v - mean)
	}
	out.Mean, out.Std, out.Min, out.Max = mean, math.Sqrt(variance), pts[0].v, pts[len(pts)-1].v
	q := func(p float64) float64 {
		cum := 0.0
		for i := 0; i < len(pts); i++ {
			cum += pts[i].w / total
			for i+1 < len(pts) && pts[i+1].v == pts[i].v {
				i++
				cum += pts[i].w / total
			}
			if cum >= p {
				return pts[i].v
			}
		}
		return pts[len(pts)-1].v
	}
	for i := range out.Quantiles {
		out.Quantiles[i].Value = q(out.Quantiles[i].P)
	}
	return out
}

// QuantileKey is the JSON key of the percentile at probability p: "p" and
// the percent with "_" for the decimal point: p50, p99, p99_9, p0_1.
// (The reports' default keys p50 … p99 are these.)
func QuantileKey(p float64) string {
	s := strconv.FormatFloat(math.Round(p*100*1e9)/1e9, 'f', -1, 64)
	return "p" + strings.ReplaceAll(s, ".", "_")
}

// QuantileLabel is the percentile's name in text tables: P50, P99.9.
func QuantileLabel(p float64) string {
	return "P" + strconv.FormatFloat(math.Round(p*100*1e9)/1e9, 'f', -1, 64)
}

// MarshalJSON writes the summary as {"n", "mean", "std", "min", one key per
// percentile (QuantileKey: "p50" … "p99", "p99_9"), "max", then each
// percentile's CILevel interval as "<key>_ci95": [lo, hi]}, with NaN as
// null (either side of an interval null when the sample cannot bound it).
func (s Summary) MarshalJSON() ([]byte, error) {
	b := []byte(`{"n":`)
	b = strconv.AppendInt(b, int64(s.N), 10)
	field := func(k string, v float64) {
		b = append(b, ',', '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = AppendJSONFloat(b, v)
	}
	field("mean", s.Mean)
	field("std", s.Std)
	field("min", s.Min)
	for _, q := range s.Quantiles {
		field(QuantileKey(q.P), q.Value)
	}
	field("max", s.Max)
	if s.Infinite > 0 {
		b = append(b, `,"infinite":`...)
		b = strconv.AppendInt(b, int64(s.Infinite), 10)
	}
	for _, q := range s.Quantiles {
		b = append(b, ',', '"')
		b = append(b, QuantileKey(q.P)...)
		b = append(b, `_ci95":[`...)
		b = AppendJSONFloat(b, q.Lo)
		b = append(b, ',')
		b = AppendJSONFloat(b, q.Hi)
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// AppendJSONFloat appends v as a JSON number in Go's shortest form (as
// encoding/json writes a float64), or null when v is NaN or infinite.
func AppendJSONFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// Mean is the arithmetic mean of xs computed with numpy's pairwise
// summation (NaN for an empty xs).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return mean(xs)
}

// Std is the standard deviation of xs around mu with divisor n − ddof,
// summed pairwise as numpy does; NaN when n − ddof ≤ 0.
func Std(xs []float64, mu float64, ddof int) float64 { return stddev(xs, mu, ddof) }

// Variance is the sample variance (divisor n − 1) of xs.
func Variance(xs []float64) float64 {
	s := stddev(xs, Mean(xs), 1)
	return s * s
}

// PairwiseSum adds xs exactly as numpy's add.reduce does for contiguous
// float64 data (0 for an empty xs); see pairwiseSum.
func PairwiseSum(xs []float64) float64 { return pairwiseSum(xs) }

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

// UnmarshalJSON reads what MarshalJSON writes: null as NaN, and the
// percentile keys (QuantileKey) with their "_ci95" intervals back into
// Quantiles, in ascending order of probability.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	num := func(k string) (float64, error) {
		v, ok := raw[k]
		if !ok || string(v) == "null" {
			return math.NaN(), nil
		}
		var f float64
		err := json.Unmarshal(v, &f)
		return f, err
	}
	*s = Summary{}
	if v, ok := raw["n"]; ok {
		if err := json.Unmarshal(v, &s.N); err != nil {
			return fmt.Errorf("n: %w", err)
		}
	}
	var err error
	for _, f := range []struct {
		k   string
		dst *float64
	}{{"mean", &s.Mean}, {"std", &s.Std}, {"min", &s.Min}, {"max", &s.Max}} {
		if *f.dst, err = num(f.k); err != nil {
			return fmt.Errorf("%s: %w", f.k, err)
		}
	}
	if v, ok := raw["infinite"]; ok {
		if err := json.Unmarshal(v, &s.Infinite); err != nil {
			return fmt.Errorf("infinite: %w", err)
		}
	}
	for k := range raw {
		pct, ok := strings.CutPrefix(k, "p")
		if !ok || strings.HasSuffix(k, "_ci95") {
			continue
		}
		p, perr := strconv.ParseFloat(strings.ReplaceAll(pct, "_", "."), 64)
		if perr != nil {
			continue
		}
		q := Quantile{P: p / 100, Lo: math.NaN(), Hi: math.NaN()}
		if q.Value, err = num(k); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if v, ok := raw[k+"_ci95"]; ok {
			var ci [2]*float64
			if err := json.Unmarshal(v, &ci); err != nil {
				return fmt.Errorf("%s_ci95: %w", k, err)
			}
			if ci[0] != nil {
				q.Lo = *ci[0]
			}
			if ci[1] != nil {
				q.Hi = *ci[1]
			}
		}
		s.Quantiles = append(s.Quantiles, q)
	}
	sort.Slice(s.Quantiles, func(i, j int) bool { return s.Quantiles[i].P < s.Quantiles[j].P })
	return nil
}

// ParsePercentiles reads a list of percentiles in percent, "50,90,99.9",
// as the probabilities a Summary takes ([0.5, 0.9, 0.999]): each strictly
// between 0 and 100, ascending, none twice, and no two with the same
// QuantileKey (99.9999999999 and 99.99999999999 both print as p100: the
// JSON would hold the key twice); "" gives nil (the defaults).
func ParsePercentiles(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), "p"))
		v, err := strconv.ParseFloat(part, 64)
		if err != nil || !(v > 0 && v < 100) {
			return nil, fmt.Errorf("percentile %q: want a number between 0 and 100, exclusive (e.g. 99.9)", part)
		}
		p := v / 100
		if len(out) > 0 && p <= out[len(out)-1] {
			return nil, fmt.Errorf("percentiles %q: give them ascending, each once", s)
		}
		if k := QuantileKey(p); k == "p100" || k == "p0" || len(out) > 0 && k == QuantileKey(out[len(out)-1]) {
			return nil, fmt.Errorf("percentile %q: its key would be %s, the same as another's or the minimum's or maximum's (keys keep 9 decimals of the percent)", part, k)
		}
		out = append(out, p)
	}
	return out, nil
}

// summarizeLarge is Summarize of a sample of SelectMin values or more:
// the order statistics it reports are read by SelectRanks (no sorted
// copy), the mean and standard deviation summed in the sample's own order.
func summarizeLarge(xs []float64, ps []float64, m Method, ddof int) Summary {
	vals := xs
	for _, x := range xs {
		if math.IsNaN(x) {
			vals = make([]float64, 0, len(xs))
			for _, x := range xs {
				if !math.IsNaN(x) {
					vals = append(vals, x)
				}
			}
			break
		}
	}
	n := len(vals)
	if n == 0 {
		return empty(0, ps)
	}
	infinite := 0
	for _, x := range vals {
		if math.IsInf(x, 1) {
			infinite++
		}
	}
	ranks := []int{0, n - 1}
	cis := make([][2]int, len(ps))
	for i, p := range ps {
		ranks = append(ranks, percentileRanks(n, p, m)...)
		l, u := QuantileCIRanks(n, p, CILevel)
		cis[i] = [2]int{l, u}
		for _, r := range cis[i] {
			if r >= 1 {
				ranks = append(ranks, r-1)
			}
		}
	}
	slices.Sort(ranks)
	ranks = slices.Compact(ranks)
	got := SelectRanks(vals, ranks)
	at := func(i int) float64 {
		j, _ := slices.BinarySearch(ranks, i)
		return got[j]
	}
	out := Summary{N: n, Quantiles: make([]Quantile, len(ps)), Infinite: infinite}
	out.Mean = mean(vals)
	out.Std = stddev(vals, out.Mean, ddof)
	out.Min, out.Max = at(0), at(n-1)
	for i, p := range ps {
		q := Quantile{P: p, Value: percentileAt(n, p, m, at), Lo: math.NaN(), Hi: math.NaN()}
		if l := cis[i][0]; l >= 1 {
			q.Lo = at(l - 1)
		}
		if u := cis[i][1]; u >= 1 {
			q.Hi = at(u - 1)
		}
		out.Quantiles[i] = q
	}
	return out
}
