package convention

import (
	"strings"
	"testing"
)

func TestSetLookup(t *testing.T) {
	canon := Convention{Name: "tokentrace"}
	a := Convention{Name: "x@1", Tool: "x"}
	b := WithName(a, "x@2", map[string]string{"itl": "x 2.0"})
	tool := Tool{Name: "x", Profiles: []Convention{a, b}, Aliases: map[string]string{"x": "x@2", "x@1.5": "x@1"}}
	s := NewSet(canon, tool)
	for name, want := range map[string]string{"tokentrace": "tokentrace", "canonical": "tokentrace", "x": "x@2", "x@1": "x@1", "x@1.5": "x@1"} {
		c, err := s.Lookup(name)
		if err != nil || c.Name != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", name, c.Name, err, want)
		}
	}
	if _, err := s.Lookup("y"); err == nil || !strings.Contains(err.Error(), "known: tokentrace, x@1, x@2") {
		t.Errorf("unknown name: %v", err)
	}
	// a run names its detected convention, else its tool's default
	if c, ok := s.ForRun("x@1", "x"); !ok || c.Name != "x@1" {
		t.Errorf("ForRun(x@1) = %q", c.Name)
	}
	if c, ok := s.ForRun("", "x"); !ok || c.Name != "x@2" {
		t.Errorf("ForRun(, x) = %q", c.Name)
	}
	if _, ok := s.ForRun("", "z"); ok {
		t.Error("a tool without profiles has none")
	}
	if got := len(s.Profiles()); got != 3 || s.Profiles()[0].Name != "tokentrace" {
		t.Errorf("profiles %v", s.Profiles())
	}
	if b.Sources["itl"] != "x 2.0" || a.Sources["itl"] != "" {
		t.Error("WithName must copy the sources, not share them")
	}
	var nilSet *Set
	if nilSet.Tool("x") != nil || nilSet.Metrics(a) != nil || nilSet.StatsRule(a) != StatsNumpy {
		t.Error("a nil Set knows no tool")
	}
}

func TestDifferenceApplies(t *testing.T) {
	d := Difference{Metric: "inter_chunk_latency", StatPrefix: "p", MinVersion: "0.10", Reason: "t-digest"}
	cases := []struct {
		metric, stat, version string
		want                  bool
	}{
		{"inter_chunk_latency", "p99", "0.10.0", true},
		{"inter_chunk_latency", "p99", "0.11", true},
		{"inter_chunk_latency", "p99", "1.0.0", true},
		{"inter_chunk_latency", "p99", "0.9.3", false}, // 9 < 10: numbers, not strings
		{"inter_chunk_latency", "avg", "0.10.0", false},
		{"time_to_first_token", "p99", "0.10.0", false},
		{"inter_chunk_latency", "p99", "dev", false},
	}
	for _, c := range cases {
		if got := d.Applies(c.metric, c.stat, c.version, nil); got != c.want {
			t.Errorf("%s %s %s: %v, want %v", c.metric, c.stat, c.version, got, c.want)
		}
	}
	n := Difference{RunNote: "sampled:"}
	if !n.Applies("m", "mean", "", []string{"sampled: 100 of 1000 requests"}) || !n.Applies("m", "mean", "", []string{"x; sampled: 3"}) {
		t.Error("a run note starting the note, or after a space, applies")
	}
	if n.Applies("m", "mean", "", []string{"unsampled:"}) || n.Applies("m", "mean", "", nil) {
		t.Error("no such note: does not apply")
	}
}

func TestPrefixReasonAndCounts(t *testing.T) {
	tool := &Tool{MetricPrefixes: map[string]string{"http_req_": "not imported"}}
	if tool.PrefixReason("http_req_duration") != "not imported" || tool.PrefixReason("ttft") != "" {
		t.Error("prefix reason")
	}
	var none *Tool
	if none.PrefixReason("http_req_x") != "" {
		t.Error("nil tool")
	}
	c := Convention{OutputTokens: []CountSource{CountServerUsage, CountTokenizer}}
	if !c.CountsFrom(CountTokenizer) || c.CountsFrom(CountToolReported) {
		t.Error("CountsFrom")
	}
}
