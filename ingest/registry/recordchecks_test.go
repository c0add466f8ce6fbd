package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/aiperf"
)

// aiperfFile writes lines (aiperfLine records, edited) as a
// profile_export.jsonl in a directory of its own and returns its path.
func aiperfFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "profile_export.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAIPerfBareNaN: AIPerf writes its records with Python's json, which
// writes float('nan') and float('inf') bare. Such a record used to fail the
// whole file ("line 2: invalid character 'N'"); it now reads like vLLM's:
// the value is null and counted (value_not_finite), the request kept.
func TestAIPerfBareNaN(t *testing.T) {
	p := aiperfFile(t, aiperfLine(0),
		strings.Replace(aiperfLine(1), `"time_to_first_token":{"value":100.0`, `"time_to_first_token":{"value":NaN`, 1),
		strings.Replace(aiperfLine(2), `"value":[100.0,100.0]`, `"value":[100.0,-Infinity]`, 1))
	c := importValues(t, aiperf.New(), p)
	if len(c.Requests) != 3 {
		t.Fatalf("%d requests", len(c.Requests))
	}
	c.wantCheck(t, 0, ingest.CheckNotFinite, "time_to_first_token", 1, "first request 1 (line 2): NaN; left null")
	c.wantCheck(t, 0, ingest.CheckNotFinite, "inter_chunk_latency", 1, "first request 2 (line 3): -Infinity; left null")
	if r := c.Requests[1]; r.FirstTokenOffsetNs != nil || *r.LastTokenOffsetNs != 300e6 {
		t.Errorf("request 1: first token %v, last %v; want null, 300 ms", r.FirstTokenOffsetNs, *r.LastTokenOffsetNs)
	}
	if r := c.Requests[0]; *r.FirstTokenOffsetNs != 100e6 || *r.LastTokenOffsetNs != 300e6 {
		t.Errorf("request 0: %+v", r)
	}
	// a bare word that is no number is still an error with its line
	p = aiperfFile(t, aiperfLine(0), strings.Replace(aiperfLine(1), `100.0`, `Nope`, 1))
	err := ingest.ImportFile(aiperf.New(), p, ingest.Options{}, &formats.Collector{})
	if err == nil || !strings.Contains(err.Error(), "line 2: ") {
		t.Errorf("bad record: %v", err)
	}
}
