package plots_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/compare"
	"github.com/tokentrace/tokentrace/analyze/sweep"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
	"github.com/tokentrace/tokentrace/internal/golden"
	"github.com/tokentrace/tokentrace/plots"
)

// side imports dirs as one side of a comparison.
func side(t *testing.T, label string, dirs ...string) compare.Side {
	t.Helper()
	jobs, _, err := registry.Resolve(dirs, "")
	if err != nil {
		t.Fatal(err)
	}
	an := analyze.NewAnalyzer(analyze.Canonical)
	if err := registry.Import(jobs, nil, ingest.Options{}, an); err != nil {
		t.Fatal(err)
	}
	_, data, err := an.Subjects(analyze.Options{Tools: tools}, false)
	if err != nil {
		t.Fatal(err)
	}
	return compare.Side{Label: label, Runs: data}
}

var tools = convention.NewSet(analyze.Canonical, registry.Tools()...)

// TestComparePlots: the AIPerf Qwen runs at concurrency 1 and 2 (paired
// with --ignore concurrency) overlay their CCDFs, one series per side
// labelled by the side; the inference-perf sweeps (summary only) draw no
// CCDF, say why, and draw their curves and Pareto frontiers on shared
// axes. The numbers behind each figure are golden.
func TestComparePlots(t *testing.T) {
	keys, err := compare.ParseKeys("", "concurrency")
	if err != nil {
		t.Fatal(err)
	}
	sides := []compare.Side{side(t, "c1", "../testdata/aiperf/qwen3vl30b-ngrok-agent-c1"), side(t, "c2", "../testdata/aiperf/qwen3vl30b-local-agent-c2")}
	res, err := compare.Compare(sides, compare.Options{Keys: keys, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	set, err := plots.Compare(res, sides, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range set.Figures {
		names = append(names, f.Name)
		checkFigure(t, f)
	}
	if got := strings.Join(names, " "); got != "compare-ccdf-ttft compare-ccdf-tpot compare-ccdf-itl compare-ccdf-e2e" {
		t.Errorf("figures %s", got)
	}
	if d := set.Figures[0].Data; !strings.Contains(d, `series "c1" n=10`) || !strings.Contains(d, `series "c2" n=20`) {
		t.Errorf("TTFT overlay lacks a side:\n%s", d)
	}

	ip := []compare.Side{side(t, "baseline", "../testdata/inference-perf/kubecon25-vllm-baseline"), side(t, "eagle", "../testdata/inference-perf/kubecon25-vllm-eagle")}
	res, err = compare.Compare(ip, compare.Options{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	sw := sweep.Build(ip, sweep.Options{Keys: compare.Keys, Tools: tools, GPUs: 1})
	set, err = plots.Compare(res, ip, sw)
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, f := range set.Figures {
		names = append(names, f.Name)
		checkFigure(t, f)
	}
	want := "sweep-ttft-vs-rate sweep-ttft-vs-throughput sweep-tpot-vs-rate sweep-tpot-vs-throughput sweep-e2e-vs-rate sweep-e2e-vs-throughput sweep-pareto"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("figures %s, want %s", got, want)
	}
	if len(set.Skipped) != 4 || !strings.Contains(set.Skipped[0].String(), "summary-only") {
		t.Errorf("skipped %v", set.Skipped)
	}
}

// checkFigure renders f twice (identical SVG) and checks its numbers.
func checkFigure(t *testing.T, f *plots.Figure) {
	t.Helper()
	var a, b bytes.Buffer
	if err := f.Render(&a, "svg"); err != nil {
		t.Fatal(err)
	}
	if err := f.Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("%s: two SVG renderings differ", f.Name)
	}
	golden.Check(t, "testdata/golden/"+f.Name+".txt", []byte(f.Data))
}
