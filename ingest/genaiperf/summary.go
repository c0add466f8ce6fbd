package genaiperf

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// importSummaryOnly imports a lone summary (JSON and/or CSV) as one Run
// with Reported and no requests.
func importSummaryOnly(in *ingest.Input, jsonPath, csvPath, label string, opt ingest.Options, sink formats.Sink) error {
	sum, err := readSummaries(in, opt, jsonPath, csvPath, true)
	if err != nil {
		return err
	}
	run := formats.Run{
		RunID:             label,
		Tool:              Name,
		Model:             first(sum.config.models),
		Endpoint:          sum.config.endpoint,
		Streaming:         sum.config.streaming,
		Tokenizer:         sum.config.tokenizer,
		Convention:        Name,
		SourceFiles:       sum.files,
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
		ConfigJSON:        sum.configJSON,
		Reported:          sum.reported,
	}
	mode, v := sum.config.loadMode()
	run.LoadMode = mode
	if mode == "concurrency" {
		run.Concurrency = v
	} else if mode == "request_rate" {
		run.RequestRateRPS = v
	}
	var n notes
	n.add(false, "summary only: nothing to recompute (no raw %s beside %s)", "profile export",
		filepath.Base(firstNonEmpty(jsonPath, csvPath)))
	n.merge(&sum.notes)
	run.Notes = n.lines()
	warn := ingest.NewNotes(firstNonEmpty(jsonPath, csvPath), opt)
	for _, w := range n.warnings() {
		warn.WarnOnly(w)
	}
	return sink.Run(&run)
}

func first(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return l[0]
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// summary is what the summary files of a run say.
type summary struct {
	files      []formats.SourceFile
	reported   []formats.ReportedStat
	config     inputConfig
	hasConfig  bool
	configJSON string // redacted input_config
	notes      notes
}

// inputConfig is the part of GenAI-Perf's input_config the Run row uses. Two
// shapes exist: the flat argparse echo of 2024 (model, endpoint, streaming,
// tokenizer, concurrency, request_rate at the top; our corpus) and the
// nested config of 2025 (model_names, endpoint.{custom,streaming},
// tokenizer.name, perf_analyzer.stimulus.{concurrency|request_rate};
// config/input/config_command.py, perf_analyzer 263c5f6, lines 55-83, where
// None is written as ""). Both are read.
type inputConfig struct {
	models      []string
	endpoint    string
	streaming   *bool
	tokenizer   string
	concurrency *float64
	requestRate *float64
}

// readSummaries reads the JSON summary (jsonPath, may be "") and the CSV
// summary (csvPath, may be ""). The CSV's values are used only without a
// JSON summary. A summary that cannot be parsed is an error when strict
// (summary-only import), else a warning note. Both are read through in
// (ingest.Input.ReadFile): in itself when it is one of them.
func readSummaries(in *ingest.Input, opt ingest.Options, jsonPath, csvPath string, strict bool) (*summary, error) {
	s := &summary{}
	if jsonPath != "" {
		sf, b, err := in.ReadFile(jsonPath, "summary", opt)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, sf)
		if err := s.parseJSON(jsonPath, b); err != nil {
			if strict {
				return nil, err
			}
			s.notes.add(true, "summary ignored: %v", err)
		}
	}
	if csvPath != "" {
		sf, b, err := in.ReadFile(csvPath, "summary_csv", opt)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, sf)
		switch {
		case jsonPath != "":
			s.notes.add(false, "reported statistics from %s; %s hashed, its values (rounded copies) not read",
				filepath.Base(jsonPath), filepath.Base(csvPath))
		default:
			if err := s.parseCSV(csvPath, b); err != nil {
				if strict {
					return nil, err
				}
				s.notes.add(true, "summary ignored: %v", err)
			} else {
				s.notes.add(false, "reported statistics from %s (values rounded to 2 decimals by GenAI-Perf)", filepath.Base(csvPath))
			}
		}
	}
	s.checkGoodput()
	return s, nil
}

// parseJSON reads a JSON summary: every top-level key whose value is an
// object with a "unit" key is a metric, and each of its other keys a
// statistic, in file order
// (triton-inference-server/perf_analyzer@263c5f6e0c7a
// genai-perf/genai_perf/export_data/json_exporter.py lines 68-75 and
// genai-perf/genai_perf/metrics/statistics.py lines 58-135). "input_config"
// is the configuration echo; other keys (telemetry_stats, sessions) are noted
// and skipped.
func (s *summary) parseJSON(path string, b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := expectDelim(dec, '{'); err != nil {
		return summaryErr(path, dec, err)
	}
	file := filepath.Base(path)
	for dec.More() {
		key, err := readKey(dec)
		if err != nil {
			return summaryErr(path, dec, err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return summaryErr(path, dec, err)
		}
		switch {
		case key == "input_config":
			s.setConfig(raw)
		case !s.addMetric(file, key, raw):
			s.notes.add(false, "summary key %q not imported", key)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return summaryErr(path, dec, err)
	}
	return nil
}

// addMetric appends the statistics of one metric object; false when raw is
// not a metric (no "unit" key).
func (s *summary) addMetric(file, metric string, raw json.RawMessage) bool {
	type kv struct {
		k string
		v json.RawMessage
	}
	var stats []kv
	unit, hasUnit := "", false
	dec := json.NewDecoder(bytes.NewReader(raw))
	if expectDelim(dec, '{') != nil {
		return false
	}
	for dec.More() {
		k, err := readKey(dec)
		if err != nil {
			return false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return false
		}
		if k == "unit" {
			hasUnit = true
			_ = json.Unmarshal(v, &unit)
			continue
		}
		stats = append(stats, kv{k, v})
	}
	if !hasUnit {
		return false
	}
	for _, st := range stats {
		r := formats.ReportedStat{Metric: metric, Stat: st.k, Unit: unit, File: file}
		if f := jsonFloat(st.v); f != nil {
			r.Value = f
		} else {
			r.Text = jsonText(st.v)
		}
		s.reported = append(s.reported, r)
	}
	return true
}

// jsonText is a JSON value as text: a string's contents, else the JSON.
func jsonText(v json.RawMessage) string {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// setConfig keeps input_config: redacted for ConfigJSON, parsed for the
// Run's fields.
func (s *summary) setConfig(raw json.RawMessage) {
	js, paths := ingest.RedactJSON(raw, "input_config")
	s.configJSON = js
	if len(paths) > 0 {
		s.notes.add(false, "secrets replaced by %s in ConfigJSON at %s", ingest.Redacted, strings.Join(paths, ", "))
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	s.hasConfig = true
	c := &s.config
	c.models = stringList(m["model"])
	if len(c.models) == 0 {
		c.models = stringList(m["model_names"])
	}
	var ep map[string]json.RawMessage
	if json.Unmarshal(m["endpoint"], &ep) == nil {
		c.endpoint = jsonString(ep["custom"])
		c.streaming = jsonBool(ep["streaming"])
	} else {
		c.endpoint = jsonString(m["endpoint"])
		c.streaming = jsonBool(m["streaming"])
	}
	var tok map[string]json.RawMessage
	if json.Unmarshal(m["tokenizer"], &tok) == nil {
		c.tokenizer = jsonString(tok["name"])
	} else {
		c.tokenizer = jsonString(m["tokenizer"])
	}
	c.concurrency = jsonFloat(m["concurrency"])
	c.requestRate = jsonFloat(m["request_rate"])
	var pa struct {
		Stimulus map[string]json.RawMessage `json:"stimulus"`
	}
	if json.Unmarshal(m["perf_analyzer"], &pa) == nil && pa.Stimulus != nil {
		c.concurrency = jsonFloat(pa.Stimulus["concurrency"])
		c.requestRate = jsonFloat(pa.Stimulus["request_rate"])
	}
}

// loadMode returns input_config's load mode: request_rate when set, else
// concurrency when set.
func (c *inputConfig) loadMode() (mode string, value *float64) {
	switch {
	case c.requestRate != nil:
		return "request_rate", c.requestRate
	case c.concurrency != nil:
		return "concurrency", c.concurrency
	}
	return "", nil
}

// checkGoodput notes GenAI-Perf's invalid-SLO sentinel: request_goodput is
// -1 when a --goodput constraint name is not a known metric
// (triton-inference-server/perf_analyzer@263c5f6e0c7a
// genai-perf/genai_perf/goodput_calculator/goodput_calculator.py line 40;
// triton-inference-server/perf_analyzer PR 32).
// The value is kept as reported.
func (s *summary) checkGoodput() {
	for _, r := range s.reported {
		if r.Metric == "request_goodput" && r.Value != nil && *r.Value == -1 {
			s.notes.add(true, "request_goodput is -1: GenAI-Perf's sentinel for an invalid --goodput constraint, not a rate")
			return
		}
	}
}

// parseCSV reads a CSV summary
// (triton-inference-server/perf_analyzer@263c5f6e0c7a
// genai-perf/genai_perf/export_data/csv_exporter.py lines 44-121): sections
// each led by a header row whose first field is "Metric". A
// "Metric,avg,min,max,p99,…" section (2024: p25…p99; 2025: also p10, p5, p1)
// has one row per request metric; a "Metric,Value" section one row per system
// metric, whose value is the JSON summary's "avg" and is imported under Stat
// "avg". Sections with a "GPU" column (telemetry) are skipped. Labels are
// GenAI-Perf's metric names title-cased with a " (unit)" suffix; they are
// turned back into names ("Request Latency (ms)" → request_latency, unit
// "ms"). Values are formatted with thousands separators ("2,235.71"); "N/A"
// and other non-numbers are kept as Text. Lines may end in CRLF.
func (s *summary) parseCSV(path string, b []byte) error {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	file := filepath.Base(path)
	var header []string
	skipping, sawHeader := false, false
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return ingest.Errorf(path, fmt.Sprintf("line %d", pe.Line), "%v", pe.Err)
			}
			return ingest.Wrap(path, "", err)
		}
		if strings.TrimSpace(rec[0]) == "Metric" {
			header, sawHeader = rec, true
			skipping = len(rec) > 1 && rec[1] == "GPU"
			if skipping {
				s.notes.add(false, "telemetry sections of %s not imported", file)
			}
			continue
		}
		if skipping || header == nil {
			continue
		}
		s.addCSVRow(file, header, rec)
	}
	if !sawHeader {
		return ingest.Errorf(path, "line 1", "no \"Metric\" header row")
	}
	return nil
}

func (s *summary) addCSVRow(file string, header, rec []string) {
	metric, unit := csvLabel(rec[0])
	for j := 1; j < len(rec) && j < len(header); j++ {
		stat := strings.ToLower(strings.TrimSpace(header[j]))
		if stat == "value" {
			stat = "avg"
		}
		st := formats.ReportedStat{Metric: metric, Stat: stat, Unit: unit, File: file}
		v := strings.TrimSpace(rec[j])
		if f, err := strconv.ParseFloat(strings.ReplaceAll(v, ",", ""), 64); err == nil {
			st.Value = ingest.Ptr(f)
		} else {
			st.Text = v
		}
		s.reported = append(s.reported, st)
	}
}

// knownUnits are the units of GenAI-Perf's metrics
// (triton-inference-server/perf_analyzer@263c5f6e0c7a
// genai-perf/genai_perf/metrics/llm_metrics.py lines 37-61 and
// metrics/metrics.py lines 42-55), used when a CSV label has no unit or the
// 2024 system-row wording "(per sec)".
var knownUnits = map[string]string{
	"time_to_first_token":                 "ms",
	"time_to_second_token":                "ms",
	"inter_token_latency":                 "ms",
	"request_latency":                     "ms",
	"output_token_throughput_per_user":    "tokens/sec/user",
	"output_token_throughput_per_request": "tokens/sec",
	"output_sequence_length":              "tokens",
	"input_sequence_length":               "tokens",
	"output_token_throughput":             "tokens/sec",
	"request_throughput":                  "requests/sec",
	"request_goodput":                     "requests/sec",
	"request_count":                       "count",
}

// csvLabel turns a CSV metric label back into GenAI-Perf's metric name and
// unit: "Request Latency (ms)" → ("request_latency", "ms"); "Output Token
// Throughput (per sec)" → ("output_token_throughput", "tokens/sec").
func csvLabel(label string) (metric, unit string) {
	name := strings.TrimSpace(label)
	if i := strings.LastIndex(name, " ("); i >= 0 && strings.HasSuffix(name, ")") {
		unit = name[i+2 : len(name)-1]
		name = name[:i]
	}
	metric = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), " ", "_")
	if u, ok := knownUnits[metric]; ok && (unit == "" || unit == "per sec") {
		unit = u
	}
	return metric, unit
}

func summaryErr(path string, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return ingest.Wrap(path, fmt.Sprintf("byte %d", se.Offset), err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ingest.Errorf(path, fmt.Sprintf("byte %d", dec.InputOffset()), "file ends inside the JSON object")
	}
	return ingest.Wrap(path, fmt.Sprintf("byte %d", dec.InputOffset()), err)
}

// stringList reads a string or a list of strings.
func stringList(raw json.RawMessage) []string {
	var l []string
	if json.Unmarshal(raw, &l) == nil {
		return l
	}
	if s := jsonString(raw); s != "" {
		return []string{s}
	}
	return nil
}

func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// jsonBool reads true or false; nil for null, absent or anything else.
func jsonBool(raw json.RawMessage) *bool {
	var b bool
	if s := string(raw); s != "true" && s != "false" {
		return nil
	}
	_ = json.Unmarshal(raw, &b)
	return &b
}

// jsonFloat reads a JSON number; nil for null, absent or anything else
// (GenAI-Perf's 2025 config writes None as "").
func jsonFloat(raw json.RawMessage) *float64 {
	var f float64
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return &f
}
