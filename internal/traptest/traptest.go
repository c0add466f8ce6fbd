// Package traptest holds what the importers' data-check (trap) tests
// share: import a small file in a tool's layout, report it under a
// convention with the catalogue's fixes applied or not, and check the
// statistics, the data-check warnings and the reproduction of the tool's
// own numbers.
package traptest

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Reports imports path with im and reports every run under c, with the
// fixes of tools' catalogue applied (corrections) or not (report
// --no-corrections), reproduction included.
func Reports(t *testing.T, im ingest.Importer, path string, tools *convention.Set, c convention.Convention, corrections bool) []*analyze.RunReport {
	t.Helper()
	a := analyze.NewAnalyzer(c)
	a.SetCorrections(tools.Fixes(), corrections)
	if err := ingest.ImportFile(im, path, ingest.Options{Label: "fx"}, a); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: func(*formats.Run) convention.Convention { return c }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) == 0 {
		t.Fatalf("%s: no run", path)
	}
	return rep.Runs
}

// Report is the first run of Reports.
func Report(t *testing.T, im ingest.Importer, path string, tools *convention.Set, c convention.Convention, corrections bool) *analyze.RunReport {
	t.Helper()
	return Reports(t, im, path, tools, c, corrections)[0]
}

// WantMean fails unless x's mean in rr is want (relative 1e-9, NaN equal
// to NaN: an undefined statistic).
func WantMean(t *testing.T, rr *analyze.RunReport, x *analyze.Metric, want float64) {
	t.Helper()
	WantMeanWithin(t, rr, x, want, 1e-9)
}

// WantMeanWithin is WantMean with a relative tolerance: for inputs whose
// times are float seconds since the epoch (a resolution of about 0.24 µs).
func WantMeanWithin(t *testing.T, rr *analyze.RunReport, x *analyze.Metric, want, rel float64) {
	t.Helper()
	got := rr.Metrics.Of(x).Mean
	if math.IsNaN(want) && math.IsNaN(got) {
		return
	}
	if math.IsNaN(got) || math.Abs(got-want) > rel*math.Max(1, math.Abs(want)) {
		t.Errorf("%s %s mean %v, want %v", rr.RunID, x.Key, got, want)
	}
}

// Warning returns rr's warning with code, failing when there is none.
func Warning(t *testing.T, rr *analyze.RunReport, code string) analyze.Warning {
	t.Helper()
	for _, w := range rr.Warnings {
		if w.Code == code {
			return w
		}
	}
	t.Fatalf("%s: no %s warning: %+v", rr.RunID, code, rr.Warnings)
	return analyze.Warning{}
}

// NoWarning fails when rr has a warning with code.
func NoWarning(t *testing.T, rr *analyze.RunReport, code string) {
	t.Helper()
	for _, w := range rr.Warnings {
		if w.Code == code {
			t.Errorf("%s: unexpected %s warning: %+v", rr.RunID, code, w)
		}
	}
}

// Reproduction checks rr's reproduction of the tool's statistics: each
// "metric stat" of reproduced is reproduced, and every item that differs
// gives a reason (the trap's, or another the tool's knowledge has). It
// returns the number of items that differ and name the trap code.
func Reproduction(t *testing.T, rr *analyze.RunReport, code string, reproduced ...string) int {
	t.Helper()
	if rr.Reproduction == nil {
		t.Fatalf("%s: no reproduction", rr.RunID)
	}
	named := 0
	seen := map[string]bool{}
	for _, it := range rr.Reproduction.Items {
		key := it.Metric + " " + it.Stat
		seen[key] = true
		switch {
		case slices.Contains(reproduced, key):
			if it.Status != "reproduced" {
				t.Errorf("%s: the tool's %s not reproduced: %+v", rr.RunID, key, it)
			}
		case it.Status == "differs" && it.Reason == "":
			t.Errorf("%s: %s differs without a reason (%s expected to give one): %+v", rr.RunID, key, code, it)
		case it.Status == "differs" && strings.Contains(it.Reason, code):
			named++
		}
	}
	for _, k := range reproduced {
		if !seen[k] {
			t.Errorf("%s: no reproduction item %s", rr.RunID, k)
		}
	}
	return named
}

// Check returns the run's data check with code, failing when there is
// none.
func Check(t *testing.T, run *formats.Run, code string) formats.DataCheck {
	t.Helper()
	for _, c := range run.Checks {
		if c.Code == code {
			return c
		}
	}
	t.Fatalf("run %s: no %s check: %+v", run.RunID, code, run.Checks)
	return formats.DataCheck{}
}
