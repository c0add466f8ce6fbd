// Package prometheus imports a Prometheus HTTP API query response saved to
// a file — typically a range query over an inference server's metrics
// during a benchmark:
//
//	curl -G http://prometheus:9090/api/v1/query_range \
//	  --data-urlencode 'query={__name__=~"vllm:num_requests_(waiting|running)|vllm:kv_cache_usage_perc"}' \
//	  --data-urlencode start=2026-07-29T22:10:00Z --data-urlencode end=2026-07-29T23:50:00Z \
//	  --data-urlencode step=5s > prometheus.json
//
// The response format is the one the Prometheus documentation gives
// (prometheus.io/docs/prometheus/latest/querying/api/, "Expression query
// result formats"): {"status": "success", "data": {"resultType":
// "matrix", "result": [{"metric": {labels}, "values": [[<unix seconds>,
// "<value>"], …]}]}}; an instant query's "vector" ({"value": [t, "v"]})
// and "scalar" results are read too. Several responses may follow one
// another in one file (one per line, or concatenated).
//
// Each sample becomes one point of the run's Series: the metric is the
// series' __name__ label (for an expression without one, such as
// sum(…), the file's name without its extension), the other labels in
// Prometheus text form, the time in Unix ns (Prometheus timestamps have
// millisecond resolution; the decimal is converted exactly), the value as
// Prometheus wrote it ("NaN", "+Inf" kept). The run has no requests (tool
// "prometheus"); the analysis places its series beside the client runs
// whose clock (unix) and time span it shares.
//
// A response with "status": "error" is an error naming its errorType and
// error; a sample that is not [number, "string"] is an error naming the
// series and the sample's position. So is a series whose metric and labels
// repeat an earlier series of the same response (Prometheus never returns
// one twice; the two would be merged into one), a matrix series without
// "values" (one written with a vector's "value" used to be dropped
// silently) and a vector sample without "value", and a point (series and
// time) read twice with two values; read twice with the same value (two
// responses over overlapping ranges) it is kept once and counted in a
// warning. A negative value of a metric that cannot be negative
// (nonNegative: counters, histogram parts, inference-server metrics) is
// NaN in the series and counted in the run's series_value_negative check.
package prometheus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Name is the format name accepted by --from.
const Name = "prometheus"

// New returns the importer.
func New() ingest.Importer { return importer{} }

type importer struct{}

func (importer) Name() string                    { return Name }
func (importer) Companions(path string) []string { return nil }

// Detect answers yes for a JSON object whose head holds both "status" and
// "resultType" keys (an API response), before 64 KiB.
func (importer) Detect(path string, head []byte) bool {
	h := bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	return len(h) > 0 && h[0] == '{' && bytes.Contains(h, []byte(`"resultType"`)) && bytes.Contains(h, []byte(`"status"`))
}

type response struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      *struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
	Warnings []string `json:"warnings"`
}

type series struct {
	Metric map[string]string   `json:"metric"`
	Values [][]json.RawMessage `json:"values"`
	Value  []json.RawMessage   `json:"value"`
}

// Import reads every response of the file into one run's Series.
func (importer) Import(in *ingest.Input, opt ingest.Options, sink formats.Sink) error {
	// a query result's points are held with an index of every one
	// (~400 B a point, against the 100 B a telemetry point costs): a
	// quarter of the series cap
	maxPoints := opt.MaxSeriesPoints
	if maxPoints <= 0 {
		maxPoints = ingest.DefaultMaxSeriesPoints
	}
	maxPoints = max(maxPoints/4, 1)
	path := in.Path
	label := opt.LabelFor(path)
	notes := ingest.NewNotes(path, opt)
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	dec := ingest.NewJSONDecoder(in, in.MaxValue())
	dec.UseNumber()
	var pts []formats.SeriesPoint
	responses, nseries := 0, 0
	negative := map[string]*formats.DataCheck{} // by metric
	var negOrder []string
	// where each point was first read, by series and time: a point read
	// twice (two responses over overlapping ranges) must agree
	seenAt := map[pointKey]string{}
	repeats := 0
	for {
		var r response
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &ingest.FormatError{File: path, Where: fmt.Sprintf("response %d", responses+1), Msg: "not a Prometheus API response", Err: err}
		}
		responses++
		where := fmt.Sprintf("response %d", responses)
		if r.Status != "success" {
			return ingest.Errorf(path, where, "status %q: %s: %s", r.Status, r.ErrorType, r.Error)
		}
		if r.Data == nil {
			return ingest.Errorf(path, where, `no "data"`)
		}
		for _, w := range r.Warnings {
			notes.Warn(where + ": Prometheus warned: " + w)
		}
		switch r.Data.ResultType {
		case "matrix", "vector":
			var ss []series
			if err := json.Unmarshal(r.Data.Result, &ss); err != nil {
				return ingest.Errorf(path, where, "result: %v", err)
			}
			inResponse := map[string]int{} // series key → its number in the response
			for si, s := range ss {
				name := s.Metric["__name__"]
				if name == "" {
					name = stem
				}
				labels := map[string]string{}
				for k, v := range s.Metric {
					if k != "__name__" {
						labels[k] = v
					}
				}
				ls := formats.LabelString(labels)
				at := fmt.Sprintf("%s, series %d (%s{%s})", where, si+1, name, ls)
				if first, dup := inResponse[name+"{"+ls+"}"]; dup {
					// Prometheus never returns a series twice: two series of
					// one name and labels would be merged into one (a queue
					// of 1000 beside one of 5, a KV cache at 170%)
					return ingest.Errorf(path, at, "the same metric and labels as series %d: two series would be merged into one", first)
				}
				inResponse[name+"{"+ls+"}"] = si + 1
				samples := s.Values
				switch {
				case r.Data.ResultType == "vector" && s.Value == nil:
					return ingest.Errorf(path, at, `a vector sample has no "value"%s`, also(s.Values != nil, `(it has "values", a matrix's)`))
				case r.Data.ResultType == "vector":
					samples = [][]json.RawMessage{s.Value}
				case s.Values == nil:
					return ingest.Errorf(path, at, `a matrix series has no "values"%s`, also(s.Value != nil, `(it has "value", a vector's: one sample, or a file edited by hand)`))
				}
				for k, smp := range samples {
					t, v, err := sample(smp)
					sat := fmt.Sprintf("%s, sample %d", at, k+1)
					if err != nil {
						return ingest.Errorf(path, sat, "%v", err)
					}
					key := pointKey{name, ls, t}
					if first, dup := seenAt[key]; dup {
						if prev := pts[indexOf(pts, key)].Value; prev != v && !(math.IsNaN(prev) && math.IsNaN(v)) {
							return ingest.Errorf(path, sat, "value %s at %d ns differs from %s at %s: the same series at the same time", ingest.FormatValue(v), t, ingest.FormatValue(prev), first)
						}
						repeats++
						continue
					}
					seenAt[key] = sat
					if v < 0 && nonNegative(name) {
						c := negative[name]
						if c == nil {
							c = &formats.DataCheck{Code: ingest.CheckSeriesNegative, Field: name, Detail: "first " + sat + ": " + ingest.FormatValue(v)}
							negative[name] = c
							negOrder = append(negOrder, name)
						}
						c.Requests++ // here: the points
						v = math.NaN()
					}
					if int64(len(pts)) >= maxPoints {
						return ingest.Errorf(path, sat, "more than %d series points (the cap, from --memory-budget: each point of a query result is held with "+
							"its series' index, ~400 bytes): query a shorter range or a longer step, or raise --memory-budget", maxPoints)
					}
					pts = append(pts, formats.SeriesPoint{Metric: name, Labels: ls, TimeNs: t, ClockDomain: formats.ClockUnix, Value: v})
				}
				nseries++
			}
		case "scalar":
			var smp []json.RawMessage
			if err := json.Unmarshal(r.Data.Result, &smp); err != nil {
				return ingest.Errorf(path, where, "result: %v", err)
			}
			t, v, err := sample(smp)
			if err != nil {
				return ingest.Errorf(path, where, "%v", err)
			}
			pts = append(pts, formats.SeriesPoint{Metric: stem, TimeNs: t, ClockDomain: formats.ClockUnix, Value: v})
			nseries++
		default:
			return ingest.Errorf(path, where, "resultType %q: want matrix, vector or scalar", r.Data.ResultType)
		}
	}
	if responses == 0 {
		return ingest.Errorf(path, "", "empty file: no response")
	}
	src, err := in.SourceFile("series")
	if err != nil {
		return err
	}
	notes.Add(fmt.Sprintf("Prometheus query result: %d response(s), %d series, %d points (runs.series)", responses, nseries, len(pts)))
	if repeats > 0 {
		notes.Warn(fmt.Sprintf("points read twice with the same value (responses over overlapping ranges), kept once: %d", repeats))
	}
	var checks []formats.DataCheck
	for _, name := range negOrder {
		c := *negative[name]
		c.Detail += fmt.Sprintf("; %d point(s); set to NaN", c.Requests)
		c.Requests = 0 // no request: the run's series
		checks = append(checks, c)
	}
	ingest.WarnChecks(notes.WarnOnly, "", checks)
	run := formats.Run{RunID: label, Tool: Name, ClockDomain: formats.ClockUnix, SourceFiles: []formats.SourceFile{src},
		TokentraceVersion: formats.Version, SchemaVersion: formats.SchemaVersion, Series: pts, Notes: notes.Lines, Checks: checks}
	return sink.Run(&run)
}

// pointKey is one point of one series.
type pointKey struct {
	metric, labels string
	timeNs         int64
}

// indexOf finds the point of key in pts (the last one first: a repeat is
// rare and usually of a recent series).
func indexOf(pts []formats.SeriesPoint, key pointKey) int {
	for i := len(pts) - 1; i >= 0; i-- {
		if p := &pts[i]; p.Metric == key.metric && p.Labels == key.labels && p.TimeNs == key.timeNs {
			return i
		}
	}
	return -1
}

func also(b bool, s string) string {
	if b {
		return " " + s
	}
	return ""
}

// nonNegative reports whether metric's values cannot be negative: a
// counter or a histogram's or summary's part (Prometheus's naming
// conventions: _total, _count, _sum, _bucket, _created), or any metric of
// an inference server (vllm:, sglang:, tgi_, nv_, trtllm_, lmcache:
// prefixes: queue lengths, running requests, cache usage, token counts,
// latencies). Another gauge may be negative (a temperature, a delta) and
// is kept as written. A negative value of such a metric is counted
// (series_value_negative) and set to NaN (unknown).
func nonNegative(metric string) bool {
	for _, suf := range []string{"_total", "_count", "_sum", "_bucket", "_created"} {
		if strings.HasSuffix(metric, suf) {
			return true
		}
	}
	for _, pre := range []string{"vllm:", "sglang:", "tgi_", "nv_", "trtllm_", "lmcache:"} {
		if strings.HasPrefix(metric, pre) {
			return true
		}
	}
	return false
}

// sample reads [<unix seconds>, "<value>"].
func sample(smp []json.RawMessage) (int64, float64, error) {
	if len(smp) != 2 {
		return 0, 0, fmt.Errorf("want [time, \"value\"], got %d elements", len(smp))
	}
	t, err := unixNs(string(smp[0]))
	if err != nil {
		return 0, 0, err
	}
	var vs string
	if err := json.Unmarshal(smp[1], &vs); err != nil {
		return 0, 0, fmt.Errorf("value %s: want a string", smp[1])
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("value %q: not a number", vs)
	}
	return t, v, nil
}

// unixNs converts a decimal Unix time in seconds ("1785363040.452") to ns
// exactly (digits past the ninth decimal are rounded).
func unixNs(s string) (int64, error) {
	bad := fmt.Errorf("time %s: want Unix seconds", s)
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 9e9 {
			return 0, bad
		}
		return int64(math.Round(f * 1e9)), nil
	}
	ip, fp, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(ip, 10, 64)
	if err != nil || sec < 0 || sec > 9e9 {
		return 0, bad
	}
	var ns int64
	for i := 0; i < 9; i++ {
		ns *= 10
		if i < len(fp) {
			d := fp[i]
			if d < '0' || d > '9' {
				return 0, bad
			}
			ns += int64(d - '0')
		}
	}
	if len(fp) > 9 && fp[9] >= '5' {
		ns++
	}
	return sec*1e9 + ns, nil
}
