package analyze

import (
	"fmt"
	"math"
	"strings"

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
	Reported   F               `json:"reported"`
	ReportedAs string          `json:"reported_as,omitempty"`
	FromValue  F               `json:"from_value"`
	ToValue    F               `json:"to_value"`
	Steps      []ReconcileStep `json:"steps"`
	// Total is ToValue − FromValue, the sum of the steps' deltas.
	Total F `json:"total"`
}

// ReconcileStep is the effect of changing one choice.
type ReconcileStep struct {
	Choice string `json:"choice"`
	From   string `json:"from"`
	To     string `json:"to"`
	Before F      `json:"before"`
	After  F      `json:"after"`
	Delta  F      `json:"delta"`
}

// Reconcile builds the reconciliation of every run the Analyzer saw, from
// pair(run)[0] to pair(run)[1], for each of stats ("mean", "p50", "p99", …),
// with the tools' own values beside them (tools; nil: none). The Analyzer
// must have computed convention.PathConventions of those pairs.
func (a *Analyzer) Reconcile(pair func(*formats.Run) [2]convention.Convention, stats []string, tools *convention.Set) (*Reconciliation, error) {
	out := &Reconciliation{SchemaVersion: ReportSchemaVersion, Stats: stats, Runs: []RunReconciliation{}}
	for _, acc := range a.runs {
		if acc.run == nil {
			return nil, fmt.Errorf("run %q: requests without a run row", acc.id)
		}
		p := pair(acc.run)
		path := convention.Path(p[0], p[1])
		rr := RunReconciliation{RunID: acc.run.RunID, Tool: acc.run.Tool, From: p[0].Name, To: p[1].Name}
		samp := make([]*samples, len(path))
		convs := make([]convention.Convention, len(path))
		for i, st := range path {
			ci := a.index(st.Convention.Name)
			if ci < 0 {
				return nil, fmt.Errorf("reconcile: convention %q was not computed", st.Convention.Name)
			}
			convs[i] = a.convs[ci]
			streaming := isStreaming(acc.run, acc.per[ci].reqs)
			samp[i] = samplesOf(convs[i], acc.per[ci].reqs, acc.per[ci].gaps(), streaming)
		}
		for _, q := range Table {
			if !q.Reconcile {
				continue
			}
			for _, stat := range stats {
				m := MetricReconciled{Metric: q.Key, Stat: stat, Reported: F(math.NaN()), Steps: []ReconcileStep{}}
				vals := make([]float64, len(path))
				for i := range path {
					vals[i], _ = statOf(samp[i].values[q], samp[i].weights[q], stat, convs[i])
				}
				if allNaN(vals) {
					continue
				}
				m.FromValue, m.ToValue = F(vals[0]), F(vals[len(vals)-1])
				m.Total = F(vals[len(vals)-1] - vals[0])
				for i := 1; i < len(path); i++ {
					m.Steps = append(m.Steps, ReconcileStep{Choice: path[i].Choice, From: path[i].From, To: path[i].To,
						Before: F(vals[i-1]), After: F(vals[i]), Delta: F(vals[i] - vals[i-1])})
				}
				m.Reported, m.ReportedAs = reportedFor(p[0], tools, acc.run, q.Name, stat)
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
func reportedFor(c convention.Convention, tools *convention.Set, run *formats.Run, q, stat string) (F, string) {
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
					return F(*s.Value / tm.Scale), metric + "." + s.Stat
				}
			}
		}
	}
	return F(math.NaN()), ""
}

// WriteReconciliation writes r as text or Markdown: per run and metric, the
// tool's value, both ends, and each step with an effect.
func WriteReconciliation(w interface{ Write([]byte) (int, error) }, r *Reconciliation, md bool) error {
	for i, rr := range r.Runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if md {
			fmt.Fprintf(w, "### run %s: %s → %s\n\n", clean(rr.RunID, true), rr.From, rr.To)
		} else {
			fmt.Fprintf(w, "== run %s (%s): %s → %s ==\n", clean(rr.RunID, false), clean(orDash(rr.Tool), false), rr.From, rr.To)
		}
		t := &table{md: md}
		t.add("metric", "stat", "reported", rr.From, rr.To, "difference")
		for _, m := range rr.Metrics {
			rep := num(float64(m.Reported))
			if m.ReportedAs != "" {
				rep += " (" + m.ReportedAs + ")"
			}
			t.add(m.Metric, m.Stat, rep, num(float64(m.FromValue)), num(float64(m.ToValue)), signed(float64(m.Total)))
		}
		t.write(w)
		for _, m := range rr.Metrics {
			var lines []string
			quiet := 0
			for _, s := range m.Steps {
				if float64(s.Delta) == 0 || math.IsNaN(float64(s.Delta)) && math.IsNaN(float64(s.Before)) && math.IsNaN(float64(s.After)) {
					quiet++
					continue
				}
				lines = append(lines, fmt.Sprintf("  %-20s %s → %s: %s → %s (%s)", s.Choice, s.From, s.To, num(float64(s.Before)), num(float64(s.After)), signed(float64(s.Delta))))
			}
			if len(lines) == 0 {
				continue
			}
			head := fmt.Sprintf("%s %s: %s %s → %s %s", m.Metric, m.Stat, rr.From, num(float64(m.FromValue)), rr.To, num(float64(m.ToValue)))
			if md {
				fmt.Fprintf(w, "**%s**\n\n```\n%s\n```\n", head, strings.Join(lines, "\n"))
			} else {
				fmt.Fprintln(w, head)
				fmt.Fprintln(w, strings.Join(lines, "\n"))
			}
			if quiet > 0 {
				fmt.Fprintf(w, "  (%d other differing choices leave %s %s unchanged)\n", quiet, m.Metric, m.Stat)
			}
			if md {
				fmt.Fprintln(w)
			}
		}
	}
	return nil
}

func signed(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if v > 0 {
		return "+" + num(v)
	}
	if v == 0 {
		return "0"
	}
	return "−" + num(-v)
}
