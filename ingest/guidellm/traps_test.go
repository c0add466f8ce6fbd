package guidellm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/traptest"
)

var trapTools = convention.NewSet(analyze.Canonical, Tool)

// TestTrapTTFTAfterReasoning: guidellm before v0.7 timed the first token
// at the first content chunk, after a reasoning model's reasoning
// (vllm-project/guidellm#737, fixed by #742 and #760). The trap-reasoning
// fixture (gen_fixtures.py, guidellm 0.6.1) has three replies: r1 600
// tokens (server usage) for 17 bytes of text, first content at 8 s; r2 300
// tokens for 4 bytes, first content at 4 s; r3 45 tokens for a
// 130-byte answer at 0.5 s (nothing hidden).
//
// Import: r1 and r2 are flagged, r3 is not. Nothing is corrected — the
// reasoning's times are not in the file —, so canonical with and without
// corrections give the recorded values: TTFT [8000, 4000, 500] ms → 12500/3,
// TPOT [180/599, 25/299, 780/44] ms (to the 0.24 µs of the file's float
// epoch seconds); under guidellm's convention its own
// TTFT and TPOT are reproduced.
func TestTrapTTFTAfterReasoning(t *testing.T) {
	path := filepath.Join("testdata", "trap-reasoning", "benchmarks.json")
	var c formats.Collector
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "fx"}, &c); err != nil {
		t.Fatal(err)
	}
	ch := traptest.Check(t, &c.Runs[0], TrapTTFTAfterReasoning)
	if ch.Requests != 2 || ch.Corrected || ch.Field != "output_tokens" || ch.Detail != "request r1: output_tokens 600 for 17 bytes of output text" {
		t.Errorf("check %+v", ch)
	}
	for _, corrections := range []bool{true, false} {
		rr := traptest.Report(t, New(), path, trapTools, analyze.Canonical, corrections)
		// the file's times are float seconds since the epoch: 0.24 µs apart
		traptest.WantMeanWithin(t, rr, analyze.TTFT, 12500.0/3, 1e-6)
		traptest.WantMeanWithin(t, rr, analyze.TPOT, (180.0/599+25.0/299+780.0/44)/3, 1e-6)
		if w := traptest.Warning(t, rr, TrapTTFTAfterReasoning); w.Count != 2 || !strings.Contains(w.Message, "flagged, not corrected") || !strings.Contains(w.Source, "guidellm/issues/737") {
			t.Errorf("warning %+v", w)
		}
	}
	own := traptest.Report(t, New(), path, trapTools, Profile04, true)
	traptest.Reproduction(t, own, TrapTTFTAfterReasoning, "time_to_first_token_ms.successful mean", "time_per_output_token_ms.successful mean",
		"inter_token_latency_ms.successful mean")
}

// TestTrapsNotOnCleanData: the corpus run and the other fixtures (texts
// of at least a byte a token, as real replies are) trip no check; nor does
// a v0.7 file, which times reasoning.
func TestTrapsNotOnCleanData(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*", "benchmarks.*"))
	paths = append(paths, filepath.Join("..", "..", "testdata", "guidellm", "v03-sweep-sync-stripped", "benchmarks_stripped.json"))
	n := 0
	for _, p := range paths {
		if strings.Contains(p, "trap-") {
			continue
		}
		var c formats.Collector
		if err := ingest.ImportFile(New(), p, ingest.Options{}, &c); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		n++
		for _, r := range c.Runs {
			if len(r.Checks) > 0 {
				t.Errorf("%s: %s: checks %+v", p, r.RunID, r.Checks)
			}
		}
	}
	if n < 5 {
		t.Errorf("%d files checked", n)
	}
	var rs requestStats
	req := formats.Request{Status: formats.StatusOK, OutputTokens: ingest.Ptr(int64(600)), SourceID: "v7"}
	if rs.hiddenTokens("0.7.0", &req, len("The answer is 42.")); rs.hidden != 0 {
		t.Error("a v0.7 record flagged: v0.7 times reasoning")
	}
	if rs.hiddenTokens("0.6.1", &req, len("The answer is 42.")); rs.hidden != 1 {
		t.Error("a v0.6 record with 600 tokens for 17 bytes not flagged")
	}
}

// TestTrapStreamErrorAsSuccess: guidellm before v0.7 recorded a stream
// that carried only data: {"error": …} then [DONE], on HTTP 200, as a
// successful generation (vllm-project/guidellm#743, fixed by #795 in
// v0.7.0): no output text, no first-token time, the requested token count.
// The trap-reasoning fixture (guidellm 0.6.1) with r3 made such a record
// imports r3 as a failure: error rate 1 of 3, two requests in the latency
// statistics, no output count; the same record in a v0.7 file is left to
// guidellm (it raises on the error itself, so a success there is one).
func TestTrapStreamErrorAsSuccess(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "trap-reasoning", "benchmarks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	r3 := doc["benchmarks"].([]any)[0].(map[string]any)["requests"].(map[string]any)["successful"].([]any)[2].(map[string]any)
	r3["output"] = ""
	r3["output_tokens"] = 256.0 // the requested max_tokens
	r3["time_to_first_token_ms"], r3["inter_token_latency_ms"] = 0.0, 0.0
	tm := r3["info"].(map[string]any)["timings"].(map[string]any)
	tm["first_token_iteration"], tm["last_token_iteration"], tm["token_iterations"] = nil, nil, 0.0
	dir := t.TempDir()
	write := func(name string, doc map[string]any) string {
		// metadata first, as guidellm writes it (the version decides
		// before the records are read)
		p := filepath.Join(dir, name)
		md, _ := json.Marshal(doc["metadata"])
		out := []byte(`{"metadata":` + string(md))
		for k, v := range doc {
			if k != "metadata" {
				b, _ := json.Marshal(v)
				out = append(out, `,"`+k+`":`+string(b)...)
			}
		}
		out = append(out, '}')
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("benchmarks.json", doc)
	var c formats.Collector
	if err := ingest.ImportFile(New(), p, ingest.Options{Label: "fx"}, &c); err != nil {
		t.Fatal(err)
	}
	ch := traptest.Check(t, &c.Runs[0], TrapStreamErrorAsSuccess)
	if ch.Requests != 1 || !ch.Corrected || ch.Detail != "request r3: successful, no output text, no first token, output_tokens 256; now failures (error type stream_error)" {
		t.Errorf("check %+v", ch)
	}
	r := c.Requests[2]
	if r.Status != formats.StatusError || r.ErrorType != StreamErrorType || r.OutputTokens != nil || r.FirstTokenOffsetNs != nil {
		t.Errorf("r3: %+v", r)
	}
	rr := traptest.Report(t, New(), p, trapTools, analyze.Canonical, true)
	if rr.Requests.Failed != 1 || rr.Requests.Completed != 2 || rr.Metrics.Of(analyze.TTFT).N != 2 {
		t.Errorf("requests %+v, TTFT n %d", rr.Requests, rr.Metrics.Of(analyze.TTFT).N)
	}
	// v0.7 raises on a stream's error event: its successes are left alone
	doc["metadata"].(map[string]any)["guidellm_version"] = "0.7.0"
	c = formats.Collector{}
	if err := ingest.ImportFile(New(), write("v07.json", doc), ingest.Options{Label: "fx"}, &c); err != nil {
		t.Fatal(err)
	}
	for _, ch := range c.Runs[0].Checks {
		if ch.Code == TrapStreamErrorAsSuccess {
			t.Errorf("v0.7 file: %+v", ch)
		}
	}
}
