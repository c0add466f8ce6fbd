// Package archtest checks the project's dependency rules: data flows
// ingest → formats ← analyze ← plots, cmd only wires, no importer imports
// another, and the leaf packages import nothing of the project.
package archtest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tokentrace/tokentrace/"

// allowed says which project packages a package (by path below the module)
// may import, outside its tests. Prefixes end in "/".
func allowed(pkg, dep string) bool {
	in := func(list ...string) bool {
		for _, p := range list {
			if dep == p || strings.HasSuffix(p, "/") && strings.HasPrefix(dep, p) {
				return true
			}
		}
		return false
	}
	switch {
	case pkg == "formats", pkg == "convention", pkg == "analyze/stats", pkg == "analyze/tokenizer", pkg == "synth", pkg == "internal/golden":
		return false // leaves
	case pkg == "ingest": // convention: the catalogue entries of the shared value checks
		return in("formats", "convention", "ingest/sse")
	case pkg == "ingest/sse", pkg == "ingest/pybench", strings.HasPrefix(pkg, "ingest/internal/"):
		// shared helpers: each other's scanners (pybench's numbers through
		// jsonscan.Float), never an importer
		return in("formats", "ingest", "ingest/sse", "ingest/internal/")
	case pkg == "ingest/registry":
		return in("formats", "convention", "ingest", "ingest/")
	case strings.HasPrefix(pkg, "ingest/"): // one importer: shared helpers only, never another importer
		return in("formats", "convention", "ingest", "ingest/sse", "ingest/pybench", "ingest/internal/")
	case pkg == "join":
		return in("formats")
	case pkg == "analyze":
		return in("formats", "convention", "analyze/stats")
	case pkg == "analyze/compare", pkg == "analyze/reproduce":
		return in("formats", "convention", "analyze", "analyze/stats")
	case pkg == "analyze/slo":
		return in("formats", "convention", "analyze", "analyze/stats", "analyze/compare")
	case pkg == "analyze/sweep":
		return in("formats", "convention", "analyze", "analyze/stats", "analyze/compare", "analyze/slo")
	case pkg == "analyze/render":
		return in("formats", "convention", "analyze", "analyze/stats", "analyze/slo", "analyze/reproduce", "analyze/compare", "analyze/sweep")
	case pkg == "plots":
		return in("formats", "convention", "analyze", "analyze/stats", "analyze/render", "analyze/slo", "analyze/compare", "analyze/sweep")
	case pkg == "internal/reqtest":
		return in("formats", "ingest")
	case pkg == "internal/traptest": // the importers' trap tests: import, then analyse
		return in("formats", "convention", "ingest", "analyze", "analyze/reproduce")
	case strings.HasPrefix(pkg, "cmd/"):
		return true // cmd wires everything
	}
	return false
}

// TestDependencyDirection lists every package's project imports (go list)
// and fails on one the rules above do not allow.
func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, module)
		if pkg == "internal/archtest" {
			continue
		}
		n++
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if ok && !allowed(pkg, dep) {
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d packages listed", n)
	}
}

// TestRulesCatchSideways: the rules reject what they must (a test that
// cannot fail is a defect).
func TestRulesCatchSideways(t *testing.T) {
	for _, c := range [][2]string{
		{"ingest/sglangbench", "ingest/vllmbench"}, {"ingest/aiperf", "analyze"}, {"analyze", "join"},
		{"analyze", "ingest/registry"}, {"formats", "convention"}, {"analyze/stats", "analyze"}, {"plots", "ingest"},
		{"analyze/slo", "analyze/render"}, {"ingest/pybench", "ingest/vllmbench"}, {"ingest/internal/jsonscan", "ingest/aiperf"}, {"analyze/compare", "analyze/slo"}, {"analyze/compare", "analyze/sweep"},
	} {
		if allowed(c[0], c[1]) {
			t.Errorf("%s → %s allowed", c[0], c[1])
		}
	}
}
