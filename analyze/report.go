package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tokentrace/tokentrace/analyze/stats"
)

// ReportSchemaVersion is the version of the JSON report contract
// (report.json, `report --format json`). It changes when a key is removed,
// renamed or changes meaning, or when a release adds a family of keys
// (analyze/REPORT.md lists each version); readers accept keys they do not
// know. 2: the schedule-relative metrics (dispatch_delay_ms,
// sched_ttft_ms, sched_e2e_ms), the conventions' latency_from and
// failed_requests choices (a statistic may be +∞: null with "infinite"),
// in_flight's time-weighted percentiles.
const ReportSchemaVersion = 2

// Report is the analysis of one or more runs: the JSON contract documented
// in analyze/REPORT.md. Undefined statistics are null.
type Report struct {
	SchemaVersion int          `json:"schema_version"`
	Runs          []*RunReport `json:"runs"`
	// Pooled is one report over all runs together (with --pool).
	Pooled *RunReport `json:"pooled,omitempty"`
	// ServerJoin is the join of client requests with server-log records
	// and the TTFT decomposition (analyze --server-log; decompose.go).
	ServerJoin *ServerJoin `json:"server_join,omitempty"`
	// Location is the zone the text and Markdown reports show wall-clock
	// times in (--tz); nil: UTC. Not in the JSON (its times are UTC).
	Location *time.Location `json:"-"`
	// Verbose asks the text and Markdown reports for every warning and
	// note in full (--verbose): by default each is one line, grouped by
	// code and cut at a word boundary (docs/OUTPUT.md). Not in the JSON.
	Verbose bool `json:"-"`
}

// RunReport is the analysis of one run under one convention.
type RunReport struct {
	RunID            string         `json:"run_id"`
	Tool             string         `json:"tool"`
	ToolVersion      string         `json:"tool_version"`
	Model            string         `json:"model"`
	Streaming        *bool          `json:"streaming"`
	Convention       ConventionInfo `json:"convention"`
	PercentileMethod string         `json:"percentile_method"`
	Requests         RequestCounts  `json:"requests"`
	Metrics          Metrics        `json:"metrics"`
	OSLSource        map[string]int `json:"osl_source"`
	Throughput       Throughput     `json:"throughput"`
	Goodput          *Goodput       `json:"goodput"`
	E2EByOSL         []Bucket       `json:"e2e_by_osl"`
	E2EOSLFit        *Fit           `json:"e2e_osl_fit"`
	TTFTByISL        []Bucket       `json:"ttft_by_isl"`
	// Cache and TTFTByCache are the prefix cache over the completed
	// requests (absent where no request has a cached count); Sessions and
	// TTFTByTurn the sessions of turns (absent where no session has more
	// than one request). analyze/dimensions.go.
	Cache       *CacheReport    `json:"cache,omitempty"`
	TTFTByCache []CacheBucket   `json:"ttft_by_cache,omitempty"`
	Sessions    *SessionsReport `json:"sessions,omitempty"`
	TTFTByTurn  []TurnBucket    `json:"ttft_by_turn,omitempty"`
	// Energy is the GPUs' energy over the run and per output token
	// (analyze/energy.go); absent without energy or power series.
	Energy *EnergyReport `json:"energy,omitempty"`
	// SpecDecode is speculative decoding over the requests whose response
	// carried the server's counts (analyze/dimensions.go); absent without.
	SpecDecode *SpecDecodeReport   `json:"spec_decode,omitempty"`
	TTFTISLFit *Fit                `json:"ttft_isl_fit"`
	Reported   map[string]Reported `json:"reported"`
	// Errors counts failed and cancelled requests by status, code, type
	// and message, most frequent first.
	Errors []ErrorCount `json:"errors"`
	// ClockDomain is the clock of the run's start times ("unix",
	// "monotonic"; "" without start times) and FirstStartNs its first
	// request's start: the origin of every offset_s below.
	ClockDomain  string `json:"clock_domain"`
	FirstStartNs *int64 `json:"first_start_ns"`
	// Selection says which requests the report covers when --since,
	// --until or --trim chose some (selection.go).
	Selection *SelectionReport `json:"selection,omitempty"`
	// InFlight is the run's load: requests in flight over time (every
	// request of the run, selected or not).
	InFlight *InFlightReport `json:"in_flight,omitempty"`
	// Failures lists the failed, cancelled and empty requests on the
	// clock, grouped into bursts (always, for runs with start times).
	Failures *FailureReport `json:"failures,omitempty"`
	// Slowest lists the slowest completed requests (--top).
	Slowest *SlowestReport `json:"slowest,omitempty"`
	// Windows is the run in fixed time windows (--window).
	Windows *WindowsReport `json:"windows,omitempty"`
	// Interference attributes the ITL tail to other requests' prefills.
	Interference *InterferenceReport `json:"prefill_interference,omitempty"`
	// Series are the server and GPU series beside the run: its own, and
	// those of series-only runs on its clock and within its span.
	Series []SeriesSummary `json:"series,omitempty"`
	// Reproduction compares the tool's reported statistics with their
	// recomputation, when the report's convention is the run's tool's.
	Reproduction *Reproduction `json:"reproduction,omitempty"`
	// BetweenRuns is, in a pooled report, the spread over the pooled runs
	// of each run's own P99 (keys ttft_ms, tpot_ms, itl_ms, e2e_ms): how
	// much the tail moves from one repetition to the next, beside the
	// pooled value.
	BetweenRuns map[string]Spread `json:"between_runs,omitempty"`
	Warnings    []Warning         `json:"warnings"`

	// Headline are the tool's reported metrics the text report shows
	// (convention.Tool.Headline; not in the JSON).
	Headline []string `json:"-"`

	// ConfiguredRateRPS is the run's configured request rate (0: none);
	// Notes are the run's import notes (truncation points). Not in the
	// JSON.
	ConfiguredRateRPS float64  `json:"-"`
	Notes             []string `json:"-"`
}

// Spread is the distribution over runs of one per-run statistic (here
// P99): the runs' values in input order, with their min, median (linear),
// max and sample standard deviation (null for one run).
type Spread struct {
	Runs   []string `json:"runs"`
	P99    []F      `json:"p99"`
	Min    F        `json:"min"`
	Median F        `json:"median"`
	Max    F        `json:"max"`
	Std    F        `json:"std"`
}

func spreadOf(runs []string, v []float64) Spread {
	s := stats.SortedCopy(v)
	out := Spread{Runs: runs, Min: F(s[0]), Max: F(s[len(s)-1]), Median: F(stats.Percentile(s, 0.5, stats.Linear)), Std: F(stats.Std(s, stats.Mean(s), 1))}
	for _, x := range v {
		out.P99 = append(out.P99, F(x))
	}
	return out
}

// ConventionInfo names the convention a report was computed under and lists
// its choices.
type ConventionInfo struct {
	Name    string            `json:"name"`
	Choices map[string]string `json:"choices"`
}

// RequestCounts counts a run's requests by status. Failed counts status
// "error". TPOTUndefined counts completed requests whose TPOT is undefined
// (N ≤ 1 or N unknown). ErrorRate = (failed + cancelled) / total.
type RequestCounts struct {
	Total         int `json:"total"`
	Completed     int `json:"completed"`
	Empty         int `json:"empty"`
	Failed        int `json:"failed"`
	Cancelled     int `json:"cancelled"`
	TPOTUndefined int `json:"tpot_undefined"`
	ErrorRate     F   `json:"error_rate"`
}

// Metrics are the summaries of a run's report metrics (the Table's
// entries with Report set), in the table's order. Times in ms, token
// counts in tokens; ITL is pooled over all gaps of all requests. Its JSON
// is an object keyed by each metric's Key ("ttft_ms", …, "isl_tokens").
type Metrics []MetricSummary

// MetricSummary is one metric's summary in a report.
type MetricSummary struct {
	Metric *Metric
	stats.Summary
}

// Of returns metric x's summary (an empty one, every statistic NaN, when
// the report has none).
func (ms Metrics) Of(x *Metric) stats.Summary {
	for _, s := range ms {
		if s.Metric == x {
			return s.Summary
		}
	}
	return stats.Summarize(nil, nil, stats.Linear, 1)
}

// MarshalJSON writes the summaries as one object keyed by metric Key.
func (ms Metrics) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, s := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, s.Metric.Key)
		b = append(b, ':')
		v, err := s.Summary.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the object MarshalJSON writes, in the table's
// order; keys of metrics not in the Table (a newer tokentrace's) are
// skipped.
func (ms *Metrics) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*ms = (*ms)[:0]
	for _, x := range Table {
		v, ok := raw[x.Key]
		if x.Key == "" || !ok {
			continue
		}
		var s stats.Summary
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("metrics.%s: %w", x.Key, err)
		}
		*ms = append(*ms, MetricSummary{Metric: x, Summary: s})
		delete(raw, x.Key)
	}
	for k := range raw {
		return fmt.Errorf("metrics: unknown metric %q", k)
	}
	return nil
}

// Throughput is measured over DurationS (the convention's duration rule).
// Reported is true when the values are the tool's own (the source has no
// start times to recompute them from).
type Throughput struct {
	DurationS        F    `json:"duration_s"`
	RequestsPerS     F    `json:"requests_per_s"`
	OutputTokensPerS F    `json:"output_tokens_per_s"`
	TotalTokensPerS  F    `json:"total_tokens_per_s"`
	Reported         bool `json:"reported"`
}

// Goodput is the share of all requests that met every SLO constraint at
// once (non-ok requests are never good), and good requests per second over
// the run's duration. TPOTVacuous counts good requests whose TPOT
// constraint was vacuously met (N ≤ 1).
type Goodput struct {
	SLO          string `json:"slo"`
	Good         int    `json:"good"`
	Total        int    `json:"total"`
	Fraction     F      `json:"fraction"`
	RequestsPerS F      `json:"requests_per_s"`
	TPOTVacuous  int    `json:"tpot_vacuous"`
	// BoundsTPOT: the SLO constrains TPOT (the text report then says how
	// many requests met it vacuously). Not in report.json: the slo string
	// says it.
	BoundsTPOT bool `json:"-"`
}

// Bucket is one length bucket [Min, Max) of a conditional distribution;
// Max is null for the open last bucket. For e2e_by_osl the keys are
// osl_min/osl_max, for ttft_by_isl isl_min/isl_max.
type Bucket struct {
	Min  float64
	Max  float64 // +Inf for the last bucket
	N    int
	P50  float64
	P90  float64
	P99  float64
	keyX string // "osl" or "isl"
}

// MarshalJSON writes the bucket with its length-kind keys.
func (b Bucket) MarshalJSON() ([]byte, error) {
	type kv struct {
		k string
		v any
	}
	fields := []kv{
		{b.keyX + "_min", F(b.Min)}, {b.keyX + "_max", F(b.Max)}, {"n", b.N},
		{"p50_ms", F(b.P50)}, {"p90_ms", F(b.P90)}, {"p99_ms", F(b.P99)},
	}
	out := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, f.k)
		out = append(out, ':')
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

// Fit is the least-squares line y ≈ Intercept + Slope·x with its R² over N
// points (E2E in ms against output tokens; TTFT against input tokens).
type Fit struct {
	InterceptMs     F   `json:"intercept_ms"`
	SlopeMsPerToken F   `json:"slope_ms_per_token"`
	R2              F   `json:"r2"`
	N               int `json:"n"`
	// Explains is true when the line is a latency model worth printing:
	// at least FitMinN pairs, R² ≥ FitMinR2, a positive slope and an
	// intercept not below zero by more than 5% of the mean latency; Why
	// says which test failed otherwise. Reports print the line only when
	// it explains the data.
	Explains bool   `json:"explains"`
	Why      string `json:"why,omitempty"`
}

// The tests a length fit must pass to be printed (Fit.Explains).
const (
	FitMinN  = 10
	FitMinR2 = 0.3
)

// Reported is one metric of the tool's own summary: stat → value (numbers,
// or strings where the tool wrote text), plus "unit".
type Reported map[string]any

// ErrorCount is how many requests failed with one ErrorKey.
type ErrorCount struct {
	ErrorKey
	Count int `json:"count"`
}

// Warning is a caveat attached to a report: a statistic resting on too few
// samples, a definition the data forced, an input problem.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Metric  string `json:"metric,omitempty"`
	// Metrics are every metric a data check affects (Metric is the first).
	Metrics []string `json:"metrics,omitempty"`
	// DataCheck marks an entry of the data-check catalogue that found the
	// data wrong or impossible (analyze/TRAPS.md; gate's data_warnings
	// counts them); explanations such as itl_below_tpot are not.
	DataCheck bool `json:"data_check,omitempty"`
	// Routine marks a data check that data_warnings does not count: an
	// explanation, or a routine correction of every file of a tool
	// (convention.Trap.Routine).
	Routine bool `json:"routine,omitempty"`
	// Count is the number of requests (or values) affected, 0 when the
	// warning is about the run; Field the source field the check read.
	Count int64  `json:"count,omitempty"`
	Field string `json:"field,omitempty"`
	// Source is the public record of the trap (issue or PR URLs).
	Source string `json:"source,omitempty"`
}

// F is a float64 that marshals NaN and ±Inf as JSON null.
type F float64

// MarshalJSON implements json.Marshaler.
func (f F) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes: null as NaN (as
// stats.Summary reads its nulls), a number as itself.
func (f *F) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = F(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = F(v)
	return nil
}

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
