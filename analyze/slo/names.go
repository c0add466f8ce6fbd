package slo

import (
	"strings"

	"github.com/tokentrace/tokentrace/analyze"
)

// metricNamesOr is metricNames with "or" before the last name.
func metricNamesOr(keep func(*analyze.Metric) bool) string {
	s := metricNames(keep)
	if i := strings.LastIndex(s, ", "); i >= 0 {
		s = s[:i] + " or " + s[i+2:]
	}
	return s
}

// metricNames lists the names of the metrics for which keep is true,
// for messages ("ttft, tpot, e2e"); fluidity is written fluidity(…).
func metricNames(keep func(*analyze.Metric) bool) string {
	var out []string
	for _, m := range analyze.Table {
		if keep(m) {
			n := m.Name
			if m.Parametrised {
				n += "(…)"
			}
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}
