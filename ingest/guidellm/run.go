package guidellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Notes that state guidellm's definitions (vllm-project/guidellm:
// src/guidellm/benchmark/benchmark.py, class GenerativeTextResponseStats, at
// tag v0.3.0 ad9513fd; src/guidellm/schemas/request_stats.py at tag v0.4.0
// f6175cdd, the change coming with commit 31e26308; weights and percentiles
// in objects/statistics.py at v0.3.0 and schemas/statistics.py at v0.4.0).
const (
	noteNoEvents = "guidellm keeps only the first and last token times per request (from v0.4 also its token-iteration count, imported as token_message_count): no events, no second-token time; inter-token gaps are not invented (guidellm spreads iterations evenly itself, for its rate metrics only)"
	noteCounts   = "output_tokens and prompt_tokens are guidellm's counts (source tool_reported): the server's usage when it sent one, else the requested count; the file does not say which"
	noteWeights  = "guidellm weights TPOT by N and ITL by N − 1 in its summaries (token-weighted mean and nearest-rank percentiles)"
	note03       = "convention guidellm@0.3: v0.2–v0.3 record shape (generative_text_response): TPOT = (t_last − t_first)/N excludes TTFT (the docstring says otherwise), ITL = (t_last − t_first)/(N − 1); N = 0 requests are left out of TTFT/TPOT and N ≤ 1 out of ITL"
	note04       = "convention guidellm@0.4: v0.4+ record shape (generative_request_stats, info.timings): TPOT = (t_last − t_request)/N includes TTFT, ITL = (t_last − t_first)/(N − 1); every request in the window enters the summaries, a missing value as 0"
	note03Failed = "incomplete/errored v0.3 records: output_tokens is guidellm's count for a failed request (the server's usage, else the requested count: v0.3.0 aggregator.py _compile_tokens_count(errored=True)), kept in reported_output_tokens only"
)

// percentileNames renames guidellm's percentile keys (p001 is the 0.1th,
// p999 the 99.9th percentile).
var percentileNames = map[string]string{
	"p001": "p0.1", "p01": "p1", "p05": "p5", "p10": "p10", "p25": "p25", "p50": "p50",
	"p75": "p75", "p90": "p90", "p95": "p95", "p99": "p99", "p999": "p99.9",
}

// summaryStats are a DistributionSummary's scalar statistics, in order.
var summaryStats = []string{"mean", "median", "mode", "variance", "std_dev", "min", "max", "count", "total_sum"}

var statusOrder = []string{"successful", "incomplete", "errored", "total"}

// run builds benchmark b's Run row; warnings are the remarks also sent to
// opt.Warn.
func (d *decoder) run(b *benchmark, sources []formats.SourceFile) (formats.Run, []string) {
	run := formats.Run{
		RunID:             b.label,
		Tool:              Name,
		ToolVersion:       d.version,
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
		SourceFiles:       sources,
		RequestCount:      b.emitted,
	}
	e := entryMap(b.entries)
	var notes, warnings []string
	warn := func(s string) {
		notes = append(notes, s)
		warnings = append(warnings, s)
	}
	shape := b.shape
	if shape == 0 {
		switch {
		case e["config"] != nil || e["scheduler_metrics"] != nil || d.metadata != nil:
			shape = 4
		case e["args"] != nil || e["run_stats"] != nil || e["worker"] != nil:
			shape = 3
		}
	}
	switch shape {
	case 3:
		run.Convention = Convention03
		notes = append(notes, note03)
	case 4:
		run.Convention = Convention04
		notes = append(notes, note04)
	default:
		warn("neither the v0.2–v0.3 nor the v0.4+ shape recognized: convention unknown")
	}
	if len(b.shapes) > 1 {
		warn(fmt.Sprintf("the benchmark mixes v0.3 and v0.4+ request records (%d and %d)", b.shapes[3], b.shapes[4]))
	}
	if d.version != "" {
		notes = append(notes, "guidellm "+d.version+" (metadata.guidellm_version)")
	} else {
		notes = append(notes, "guidellm version not recorded (v0.2–v0.4 reports have no metadata)")
	}
	d.runConfig(&run, e, shape)
	if run.Streaming == nil && b.rs.multiIter > 0 {
		// v0.4+ records more than one token iteration only when streaming
		run.Streaming = ingest.Ptr(true)
	}
	if b.emitted > 0 {
		run.ClockDomain = formats.ClockUnix
	}

	var cfgNotes []string
	run.ConfigJSON, cfgNotes = d.configJSON(b)
	notes = append(notes, cfgNotes...)

	rep, repNotes := reportedStats(b, shape, filepath.Base(d.file))
	run.Reported = rep
	notes = append(notes, repNotes...)

	if len(d.topUnknown) > 0 {
		s := "unknown top-level keys ignored: " + strings.Join(d.topUnknown, ", ")
		if b == d.runs[0] {
			warn(s) // once per file
		} else {
			notes = append(notes, s)
		}
	}
	var unknownB []string
	for _, en := range b.entries {
		if !knownBenchmark[en.Key] {
			unknownB = append(unknownB, en.Key)
		}
	}
	if len(unknownB) > 0 {
		warn("unknown benchmark keys kept in config_json only: " + strings.Join(unknownB, ", "))
	}
	notes = append(notes, d.requestNotes(b, e, shape, warn)...)
	if d.cut != "" {
		last := d.runs[len(d.runs)-1]
		if last == b {
			run.Truncated = true
		}
		notes = append(notes, d.cut)
	}
	run.Notes = notes
	if ch := b.rs.hiddenCheck(); ch != nil {
		run.Checks = append(run.Checks, *ch)
	}
	if ch := b.rs.streamErrorCheck(); ch != nil {
		run.Checks = append(run.Checks, *ch)
	}
	run.Checks = append(run.Checks, b.vals.Checks()...)
	b.vals.Warn(func(s string) { warnings = append(warnings, s) }, "")
	return run, warnings
}

func entryMap(entries []ingest.Entry) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(entries))
	for _, e := range entries {
		m[e.Key] = e.Value
	}
	return m
}

// runConfig fills the Run's model, endpoint, tokenizer and load from the
// benchmark's configuration (v0.3: worker, request_loader, args.strategy;
// v0.4+: config.backend, config.strategy, the report's args).
func (d *decoder) runConfig(run *formats.Run, e map[string]json.RawMessage, shape int) {
	top := objOf(d.args)
	var strategy obj
	if shape == 3 || e["worker"] != nil {
		worker := objOf(e["worker"])
		run.Model = worker.str("backend_model")
		run.Endpoint = worker.str("backend_target")
		run.Tokenizer = objOf(e["request_loader"]).str("processor")
		strategy = objOf(objOf(e["args"])["strategy"])
		run.Streaming = ingest.Ptr(true) // v0.3 openai_http always sets stream: True
	} else {
		cfg := objOf(e["config"])
		backend := objOf(cfg["backend"])
		run.Model = firstNonEmpty(backend.str("model"), top.str("model"))
		run.Endpoint = firstNonEmpty(backend.str("target"), top.str("target"))
		run.Tokenizer = top.str("processor")
		strategy = objOf(cfg["strategy"])
	}
	inf := math.Inf(1)
	switch strategy.str("type_") {
	case "synchronous":
		run.LoadMode, run.Concurrency = "concurrency", ingest.Ptr(1.0)
	case "concurrent":
		run.LoadMode = "concurrency"
		if v, _ := strategy.num("streams"); v != nil {
			run.Concurrency = v
		}
	case "throughput":
		run.LoadMode, run.RequestRateRPS = "request_rate", &inf
		if v, _ := strategy.num("max_concurrency"); v != nil {
			run.Concurrency = v
		}
	case "constant", "poisson":
		run.LoadMode = "request_rate"
		if v, _ := strategy.num("rate"); v != nil {
			run.RequestRateRPS = v
		}
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func objOf(raw json.RawMessage) obj {
	var o obj
	if len(raw) == 0 || json.Unmarshal(raw, &o) != nil {
		return obj{}
	}
	return o
}

// configJSON is the benchmark's configuration echo: its keys other than
// metrics and requests, with the report's metadata and args (or config)
// under "report", redacted.
func (d *decoder) configJSON(b *benchmark) (string, []string) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	add := func(k string, v json.RawMessage) {
		if n > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(v)
		n++
	}
	if d.metadata != nil || d.args != nil {
		var rb bytes.Buffer
		rb.WriteByte('{')
		if d.metadata != nil {
			rb.WriteString(`"metadata":`)
			rb.Write(d.metadata)
		}
		if d.args != nil {
			if d.metadata != nil {
				rb.WriteByte(',')
			}
			rb.WriteString(`"args":`)
			rb.Write(d.args)
		}
		rb.WriteByte('}')
		add("report", rb.Bytes())
	}
	for _, e := range b.entries {
		add(e.Key, e.Value)
	}
	buf.WriteByte('}')
	out, paths := ingest.RedactJSON(buf.Bytes(), "benchmark")
	var notes []string
	if len(paths) > 0 {
		notes = append(notes, "redacted from config_json: "+strings.Join(paths, ", "))
	}
	return out, notes
}

// reportedStats flattens the benchmark's metrics (and duration) into Reported.
func reportedStats(b *benchmark, shape int, file string) ([]formats.ReportedStat, []string) {
	var out []formats.ReportedStat
	var notes []string
	if b.metrics != nil {
		out, notes = flatten(b.metrics, "")
	}
	e := entryMap(b.entries)
	if shape == 3 || e["request_totals"] != nil {
		if totals := objOf(e["request_totals"]); len(totals) > 0 {
			out = append(out, breakdown("request_totals", totals)...)
		}
	}
	for _, k := range []string{"duration", "warmup_duration", "cooldown_duration"} {
		if v, err := number(k, e[k]); err == nil && v != nil {
			out = append(out, formats.ReportedStat{Metric: k, Stat: "value", Unit: "s", Value: v})
		}
	}
	for i := range out {
		out[i].File = file
	}
	return out, notes
}

// flatten walks a metrics object: StatusDistributionSummary objects become
// "<path>.<status>" metrics, StatusBreakdown objects of numbers
// (request_totals) "<path>.<status>" values, other numbers "<path>" values.
func flatten(raw json.RawMessage, path string) ([]formats.ReportedStat, []string) {
	entries, err := ingest.ObjectEntries(raw)
	if err != nil {
		return nil, []string{fmt.Sprintf("metrics%s: not an object, not imported", dotted(path))}
	}
	var out []formats.ReportedStat
	var notes []string
	for _, e := range entries {
		p := e.Key
		if path != "" {
			p = path + "." + e.Key
		}
		v := bytes.TrimSpace(e.Value)
		switch {
		case len(v) == 0 || string(v) == "null":
		case v[0] == '{':
			if isStatusSummary(v) {
				out = append(out, statusSummary(p, v)...)
			} else if isBreakdown(v) {
				out = append(out, breakdown(p, objOf(v))...)
			} else {
				sub, n := flatten(v, p)
				out = append(out, sub...)
				notes = append(notes, n...)
			}
		default:
			if f, err := number(p, v); err == nil && f != nil {
				out = append(out, formats.ReportedStat{Metric: p, Stat: "value", Unit: unitOf(p), Value: f})
			}
		}
	}
	return out, notes
}

func dotted(p string) string {
	if p == "" {
		return ""
	}
	return "." + p
}

// isStatusSummary reports whether v is {successful, incomplete, errored,
// total} of DistributionSummary objects.
func isStatusSummary(v []byte) bool {
	o := objOf(v)
	found := false
	for _, s := range statusOrder {
		if sv, ok := o[s]; ok {
			t := bytes.TrimSpace(sv)
			if len(t) > 0 && t[0] == '{' {
				so := objOf(t)
				if _, ok := so["mean"]; !ok {
					return false
				}
				found = true
			}
		}
	}
	return found
}

// isBreakdown reports whether v is a StatusBreakdown of numbers.
func isBreakdown(v []byte) bool {
	o := objOf(v)
	if len(o) == 0 {
		return false
	}
	for k, x := range o {
		if _, ok := statuses[k]; !ok && k != "total" {
			return false
		}
		if f, err := number(k, x); err != nil || f == nil {
			if strings.TrimSpace(string(x)) != "null" {
				return false
			}
		}
	}
	return true
}

func breakdown(metric string, o obj) []formats.ReportedStat {
	var out []formats.ReportedStat
	for _, s := range statusOrder {
		if f, err := o.num(s); err == nil && f != nil {
			out = append(out, formats.ReportedStat{Metric: metric + "." + s, Stat: "value", Unit: "requests", Value: f})
		}
	}
	return out
}

// statusSummary reads one StatusDistributionSummary.
func statusSummary(metric string, v []byte) []formats.ReportedStat {
	o := objOf(v)
	unit := unitOf(metric)
	var out []formats.ReportedStat
	for _, s := range statusOrder {
		so := objOf(o[s])
		if len(so) == 0 {
			continue
		}
		m := metric + "." + s
		add := func(stat string, raw json.RawMessage) {
			rs := formats.ReportedStat{Metric: m, Stat: stat, Unit: unit}
			if f, err := number(stat, raw); err == nil && f != nil {
				rs.Value = f
			} else if t := ingest.RawText(raw); t != "" {
				rs.Text = t
			} else {
				return
			}
			switch {
			case stat == "count":
				rs.Unit = ""
			case stat == "variance" && unit != "":
				rs.Unit = unit + "^2"
			}
			out = append(out, rs)
		}
		for _, st := range summaryStats {
			if raw, ok := so[st]; ok {
				add(st, raw)
			}
		}
		pct := objOf(so["percentiles"])
		keys := make([]string, 0, len(pct))
		for k := range pct {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return pctRank(keys[i]) < pctRank(keys[j]) })
		for _, k := range keys {
			name, ok := percentileNames[k]
			if !ok {
				name = k
			}
			add(name, pct[k])
		}
	}
	return out
}

// pctRank orders percentile keys by their value (p001 < p01 < … < p999).
func pctRank(k string) float64 {
	name, ok := percentileNames[k]
	if !ok {
		name = k
	}
	f, err := strconv.ParseFloat(strings.TrimPrefix(name, "p"), 64)
	if err != nil {
		return math.Inf(1)
	}
	return f
}

// unitOf names a metric's unit from its name.
func unitOf(metric string) string {
	base := metric
	if i := strings.LastIndexByte(base, '.'); i >= 0 && statusIndex(base[i+1:]) >= 0 {
		base = base[:i]
	}
	last := base
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		last = base[i+1:]
	}
	switch {
	case strings.HasSuffix(last, "_ms"):
		return "ms"
	case last == "request_latency" || last == "duration" || strings.HasSuffix(last, "_seconds"):
		return "s"
	case last == "requests_per_second":
		return "requests/s"
	case strings.Contains(last, "tokens_per_second") || strings.HasPrefix(base, "text.tokens") && strings.HasSuffix(last, "_per_second"):
		return "tokens/s"
	case strings.HasSuffix(last, "_per_second"):
		return "1/s"
	case strings.HasSuffix(last, "token_count") || strings.HasPrefix(base, "text.tokens."):
		return "tokens"
	case last == "request_concurrency" || strings.HasSuffix(last, "_concurrency"):
		return "requests"
	}
	return ""
}

func statusIndex(s string) int {
	for i, x := range statusOrder {
		if x == s {
			return i
		}
	}
	return -1
}

// requestNotes describes the records: counts, sampling, window, quirks.
func (d *decoder) requestNotes(b *benchmark, e map[string]json.RawMessage, shape int, warn func(string)) []string {
	var notes []string
	rs := &b.rs
	notes = append(notes, fmt.Sprintf("request records: %d (%d ok, %d empty, %d cancelled, %d error)", b.emitted,
		rs.byStatus[formats.StatusOK], rs.byStatus[formats.StatusEmpty], rs.byStatus[formats.StatusCancelled], rs.byStatus[formats.StatusError]))
	notes = append(notes, noteNoEvents, noteCounts, noteWeights)
	// Sampling: the lists against the totals the summaries cover.
	totals := objOf(e["request_totals"])
	if len(totals) == 0 {
		totals = objOf(objOf(b.metrics)["request_totals"])
	}
	var parts []string
	sampled := false
	for _, s := range []string{"successful", "incomplete", "errored"} {
		all, err := totals.num(s)
		if err != nil || all == nil {
			continue
		}
		kept := b.kept[s]
		parts = append(parts, fmt.Sprintf("%d of %d %s", kept, int64(*all), s))
		if float64(kept) < *all {
			sampled = true
		}
	}
	if sampled && b.complete {
		how := "--sample-requests"
		if v, _ := number("sample_requests", objOf(e["config"])["sample_requests"]); v != nil {
			how = "--sample-requests " + strconv.FormatFloat(*v, 'g', -1, 64)
		}
		if strings.TrimSpace(string(e["request_samples"])) == "null" {
			how = "request_samples null: removed after the run, not by --sample-requests"
		}
		warn(fmt.Sprintf("sampled: %s requests kept (%s); the summaries cover them all, so they cannot be recomputed exactly from these records", strings.Join(parts, ", "), how))
	}
	if shape == 4 {
		if n := d.outsideWindow(b, e); n > 0 {
			warn(fmt.Sprintf("request records outside the measurement window [measure_start_time, measure_end_time]: %d; guidellm's summaries leave them out (warm-up/cool-down), tokentrace keeps them", n))
		}
	}
	if rs.empty > 0 {
		s := fmt.Sprintf("successful records without a generated token (status empty): %d", rs.empty)
		if shape == 4 {
			s += "; guidellm v0.4+ still counts them in its successful summaries, with TTFT 0"
		}
		notes = append(notes, s)
	}
	if rs.placeholder > 0 {
		notes = append(notes, fmt.Sprintf("first/last_token_time −1.0 (v0.3's placeholder for no token) read as missing: %d values", rs.placeholder))
	}
	if rs.failedCounts > 0 && shape == 3 {
		notes = append(notes, note03Failed)
	}
	if rs.noStart > 0 {
		notes = append(notes, fmt.Sprintf("records without a start time (start_ns null, offsets null): %d", rs.noStart))
	}
	if rs.scheduled > 0 {
		notes = append(notes, fmt.Sprintf("scheduled_start_ns = targeted_start (the %s strategy's arrival time) on %d records", b.strategy(), rs.scheduled))
	}
	if rs.notSchedule > 0 {
		st := b.strategy()
		if st == "" {
			st = "unrecorded"
		}
		notes = append(notes, fmt.Sprintf("targeted_start not imported as intended starts on %d records: the %s strategy has no schedule of its own (guidellm's request_dispatch_delay is null for it, PR #1053; measured from it, a synchronous run's delay grows to minutes, guidellm#1048)", rs.notSchedule, st))
	}
	if rs.startResolve > 0 {
		notes = append(notes, fmt.Sprintf("records without info.timings.request_start, timed from resolve_start: %d", rs.startResolve))
	}
	if rs.endResolve > 0 {
		notes = append(notes, fmt.Sprintf("records without info.timings.request_end, ended at resolve_end: %d", rs.endResolve))
	}
	if rs.chunkCount > 0 {
		notes = append(notes, fmt.Sprintf("records without usage whose output_tokens = token_iterations (v0.6+ fallback, one token per iteration assumed): %d, source chunk_count", rs.chunkCount))
	}
	if rs.ttfo > 0 {
		notes = append(notes, fmt.Sprintf("records whose first content time is time_to_first_output_token_ms (v0.7+: the first token may be reasoning): %d", rs.ttfo))
	} else if shape == 4 && versionAtLeast(d.version, 0, 7) {
		notes = append(notes, "guidellm v0.7+ times reasoning as the first token: first_content_offset_ns left null where time_to_first_output_token_ms is missing")
	}
	if len(rs.unknown) > 0 {
		warn("unknown request-record keys ignored: " + countList(rs.unknown))
	}
	if len(rs.unknownLists) > 0 {
		warn("unknown request lists ignored: " + strings.Join(rs.unknownLists, ", "))
	}
	return notes
}

// outsideWindow counts v0.4+ records that guidellm's get_within_range
// leaves out: ended before measure_start_time, or started after
// measure_end_time.
func (d *decoder) outsideWindow(b *benchmark, e map[string]json.RawMessage) int {
	sm := objOf(e["scheduler_metrics"])
	ms, err1 := sm.num("measure_start_time")
	me, err2 := sm.num("measure_end_time")
	if err1 != nil || err2 != nil || ms == nil || me == nil {
		return 0
	}
	n := 0
	for _, s := range b.rs.spans {
		if s.end == nil {
			continue
		}
		switch {
		case *s.end < *ms:
			n++
		case s.start != nil && *s.start > *me:
			n++
		case s.start == nil && *s.end > *me:
			n++
		}
	}
	return n
}
