package mlperf

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

// TestTrapFirstTokenNotMeasured: a LoadGen Server summary whose system
// under test never reported first tokens (mlcommons/inference#1788; the
// fixture's results section is the one quoted in the issue): every
// first-token statistic 0, "Result is : INVALID" with "Performance
// constraints satisfied : Yes", an empty TTFT early-stopping block and a
// failed TPOT one.
//
// Import: the nine first-token statistics are null (not 0), the check
// records them as written; the verdict lines stay in reported text and
// the notes. The report (canonical, with or without corrections) carries
// the check as "set to null"; under MLPerf's convention nothing differs
// (a summary: nothing to recompute) and no first-token item reports 0.
// A summary with LoadGen's invalid-latency sentinel (INT64_MIN) as one
// first-token statistic gets that one nulled and the others kept.
func TestTrapFirstTokenNotMeasured(t *testing.T) {
	path := filepath.Join("testdata", "trap-ttft-zero", summaryFile)
	run, warnings := importFile(t, path, "fx")
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	ch := traptest.Check(t, &run, TrapFirstTokenNotMeasured)
	if ch.Corrected || ch.Requests != 0 || ch.Field != "first_token_latency_ns" ||
		ch.Detail != "every first-token statistic is 0: the SUT reported no first token; first-token statistics as written (mlperf_log_summary.txt): min 0, max 0, mean 0, p50 0, p90 0, p95 0, p97 0, p99 0, p99.9 0" {
		t.Errorf("check %+v", ch)
	}
	nulls := 0
	for _, s := range run.Reported {
		switch {
		case s.Metric == mFirstTok && s.Value != nil:
			t.Errorf("%s %s = %v, want null", s.Metric, s.Stat, *s.Value)
		case s.Metric == mFirstTok:
			nulls++
		case s.Metric == mTPOT && s.Stat == "p99" && (s.Value == nil || *s.Value != 1167012345):
			t.Errorf("TPOT p99 %v: the other statistics stay", s.Value)
		}
	}
	if nulls != 9 {
		t.Errorf("%d null first-token statistics, want 9", nulls)
	}
	for _, want := range []string{
		"result INVALID",
		"invalid because: * The test exited early, before enough queries were issued.\nSee the detailed log for why this may have occurred.",
		"performance constraints satisfied: Yes (LoadGen compared first-token latencies that were never measured with ttft_latency: it says nothing about TTFT)",
		"early stopping satisfied: NO",
		"TTFT early stopping result: empty (LoadGen printed no verdict)",
		"TPOT early stopping result: * Run unsuccessful. * Processed 33 queries. * Would need to run at least 805 more queries, with the run being successful if every additional query were under latency.",
	} {
		if !slices.Contains(run.Notes, want) {
			t.Errorf("no note %q in %q", want, run.Notes)
		}
	}

	for _, corrections := range []bool{true, false} {
		rr := traptest.Report(t, New(), path, tools, analyze.Canonical, corrections)
		w := traptest.Warning(t, rr, TrapFirstTokenNotMeasured)
		if !w.DataCheck || !strings.Contains(w.Message, "set to null (unknown), not 0") || w.Source != "https://github.com/mlcommons/inference/issues/1788" {
			t.Errorf("corrections %v: warning %+v", corrections, w)
		}
	}
	own := traptest.Report(t, New(), path, tools, Profile, true)
	traptest.Reproduction(t, own, TrapFirstTokenNotMeasured)
	for _, it := range own.Reproduction.Items {
		if it.Metric == mFirstTok && float64(it.Reported) == 0 {
			t.Errorf("first-token item reports 0: %+v", it)
		}
	}

	// LoadGen's invalid-latency sentinel as the minimum.
	src, err := os.ReadFile(filepath.Join(corpus, "nvidia-dgxh100-llama2-70b-99.9-server-v4.1", summaryFile))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "Min First Token latency (ns)                : 46375730", "Min First Token latency (ns)                : -9223372036854775808", 1)
	if edited == string(src) {
		t.Fatal("the corpus summary has no Min First Token line to edit")
	}
	p := filepath.Join(t.TempDir(), summaryFile)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	run, _ = importFile(t, p, "sentinel")
	ch = traptest.Check(t, &run, TrapFirstTokenNotMeasured)
	if !strings.HasPrefix(ch.Detail, "negative first-token statistics") || !strings.HasSuffix(ch.Detail, "min -9223372036854775808") {
		t.Errorf("sentinel check %+v", ch)
	}
	for _, s := range run.Reported {
		if s.Metric == mFirstTok && (s.Stat == "min") != (s.Value == nil) {
			t.Errorf("%s %s = %v", s.Metric, s.Stat, s.Value)
		}
	}
}

// TestTrapsNotOnCleanData: the MLPerf corpus runs and the other fixtures
// trip no check (their first-token statistics are measurements, or the
// scenario has none).
func TestTrapsNotOnCleanData(t *testing.T) {
	paths := []string{}
	for _, name := range corpusCases(t) {
		paths = append(paths, filepath.Join(corpus, name, summaryFile))
	}
	fx, _ := filepath.Glob(filepath.Join("testdata", "*", "mlperf_log_*.txt"))
	for _, p := range fx {
		if !strings.Contains(p, "trap-") {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		var c formats.Collector
		if err := ingest.ImportFile(New(), p, ingest.Options{}, &c); err != nil {
			continue // the malformed fixtures fail, as they must
		}
		for _, r := range c.Runs {
			if len(r.Checks) > 0 {
				t.Errorf("%s: checks %+v", p, r.Checks)
			}
		}
	}
}
