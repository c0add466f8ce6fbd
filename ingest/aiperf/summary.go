package aiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// summary is what a run learns from profile_export_aiperf.json (or .csv).
type summary struct {
	src        formats.SourceFile
	also       []formats.SourceFile // other summary files read (a CSV checked against the JSON)
	version    string               // aiperf_version
	model      string
	endpoint   string
	tokenizer  string
	streaming  *bool
	loadMode   string
	conc, rate *float64
	configJSON string
	reported   []formats.ReportedStat
	notes      []string
	// complete is what the JSON says of its own results (is_complete,
	// incomplete_reason, runtime_submission_invalid_reasons: AIPerf 2026),
	// for TrapIncompleteResults; fromJSON is true for a JSON summary (a
	// CSV says none of it).
	complete resultsComplete
	fromJSON bool
}

// inputConfig is the part of the summary's input_config the Run uses.
// AIPerf 0.8 writes endpoint.model_names, endpoint.custom_endpoint and
// loadgen; 0.10 writes models.items, endpoint.urls and phases[]
// (config/phases.py); 0.1.x writes endpoint.url.
type inputConfig struct {
	Endpoint struct {
		ModelNames     []string `json:"model_names"`
		CustomEndpoint string   `json:"custom_endpoint"`
		Type           string   `json:"type"`
		Streaming      *bool    `json:"streaming"`
		URLs           []string `json:"urls"`
		URL            string   `json:"url"`
	} `json:"endpoint"`
	Models struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	} `json:"models"`
	Tokenizer struct {
		Name string `json:"name"`
	} `json:"tokenizer"`
	Loadgen struct {
		Concurrency *float64 `json:"concurrency"`
		RequestRate *float64 `json:"request_rate"`
	} `json:"loadgen"`
	Phases []phaseConfig `json:"phases"`
}

// phaseConfig is one entry of 0.10's input_config.phases.
type phaseConfig struct {
	Name               string   `json:"name"`
	Kind               string   `json:"kind"`
	Type               string   `json:"type"`
	Concurrency        *float64 `json:"concurrency"`
	Rate               *float64 `json:"rate"`
	ExcludeFromResults bool     `json:"exclude_from_results"`
}

// endpointPaths are the default API paths of AIPerf's endpoint types, used
// when input_config.endpoint has no custom_endpoint (plugin/plugins.yaml,
// ai-dynamo/aiperf 018a03f).
var endpointPaths = map[string]string{
	"chat":            "/v1/chat/completions",
	"completions":     "/v1/completions",
	"responses":       "/v1/responses",
	"messages":        "/v1/messages",
	"embeddings":      "/v1/embeddings",
	"chat_embeddings": "/v1/embeddings",
	"nim_embeddings":  "/v1/embeddings",
}

// rateTypes are the 0.10 phase types driven by a request rate.
var rateTypes = map[string]bool{"poisson": true, "gamma": true, "constant": true, "user_centric": true}

// readSummary reads the summary at path (JSON or CSV by its name) through
// in (ingest.Input.ReadFile: in itself when path is its own).
func readSummary(in *ingest.Input, opt ingest.Options, path string) (*summary, error) {
	role := "summary"
	if strings.HasSuffix(path, ".csv") {
		role = "summary_csv"
	}
	src, raw, err := in.ReadFile(path, role, opt)
	if err != nil {
		return nil, err
	}
	var s *summary
	if role == "summary_csv" {
		s, err = parseSummaryCSV(filepath.Base(path), raw)
	} else {
		s, err = parseSummaryJSON(filepath.Base(path), raw)
	}
	if err != nil {
		return nil, &ingest.FormatError{File: path, Where: ingest.JSONSyntaxWhere(raw), Msg: "unreadable summary", Err: err}
	}
	s.src = src
	return s, nil
}

// parseSummaryJSON reads profile_export_aiperf.json: both the GenAI-Perf-
// shaped layout (top-level tag → stats, AIPerf ≥ PR #343) and the older
// {"records": {tag: {...}}} layout with nulls for absent statistics. Stats
// keep the file's order; nulls are skipped.
func parseSummaryJSON(file string, raw []byte) (*summary, error) {
	entries, err := ingest.ObjectEntries(raw)
	if err != nil {
		return nil, err
	}
	s := &summary{fromJSON: true}
	for _, e := range entries {
		switch e.Key {
		case "is_complete", "incomplete_reason", "runtime_submission_invalid_reasons":
			s.complete.read(e.Key, e.Value)
		case "aiperf_version":
			s.version = ingest.RawText(e.Value)
		case "schema_version":
			s.notes = append(s.notes, fmt.Sprintf("%s: schema_version %s", file, ingest.RawText(e.Value)))
		case "input_config":
			s.applyConfig(e.Value)
		case "error_summary":
			s.notes = append(s.notes, errorSummaryNotes(file, e.Value)...)
		case "was_cancelled":
			if strings.TrimSpace(string(e.Value)) == "true" {
				s.notes = append(s.notes, file+": was_cancelled is true (AIPerf stopped the run early)")
			}
		case "start_time", "end_time":
			if t := ingest.RawText(e.Value); t != "" {
				s.reported = append(s.reported, formats.ReportedStat{Metric: e.Key, Stat: "value", Text: t, File: file})
			}
		case "records":
			if inner, err := ingest.ObjectEntries(e.Value); err == nil {
				for _, m := range inner {
					s.addMetric(file, m.Key, m.Value)
				}
			}
		default:
			s.addMetric(file, e.Key, e.Value)
		}
	}
	return s, nil
}

// addMetric adds one metric's statistics if value is a metric object (an
// object with a "unit"); other values (telemetry_data, run_info, …) are
// ignored. Numbers become Value, strings Text; "unit", "tag" and "header"
// are labels, not statistics.
func (s *summary) addMetric(file, tag string, value json.RawMessage) {
	stats, err := ingest.ObjectEntries(value)
	if err != nil {
		return
	}
	unit, isMetric := "", false
	for _, st := range stats {
		if st.Key == "unit" {
			unit, isMetric = ingest.RawText(st.Value), true
		}
	}
	if !isMetric {
		return
	}
	for _, st := range stats {
		switch st.Key {
		case "unit", "tag", "header":
			continue
		}
		rs, ok := reportedValue(st.Value)
		if !ok {
			continue
		}
		rs.Metric, rs.Stat, rs.Unit, rs.File = tag, st.Key, unit, file
		if st.Key == "count" {
			rs.Unit = "" // a number of samples, not a value in the metric's unit
		}
		s.reported = append(s.reported, rs)
	}
}

// reportedValue turns a JSON statistic into a ReportedStat value: a number
// into Value, a string into Text; null and other values are skipped.
func reportedValue(raw json.RawMessage) (formats.ReportedStat, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return formats.ReportedStat{}, false
	}
	if t[0] == '"' {
		return formats.ReportedStat{Text: ingest.RawText(t)}, true
	}
	if f, err := strconv.ParseFloat(string(t), 64); err == nil {
		return formats.ReportedStat{Value: ingest.Ptr(f)}, true
	}
	return formats.ReportedStat{}, false
}

// applyConfig reads the Run's configuration from input_config and keeps
// the whole input_config, redacted, as ConfigJSON. Fields of an unexpected
// type are skipped (json.Unmarshal fills what it can).
func (s *summary) applyConfig(raw json.RawMessage) {
	cfg, paths := ingest.RedactJSON(raw, "input_config")
	s.configJSON = cfg
	if len(paths) > 0 {
		s.notes = append(s.notes, "redacted secrets in "+strings.Join(paths, ", "))
	}
	var ic inputConfig
	if err := json.Unmarshal(raw, &ic); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return
		}
	}
	ep := ic.Endpoint
	switch {
	case len(ep.ModelNames) > 0:
		s.model = ep.ModelNames[0]
	case len(ic.Models.Items) > 0:
		s.model = ic.Models.Items[0].Name
	}
	s.endpoint = endpointOf(ep.URLs, ep.URL, ep.CustomEndpoint, ep.Type)
	s.streaming = ep.Streaming
	s.tokenizer = ic.Tokenizer.Name
	s.applyLoad(&ic)
}

// endpointOf joins the first URL with the custom endpoint path, or with the
// endpoint type's default path.
func endpointOf(urls []string, url, custom, typ string) string {
	if len(urls) > 0 {
		url = urls[0]
	}
	path := custom
	if path == "" {
		path = endpointPaths[typ]
	}
	if url == "" {
		return path
	}
	if path == "" {
		return url
	}
	return strings.TrimRight(url, "/") + "/" + strings.TrimLeft(path, "/")
}

// applyLoad sets the load mode: from the profiling phase in 0.10
// (type "concurrency" → concurrency; poisson, gamma, constant, user_centric
// → request_rate with its rate, concurrency as a cap; fixed_schedule →
// unknown, a trace replay), else from 0.8's loadgen (request_rate wins over
// concurrency, which is then a cap).
func (s *summary) applyLoad(ic *inputConfig) {
	if p := profilingPhase(ic.Phases); p != nil {
		s.conc = p.Concurrency
		switch {
		case p.Type == "concurrency":
			s.loadMode = "concurrency"
		case rateTypes[p.Type]:
			s.loadMode, s.rate = "request_rate", p.Rate
		case p.Type == "fixed_schedule":
			s.notes = append(s.notes, "profiling phase type fixed_schedule: requests replayed at trace timestamps (load mode left unknown)")
		}
		return
	}
	lg := ic.Loadgen
	s.conc = lg.Concurrency
	switch {
	case lg.RequestRate != nil:
		s.loadMode, s.rate = "request_rate", lg.RequestRate
	case lg.Concurrency != nil:
		s.loadMode = "concurrency"
	}
}

// profilingPhase returns the first phase of kind or name "profiling", else
// the first phase not excluded from results.
func profilingPhase(phases []phaseConfig) *phaseConfig {
	for i := range phases {
		if phases[i].Kind == "profiling" || phases[i].Name == "profiling" {
			return &phases[i]
		}
	}
	for i := range phases {
		if !phases[i].ExcludeFromResults && phases[i].Kind != "warmup" && phases[i].Name != "warmup" {
			return &phases[i]
		}
	}
	return nil
}

// errorSummaryNotes condenses error_summary ([{error_details: {code, type,
// message, …}, count}]) into one note per (code, type), with the total count
// and the first message, whitespace-collapsed and cut to 100 characters.
func errorSummaryNotes(file string, raw json.RawMessage) []string {
	var groups []struct {
		Details struct {
			Code    json.RawMessage `json:"code"`
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
		} `json:"error_details"`
		Count float64 `json:"count"`
	}
	if json.Unmarshal(raw, &groups) != nil {
		return nil
	}
	type agg struct {
		count float64
		msg   string
	}
	byKey := map[string]*agg{}
	var order []string
	for _, g := range groups {
		key := strings.TrimSpace(ingest.RawText(g.Details.Code) + " " + g.Details.Type)
		if key == "" {
			key = "(no code or type)"
		}
		a := byKey[key]
		if a == nil {
			a = &agg{msg: ingest.RawText(g.Details.Message)}
			byKey[key] = a
			order = append(order, key)
		}
		a.count += g.Count
	}
	var notes []string
	for _, k := range order {
		a := byKey[k]
		notes = append(notes, fmt.Sprintf("%s error_summary: %g × %s: %q", file, a.count, k, cut(strings.Join(strings.Fields(a.msg), " "), 100)))
	}
	return notes
}

// cut shortens s to n runes, marking the cut with "…".
func cut(s string, n int) string {
	return formats.CutRunes(s, n)
}
