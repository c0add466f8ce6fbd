package render

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tokentrace/tokentrace/analyze/reproduce"
)

// WriteReconciliation writes r as text or Markdown: per run and metric, the
// tool's value, both ends, and each step with an effect.
func WriteReconciliation(w io.Writer, r *reproduce.Reconciliation, md bool) error {
	return safeOut(w, func(w io.Writer) error { return writeReconciliation(w, r, md) })
}

func writeReconciliation(w io.Writer, r *reproduce.Reconciliation, md bool) error {
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
			if m.Why != "" {
				lines = append(lines, "  "+rr.From+" undefined: "+m.Why)
			}
			for _, s := range m.Steps {
				if s.NBefore == s.NAfter && (float64(s.Delta) == 0 || math.IsNaN(float64(s.Delta)) && math.IsNaN(float64(s.Before)) && math.IsNaN(float64(s.After))) {
					quiet++
					continue
				}
				line := fmt.Sprintf("  %-20s %s → %s: %s → %s (%s)", s.Choice, s.From, s.To, num(float64(s.Before)), num(float64(s.After)), signed(float64(s.Delta)))
				if len(s.Corrections) > 0 {
					verb := "data correction"
					if s.To == "false" {
						verb = "data correction undone"
					}
					line = fmt.Sprintf("  %s %s: %s → %s (%s)", verb, strings.Join(s.Corrections, ", "), num(float64(s.Before)), num(float64(s.After)), signed(float64(s.Delta)))
				}
				switch {
				case s.Why != "":
					line = fmt.Sprintf("  %-20s %s → %s: %s → undefined: %s", s.Choice, s.From, s.To, num(float64(s.Before)), s.Why)
				case s.NBefore != s.NAfter:
					line += fmt.Sprintf("; n %d → %d: samples enter or leave the statistic, not only its formula", s.NBefore, s.NAfter)
				}
				lines = append(lines, line)
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
