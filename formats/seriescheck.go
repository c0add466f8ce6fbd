package formats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Series are input too: the entry check of a run's series (Run.Series),
// run on every Run row an importer sends and on tables read back
// (CheckSeries). Codes:
const (
	// CheckSeriesTimeUnit: a series on the Unix clock stamped in seconds,
	// ms or µs where nanoseconds belong (attached 55 years off).
	CheckSeriesTimeUnit = "series_time_unit"
	// CheckSeriesPercentAsFraction: a series defined as a 0–1 fraction
	// (vllm:kv_cache_usage_perc) holding percents (85 for 85 %).
	CheckSeriesPercentAsFraction = "series_percent_as_fraction"
	// CheckSeriesRange: a value no such series can hold: negative power
	// or energy, a percentage (unit "%") below 0 or over 100.
	CheckSeriesRange = "series_value_out_of_range"
	// CheckSeriesDuplicate: two samples of one series at one time with
	// different values.
	CheckSeriesDuplicate = "series_duplicate_sample"
)

// FractionMetrics are the server gauges defined as a fraction 0–1 whose
// names say percent or usage: vLLM's KV-cache usage (vllm:gpu_cache_usage_perc,
// V1's vllm:kv_cache_usage_perc: "1 means 100 percent usage",
// vllm/v1/metrics/loggers.py) and SGLang's sglang:token_usage.
var FractionMetrics = map[string]bool{"vllm:gpu_cache_usage_perc": true, "vllm:kv_cache_usage_perc": true, "sglang:token_usage": true}

// CheckSeries checks and corrects pts in place and returns the run's
// checks, one per code and metric (nil when none fired):
//
//   - Unix-clock times below 1e17 (before 1973 as ns) are read by their
//     magnitude — < 1e11 seconds, < 1e14 ms, else µs — and scaled to ns
//     (corrected), as the value checks read a request's start;
//   - a FractionMetrics series whose largest value is over 1 and at most
//     100 holds percents: every value divided by 100 (corrected);
//   - a negative power or energy (unit W, J, kJ, MJ, or a name with
//     power or energy), or a "%" value below 0 or over 100, is NaN
//     (unknown, never clamped);
//   - two samples of one series (metric and labels) at one time with
//     different values are counted (both kept: which is right cannot be
//     told).
func CheckSeries(pts []SeriesPoint) []DataCheck {
	if len(pts) == 0 {
		return nil
	}
	var out []DataCheck
	// times
	type count struct {
		n     int64
		first string
	}
	counts := map[[2]string]*count{}
	var order [][2]string
	note := func(code, metric, first string) {
		k := [2]string{code, metric}
		c := counts[k]
		if c == nil {
			c = &count{first: first}
			counts[k] = c
			order = append(order, k)
		}
		c.n++
	}
	for i := range pts {
		p := &pts[i]
		if p.ClockDomain != ClockUnix || p.TimeNs <= 0 || p.TimeNs >= 1e17 {
			continue
		}
		scale, unit := int64(1000), "µs"
		switch {
		case p.TimeNs < 1e11:
			scale, unit = 1e9, "s"
		case p.TimeNs < 1e14:
			scale, unit = 1e6, "ms"
		}
		note(CheckSeriesTimeUnit, p.Metric, fmt.Sprintf("time %d read as %s", p.TimeNs, unit))
		p.TimeNs *= scale
	}
	// fractions written as percents, per series
	type key struct{ metric, labels string }
	peak := map[key]float64{}
	for i := range pts {
		p := &pts[i]
		if FractionMetrics[p.Metric] && !math.IsNaN(p.Value) {
			k := key{p.Metric, p.Labels}
			peak[k] = max(peak[k], p.Value)
		}
	}
	for i := range pts {
		p := &pts[i]
		if m := peak[key{p.Metric, p.Labels}]; FractionMetrics[p.Metric] && m > 1 && m <= 100 {
			if !math.IsNaN(p.Value) {
				note(CheckSeriesPercentAsFraction, p.Metric, fmt.Sprintf("largest value %s (labels %s): the series holds percents", strconv.FormatFloat(m, 'g', -1, 64), p.Labels))
				p.Value /= 100
			}
		}
	}
	// ranges
	for i := range pts {
		p := &pts[i]
		v := p.Value
		if math.IsNaN(v) {
			continue
		}
		bad := ""
		switch {
		case v < 0 && isEnergyOrPower(p):
			bad = "negative " + unitOr(p.Unit, "power or energy")
		case p.Unit == "%" && (v < 0 || v > 100):
			bad = "a percentage outside 0–100"
		}
		if bad != "" {
			note(CheckSeriesRange, p.Metric, fmt.Sprintf("%s at %d (%s): %s", strconv.FormatFloat(v, 'g', -1, 64), p.TimeNs, p.Labels, bad))
			p.Value = math.NaN()
		}
	}
	// duplicates: sort an index by series and time
	idx := make([]int32, len(pts))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int {
		pa, pb := &pts[a], &pts[b]
		return cmp.Or(strings.Compare(pa.Metric, pb.Metric), strings.Compare(pa.Labels, pb.Labels),
			strings.Compare(pa.ClockDomain, pb.ClockDomain), cmp.Compare(pa.TimeNs, pb.TimeNs))
	})
	for j := 1; j < len(idx); j++ {
		a, b := &pts[idx[j-1]], &pts[idx[j]]
		if a.Metric == b.Metric && a.Labels == b.Labels && a.ClockDomain == b.ClockDomain && a.TimeNs == b.TimeNs &&
			a.Value != b.Value && !(math.IsNaN(a.Value) && math.IsNaN(b.Value)) {
			note(CheckSeriesDuplicate, a.Metric, fmt.Sprintf("at %d (%s): %s and %s", a.TimeNs, a.Labels,
				strconv.FormatFloat(a.Value, 'g', -1, 64), strconv.FormatFloat(b.Value, 'g', -1, 64)))
		}
	}
	for _, k := range order {
		c := counts[k]
		d := fmt.Sprintf("first %s; %d point(s)", c.first, c.n)
		corrected := false
		switch k[0] {
		case CheckSeriesTimeUnit:
			d += "; scaled to ns"
			corrected = true
		case CheckSeriesPercentAsFraction:
			d += "; divided by 100"
			corrected = true
		case CheckSeriesRange:
			d += "; left NaN (unknown)"
		case CheckSeriesDuplicate:
			d += "; both kept"
		}
		out = append(out, DataCheck{Code: k[0], Field: k[1], Corrected: corrected, Detail: d})
	}
	return out
}

// isEnergyOrPower reports whether p is a power or energy series.
func isEnergyOrPower(p *SeriesPoint) bool {
	switch p.Unit {
	case "W", "kW", "J", "kJ", "MJ", "Wh", "kWh":
		return true
	}
	m := strings.ToLower(p.Metric)
	return strings.Contains(m, "power") || strings.Contains(m, "energy")
}

func unitOr(u, def string) string {
	if u == "" {
		return def
	}
	return "value (" + u + ")"
}
