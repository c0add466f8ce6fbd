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
