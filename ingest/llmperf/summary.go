package llmperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// summary is what a run learns from LLMPerf's summary.json.
type summary struct {
	src        formats.SourceFile
	version    string // "version" (LLMPerf's RESULTS_VERSION, "2023-08-31")
	model      string
	conc       *float64 // num_concurrent_requests
	timestamp  *int64   // unix seconds at write time (LLMPerfResults)
	configJSON string
	reported   []formats.ReportedStat
	notes      []string
}

// statSuffixes are the per-metric statistics metrics_summary writes besides
// the quantiles (token_benchmark_ray.py; flattened with "_" by
// utils.flatten_dict).
var statSuffixes = []string{"mean", "min", "max", "stddev"}

// quantileKey matches results_<metric>_quantiles_p<NN>.
var quantileKey = regexp.MustCompile(`^results_(.+)_quantiles_(p\d+)$`)

// readSummary reads and parses the summary at path, through in
// (ingest.Input.ReadFile).
func readSummary(in *ingest.Input, opt ingest.Options, path string) (*summary, error) {
	src, raw, err := in.ReadFile(path, "summary", opt)
	if err != nil {
		return nil, err
	}
	s, err := parseSummary(filepath.Base(path), raw)
	if err != nil {
		// The position is in the text parseSummary decodes, where each bare
		// NaN/Infinity before it gained two quotes.
		return nil, &ingest.FormatError{File: path, Where: ingest.JSONSyntaxWhere(pythonNonFinite(raw)), Msg: "unreadable summary", Err: err}
	}
	s.src = src
	return s, nil
}

// parseSummary reads the flat summary object. Python's json.dump writes
// NaN and Infinity as bare words (pandas gives NaN for the stddev of one
// value, and for every statistic when no request succeeded); they become
// Text values. results_* keys become Reported:
//
//   - results_<m>_quantiles_pNN → {m, "pNN"};
//   - results_<m>_mean|min|max|stddev → {m, stat}, for the metrics that have
//     quantiles (so results_num_completed_requests_per_min stays whole);
//     min and max of integer columns are strings ("22"), parsed as numbers;
//   - results_error_code_frequency, the repr of a Python dict
//     ("{429.0: 130}"), → {error_code_frequency, "value"} with the repr as
//     Text, plus {error_code_frequency, "<code>"} with each count;
//   - any other results_<x> → {x, "value"}.
//
// Every other key is configuration: ConfigJSON (redacted).
func parseSummary(file string, raw []byte) (*summary, error) {
	entries, err := ingest.ObjectEntries(pythonNonFinite(raw))
	if err != nil {
		return nil, err
	}
	bases := map[string]bool{}
	for _, e := range entries {
		if m := quantileKey.FindStringSubmatch(e.Key); m != nil {
			bases[m[1]] = true
		}
	}
	s := &summary{}
	var config []ingest.Entry
	for _, e := range entries {
		if !strings.HasPrefix(e.Key, "results_") {
			config = append(config, e)
			s.applyConfig(e)
			continue
		}
		s.addResult(file, e, bases)
	}
	s.configJSON, err = configJSON(config)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// applyConfig reads the Run fields among the configuration keys.
func (s *summary) applyConfig(e ingest.Entry) {
	switch e.Key {
	case "version":
		s.version = ingest.RawText(e.Value)
	case "model":
		s.model = ingest.RawText(e.Value)
	case "num_concurrent_requests":
		s.conc, _ = number(e.Value)
	case "timestamp":
		if v, _ := number(e.Value); v != nil {
			s.timestamp = ingest.Ptr(toInt(*v))
		}
	}
}

// addResult adds one results_* key to Reported.
func (s *summary) addResult(file string, e ingest.Entry, bases map[string]bool) {
	metric, stat := strings.TrimPrefix(e.Key, "results_"), "value"
	if m := quantileKey.FindStringSubmatch(e.Key); m != nil {
		metric, stat = m[1], m[2]
	} else {
		for _, suf := range statSuffixes {
			if b, ok := strings.CutSuffix(metric, "_"+suf); ok && bases[b] {
				metric, stat = b, suf
				break
			}
		}
	}
	rs := formats.ReportedStat{Metric: metric, Stat: stat, Unit: unitOf(metric), File: file}
	if v, err := number(e.Value); err == nil && v != nil {
		rs.Value = v
	} else if t := ingest.RawText(e.Value); t != "" {
		rs.Text = t
	} else {
		return
	}
	s.reported = append(s.reported, rs)
	if metric == "error_code_frequency" {
		s.reported = append(s.reported, codeCounts(file, rs.Text)...)
	}
}

// unitOf names a metric's unit from its name (LLMPerf states units only
// there): throughputs "tokens/s", *_s "s", number_*_tokens "tokens", else "".
func unitOf(metric string) string {
	switch {
	case strings.Contains(metric, "throughput"):
		return "tokens/s"
	case strings.HasSuffix(metric, "_s"):
		return "s"
	case strings.HasPrefix(metric, "number_") && strings.HasSuffix(metric, "_tokens"):
		return "tokens"
	}
	return ""
}

// codeNumber finds the number in one side of a Python dict repr item
// ("429.0", "np.float64(429.0)", "np.int64(130)").
var codeNumber = regexp.MustCompile(`[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`)

// codeCounts parses str(dict(error_codes.value_counts())): "{}",
// "{429.0: 130}", "{-100.0: 49, 500.0: 2}" (numpy 2 writes
// "np.float64(429.0): np.int64(130)"). Each code becomes a stat named by
// the integral code ("429"), valued by its count. Unparseable items are
// skipped: the whole repr is kept as Text anyway.
func codeCounts(file, repr string) []formats.ReportedStat {
	body := strings.TrimSpace(repr)
	body = strings.TrimSuffix(strings.TrimPrefix(body, "{"), "}")
	var out []formats.ReportedStat
	for _, item := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(item, ":")
		if !ok {
			continue
		}
		code, count := codeNumber.FindString(unwrap(k)), codeNumber.FindString(unwrap(v))
		c, err1 := strconv.ParseFloat(code, 64)
		n, err2 := strconv.ParseFloat(count, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		name := code
		if c == float64(int64(c)) {
			name = strconv.FormatInt(int64(c), 10)
		}
		out = append(out, formats.ReportedStat{Metric: "error_code_frequency", Stat: name, Value: ingest.Ptr(n), File: file})
	}
	return out
}

// unwrap returns what is inside the parentheses of a numpy scalar repr
// ("np.float64(429.0)" → "429.0"), or s itself.
func unwrap(s string) string {
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = strings.TrimSuffix(strings.TrimSpace(s[i+1:]), ")")
	}
	return s
}

// configJSON renders the configuration entries as one object, in file
// order, redacted.
func configJSON(config []ingest.Entry) (string, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range config {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(e.Value)
	}
	b.WriteByte('}')
	out, _ := ingest.RedactJSON(b.Bytes(), "summary")
	if out == "" {
		return "", errors.New("configuration keys do not form valid JSON")
	}
	return out, nil
}

// pythonNonFinite quotes the bare NaN, Infinity and -Infinity that Python's
// json module writes (outside strings), so that the text parses as JSON and
// the values survive as strings.
func pythonNonFinite(raw []byte) []byte {
	out, _ := ingest.QuotePythonNonFinite(raw, "")
	return out
}
