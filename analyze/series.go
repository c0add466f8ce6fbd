package analyze

import (
	"math"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
)

// Engine series roles: the server metrics that give the engine's queue and
// its KV-cache usage, with the factor that puts their values in the role's
// unit (requests; percent). vLLM's Prometheus gauges
// (vllm:num_requests_waiting; vllm:gpu_cache_usage_perc, renamed
// vllm:kv_cache_usage_perc in V1, a fraction 0–1), SGLang's
// (sglang:num_queue_reqs; sglang:token_usage, a fraction), TGI's
// (tgi_queue_size), and vLLM's engine-stats log line as runs.load holds it
// (formats.AllSeries: vllm_log:waiting; vllm_log:gpu_kv_cache_pct, in %).
var (
	waitingMetrics = map[string]float64{"vllm:num_requests_waiting": 1, "sglang:num_queue_reqs": 1, "tgi_queue_size": 1,
		formats.LoadMetricPrefix + "waiting": 1}
	kvCacheMetrics = map[string]float64{"vllm:gpu_cache_usage_perc": 100, "vllm:kv_cache_usage_perc": 100, "sglang:token_usage": 100,
		formats.LoadMetricPrefix + "gpu_kv_cache_pct": 1}
)

// SeriesStaleNs is how old the latest sample before a moment may be and
// still give the engine's state then: 5 minutes, Prometheus's default
// lookback delta (--query.lookback-delta), by which a PromQL instant query
// also takes a gauge's last sample.
const SeriesStaleNs = int64(5 * 60 * 1e9)

// EngineState answers the engine's queue and KV-cache usage at a moment
// from a run's series (its own and those attached from series-only runs
// on the same clock).
type EngineState struct {
	waiting, kv []labelSeries
}

// labelSeries is one metric's samples under one label set, by time.
type labelSeries struct {
	t []int64
	v []float64
}

// NewEngineState indexes the points of the engine roles among pts whose
// clock is clock; nil when there are none.
func NewEngineState(pts []formats.SeriesPoint, clock string) *EngineState {
	type key struct{ role, metric, labels string }
	by := map[key]*labelSeries{}
	var keys []key
	for _, p := range pts {
		if p.ClockDomain != clock {
			continue
		}
		role, scale := "", 0.0
		if f, ok := waitingMetrics[p.Metric]; ok {
			role, scale = "waiting", f
		} else if f, ok := kvCacheMetrics[p.Metric]; ok {
			role, scale = "kv", f
		} else {
			continue
		}
		k := key{role, p.Metric, p.Labels}
		s := by[k]
		if s == nil {
			s = &labelSeries{}
			by[k] = s
			keys = append(keys, k)
		}
		s.t = append(s.t, p.TimeNs)
		s.v = append(s.v, p.Value*scale)
	}
	if len(keys) == 0 {
		return nil
	}
	e := &EngineState{}
	for _, k := range keys {
		s := by[k]
		sort.Sort(byTime{s})
		if k.role == "waiting" {
			e.waiting = append(e.waiting, *s)
		} else {
			e.kv = append(e.kv, *s)
		}
	}
	return e
}

type byTime struct{ s *labelSeries }

func (b byTime) Len() int           { return len(b.s.t) }
func (b byTime) Less(i, j int) bool { return b.s.t[i] < b.s.t[j] }
func (b byTime) Swap(i, j int) {
	b.s.t[i], b.s.t[j] = b.s.t[j], b.s.t[i]
	b.s.v[i], b.s.v[j] = b.s.v[j], b.s.v[i]
}

// latest is s's last finite sample at or before t, no older than
// SeriesStaleNs.
func (s *labelSeries) latest(t int64) (float64, bool) {
	k := sort.Search(len(s.t), func(i int) bool { return s.t[i] > t }) - 1
	for ; k >= 0 && t-s.t[k] <= SeriesStaleNs; k-- {
		if !math.IsNaN(s.v[k]) && !math.IsInf(s.v[k], 0) {
			return s.v[k], true
		}
	}
	return 0, false
}

// At returns the engine's queue (requests waiting: the sum over label
// sets — engines, models — of each one's latest sample at or before t)
// and its KV-cache usage in % (the highest over label sets: the fullest
// engine) at t; NaN where no sample within SeriesStaleNs precedes t. A nil
// EngineState gives NaN for both.
func (e *EngineState) At(t int64) (waiting, kvPct float64) {
	waiting, kvPct = math.NaN(), math.NaN()
	if e == nil {
		return
	}
	for i := range e.waiting {
		if v, ok := e.waiting[i].latest(t); ok {
			if math.IsNaN(waiting) {
				waiting = 0
			}
			waiting += v
		}
	}
	for i := range e.kv {
		if v, ok := e.kv[i].latest(t); ok && (math.IsNaN(kvPct) || v > kvPct) {
			kvPct = v
		}
	}
	return
}

// SeriesSummary is one series attached to a run's report: a metric with
// how many label sets and points it has in the run's time span.
type SeriesSummary struct {
	Metric    string `json:"metric"`
	Unit      string `json:"unit,omitempty"`
	LabelSets int    `json:"label_sets"`
	Points    int    `json:"points"`
	// FromNs and ToNs are its first and last sample time; Run the run it
	// came from (the report's own, or a series-only run beside it).
	FromNs int64  `json:"from_ns"`
	ToNs   int64  `json:"to_ns"`
	Run    string `json:"run"`
	// Role is "waiting" or "kv_cache_pct" for the metrics that give the
	// engine's state at a request's start, "" for the others.
	Role string `json:"role,omitempty"`
}

// seriesFor collects the points that belong beside run: its own
// (formats.AllSeries), and those of the series-only runs (no requests)
// among others on the same clock whose samples fall within the run's span
// [from, to]. It returns the points and one summary per metric and source
// run.
func seriesFor(run *formats.Run, others []*formats.Run, clock string, from, to int64) ([]formats.SeriesPoint, []SeriesSummary) {
	var pts []formats.SeriesPoint
	var sums []SeriesSummary
	add := func(src string, in []formats.SeriesPoint, clip bool) {
		idx := map[string]int{}
		sets := map[string]map[string]bool{}
		for _, p := range in {
			if clip && (p.ClockDomain != clock || p.TimeNs < from-SeriesStaleNs || p.TimeNs > to) {
				continue
			}
			pts = append(pts, p)
			k, ok := idx[p.Metric]
			if !ok {
				k = len(sums)
				idx[p.Metric] = k
				sets[p.Metric] = map[string]bool{}
				role := ""
				if _, ok := waitingMetrics[p.Metric]; ok {
					role = "waiting"
				} else if _, ok := kvCacheMetrics[p.Metric]; ok {
					role = "kv_cache_pct"
				}
				sums = append(sums, SeriesSummary{Metric: formats.SafeText(p.Metric), Unit: formats.SafeText(p.Unit), FromNs: p.TimeNs, ToNs: p.TimeNs, Run: formats.SafeText(src), Role: role})
			}
			s := &sums[k]
			s.Points++
			s.FromNs, s.ToNs = min(s.FromNs, p.TimeNs), max(s.ToNs, p.TimeNs)
			if !sets[p.Metric][p.Labels] {
				sets[p.Metric][p.Labels] = true
				s.LabelSets++
			}
		}
	}
	add(run.RunID, formats.AllSeries(run), false)
	for _, o := range others {
		if o == run || o.RequestCount > 0 {
			continue
		}
		add(o.RunID, formats.AllSeries(o), true)
	}
	// each source's metrics by name, sources in order
	for i := 0; i < len(sums); {
		j := i
		for j < len(sums) && sums[j].Run == sums[i].Run {
			j++
		}
		grp := sums[i:j]
		sort.SliceStable(grp, func(a, b int) bool { return strings.Compare(grp[a].Metric, grp[b].Metric) < 0 })
		i = j
	}
	return pts, sums
}
