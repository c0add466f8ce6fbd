// Package ingest holds what every importer shares: the Importer interface,
// import options, positioned errors, file heads and hashing, run notes and
// warnings (Notes), secret redaction, and the derivation of a request's key
// offsets and status from its events.
//
// Each source format lives in its own sub-package (ingest/genaiperf,
// ingest/aiperf, ingest/llmperf); ingest/registry lists them and detects
// which one reads a file. SSE parsing shared by several importers lives in
// ingest/sse.
package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/tokentrace/tokentrace/formats"
)

// Importer reads one source format into formats rows.
type Importer interface {
	// Name is the format's name as accepted by --from ("genai-perf").
	Name() string
	// Detect reports whether path (whose first bytes are head, up to HeadSize)
	// is a primary input of this format: a file that holds the run's
	// requests, or a summary with no raw file beside it. It answers "this
	// format" even for a broken file of the format, so that Import can say
	// what is wrong with it; it never reads beyond head.
	Detect(path string, head []byte) bool
	// Companions returns the files beside path that belong to the same run
	// (the tool's summary files), which Import will also read; the caller
	// does not import them separately.
	Companions(path string) []string
	// Import reads path (and its companions) and sends rows to sink.
	Import(path string, opt Options, sink formats.Sink) error
}

// Options control an import.
type Options struct {
	// Label is the run id to give the file's run (a multi-run file gets
	// Label#1, Label#2, … for its 2nd, 3rd, … run). Default: DefaultLabel.
	Label string
	// NoText drops generated text from events (Event.Text, ReasoningText).
	NoText bool
	// Warn receives non-fatal import remarks (also kept in Run.Notes); may
	// be nil.
	Warn func(msg string)
	// NoHash skips the SHA-256 of the streamed inputs (SourceFile.SHA256
	// is left empty): for commands that write no provenance (`report`),
	// where hashing a 259 MB export costs 0.2 s of CPU for nothing.
	NoHash bool
}

// DefaultLabel is the run label for path when none is given. Benchmark
// tools write one run per directory under a fixed file name
// (profile_export.json, individual_responses.json, summary.json), so the
// label is the name of the directory holding the file. When the file name
// carries the run's own name — LLMPerf's "<model>_<in>_<out>_individual_responses.json",
// a renamed export — the label is that stem instead (tool suffixes
// removed), so several runs in one directory get distinct labels.
func DefaultLabel(path string) string {
	base := filepath.Base(path)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	for _, suf := range []string{"_individual_responses", "_summary", "_genai_perf", "_aiperf"} {
		stem = strings.TrimSuffix(stem, suf)
	}
	// inference-perf: [<prefix>]{summary,stage_N,per_request,adapter_X}_{lifecycle,prometheus}_metrics
	if m := lifecycleName.FindStringSubmatch(stem); m != nil {
		stem = strings.TrimRight(m[1], "_-. ")
	}
	switch stem {
	case "", "profile_export", "individual_responses", "summary", "profile_export_genai_perf", "profile_export_aiperf",
		"benchmarks", "mlperf_log", "mlperf_log_detail":
	default:
		return stem
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	dir := filepath.Base(filepath.Dir(abs))
	if dir == "." || dir == "/" || dir == "" {
		return stem
	}
	return dir
}

var lifecycleName = regexp.MustCompile(`^(.*?)(?:per_request|summary|stage_\d+|adapter_.+)_(?:lifecycle|prometheus)_metrics$`)

// LabelFor returns o.Label, or DefaultLabel(path) when it is empty: the
// label of the run(s) an importer makes of path.
func (o Options) LabelFor(path string) string {
	if o.Label != "" {
		return o.Label
	}
	return DefaultLabel(path)
}

// RunLabel is the run id of the i-th (0-based) run of a file labelled label.
func RunLabel(label string, i int) string {
	if i == 0 {
		return label
	}
	return fmt.Sprintf("%s#%d", label, i+1)
}

// FormatError is an input error with its position.
type FormatError struct {
	File string // file path
	// Where is the position: "line 12", "record 7", "byte 1234",
	// "request 3 (experiment 0)".
	Where string
	Msg   string
	Err   error // underlying error, if any
}

func (e *FormatError) Error() string {
	s := e.File
	if e.Where != "" {
		s += ": " + e.Where
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

// Errorf returns a *FormatError.
func Errorf(file, where, format string, args ...any) error {
	return &FormatError{File: file, Where: where, Msg: fmt.Sprintf(format, args...)}
}

// ErrNotThisFormat is returned (wrapped) by an importer forced with --from
// onto a file it cannot read at all.
var ErrNotThisFormat = errors.New("not this format")

// HashingFile is an open file whose reads are hashed, so that a streamed
// import knows the file's SHA-256 without a second pass. With more than
// one CPU the hashing runs on its own goroutine over copies of the reads
// (SHA-256 of a 259 MB export is ~0.2 s, the import's parsing ~0.5 s: the
// two overlap), holding at most hashDepth+1 chunks; with one CPU it hashes
// inline.
type HashingFile struct {
	f    *os.File
	h    hash.Hash
	n    int64
	path string

	// concurrent hashing: chunks go to the hasher on todo and come back
	// on free; done is closed when the hasher has hashed everything.
	todo   chan []byte
	free   chan []byte
	done   chan struct{}
	closed bool
}

// hashDepth is how many chunks of at most hashChunk bytes may wait to be
// hashed (reads are cut into chunks): ~1 MB of copies in all.
const hashDepth, hashChunk = 3, 256 << 10

// OpenHashed opens path for a hashed, streamed read. Close it (after
// SourceFile, or on an error path) to release the file and the hasher.
func OpenHashed(path string) (*HashingFile, error) {
	return OpenInput(path, Options{})
}

// OpenInput opens path for a streamed read, hashed unless opt.NoHash.
func OpenInput(path string, opt Options) (*HashingFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	hf := &HashingFile{f: f, path: path}
	if opt.NoHash {
		return hf, nil
	}
	hf.h = sha256.New()
	if runtime.GOMAXPROCS(0) > 1 {
		hf.todo, hf.free, hf.done = make(chan []byte, hashDepth), make(chan []byte, hashDepth+1), make(chan struct{})
		for range hashDepth + 1 {
			hf.free <- nil
		}
		go func() {
			defer close(hf.done)
			for b := range hf.todo {
				hf.h.Write(b)
				hf.free <- b
			}
		}()
	}
	return hf, nil
}

func (h *HashingFile) Read(p []byte) (int, error) {
	n, err := h.f.Read(p)
	if n > 0 {
		h.n += int64(n)
		bytesRead.Add(int64(n))
		switch {
		case h.closed || h.h == nil: // after SourceFile, or not hashing
		case h.todo == nil:
			h.h.Write(p[:n])
		default:
			for q := p[:n]; len(q) > 0; {
				k := min(len(q), hashChunk)
				b := <-h.free
				b = append(b[:0], q[:k]...)
				h.todo <- b
				q = q[k:]
			}
		}
	}
	return n, err
}

var bytesRead atomic.Int64

// BytesRead is the number of input bytes read through HashingFile by this
// process so far, for progress display. Safe for concurrent use.
func BytesRead() int64 { return bytesRead.Load() }

// Close closes the file and stops the hasher.
func (h *HashingFile) Close() error {
	h.stopHasher()
	return h.f.Close()
}

func (h *HashingFile) stopHasher() {
	if h.todo != nil && !h.closed {
		h.closed = true
		close(h.todo)
		<-h.done
	}
}

// SourceFile finishes reading the rest of the file (so the digest covers it
// all) and returns its description. Reads after it are not hashed. Without
// hashing (Options.NoHash) SHA256 is empty and Bytes the file's size.
func (h *HashingFile) SourceFile(role string) (formats.SourceFile, error) {
	if h.h == nil { // not hashing: the size is all there is to know
		st, err := h.f.Stat()
		if err != nil {
			return formats.SourceFile{}, err
		}
		return formats.SourceFile{Path: h.path, Role: role, Bytes: st.Size()}, nil
	}
	if _, err := io.Copy(io.Discard, h); err != nil {
		return formats.SourceFile{}, err
	}
	h.stopHasher()
	src := formats.SourceFile{Path: h.path, Role: role, Bytes: h.n}
	if h.h != nil {
		src.SHA256 = hex.EncodeToString(h.h.Sum(nil))
	}
	return src, nil
}

// HashFile returns the description of a whole small file and its bytes.
func HashFile(path, role string) (formats.SourceFile, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return formats.SourceFile{}, nil, err
	}
	sum := sha256.Sum256(b)
	return formats.SourceFile{Path: path, Role: role, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(b))}, b, nil
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }
