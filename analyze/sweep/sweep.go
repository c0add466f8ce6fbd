// Package sweep turns runs of one configuration at several load levels —
// a GenAI-Perf or AIPerf concurrency sweep, a vLLM or SGLang rate sweep,
// inference-perf's stages, guidellm's benchmarks — into curves, and
// compares the curves of several sides (`tokentrace compare`): latency
// percentiles against the achieved request rate and output throughput,
// the Pareto frontier of per-user speed against total throughput (per
// GPU), the knee of the latency curve (Kneedle), the highest load meeting
// an SLO (analyze/slo's capacity) and the cost per million tokens.
//
// Runs are grouped as package compare matches them: a series is the runs
// of one side that share every matched configuration key but the load
// keys (compare.LoadKeys: concurrency, rate); its load levels are its
// configurations, each the pooled runs (trials) of one load. A series
// with two or more load levels is a sweep. Series of different sides with
// the same key are compared.
package sweep

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/compare"
	"github.com/tokentrace/tokentrace/analyze/slo"
	"github.com/tokentrace/tokentrace/convention"
)

// MinKneeLevels is the fewest load levels Kneedle is run on: with fewer,
// a curve has no interior point far enough from its ends to call a knee.
const MinKneeLevels = 4

// KneeSensitivity is Kneedle's sensitivity S (Satopää et al. 2011 §III:
// S = 1 detects knees well offline).
const KneeSensitivity = 1.0

// Options control the sweeps.
type Options struct {
	// Keys are the matched configuration keys (compare.ParseKeys).
	Keys []string
	// SLO, when it has constraints, gives each level its attainment and
	// each series its capacity at Target (0: slo.DefaultCapacityTarget).
	SLO    analyze.SLO
	Target float64
	// GPUs divides total throughputs per GPU (0: not given).
	GPUs int
	// CostPerHour is the price of one GPU-hour when GPUs is given, else of
	// the whole deployment per hour (0: no cost).
	CostPerHour float64
	// Tools map reported statistics of summary-only runs.
	Tools *convention.Set
}

// Result is the sweeps of a comparison.
type Result struct {
	GPUs        int       `json:"gpus,omitempty"`
	CostPerHour analyze.F `json:"cost_per_hour,omitempty"`
	// Target is the capacity's attainment target (with an SLO).
	Target analyze.F `json:"target,omitempty"`
	SLO    string    `json:"slo,omitempty"`
	Series []Series  `json:"series"`
}

// Series is one configuration (without its load) swept on the sides: a
// curve per side that has it.
type Series struct {
	Key    string  `json:"key"`
	Curves []Curve `json:"curves"`
	// Capacity compares the sides' capacities (with an SLO).
	Capacity []CapacityRow `json:"capacity,omitempty"`
	// Unloaded are runs of the series without a configured load (no
	// concurrency or rate: inference-perf's summary over all its stages),
	// left out of the curves.
	Unloaded []string `json:"unloaded,omitempty"`
}

// Curve is one side's sweep: its load levels in load order (concurrency,
// then rate).
type Curve struct {
	Side   int     `json:"side"`
	Label  string  `json:"label"`
	Points []Point `json:"points"`
	// Knee is Kneedle's knee of P99 E2E against the achieved request rate
	// (nil: none; KneeWhy says why).
	Knee    *Knee  `json:"knee"`
	KneeWhy string `json:"knee_why,omitempty"`
	// Capacity is the highest request rate meeting the SLO
	// (slo.ComputeCapacity over the side's runs; with an SLO).
	Capacity *slo.Capacity `json:"capacity,omitempty"`
	// CostAtCapacity are the costs per million output and total tokens at
	// the capacity (with an SLO and a cost).
	CostAtCapacity *Cost `json:"cost_at_capacity,omitempty"`
}

// Point is one load level of a curve: the pooled runs of one
// configuration.
type Point struct {
	// Load is the level's load keys ("concurrency=4").
	Load string   `json:"load"`
	Runs []string `json:"runs"`
	// RequestsPerS, OutputTokensPerS and TotalTokensPerS are the achieved
	// throughputs (the runs' mean); Reported when any is the tool's own.
	RequestsPerS     analyze.F `json:"requests_per_s"`
	OutputTokensPerS analyze.F `json:"output_tokens_per_s"`
	TotalTokensPerS  analyze.F `json:"total_tokens_per_s"`
	Reported         bool      `json:"reported"`
	// OutputTokensPerSPerGPU is OutputTokensPerS / GPUs (with GPUs).
	OutputTokensPerSPerGPU analyze.F `json:"output_tokens_per_s_per_gpu,omitempty"`
	// PerUserTokensPerS is the median request's decode rate, 1000 / P50
	// of TPOT in ms (GenAI-Perf's and AIPerf's output token throughput per
	// user); null for a non-streaming run.
	PerUserTokensPerS analyze.F `json:"per_user_tokens_per_s"`
	// Latency are P50 and P99 of TTFT, TPOT and E2E in ms, keyed
	// "ttft_p50_ms" …, from the pooled samples (or the tool's reported
	// values for summary-only runs).
	Latency map[string]analyze.F `json:"latency"`
	// Attainment is the share of requests meeting the SLO (with one).
	Attainment analyze.F `json:"attainment,omitempty"`
	// Pareto marks a point on the curve's Pareto frontier of per-user
	// speed against total output throughput (per GPU with GPUs): no other
	// point of the curve is at least as good on both and better on one.
	Pareto bool `json:"pareto"`
	// Cost is the price per million tokens at this level (with a cost).
	Cost *Cost `json:"cost,omitempty"`
}

// Cost is the price per million tokens at a throughput: cost per hour ×
// GPUs (1 when not given) / 3600 s / throughput × 10⁶.
type Cost struct {
	PerMillionOutput analyze.F `json:"per_million_output_tokens"`
	PerMillionTotal  analyze.F `json:"per_million_total_tokens"`
}

// Knee is a curve's knee: the load level where P99 E2E starts to rise
// faster than the request rate, by Kneedle.
type Knee struct {
	Load         string    `json:"load"`
	RequestsPerS analyze.F `json:"requests_per_s"`
	E2EP99Ms     analyze.F `json:"e2e_p99_ms"`
}

// CapacityRow is one side's capacity in a series and its change against
// the base side's.
type CapacityRow struct {
	Side    int       `json:"side"`
	Label   string    `json:"label"`
	RateRPS analyze.F `json:"rate_rps"`
	AtLeast bool      `json:"at_least"`
	Change  analyze.F `json:"change"`
	Note    string    `json:"note,omitempty"`
}

// latencyKeys are the latency statistics a point holds.
var latencyMetrics = []*analyze.Metric{analyze.TTFT, analyze.TPOT, analyze.E2E}

// ShortLoad drops the unknown keys ("rate=?") from a load level's key:
// "concurrency=4".
func ShortLoad(load string) string {
	var parts []string
	for _, p := range strings.Split(load, ", ") {
		if !strings.HasSuffix(p, "=?") {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return load
	}
	return strings.Join(parts, ", ")
}

// LatencyKey is a point's Latency key for a metric and percentile
// ("e2e_p99_ms").
func LatencyKey(x *analyze.Metric, p float64) string {
	return fmt.Sprintf("%s_p%g_ms", x.Name, p*100)
}

// Build finds the sweeps among the sides' runs (see the package
// documentation). It returns nil when no side has a series of two or more
// load levels.
func Build(sides []compare.Side, opt Options) *Result {
	var loadless []string
	for _, k := range opt.Keys {
		if !slices.Contains(compare.LoadKeys, k) {
			loadless = append(loadless, k)
		}
	}
	var loads []string
	for _, k := range opt.Keys {
		if slices.Contains(compare.LoadKeys, k) {
			loads = append(loads, k)
		}
	}
	if len(loads) == 0 {
		return nil // runs are not told apart by load
	}
	target := opt.Target
	if target == 0 {
		target = slo.DefaultCapacityTarget
	}
	res := &Result{GPUs: opt.GPUs, CostPerHour: analyze.F(opt.CostPerHour), Series: []Series{}}
	withSLO := len(opt.SLO.Constraints) > 0
	if withSLO {
		res.Target, res.SLO = analyze.F(target), opt.SLO.Text
	}
	// series key → side → load key → runs
	type level struct {
		key  string
		cfg  compare.Config
		runs []*analyze.RunData
	}
	series := map[string][][]*level{}
	unloaded := map[string][]string{}
	var order []string
	for si, s := range sides {
		for _, rd := range s.Runs {
			if compare.Warmup(rd.Run) {
				continue
			}
			cfg := compare.ConfigOf(rd.Run)
			sk, lk := cfg.Key(loadless), cfg.Key(loads)
			if len(loadless) == 0 {
				sk = "all runs"
			}
			if series[sk] == nil {
				series[sk] = make([][]*level, len(sides))
				order = append(order, sk)
			}
			noLoad := true
			for _, k := range loads {
				noLoad = noLoad && cfg[k] == ""
			}
			if noLoad {
				unloaded[sk] = append(unloaded[sk], sides[si].Label+": "+rd.Run.RunID)
				continue
			}
			var lv *level
			for _, l := range series[sk][si] {
				if l.key == lk {
					lv = l
				}
			}
			if lv == nil {
				lv = &level{key: lk, cfg: cfg}
				series[sk][si] = append(series[sk][si], lv)
			}
			lv.runs = append(lv.runs, rd)
		}
	}
	for _, sk := range order {
		levels := series[sk]
		swept := false
		for _, ls := range levels {
			if len(ls) >= 2 {
				swept = true
			}
		}
		if !swept {
			continue
		}
		ser := Series{Key: sk, Curves: []Curve{}, Unloaded: unloaded[sk]}
		for si, ls := range levels {
			if len(ls) == 0 {
				continue
			}
			c := Curve{Side: si, Label: sides[si].Label, Points: []Point{}}
			sort.SliceStable(ls, func(i, j int) bool { return compare.Less(ls[i].cfg, ls[j].cfg, loads) })
			var all []*analyze.RunData
			for _, l := range ls {
				c.Points = append(c.Points, point(l.key, l.runs, opt))
				all = append(all, l.runs...)
			}
			markPareto(c.Points)
			c.Knee, c.KneeWhy = kneeOf(c.Points)
			if withSLO {
				rep := &analyze.Report{}
				for _, rd := range all {
					rep.Runs = append(rep.Runs, rd.Report)
				}
				capa := slo.ComputeCapacity(slo.SweepPoints(rep), target)
				if opt.GPUs > 0 {
					capa.GPUs = opt.GPUs
					capa.PerGPURateRPS = capa.RateRPS / analyze.F(opt.GPUs)
				}
				c.Capacity = &capa
				if opt.CostPerHour > 0 && !math.IsNaN(float64(capa.RateRPS)) {
					totals := map[string]float64{}
					for _, rd := range all {
						totals[rd.Run.RunID] = float64(rd.Report.Throughput.TotalTokensPerS)
					}
					total := interpolate(capa.Points, float64(capa.RateRPS), func(p slo.CapacityPoint) float64 {
						return totals[p.RunID]
					})
					c.CostAtCapacity = costOf(opt, float64(capa.OutputTokensPerS), total)
				}
			}
			ser.Curves = append(ser.Curves, c)
		}
		if withSLO {
			ser.Capacity = capacityRows(ser.Curves)
		}
		res.Series = append(res.Series, ser)
	}
	if len(res.Series) == 0 {
		return nil
	}
	return res
}

// point pools one load level's runs.
func point(load string, runs []*analyze.RunData, opt Options) Point {
	p := Point{Load: load, Latency: map[string]analyze.F{}}
	var rps, out, tot []float64
	good, total := 0, 0
	for _, rd := range runs {
		p.Runs = append(p.Runs, rd.Run.RunID)
		t := rd.Report.Throughput
		rps, out, tot = append(rps, float64(t.RequestsPerS)), append(out, float64(t.OutputTokensPerS)), append(tot, float64(t.TotalTokensPerS))
		p.Reported = p.Reported || t.Reported
		if g := rd.Report.Goodput; g != nil {
			good += g.Good
			total += g.Total
		}
	}
	p.RequestsPerS, p.OutputTokensPerS, p.TotalTokensPerS = meanF(rps), meanF(out), meanF(tot)
	if opt.GPUs > 0 {
		p.OutputTokensPerSPerGPU = p.OutputTokensPerS / analyze.F(opt.GPUs)
	}
	for _, x := range latencyMetrics {
		for _, q := range []float64{0.5, 0.99} {
			c := compare.Pooled(x, compare.Stat{Name: "p", P: q}, runs, opt.Tools)
			p.Latency[LatencyKey(x, q)] = c.Value
		}
	}
	p.PerUserTokensPerS = analyze.F(1000 / float64(p.Latency[LatencyKey(analyze.TPOT, 0.5)]))
	if len(opt.SLO.Constraints) > 0 {
		p.Attainment = analyze.F(math.NaN())
		if total > 0 {
			p.Attainment = analyze.F(float64(good) / float64(total))
		}
	}
	if opt.CostPerHour > 0 {
		p.Cost = costOf(opt, float64(p.OutputTokensPerS), float64(p.TotalTokensPerS))
	}
	return p
}

// meanF is the mean of the finite values (NaN when none).
func meanF(xs []float64) analyze.F {
	s, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s += x
			n++
		}
	}
	if n == 0 {
		return analyze.F(math.NaN())
	}
	return analyze.F(s / float64(n))
}

// costOf is the cost per million output and total tokens at those
// throughputs (tokens/s): hourly price × GPUs / 3600 / throughput × 10⁶.
func costOf(opt Options, out, total float64) *Cost {
	hourly := opt.CostPerHour * float64(max(opt.GPUs, 1))
	per := func(tps float64) analyze.F {
		if !(tps > 0) {
			return analyze.F(math.NaN())
		}
		return analyze.F(hourly / 3600 / tps * 1e6)
	}
	return &Cost{PerMillionOutput: per(out), PerMillionTotal: per(total)}
}

// interpolate is f linearly interpolated at rate over the capacity's
// points (sorted by rate), as slo.ComputeCapacity interpolates the output
// throughput: NaN outside the points' range.
func interpolate(pts []slo.CapacityPoint, rate float64, f func(slo.CapacityPoint) float64) float64 {
	for i := range pts {
		r := float64(pts[i].RateRPS)
		if r == rate {
			return f(pts[i])
		}
		if i > 0 && float64(pts[i-1].RateRPS) < rate && rate < r {
			a, b := pts[i-1], pts[i]
			t := (rate - float64(a.RateRPS)) / (r - float64(a.RateRPS))
			return f(a) + t*(f(b)-f(a))
		}
	}
	return math.NaN()
}
