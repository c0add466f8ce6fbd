package reproduce

import (
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// TestToolMappingsNameMetrics: every importer's reported-metric mapping
// names a metric of the Table or a reproduction scalar, so a misspelt
// quantity fails here, not as "not reproducible" in a user's report.
func TestToolMappingsNameMetrics(t *testing.T) {
	scalars := map[string]bool{}
	for _, s := range reproductionScalars {
		scalars[s.name] = true
	}
	for _, tool := range registry.Tools() {
		for _, c := range tool.Profiles {
			for name, rm := range tool.Metrics(c) {
				q := rm.Quantity
				switch {
				case rm.Reason != "":
				case strings.HasPrefix(q, "scalar:"):
					s := strings.TrimPrefix(q, "scalar:")
					s = strings.TrimPrefix(s, "reported_duration:")
					if rest, ok := strings.CutPrefix(s, "sum:"); ok {
						for _, part := range strings.Split(rest, "+") {
							if analyze.LookupMetric(part) == nil {
								t.Errorf("%s %s: %s sums unknown metric %q", c.Name, name, q, part)
							}
						}
					} else if !scalars[s] {
						t.Errorf("%s %s: unknown scalar %q", c.Name, name, q)
					}
				case analyze.LookupMetric(strings.TrimSuffix(q, convention.FailedInfSuffix)) == nil:
					t.Errorf("%s %s: unknown metric %q", c.Name, name, q)
				case rm.Scale == 0 || math.IsNaN(rm.Scale):
					t.Errorf("%s %s: scale %v", c.Name, name, rm.Scale)
				}
			}
		}
	}
}
