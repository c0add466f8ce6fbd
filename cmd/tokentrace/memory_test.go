package main

import (
	"strings"
	"testing"
)

// TestMemoryBudgetFlag: a budget too small for the AIPerf run's pooled
// ITL switches it to the sketch and the report says so; the default keeps
// it exact; a malformed budget is a usage error; GOMEMLIMIT is the budget
// when the flag is not given.
func TestMemoryBudgetFlag(t *testing.T) {
	const in = "../../testdata/aiperf/qwen3vl30b-local-agent-c2"
	out, err := run(t, "report", "--memory-budget", "4KiB", in)
	if err != nil || !strings.Contains(out, "warning itl_sketch [ITL]: the exact pooled ITL") || !strings.Contains(out, "±0.5%") {
		t.Errorf("4KiB: %v\n%s", err, out)
	}
	out, err = run(t, "report", in)
	if err != nil || strings.Contains(out, "itl_sketch") {
		t.Errorf("default budget sketched: %v", err)
	}
	if _, err := run(t, "report", "--memory-budget", "lots", in); exitCode(err) != 2 {
		t.Errorf("--memory-budget lots: exit %d (%v)", exitCode(err), err)
	}
	if n, err := memoryBudget(""); err != nil || n != 1<<30 {
		t.Errorf("default budget %d %v", n, err)
	}
	if n, err := memoryBudget("512MiB"); err != nil || n != 512<<20 {
		t.Errorf("512MiB: %d %v", n, err)
	}
}
