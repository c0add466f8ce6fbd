package compare

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
)

func fp(v float64) *float64 { return &v }

func TestConfigOf(t *testing.T) {
	st := true
	run := &formats.Run{Model: "m", Concurrency: fp(4), RequestRateRPS: fp(math.Inf(1)), Streaming: &st,
		ConfigJSON: `{"input":{"prompt":{"input_tokens":{"mean":550,"stddev":0}}},"output_tokens_mean":-1,"b":{"random_output_len":"150"}}`}
	got := ConfigOf(run)
	want := Config{KeyModel: "m", KeyConcurrency: "4", KeyRate: "inf", KeyStreaming: "true", KeyISL: "550", KeyOSL: "150"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigOf = %v, want %v (output_tokens_mean -1 is GenAI-Perf's unset, skipped)", got, want)
	}
	if k := got.Key([]string{KeyModel, KeyRate, KeyISL}); k != "model=m, rate=inf, isl=550" {
		t.Errorf("Key = %q", k)
	}
	if k := (Config{}).Key([]string{KeyOSL}); k != "osl=?" {
		t.Errorf("unknown value: %q", k)
	}
}

func TestParseKeys(t *testing.T) {
	for _, c := range []struct {
		match, ignore string
		want          []string
		err           string
	}{
		{"", "", Keys, ""},
		{"", "model", []string{KeyConcurrency, KeyRate, KeyISL, KeyOSL, KeyStreaming}, ""},
		{"concurrency, model", "", []string{KeyModel, KeyConcurrency}, ""},
		{"model", "model", nil, "both"},
		{"", "modle", nil, `unknown key "modle"`},
		{"", "model,concurrency,rate,isl,osl,streaming", nil, "no key"},
	} {
		got, err := ParseKeys(c.match, c.ignore)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q/%q: error %v, want %q", c.match, c.ignore, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q/%q: %v %v, want %v", c.match, c.ignore, got, err, c.want)
		}
	}
}

// TestMatch: the base has concurrency 1 (two trials), 2 and 8; the
// candidate 1, 2 (two trials) and 4. Concurrency 1 and 2 are compared,
// in numeric order; 8 (base only) and 4 (candidate only) are listed
// unmatched; nothing is dropped.
func TestMatch(t *testing.T) {
	rc := func(id, c string) RunConfig {
		return RunConfig{RunID: id, Config: Config{KeyModel: "m", KeyConcurrency: c}}
	}
	sides := [][]RunConfig{
		{rc("a1", "1"), rc("a8", "8"), rc("a2", "2"), rc("a1b", "1")},
		{rc("b4", "4"), rc("b2", "2"), rc("b1", "1"), rc("b2b", "2")},
	}
	m := Match(sides, []string{KeyModel, KeyConcurrency})
	if len(m.Groups) != 2 {
		t.Fatalf("groups %+v", m.Groups)
	}
	if g := m.Groups[0]; g.Key != "model=m, concurrency=1" || !reflect.DeepEqual(g.Runs, [][]string{{"a1", "a1b"}, {"b1"}}) {
		t.Errorf("group 0 %+v", g)
	}
	if g := m.Groups[1]; g.Key != "model=m, concurrency=2" || !reflect.DeepEqual(g.Runs, [][]string{{"a2"}, {"b2", "b2b"}}) {
		t.Errorf("group 1 %+v", g)
	}
	want := []Unmatched{{Side: 1, Key: "model=m, concurrency=4", Runs: []string{"b4"}}, {Side: 0, Key: "model=m, concurrency=8", Runs: []string{"a8"}}}
	if !reflect.DeepEqual(m.Unmatched, want) {
		t.Errorf("unmatched %+v, want %+v", m.Unmatched, want)
	}
	if len(m.Differ) != 0 {
		t.Errorf("differ %+v with groups matched", m.Differ)
	}
	if l := m.Labels(); !reflect.DeepEqual(l, []string{"concurrency=1", "concurrency=2"}) {
		t.Errorf("labels %v", l)
	}
	if c := m.Common(); c != "model=m" {
		t.Errorf("common %q", c)
	}
	// Providers naming one model differently pair nothing; Differ says
	// which key kept them apart.
	m = Match([][]RunConfig{{{RunID: "g", Config: Config{KeyModel: "llama2-70b-4096", KeyConcurrency: "5"}}},
		{{RunID: "a", Config: Config{KeyModel: "meta-llama/Llama-2-70b-chat-hf", KeyConcurrency: "5"}}}}, []string{KeyModel, KeyConcurrency})
	if len(m.Groups) != 0 || len(m.Unmatched) != 2 || len(m.Differ) != 1 || m.Differ[0].Key != KeyModel {
		t.Errorf("providers: %+v", m)
	}
}

// runData is a hand-made run: its per-request values and report.
func runData(id string, n int, vals map[*analyze.Metric][]float64, rate float64, good, total int) *analyze.RunData {
	st := true
	rd := &analyze.RunData{Run: &formats.Run{RunID: id, Tool: "t", Model: "m", Streaming: &st, Concurrency: fp(1)}, Convention: analyze.Canonical,
		Streaming: true, Values: vals, Report: &analyze.RunReport{RunID: id}}
	rd.Report.Requests.Total = n
	rd.Report.Requests.Completed = n
	rd.Report.Requests.ErrorRate = 0
	rd.Report.Throughput.RequestsPerS = analyze.F(rate)
	rd.Report.Goodput = &analyze.Goodput{Good: good, Total: total, Fraction: analyze.F(float64(good) / float64(total))}
	return rd
}

func seq(from, to float64) []float64 {
	var out []float64
	for x := from; x <= to; x++ {
		out = append(out, x)
	}
	return out
}

// TestCompareHandComputed: TTFT 1…100 ms against 51…150 ms. P50 at alpha
// 0.025: the base's one-sided bounds are x(40) = 40 and x(61) = 61, the
// candidate's 90 and 111, so Δ ∈ [90 − 61, 111 − 40] = [29, 71]: higher,
// +50/50.5 = +99.01%. The mean: Welch with equal variances (833.25 each),
// se = √(2·833.25/100) = 4.0825, t = 50/4.0825 = 12.25: higher. Goodput
// 101/150 against 150/150: Agresti–Caffo bounds at 97.5% one-sided
// (−0.3223684 ∓ 1.959964·0.0386683) = [−0.398157, −0.246580]: lower,
// worse. The request rates (one run each) are untested. The geomean of
// the TTFT table over p50 and mean: base √(50.5·50.5) = 50.5, candidate
// 100.5, change 100.5/50.5 − 1 = +99.01%.
func TestCompareHandComputed(t *testing.T) {
	base := runData("base", 100, map[*analyze.Metric][]float64{analyze.TTFT: seq(1, 100)}, 2, 150, 150)
	cand := runData("cand", 100, map[*analyze.Metric][]float64{analyze.TTFT: seq(51, 150)}, 3, 101, 150)
	res, err := Compare([]Side{{Label: "A", Runs: []*analyze.RunData{base}}, {Label: "B", Runs: []*analyze.RunData{cand}}}, Options{
		Metrics: []*analyze.Metric{analyze.TTFT, analyze.RequestRate, analyze.GoodputFraction},
		Stats:   []Stat{{Name: "p", P: 0.5}, {Name: "mean"}}, Alpha: 0.025})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matching.Groups) != 1 || len(res.Tables) != 3 {
		t.Fatalf("groups %d tables %d", len(res.Matching.Groups), len(res.Tables))
	}
	ttft := res.Tables[0]
	p50 := ttft.Rows[0].Cells[1]
	if p50.Value != 100.5 || p50.N != 100 || ttft.Rows[0].Cells[0].Value != 50.5 {
		t.Errorf("p50 cells %+v %+v", ttft.Rows[0].Cells[0], p50)
	}
	d := p50.VsBase
	if d.Lo != 29 || d.Hi != 71 || d.Verdict != "higher" || d.Better || !near(float64(d.Change), 50/50.5, 1e-12) || d.Test != "order-statistic bounds" {
		t.Errorf("p50 delta %+v", d)
	}
	if w := ttft.Rows[1].Cells[1].VsBase; w.Test != "welch t" || w.Verdict != "higher" || float64(w.PValue) > 1e-15 {
		t.Errorf("mean delta %+v", w)
	}
	if g := ttft.Geomean; g == nil || !near(float64(g.Values[0]), 50.5, 1e-9) || !near(float64(g.Values[1]), 100.5, 1e-9) || !near(float64(g.Change[1]), 100.5/50.5-1, 1e-12) {
		t.Errorf("geomean %+v", ttft.Geomean)
	}
	if r := res.Tables[1].Rows[0].Cells[1]; r.VsBase.Verdict != "untested" || !strings.HasPrefix(r.VsBase.Test, "none (one value per run") || r.VsBase.Change != 0.5 {
		t.Errorf("request rate %+v %+v", r, r.VsBase)
	}
	gp := res.Tables[2].Rows[0].Cells[1]
	if gp.Value != analyze.F(101.0/150) || gp.N != 150 {
		t.Errorf("goodput cell %+v", gp)
	}
	if d := gp.VsBase; d.Test != "agresti-caffo" || d.Verdict != "lower" || d.Better || !near(float64(d.Lo), -0.398157, 1e-6) || !near(float64(d.Hi), -0.246580, 1e-6) {
		t.Errorf("goodput delta %+v", gp.VsBase)
	}
}

// TestComparePooledTrials: two trials of the base pool into one sample
// (1…50 and 51…100 give P50 50.5), each trial's own P50 (25.5, 75.5) is
// its between-run spread, and their rates 2 and 4 (mean 3) are tested
// against the candidate's 5 and 7 (mean 6) by Welch's t over runs: se =
// √(2/2 + 2/2) = 1.414, t = 2.121, ν = 2: p = 0.0840 > 0.05, "~".
func TestComparePooledTrials(t *testing.T) {
	b1 := runData("b1", 50, map[*analyze.Metric][]float64{analyze.TTFT: seq(1, 50)}, 2, 50, 50)
	b2 := runData("b2", 50, map[*analyze.Metric][]float64{analyze.TTFT: seq(51, 100)}, 4, 50, 50)
	c1 := runData("c1", 100, map[*analyze.Metric][]float64{analyze.TTFT: seq(1, 100)}, 5, 100, 100)
	c2 := runData("c2", 100, map[*analyze.Metric][]float64{analyze.TTFT: seq(1, 100)}, 7, 100, 100)
	res, err := Compare([]Side{{Label: "A", Runs: []*analyze.RunData{b1, b2}}, {Label: "B", Runs: []*analyze.RunData{c1, c2}}},
		Options{Metrics: []*analyze.Metric{analyze.TTFT, analyze.RequestRate}, Stats: []Stat{{Name: "p", P: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	bc := res.Tables[0].Rows[0].Cells[0]
	if bc.Value != 50.5 || bc.N != 100 || bc.Runs != 2 || !reflect.DeepEqual(bc.RunValues, []analyze.F{25.5, 75.5}) {
		t.Errorf("pooled base %+v", bc)
	}
	if d := res.Tables[0].Rows[0].Cells[1].VsBase; d.Verdict != "~" || d.Change != 0 {
		t.Errorf("same distribution pooled: %+v", d)
	}
	rr := res.Tables[1].Rows[0].Cells[1]
	if rr.Value != 6 || rr.VsBase.Test != "welch t over runs" || rr.VsBase.Verdict != "~" || !near(float64(rr.VsBase.PValue), 0.0840, 5e-4) {
		t.Errorf("rate over runs %+v %+v", rr, rr.VsBase)
	}
}

// TestCompareSummaryOnly: a run without per-request data shows the tool's
// reported value, untested; a metric no side has is not a row.
func TestCompareSummaryOnly(t *testing.T) {
	a := runData("a", 0, map[*analyze.Metric][]float64{}, 2, 0, 0)
	b := runData("b", 0, map[*analyze.Metric][]float64{}, 2.5, 0, 0)
	a.Report.Throughput.Reported, b.Report.Throughput.Reported = true, true
	res, err := Compare([]Side{{Label: "A", Runs: []*analyze.RunData{a}}, {Label: "B", Runs: []*analyze.RunData{b}}},
		Options{Metrics: []*analyze.Metric{analyze.TTFT, analyze.RequestRate}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tables) != 1 || res.Tables[0].Metric != "request_rate" {
		t.Fatalf("tables %+v", res.Tables)
	}
	c := res.Tables[0].Rows[0].Cells[1]
	if c.Source != "reported" || c.VsBase.Verdict != "untested" || c.VsBase.Change != 0.25 {
		t.Errorf("reported rate %+v %+v", c, c.VsBase)
	}
}

func TestParseStats(t *testing.T) {
	got, err := ParseStats("p50, p99.9,mean,median,max")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.String())
	}
	if strings.Join(names, " ") != "p50 p99.9 mean max" {
		t.Errorf("stats %v (median is p50, listed once)", names)
	}
	for _, bad := range []string{"p100", "p0", "q50", "", "std"} {
		if _, err := ParseStats(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestCompareCarriesDataChecks: a data check that found a run's data
// wrong is listed with the comparison, naming the side and the run.
func TestCompareCarriesDataChecks(t *testing.T) {
	a := runData("a", 10, map[*analyze.Metric][]float64{analyze.TTFT: seq(1, 10)}, 1, 10, 10)
	b := runData("b", 10, map[*analyze.Metric][]float64{analyze.TTFT: seq(1, 10)}, 1, 10, 10)
	b.Report.Warnings = []analyze.Warning{{Code: "vllm_ttft_in_itls", Message: "TTFT counted in the ITL list", DataCheck: true}, {Code: "itl_below_tpot", Message: "not an error"}}
	res, err := Compare([]Side{{Label: "A", Runs: []*analyze.RunData{a}}, {Label: "B", Runs: []*analyze.RunData{b}}}, Options{Metrics: []*analyze.Metric{analyze.TTFT}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "B, run b: data check vllm_ttft_in_itls: TTFT counted in the ITL list (analyze/TRAPS.md)" {
		t.Errorf("warnings %q", res.Warnings)
	}
}
