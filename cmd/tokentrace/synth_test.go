package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSynthCommand: each format is written with truth.csv beside it, the
// same flags give the same bytes, and the written run imports.
func TestSynthCommand(t *testing.T) {
	for format, file := range map[string]string{"genai-perf": "profile_export.json", "aiperf": "profile_export.jsonl", "llmperf": "individual_responses.json"} {
		dir := t.TempDir()
		args := []string{"synth", "--format", format, "--requests", "12", "--seed", "3", "-o", dir}
		if _, err := run(t, args...); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		first, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		truth, err := os.ReadFile(filepath.Join(dir, "truth.csv"))
		if err != nil || strings.Count(string(truth), "\n") != 13 {
			t.Fatalf("%s: truth.csv %q (%v)", format, truth, err)
		}
		if _, err := run(t, args...); err != nil {
			t.Fatal(err)
		}
		again, _ := os.ReadFile(filepath.Join(dir, file))
		if string(first) != string(again) {
			t.Errorf("%s: same flags, different bytes", format)
		}
		out, err := run(t, "report", filepath.Join(dir, file))
		if err != nil || !strings.Contains(out, "requests 12:") {
			t.Errorf("%s: report %v:\n%s", format, err, out)
		}
	}
	if _, err := run(t, "synth", "--format", "csv", "-o", t.TempDir()); err == nil {
		t.Error("unknown format accepted")
	}
}
