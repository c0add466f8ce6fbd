package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

func TestDefaultLabel(t *testing.T) {
	cases := map[string]string{
		"runs/c1/profile_export.json":                                         "c1",
		"runs/c1/profile_export_genai_perf.json":                              "c1",
		"res/meta-llama-Llama-2-7b-chat-hf_550_150_individual_responses.json": "meta-llama-Llama-2-7b-chat-hf_550_150",
		"res/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json":              "meta-llama-Llama-2-7b-chat-hf_550_150",
		"leaderboard/anyscale/individual_responses.json":                      "anyscale",
		"exports/sweep_c8.json":                                               "sweep_c8",
		// AIPerf's multi-run trees (docs/api/sweep-aggregates.md)
		"a/llama-openai-chat-concurrency_sweep/profile_runs/trial_0002/concurrency_10/profile_export.jsonl": "trial_0002/concurrency_10",
		"a/bench/concurrency_10/profile_runs/trial_0003/profile_export.jsonl":                               "concurrency_10/trial_0003",
		"a/bench/request_rate_5.0__isl_512/profile_runs/trial_0001/profile_export.jsonl":                    "request_rate_5.0__isl_512/trial_0001",
		"a/llama-openai-chat-concurrency_10/profile_runs/run_0004/profile_export.jsonl":                     "run_0004",
		"a/bench/search_iter_0002/profile_runs/run_0001/profile_export.jsonl":                               "search_iter_0002/run_0001",
		"a/bench/concurrency_10/profile_export.jsonl":                                                       "concurrency_10",
		"a/profile_runs/notatrial/profile_export.jsonl":                                                     "notatrial",
	}
	for in, want := range cases {
		if got := DefaultLabel(in); got != want {
			t.Errorf("DefaultLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunLabel(t *testing.T) {
	if RunLabel("x", 0) != "x" || RunLabel("x", 1) != "x#2" {
		t.Fatal(RunLabel("x", 1))
	}
}

func TestRedactJSON(t *testing.T) {
	in := `{"header":["Authorization:Bearer sk-or-v1-abcdef0123456789","X-Title:ok"],"api_key":"k","tokenizer":"gpt2","u":"https://h/api","note":"token sk-abcdefgh12345678 here"}`
	out, paths := RedactJSON([]byte(in), "cfg")
	want := `{"api_key":"REDACTED","header":["Authorization:REDACTED","X-Title:ok"],"note":"token REDACTED here","tokenizer":"gpt2","u":"https://h/api"}`
	if out != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if len(paths) != 3 || paths[0] != "cfg.api_key" || paths[1] != "cfg.header[0]" || paths[2] != "cfg.note" {
		t.Fatalf("paths %v", paths)
	}
}

// TestHashingFile: the digest of a file read through HashingFile in
// reads of odd sizes (and the rest by SourceFile) is the file's SHA-256,
// with one CPU (inline) and with several (the hasher goroutine); Close
// after SourceFile, and reads after it, are harmless.
func TestHashingFile(t *testing.T) {
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i * 7 % 251)
	}
	path := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(data)
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		hf, err := OpenHashed(path)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1<<20+3)
		for read := 0; read < 2<<20; {
			n, err := hf.Read(buf[:1+read%len(buf)])
			if err != nil {
				t.Fatal(err)
			}
			read += n
		}
		src, err := hf.SourceFile("raw")
		if err != nil {
			t.Fatal(err)
		}
		if src.SHA256 != hex.EncodeToString(want[:]) || src.Bytes != int64(len(data)) {
			t.Errorf("GOMAXPROCS %d: %s %d bytes, want %x %d", procs, src.SHA256, src.Bytes, want, len(data))
		}
		if n, _ := hf.Read(buf); n != 0 {
			t.Errorf("read %d bytes after the end", n)
		}
		if err := hf.Close(); err != nil {
			t.Error(err)
		}
	}
	// without hashing: no digest, the file's size
	in, err := Open(path, Options{NoHash: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	buf := make([]byte, 1000)
	if n, err := in.Read(buf); err != nil || n != len(buf) {
		t.Fatalf("read %d, %v", n, err)
	}
	src, err := in.SourceFile("raw")
	if err != nil || src.SHA256 != "" || src.Bytes != int64(len(data)) {
		t.Errorf("NoHash: %+v, %v; want no digest and %d bytes", src, err, len(data))
	}
}

// TestReadHead checks the head of a short file (whole), of a long one
// (exactly HeadSize bytes, its first ones), of an empty file, and the
// errors of a missing path; and Exists on a file, a directory and nothing.
func TestReadHead(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.json")
	long := filepath.Join(dir, "long.json")
	empty := filepath.Join(dir, "empty.json")
	big := make([]byte, HeadSize+10)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	for p, b := range map[string][]byte{short: []byte(`{"a":1}`), long: big, empty: nil} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if h, err := ReadHead(short); err != nil || string(h) != `{"a":1}` {
		t.Errorf("ReadHead(short) = %q, %v", h, err)
	}
	if h, err := ReadHead(long); err != nil || len(h) != 65536 || h[0] != 'a' || h[65535] != byte('a'+65535%26) {
		t.Errorf("ReadHead(long): %d bytes, %v; want 65536", len(h), err)
	}
	if h, err := ReadHead(empty); err != nil || h == nil || len(h) != 0 {
		t.Errorf("ReadHead(empty) = %q (nil %v), %v; want empty, non-nil", h, h == nil, err)
	}
	if _, err := ReadHead(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("ReadHead(missing) error = %v, want not-exist", err)
	}
	if !Exists(short) || !Exists(empty) || Exists(dir) || Exists(filepath.Join(dir, "missing")) {
		t.Errorf("Exists: file %v, empty %v, dir %v, missing %v; want true true false false",
			Exists(short), Exists(empty), Exists(dir), Exists(filepath.Join(dir, "missing")))
	}
}

// TestNotes checks what goes to Run.Notes and what to Options.Warn, with
// and without Once, and that a nil Options.Warn still keeps the notes.
func TestNotes(t *testing.T) {
	var warned []string
	opt := Options{Warn: func(s string) { warned = append(warned, s) }}
	n := NewNotes("runs/a.json", opt)
	n.Add("plain")
	n.Warn("cut at line 3")
	n.WarnNamed("runs/a_summary.json: byte 7: bad")
	n.WarnOnly("summary only")
	n.Warn("cut at line 3")
	wantLines := []string{"plain", "cut at line 3", "runs/a_summary.json: byte 7: bad", "cut at line 3"}
	wantWarned := []string{"runs/a.json: cut at line 3", "runs/a_summary.json: byte 7: bad", "runs/a.json: summary only", "runs/a.json: cut at line 3"}
	if !slices.Equal(n.Lines, wantLines) || !slices.Equal(warned, wantWarned) {
		t.Errorf("Lines %q, warned %q; want %q, %q", n.Lines, warned, wantLines, wantWarned)
	}

	warned = nil
	o := NewNotes("s/summary.json", opt).Once()
	o.WarnOnly("key x")
	o.Warn("key x")
	c := o.About("s/run=1.json")
	c.WarnOnly("key x") // warned for summary.json already
	c.WarnOnly("key y")
	o.WarnOnly("key y")
	if want := []string{"s/summary.json: key x", "s/run=1.json: key y"}; !slices.Equal(warned, want) || !slices.Equal(o.Lines, []string{"key x"}) || len(c.Lines) != 0 {
		t.Errorf("Once: warned %q, lines %q and %q; want %q, [key x], []", warned, o.Lines, c.Lines, want)
	}

	quiet := NewNotes("a", Options{})
	quiet.Warn("w")
	quiet.WarnOnly("x")
	if !slices.Equal(quiet.Lines, []string{"w"}) {
		t.Errorf("nil Warn: Lines %q, want [w]", quiet.Lines)
	}
}

// TestDefaultLabelPipe: a process substitution's /dev/fd/63 says nothing
// of the run: it is "pipe", not "fd63".
func TestDefaultLabelPipe(t *testing.T) {
	for _, p := range []string{"/dev/fd/63", "/proc/self/fd/12"} {
		if got := DefaultLabel(p); got != "pipe" {
			t.Errorf("DefaultLabel(%q) = %q, want pipe", p, got)
		}
	}
	if got := DefaultLabel("-"); got != "stdin" {
		t.Errorf("stdin: %q", got)
	}
}
