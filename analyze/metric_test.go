package analyze

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/internal/golden"
)

// TestMetricsDoc checks that REPORT.md's metric table is the one the Table
// generates (rewrite with -update).
func TestMetricsDoc(t *testing.T) {
	doc, err := os.ReadFile("REPORT.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, MetricsBegin), strings.Index(s, MetricsEnd)
	if i < 0 || j < i {
		t.Fatal("REPORT.md lacks the metric table markers")
	}
	want := MetricsTable()
	if golden.Update() {
		s = s[:i+len(MetricsBegin)] + "\n" + want + s[j:]
		if err := os.WriteFile("REPORT.md", []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if got := strings.TrimSpace(s[i+len(MetricsBegin) : j]); got != strings.TrimSpace(want) {
		t.Fatal("REPORT.md's metric table differs from the Table in metric.go (go test ./analyze -run TestMetricsDoc -update)")
	}
}

// TestMetricTable checks every entry: a unique name and key, a label, a
// unit the grammar knows, a definition and a source, and the function its
// scope needs.
func TestMetricTable(t *testing.T) {
	names, keys := map[string]bool{}, map[string]bool{}
	for _, m := range Table {
		if m.Name == "" || m.Label == "" || m.Doc == "" || m.Source == "" {
			t.Errorf("%q: name, label, doc and source are required", m.Name)
		}
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			if names[n] {
				t.Errorf("name %q used twice", n)
			}
			names[n] = true
			if LookupMetric(n) != m {
				t.Errorf("LookupMetric(%q) does not find its entry", n)
			}
		}
		if m.Key != "" {
			if keys[m.Key] {
				t.Errorf("key %q used twice", m.Key)
			}
			keys[m.Key] = true
			if !strings.HasSuffix(m.Key, "_"+strings.TrimSuffix(m.Unit, "s")) && !strings.HasSuffix(m.Key, "_"+m.Unit) {
				t.Errorf("%s: the key %q must end in its unit %q", m.Name, m.Key, m.Unit)
			}
		}
		switch m.Unit {
		case "ms", "tokens", "tok/s", "req/s", "fraction", "count":
		default:
			t.Errorf("%s: unit %q", m.Name, m.Unit)
		}
		switch {
		case m.Scope == RunLevel && m.Run == nil:
			t.Errorf("%s: a run-level metric needs Run", m.Name)
		case m.Scope != RunLevel && m.Value == nil:
			t.Errorf("%s: a per-request or pooled metric needs Value", m.Name)
		case m.Report && (m.Key == "" || m.SQL == ""):
			t.Errorf("%s: a report metric needs a JSON key and its SQL", m.Name)
		case m.SLO && m.Scope != PerRequest:
			t.Errorf("%s: an SLO bounds one request's value", m.Name)
		}
	}
	if LookupMetric("nope") != nil {
		t.Error("unknown name found")
	}
}

// TestCanonicalSQLMetrics checks that analyze/sql/canonical.sql's
// canonical_samples view and canonical_stats' metric list are the ones
// the Table generates (rewrite with -update); sql_test.go then runs the
// file in DuckDB and compares every report metric with the Go report.
func TestCanonicalSQLMetrics(t *testing.T) {
	for path, parts := range map[string][]sqlPart{
		"sql/canonical.sql": {
			{SamplesBegin, SamplesEnd, CanonicalSamplesSQL()},
			{MetricsListBegin, MetricsListEnd, CanonicalMetricsSQL()},
			{FixesBegin, FixesEnd, CanonicalFixesSQL(tools.Traps())},
		},
		"sql/canonical_clickhouse.sql": {
			{SamplesClickHouseBegin, SamplesClickHouseEnd, CanonicalSamplesSQL()},
			{MetricsClickHouseBegin, MetricsClickHouseEnd, CanonicalMetricsClickHouseSQL()},
			{FixesClickHouseBegin, FixesClickHouseEnd, CanonicalFixesClickHouseSQL(tools.Traps())},
		},
	} {
		checkGeneratedParts(t, path, parts)
	}
}

// sqlPart is a generated part of an SQL file: its markers and text.
type sqlPart struct{ begin, end, want string }

// checkGeneratedParts checks (or with -update rewrites) the parts of the
// SQL file at path between each begin and end marker.
func checkGeneratedParts(t *testing.T, path string, parts []sqlPart) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, part := range parts {
		i, j := strings.Index(s, part.begin), strings.Index(s, part.end)
		if i < 0 || j < i {
			t.Fatalf("%s lacks the markers %q … %q", path, part.begin, part.end)
		}
		if golden.Update() {
			s = s[:i+len(part.begin)] + "\n" + part.want + "\n" + s[j:]
			continue
		}
		if got := strings.TrimSpace(s[i+len(part.begin) : j]); got != strings.TrimSpace(part.want) {
			t.Errorf("%s's generated part differs from the Table:\n got: %s\nwant: %s\n(go test ./analyze -run TestCanonicalSQLMetrics -update)", path, got, part.want)
		}
	}
	if golden.Update() {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNTPOT: E2E / N by hand. The brief's request: E2E 1200 ms (its last
// token), N 100 → 12.00 ms per token, which is also LLMPerf's first-token-
// inclusive ITL; one token → its E2E; no tokens or N unknown → undefined.
func TestNTPOT(t *testing.T) {
	r, evs := classic(0, 0)
	m, _ := ComputeRequest(Canonical, &r, evs, nil, nil)
	near(t, "NTPOT", NTPOT.Value(&m, Deadlines{}), 12.00)
	for _, c := range []struct {
		e2e, n, want float64
	}{{250, 1, 250}, {250, 0, math.NaN()}, {250, math.NaN(), math.NaN()}, {math.NaN(), 5, math.NaN()}} {
		got := NTPOT.Value(&RequestMetrics{E2EMs: c.e2e, OutputTokens: c.n}, Deadlines{})
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("E2E %v, N %v: %v, want %v", c.e2e, c.n, got, c.want)
		}
	}
}
