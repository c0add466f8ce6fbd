package analyze

import (
	"math"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// TestEnergyReport, hand-computed over a 10 s run (two classic requests, N
// = 100 each): GPU a's energy counter (MJ) is seen by two exporters and
// counted once, rising 0.002 MJ = 2000 J; GPU b has only power, 100 W then
// 300 W 10 s later: 2000 J by the trapezoid. 4000 J / 200 tokens = 20 J =
// 20000 mJ per output token. A run whose samples cover half of it has no
// per-token value.
func TestEnergyReport(t *testing.T) {
	yes := true
	pt := func(metric, labels, unit string, tS, v float64) formats.SeriesPoint {
		return formats.SeriesPoint{Metric: metric, Labels: labels, Unit: unit, TimeNs: int64(tS * 1e9), ClockDomain: formats.ClockUnix, Value: v}
	}
	a1, a2, b := `gpu_uuid="GPU-a",url="x:9400"`, `gpu_uuid="GPU-a",url="x:9402"`, `gpu_uuid="GPU-b"`
	series := []formats.SeriesPoint{
		pt("gpu:energy_consumption", a1, "MJ", 100, 5.000), pt("gpu:energy_consumption", a1, "MJ", 110, 5.002),
		pt("gpu:energy_consumption", a2, "MJ", 100, 5.000), pt("gpu:energy_consumption", a2, "MJ", 110, 5.002),
		pt("gpu:gpu_power_usage", a1, "W", 100, 999), pt("gpu:gpu_power_usage", a1, "W", 110, 999), // a has a counter: power unused
		pt("gpu:gpu_power_usage", b, "W", 100, 100), pt("gpu:gpu_power_usage", b, "W", 110, 300),
		pt("gpu:gpu_utilization", b, "%", 105, 50),
	}
	run := formats.Run{RunID: "r", Tool: "x", Streaming: &yes, ClockDomain: formats.ClockUnix, Series: series}
	// classic requests at 100 s and 108.798 s: the span ends at the second's [DONE], 110 s
	rr := analyzeRows(t, run,
		func() (formats.Request, []formats.Event) { return classic(0, 100_000*ms) },
		func() (formats.Request, []formats.Event) { return classic(1, 108_798*ms) },
	)
	e := rr.Energy
	if e == nil {
		t.Fatal("no energy block")
	}
	if e.Devices != 2 || e.Duplicates != 1 || e.Source != "counter+power" || e.OutputTokens != 200 {
		t.Errorf("energy %+v", *e)
	}
	near(t, "energy J", float64(e.EnergyJ), 4000)
	near(t, "mJ per output token", float64(e.EnergyPerOutputTokenMJ), 20000)
	near(t, "coverage", float64(e.CoverageShare), 1)

	run.Series = series[:4] // counter only, but the run lasts 20 s
	rr = analyzeRows(t, run,
		func() (formats.Request, []formats.Event) { return classic(0, 100_000*ms) },
		func() (formats.Request, []formats.Event) { return classic(1, 118_798*ms) },
	)
	if e := rr.Energy; e == nil || !math.IsNaN(float64(e.EnergyPerOutputTokenMJ)) || e.Why == "" || math.Abs(float64(e.CoverageShare)-0.5) > 1e-9 {
		t.Errorf("half-covered run: %+v", rr.Energy)
	}
	// a reset: 5.000 → 5.001 at 105 s, the exporter restarts at 0, 0.001 at
	// 110 s: 0.001 + 0.001 MJ = 2000 J, never a negative energy
	run.Series = []formats.SeriesPoint{pt("gpu:energy_consumption", a1, "MJ", 100, 5.000), pt("gpu:energy_consumption", a1, "MJ", 105, 5.001),
		pt("gpu:energy_consumption", a1, "MJ", 107, 0.0004), pt("gpu:energy_consumption", a1, "MJ", 110, 0.001)}
	rr = analyzeRows(t, run,
		func() (formats.Request, []formats.Event) { return classic(0, 100_000*ms) },
		func() (formats.Request, []formats.Event) { return classic(1, 108_798*ms) },
	)
	if rr.Energy == nil {
		t.Fatal("no energy block across a reset")
	}
	near(t, "energy across a counter reset", float64(rr.Energy.EnergyJ), 2000)
	// a power limit in watts is no draw; samples outside the run: no energy
	run.Series = []formats.SeriesPoint{pt("gpu:power_management_limit", b, "W", 100, 300), pt("gpu:power_management_limit", b, "W", 110, 300),
		pt("gpu:gpu_power_usage", b, "W", 100, 100), pt("gpu:gpu_power_usage", b, "W", 110, 300)}
	rr = analyzeRows(t, run,
		func() (formats.Request, []formats.Event) { return classic(0, 100_000*ms) },
		func() (formats.Request, []formats.Event) { return classic(1, 108_798*ms) },
	)
	near(t, "power, the limit left out", float64(rr.Energy.EnergyJ), 2000)
	run.Series = []formats.SeriesPoint{pt("gpu:energy_consumption", a1, "MJ", 10, 5.000), pt("gpu:energy_consumption", a1, "MJ", 20, 5.002)}
	rr = analyzeRows(t, run, func() (formats.Request, []formats.Event) { return classic(0, 100_000*ms) })
	if e := rr.Energy; e == nil || !math.IsNaN(float64(e.EnergyJ)) || e.Why == "" {
		t.Errorf("samples before the run: %+v", rr.Energy)
	}
	run.Series = series[8:] // utilization only
	if rr := analyzeRows(t, run, func() (formats.Request, []formats.Event) { return classic(0, 100_000*ms) }); rr.Energy != nil {
		t.Errorf("energy block without energy or power series: %+v", rr.Energy)
	}
}
