package analyze

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// sketchRuns sends two streaming runs of 400 requests, each with 30 gaps
// drawn from a log-normal (median 20 ms, a heavy tail), to every sink.
func sketchRuns(t *testing.T, sinks ...formats.Sink) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	sendRuns(t, 400, func(run int) []ev {
		off := int64(100+run*50) * ms
		evs := []ev{{off, formats.KindContent, one()}}
		for g := 0; g < 30; g++ {
			off += int64(20 * math.Exp(0.6*rng.NormFloat64()) * float64(ms))
			evs = append(evs, ev{off, formats.KindContent, one()})
		}
		return evs
	}, sinks...)
}

// sendRuns sends two streaming runs, "a" and "b", of n requests each (one
// a second, their messages from events(run)), and then their run rows, to
// every sink.
func sendRuns(t *testing.T, n int64, events func(run int) []ev, sinks ...formats.Sink) {
	t.Helper()
	yes := true
	for run, id := range []string{"a", "b"} {
		for k := int64(0); k < n; k++ {
			r, e := mkRequest(k, k*int64(1e9), events(run), nil)
			r.RunID = id
			for i := range e {
				e[i].RunID = id
			}
			for _, s := range sinks {
				if err := formats.SendRow(s, &r, e); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, s := range sinks {
			if err := s.Run(&formats.Run{RunID: id, Streaming: &yes}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestITLSketchOverBudget: with a budget whose half holds 2,000 gaps
// (64,000 bytes), the two runs' 24,000 gaps move to sketches. Against the
// exact analysis of the same data: n, mean, std, min and max are exact;
// every percentile of the pooled ITL (P50…P99) and of the pooled report is
// within the sketch's 0.5% of the exact order statistics around it; the
// per-request metrics are untouched; the report says itl_sketch; the
// run data says sketched with the real count.
func TestITLSketchOverBudget(t *testing.T) {
	exact, sk := NewAnalyzer(Canonical), NewAnalyzer(Canonical)
	sk.SetMemoryBudget(64_000)
	sketchRuns(t, exact, sk)
	for _, pool := range []bool{false, true} {
		re, err := exact.Report(Options{Tools: tools, Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := sk.Report(Options{Tools: tools, Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		runs := map[string][2]*RunReport{}
		for i := range re.Runs {
			runs[re.Runs[i].RunID] = [2]*RunReport{re.Runs[i], rs.Runs[i]}
		}
		if pool {
			runs = map[string][2]*RunReport{"pooled": {re.Pooled, rs.Pooled}}
		}
		for id, pair := range runs {
			e, s := pair[0].Metrics.Of(ITL), pair[1].Metrics.Of(ITL)
			if s.N != e.N || math.Abs(s.Mean-e.Mean) > 1e-9*e.Mean || math.Abs(s.Std-e.Std) > 1e-6*e.Std || s.Min != e.Min || s.Max != e.Max {
				t.Errorf("%s: sketched n/mean/std/min/max %d %v %v %v %v, exact %d %v %v %v %v", id, s.N, s.Mean, s.Std, s.Min, s.Max, e.N, e.Mean, e.Std, e.Min, e.Max)
			}
			var gaps []float64
			if pool {
				for _, r := range []string{"a", "b"} {
					rd, _ := exact.RunData(r, Canonical.Name)
					gaps = append(gaps, rd.ITL...)
				}
			} else {
				rd, _ := exact.RunData(id, Canonical.Name)
				gaps = rd.ITL
			}
			sorted := stats.SortedCopy(gaps)
			for _, q := range e.Quantiles {
				got := s.Value(q.P)
				// the exact linear percentile lies between the order
				// statistics at floor and ceil of p·(n−1); the sketch is
				// within 0.5% of the one at its rank
				h := q.P * float64(len(sorted)-1)
				lo := sorted[int(math.Floor(h))] * (1 - ITLSketchAccuracy)
				hi := sorted[int(math.Ceil(h))] * (1 + ITLSketchAccuracy)
				if got < lo-1e-9 || got > hi+1e-9 {
					t.Errorf("%s: ITL %s sketched %v outside [%v, %v] (exact %v)", id, stats.QuantileLabel(q.P), got, lo, hi, q.Value)
				}
			}
			// the intervals come from the sketch at the real count's ranks
			for _, q := range s.Quantiles {
				if math.IsNaN(q.Lo) || math.IsNaN(q.Hi) || q.Lo > q.Value*(1+ITLSketchAccuracy) || q.Hi < q.Value*(1-ITLSketchAccuracy) {
					t.Errorf("%s: %s interval [%v, %v] around %v", id, stats.QuantileLabel(q.P), q.Lo, q.Hi, q.Value)
				}
			}
			if et, st := pair[0].Metrics.Of(TPOT), pair[1].Metrics.Of(TPOT); et.Value(0.99) != st.Value(0.99) || et.N != st.N {
				t.Errorf("%s: TPOT changed by the ITL sketch", id)
			}
			found := false
			for _, w := range pair[1].Warnings {
				if w.Code == "itl_sketch" && strings.Contains(w.Message, "DDSketch") {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no itl_sketch warning: %+v", id, pair[1].Warnings)
			}
		}
	}
	rd, err := sk.RunData("a", Canonical.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !rd.ITLSketched || rd.ITLCount != 12000 || len(rd.ITL) != ITLSketchPoints {
		t.Errorf("run data: sketched %v, count %d, %d values", rd.ITLSketched, rd.ITLCount, len(rd.ITL))
	}
	// within the budget nothing changes
	big := NewAnalyzer(Canonical)
	big.SetMemoryBudget(1 << 30)
	sketchRuns(t, big)
	if rd, _ := big.RunData("a", Canonical.Name); rd.ITLSketched || len(rd.ITL) != 12000 {
		t.Errorf("1 GiB budget: sketched %v, %d gaps", rd.ITLSketched, len(rd.ITL))
	}
}

// TestTinyMemoryBudget: a budget below one gap's share (1 to 31 bytes)
// still bounds the exact ITL (it used to round to no bound at all).
func TestTinyMemoryBudget(t *testing.T) {
	for _, b := range []int64{1, 31, 32} {
		exact, sk := NewAnalyzer(Canonical), NewAnalyzer(Canonical)
		sk.SetMemoryBudget(b)
		sketchRuns(t, exact, sk)
		rs, err := sk.Report(Options{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		for _, rr := range rs.Runs {
			found := false
			for _, w := range rr.Warnings {
				found = found || w.Code == "itl_sketch"
			}
			if !found {
				t.Errorf("budget %d B, run %s: the exact ITL was kept", b, rr.RunID)
			}
		}
	}
}

// TestITLSketchRefusedValues: a batch with values the sketch cannot hold
// (NaN, +Inf) keeps them out of n, mean and std as well as the
// quantiles, and counts them: the batch {1, 2, NaN, 3, +Inf} then {5}
// is n 4, mean 2.75, sample std sqrt(8.75/3), min 1, max 5, 2 refused
// (the first NaN).
func TestITLSketchRefusedValues(t *testing.T) {
	s := newITLSketch()
	s.addAll([]float64{1, 2, math.NaN(), 3, math.Inf(1)})
	s.addAll([]float64{5})
	if s.n != 4 || math.Abs(s.mean-2.75) > 1e-15 || math.Abs(s.std(1)-math.Sqrt(8.75/3)) > 1e-15 || s.min != 1 || s.max != 5 {
		t.Errorf("n %d mean %v std %v min %v max %v", s.n, s.mean, s.std(1), s.min, s.max)
	}
	if s.untrackable != 2 || !math.IsNaN(s.firstUntracked) {
		t.Errorf("refused %d, first %v", s.untrackable, s.firstUntracked)
	}
	if v := s.quantileAtRank(4); math.Abs(v-5) > 5*ITLSketchAccuracy {
		t.Errorf("max rank %v, want 5 within 0.5%%", v)
	}
}

// TestBetweenRunsFromReports: the pooled report's between-run spread
// takes each run's P99 from the run's own report when it has one and
// computes it when it does not (--percentiles without 99): both give the
// same spread for every tail metric, ITL included, and each P99 in it is
// the run report's. Also under a weighted percentile method (guidellm's
// weighted nearest rank; TPOT and per-request ITL weighted by their
// token counts), where the P99 computed when the report lacked it was
// once the unweighted one, so the spread changed with --percentiles 50,90.
func TestBetweenRunsFromReports(t *testing.T) {
	wnr := Canonical
	wnr.Name = "wnr"
	wnr.Percentile = convention.PercentileWeightedNearestRank
	wnr.ITL = convention.ITLPerRequestMean
	for _, c := range []struct {
		conv convention.Convention
		runs func(*testing.T, ...formats.Sink)
	}{{Canonical, sketchRuns}, {wnr, weightedRuns}} {
		a := NewAnalyzer(c.conv)
		c.runs(t, a)
		with, err := a.Report(Options{Tools: tools, Pool: true})
		if err != nil {
			t.Fatal(err)
		}
		without, err := a.Report(Options{Tools: tools, Pool: true, Percentiles: []float64{0.5, 0.9}})
		if err != nil {
			t.Fatal(err)
		}
		if len(with.Pooled.BetweenRuns) < 3 || len(with.Pooled.BetweenRuns[ITL.Key].P99) != 2 {
			t.Fatalf("%s: between runs: %+v", c.conv.Name, with.Pooled.BetweenRuns)
		}
		for key, sp := range with.Pooled.BetweenRuns {
			if o := without.Pooled.BetweenRuns[key]; !reflect.DeepEqual(sp, o) {
				t.Errorf("%s, %s: from reports %+v, computed %+v", c.conv.Name, key, sp.P99, o.P99)
			}
		}
		for _, x := range []*Metric{TPOT, ITL} {
			for i, r := range with.Runs {
				if got, want := float64(with.Pooled.BetweenRuns[x.Key].P99[i]), r.Metrics.Of(x).Value(0.99); got != want {
					t.Errorf("%s, run %s: %s P99 %v in the spread, %v in its report", c.conv.Name, r.RunID, x.Key, got, want)
				}
			}
		}
	}
}

// TestBetweenRunsOtherConventions: under a per-run convention (report
// --convention tool over runs of several tools) each run's report is
// under its own convention, but the pooled report and its between-run
// spread are under the first run's: a run reported under another
// convention must not lend its P99 to the spread. Run b is reported with
// the floor-rank percentile; the spread must be the one every run gives
// under the canonical convention, as when each run's P99 was sampled
// again.
func TestBetweenRunsOtherConventions(t *testing.T) {
	floor := Canonical
	floor.Name = "floor-rank"
	floor.Percentile = convention.PercentileFloorRank
	a := NewAnalyzer(Canonical, floor)
	sketchRuns(t, a)
	mixed, err := a.Report(Options{Tools: tools, Pool: true, Convention: func(r *formats.Run) convention.Convention {
		if r.RunID == "b" {
			return floor
		}
		return Canonical
	}})
	if err != nil {
		t.Fatal(err)
	}
	same, err := a.Report(Options{Tools: tools, Pool: true})
	if err != nil {
		t.Fatal(err)
	}
	if mixed.Runs[1].Metrics.Of(ITL).Value(0.99) == same.Runs[1].Metrics.Of(ITL).Value(0.99) {
		t.Fatal("run b's ITL P99 is the same under both percentile methods: the test tells nothing")
	}
	if len(same.Pooled.BetweenRuns) < 3 {
		t.Fatalf("between runs: %+v", same.Pooled.BetweenRuns)
	}
	for key, want := range same.Pooled.BetweenRuns {
		if got := mixed.Pooled.BetweenRuns[key]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: P99s %v with run b under %s, %v under the pooled convention %s", key, got.P99, floor.Name, want.P99, Canonical.Name)
		}
	}
}

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
