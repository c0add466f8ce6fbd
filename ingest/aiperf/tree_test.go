package aiperf

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
)

// TestTreeLoad: a run whose files record no load takes it from its cell
// in AIPerf's multi-run tree (repeated, independent, single-trial, two
// parameters), with a note; a recorded load or another directory name
// is left alone.
func TestTreeLoad(t *testing.T) {
	for path, want := range map[string]string{
		"b/profile_runs/trial_0002/concurrency_10/profile_export.jsonl": "concurrency 10",
		"b/concurrency_4/profile_runs/trial_0001/profile_export.jsonl":  "concurrency 4",
		"b/request_rate_2.5/profile_export.jsonl":                       "rate 2.5",
		"b/concurrency_8__isl_512/profile_export.jsonl":                 "concurrency 8",
		"b/my-run/profile_export.jsonl":                                 "",
		"b/profile_runs/trial_0001/profile_export.jsonl":                "",
	} {
		var run formats.Run
		treeLoad(&run, filepath.FromSlash(path))
		got := ""
		switch {
		case run.Concurrency != nil:
			got = "concurrency " + num(*run.Concurrency)
		case run.RequestRateRPS != nil:
			got = "rate " + num(*run.RequestRateRPS)
		}
		if got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
		if want != "" && (len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "multi-run tree")) {
			t.Errorf("%s: notes %v", path, run.Notes)
		}
	}
	c := 2.0
	run := formats.Run{Concurrency: &c}
	treeLoad(&run, "b/concurrency_10/profile_export.jsonl")
	if *run.Concurrency != 2 || len(run.Notes) != 0 {
		t.Errorf("a recorded load was overwritten: %v %v", *run.Concurrency, run.Notes)
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
