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
// series and the sample's position.
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
	path := in.Path
	label := opt.LabelFor(path)
	notes := ingest.NewNotes(path, opt)
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	dec := ingest.NewJSONDecoder(in, in.MaxValue())
	dec.UseNumber()
	var pts []formats.SeriesPoint
	responses, nseries := 0, 0
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
				samples := s.Values
				if r.Data.ResultType == "vector" {
					samples = [][]json.RawMessage{s.Value}
				}
				for k, smp := range samples {
					t, v, err := sample(smp)
					if err != nil {
						return ingest.Errorf(path, fmt.Sprintf("%s, series %d (%s{%s}), sample %d", where, si+1, name, ls, k+1), "%v", err)
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
	run := formats.Run{RunID: label, Tool: Name, ClockDomain: formats.ClockUnix, SourceFiles: []formats.SourceFile{src},
		TokentraceVersion: formats.Version, SchemaVersion: formats.SchemaVersion, Series: pts, Notes: notes.Lines}
	return sink.Run(&run)
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
