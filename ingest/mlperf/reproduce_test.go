package mlperf

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TestReproduceSummaryOnly: a corpus run has statistics but no requests,
// so nothing is reproduced and every statistic says why.
func TestReproduceSummaryOnly(t *testing.T) {
	a := analyze.NewAnalyzer(Profile)
	if err := ingest.ImportFile(New(), filepath.Join(corpus, "amd-mi300x-llama2-70b-99-server", summaryFile), ingest.Options{Label: "s"}, a); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools)})
	if err != nil {
		t.Fatal(err)
	}
	rp := rep.Runs[0].Reproduction
	if rp == nil || rp.Reproduced != 0 || rp.Differs != 0 || rp.NotReproducible != rp.Total || rp.Total == 0 {
		t.Fatalf("reproduction %+v", rp)
	}
	for _, it := range rp.Items {
		if it.Reason != "summary only: nothing to recompute" {
			t.Errorf("%s/%s: reason %q", it.Metric, it.Stat, it.Reason)
		}
	}
}

// TestReproduceHandRows checks the MLPerf mapping on ten hand-made samples
// (no LoadGen log holds per-sample rows): scheduled start, first token
// (TTFT) and completion (latency) in ns, n_tokens as the tool's count. The
// reported numbers were worked out by LoadGen's rules (results.cc):
// sorted[⌊n·p⌋], integer-ns means (Σ / n), TPOT = ⌊(latency − TTFT) /
// (n_tokens − 1)⌋; e.g. sample 2: (1 800 000 000 − 95 500 000) / 59 =
// 28 889 830.5 → 28 889 830 ns.
func TestReproduceHandRows(t *testing.T) {
	ttft := []int64{120_000_000, 95_500_000, 310_250_000, 88_000_000, 150_000_001, 205_000_000, 99_999_999, 400_000_000, 132_000_000, 175_500_000}
	lat := []int64{2_120_000_000, 1_800_000_000, 5_310_250_000, 900_000_000, 3_150_000_001, 2_705_000_000, 1_099_999_999, 6_400_000_000, 2_132_000_000, 4_175_500_000}
	ntok := []int64{101, 60, 251, 41, 150, 126, 51, 301, 100, 200}
	var c formats.Collector
	for i := range ttft {
		r := formats.Request{
			RunID: "hand", RequestKey: int64(i), Status: formats.StatusOK,
			StartNs: ingest.Ptr(int64(i) * 500_000_000), ClockDomain: formats.ClockMonotonic,
			FirstTokenOffsetNs: ingest.Ptr(ttft[i]), LastTokenOffsetNs: ingest.Ptr(lat[i]), StreamEndOffsetNs: ingest.Ptr(lat[i]),
			OutputTokens: ingest.Ptr(ntok[i]), OutputTokensSource: formats.SourceToolReported, TokenMessageCount: ntok[i],
		}
		c.Requests = append(c.Requests, r)
	}
	st := func(metric, stat string, v float64) formats.ReportedStat {
		return formats.ReportedStat{Metric: metric, Stat: stat, Unit: "ns", Value: ingest.Ptr(v), File: "hand"}
	}
	c.Runs = []formats.Run{{
		RunID: "hand", Tool: Name, Convention: Convention, Streaming: ingest.Ptr(true),
		Reported: []formats.ReportedStat{
			st("first_token_latency_ns", "min", 88000000), st("first_token_latency_ns", "max", 400000000),
			st("first_token_latency_ns", "mean", 177625000), st("first_token_latency_ns", "p50", 150000001),
			st("first_token_latency_ns", "p90", 400000000),
			st("latency_ns", "min", 900000000), st("latency_ns", "mean", 2979275000), st("latency_ns", "p50", 2705000000),
			st("latency_ns", "p99.9", 6400000000),
			st("time_per_output_token_ns", "min", 20000000), st("time_per_output_token_ns", "max", 28889830),
			st("time_per_output_token_ns", "mean", 20962658), st("time_per_output_token_ns", "p50", 20100502),
			st("time_per_output_token_ns", "p99", 28889830),
			{Metric: "query_count", Stat: "value", Value: ingest.Ptr(10.0)},
			{Metric: "num_errors", Stat: "value", Value: ingest.Ptr(0.0)},
			{Metric: "completed_tokens_per_second", Stat: "value", Unit: "tokens/s", Value: ingest.Ptr(24000.0)},
			{Metric: "token_throughput", Stat: "value", Unit: "tokens/s", Value: ingest.Ptr(6.9e-09)},
		},
	}}
	a := analyze.NewAnalyzer(Profile)
	if err := c.Replay(a); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools)})
	if err != nil {
		t.Fatal(err)
	}
	rp := rep.Runs[0].Reproduction
	if rp == nil || rp.Reproduced != 16 || rp.NotReproducible != 2 || rp.Differs != 0 {
		for _, it := range rp.Items {
			t.Logf("%s/%s %s reported %v recomputed %v %s", it.Metric, it.Stat, it.Status, it.Reported, it.Recomputed, it.Reason)
		}
		t.Fatalf("reproduced %d, not reproducible %d, differs %d of %d", rp.Reproduced, rp.NotReproducible, rp.Differs, rp.Total)
	}
	for _, it := range rp.Items {
		if it.Metric == "token_throughput" && !strings.Contains(it.Reason, "unit slip") ||
			it.Metric == "completed_tokens_per_second" && !strings.Contains(it.Reason, "test's start") {
			t.Errorf("%s: reason %q", it.Metric, it.Reason)
		}
	}
	// The same rows under numpy's linear percentile would not reproduce
	// LoadGen's p50: sorted[5] = 150000001, not (132000000 + 150000001)/2.
	lin := stats.Percentile([]float64{88, 95.5, 99.999999, 120, 132, 150.000001, 175.5, 205, 310.25, 400}, 0.5, stats.Linear)
	if lin == 150.000001 {
		t.Error("the fixture does not tell floor-rank from linear percentiles")
	}
}

// tools are the canonical convention and this tool's profiles.
var tools = convention.NewSet(analyze.Canonical, Tool)
