package analyze

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// EnergyReport is runs[].energy: the GPUs' energy over the run's span
// (its first request start to its last recorded time) and per output
// token of its completed requests, from the run's series
// (formats.Run.Series: AIPerf gpu_telemetry_export.jsonl, Prometheus
// dumps). Present where some series is an energy counter or a power
// gauge on the run's clock.
type EnergyReport struct {
	// EnergyJ is the energy in joules over the covered span, summed over
	// the devices; Source says how: "counter" (an energy counter's
	// increase, AIPerf energy_consumption / DCGM total energy) or
	// "power" (power integrated by the trapezoid rule, only for devices
	// without a counter).
	EnergyJ F      `json:"energy_j"`
	Source  string `json:"source"`
	// Devices is the number of devices counted: a device (its gpu_uuid)
	// seen by several exporters is counted once, from the exporter with
	// the most samples in the span; Duplicates counts the others.
	Devices    int `json:"devices"`
	Duplicates int `json:"duplicates"`
	// CoverageShare is the share of the run's span the devices' samples
	// cover (the least covered device's; a sample just outside the span
	// bounds its edge, read by linear interpolation); below 0.9 the
	// per-token value is null (the energy of the uncovered part is
	// unknown, not 0).
	CoverageShare F `json:"coverage_share"`
	// OutputTokens are the completed requests' output tokens; EnergyPer-
	// OutputTokenMJ is EnergyJ / OutputTokens in millijoules.
	OutputTokens           int64 `json:"output_tokens"`
	EnergyPerOutputTokenMJ F     `json:"energy_per_output_token_mj"`
	// Why says why EnergyPerOutputTokenMJ is null ("" when it is not).
	Why string `json:"why,omitempty"`
}

// energyUnits and powerUnits are the units (as series give them) of an
// energy counter and a power gauge, in joules and watts.
var (
	energyUnits = map[string]float64{"J": 1, "kJ": 1e3, "MJ": 1e6, "mJ": 1e-3, "Wh": 3600, "kWh": 3.6e6}
	powerUnits  = map[string]float64{"W": 1, "kW": 1e3, "mW": 1e-3}
)

// minEnergyCoverage is the share of the run's span the samples must cover
// for a per-token energy.
const minEnergyCoverage = 0.9

var gpuUUID = regexp.MustCompile(`gpu_uuid="([^"]*)"`)

// energyReport computes the run's energy block; nil without an energy or
// power series in [from, to].
func energyReport(run *formats.Run, reqs []RequestMetrics, from, to int64) *EnergyReport {
	if to <= from || len(run.Series) == 0 {
		return nil
	}
	type pt struct{ t, v float64 }
	type dev struct {
		key, labels string
		exporter    string // the series' labels: one exporter's view of the device
		counter     bool
		scale       float64
		pts         []pt
	}
	series := map[[2]string]*dev{} // (metric, labels)
	for _, p := range run.Series {
		if p.ClockDomain != run.ClockDomain && run.ClockDomain != "" || math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			continue
		}
		scale, counter := energyUnits[p.Unit]
		if !counter {
			var ok bool
			if scale, ok = powerUnits[p.Unit]; !ok || powerLimit(p.Metric) {
				continue // not power, or a limit in watts (DCGM's power_management_limit), not a draw
			}
		}
		k := [2]string{p.Metric, p.Labels}
		d := series[k]
		if d == nil {
			key := p.Labels
			if m := gpuUUID.FindStringSubmatch(p.Labels); m != nil {
				key = m[1]
			}
			d = &dev{key: key, labels: p.Metric + "{" + p.Labels + "}", exporter: p.Labels, counter: counter, scale: scale}
			series[k] = d
		}
		d.pts = append(d.pts, pt{float64(p.TimeNs), p.Value * scale})
	}
	// per device, one series: a counter from the exporter with the most
	// samples (ties: the first labels in order), else a power gauge
	// likewise
	best := map[string]*dev{}
	seen := map[string]map[string]bool{} // device → exporters' labels
	for _, d := range series {
		if len(d.pts) < 2 {
			continue
		}
		if seen[d.key] == nil {
			seen[d.key] = map[string]bool{}
		}
		seen[d.key][d.exporter] = true
		b := best[d.key]
		if b == nil || d.counter && !b.counter ||
			d.counter == b.counter && (len(d.pts) > len(b.pts) || len(d.pts) == len(b.pts) && d.labels < b.labels) {
			best[d.key] = d
		}
	}
	if len(best) == 0 {
		return nil
	}
	rep := &EnergyReport{CoverageShare: 1}
	keys := make([]string, 0, len(best))
	for k := range best {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sources := map[string]bool{}
	var total float64
	for _, k := range keys {
		d := best[k]
		rep.Devices++
		rep.Duplicates += len(seen[k]) - 1
		sort.Slice(d.pts, func(a, b int) bool { return d.pts[a].t < d.pts[b].t })
		// the samples as a piecewise-linear function, read over the part
		// of the run's span they cover (samples just outside it bound its
		// edges)
		lo, hi := math.Max(float64(from), d.pts[0].t), math.Min(float64(to), d.pts[len(d.pts)-1].t)
		if hi <= lo {
			rep.CoverageShare = 0
			continue
		}
		if cov := (hi - lo) / float64(to-from); cov < float64(rep.CoverageShare) {
			rep.CoverageShare = F(cov)
		}
		at := func(t float64) float64 {
			i := sort.Search(len(d.pts), func(i int) bool { return d.pts[i].t >= t })
			if i == 0 || d.pts[i].t == t {
				return d.pts[i].v
			}
			a, b := d.pts[i-1], d.pts[i]
			return a.v + (b.v-a.v)*(t-a.t)/(b.t-a.t)
		}
		if d.counter {
			// the counter's increase over [lo, hi], Prometheus' way: a
			// decrease is a reset (the exporter or the GPU restarted), after
			// which the counter counts from 0
			prev := at(lo)
			for _, q := range d.pts {
				if q.t <= lo || q.t >= hi {
					continue
				}
				total += increase(prev, q.v)
				prev = q.v
			}
			total += increase(prev, at(hi))
			sources["counter"] = true
			continue
		}
		prevT, prevV := lo, at(lo)
		for _, q := range d.pts {
			if q.t <= lo || q.t >= hi {
				continue
			}
			total += (prevV + q.v) / 2 * (q.t - prevT) / 1e9
			prevT, prevV = q.t, q.v
		}
		total += (prevV + at(hi)) / 2 * (hi - prevT) / 1e9
		sources["power"] = true
	}
	rep.EnergyJ = F(total)
	if rep.CoverageShare == 0 {
		// no device's samples reach into the run: its energy is unknown
		rep.EnergyJ, rep.EnergyPerOutputTokenMJ = F(math.NaN()), F(math.NaN())
		rep.Why = "the samples do not cover the run"
		rep.Source = "none"
		return rep
	}
	switch {
	case sources["counter"] && sources["power"]:
		rep.Source = "counter+power"
	case sources["counter"]:
		rep.Source = "counter"
	default:
		rep.Source = "power"
	}
	for i := range reqs {
		if m := &reqs[i]; m.Counted && !math.IsNaN(m.OutputTokens) {
			rep.OutputTokens += int64(m.OutputTokens)
		}
	}
	switch {
	case rep.OutputTokens == 0:
		rep.EnergyPerOutputTokenMJ, rep.Why = F(math.NaN()), "no output tokens"
	case float64(rep.CoverageShare) < minEnergyCoverage:
		rep.EnergyPerOutputTokenMJ = F(math.NaN())
		rep.Why = fmt.Sprintf("the samples cover %.0f%% of the run (under %.0f%%): the energy of the rest is unknown", 100*float64(rep.CoverageShare), 100*minEnergyCoverage)
	default:
		rep.EnergyPerOutputTokenMJ = F(total * 1e3 / float64(rep.OutputTokens))
	}
	return rep
}

// increase is a counter's increase from a to b: b − a, or b after a reset
// (b < a).
func increase(a, b float64) float64 {
	if b < a {
		return b
	}
	return b - a
}

// powerLimit reports whether a watt series is a limit or cap rather than a
// draw (DCGM power_management_limit, enforced limits).
func powerLimit(metric string) bool {
	m := strings.ToLower(metric)
	return strings.Contains(m, "limit") || strings.Contains(m, "cap")
}
