package formats

import (
	"sort"
	"strconv"
	"strings"
)

// LoadMetricPrefix names the series AllSeries makes of Run.Load: vLLM's
// engine-stats log line, field by field ("vllm_log:waiting",
// "vllm_log:gpu_kv_cache_pct", …).
const LoadMetricPrefix = "vllm_log:"

// AllSeries returns every series point of run: Run.Series, then Run.Load
// as points named LoadMetricPrefix + the load field's column name
// (running, waiting, swapped in requests; gpu_kv_cache_pct,
// cpu_kv_cache_pct, prefix_cache_hit_pct in %; prompt_tokens_per_s,
// generation_tokens_per_s in tokens/s), leaving out samples without a time
// and fields the line did not print. The result is a new slice.
func AllSeries(run *Run) []SeriesPoint {
	out := make([]SeriesPoint, 0, len(run.Series)+4*len(run.Load))
	out = append(out, run.Series...)
	for _, l := range run.Load {
		if l.TimeNs == nil {
			continue
		}
		add := func(name, unit string, v float64) {
			out = append(out, SeriesPoint{Metric: LoadMetricPrefix + name, Unit: unit, TimeNs: *l.TimeNs, ClockDomain: l.ClockDomain, Value: v})
		}
		for _, c := range []struct {
			name string
			v    *int64
		}{{"running", l.Running}, {"waiting", l.Waiting}, {"swapped", l.Swapped}} {
			if c.v != nil {
				add(c.name, "requests", float64(*c.v))
			}
		}
		for _, c := range []struct {
			name, unit string
			v          *float64
		}{{"gpu_kv_cache_pct", "%", l.GPUKVCachePct}, {"cpu_kv_cache_pct", "%", l.CPUKVCachePct}, {"prefix_cache_hit_pct", "%", l.PrefixCacheHitPct},
			{"prompt_tokens_per_s", "tokens/s", l.PromptTokensPerS}, {"generation_tokens_per_s", "tokens/s", l.GenerationTokensPerS}} {
			if c.v != nil {
				add(c.name, c.unit, *c.v)
			}
		}
	}
	return out
}

// LabelString writes labels in Prometheus text form, sorted by name, values
// quoted as Go (and Prometheus) quote strings: `a="1",b="x"`; "" for none.
func LabelString(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(labels[k]))
	}
	return b.String()
}
