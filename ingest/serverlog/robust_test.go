package serverlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

const joinedDir = "../../testdata/joined/aiperf-vllm"

// importWarn imports path and returns the rows, the runs and the warnings.
func importWarn(t *testing.T, path string) ([]formats.Request, []formats.Run, []string) {
	t.Helper()
	var warns []string
	var c formats.Collector
	im := &Importer{Year: 2026}
	if err := ingest.ImportFile(im, path, ingest.Options{Label: "t", Warn: func(m string) { warns = append(warns, m) }}, &c); err != nil {
		t.Fatal(err)
	}
	return c.Requests, c.Runs, warns
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A script that builds a server log (it quotes the log's lines) is source
// code, never a server log: testdata/joined/aiperf-vllm/make.py was
// imported as a bogus run "make" from a directory.
func TestDetectRejectsScripts(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(joinedDir, "make.py"))
	if err != nil {
		t.Fatal(err)
	}
	im := New()
	if im.Detect(filepath.Join(joinedDir, "make.py"), src) {
		t.Error("make.py detected as a server log")
	}
	// the same text without an extension, starting with a shebang
	if im.Detect("/tmp/make-log", src) {
		t.Error("a #! script without extension detected as a server log")
	}
	for _, name := range []string{"gen.go", "gen.sh", "gen.ipynb", "gen.js", "gen.rs"} {
		if im.Detect(name, []byte(`log("(APIServer pid=7) INFO 09-21 14:13:20 [logger.py:49] Received request x")`)) {
			t.Errorf("%s detected as a server log", name)
		}
	}
	// the log it writes still is one
	log, err := os.ReadFile(filepath.Join(joinedDir, "vllm-request.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !im.Detect(filepath.Join(joinedDir, "vllm-request.log"), log) {
		t.Error("vllm-request.log not detected")
	}
}

// Garbage lines injected into a vLLM request log (after complete,
// single-line records) are unknown lines: counted, the first one's line
// named in the notes and in a warning; the records around them still import.
func TestGarbageLinesCounted(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(joinedDir, "vllm-request.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	// after line 1 (Received request …) and after line 4 (the second Received
	// request): new lines 2 and 6
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		switch i {
		case 0:
			b.WriteString("garbage line one\n")
		case 3:
			b.WriteString("xyzzy 12345 !!\n")
		}
	}
	p := writeTemp(t, "vllm-request.log", []byte(b.String()))
	reqs, runs, warns := importWarn(t, p)
	if len(reqs) != 3 {
		t.Fatalf("%d records, want 3", len(reqs))
	}
	n := notes(runs[0])
	if !strings.Contains(n, "2 unknown lines skipped (first: line 2)") || strings.Contains(n, "continuation") {
		t.Errorf("notes:\n%s", n)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], p) || !strings.Contains(warns[0], "2 unknown lines skipped (first: line 2)") {
		t.Errorf("warnings %q", warns)
	}
	// the real log, untouched: no unknown line, no warning
	if _, runs, warns := importWarn(t, filepath.Join(joinedDir, "vllm-request.log")); len(warns) != 0 || strings.Contains(notes(runs[0]), "unknown") {
		t.Errorf("clean log: warnings %q, notes %s", warns, notes(runs[0]))
	}
}

// Lines that continue a record (a traceback after an ERROR line, indented
// frames, a prompt echoed by a DEBUG line) stay continuations; an INFO
// access line closes the record, so a stray line after it is unknown.
func TestContinuationNeedsAnOpenRecord(t *testing.T) {
	log := "(APIServer pid=1) INFO 01-01 00:00:00 [logger.py:49] Received request chatcmpl-a: params: SamplingParams(max_tokens=7), lora_request: None.\n" +
		"(APIServer pid=1) ERROR 01-01 00:00:01 [core.py:1] EngineCore failed\n" +
		"Traceback (most recent call last):\n" +
		"  File \"x.py\", line 1, in <module>\n" +
		"RuntimeError: boom\n" +
		"(APIServer pid=1) INFO:     127.0.0.1:5 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n" +
		"stray text\n" +
		"/usr/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: leaked semaphore\n" +
		"  warnings.warn('resource_tracker: %s' % name)\n"
	p := writeTemp(t, "vllm.log", []byte(log))
	reqs, runs, _ := importWarn(t, p)
	if len(reqs) != 1 {
		t.Fatalf("%d records", len(reqs))
	}
	n := notes(runs[0])
	for _, s := range []string{"4 continuation lines", "1 unknown lines skipped (first: line 7)", "python_warning 1"} {
		if !strings.Contains(n, s) {
			t.Errorf("notes lack %q:\n%s", s, n)
		}
	}
}

// The first half of a pretty-printed OTLP/JSON export (a file cut while
// being written): the spans complete before the cut are imported, the run
// is truncated, and the warning names the file and the byte and line of
// the cut.
func TestCutOTLPDocument(t *testing.T) {
	full, err := os.ReadFile(filepath.Join(joinedDir, "vllm-spans.json"))
	if err != nil {
		t.Fatal(err)
	}
	half := full[:len(full)/2]
	p := writeTemp(t, "vllm-spans.json", half)
	reqs, runs, warns := importWarn(t, p)
	// the spans are listed in request order (SOURCE.md): the first two end
	// before the middle of the file, the third does not
	if len(reqs) != 2 || reqs[0].ServerRequestID != "chatcmpl-req-0001" || reqs[1].ServerRequestID != "chatcmpl-req-0002" {
		t.Fatalf("records %d: %+v", len(reqs), reqs)
	}
	eq(t, "span 2 queue", reqs[1].ServerQueueNs, 150_000_000)
	if !runs[0].Truncated {
		t.Error("run not truncated")
	}
	lines := strings.Count(string(half), "\n") + 1
	pos := "byte " + itoa(len(half)) + " (line " + itoa(lines) + ")"
	var cutWarn string
	for _, w := range warns {
		if strings.Contains(w, "cut") {
			cutWarn = w
		}
	}
	if !strings.Contains(cutWarn, p) || !strings.Contains(cutWarn, pos) {
		t.Errorf("cut warning %q lacks the file or %q (all: %q)", cutWarn, pos, warns)
	}
	if !strings.Contains(notes(runs[0]), pos) {
		t.Errorf("notes lack %q:\n%s", pos, notes(runs[0]))
	}

	// cut before the first span ends: nothing to import, and it is not a
	// recognized log without timing
	res, _, err := New().Parse(writeTemp(t, "head.json", full[:300]))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Requests) != 0 || res.Recognized || !strings.Contains(res.Cut, "byte 300") || !strings.Contains(res.NoTiming, "cut") {
		t.Errorf("head: %d records, recognized %v, cut %q, no timing %q", len(res.Requests), res.Recognized, res.Cut, res.NoTiming)
	}
	// a Prometheus exposition is recognized (no per-request timing)
	res, _, err = New().Parse("../../testdata/server-logs/sglang-metrics-pr1853/metrics-excerpt.prom")
	if err != nil || !res.Recognized || res.NoTiming == "" {
		t.Errorf("prometheus: %+v %v", res, err)
	}
	// a client trace is not
	res, _, err = New().Parse(filepath.Join(joinedDir, "profile_export.jsonl"))
	if err != nil || res.Recognized || len(res.Requests) != 0 || res.Unknown != 5 {
		t.Errorf("client trace: %+v %v", res, err)
	}
}

// A text log whose last line has no line ending: the warning names the
// line and its byte offset.
func TestCutLastLinePosition(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(joinedDir, "vllm-request.log"))
	if err != nil {
		t.Fatal(err)
	}
	cut := src[:len(src)-20]
	start := strings.LastIndexByte(string(cut), '\n') + 1
	p := writeTemp(t, "vllm-request.log", cut)
	_, runs, warns := importWarn(t, p)
	pos := "line 9 (from byte " + itoa(start) + ")"
	if !runs[0].Truncated || len(warns) != 1 || !strings.Contains(warns[0], p) || !strings.Contains(warns[0], pos) {
		t.Errorf("truncated %v, warnings %q, want %q", runs[0].Truncated, warns, pos)
	}
}
