package slo

import (
	"strings"
	"testing"
)

// TestGateFileUnknownKey: a misspelt key of a gate file is named with its
// line, the valid keys and the closest one, not as the YAML decoder's
// "field gate not found in type slo.GateFile".
func TestGateFileUnknownKey(t *testing.T) {
	_, _, err := ParseGateFile("gates.yaml", []byte("slo: ttft<=500ms\ngate:\n  - p99(ttft) <= 800ms\n"))
	want := `gates.yaml:2: unknown key "gate" (valid keys: slo, gates, alpha, fail_on_few_samples, convention, capacity_target); did you mean "gates"?`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	_, _, err = ParseGateFile("g.yaml", []byte("slo: ttft<=500ms\nfail_on_few_sample: true\n"))
	if err == nil || !strings.Contains(err.Error(), `g.yaml:2: unknown key "fail_on_few_sample"`) || !strings.Contains(err.Error(), `did you mean "fail_on_few_samples"?`) {
		t.Errorf("fail_on_few_sample: %v", err)
	}
	// a key far from every valid one: no guess
	_, _, err = ParseGateFile("g.yaml", []byte("thresholds: 3\n"))
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), `unknown key "thresholds"`) {
		t.Errorf("thresholds: %v", err)
	}
	_, _, err = ParseGateFile("g.yaml", []byte("- p99(ttft) <= 800ms\n"))
	if err == nil || !strings.Contains(err.Error(), "g.yaml:1: a gate file is a mapping") {
		t.Errorf("a list: %v", err)
	}
	if _, _, err := ParseGateFile("g.yaml", []byte("slo: ttft<=500ms\ngates: [goodput >= 0.9]\nalpha: 0.01\n")); err != nil {
		t.Errorf("valid file: %v", err)
	}
}

func TestUnknownPresetSuggests(t *testing.T) {
	_, err := PresetText("caht")
	if err == nil || !strings.HasSuffix(err.Error(), `; did you mean "chat"?`) {
		t.Errorf("caht: %v", err)
	}
}
