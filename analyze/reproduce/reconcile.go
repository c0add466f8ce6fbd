package reproduce

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// Reconciliation explains, per run and metric, how a value under one
// convention becomes the value under another, one choice at a time; the
// steps' deltas sum to the total difference.
type Reconciliation struct {
	SchemaVersion int                 `json:"schema_version"`
	Stats         []string            `json:"stats"`
	Runs          []RunReconciliation `json:"runs"`
}

// RunReconciliation is one run's reconciliation.
type RunReconciliation struct {
	RunID   string             `json:"run_id"`
	Tool    string             `json:"tool"`
	From    string             `json:"from"`
	To      string             `json:"to"`
	Metrics []MetricReconciled `json:"metrics"`
}

// MetricReconciled is one statistic of one metric: the tool's reported
// value (when its summary has the same statistic of the same quantity), the
// value under each end convention and the steps between them.
type MetricReconciled struct {
	Metric string `json:"metric"`
	Stat   string `json:"stat"`
	// Reported is the tool's own value and ReportedAs its name there.
	Reported   analyze.F       `json:"reported"`
	ReportedAs string          `json:"reported_as,omitempty"`
	FromValue  analyze.F       `json:"from_value"`
	ToValue    analyze.F       `json:"to_value"`
	Steps      []ReconcileStep `json:"steps"`
	// Total is ToValue − FromValue, the sum of the steps' deltas.
	Total analyze.F `json:"total"`
	// Why says why FromValue is undefined ("" when it is not).
	Why string `json:"why,omitempty"`
}

// ReconcileStep is the effect of changing one choice.
type ReconcileStep struct {
	Choice string    `json:"choice"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	Before analyze.F `json:"before"`
	After  analyze.F `json:"after"`
	Delta  analyze.F `json:"delta"`
	// NBefore and NAfter are the statistic's sample counts on either side:
	// when they differ the step moved requests (or gaps) into or out of
	// the statistic, and part of Delta is theirs, not the choice's rule.
	NBefore int `json:"n_before"`
	NAfter  int `json:"n_after"`
	// Corrections are the data checks whose corrections the step turned on
	// or off (the corrections choice), as "code (requests)".
	Corrections []string `json:"corrections,omitempty"`
	// Why says why After is undefined where Before was not ("" otherwise):
	// e.g. the tokenizer a count needs, and the flag that gives it.
	Why string `json:"why,omitempty"`
}

// Reconcile builds the reconciliation of every run a saw, from
// pair(run)[0] to pair(run)[1], for each of stats ("mean", "p50", "p99", …),
// with the tools' own values beside them (tools; nil: none). The Analyzer
// must have computed convention.PathConventions of those pairs.
func Reconcile(a *analyze.Analyzer, pair func(*formats.Run) [2]convention.Convention, stats []string, tools *convention.Set) (*Reconciliation, error) {
	out := &Reconciliation{SchemaVersion: analyze.ReportSchemaVersion, Stats: stats, Runs: []RunReconciliation{}}
	for _, id := range a.RunIDs() {
		run := a.RunRow(id)
		if run == nil {
			return nil, fmt.Errorf("run %q: requests without a run row", id)
		}
		p := pair(run)
		path := convention.Path(p[0], p[1])
		rr := RunReconciliation{RunID: run.RunID, Tool: run.Tool, From: p[0].Name, To: p[1].Name}
		data := make([]*analyze.RunData, len(path))
		for i, st := range path {
			rd, err := a.RunData(id, st.Convention.Name)
			if err != nil {
				return nil, fmt.Errorf("reconcile: %w", err)
			}
			data[i] = rd
		}
		for _, q := range analyze.Table {
			if !q.Reconcile {
				continue
			}
			for _, stat := range stats {
				m := MetricReconciled{Metric: q.Key, Stat: stat, Reported: analyze.F(math.NaN()), Steps: []ReconcileStep{}}
				vals := make([]float64, len(path))
				ns := make([]int, len(path))
				for i := range path {
					vals[i], _ = statOf(data[i].Values[q], data[i].Weights[q], stat, data[i].Convention)
					ns[i] = len(data[i].Values[q])
				}
				if allNaN(vals) {
					continue
				}
				m.FromValue, m.ToValue = analyze.F(vals[0]), analyze.F(vals[len(vals)-1])
				m.Total = analyze.F(vals[len(vals)-1] - vals[0])
				for i := 1; i < len(path); i++ {
					st := ReconcileStep{Choice: path[i].Choice, From: path[i].From, To: path[i].To,
						Before: analyze.F(vals[i-1]), After: analyze.F(vals[i]), Delta: analyze.F(vals[i] - vals[i-1]),
						NBefore: ns[i-1], NAfter: ns[i]}
					if path[i].Choice == convention.ChoiceCorrections {
						st.Corrections = corrections(data[i-1].Corrected, data[i].Corrected)
					}
					if math.IsNaN(vals[i]) && !math.IsNaN(vals[i-1]) {
						st.Why = undefinedWhy(data[i])
					}
					m.Steps = append(m.Steps, st)
				}
				if math.IsNaN(vals[0]) {
					m.Why = undefinedWhy(data[0])
				}
				m.Reported, m.ReportedAs = reportedFor(p[0], tools, run, q.Name, stat)
				rr.Metrics = append(rr.Metrics, m)
			}
		}
		out.Runs = append(out.Runs, rr)
	}
	return out, nil
}

func allNaN(xs []float64) bool {
	for _, x := range xs {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}

// reportedFor finds the tool's own value of quantity q's statistic stat,
// through the tool's metric mapping (in tokentrace's unit).
func reportedFor(c convention.Convention, tools *convention.Set, run *formats.Run, q, stat string) (analyze.F, string) {
	mapping := tools.Metrics(c)
	names := []string{stat}
	switch stat {
	case "mean":
		names = []string{"mean", "avg"}
	case "p50":
		names = []string{"p50", "median"}
	}
	for metric, tm := range mapping {
		if tm.Quantity != q || tm.Reason != "" || tm.Scale == 0 {
			continue
		}
		for _, s := range run.Reported {
			if s.Metric != metric || s.Value == nil {
				continue
			}
			for _, n := range names {
				if s.Stat == n {
					return analyze.F(*s.Value / tm.Scale), metric + "." + s.Stat
				}
			}
		}
	}
	return analyze.F(math.NaN()), ""
}

// corrections lists the data-check codes corrected on one side of a step
// and not the other, as "code (requests)".
func corrections(before, after map[string]int) []string {
	var out []string
	for _, m := range []map[string]int{after, before} {
		for _, code := range slices.Sorted(maps.Keys(m)) {
			if before[code] != after[code] {
				out = append(out, fmt.Sprintf("%s (%d)", code, m[code]))
			}
		}
		if len(out) > 0 {
			break
		}
	}
	return out
}

// undefinedWhy says why a statistic is undefined under rd's convention,
// where the reason is known: a re-tokenized count without a tokenizer.
func undefinedWhy(rd *analyze.RunData) string {
	if rd.TokenizerErr == "" {
		return ""
	}
	return "the " + rd.Convention.Name + " convention counts output tokens by re-tokenizing the text (" + rd.TokenizerErr +
		"): give --tokenizer with the model's tokenizer.json, a SentencePiece .model or a built-in name"
}
