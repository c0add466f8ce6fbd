package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/tokentrace/tokentrace/formats"
)

// StdinPath is the input name that means standard input.
const StdinPath = "-"

// Input is one input opened for reading, once: a regular file, a named
// pipe, a process substitution (/dev/fd/N) or standard input ("-"). Every
// importer reads its primary file and its companion files through one.
//
// What the importer reads is the file's content, decoded:
//
//   - gzip and zstd inputs, recognized by their magic bytes (1f 8b;
//     28 b5 2f fd) whatever their name, are decompressed (zstd with a window
//     of at most MaxZstdWindow);
//   - a UTF-8 byte-order mark (ef bb bf) at the start of the content is
//     dropped.
//
// Positions in errors ("byte N", "line N") count the decoded content from
// its first byte after the mark. The first HeadSize bytes of that content
// are buffered when the input is opened (Head): detection reads them and
// the import then continues from the same buffer, so nothing is read
// twice and a pipe works like a file.
//
// The SHA-256 and size of SourceFile are those of the bytes as given
// (compressed, with the mark): the digest identifies the file on disk.
// They are computed as the input is read (HashingFile), unless
// Options.NoHash is set for a regular file; an input that cannot be read
// again (a pipe, standard input) is always hashed.
type Input struct {
	// Path is the name the input was given by ("-" for standard input).
	Path string
	// Compression is "gzip", "zstd" or "" (none).
	Compression string
	// BOM is true when a UTF-8 byte-order mark was dropped.
	BOM bool

	raw     *HashingFile
	dec     io.ReadCloser // the decompressor, if any
	br      *bufio.Reader // the decoded content
	head    []byte
	off     int64 // decoded bytes read so far
	regular bool  // a regular file: its size is known and it can be opened again
	size    int64 // its size, for a regular file
	max     int64 // Options.MaxValue()
	cut     bool  // the compressed stream ended early
}

// MaxZstdWindow is the largest zstd window (the back-reference distance a
// frame may ask for, which the decoder must hold in memory) that Open
// accepts: 128 MiB, the zstd command's own default limit (--long=27).
const MaxZstdWindow = 128 << 20

// Open opens path for an import with opt (hashing, value cap); "-" opens
// standard input (opt.Stdin, else os.Stdin). It reads the head (up to
// HeadSize decoded bytes): the errors are the open's, a decompressor's
// that cannot start (a damaged gzip header), and the read's. Close the
// Input when done.
func Open(path string, opt Options) (*Input, error) {
	var f *os.File
	var r io.Reader
	in := &Input{Path: path, max: opt.MaxValue()}
	if path == StdinPath {
		r = opt.Stdin
		if r == nil {
			r = os.Stdin
		}
	} else {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if st.IsDir() {
			f.Close()
			return nil, &FormatError{File: path, Msg: "is a directory"}
		}
		in.regular, in.size = st.Mode().IsRegular(), st.Size()
		r = f
	}
	hashing := !opt.NoHash || !in.regular
	in.raw = newHashingFile(r, f, path, hashing)
	if err := in.start(); err != nil {
		in.raw.Close()
		return nil, err
	}
	return in, nil
}

// OpenReader is Open over r, an input already open under the name path
// (a test's bytes, a network stream): it is read like a pipe (hashed
// whatever opt.NoHash says, never reopened). path is what messages and
// the name-based parts of detection see; no file of that name is opened.
func OpenReader(path string, r io.Reader, opt Options) (*Input, error) {
	in := &Input{Path: path, max: opt.MaxValue()}
	in.raw = newHashingFile(r, nil, path, true)
	if err := in.start(); err != nil {
		in.raw.Close()
		return nil, err
	}
	return in, nil
}

// start recognizes the compression, sets up the decoded stream and buffers
// its head.
func (in *Input) start() error {
	rb := bufio.NewReaderSize(in.raw, 4<<10)
	magic, err := rb.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	var content io.Reader = rb
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		z, err := gzip.NewReader(rb)
		if err != nil {
			return &FormatError{File: in.Path, Where: "byte 0", Msg: "damaged gzip header", Err: err}
		}
		in.Compression, in.dec, content = "gzip", z, z
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		z, err := zstd.NewReader(rb, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(MaxZstdWindow))
		if err != nil {
			return &FormatError{File: in.Path, Where: "byte 0", Msg: "cannot start the zstd decoder", Err: err}
		}
		in.Compression, in.dec, content = "zstd", z.IOReadCloser(), z
	}
	if in.dec != nil {
		content = &decodeErrors{in: in, r: content}
	}
	in.br = bufio.NewReaderSize(content, HeadSize)
	if bom, err := in.br.Peek(3); err == nil && bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		in.br.Discard(3)
		in.BOM = true
	}
	head, err := in.br.Peek(HeadSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	in.head = append(make([]byte, 0, len(head)), head...)
	return nil
}

// decodeErrors turns the decompressor's report of a stream that ends early
// (io.ErrUnexpectedEOF) into the end of the content, as a plain file cut
// short reads, and names the compression in any other error (a damaged
// block, a bad checksum).
type decodeErrors struct {
	in *Input
	r  io.Reader
}

func (d *decodeErrors) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	switch {
	case err == nil, errors.Is(err, io.EOF):
	case errors.Is(err, io.ErrUnexpectedEOF):
		d.in.cut = true
		err = io.EOF
	default:
		err = &FormatError{File: d.in.Path, Where: fmt.Sprintf("byte %d of the decompressed content", d.in.off+int64(n)),
			Msg: "damaged " + d.in.Compression + " data", Err: err}
	}
	return n, err
}

// Head is the first HeadSize bytes of the decoded content (all of it when
// it is shorter; empty, not nil, for an empty input). The caller must not
// modify it.
func (in *Input) Head() []byte { return in.head }

// Read reads the decoded content from its start (the head included).
func (in *Input) Read(p []byte) (int, error) {
	n, err := in.br.Read(p)
	in.off += int64(n)
	return n, err
}

// Offset is the number of decoded bytes read so far.
func (in *Input) Offset() int64 { return in.off }

// Reader is the decoded content as a *bufio.Reader (at least HeadSize
// buffered), for line and token readers; reading it moves the Input
// forward as Read does, but Offset does not count it.
func (in *Input) Reader() *bufio.Reader { return in.br }

// Cut reports whether the compressed stream ended before its end marker
// (a .gz or .zst file cut short): the content read is then all there is,
// and the importer's own check for a cut value or line applies.
func (in *Input) Cut() bool { return in.cut }

// Regular reports whether the input is a regular file (not a pipe or
// standard input).
func (in *Input) Regular() bool { return in.regular }

// MaxValue is the cap on one value of this input (Options.MaxValue).
func (in *Input) MaxValue() int64 { return in.max }

// ReadAll reads the whole decoded content, for importers that parse a file
// as one document (a result object, a YAML report, a summary). The content
// is one value for the cap: larger than MaxValue, it is refused with a
// *CapError (wrapped in a *FormatError) before it is read in full — at
// once for an uncompressed regular file, whose size is known.
func (in *Input) ReadAll() ([]byte, error) {
	max := in.max
	if in.regular && in.Compression == "" && in.size-int64(len(bomIf(in.BOM))) > max {
		return nil, in.capErr("file", 0)
	}
	var buf bytes.Buffer
	if in.regular && in.Compression == "" {
		buf.Grow(int(min(in.size, max) + 1))
	}
	n, err := buf.ReadFrom(io.LimitReader(in, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, in.capErr("file", 0)
	}
	return buf.Bytes(), nil
}

func bomIf(b bool) []byte {
	if b {
		return []byte("\xef\xbb\xbf")
	}
	return nil
}

// capErr is the *FormatError for a value (what) that starts at byte off
// and is larger than the cap.
func (in *Input) capErr(what string, off int64) error {
	where := ""
	if what != "file" {
		where = fmt.Sprintf("byte %d", off)
	}
	return &FormatError{File: in.Path, Where: where, Err: &CapError{What: what, Cap: in.max}}
}

// SourceFile finishes reading the input as given (so that the digest
// covers all of it) and describes it: Path, Role, the SHA-256 and the size
// of the bytes as given. See HashingFile.SourceFile.
func (in *Input) SourceFile(role string) (formats.SourceFile, error) {
	return in.raw.SourceFile(role)
}

// Close releases the file and the decompressor.
func (in *Input) Close() error {
	if in.dec != nil {
		in.dec.Close()
	}
	return in.raw.Close()
}

// ReadFile opens path with opt, reads it whole (ReadAll: decoded, capped)
// and returns its description (SourceFile with role) and content: for
// companion files and one-document formats.
func ReadFile(path, role string, opt Options) (formats.SourceFile, []byte, error) {
	opt.NoHash = false // a companion is small; its digest is always kept
	in, err := Open(path, opt)
	if err != nil {
		return formats.SourceFile{}, nil, err
	}
	defer in.Close()
	b, err := in.ReadAll()
	if err != nil {
		return formats.SourceFile{}, nil, err
	}
	src, err := in.SourceFile(role)
	return src, b, err
}

// ReadFile reads path whole and describes it with role: through in itself
// when path is in's own path (the input being imported, read once), else
// by opening the file (ReadFile, for a companion beside it).
func (in *Input) ReadFile(path, role string, opt Options) (formats.SourceFile, []byte, error) {
	if path != in.Path {
		return ReadFile(path, role, opt)
	}
	b, err := in.ReadAll()
	if err != nil {
		return formats.SourceFile{}, nil, err
	}
	src, err := in.SourceFile(role)
	return src, b, err
}

// ImportFile opens path with opt and imports it with im: what the registry
// does for one job, for callers (tests, tools) that hold a path.
func ImportFile(im Importer, path string, opt Options, sink formats.Sink) error {
	in, err := Open(path, opt)
	if err != nil {
		return err
	}
	defer in.Close()
	return in.ImportWith(im, opt, sink)
}

// ImportWith imports in with im into sink (im.Import), and runs what
// every import shares on the rows:
//
//   - a compressed stream cut short (Cut) is reported the way an importer
//     reports a plain file cut mid-record: what was complete is imported,
//     and every Run row the importer sends once the cut has been seen
//     gets Truncated set and the note CutNote (passed to opt.Warn as
//     "path: note", once per input, unless the importer had set Truncated
//     itself and so warned already). A gzip stream cut at a flush point,
//     or missing its 8-byte trailer, and a zstd stream cut between blocks
//     decode to a prefix of the content that ends at a clean place, often
//     a line's end: without this the file would import as complete. If
//     the cut is seen only after the importer has sent its last Run row
//     (an importer that stopped reading before the end), the import fails
//     with a *FormatError: the runs already sent cannot be marked any
//     more. An import that fails on a cut input (a one-document file that
//     ends mid-document) has the cut named in its error, which wraps the
//     importer's.
//   - the checks across a run's requests (RunTraps): duplicate_request
//     (an identical repetition of a request is dropped, the Run row's
//     RequestCount lowered to match) and start_time_far (the start is
//     nulled). The first FarStartSample requests of each run (fewer when
//     their messages pass FarStartHeldEvents) are held
//     (copied) until the run's reference start is known, or a row of
//     another run comes (the importer's order of rows is kept). Each check that
//     fires is added to the Run row's Checks and passed to opt.Warn.
func (in *Input) ImportWith(im Importer, opt Options, sink formats.Sink) error {
	cs := &importSink{Sink: sink, in: in, opt: opt, runs: map[string]*runChecks{}}
	if err := im.Import(in, opt, cs); err != nil {
		if in.cut && !cs.marked {
			// an importer of one document says "unexpected end": say why
			return fmt.Errorf("%w (the %s stream ends before its end marker: file cut)", err, in.Compression)
		}
		return err
	}
	if err := cs.flushOthers(""); err != nil { // runs that sent no Run row
		return err
	}
	if in.cut && !cs.marked {
		return &FormatError{File: in.Path, Where: fmt.Sprintf("byte %d of the decompressed content", in.off),
			Msg: "the " + in.Compression + " stream ends before its end marker (file cut), after its runs were imported"}
	}
	return nil
}

// CutNote is the note of a run whose compressed input is cut short, once
// Cut reports it ("" before).
func (in *Input) CutNote() string {
	if !in.cut {
		return ""
	}
	return "the " + in.Compression + " stream ends before its end marker (file cut): the content it holds is imported, whatever followed it is missing"
}

// importSink is the sink Input.ImportWith gives the importer.
type importSink struct {
	formats.Sink
	in     *Input
	opt    Options
	runs   map[string]*runChecks // the runs whose Run row has not come yet
	marked bool                  // a Run row was marked cut
	warned bool
	entry  formats.EntryCheck // the entry check every batch passes
}

func (c *importSink) Batch(b *formats.Batch) error {
	if err := c.entry.Batch(b); err != nil {
		return Errorf(c.in.Path, "", "%v", err)
	}
	if err := c.flushOthers(b.RunID); err != nil {
		return err
	}
	rc := c.runs[b.RunID]
	if rc == nil {
		rc = &runChecks{ids: map[uint64]uint64{}}
		c.runs[b.RunID] = rc
	}
	return c.batch(rc, b)
}

// flushOthers sends on the requests held for runs other than id: a row
// of another run means theirs are all in (a run's requests are
// contiguous), and the importer's order of rows is kept.
func (c *importSink) flushOthers(id string) error {
	for other, rc := range c.runs {
		if other != id && !rc.refSet {
			if err := c.flush(rc); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *importSink) Run(r *formats.Run) error {
	if err := c.flushOthers(r.RunID); err != nil {
		return err
	}
	m := *r
	if sc := formats.CheckSeries(m.Series); len(sc) > 0 {
		// series are input too: the run's own checks, then these
		m.Checks = append(r.Checks[:len(r.Checks):len(r.Checks)], sc...)
		c.warnChecks(r.RunID, sc)
	}
	if rc := c.runs[r.RunID]; rc != nil {
		delete(c.runs, r.RunID)
		checks, err := c.runDone(rc, r)
		if err != nil {
			return err
		}
		checks = append(c.entry.Checks(r.RunID), checks...)
		if len(checks) > 0 {
			m.Checks = append(m.Checks[:len(m.Checks):len(m.Checks)], checks...)
			m.RequestCount -= rc.identical
			c.warnChecks(r.RunID, checks)
		}
	}
	if c.in.cut {
		note := c.in.CutNote()
		m.Notes = append(r.Notes[:len(r.Notes):len(r.Notes)], note)
		if !r.Truncated && !c.warned && c.opt.Warn != nil {
			c.opt.Warn(DisplayName(c.in.Path) + ": " + note)
		}
		c.warned = c.warned || !r.Truncated
		m.Truncated = true
		c.marked = true
	}
	return c.Sink.Run(&m)
}

// warnChecks passes a warning per check to Options.Warn, naming the run
// when the import has several or it is not the label.
func (c *importSink) warnChecks(runID string, checks []formats.DataCheck) {
	run := ""
	if len(c.runs) > 0 || runID != c.opt.Label {
		run = runID
	}
	WarnChecks(func(msg string) {
		if c.opt.Warn != nil {
			c.opt.Warn(DisplayName(c.in.Path) + ": " + msg)
		}
	}, run, checks)
}

func (c *importSink) StartRun(r *formats.Run) error { return formats.StartRun(c.Sink, r) }
func (c *importSink) ToolHint(tool string)          { formats.ToolHint(c.Sink, tool) }
func (c *importSink) EventColumns(r *formats.Run) formats.EventColumns {
	return formats.EventColumnsOf(c.Sink, r)
}
