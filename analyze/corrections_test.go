package analyze

import (
	"testing"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// correctedRun analyses one request (offsets in ms, all content) under
// Canonical and a non-correcting copy of it, with the fixes known and
// corrections enabled or not, and returns the canonical and the
// non-correcting metrics.
func correctedRun(t *testing.T, enabled bool, code string, fix convention.Fix, offsMs []int64, edit func(*formats.Request)) (RequestMetrics, RequestMetrics) {
	t.Helper()
	raw := Canonical
	raw.Name, raw.Corrections = "raw", false
	a := NewAnalyzer(Canonical, raw)
	a.SetCorrections(map[string]convention.Fix{code: fix}, enabled)
	var evs []ev
	for _, o := range offsMs {
		evs = append(evs, ev{o * ms, formats.KindContent, nil})
	}
	r, e := mkRequest(0, 0, evs, ingest.Ptr(int64(3)))
	r.Corrections = code
	if edit != nil {
		edit(&r)
	}
	if err := a.Request(&r, e); err != nil {
		t.Fatal(err)
	}
	yes := true
	if err := a.Run(&formats.Run{RunID: "r", Streaming: &yes}); err != nil {
		t.Fatal(err)
	}
	return a.byID["r"].per[0].reqs[0], a.byID["r"].per[1].reqs[0]
}

// TestFixPhantomSecondGap: vLLM's ITL list began with the TTFT (the
// second message 500 ms after the first, a repeat of the 500 ms TTFT, then
// 10 ms gaps): corrected, E2E 520 ms and TPOT (520 − 500)/2 = 10 ms; the
// non-correcting convention and --no-corrections keep 1020 and 260 ms.
func TestFixPhantomSecondGap(t *testing.T) {
	offs := []int64{500, 1000, 1010, 1020}
	c, raw := correctedRun(t, true, "t", convention.FixPhantomSecondGap, offs, nil)
	near(t, "TTFT", c.TTFTMs, 500)
	near(t, "E2E", c.E2EMs, 520)
	near(t, "TPOT", c.TPOTMs, 10)
	near(t, "max gap", c.MaxITLMs, 10)
	near(t, "raw E2E", raw.E2EMs, 1020)
	near(t, "raw TPOT", raw.TPOTMs, 260)
	off, _ := correctedRun(t, false, "t", convention.FixPhantomSecondGap, offs, nil)
	near(t, "--no-corrections E2E", off.E2EMs, 1020)
}

// TestFixFirstNotToken: the first "token" at 100 ms was the role-only
// chunk: corrected, TTFT is 600 ms and TTST 10 ms.
func TestFixFirstNotToken(t *testing.T) {
	c, raw := correctedRun(t, true, "t", convention.FixFirstNotToken, []int64{100, 600, 610, 620}, nil)
	near(t, "TTFT", c.TTFTMs, 600)
	near(t, "TTST", c.TTSTMs, 10)
	near(t, "E2E", c.E2EMs, 620)
	near(t, "raw TTFT", raw.TTFTMs, 100)
}

// TestFixCountNotStuck: the tool's count is the requested 256 (stuck at
// max_tokens) over 4 messages: corrected, N is the 4 token messages (no
// tokenizer), TPOT (130 − 100)/3 = 10 ms; the raw convention keeps 256.
func TestFixCountNotStuck(t *testing.T) {
	stuck := func(r *formats.Request) {
		n := int64(256)
		r.OutputTokens, r.OutputTokensSource, r.MaxTokens = &n, formats.SourceToolReported, &n
		r.ReportedOutputTokens = ingest.Ptr(256.0)
	}
	c, raw := correctedRun(t, true, "t", convention.FixCountNotStuck, []int64{100, 110, 120, 130}, stuck)
	near(t, "N", c.OutputTokens, 4)
	near(t, "TPOT", c.TPOTMs, 10)
	if c.OutputSource != "chunk_count" {
		t.Errorf("source %q", c.OutputSource)
	}
	near(t, "raw N", raw.OutputTokens, 256)
}

// TestFixCountFromImport: the importer stored N = 99 (LLMPerf's count
// without its BOS) beside the raw 100: corrected conventions read 99, the
// non-correcting one and --no-corrections read the raw 100.
func TestFixCountFromImport(t *testing.T) {
	bos := func(r *formats.Request) {
		n := int64(99)
		r.OutputTokens, r.OutputTokensSource, r.ReportedOutputTokens = &n, formats.SourceToolReported, ingest.Ptr(100.0)
	}
	c, raw := correctedRun(t, true, "t", convention.FixCountFromImport, []int64{100, 110, 120}, bos)
	near(t, "N", c.OutputTokens, 99)
	near(t, "raw N", raw.OutputTokens, 100)
	off, _ := correctedRun(t, false, "t", convention.FixCountFromImport, []int64{100, 110, 120}, bos)
	near(t, "--no-corrections N", off.OutputTokens, 100)
}
