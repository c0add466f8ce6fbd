package reproduce_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// numpyLinear is numpy's default percentile of xs (sorted), +∞ values
// included as AIPerf's adj_* metrics hold them: lerp at h = (n−1)·p.
func numpyLinear(xs []float64, p float64) float64 {
	h := float64(len(xs)-1) * p
	i := int(math.Floor(h))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	t := h - float64(i)
	if math.IsInf(xs[i+1], 1) && t > 0 {
		return math.Inf(1)
	}
	return xs[i] + t*(xs[i+1]-xs[i])
}

// TestAIPerfEffectiveAndAdjusted: AIPerf's effective_latency (request
// latency + request_start − credit_issued_ns, successful records) and its
// error-adjusted adj_request_latency (one +inf per errored record, the
// non-finite statistics omitted) are reproduced on the bundled AIPerf run
// with ten HTTP 524s. The run's summary (AIPerf 0.10.0) predates both
// metrics: the test adds them, computed from the run's own records by
// AIPerf's documented rules (ai-dynamo/aiperf 36c0308
// docs/reference/effective-vs-active-metrics.md).
func TestAIPerfEffectiveAndAdjusted(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "aiperf", "llama31-8b-cloudflare-agent-c2-524errors")
	f, err := os.Open(filepath.Join(src, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var eff, adj []float64
	errored := 0
	// effective_concurrency: Σ (end − start) over records / (last end −
	// first credit); an errored record ends at its start
	var held float64
	first, last := int64(math.MaxInt64), int64(0)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			Metadata struct {
				Credit int64 `json:"credit_issued_ns"`
				Start  int64 `json:"request_start_ns"`
				End    int64 `json:"request_end_ns"`
			} `json:"metadata"`
			Metrics map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"metrics"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		first, last = min(first, rec.Metadata.Credit), max(last, rec.Metadata.End)
		held += float64(rec.Metadata.End - rec.Metadata.Start)
		if len(rec.Error) > 0 && string(rec.Error) != "null" {
			errored++
			continue
		}
		var lat float64
		if err := json.Unmarshal(rec.Metrics["request_latency"].Value, &lat); err != nil {
			t.Fatal(err)
		}
		eff = append(eff, lat+float64(rec.Metadata.Start-rec.Metadata.Credit)/1e6)
		adj = append(adj, lat)
	}
	if errored != 10 || len(eff) != 90 {
		t.Fatalf("%d errored, %d valid records; the corpus run has 10 and 90", errored, len(eff))
	}
	for range errored {
		adj = append(adj, math.Inf(1))
	}
	sort.Float64s(eff)
	sort.Float64s(adj)

	var summary map[string]any
	raw, err := os.ReadFile(filepath.Join(src, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &summary); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, v := range eff {
		sum += v
	}
	summary["effective_latency"] = map[string]any{"unit": "ms", "avg": sum / 90, "p50": numpyLinear(eff, 0.5), "p90": numpyLinear(eff, 0.9),
		"p99": numpyLinear(eff, 0.99), "min": eff[0], "max": eff[89]}
	// adj: 10 +inf of 100: p50 and p75 finite, p90 and p99 +inf — omitted
	adjStats := map[string]any{"unit": "ms", "min": adj[0]}
	for _, p := range []struct {
		k string
		p float64
	}{{"p25", 0.25}, {"p50", 0.5}, {"p75", 0.75}, {"p90", 0.9}, {"p99", 0.99}} {
		if v := numpyLinear(adj, p.p); !math.IsInf(v, 0) {
			adjStats[p.k] = v
		}
	}
	if _, ok := adjStats["p90"]; ok {
		t.Fatal("p90 of 10% failures should be +inf")
	}
	summary["adj_request_latency"] = adjStats
	summary["effective_concurrency"] = map[string]any{"unit": "requests", "avg": held / float64(last-first), "max": 2.0}

	dir := t.TempDir()
	out, _ := json.Marshal(summary)
	if err := os.WriteFile(filepath.Join(dir, "profile_export_aiperf.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	jsonl, _ := os.ReadFile(filepath.Join(src, "profile_export.jsonl"))
	if err := os.WriteFile(filepath.Join(dir, "profile_export.jsonl"), jsonl, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := toolReport(t, dir, nil)
	got := map[string]string{}
	for _, it := range rep.Runs[0].Reproduction.Items {
		if it.Metric == "effective_latency" || it.Metric == "adj_request_latency" || it.Metric == "effective_concurrency" {
			got[it.Metric+"/"+it.Stat] = it.Status
			if it.Status != "reproduced" {
				t.Errorf("%s/%s: %s (%s): reported %.9g, recomputed %.9g", it.Metric, it.Stat, it.Status, it.Reason, float64(it.Reported), float64(it.Recomputed))
			}
		}
	}
	for _, k := range []string{"effective_concurrency/avg", "effective_concurrency/max", "effective_latency/avg", "effective_latency/p99", "adj_request_latency/p50", "adj_request_latency/p75", "adj_request_latency/min"} {
		if got[k] == "" {
			t.Errorf("%s not among the reproduction items (%v)", k, got)
		}
	}
}

// TestCacheOnRealRuns: the prefix cache of two tools' real files. AIPerf
// 0.10.0 (the bundled 524 run) records usage_prompt_cache_read_tokens per
// record: the cache block's hit fraction is AIPerf's own
// overall_usage_prompt_cache_read_pct (47.82%), reproduced with its
// per-request statistics. GenAI-Perf's raw OpenRouter responses carry
// usage.prompt_tokens_details.cached_tokens 0 on every request: a 0% hit
// rate of known misses, not an unknown.
func TestCacheOnRealRuns(t *testing.T) {
	rep := toolReport(t, filepath.Join("..", "..", "testdata", "aiperf", "llama31-8b-cloudflare-agent-c2-524errors"), nil)
	rr := rep.Runs[0]
	if rr.Cache == nil || rr.Cache.CachedInputTokens != 64988 || rr.Cache.InputTokens != 135900 {
		t.Fatalf("AIPerf cache %+v", rr.Cache)
	}
	n := 0
	for _, it := range rr.Reproduction.Items {
		if strings.Contains(it.Metric, "cache") {
			n++
			if it.Status != "reproduced" {
				t.Errorf("%s/%s: %s (%s)", it.Metric, it.Stat, it.Status, it.Reason)
			}
			if it.Metric == "overall_usage_prompt_cache_read_pct" && math.Abs(float64(it.Recomputed)-47.82045621780721) > 1e-9 {
				t.Errorf("hit %% %v", float64(it.Recomputed))
			}
		}
	}
	if n < 3 {
		t.Errorf("%d cache statistics reproduced, want AIPerf's three metrics", n)
	}
	rep = toolReport(t, filepath.Join("..", "..", "testdata", "genai-perf", "openrouter-gpt4omini-c1-nonstream"), nil)
	c := rep.Runs[0].Cache
	if c == nil || c.Requests == 0 || c.CachedInputTokens != 0 || float64(c.HitFraction) != 0 {
		t.Fatalf("GenAI-Perf cache %+v", c)
	}
	if b := rep.Runs[0].TTFTByCache; len(b) != 1 || b[0].Bucket != "miss" || b[0].N != c.Requests {
		t.Errorf("ttft by cache %+v", b)
	}
}

// TestEnergyOnRealTelemetry: AIPerf's real GPU telemetry export (one GPU
// seen by two DCGM exporters, energy_consumption in MJ) beside five
// hand-made records inside its window: the GPU is counted once (the
// exporter whose labels sort first, hostname 2e2a9f1c15f9), its energy
// is its counter's rise over the run's span, and per output token over
// the records' 5 × 100 tokens.
func TestEnergyOnRealTelemetry(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "aiperf", "gpu-telemetry-qwen-c1", "gpu_telemetry_export.jsonl")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gpu_telemetry_export.jsonl"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	const t0 = int64(1762551531000000000) // inside the telemetry's 50.946–53.943 s
	var recs strings.Builder
	for i := range 5 {
		start := t0 + int64(i)*500_000_000
		recs.WriteString(fmt.Sprintf(`{"metadata":{"request_start_ns":%d,"request_end_ns":%d,"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":500.0,"unit":"ms"},"time_to_first_token":{"value":100.0,"unit":"ms"},"output_sequence_length":{"value":100,"unit":"tokens"}},"error":null}`+"\n", start, start+500_000_000))
	}
	if err := os.WriteFile(filepath.Join(dir, "profile_export.jsonl"), []byte(recs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// the expected energy: the chosen exporter's counter read at t0 and t0
	// + 2.5 s, each between its two neighbouring samples
	type sample struct {
		t int64
		v float64
	}
	var pts []sample
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var r struct {
			T        int64              `json:"timestamp_ns"`
			Hostname string             `json:"hostname"`
			Data     map[string]float64 `json:"telemetry_data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Hostname == "2e2a9f1c15f9" {
			pts = append(pts, sample{r.T, r.Data["energy_consumption"] * 1e6})
		}
	}
	read := func(at int64) float64 {
		for i := 1; i < len(pts); i++ {
			if pts[i-1].t <= at && at <= pts[i].t {
				return pts[i-1].v + (pts[i].v-pts[i-1].v)*float64(at-pts[i-1].t)/float64(pts[i].t-pts[i-1].t)
			}
		}
		t.Fatalf("%d outside the samples", at)
		return 0
	}
	want := read(t0+2_500_000_000) - read(t0)
	rep := toolReport(t, dir, nil)
	e := rep.Runs[0].Energy
	if e == nil {
		t.Fatal("no energy block")
	}
	if e.Devices != 1 || e.Duplicates != 1 || e.Source != "counter" || e.OutputTokens != 500 {
		t.Errorf("energy %+v", *e)
	}
	if math.Abs(float64(e.EnergyJ)-want) > 1e-6*math.Abs(want) || !(want > 0) {
		t.Errorf("energy %v J, want %v J", float64(e.EnergyJ), want)
	}
	if float64(e.CoverageShare) != 1 || math.Abs(float64(e.EnergyPerOutputTokenMJ)-want*1e3/500) > 1e-6*want {
		t.Errorf("per token %v mJ, want %v", float64(e.EnergyPerOutputTokenMJ), want*1e3/500)
	}
	t.Logf("energy %.3f J over %.0f%% of the run, %.1f mJ per output token", want, 100*float64(e.CoverageShare), float64(e.EnergyPerOutputTokenMJ))
}
