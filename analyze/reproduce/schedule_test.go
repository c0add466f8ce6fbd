package reproduce_test

import (
	"bufio"
	"encoding/json"
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
