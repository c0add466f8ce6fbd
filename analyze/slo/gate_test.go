package slo

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/formats"
)

func TestGateGrammar(t *testing.T) {
	valid := []struct {
		name string
		in   string
		want Gate
	}{
		{"a P99 of TTFT bounded in ms", "p99(ttft)<=800ms",
			Gate{Stat: "p", P: 0.99, Metric: analyze.LookupMetric("ttft"), Op: "<=", Bound: Bound{Value: 800}}},
		{"spaces around every token are allowed", "  p90 ( tpot )  <  25 ms ",
			Gate{Stat: "p", P: 0.90, Metric: analyze.LookupMetric("tpot"), Op: "<", Bound: Bound{Value: 25}}},
		{"a fractional percentile like P99.9", "p99.9(e2e)<=4s",
			Gate{Stat: "p", P: 0.999, Metric: analyze.LookupMetric("e2e"), Op: "<=", Bound: Bound{Value: 4000}}},
		{"a percentile conditioned on output length", "p99(e2e | osl<300)<=3s",
			Gate{Stat: "p", P: 0.99, Metric: analyze.LookupMetric("e2e"), Conds: []Cond{{analyze.OSL, "<", 300}}, Op: "<=", Bound: Bound{Value: 3000}}},
		{"two conditions joined by and", "p50(ttft | isl>=1024 and isl<4096tok) <= 2s",
			Gate{Stat: "p", P: 0.5, Metric: analyze.LookupMetric("ttft"), Conds: []Cond{{analyze.ISL, ">=", 1024}, {analyze.ISL, "<", 4096}}, Op: "<=", Bound: Bound{Value: 2000}}},
		{"mean, min and max are statistics too", "mean(max_itl)<=200ms",
			Gate{Stat: "mean", Metric: analyze.LookupMetric("max_itl"), Op: "<=", Bound: Bound{Value: 200}}},
		{"the fluidity-index takes its deadlines", "p1(fluidity(500ms, 50ms))>=0.9",
			Gate{Stat: "p", P: 0.01, Metric: analyze.LookupMetric("fluidity"), Deadlines: analyze.Deadlines{PrefillNs: 500e6, DecodeNs: 50e6}, Op: ">=", Bound: Bound{Value: 0.9}}},
		{"goodput is a fraction", "goodput>=0.99",
			Gate{Metric: analyze.LookupMetric("goodput"), Op: ">=", Bound: Bound{Value: 0.99}}},
		{"goodput may be written as a percentage", "goodput >= 99%",
			Gate{Metric: analyze.LookupMetric("goodput"), Op: ">=", Bound: Bound{Value: 0.99}}},
		{"the report's JSON key is an alias", "goodput.fraction>=0.5",
			Gate{Metric: analyze.LookupMetric("goodput"), Op: ">=", Bound: Bound{Value: 0.5}}},
		{"good requests per second need a rate unit", "goodput_rate>=2.5/s",
			Gate{Metric: analyze.LookupMetric("goodput_rate"), Op: ">=", Bound: Bound{Value: 2.5}}},
		{"req/s is the same rate unit", "request_rate >= 4 req/s",
			Gate{Metric: analyze.LookupMetric("request_rate"), Op: ">=", Bound: Bound{Value: 4}}},
		{"throughput is in output tokens per second", "throughput>=1000tok/s",
			Gate{Metric: analyze.LookupMetric("throughput"), Op: ">=", Bound: Bound{Value: 1000}}},
		{"the error rate takes a percentage", "error_rate<=1%",
			Gate{Metric: analyze.LookupMetric("error_rate"), Op: "<=", Bound: Bound{Value: 0.01}}},
		{"capacity defaults to DistServe's 90% target", "capacity>=4/s",
			Gate{Capacity: true, Op: ">=", Bound: Bound{Value: 4}, Target: 0.9}},
		{"capacity takes its own target", "capacity(95%)>=4/s",
			Gate{Capacity: true, Op: ">=", Bound: Bound{Value: 4}, Target: 0.95}},
		{"a regression scales the baseline", "p99(ttft) <= 1.10 * baseline",
			Gate{Stat: "p", P: 0.99, Metric: analyze.LookupMetric("ttft"), Op: "<=", Bound: Bound{Baseline: true, Scale: 1.10}}},
		{"the factor may follow the baseline", "p99(ttft) <= baseline*1.2",
			Gate{Stat: "p", P: 0.99, Metric: analyze.LookupMetric("ttft"), Op: "<=", Bound: Bound{Baseline: true, Scale: 1.2}}},
		{"a regression subtracts an absolute margin", "goodput >= baseline - 0.01",
			Gate{Metric: analyze.LookupMetric("goodput"), Op: ">=", Bound: Bound{Baseline: true, Scale: 1, Value: -0.01}}},
		{"a margin in the metric's unit", "p50(tpot) <= baseline + 2ms",
			Gate{Stat: "p", P: 0.5, Metric: analyze.LookupMetric("tpot"), Op: "<=", Bound: Bound{Baseline: true, Scale: 1, Value: 2}}},
	}
	for _, c := range valid {
		t.Run(c.name, func(t *testing.T) {
			gs, err := ParseGates(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(gs) != 1 {
				t.Fatalf("%d gates", len(gs))
			}
			g := gs[0]
			c.want.Text = strings.TrimSpace(c.in)
			if g.Text != c.want.Text || g.Stat != c.want.Stat || math.Abs(g.P-c.want.P) > 1e-12 || g.Metric != c.want.Metric ||
				g.Deadlines != c.want.Deadlines || g.Op != c.want.Op || g.Bound != c.want.Bound || g.Target != c.want.Target ||
				len(g.Conds) != len(c.want.Conds) {
				t.Fatalf("got %+v\nwant %+v", g, c.want)
			}
			for i := range g.Conds {
				if g.Conds[i] != c.want.Conds[i] {
					t.Errorf("cond %d = %+v, want %+v", i, g.Conds[i], c.want.Conds[i])
				}
			}
		})
	}

	t.Run("a list splits at top-level commas, not inside fluidity's parentheses", func(t *testing.T) {
		gs, err := ParseGates("p99(ttft)<=1s, p1(fluidity(1s,50ms))>=0.9; goodput>=0.9\nerror_rate<=0")
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, g := range gs {
			texts = append(texts, g.Text)
		}
		if got := strings.Join(texts, " | "); got != "p99(ttft)<=1s | p1(fluidity(1s,50ms))>=0.9 | goodput>=0.9 | error_rate<=0" {
			t.Errorf("items %q", got)
		}
	})

	invalid := []struct {
		name string
		in   string
		pos  int
		msg  string
	}{
		{"a time bound needs a unit", "p99(ttft)<=800", 15, "unit is required"},
		{"an unknown unit is named", "p99(ttft)<=8 min", 14, `unknown unit "min"`},
		{"a per-request metric alone is not a gate", "ttft<=800ms", 1, "per-request metric"},
		{"an unknown statistic or metric", "p99(latency)<=1s", 5, "per-request metric"},
		{"an unknown gate name", "speed>=3", 1, `unknown gate "speed"`},
		{"a percentile must be inside 0..100", "p100(ttft)<=1s", 1, "between p0 and p100"},
		{"a missing operator", "p99(ttft) 800ms", 11, "expected <=, <, >= or >"},
		{"a reversed operator", "p99(ttft)=>800ms", 10, "unknown operator"},
		{"a missing closing parenthesis", "p99(ttft<=1s", 9, `expected ")"`},
		{"itl pools gaps and cannot be conditioned", "p99(itl | osl<300)<=50ms", 9, "cannot be conditioned"},
		{"conditions are on osl or isl", "p99(e2e | ttft<300ms)<=3s", 11, "osl or isl"},
		{"a rate needs /s", "goodput_rate>=2.5", 18, "rate unit"},
		{"throughput needs tok/s", "throughput>=1000/s", 17, `unit "/s": want a token-rate unit`},
		{"a fraction takes no unit", "goodput>=0.99ms", 14, "unexpected unit"},
		{"capacity cannot be bounded from above", "capacity<=4/s", 9, "floor"},
		{"capacity's target must be a fraction", "capacity(2)>=4/s", 10, "(0, 1]"},
		{"capacity has no baseline", "capacity>=baseline", 9, "no baseline"},
		{"fluidity needs its deadlines", "p1(fluidity)>=0.9", 12, "needs its deadlines"},
		{"the TBT deadline must be positive", "p1(fluidity(1s,0ms))>=0.9", 16, "must be positive"},
		{"trailing garbage after a gate", "goodput>=0.9 please", 14, "unexpected"},
		{"an empty item between separators", "goodput>=0.9,,error_rate<=0", 14, "empty gate"},
		{"baseline must be multiplied by a number", "p99(ttft)<=baseline*x", 21, "expected a factor"},
		{"an unexpected character", "p99(ttft)<=1s!", 14, "unexpected character"},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseGates(c.in)
			wantSLOError(t, err, c.pos, c.msg)
		})
	}
}

// wantSLOError checks err is an *SLOError at pos whose message contains msg.
func wantSLOError(t *testing.T, err error, pos int, msg string) {
	t.Helper()
	var se *SLOError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want *SLOError", err)
	}
	if se.Pos != pos || !strings.Contains(se.Msg, msg) {
		t.Errorf("at %d %q, want at %d containing %q", se.Pos, se.Msg, pos, msg)
	}
}

func TestSLOGrammarExtensions(t *testing.T) {
	valid := []struct {
		name string
		in   string
		want []analyze.Constraint
	}{
		{"max_itl bounds the worst stall", "max_itl<=500ms",
			[]analyze.Constraint{{Metric: analyze.LookupMetric("max_itl"), Limit: 500, Text: "max_itl<=500ms"}}},
		{"fluidity is bounded from below and keeps its deadlines", "ttft<=1s, fluidity(500ms,50ms)>=0.9",
			[]analyze.Constraint{{Metric: analyze.LookupMetric("ttft"), Limit: 1000, Text: "ttft<=1s"},
				{Metric: analyze.LookupMetric("fluidity"), AtLeast: true, Limit: 0.9, Deadlines: analyze.Deadlines{PrefillNs: 500e6, DecodeNs: 50e6}, Text: "fluidity(500ms,50ms)>=0.9"}}},
		{"vLLM's --goodput form is read as milliseconds", "ttft:500 tpot:15 e2el:2000",
			[]analyze.Constraint{{Metric: analyze.LookupMetric("ttft"), Limit: 500, Text: "ttft:500"}, {Metric: analyze.LookupMetric("tpot"), Limit: 15, Text: "tpot:15"}, {Metric: analyze.LookupMetric("e2e"), Limit: 2000, Text: "e2el:2000"}}},
	}
	for _, c := range valid {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSLO(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Constraints) != len(c.want) {
				t.Fatalf("got %+v", s.Constraints)
			}
			for i := range c.want {
				if s.Constraints[i] != c.want[i] {
					t.Errorf("%d: got %+v, want %+v", i, s.Constraints[i], c.want[i])
				}
			}
		})
	}
	invalid := []struct {
		name string
		in   string
		pos  int
		msg  string
	}{
		{"a latency cannot be bounded from below", "ttft>=500ms", 5, "from above"},
		{"fluidity cannot be bounded from above", "fluidity(1s,50ms)<=0.9", 18, "from below"},
		{"an unknown vLLM key is named", "ttft:500 itl:5", 10, `unknown vLLM goodput key "itl"`},
		{"the same fluidity deadlines twice", "fluidity(1s,50ms)>=0.9, fluidity(1s,50ms)>=0.8", 25, "constrained twice"},
	}
	for _, c := range invalid {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSLO(c.in)
			wantSLOError(t, err, c.pos, c.msg)
		})
	}
}

// TestFluidityIndexHandComputed follows Etalon's algorithm by hand.
func TestFluidityIndexHandComputed(t *testing.T) {
	ms := func(v ...int64) []int64 {
		for i := range v {
			v[i] *= 1e6
		}
		return v
	}
	cases := []struct {
		name          string
		gaps          []int64
		d             analyze.Deadlines
		missed, total int64
	}{
		// D_p 500, D_d 50 ms. TTFT 600: late by 100 = two D_d periods past
		// D_p: 1 + ⌊100/50⌋ = 3 missed. 40 banks 10 of slack, the zero gap
		// (a 2-token chunk) banks 50 more: slack 60. 120 > 50 + 60: missed
		// ⌊(120 − 60)/50⌋ = 1, slack resets. 30 on time. 4 of 7 missed.
		// (Etalon's float seconds give 3 of 6 here: 0.6 − 0.5 is
		// 0.0999…98, whose floor division by 0.05 is 1, not 2.)
		{"a late first token and a stall after banked slack", ms(600, 40, 0, 120, 30), analyze.Deadlines{PrefillNs: 500e6, DecodeNs: 50e6}, 4, 7},
		// Binary-exact values, where Etalon's float code gives the same:
		// get_request_level_deadline_miss_rate([.75,.0625,0,.5,.125], .5,
		// .125) = (0.625, 5, 8).
		{"binary-exact gaps agree with Etalon's float code", []int64{750e6, 62_500_000, 0, 500e6, 125e6}, analyze.Deadlines{PrefillNs: 500e6, DecodeNs: 125e6}, 5, 8},
		{"every token on time", ms(250, 125, 125), analyze.Deadlines{PrefillNs: 500e6, DecodeNs: 125e6}, 0, 3},
		{"a request with no tokens has no deadlines", nil, analyze.Deadlines{PrefillNs: 500e6, DecodeNs: 125e6}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			idx, missed, total := analyze.FluidityIndex(c.gaps, c.d)
			want := 1.0
			if c.total > 0 {
				want = 1 - float64(c.missed)/float64(c.total)
			}
			if missed != c.missed || total != c.total || idx != want {
				t.Errorf("got %v (%d/%d), want %v (%d/%d)", idx, missed, total, want, c.missed, c.total)
			}
		})
	}
}

func TestTokenGapsSplitMultiTokenChunks(t *testing.T) {
	two, one := int32(2), int32(1)
	ev := []formats.Event{
		{Index: 0, OffsetNs: 100, Kind: formats.KindContent, Tokens: &two},
		{Index: 1, OffsetNs: 150, Kind: formats.KindContent, Tokens: &one},
		{Index: 2, OffsetNs: 400, Kind: formats.KindContent},
	}
	got := analyze.TokenGaps(analyze.Canonical, ev, nil)
	want := []int64{100, 0, 50, 250}
	if len(got) != len(want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("gaps %v, want %v", got, want)
		}
	}
}

func TestMinSamplesForCIMatchesExactBinomial(t *testing.T) {
	// P99 at 95%: the upper rank needs P(B ≥ n) = 0.99ⁿ ≤ 0.025:
	// 0.99^367 = 0.025006 > 0.025, 0.99^368 = 0.024756.
	if got := stats.MinSamplesForCI(0.99, 0.95); got != 368 {
		t.Errorf("P99: %d, want 368", got)
	}
	// P95: 0.95^71 = 0.02624, 0.95^72 = 0.02492.
	if got := stats.MinSamplesForCI(0.95, 0.95); got != 72 {
		t.Errorf("P95: %d, want 72", got)
	}
	// The median: both tails 0.5ⁿ ≤ 0.025 → n = 6.
	if got := stats.MinSamplesForCI(0.5, 0.95); got != 6 {
		t.Errorf("P50: %d, want 6", got)
	}
	// an extreme percentile no longer gives up (it returned -1): P99.99999
	// needs 0.9999999ⁿ ≤ 0.025, n = ⌈ln 0.025 / ln 0.9999999⌉ = 36,888,793
	if got := stats.MinSamplesForCI(0.9999999, 0.95); got < 36_888_700 || got > 36_888_900 {
		t.Errorf("P99.99999: %d", got)
	}
	for _, n := range []int{367, 368} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		_, hi := stats.QuantileCI(xs, 0.99, 0.95)
		if got := !math.IsNaN(hi); got != (n == 368) {
			t.Errorf("n=%d: upper bound %v", n, hi)
		}
	}
}

func TestComputeCapacityHandMadeSweep(t *testing.T) {
	pt := func(rate, att, tok float64) CapacityPoint {
		return CapacityPoint{RateRPS: analyze.F(rate), Attainment: analyze.F(att), OutputTokensPerS: analyze.F(tok)}
	}
	cases := []struct {
		name    string
		pts     []CapacityPoint
		rate    float64
		tok     float64
		atLeast bool
	}{
		// Between 2 req/s (95% good) and 3 req/s (85%): 90% is half way.
		{"interpolated between the rates around the crossing", []CapacityPoint{pt(4, 0.5, 400), pt(1, 1, 100), pt(3, 0.85, 300), pt(2, 0.95, 200)}, 2.5, 250, false},
		// Non-monotone: the highest rate still meeting the target (3) wins.
		{"the highest passing rate when attainment is not monotone", []CapacityPoint{pt(1, 1, 100), pt(2, 0.8, 200), pt(3, 0.95, 300), pt(4, 0.5, 400)}, 3 + 0.05/0.45, 300 + 100*0.05/0.45, false},
		{"every rate passing gives a lower bound", []CapacityPoint{pt(1, 1, 100), pt(2, 0.99, 200)}, 2, 200, true},
		{"no rate passing gives no capacity", []CapacityPoint{pt(1, 0.5, 100), pt(2, 0.2, 200)}, math.NaN(), math.NaN(), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ComputeCapacity(c.pts, 0.9)
			if !close(float64(got.RateRPS), c.rate) || !close(float64(got.OutputTokensPerS), c.tok) || got.AtLeast != c.atLeast {
				t.Errorf("capacity %v req/s %v tok/s at_least=%v, want %v %v %v (%s)", got.RateRPS, got.OutputTokensPerS, got.AtLeast, c.rate, c.tok, c.atLeast, got.Note)
			}
		})
	}
}

// TestCapacityLeftOut: a run that cannot be placed on the curve (every
// request failed, so no rate can be measured, and none is configured) is
// listed with why, and the lower bound says it may be a higher rate.
func TestCapacityLeftOut(t *testing.T) {
	pts := []CapacityPoint{
		{RunID: "rate2", RateRPS: 2, Attainment: 1, OutputTokensPerS: 20, Requests: 30},
		{RunID: "rate8", RateRPS: analyze.F(math.NaN()), Attainment: 0, OutputTokensPerS: analyze.F(math.NaN()), Requests: 30},
		{RunID: "empty", RateRPS: 1, Attainment: analyze.F(math.NaN()), Requests: 0},
	}
	c := ComputeCapacity(pts, 0.9)
	if len(c.Points) != 1 || len(c.LeftOut) != 2 || c.LeftOut[0].RunID != "rate8" || !strings.HasPrefix(c.LeftOut[0].Why, "no request rate") ||
		c.LeftOut[1].RunID != "empty" || !strings.HasPrefix(c.LeftOut[1].Why, "no SLO attainment") {
		t.Fatalf("points %+v, left out %+v", c.Points, c.LeftOut)
	}
	if !c.AtLeast || c.RateRPS != 2 || !strings.Contains(c.Note, "2 run(s) left out (below) may be higher rates") {
		t.Errorf("capacity %v at least %v: %q", c.RateRPS, c.AtLeast, c.Note)
	}
}

func close(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}
