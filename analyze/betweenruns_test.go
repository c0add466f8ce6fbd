package analyze

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// weightedRuns: two streaming runs whose requests have from 2 to 81
// tokens, so that weighted and unweighted percentiles differ.
func weightedRuns(t *testing.T, sinks ...formats.Sink) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	sendRuns(t, 300, func(run int) []ev {
		off := int64(100+run*50+rng.IntN(200)) * ms
		evs := []ev{{off, formats.KindContent, one()}}
		n := 1 + rng.IntN(80)
		step := 5 + 60*rng.Float64()
		for g := 0; g < n; g++ {
			off += int64(step * math.Exp(0.3*rng.NormFloat64()) * float64(ms))
			evs = append(evs, ev{off, formats.KindContent, one()})
		}
		return evs
	}, sinks...)
}

// TestBetweenRunsWeighted: under a weighted percentile method
// (guidellm's weighted nearest rank; TPOT and per-request ITL weighted by
// their token counts) a run's P99 in the between-run spread is its
// report's, weighted, whether or not --percentiles lists P99: the P99
// computed when the report lacks it was the unweighted one, so the spread
// changed with --percentiles 50,90.
func TestBetweenRunsWeighted(t *testing.T) {
	wnr := Canonical
	wnr.Name = "wnr"
	wnr.Percentile = convention.PercentileWeightedNearestRank
	wnr.ITL = convention.ITLPerRequestMean
	a := NewAnalyzer(wnr)
	weightedRuns(t, a)
	with, err := a.Report(Options{Tools: tools, Pool: true})
	if err != nil {
		t.Fatal(err)
	}
	without, err := a.Report(Options{Tools: tools, Pool: true, Percentiles: []float64{0.5, 0.9}})
	if err != nil {
		t.Fatal(err)
	}
	for key, sp := range with.Pooled.BetweenRuns {
		if o := without.Pooled.BetweenRuns[key]; !reflect.DeepEqual(sp, o) {
			t.Errorf("%s: from reports %+v, computed %+v", key, sp.P99, o.P99)
		}
	}
	for _, x := range []*Metric{TPOT, ITL} {
		for i, r := range with.Runs {
			if got, want := float64(with.Pooled.BetweenRuns[x.Key].P99[i]), r.Metrics.Of(x).Value(0.99); got != want {
				t.Errorf("run %s: %s P99 %v in the spread, %v in its report", r.RunID, x.Key, got, want)
			}
		}
	}
}
