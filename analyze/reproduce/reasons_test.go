package reproduce_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/analyze/tokenizer"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// TestNoReasonlessDifferences: over every bundled corpus run and every
// importer's hand-made fixture, each reproduction item under the run's
// own tool convention (with the data checks' fixes known, as the command
// line runs it) is reproduced, or says why not: no item differs or is not
// reproducible with an empty reason.
func TestNoReasonlessDifferences(t *testing.T) {
	set := convention.NewSet(analyze.Canonical, registry.Tools()...).WithTraps(analyze.Traps...)
	opt := analyze.Options{Tools: set, Reproduce: reproduce.Reproducer(set)}
	opt.Convention = func(r *formats.Run) convention.Convention {
		if c, ok := set.ForRun(r.Convention, r.Tool); ok {
			return c
		}
		return analyze.Canonical
	}
	corpus, _ := filepath.Glob("../../testdata/*/*")
	fixtures, _ := filepath.Glob("../../ingest/*/testdata/*")
	var dirs []string
	for _, d := range append(corpus, fixtures...) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	runs, items := 0, 0
	for _, dir := range dirs {
		jobs, _, err := registry.Resolve([]string{dir}, "")
		if err != nil || len(jobs) == 0 {
			continue // not an input directory (seed corpora, golden folders)
		}
		a := analyze.NewAnalyzer(set.Profiles()...)
		a.SetCorrections(set.Fixes(), true)
		a.SetTokenizerOpener(func(name string) (analyze.TokenCounter, error) { return tokenizer.Open(name) })
		if err := registry.Import(jobs, nil, ingest.Options{Warn: func(string) {}}, a); err != nil {
			continue // damaged-input fixtures: their own tests check the error
		}
		rep, err := a.Report(opt)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		for _, rr := range rep.Runs {
			if rr.Reproduction == nil {
				continue
			}
			runs++
			for _, it := range rr.Reproduction.Items {
				items++
				if it.Status != "reproduced" && it.Reason == "" {
					t.Errorf("%s run %s: %s %s %s without a reason (reported %v, recomputed %v)", dir, rr.RunID, it.Metric, it.Stat, it.Status, it.Reported, it.Recomputed)
				}
			}
		}
	}
	if runs < 40 {
		t.Fatalf("only %d runs with a reproduction", runs)
	}
	t.Logf("%d reproduction items of %d runs: none without a reason", items, runs)
}

// TestOwnToolOnly: an Analyzer of every profile told to compute each run
// under its own tool's conventions only (report --convention tool) gives
// the same report as one computing all of them, and says so when asked
// for another tool's convention of the run.
func TestOwnToolOnly(t *testing.T) {
	set := convention.NewSet(analyze.Canonical, registry.Tools()...).WithTraps(analyze.Traps...)
	opt := analyze.Options{Tools: set, Reproduce: reproduce.Reproducer(set), Convention: func(r *formats.Run) convention.Convention {
		c, _ := set.ForRun(r.Convention, r.Tool)
		return c
	}}
	reports := []string{}
	for _, own := range []bool{false, true} {
		a := analyze.NewAnalyzer(set.Profiles()...)
		if own {
			a.ComputeOwnToolOnly()
		}
		for _, dir := range []string{"../../testdata/llmperf/leaderboard-groq-70b", "../../testdata/aiperf/qwen3vl30b-local-agent-c2"} {
			jobs, _, err := registry.Resolve([]string{dir}, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := registry.Import(jobs, nil, ingest.Options{}, a); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := a.Report(opt)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(rep)
		reports = append(reports, string(b))
		_, err = a.RunData("leaderboard-groq-70b", "aiperf")
		if own != (err != nil) {
			t.Errorf("own-tool %v: RunData under another tool's convention: %v", own, err)
		}
	}
	if reports[0] != reports[1] {
		t.Error("the report differs when only each run's own tool's conventions are computed")
	}
}
