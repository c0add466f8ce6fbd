package render

import (
	"bytes"
	"encoding/xml"
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/slo"
)

// gateWordingReport has the three results the wording rules are about: a
// P99 that failed with an interval too few samples cannot bound above, an
// error rate gate written in percent, and a P99 that failed on a pass-like
// bound column.
func gateWordingReport() *slo.GateReport {
	nan := analyze.F(math.NaN())
	return &slo.GateReport{Convention: "tokentrace", Results: []slo.GateResult{
		{Gate: "p99(ttft)<=500ms", Subject: "run-a", Status: "fail", Value: 651.2, Op: "<=", Bound: 500, Unit: "ms", N: 40,
			CI95: &[2]analyze.F{625.7, nan}, Source: "recomputed", Reason: "651.2 ms is not <= 500.0 ms"},
		{Gate: "error_rate<=1%", Subject: "run-a", Status: "fail", Value: 0.1, Op: "<=", Bound: 0.01, Unit: "fraction", N: 40, Source: "recomputed"},
		{Gate: "p99(tpot)<=25ms", Subject: "run-b", Status: "fail", Value: 51.61, Op: "<=", Bound: 25, Unit: "ms", N: 300, Source: "recomputed"},
		{Gate: "goodput>=0.9", Subject: "run-b", Status: "pass", Value: 0.95, Op: ">=", Bound: 0.9, Unit: "fraction", N: 300, Source: "recomputed"},
		{Gate: "p99(e2e)<=2s", Subject: "run-c", Status: "fail", Value: nan, Op: "<=", Bound: 2000, Unit: "ms", Source: "recomputed", Reason: "no completed request"},
		{Gate: "p99(ttft)<=1s", Subject: "run-c", Status: "fail", Value: 900, Op: "<=", Bound: 1000, Unit: "ms", N: 20, Source: "recomputed",
			CI95: &[2]analyze.F{nan, nan}, Reason: "too few samples"},
	}}
}

// TestGateWording: no "null" for an interval's unbounded end, percent
// gates in percent, JUnit failures that read as failures.
func TestGateWording(t *testing.T) {
	g := gateWordingReport()
	var text, md, junit bytes.Buffer
	if err := WriteGateText(&text, g); err != nil {
		t.Fatal(err)
	}
	if err := WriteGateMarkdown(&md, g); err != nil {
		t.Fatal(err)
	}
	if err := WriteGateJUnit(&junit, g); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), md.String()} {
		if strings.Contains(out, "null") {
			t.Errorf("output says null:\n%s", out)
		}
		for _, want := range []string{"625.7 ms, unbounded: too few samples for an upper bound", "10%", "undefined", "1%", "95% CI unbounded (too few samples to bound it)"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "0.01") {
			t.Errorf("the percent gate shows a fraction:\n%s", out)
		}
	}
	if !strings.Contains(text.String(), "FAIL    error_rate<=1%    run-a  10%        <= 1%        n=40") {
		t.Errorf("text row of the percent gate:\n%s", text.String())
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Out     string `xml:"system-out"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	cases := doc.Suites[0].Cases
	want := []struct{ text, message string }{
		{"651.2 ms > bound 500.0 ms; 95% CI [625.7 ms, unbounded: too few samples for an upper bound]; n=40; 651.2 ms is not <= 500.0 ms", "651.2 ms is not <= 500.0 ms"},
		{"10% > bound 1%; n=40", "gate failed: 10% > bound 1%"},
		{"51.61 ms > bound 25.00 ms; n=300", "gate failed: 51.61 ms > bound 25.00 ms"},
		{"", ""},
		{"value undefined, bound <= 2000 ms; no completed request", "no completed request"},
		{"900.0 ms <= 1000 ms holds, but the gate fails; 95% CI unbounded (too few samples to bound it); n=20; too few samples", "too few samples"},
	}
	for i, w := range want {
		c := cases[i]
		if w.text == "" {
			if c.Failure != nil || c.Out != "95% >= 90%; n=300" {
				t.Errorf("case %d (pass): failure %v, out %q", i, c.Failure, c.Out)
			}
			continue
		}
		if c.Failure == nil || c.Failure.Text != w.text || c.Failure.Message != w.message {
			t.Errorf("case %d %s: failure %+v\nwant text %q message %q", i, c.Name, c.Failure, w.text, w.message)
		}
	}
}
