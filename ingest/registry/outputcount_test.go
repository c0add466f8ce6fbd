package registry

import (
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TestOutputCountFallback: the AIPerf Cloudflare run has 3 completed
// streaming requests whose usage is missing. Imported through the
// registry, their requests.output_tokens is the number of token messages
// (source chunk_count), the N the report falls back to — so a notebook's
// mean equals the report's; failed requests keep a null.
func TestOutputCountFallback(t *testing.T) {
	jobs, _, err := Resolve([]string{"../../testdata/aiperf/llama31-8b-cloudflare-agent-c2-524errors"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var c formats.Collector
	if err := Import(jobs, nil, ingest.Options{Warn: func(string) {}}, &c); err != nil {
		t.Fatal(err)
	}
	fallback, nullOK := 0, 0
	for _, r := range c.Requests {
		switch {
		case r.OutputTokensSource == formats.SourceChunkCount:
			fallback++
			if r.Status != formats.StatusOK || r.OutputTokens == nil || *r.OutputTokens != r.TokenMessageCount || r.TokenMessageCount == 0 {
				t.Errorf("request %d: %+v", r.RequestKey, r)
			}
		case r.OutputTokens == nil && r.Status == formats.StatusOK:
			nullOK++
		}
	}
	if fallback != 3 || nullOK != 0 {
		t.Errorf("%d requests with the chunk-count fallback (want 3), %d completed ones still null", fallback, nullOK)
	}
}
