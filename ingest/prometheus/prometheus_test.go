package prometheus

import (
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

func importString(t *testing.T, name, doc string) (*formats.Collector, error) {
	t.Helper()
	in, err := ingest.OpenReader(name, strings.NewReader(doc), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var c formats.Collector
	err = New().Import(in, ingest.Options{Label: "p"}, &c)
	return &c, err
}

// TestDocumentationExample: the range-query response the Prometheus
// documentation prints (docs/querying/api.md, "Range queries") gives two
// series of three points, times exact to the ns (1435781430.781 s).
func TestDocumentationExample(t *testing.T) {
	const path = "../../testdata/prometheus/api-doc-range-query/query_range_up.json"
	head, err := ingest.ReadHead(path)
	if err != nil {
		t.Fatal(err)
	}
	if !New().Detect(path, head) {
		t.Fatal("not recognized")
	}
	var c formats.Collector
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "up"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 1 || len(c.Requests) != 0 || c.Runs[0].Tool != Name {
		t.Fatalf("%+v", c.Runs)
	}
	s := c.Runs[0].Series
	if len(s) != 6 {
		t.Fatalf("%d points", len(s))
	}
	want := []formats.SeriesPoint{
		{Metric: "up", Labels: `instance="localhost:9090",job="prometheus"`, TimeNs: 1435781430781000000, ClockDomain: "unix", Value: 1},
		{Metric: "up", Labels: `instance="localhost:9091",job="node"`, TimeNs: 1435781460781000000, ClockDomain: "unix", Value: 1},
	}
	if s[0] != want[0] || s[5] != want[1] || s[3].Value != 0 {
		t.Errorf("points %+v", s)
	}
}

// TestSpecialValuesAndErrors: "NaN" and "+Inf" are kept; an expression
// without __name__ is named after the file; an error response, a sample
// that is not [time, "value"] and an empty file are errors naming where.
func TestSpecialValuesAndErrors(t *testing.T) {
	c, err := importString(t, "waiting.json", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1700000000,"NaN"],[1700000000.5,"+Inf"],[1.7000000015e9,"3"]]}]}}
{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"vllm:num_requests_waiting","engine":"0"},"value":[1700000002.25,"7"]}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Runs[0].Series
	if len(s) != 4 || s[0].Metric != "waiting" || !math.IsNaN(s[0].Value) || !math.IsInf(s[1].Value, 1) || s[1].TimeNs != 1700000000500000000 ||
		s[2].TimeNs != 1700000001500000000 || s[3].Metric != "vllm:num_requests_waiting" || s[3].Labels != `engine="0"` || s[3].TimeNs != 1700000002250000000 || s[3].Value != 7 {
		t.Fatalf("%+v", s)
	}
	for doc, want := range map[string]string{
		`{"status":"error","errorType":"bad_data","error":"parse error"}`:                                             `response 1: status "error": bad_data: parse error`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"x"},"values":[[1,2]]}]}}`: `response 1, series 1 (x{}), sample 1: value 2: want a string`,
		`{"status":"success","data":{"resultType":"string","result":[1,"a"]}}`:                                        `resultType "string"`,
		``: `empty file`,
	} {
		_, err := importString(t, "q.json", doc)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}

// TestSeriesChecks: what used to pass silently. Two series of one name
// and labels in a response (they were merged: a queue of 1000 beside one
// of 5) and a matrix series written with "value" (it was dropped) are
// errors naming the response and series; a point read twice is kept once
// when the values agree (overlapping ranges) and an error when they
// differ; a negative value of a metric that cannot be negative is NaN and
// counted (series_value_negative), another gauge's is kept.
func TestSeriesChecks(t *testing.T) {
	const (
		head = `{"status":"success","data":{"resultType":"matrix","result":[`
		tail = `]}}`
	)
	for _, tc := range []struct{ name, doc, err string }{
		{"duplicate series", head + `{"metric":{"__name__":"up","job":"a"},"values":[[1,"1"]]},{"metric":{"job":"a","__name__":"up"},"values":[[2,"1000"]]}` + tail,
			`p.json: response 1, series 2 (up{job="a"}): the same metric and labels as series 1: two series would be merged into one`},
		{"value in a matrix", head + `{"metric":{"__name__":"up"},"value":[1,"1"]}` + tail,
			`p.json: response 1, series 1 (up{}): a matrix series has no "values" (it has "value"`},
		{"values in a vector", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up"},"values":[[1,"1"]]}]}}`,
			`p.json: response 1, series 1 (up{}): a vector sample has no "value" (it has "values"`},
		{"point twice, two values", head + `{"metric":{"__name__":"up"},"values":[[1,"1"],[2,"1"]]}` + tail + "\n" + head + `{"metric":{"__name__":"up"},"values":[[2,"0"]]}` + tail,
			`p.json: response 2, series 1 (up{}), sample 1: value 0 at 2000000000 ns differs from 1 at response 1, series 1 (up{}), sample 2`},
	} {
		if _, err := importString(t, "p.json", tc.doc); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}

	var warnings []string
	doc := head + `{"metric":{"__name__":"vllm:num_requests_waiting"},"values":[[1,"-2"],[2,"3"],[3,"-1"]]},{"metric":{"__name__":"gpu_temp_delta"},"values":[[1,"-4"]]}` + tail +
		"\n" + head + `{"metric":{"__name__":"gpu_temp_delta"},"values":[[1,"-4"],[2,"5"]]}` + tail
	in, err := ingest.OpenReader("p.json", strings.NewReader(doc), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var c formats.Collector
	if err := New().Import(in, ingest.Options{Label: "p", Warn: func(m string) { warnings = append(warnings, m) }}, &c); err != nil {
		t.Fatal(err)
	}
	s := c.Runs[0].Series
	if len(s) != 5 || !math.IsNaN(s[0].Value) || s[1].Value != 3 || !math.IsNaN(s[2].Value) || s[3].Value != -4 || s[4].Value != 5 {
		t.Fatalf("series %+v", s)
	}
	ch := c.Runs[0].Checks
	if len(ch) != 1 || ch[0].Code != ingest.CheckSeriesNegative || ch[0].Field != "vllm:num_requests_waiting" || ch[0].Requests != 0 ||
		ch[0].Detail != `first response 1, series 1 (vllm:num_requests_waiting{}), sample 1: -2; 2 point(s); set to NaN` {
		t.Errorf("checks %+v", ch)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "kept once: 1") || !strings.Contains(warnings[1], "(series_value_negative, field vllm:num_requests_waiting): first response 1") {
		t.Errorf("warnings %q", warnings)
	}
}
