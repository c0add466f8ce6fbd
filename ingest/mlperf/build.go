package mlperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// value is one statistic as read from one file.
type value struct {
	name
	v    *float64
	text string
	raw  string // the number as written
	file string
	line int
}

// setting is one configuration entry, in file order.
type setting struct {
	key string
	raw json.RawMessage
}

// runBuilder collects what the files of one run say.
type runBuilder struct {
	label string
	opt   ingest.Options
	in    *ingest.Input // the input being imported

	summary  []value
	detail   []value
	sources  []formats.SourceFile
	params   []setting // summary: Test Parameters Used
	settings []setting // detail: settings and identification

	scenario, mode, sut, version string
	targetQPS                    *float64
	ttftLimit, tpotLimit         *float64
	model, modelFrom             string

	notes, warnings []string
	truncated       bool
	oldLabel        bool
	unknown         []string
	messages        []string
}

func (r *runBuilder) warn(s string) {
	r.notes = append(r.notes, s)
	r.warnings = append(r.warnings, s)
}

// readLines returns the lines of the file at path (without line ends),
// read through r.in when path is its own, and whether its last line lacked
// its newline (then it is dropped as possibly cut). A line is one value
// for ingest.Options.MaxValue.
func (r *runBuilder) readLines(path, role string) (formats.SourceFile, []string, bool, error) {
	in := r.in
	if path != in.Path {
		var err error
		if in, err = ingest.Open(path, r.opt); err != nil {
			return formats.SourceFile{}, nil, false, err
		}
		defer in.Close()
	}
	var lines []string
	cut := false
	br := in.Reader()
	for {
		line, complete, err := ingest.ReadLine(br, in.MaxValue())
		if err == io.EOF {
			break
		}
		if err != nil {
			return formats.SourceFile{}, nil, false, &ingest.FormatError{File: path, Where: fmt.Sprintf("line %d", len(lines)+1), Msg: "unreadable line", Err: err}
		}
		if !complete {
			cut = true
			break
		}
		lines = append(lines, strings.TrimRight(string(line), "\r"))
	}
	src, err := in.SourceFile(role)
	return src, lines, cut, err
}

var rule = regexp.MustCompile(`^=+$`)

// readSummary parses mlperf_log_summary.txt.
func (r *runBuilder) readSummary(path string) error {
	src, lines, cut, err := r.readLines(path, "summary")
	if err != nil {
		return err
	}
	r.sources = append(r.sources, src)
	file := filepath.Base(path)
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	if first+1 >= len(lines) || !rule.MatchString(strings.TrimSpace(lines[first])) || strings.TrimSpace(lines[first+1]) != "MLPerf Results Summary" {
		if cut && len(lines) <= first+1 {
			return ingest.Errorf(path, "line 1", "the file ends before the \"MLPerf Results Summary\" banner")
		}
		return ingest.Errorf(path, fmt.Sprintf("line %d", first+1), "expected the \"MLPerf Results Summary\" banner")
	}
	start := first + 2
	if start < len(lines) && rule.MatchString(strings.TrimSpace(lines[start])) {
		start++ // the banner's closing rule
	}
	section := "results"
	perQuery := false
	block := "" // current early-stopping or recommendations block metric
	var blockText []string
	blockLine := 0
	endBlock := func() {
		if block != "" {
			r.summary = append(r.summary, value{name: name{metric: block, stat: "value", isText: true}, text: strings.Join(blockText, "\n"), file: file, line: blockLine})
		}
		block, blockText = "", nil
	}
	closing := false // the "errors encountered" line was read
	var warnPara []string
	var unparsed []string
	for i := start; i < len(lines); i++ {
		raw := lines[i]
		line := strings.TrimSpace(raw)
		ln := i + 1
		if rule.MatchString(line) {
			endBlock()
			if i+1 < len(lines) && !rule.MatchString(strings.TrimSpace(lines[i+1])) {
				switch h := strings.TrimSpace(lines[i+1]); h {
				case "Additional Stats":
					section = "additional"
				case "Test Parameters Used":
					section = "parameters"
				default:
					section = h
				}
				i += 2 // header and closing rule
			}
			continue
		}
		if block != "" && (strings.HasPrefix(line, "*") ||
			// a bullet's continuation line, indented, without a label
			// (" with the run being successful if every additional")
			len(blockText) > 0 && line != "" && raw != line && !strings.Contains(line, ":")) {
			blockText = append(blockText, line)
			continue
		}
		endBlock()
		if line == "" {
			if len(warnPara) > 0 {
				r.messages = append(r.messages, strings.Join(warnPara, " "))
				warnPara = nil
			}
			continue
		}
		if len(warnPara) > 0 || strings.HasPrefix(line, "WARNING") || strings.HasPrefix(line, "ERROR") {
			warnPara = append(warnPara, line)
			continue
		}
		if strings.HasSuffix(line, "encountered during test.") || strings.Contains(line, "encountered. See detailed log.") {
			r.messages = append(r.messages, line)
			if strings.Contains(line, "error") || strings.Contains(line, "ERROR") {
				closing = true
			}
			continue
		}
		if m, ok := earlyStoppingBlocks[line]; ok {
			block, blockLine = m, ln
			continue
		}
		if line == "Per-query latency:" {
			perQuery = true
			continue
		}
		label, val, ok := strings.Cut(line, ":")
		if !ok {
			unparsed = append(unparsed, fmt.Sprintf("line %d %q", ln, line))
			continue
		}
		label, val = strings.TrimSpace(label), strings.TrimSpace(val)
		if section == "parameters" {
			r.params = append(r.params, setting{key: label, raw: jsonValue(val)})
			switch label {
			case "target_qps":
				r.targetQPS = parseNum(val)
			case "ttft_latency (ns)":
				r.ttftLimit = parseNum(val)
			case "tpot_latency (ns)":
				r.tpotLimit = parseNum(val)
			}
			continue
		}
		switch label {
		case "SUT name":
			r.sut = val
			continue
		case "Scenario":
			r.scenario = val
			continue
		case "Mode":
			r.mode = val
			continue
		}
		n, known, old := summaryLabel(label, perQuery, r.scenario)
		if old {
			r.oldLabel = true
		}
		if !known {
			n = genericName(label)
			r.unknown = append(r.unknown, fmt.Sprintf("%q (line %d, as %s)", label, ln, n.metric))
		}
		v := value{name: n, file: file, line: ln}
		if n.isText {
			v.text = val
		} else if f := parseNum(val); f != nil {
			v.v, v.raw = f, val
		} else if known {
			return ingest.Errorf(path, fmt.Sprintf("line %d", ln), "%s: %q is not a number", label, val)
		} else {
			v.name.isText, v.text = true, val
		}
		r.summary = append(r.summary, v)
	}
	endBlock()
	if len(warnPara) > 0 {
		r.messages = append(r.messages, strings.Join(warnPara, " "))
	}
	if len(unparsed) > 0 {
		r.warn("summary lines not understood, ignored: " + strings.Join(unparsed, ", "))
	}
	switch {
	case cut:
		r.truncated = true
		r.warn(fmt.Sprintf("%s ends at line %d without its newline (file cut): that line was dropped", file, len(lines)+1))
	case !closing:
		r.truncated = true
		r.warn(fmt.Sprintf("%s ends at line %d before its closing \"errors encountered\" line (file cut?)", file, len(lines)))
	}
	return nil
}

// jsonValue is a parameter's value as JSON: a number as written, else a
// string.
func jsonValue(s string) json.RawMessage {
	if parseNum(s) != nil && json.Valid([]byte(s)) {
		return exactJSON(json.RawMessage(s))
	}
	b, _ := json.Marshal(s)
	return b
}

var bigInt = regexp.MustCompile(`^-?\d{16,}$`)

// exactJSON quotes integers too long for a float64 (LoadGen's 64-bit RNG
// seeds), so that they survive config_json's re-encoding digit for digit.
func exactJSON(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); bigInt.Match(t) {
		b, _ := json.Marshal(string(t))
		return b
	}
	return raw
}

// parseNum reads a finite number, or nil.
func parseNum(s string) *float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// mllog is one ":::MLLOG" event.
type mllog struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	TimeMs    json.RawMessage `json:"time_ms"`
	Namespace string          `json:"namespace"`
	EventType string          `json:"event_type"`
	Metadata  struct {
		IsError   bool `json:"is_error"`
		IsWarning bool `json:"is_warning"`
	} `json:"metadata"`
}

const mllogPrefix = ":::MLLOG "

// readDetail parses mlperf_log_detail.txt.
func (r *runBuilder) readDetail(path string) error {
	src, lines, cut, err := r.readLines(path, "detail")
	if err != nil {
		return err
	}
	r.sources = append(r.sources, src)
	file := filepath.Base(path)
	other := 0
	var unknown []string
	for i, line := range lines {
		ln := i + 1
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), mllogPrefix)
		if !ok {
			if strings.TrimSpace(line) != "" {
				other++
			}
			continue
		}
		var ev mllog
		if err := json.Unmarshal([]byte(rest), &ev); err != nil {
			return &ingest.FormatError{File: path, Where: fmt.Sprintf("line %d", ln), Msg: "invalid :::MLLOG JSON", Err: err}
		}
		if ev.Key == "" {
			return ingest.Errorf(path, fmt.Sprintf("line %d", ln), ":::MLLOG event without a key")
		}
		if ev.Metadata.IsError || ev.Metadata.IsWarning {
			kind := "warning"
			if ev.Metadata.IsError {
				kind = "error"
			}
			r.messages = append(r.messages, fmt.Sprintf("detail log %s (line %d, %s): %s", kind, ln, ev.Key, ingest.RawText(ev.Value)))
		}
		if n, ok, generic := detailKey(ev.Key); ok {
			if generic {
				unknown = append(unknown, fmt.Sprintf("%s (line %d)", ev.Key, ln))
			}
			v := value{name: n, file: file, line: ln}
			t := bytes.TrimSpace(ev.Value)
			switch {
			case n.isText:
				v.text = ingest.RawText(ev.Value)
			case len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
				f := parseNum(string(t))
				if f == nil {
					return ingest.Errorf(path, fmt.Sprintf("line %d", ln), "%s: %s is not a finite number", ev.Key, t)
				}
				v.v, v.raw = f, string(t)
			case generic:
				v.name.isText, v.text = true, ingest.RawText(ev.Value)
			default:
				return ingest.Errorf(path, fmt.Sprintf("line %d", ln), "%s: %s is not a number", ev.Key, t)
			}
			r.detail = append(r.detail, v)
			continue
		}
		if !knownSetting(ev.Key) {
			unknown = append(unknown, fmt.Sprintf("%s (line %d)", ev.Key, ln))
		}
		switch ev.Key {
		case "loadgen_version":
			r.version = ingest.RawText(ev.Value)
		case "sut_name":
			if r.sut == "" {
				r.sut = ingest.RawText(ev.Value)
			}
		case "effective_scenario":
			r.scenario = ingest.RawText(ev.Value)
		case "effective_test_mode":
			r.mode = ingest.RawText(ev.Value)
		case "effective_target_qps":
			if f := parseNum(string(ev.Value)); f != nil {
				r.targetQPS = f
			}
		case "requested_server_ttft_latency":
			if f := parseNum(string(ev.Value)); f != nil {
				r.ttftLimit = f
			}
		case "requested_server_tpot_latency":
			if f := parseNum(string(ev.Value)); f != nil {
				r.tpotLimit = f
			}
		}
		if !omittedSettings[ev.Key] {
			r.settings = append(r.settings, setting{key: ev.Key, raw: exactJSON(ev.Value)})
		}
	}
	if other > 0 {
		r.notes = append(r.notes, fmt.Sprintf("%s: %d lines without the :::MLLOG prefix ignored", file, other))
	}
	if len(unknown) > 0 {
		r.warn(fmt.Sprintf("%s keys not known to tokentrace (results imported under their own names, settings kept in config_json): %s", file, strings.Join(unknown, ", ")))
	}
	if cut {
		r.truncated = true
		r.warn(fmt.Sprintf("%s ends at line %d without its newline (file cut): that line was dropped", file, len(lines)+1))
	}
	return nil
}

// userConfKey matches "<model>.<Scenario>.<key> = value" in user.conf.
var userConfKey = regexp.MustCompile(`^\s*([A-Za-z0-9_.\-]+?)\.(Server|Offline|SingleStream|MultiStream|Interactive|\*)\.[A-Za-z_]+\s*=`)

// readUserConf takes the model from user.conf beside path (its only model
// prefix), else from a submission path's …/<model>/<Scenario>/performance/.
func (r *runBuilder) readUserConf(path string) {
	if path == ingest.StdinPath {
		return
	}
	dir := filepath.Dir(path)
	if _, b, err := ingest.ReadFile(filepath.Join(dir, "user.conf"), "config", r.opt); err == nil {
		models := map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			if m := userConfKey.FindStringSubmatch(line); m != nil && m[1] != "*" {
				models[m[1]] = true
			}
		}
		if len(models) == 1 {
			for m := range models {
				r.model, r.modelFrom = m, "user.conf"
			}
			return
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	if runPath.MatchString(filepath.Base(abs)) && filepath.Base(filepath.Dir(abs)) == "performance" {
		scen := filepath.Dir(filepath.Dir(abs))
		r.model, r.modelFrom = filepath.Base(filepath.Dir(scen)), "the submission path"
	}
}

// merged returns the run's statistics: the detail log's, plus the
// summary's where the detail log lacks them or wrote fewer significant
// digits; disagreements beyond rounding are noted.
func (r *runBuilder) merged() []value {
	type k struct{ m, s string }
	idx := map[k]int{}
	var out []value
	for _, v := range r.detail {
		kk := k{v.metric, v.stat}
		if _, dup := idx[kk]; dup {
			continue
		}
		idx[kk] = len(out)
		out = append(out, v)
	}
	var disagree []string
	for _, v := range r.summary {
		kk := k{v.metric, v.stat}
		i, dup := idx[kk]
		if !dup {
			idx[kk] = len(out)
			out = append(out, v)
			continue
		}
		d := out[i]
		if d.file == v.file {
			continue // repeated in the summary (Completed tokens per second)
		}
		if v.v != nil && d.v != nil {
			if !agree(*v.v, *d.v, v.raw, d.raw) {
				disagree = append(disagree, fmt.Sprintf("%s/%s summary %s, detail %s", v.metric, v.stat, v.raw, d.raw))
			}
			if sigDigits(v.raw) > sigDigits(d.raw) {
				out[i] = v
			}
		}
	}
	if len(disagree) > 0 {
		r.warn("the summary and the detail log disagree beyond rounding: " + strings.Join(disagree, "; "))
	}
	return out
}

// agree reports whether two renderings of one number agree to the
// precision of the less precise one.
func agree(a, b float64, ra, rb string) bool {
	d := math.Min(float64(sigDigits(ra)), float64(sigDigits(rb)))
	if d <= 0 {
		return a == b
	}
	ref := math.Max(math.Abs(a), math.Abs(b))
	return math.Abs(a-b) <= ref*math.Pow(10, 1-d)
}

// sigDigits counts the significant digits of a number as written.
func sigDigits(s string) int {
	s = strings.TrimLeft(strings.TrimSpace(s), "+-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if frac == "" {
		digits = strings.TrimRight(digits, "0")
	}
	return len(digits)
}

// build makes the Run row.
func (r *runBuilder) build(path string) formats.Run {
	run := formats.Run{
		RunID:             r.label,
		Tool:              Name,
		ToolVersion:       r.version,
		Model:             r.model,
		Convention:        Convention,
		SourceFiles:       r.sources,
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
		Truncated:         r.truncated,
	}
	if uc := filepath.Join(filepath.Dir(path), "user.conf"); r.modelFrom == "user.conf" {
		if src, _, err := ingest.ReadFile(uc, "config", r.opt); err == nil {
			run.SourceFiles = append(run.SourceFiles, src)
		}
	}
	switch r.scenario {
	case "Server", "Interactive":
		run.LoadMode, run.RequestRateRPS = "request_rate", r.targetQPS
	case "Offline":
		run.LoadMode, run.RequestRateRPS = "request_rate", ingest.Ptr(math.Inf(1))
	case "SingleStream":
		run.LoadMode, run.Concurrency = "concurrency", ingest.Ptr(1.0)
	}
	vals := r.merged()
	ttftNull := false
	if ch := firstTokenNotMeasured(vals); ch != nil {
		run.Checks = append(run.Checks, *ch)
		ttftNull = true
	}
	for _, v := range vals {
		rs := formats.ReportedStat{Metric: v.metric, Stat: v.stat, Unit: v.unit, File: v.file}
		if v.isText {
			rs.Text = v.text
		} else {
			rs.Value = v.v
		}
		run.Reported = append(run.Reported, rs)
	}
	run.ConfigJSON = r.configJSON()

	notes := []string{"summary only: nothing to recompute (LoadGen logs keep no per-sample times; mlperf_log_trace.json is not read)"}
	if r.scenario != "" || r.mode != "" {
		notes = append(notes, fmt.Sprintf("scenario %s, mode %s", orUnknown(r.scenario), orUnknown(r.mode)))
	}
	if r.sut != "" {
		notes = append(notes, "SUT name "+r.sut)
	}
	if r.model != "" {
		notes = append(notes, "model "+r.model+" (from "+r.modelFrom+")")
	}
	notes = append(notes, r.verdictNotes(vals, ttftNull)...)
	notes = append(notes, "latencies run from each query's scheduled time (Server: its Poisson arrival), so they include LoadGen's issue delay and the SUT's queueing; TPOT = (latency − TTFT)/(n_tokens − 1) in integer ns; percentiles are sorted[⌊n·p⌋]; means are integer ns")
	if r.oldLabel {
		notes = append(notes, "the summary's \"Time to Output Token\" lines (LoadGen before mlcommons/inference PR #2360) are LoadGen's TPOT: imported as time_per_output_token_ns")
	}
	if len(r.unknown) > 0 {
		s := "summary labels not known to tokentrace, imported under names made from them: " + strings.Join(r.unknown, ", ")
		notes = append(notes, s)
		r.warnings = append(r.warnings, s)
	}
	notes = append(notes, r.messages...)
	run.Notes = append(notes, r.notes...)
	warn := ingest.NewNotes(path, r.opt) // for the warnings: the notes are built above
	for _, w := range r.warnings {
		warn.WarnOnly(w)
	}
	return run
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// verdictNotes states and checks the run's validity and constraints, and
// names the early-stopping checks that did not succeed. ttftNull: the
// first-token statistics are no measurement (firstTokenNotMeasured).
func (r *runBuilder) verdictNotes(vals []value, ttftNull bool) []string {
	get := func(metric, stat string) *value {
		for i := range vals {
			if vals[i].metric == metric && vals[i].stat == stat {
				return &vals[i]
			}
		}
		return nil
	}
	var notes []string
	if v := get("validity", "value"); v != nil {
		notes = append(notes, "result "+v.text)
	}
	if v := get("invalid_reason", "value"); v != nil && v.text != "" {
		notes = append(notes, "invalid because: "+v.text)
	}
	ttft, tpot := get(mFirstTok, "p99"), get(mTPOT, "p99")
	met := get("perf_constraints_met", "value")
	if ttft != nil && tpot != nil && ttft.v != nil && tpot.v != nil && r.ttftLimit != nil && r.tpotLimit != nil {
		le := *ttft.v <= *r.ttftLimit && *tpot.v <= *r.tpotLimit
		lt := *ttft.v < *r.ttftLimit && *tpot.v < *r.tpotLimit
		s := fmt.Sprintf("constraints: P99 TTFT %s ns vs ttft_latency %s ns, P99 TPOT %s ns vs tpot_latency %s ns: %s by LoadGen's rule (≤), %s by the submission checker's (<)",
			numText(*ttft.v), numText(*r.ttftLimit), numText(*tpot.v), numText(*r.tpotLimit), metWord(le), metWord(lt))
		if met != nil {
			s += "; the log says performance constraints satisfied: " + met.text
			if truthy(met.text) != le {
				s += " (disagrees with the check)"
			}
		}
		notes = append(notes, s)
	} else if met != nil {
		s := "performance constraints satisfied: " + met.text
		if ttftNull {
			s += " (LoadGen compared first-token latencies that were never measured with ttft_latency: it says nothing about TTFT)"
		}
		notes = append(notes, s)
	}
	if es := get("early_stopping_met", "value"); es != nil && !truthy(es.text) {
		notes = append(notes, "early stopping satisfied: "+es.text)
	}
	for _, b := range []struct{ metric, what string }{
		{"early_stopping_result", "early stopping result"},
		{"early_stopping_ttft_result", "TTFT early stopping result"},
		{"early_stopping_tpot_result", "TPOT early stopping result"},
	} {
		v := get(b.metric, "value")
		switch {
		case v == nil:
		case strings.TrimSpace(v.text) == "":
			// Offline runs print the blocks empty: no early stopping there
			if r.scenario == "Server" || r.scenario == "Interactive" {
				notes = append(notes, b.what+": empty (LoadGen printed no verdict)")
			}
		case !strings.Contains(v.text, "Run successful."):
			notes = append(notes, b.what+": "+strings.Join(strings.Fields(v.text), " "))
		}
	}
	if v := get("token_throughput", "value"); v != nil && v.v != nil {
		notes = append(notes, fmt.Sprintf("token_throughput (%s) is LoadGen's Σ tokens / (mean latency in ns · samples): a unit slip, not a throughput; use completed_tokens_per_second", v.raw))
	}
	if oc, qc := get("overlatency_query_count", "value"), get("query_count", "value"); oc != nil && qc != nil && oc.v != nil && qc.v != nil && *oc.v == *qc.v && *qc.v > 0 {
		notes = append(notes, "overlatency_query_count = query_count: token runs set target_latency 0, so every query counts as over it")
	}
	return notes
}

func metWord(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "true", "1":
		return true
	}
	return false
}

func numText(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// configJSON renders the summary's Test Parameters and the detail log's
// settings: {"test_parameters": {...}, "detail_settings": {...}}.
func (r *runBuilder) configJSON() string {
	if len(r.params) == 0 && len(r.settings) == 0 {
		return ""
	}
	var b bytes.Buffer
	obj := func(key string, entries []setting) {
		kb, _ := json.Marshal(key)
		b.Write(kb)
		b.WriteString(":{")
		seen := map[string]bool{}
		n := 0
		for _, e := range entries {
			if seen[e.key] {
				continue
			}
			seen[e.key] = true
			if n > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(e.key)
			b.Write(kb)
			b.WriteByte(':')
			if json.Valid(e.raw) {
				b.Write(e.raw)
			} else {
				b.WriteString("null")
			}
			n++
		}
		b.WriteByte('}')
	}
	b.WriteByte('{')
	parts := 0
	if len(r.params) > 0 {
		obj("test_parameters", r.params)
		parts++
	}
	if len(r.settings) > 0 {
		if parts > 0 {
			b.WriteByte(',')
		}
		obj("detail_settings", r.settings)
	}
	b.WriteByte('}')
	out, paths := ingest.RedactJSON(b.Bytes(), "config")
	if len(paths) > 0 {
		sort.Strings(paths)
		r.notes = append(r.notes, "redacted from config_json: "+strings.Join(paths, ", "))
	}
	return out
}
