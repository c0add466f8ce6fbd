package reproduce_test

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/render"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/genaiperf"
	"github.com/tokentrace/tokentrace/ingest/llmperf"
	"github.com/tokentrace/tokentrace/internal/golden"
	"github.com/tokentrace/tokentrace/internal/reqtest"
)

var classic = reqtest.Classic

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// TestReconcileClassicExample is the brief's example: TTFT 500 ms, 100
// output tokens, 700 ms of decode. LLMPerf's first-token-inclusive ITL is
// E2E/N = 12.00 ms; excluding TTFT gives 7.00 ms; dividing by N − 1 gives
// the canonical TPOT 7.07 ms. The steps must sum to the gap.
func TestReconcileClassicExample(t *testing.T) {
	from, to := llmperf.Profile2024Apr, analyze.Canonical
	a := analyze.NewAnalyzer(convention.PathConventions([][2]convention.Convention{{from, to}})...)
	yes := true
	for k := int64(0); k < 3; k++ {
		r, evs := classic(k, k*2_000*reqtest.MS)
		// LLMPerf's own count of the same reply (as if without BOS) and its
		// stream close 10 ms after the last token.
		r.ReportedOutputTokens = ingest.Ptr(100.0)
		if err := a.Request(&r, evs); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Run(&formats.Run{RunID: "r", Tool: "llmperf", Streaming: &yes}); err != nil {
		t.Fatal(err)
	}
	rec, err := reproduce.Reconcile(a, func(*formats.Run) [2]convention.Convention { return [2]convention.Convention{from, to} }, []string{"mean"}, tools)
	if err != nil {
		t.Fatal(err)
	}
	var tpot *reproduce.MetricReconciled
	for i := range rec.Runs[0].Metrics {
		if rec.Runs[0].Metrics[i].Metric == "tpot_ms" {
			tpot = &rec.Runs[0].Metrics[i]
		}
	}
	if tpot == nil {
		t.Fatal("no tpot_ms reconciliation")
	}
	near(t, "LLMPerf ITL", float64(tpot.FromValue), 12.00)
	near(t, "canonical TPOT", float64(tpot.ToValue), 700.0/99)
	sum := 0.0
	effects := map[string]float64{}
	for _, s := range tpot.Steps {
		sum += float64(s.Delta)
		if s.Delta != 0 {
			effects[s.Choice] = float64(s.Delta)
		}
	}
	near(t, "Σ steps", sum, float64(tpot.Total))
	near(t, "exclude TTFT", effects["tpot_from"], 7.00-12.00)
	near(t, "divide by N−1", effects["tpot_divisor"], 700.0/99-7.00)
	if len(effects) != 2 {
		t.Errorf("steps with an effect on TPOT: %v, want tpot_from and tpot_divisor only", effects)
	}
	var buf bytes.Buffer
	if err := render.WriteReconciliation(&buf, rec, false); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "reconcile-classic.txt"), buf.Bytes())
}

func TestPathChangesOneChoiceAtATime(t *testing.T) {
	p := convention.Path(genaiperf.Profile, analyze.Canonical)
	if p[0].Convention.Name != "genai-perf" || p[len(p)-1].Convention.Name != "tokentrace" {
		t.Fatalf("ends %q … %q", p[0].Convention.Name, p[len(p)-1].Convention.Name)
	}
	for i := 1; i < len(p); i++ {
		a, b := p[i-1].Convention.Choices(), p[i].Convention.Choices()
		diff := 0
		for k := range a {
			if a[k] != b[k] {
				diff++
			}
		}
		if diff != 1 {
			t.Errorf("step %d (%s) changes %d choices", i, p[i].Choice, diff)
		}
	}
	if got := p[len(p)-1].Convention.Choices(); !equalMaps(got, analyze.Canonical.Choices()) {
		t.Error("path does not end at the canonical choices")
	}
	if len(convention.Path(analyze.Canonical, analyze.Canonical)) != 1 {
		t.Error("a convention's path to itself has no steps")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
