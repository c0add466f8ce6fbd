package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/internal/golden"
	"github.com/tokentrace/tokentrace/internal/reqtest"
)

// lessonDir is the bundled lesson: the brief's example (TTFT 500 ms, 100
// output tokens, 700 ms of decode) as tokentrace tables, three identical
// requests of a run marked as LLMPerf's (its own count 100, as if without
// BOS; its stream closed 2 ms after the last token). go test -update
// rewrites it.
const lessonDir = "../../testdata/lesson"

// TestLesson: one command reproduces the lesson — LLMPerf's
// first-token-inclusive ITL 12.00 ms against the canonical 7.07 ms — and
// names the two steps between them (README, "Why two tools disagree").
func TestLesson(t *testing.T) {
	if golden.Update() {
		writeLesson(t)
	}
	out, err := run(t, "reconcile", lessonDir, "--from-convention", "llmperf@2024-04", "--stat", "mean")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tpot_ms mean: llmperf@2024-04 12.00 → tokentrace 7.071",
		"tpot_from            request_start → first_response: 12.00 → 7.000 (−5.000)",
		"tpot_divisor         n → n-1: 7.000 → 7.071 (+0.071)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("reconcile output lacks %q:\n%s", want, out)
		}
	}
	checkGolden(t, "lesson-reconcile.txt", out)
}

func writeLesson(t *testing.T) {
	t.Helper()
	tmp := lessonDir + ".tmp"
	os.RemoveAll(tmp)
	w, err := formats.NewParquetWriter(tmp, formats.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	for k := int64(0); k < 3; k++ {
		r, evs := reqtest.Classic(k, 1_760_000_000_000_000_000+k*2_000*reqtest.MS)
		r.RunID = "lesson"
		for i := range evs {
			evs[i].RunID = "lesson"
		}
		r.ReportedOutputTokens = ingest.Ptr(100.0)
		if err := formats.SendRow(w, &r, evs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Run(&formats.Run{RunID: "lesson", Tool: "llmperf", ToolVersion: "2024-04 (hand-built)", Streaming: &yes,
		Model: "the brief's example", RequestCount: 3, ClockDomain: formats.ClockUnix}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"runs.parquet", "requests.parquet", "events.parquet"} {
		if err := os.Rename(filepath.Join(tmp, f), filepath.Join(lessonDir, f)); err != nil {
			os.MkdirAll(lessonDir, 0o777)
			if err := os.Rename(filepath.Join(tmp, f), filepath.Join(lessonDir, f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.RemoveAll(tmp)
}
