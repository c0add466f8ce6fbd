// Package ingest holds what every importer shares: the Importer interface,
// import options, positioned errors, the input reader every importer reads
// through (Input: opened once, its head buffered for detection, a BOM
// dropped, gzip and zstd decompressed, hashed as given) with the caps on
// one value (limits.go: lines, JSON values, whole documents), run notes
// and warnings (Notes), secret redaction, and the derivation of a
// request's key offsets and status from its events.
//
// Each source format lives in its own sub-package (ingest/genaiperf,
// ingest/aiperf, ingest/llmperf); ingest/registry lists them and detects
// which one reads a file. SSE parsing shared by several importers lives in
// ingest/sse.
//
// # Inputs
//
// Every importer reads its primary file and its companion files through an
// Input (Open, ReadFile), which reads every byte once: its first HeadSize
// bytes are buffered for detection and the import reads on from there, so
// "-" (standard input), a named pipe and a process substitution
// (/dev/fd/N) work like a file (ingest/registry keeps such an Input open
// from detection to import; a regular file it opens again for the import,
// so that a directory of thousands of files holds nothing in between).
// gzip and zstd content is decompressed by its magic bytes, whatever the
// name; a UTF-8 byte-order mark is dropped; the bytes as given are hashed
// (SourceFile). Positions in errors count the decoded content.
//
// # Caps on one value
//
// Every value an importer holds in memory at once is capped by
// Options.MaxValue (default DefaultMaxValueBytes, 256 MiB; the importing
// commands' --max-value-size):
//
//   - a line of a line-oriented file (AIPerf's JSONL, server logs, MLPerf
//     logs): ReadLine;
//   - a JSON value read from a stream — a GenAI-Perf request, an LLMPerf
//     or inference-perf record, a guidellm benchmark's metrics or request
//     — and so every string and array inside it: NewJSONDecoder, and the
//     GenAI-Perf lexer;
//   - a file parsed as one document (a guidellm YAML report, a summary, a
//     server log that is one JSON document; a vLLM result or SGLang's JSON
//     lines when compressed or piped): Input.ReadAll and ReadFile. A plain
//     vLLM or SGLang result file is streamed in two passes (ingest/pybench
//     Scan): there the cap bounds the per-request values kept between the
//     passes (about 15 MB at 100k requests) and each value read, not the
//     file.
//
// A request's messages are capped too (Options.MaxMessages, MaxValue /
// 256): they are held at once while it is imported and computed.
//
// The cap is checked as the value is read, before the buffer holding it
// grows past it, so a runaway value (a 2 GB string, a file of zeros) costs
// at most about twice the cap in memory and is refused with a *CapError
// (errors.Is ErrValueTooLarge) naming the cap and the option that raises
// it, positioned at the value. The GenAI-Perf lexer also stops at the
// first byte JSON does not allow where it stands, so a damaged export is
// refused where it goes wrong, not after its end.
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
	// Detect reports whether path (whose first decoded bytes are head, up
	// to HeadSize: Input.Head) is a primary input of this format: a file
	// that holds the run's requests, or a summary with no raw file beside
	// it. It answers "this format" even for a broken file of the format,
	// so that Import can say what is wrong with it; it never reads beyond
	// head. path is "-" for standard input, which has no name and no
	// files beside it.
	Detect(path string, head []byte) bool
	// Companions returns the files beside path that belong to the same run
	// (the tool's summary files), which Import will also read; the caller
	// does not import them separately.
	Companions(path string) []string
	// Import reads in — opened once, its head already buffered (Open) —
	// and its companions (read through ReadFile or Open), and sends rows
	// to sink. The caller closes in.
	Import(in *Input, opt Options, sink formats.Sink) error
}

// Options control an import. The zero value is ready to use.
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
	// where hashing a 259 MB export costs 0.2 s of CPU for nothing. A
	// pipe or standard input is hashed all the same (Input).
	NoHash bool
	// MaxValueBytes caps one value of an input: one line, one JSON value
	// (a record, a request object) and so every string and array inside
	// it, and a whole file that an importer parses as one document. 0
	// means DefaultMaxValueBytes. See MaxValue.
	MaxValueBytes int64
	// Stdin is the reader of the input "-"; nil means os.Stdin.
	Stdin io.Reader
	// MaxSeriesPoints caps the series points one input holds (GPU
	// telemetry, Prometheus results): past it they are thinned evenly,
	// with a note (SeriesBuf). 0 means DefaultMaxSeriesPoints.
	MaxSeriesPoints int64
	// Parallel is how many input files ingest/registry recognizes and
	// decodes at once (ResolveInputs, Import): 0 means one per CPU
	// (runtime.GOMAXPROCS), at most 4; 1 reads them one after another.
	// The rows reach the sink in the same order whatever it is. Importers
	// ignore it.
	Parallel int
}

// DefaultMaxValueBytes is the default cap on one value of an input
// (Options.MaxValueBytes): 256 MiB. The largest values of real files are
// far below it — a GenAI-Perf request with its SSE responses, an AIPerf
// record line (about 20 bytes per chunk: some 13 million chunks), a vLLM
// result object with its per-request arrays (a 10,000-request run with
// --save-detailed is some 60 MB) — while a runaway value (a 2 GB string, a
// file of zeros) is refused after reading at most the cap, holding at most
// about twice the cap in memory, instead of exhausting it. Measured with
// /usr/bin/time -v: a GenAI-Perf export with a 500 MB response string is
// refused in 2.9 s at 0.70 GB peak RSS (0.85 s and 0.20 GB under
// --max-value-size 64MiB), where it used to take 11.6 s and 3.1 GB; a
// 2 GB export of NUL bytes after byte 76 is refused at byte 76 in 0.03 s
// and 24 MB (13.8 s and 3.7 GB before).
const DefaultMaxValueBytes = 256 << 20

// MaxValue is the cap on one value: MaxValueBytes, or DefaultMaxValueBytes
// when it is 0 or negative.
func (o Options) MaxValue() int64 {
	if o.MaxValueBytes > 0 {
		return o.MaxValueBytes
	}
	return DefaultMaxValueBytes
}

// MaxMessages is the cap on one request's messages: MaxValue / 256
// (1,048,576 at the default 256 MiB; --max-value-size raises both). A
// request's messages are held while it is imported and computed — about
// 250 bytes each live, its events and responses — so the cap keeps one
// request within about 0.25–0.5 GB; a value cap alone would let a record
// of 256 MiB hold 26M numbers (9 GB). No benchmark reply has a million
// messages (a message carries one token or more).
func (o Options) MaxMessages() int64 { return o.MaxValue() / 256 }

// CheckMessages returns a *CapError when a request holding n messages
// (what: "inter_chunk_latency of 1,200,000 values") passes MaxMessages.
func (o Options) CheckMessages(n int64, what string) error {
	if n <= o.MaxMessages() {
		return nil
	}
	return &MessagesError{What: what, N: n, Cap: o.MaxMessages(), ValueCap: o.MaxValue()}
}

// MessagesError is a request with more messages than Options.MaxMessages.
type MessagesError struct {
	What     string
	N, Cap   int64
	ValueCap int64
}

func (e *MessagesError) Error() string {
	return fmt.Sprintf("a request of %d messages (%s), more than the %d a request may hold (--max-value-size %s / 256: its messages are held at once, about 250 bytes each; raise --max-value-size to allow more)",
		e.N, e.What, e.Cap, FormatSize(e.ValueCap))
}

func (e *MessagesError) Unwrap() error { return ErrValueTooLarge }

// DefaultLabel is the run label for path when none is given. Benchmark
// tools write one run per directory under a fixed file name
// (profile_export.json, individual_responses.json, summary.json), so the
// label is the name of the directory holding the file. Standard input
// ("-") is labelled "stdin", a process substitution (/dev/fd/63, whose
// number says nothing of the run) "pipe" (several: pipe, pipe-2, … by
// registry.UniqueLabels); a compressed file (.gz, .zst) is named without
// that suffix.
// Runs in AIPerf's multi-run trees are named by their trial and sweep
// cell (multiRunLabel). When the file name
// carries the run's own name — LLMPerf's "<model>_<in>_<out>_individual_responses.json",
// a renamed export — the label is that stem instead (tool suffixes
// removed), so several runs in one directory get distinct labels.
func DefaultLabel(path string) string {
	if path == StdinPath {
		return "stdin"
	}
	if m := fdPath.FindStringSubmatch(path); m != nil { // <(cmd): /dev/fd/63
		return "pipe"
	}
	for _, z := range []string{".gz", ".zst", ".zstd"} { // a compressed file: its own name
		path = strings.TrimSuffix(path, z)
	}
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
	return multiRunLabel(abs, dir)
}

// multiRunLabel names a run of AIPerf's multi-run trees by the two
// directories that tell it apart (docs/api/sweep-aggregates.md, "Artifact
// Directory Layout Reference", ai-dynamo/aiperf@61aa933f): a sweep with
// trials repeated writes <base>/profile_runs/trial_NNNN/<cell>/ and with
// trials independent <base>/<cell>/profile_runs/trial_NNNN/, where a cell
// is "<parameter>_<value>" (concurrency_10, request_rate_5.0; several
// parameters joined by "__"); trials of one configuration write
// <base>/profile_runs/run_NNNN/, and adaptive search
// <base>/search_iter_NNNN/profile_runs/run_NNNN/. The label is
// "trial_0001/concurrency_10", "concurrency_10/trial_0001",
// "search_iter_0002/run_0001", or the directory name alone ("run_0001",
// "concurrency_10") elsewhere.
func multiRunLabel(abs, dir string) string {
	parent := filepath.Base(filepath.Dir(filepath.Dir(abs)))
	grand := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(abs))))
	switch {
	case trialDir.MatchString(parent) && grand == "profile_runs":
		return parent + "/" + dir // repeated: trial_NNNN/<cell>
	case trialDir.MatchString(dir) && parent == "profile_runs" && (sweepCell.MatchString(grand) || searchIter.MatchString(grand)):
		return grand + "/" + dir // independent: <cell>/trial_NNNN
	}
	return dir
}

var (
	trialDir   = regexp.MustCompile(`^(?:trial|run)_\d+$`)
	sweepCell  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z][A-Za-z0-9]*)*_[0-9][0-9.]*(?:__.+)?$`)
	searchIter = regexp.MustCompile(`^search_iter_\d+$`)
)

var fdPath = regexp.MustCompile(`^/(?:dev|proc/self)/fd/(\d+)$`)

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
	s := DisplayName(e.File)
	if e.Where != "" {
		s += ": " + e.Where
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// DisplayName is path as messages name it: "standard input" for "-".
func DisplayName(path string) string {
	if path == StdinPath {
		return "standard input"
	}
	return path
}

func (e *FormatError) Unwrap() error { return e.Err }

// Errorf returns a *FormatError.
func Errorf(file, where, format string, args ...any) error {
	return &FormatError{File: file, Where: where, Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns a *FormatError for err at file and where, with err's own
// text as the message and err kept for errors.Is/As (a *CapError stays a
// CapError).
func Wrap(file, where string, err error) error {
	return &FormatError{File: file, Where: where, Err: err}
}

// ErrNotThisFormat is returned (wrapped) by an importer forced with --from
// onto a file it cannot read at all.
var ErrNotThisFormat = errors.New("not this format")

// HashingFile is an open input whose reads are hashed, so that a streamed
// import knows the input's SHA-256 without a second pass. With more than
// one CPU the hashing runs on its own goroutine over copies of the reads
// (SHA-256 of a 259 MB export is ~0.2 s, the import's parsing ~0.5 s: the
// two overlap), holding at most hashDepth+1 chunks; with one CPU it hashes
// inline. Importers read through an Input, which holds one.
type HashingFile struct {
	r    io.Reader
	f    *os.File // nil for standard input given as a reader
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

// OpenHashed opens path for a hashed, streamed read of its bytes as they
// are (no decompression: see Open for that). Close it (after SourceFile,
// or on an error path) to release the file and the hasher.
func OpenHashed(path string) (*HashingFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return newHashingFile(f, f, path, true), nil
}

// newHashingFile reads r (the open file f, or standard input with f nil),
// hashing what it reads when hashing is true.
func newHashingFile(r io.Reader, f *os.File, path string, hashing bool) *HashingFile {
	hf := &HashingFile{r: r, f: f, path: path}
	if !hashing {
		return hf
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
	return hf
}

func (h *HashingFile) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
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

// Close closes the file (not standard input) and stops the hasher.
func (h *HashingFile) Close() error {
	h.stopHasher()
	if h.f == nil || h.f == os.Stdin {
		return nil
	}
	return h.f.Close()
}

func (h *HashingFile) stopHasher() {
	if h.todo != nil && !h.closed {
		h.closed = true
		close(h.todo)
		<-h.done
	}
}

// SourceFile finishes reading the rest of the input (so the digest covers
// it all) and returns its description. Reads after it are not hashed.
// Without hashing (Options.NoHash, regular files only) SHA256 is empty and
// Bytes the file's size.
func (h *HashingFile) SourceFile(role string) (formats.SourceFile, error) {
	path := h.path
	if h.h == nil && h.f != nil { // not hashing: the size is all there is to know
		if st, err := h.f.Stat(); err != nil {
			return formats.SourceFile{}, err
		} else if st.Mode().IsRegular() {
			return formats.SourceFile{Path: path, Role: role, Bytes: st.Size()}, nil
		}
	}
	if _, err := io.Copy(io.Discard, h); err != nil {
		return formats.SourceFile{}, err
	}
	h.stopHasher()
	src := formats.SourceFile{Path: path, Role: role, Bytes: h.n}
	if h.h != nil {
		src.SHA256 = hex.EncodeToString(h.h.Sum(nil))
	}
	return src, nil
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }
