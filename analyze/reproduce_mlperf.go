package analyze

// MLPerf LoadGen's reported metrics (ingest/mlperf): latency distributions
// in ns under one name per quantity, LoadGen's throughputs and counts.
// LoadGen logs hold no per-sample rows, so an imported run has nothing to
// recompute (reproduce says "summary only"); the mapping serves runs whose
// per-sample rows come from elsewhere (a hand-made or trace-derived table with each sample's
// scheduled start, first-token and completion times and n_tokens as
// tool_reported output tokens).

const (
	whyMLPerfClock   = "LoadGen divides by the time from the test's start to the last completion (or to the last query's scheduled or issue time), which per-sample rows do not record"
	whyMLPerfUnit    = "LoadGen's result_token_throughput divides by the mean latency in ns, not s (a unit slip), so it is not a throughput"
	whyMLPerfTarget  = "counts samples over target_latency, which token runs set to 0"
	whyMLPerfQuery   = "MultiStream per-query latencies span several samples; tokentrace's rows are samples"
	whyMLPerfES      = "LoadGen's early-stopping estimate is an order statistic chosen by its confidence rule, not a fixed percentile"
	whyMLPerfVerdict = "a verdict, not a statistic"
)

var mlperfMetrics = map[string]toolMetric{
	"latency_ns":               {quantity: "e2e", scale: 1e6},
	"first_token_latency_ns":   {quantity: "ttft", scale: 1e6},
	"time_per_output_token_ns": {quantity: "tpot", scale: 1e6},
	"query_count":              {quantity: "scalar:total", scale: 1},
	"num_errors":               {quantity: "scalar:errors", scale: 1},

	"completed_samples_per_sec":              {reason: whyMLPerfClock},
	"scheduled_samples_per_sec":              {reason: whyMLPerfClock},
	"samples_per_second":                     {reason: whyMLPerfClock},
	"completed_tokens_per_second":            {reason: whyMLPerfClock},
	"tokens_per_second":                      {reason: whyMLPerfClock},
	"token_throughput_with_loadgen_overhead": {reason: whyMLPerfClock},
	"qps_with_loadgen_overhead":              {reason: whyMLPerfClock},
	"qps_without_loadgen_overhead":           {reason: whyMLPerfClock},
	"tps_without_loadgen_overhead":           {reason: whyMLPerfClock},
	"token_throughput":                       {reason: whyMLPerfUnit},
	"overlatency_query_count":                {reason: whyMLPerfTarget},
	"query_latency_ns":                       {reason: whyMLPerfQuery},
	"early_stopping_latency_ss_ns":           {reason: whyMLPerfES},
	"early_stopping_latency_ms_ns":           {reason: whyMLPerfES},
	"validity":                               {reason: whyMLPerfVerdict},
}

func init() {
	toolMetricMaps["mlperf"] = func(Convention) map[string]toolMetric { return mlperfMetrics }
}
