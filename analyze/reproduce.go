package analyze

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// ReproTolerance is the relative difference within which a recomputed
// statistic reproduces the tool's (absolute 1e-9 when the tool's is 0).
const ReproTolerance = 1e-6

// Reproduction compares every statistic a tool reported for a run with the
// same statistic recomputed from the tables under the tool's convention.
type Reproduction struct {
	Convention string `json:"convention"`
	Reproduced int    `json:"reproduced"`
	Differs    int    `json:"differs"`
	// NotReproducible counts statistics the tables cannot recompute; each
	// says why.
	NotReproducible int              `json:"not_reproducible"`
	Total           int              `json:"total"`
	Items           []ReproducedStat `json:"items"`
}

// ReproducedStat is one reported statistic and its recomputation.
type ReproducedStat struct {
	Metric     string `json:"metric"`
	Stat       string `json:"stat"`
	Unit       string `json:"unit,omitempty"`
	Reported   F      `json:"reported"`
	Recomputed F      `json:"recomputed"`
	RelDiff    F      `json:"rel_diff"`
	// Status is "reproduced", "differs" or "not_reproducible".
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// reproduce recomputes every statistic the run's tool reported, under c,
// through the tool's mapping of its metrics (tools; nil when tokentrace
// has no mapping for the tool).
func reproduce(c convention.Convention, tools *convention.Set, run *formats.Run, reqs []RequestMetrics, s *samples) *Reproduction {
	tool := tools.Tool(c.Tool)
	mapping := tools.Metrics(c)
	if mapping == nil || len(run.Reported) == 0 {
		return nil
	}
	out := &Reproduction{Convention: c.Name, Items: []ReproducedStat{}}
	for _, st := range run.Reported {
		if st.Value == nil {
			continue // text values (timestamps, error details) are not statistics
		}
		item := ReproducedStat{Metric: st.Metric, Stat: st.Stat, Unit: st.Unit, Reported: F(*st.Value), Recomputed: F(math.NaN()), RelDiff: F(math.NaN())}
		tm, ok := mapping[st.Metric]
		switch {
		case tool.PrefixReason(st.Metric) != "":
			item.Reason = tool.PrefixReason(st.Metric)
		case len(reqs) == 0:
			item.Reason = "summary only: nothing to recompute"
		case !ok:
			item.Reason = "no tokentrace definition of this metric yet"
		case tm.Reason != "":
			item.Reason = tm.Reason
		default:
			v, why := recompute(c, tools.StatsRule(c), tm, st, run, reqs, s)
			item.Recomputed = F(v)
			item.Reason = why
		}
		judge(&item, run, tool)
		switch item.Status {
		case "reproduced":
			out.Reproduced++
		case "differs":
			out.Differs++
		default:
			out.NotReproducible++
		}
		out.Total++
		out.Items = append(out.Items, item)
	}
	sort.SliceStable(out.Items, func(i, j int) bool { return out.Items[i].Metric < out.Items[j].Metric })
	return out
}

// judge sets the item's status from its values: reproduced within
// ReproTolerance, differs (with the tool's known reason where one of its
// Differences applies) or not reproducible.
func judge(item *ReproducedStat, run *formats.Run, tool *convention.Tool) {
	rec, rep := float64(item.Recomputed), float64(item.Reported)
	if math.IsNaN(rec) {
		item.Status = "not_reproducible"
		if item.Reason == "" {
			item.Reason = "not computable from this run's tables"
		}
		return
	}
	diff := math.Abs(rec - rep)
	if rep != 0 {
		item.RelDiff = F(diff / math.Abs(rep))
	} else {
		item.RelDiff = F(diff)
	}
	if rep == 0 && diff <= 1e-9 || rep != 0 && diff <= ReproTolerance*math.Abs(rep) {
		item.Status, item.Reason = "reproduced", ""
		return
	}
	item.Status = "differs"
	if item.Reason != "" || tool == nil {
		return
	}
	for _, d := range tool.Differences {
		if d.Applies(item.Metric, item.Stat, run.ToolVersion, run.Notes) {
			item.Reason = d.Reason
			return
		}
	}
}

// recompute returns the value of the tool's statistic st under c.
func recompute(c convention.Convention, rule convention.StatsRule, tm convention.ReportedMetric, st formats.ReportedStat, run *formats.Run, reqs []RequestMetrics, s *samples) (float64, string) {
	if q, ok := strings.CutPrefix(tm.Quantity, "scalar:"); ok {
		if v, why, ok := reportedDurationScalar(q, run, s); ok {
			return v * tm.Scale, why
		}
		v, why := scalar(c, q, st, reqs, s)
		return v * tm.Scale, why
	}
	xs := s.values[tm.Quantity]
	if rule != convention.StatsNumpy {
		// the tool's own weighted-pmf statistics (guidellm's
		// DistributionSummary: token-weighted percentiles, count, std_dev,
		// mode, variance, total_sum)
		if v, ok := stats.PMFStat(xs, s.weights[tm.Quantity], tm.Scale, st.Stat, rule == convention.StatsPMFMerged); ok {
			return v, "" // already in the tool's unit
		}
	}
	v, why := statOf(xs, s.weights[tm.Quantity], st.Stat, c)
	return v * tm.Scale, why
}

// statOf computes a statistic named the tools' way over xs under c.
func statOf(xs, ws []float64, stat string, c convention.Convention) (float64, string) {
	if len(xs) == 0 {
		return math.NaN(), "no samples under this convention"
	}
	if ws != nil && c.Percentile == convention.PercentileWeightedNearestRank {
		sum := stats.SummarizeWeighted(xs, ws, nil)
		switch stat {
		case "mean", "avg":
			return sum.Mean, ""
		}
	}
	sorted := stats.SortedCopy(xs)
	switch stat {
	case "avg", "mean":
		return stats.Mean(sorted), ""
	case "std", "stddev":
		return stats.Std(sorted, stats.Mean(sorted), c.StdDDOF), ""
	case "min":
		return sorted[0], ""
	case "max":
		return sorted[len(sorted)-1], ""
	case "count":
		return float64(len(sorted)), ""
	case "sum":
		return stats.PairwiseSum(xs), ""
	case "median":
		return stats.Percentile(sorted, 0.5, stats.Method(c.Percentile)), ""
	}
	if p, ok := strings.CutPrefix(stat, "p"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err == nil && v >= 0 && v <= 100 {
			return stats.Percentile(sorted, v/100, stats.Method(c.Percentile)), ""
		}
	}
	return math.NaN(), fmt.Sprintf("statistic %q is not known to tokentrace", stat)
}

// scalar computes a run-level value.
func scalar(c convention.Convention, name string, st formats.ReportedStat, reqs []RequestMetrics, s *samples) (float64, string) {
	var total, counted, failed, errors float64
	codes := map[int64]float64{}
	for i := range reqs {
		m := &reqs[i]
		total++
		if m.Counted {
			counted++
		}
		if m.Status == formats.StatusError || m.Status == formats.StatusCancelled {
			failed++
		}
		if m.Status == formats.StatusError {
			errors++
			if m.HasErrorCode {
				codes[m.ErrorCode]++
			}
		}
	}
	if q, ok := strings.CutPrefix(name, "sum:"); ok {
		if len(s.values[q]) == 0 {
			return 0, ""
		}
		return stats.PairwiseSum(s.values[q]), ""
	}
	dur, _ := duration(c, reqs)
	if c.Duration == convention.DurationNotRecorded {
		dur = math.NaN()
	}
	tp := throughput(c, reqs, dur)
	switch name {
	case "total":
		return total, ""
	case "counted":
		return counted, ""
	case "failed":
		return failed, ""
	case "errors":
		return errors, ""
	case "error_rate_errors":
		return div(errors, total), ""
	case "e2e_count":
		return float64(len(s.values["e2e"])), ""
	case "duration_s":
		return dur, ""
	case "request_throughput":
		return float64(tp.RequestsPerS), ""
	case "output_token_throughput":
		// the convention's N summed over counted requests
		return div(sumOr0(s.values["osl"]), dur), ""
	case "total_token_throughput":
		return div(sumOr0(s.values["osl"])+sumOr0(s.values["isl"]), dur), ""
	case "error_code":
		code, err := strconv.ParseFloat(st.Stat, 64)
		if err != nil {
			return math.NaN(), "error code " + strconv.Quote(st.Stat) + " is not a number"
		}
		return codes[int64(code)], ""
	}
	return math.NaN(), "unknown scalar " + name
}

func sumOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.PairwiseSum(xs)
}

// reportedDurationScalar computes the run-level values a tool derives from
// its own measured duration: the tool's numerator recomputed from the
// tables, divided by the duration the tool reported (Reported metric
// "duration", Stat "value", in seconds; vLLM and SGLang). name is the
// scalar's name after "scalar:":
//
//	reported_duration:counted        requests in the convention's completed set / duration
//	reported_duration:sum:<q>        Σ q over counted requests / duration
//	reported_duration:sum:osl+isl    (Σ osl + Σ isl) / duration
//
// ok is false for other names. It needs the run row, which scalar() does
// not receive: recompute tries it first.
func reportedDurationScalar(name string, run *formats.Run, s *samples) (v float64, why string, ok bool) {
	rest, ok := strings.CutPrefix(name, "reported_duration:")
	if !ok {
		return 0, "", false
	}
	dur := math.NaN()
	if run != nil {
		for _, st := range run.Reported {
			if st.Metric == "duration" && st.Stat == "value" && st.Value != nil {
				dur = *st.Value
			}
		}
	}
	if math.IsNaN(dur) || dur <= 0 {
		return math.NaN(), "the tool reported no positive duration", true
	}
	switch rest {
	case "counted":
		return float64(s.counted) / dur, "", true
	case "sum:osl+isl":
		return (sumOr0(s.values["osl"]) + sumOr0(s.values["isl"])) / dur, "", true
	}
	if q, ok := strings.CutPrefix(rest, "sum:"); ok {
		return sumOr0(s.values[q]) / dur, "", true
	}
	return math.NaN(), "unknown scalar " + name, true
}
