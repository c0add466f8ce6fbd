package mlperf

import (
	"regexp"
	"strconv"
	"strings"
)

// name is where a LoadGen statistic lands in Run.Reported.
type name struct {
	metric, stat, unit string
	isText             bool // a verdict or message, not a number
}

// Reported metric names (see the package documentation).
const (
	mLatency   = "latency_ns"
	mQueryLat  = "query_latency_ns"
	mFirstTok  = "first_token_latency_ns"
	mTPOT      = "time_per_output_token_ns"
	unitNs     = "ns"
	unitSPS    = "samples/s"
	unitTPS    = "tokens/s"
	unitQPS    = "queries/s"
	unitCounts = "queries"
)

// pctStat names a LoadGen percentile ("99.90", "90") as a stat: "p99.9",
// "p90".
func pctStat(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "p" + s
	}
	return "p" + strconv.FormatFloat(f, 'f', -1, 64)
}

// Summary labels (loadgen/results.cc PerformanceSummary::LogSummary).
var (
	sumMinMax    = regexp.MustCompile(`^(Min|Max|Mean) (latency|First Token latency|Time to Output Token|Time per Output Token) \(ns\)$`)
	sumPct       = regexp.MustCompile(`^(\d+(?:\.\d+)?) percentile (latency|first token latency|time to output token|time per output token) \(ns\)$`)
	sumTargetPct = regexp.MustCompile(`^(\d+)th (percentile latency|first token percentile latency) \(ns\)$`)
)

// summaryValues are the result and additional-stats labels with fixed
// names.
var summaryValues = map[string]name{
	"Completed samples per second":      {metric: "completed_samples_per_sec", stat: "value", unit: unitSPS},
	"Scheduled samples per second":      {metric: "scheduled_samples_per_sec", stat: "value", unit: unitSPS},
	"Samples per second":                {metric: "samples_per_second", stat: "value", unit: unitSPS},
	"Tokens per second":                 {metric: "tokens_per_second", stat: "value", unit: unitTPS},
	"Completed tokens per second":       {metric: "completed_tokens_per_second", stat: "value", unit: unitTPS},
	"QPS w/ loadgen overhead":           {metric: "qps_with_loadgen_overhead", stat: "value", unit: unitQPS},
	"QPS w/o loadgen overhead":          {metric: "qps_without_loadgen_overhead", stat: "value", unit: unitQPS},
	"TPS w/ loadgen overhead":           {metric: "token_throughput_with_loadgen_overhead", stat: "value", unit: unitTPS},
	"TPS w/o loadgen overhead":          {metric: "tps_without_loadgen_overhead", stat: "value", unit: unitTPS},
	"Result is":                         {metric: "validity", stat: "value", isText: true},
	"Performance constraints satisfied": {metric: "perf_constraints_met", stat: "value", isText: true},
	"Min duration satisfied":            {metric: "min_duration_met", stat: "value", isText: true},
	"Min queries satisfied":             {metric: "min_queries_met", stat: "value", isText: true},
	"Early stopping satisfied":          {metric: "early_stopping_met", stat: "value", isText: true},
}

// earlyStoppingBlocks are the summary's block headers and their metrics.
var earlyStoppingBlocks = map[string]string{
	"Early Stopping Result:":      "early_stopping_result",
	"TTFT Early Stopping Result:": "early_stopping_ttft_result",
	"TPOT Early Stopping Result:": "early_stopping_tpot_result",
	"Recommendations:":            "invalid_reason",
}

// summaryLabel maps a summary label to its Reported name; perQuery is true
// after MultiStream's "Per-query latency:" line. old is true for the
// pre-rename "Time to Output Token" min/max/mean labels.
func summaryLabel(label string, perQuery bool, scenario string) (n name, ok, old bool) {
	if v, ok := summaryValues[label]; ok {
		return v, true, false
	}
	if m := sumMinMax.FindStringSubmatch(label); m != nil {
		stat := strings.ToLower(m[1])
		switch m[2] {
		case "latency":
			metric := mLatency
			if perQuery {
				metric = mQueryLat
			}
			return name{metric: metric, stat: stat, unit: unitNs}, true, false
		case "First Token latency":
			return name{metric: mFirstTok, stat: stat, unit: unitNs}, true, false
		default:
			return name{metric: mTPOT, stat: stat, unit: unitNs}, true, m[2] == "Time to Output Token"
		}
	}
	if m := sumPct.FindStringSubmatch(label); m != nil {
		stat := pctStat(m[1])
		switch m[2] {
		case "latency":
			metric := mLatency
			if perQuery {
				metric = mQueryLat
			}
			return name{metric: metric, stat: stat, unit: unitNs}, true, false
		case "first token latency":
			return name{metric: mFirstTok, stat: stat, unit: unitNs}, true, false
		default:
			return name{metric: mTPOT, stat: stat, unit: unitNs}, true, false
		}
	}
	if m := sumTargetPct.FindStringSubmatch(label); m != nil {
		metric := mLatency
		switch {
		case m[2] == "first token percentile latency":
			metric = mFirstTok
		case scenario == "MultiStream":
			metric = mQueryLat
		}
		return name{metric: metric, stat: pctStat(m[1]), unit: unitNs}, true, false
	}
	return name{}, false, false
}

// genericName makes a Reported metric name of an unknown label:
// lowercase, runs of other characters as "_", "(ns)" as a unit.
func genericName(label string) name {
	unit := ""
	l := label
	if s, ok := strings.CutSuffix(l, "(ns)"); ok {
		l, unit = s, unitNs
	}
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(strings.TrimSpace(l)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	m := strings.TrimSuffix(b.String(), "_")
	if unit == unitNs {
		m += "_ns"
	}
	return name{metric: m, stat: "value", unit: unit}
}

// Detail-log result keys (loadgen/results.cc PerformanceSummary::LogDetail).
var (
	detMinMax   = regexp.MustCompile(`^result_(first_token_)?(min|max|mean)_(query_)?latency_ns$`)
	detPct      = regexp.MustCompile(`^result_(first_token_)?(\d+(?:\.\d+)?)_percentile_(per_query_)?latency_ns$`)
	detTPOTPct  = regexp.MustCompile(`^result_time_(?:per|to)_output_token_(\d+(?:\.\d+)?)_percentile(?:_ns)?$`)
	detTPOTStat = regexp.MustCompile(`^result_time_(?:per|to)_output_token_(min|max|mean)(?:_ns)?$`)
)

// detailValues are the detail results with fixed names.
var detailValues = map[string]name{
	"result_completed_samples_per_sec":              {metric: "completed_samples_per_sec", stat: "value", unit: unitSPS},
	"result_scheduled_samples_per_sec":              {metric: "scheduled_samples_per_sec", stat: "value", unit: unitSPS},
	"result_samples_per_second":                     {metric: "samples_per_second", stat: "value", unit: unitSPS},
	"result_tokens_per_second":                      {metric: "tokens_per_second", stat: "value", unit: unitTPS},
	"result_completed_tokens_per_second":            {metric: "completed_tokens_per_second", stat: "value", unit: unitTPS},
	"result_token_throughput":                       {metric: "token_throughput", stat: "value", unit: unitTPS},
	"result_token_throughput_with_loadgen_overhead": {metric: "token_throughput_with_loadgen_overhead", stat: "value", unit: unitTPS},
	"result_qps_with_loadgen_overhead":              {metric: "qps_with_loadgen_overhead", stat: "value", unit: unitQPS},
	"result_qps_without_loadgen_overhead":           {metric: "qps_without_loadgen_overhead", stat: "value", unit: unitQPS},
	"result_query_count":                            {metric: "query_count", stat: "value", unit: unitCounts},
	"result_overlatency_query_count":                {metric: "overlatency_query_count", stat: "value", unit: unitCounts},
	"early_stopping_latency_ss":                     {metric: "early_stopping_latency_ss_ns", stat: "value", unit: unitNs},
	"early_stopping_latency_ms":                     {metric: "early_stopping_latency_ms_ns", stat: "value", unit: unitNs},
	"num_errors":                                    {metric: "num_errors", stat: "value"},
	"result_validity":                               {metric: "validity", stat: "value", isText: true},
	"result_perf_constraints_met":                   {metric: "perf_constraints_met", stat: "value", isText: true},
	"result_min_duration_met":                       {metric: "min_duration_met", stat: "value", isText: true},
	"result_min_queries_met":                        {metric: "min_queries_met", stat: "value", isText: true},
	"result_invalid_reason":                         {metric: "invalid_reason", stat: "value", isText: true},
	"early_stopping_met":                            {metric: "early_stopping_met", stat: "value", isText: true},
	"early_stopping_result":                         {metric: "early_stopping_result", stat: "value", isText: true},
	"early_stopping_ttft_result":                    {metric: "early_stopping_ttft_result", stat: "value", isText: true},
	"early_stopping_tpot_result":                    {metric: "early_stopping_tpot_result", stat: "value", isText: true},
}

// detailKey maps a detail key to its Reported name: ok is false for keys
// that are not results. A result_* key not known here gets a generic name
// (generic true).
func detailKey(key string) (n name, ok, generic bool) {
	if v, ok := detailValues[key]; ok {
		return v, true, false
	}
	if m := detMinMax.FindStringSubmatch(key); m != nil {
		metric := mLatency
		switch {
		case m[1] != "":
			metric = mFirstTok
		case m[3] != "":
			metric = mQueryLat
		}
		return name{metric: metric, stat: m[2], unit: unitNs}, true, false
	}
	if m := detPct.FindStringSubmatch(key); m != nil {
		metric := mLatency
		switch {
		case m[1] != "":
			metric = mFirstTok
		case m[3] != "":
			metric = mQueryLat
		}
		return name{metric: metric, stat: pctStat(m[2]), unit: unitNs}, true, false
	}
	if m := detTPOTPct.FindStringSubmatch(key); m != nil {
		return name{metric: mTPOT, stat: pctStat(m[1]), unit: unitNs}, true, false
	}
	if m := detTPOTStat.FindStringSubmatch(key); m != nil {
		return name{metric: mTPOT, stat: m[1], unit: unitNs}, true, false
	}
	if rest, ok := strings.CutPrefix(key, "result_"); ok {
		unit := ""
		if strings.HasSuffix(rest, "_ns") {
			unit = unitNs
		}
		return name{metric: rest, stat: "value", unit: unit}, true, true
	}
	return name{}, false, false
}

// knownSettings are the detail log's non-result keys (settings, versions,
// logger statistics, messages).
var knownSettingPrefixes = []string{"requested_", "effective_", "loadgen_", "qsl_", "generated_", "logger_", "power_"}

var knownSettings = map[string]bool{
	"test_datetime": true, "sut_name": true, "get_sut_name_duration_ns": true, "loaded_qsl_set": true,
	"generic_message": true, "warning_generic_message": true, "error_generic_message": true,
	"error_runtime": true, "error_invalid_config": true, "error_invalid_test_settings": true,
	"error_flush": true, "error_loadgen": true, "error_uncaught_exception": true,
}

func knownSetting(key string) bool {
	if knownSettings[key] {
		return true
	}
	for _, p := range knownSettingPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// omittedSettings are left out of ConfigJSON: long and not about
// performance.
var omittedSettings = map[string]bool{"loaded_qsl_set": true, "loadgen_file_sha1": true, "loadgen_git_log_message": true}
