package aiperf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// Notes that state AIPerf's definitions, added to every imported run with
// records (sources, ai-dynamo/aiperf@db4f6397d11e: the kept responses in
// aiperf/parsers/openai_parsers.py lines 85-86 and 123-134; request_end_ns
// in records/record_processor_service.py lines 117-152; TTFT in
// aiperf/metrics/types/ttft_metric.py line 53; time_to_first_output_token
// as AIPerf 0.8+ records carry it, e.g.
// testdata/aiperf/llama32-3b-gguf-c1-mixed-timeouts).
const (
	noteEvents = "events rebuilt from time_to_first_token and inter_chunk_latency: one event per response AIPerf kept (non-empty content or reasoning; role-only, usage and [DONE] messages are not in the export), so message_count counts token-carrying messages only; text, bytes and per-message token counts are unknown"
	noteEnd    = "stream_end_offset_ns = request_end_ns − request_start_ns: AIPerf's end is the last raw chunk (usage and [DONE] included) or the error time, not the latency end"
	noteTTFT   = "AIPerf's time_to_first_token counts reasoning chunks; time_to_first_output_token (0.8+) is the first non-reasoning chunk"

	noteSummaryOnly = "summary only: nothing to recompute"
)

// importRaw imports a profile_export.jsonl and its summary.
//
// The JSONL is streamed line by line from in (a line is one value for
// ingest.Options.MaxValue: a record's line grows with its
// inter_chunk_latency list, about 20 bytes per chunk; blank lines are
// skipped). Each record is sent to sink as it
// is read (converted on a goroutine of its own, at most a few batches
// ahead: readLines), except warmup records (see package doc), which are
// held until the profiling run is done. A last line without its newline that ends
// mid-value is a file cut short: every complete line before it is imported,
// Run.Truncated is set, the run gets the note "line N is incomplete (file
// cut)…" and opt.Warn gets it prefixed with the path. Any other
// undecodable line is an error, positioned "file: line N: …". A companion
// summary that cannot be read is reported in a note (its path and byte
// position) and otherwise ignored.
func importRaw(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	w := &runWriter{path: path, label: label, opt: opt, sink: sink, st: newStats(), notes: ingest.NewNotes(path, opt)}
	w.readSummaries(in)
	w.series, w.telemetry = telemetryBeside(path, opt, w.notes)
	br := lineReaders.Get().(*bufio.Reader)
	br.Reset(in)
	err := w.readLines(br, in.MaxValue())
	br.Reset(nil)
	lineReaders.Put(br)
	if err != nil {
		return err
	}
	src, err := in.SourceFile("raw")
	if err != nil {
		return err
	}
	return w.finish(src)
}

// readSummaries reads the run's summaries (see loadSummaries); a summary
// that cannot be read becomes a warning.
func (w *runWriter) readSummaries(in *ingest.Input) {
	jsonPath, csvPath := summaryPaths(w.path)
	w.sum, _ = loadSummaries(in, w.opt, jsonPath, csvPath, w.notes.WarnNamed)
}

// loadSummaries reads the JSON summary if jsonPath is set, checking the
// CSV one against it when csvPath is set too; else the CSV summary. A CSV
// that cannot be read beside a good JSON is passed to warn; any other
// failure is returned (and passed to warn).
func loadSummaries(in *ingest.Input, opt ingest.Options, jsonPath, csvPath string, warn func(string)) (*summary, error) {
	read := func(p string) (*summary, error) {
		s, err := readSummary(in, opt, p)
		if err != nil {
			warn(err.Error())
		}
		return s, err
	}
	if jsonPath == "" {
		if csvPath == "" {
			return nil, nil
		}
		return read(csvPath)
	}
	s, err := read(jsonPath)
	if err != nil || csvPath == "" {
		return s, err
	}
	if c, err := read(csvPath); err == nil {
		s.also = append(s.also, c.src)
		s.notes = append(s.notes, compareCSV(s, c))
	}
	return s, nil
}

// runWriter converts records and sends them on.
type runWriter struct {
	path, label string
	opt         ingest.Options
	sink        formats.Sink
	sum         *summary
	st          *stats
	notes       *ingest.Notes // the run's notes; warnings go to opt.Warn
	truncated   bool
	keys        int64          // next profiling request key
	warmup      *formats.Batch // the warmup records, held
	warmupSt    *stats
	vals        ingest.Values // the shared value checks of the profiling run
	warmupVals  ingest.Values // … and of the warmup run
	phases      map[string]int
	reuse       reuse // what the last record left for the next (readRecords)
	// series and telemetry are the GPU telemetry beside the file (the
	// profiling run's Series and its source), if any.
	series    []formats.SeriesPoint
	telemetry *formats.SourceFile
}

// readLines reads and converts every line, and sends the profiling
// records to the sink. The reading and converting (decode, value checks,
// rebuilt messages, the batch's columns) runs on a goroutine of its own,
// batches ahead of the sink (the Analyzer, the Parquet writer), so the
// two use both cores; the sink is called from this goroutine only, in
// line order. The first error in line order is returned: a sink's error
// stops the reading.
func (w *runWriter) readLines(br *bufio.Reader, max int64) error {
	free := make(chan *formats.Batch, batchesInFlight)
	for range batchesInFlight {
		free <- batchPool.Get().(*formats.Batch)
	}
	defer func() {
		// the batches go back for the next file (a folder of a thousand
		// small runs); one the reader held when it was stopped is left
		// to the collector
		for {
			select {
			case b := <-free:
				b.Reset("")
				batchPool.Put(b)
			default:
				return
			}
		}
	}()
	full := make(chan *formats.Batch, batchesInFlight)
	errs := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		defer close(full)
		errs <- w.convertLines(br, max, free, full, stop)
	}()
	var err error
	for b := range full {
		if err == nil && b.Len() > 0 {
			if err = w.sink.Batch(b); err != nil {
				close(stop) // the reader stops; full is drained
			}
		}
		free <- b // never blocks: batchesInFlight batches in all
	}
	if rerr := <-errs; err == nil {
		err = rerr
	}
	return err
}

// batchPool holds the batches between files.
var batchPool = sync.Pool{New: func() any { return formats.NewBatch("") }}

// lineReaders are the 1 MiB line buffers, reused from file to file (a
// folder of a thousand small runs allocated a gigabyte of them).
var lineReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<20) }}

// batchEvents is how many messages a batch holds before it is handed
// over (8 bytes of offset and one of kind each; a record that does not
// fit grows it), batchRequests how many requests, batchesInFlight the
// batches in all.
const (
	batchEvents     = 1 << 17
	batchRequests   = 512
	batchesInFlight = 3
)

// convertLines is the reading goroutine of readLines: it reads, decodes
// and converts every line (holding warmup records), handing batches of
// profiling records to full. It returns the reading's error when the
// lines end, at the first error, or nil when stop is closed.
func (w *runWriter) convertLines(br *bufio.Reader, max int64, free <-chan *formats.Batch, full chan<- *formats.Batch, stop <-chan struct{}) error {
	var b *formats.Batch
	next := func() bool {
		select {
		case b = <-free:
			b.Reset(w.label)
			return true
		case <-stop:
			return false
		}
	}
	send := func() bool {
		select {
		case full <- b:
			b = nil
			return true
		case <-stop:
			return false
		}
	}
	if !next() {
		return nil
	}
	err := w.readRecords(br, max, func(rec *record, lineNo int) (bool, error) {
		profiling, err := w.add(rec, lineNo, b)
		if err != nil || !profiling {
			return true, err
		}
		if b.Len() < batchRequests && b.Msg.Len() < batchEvents {
			return true, nil
		}
		return send() && next(), nil
	})
	if b == nil || !send() {
		return nil // stopped
	}
	return err
}

// readRecords reads every line, decoding each record and handing it to
// use (false: stop reading). It returns the first error: a line's, the
// cut-file rule's (a last line cut inside a value ends the reading with a
// warning, not an error), or use's.
func (w *runWriter) readRecords(br *bufio.Reader, max int64, use func(rec *record, lineNo int) (bool, error)) error {
	sawRecord := false
	var buf []byte // each line's bytes, reused: nothing of a record outlives its line
	for lineNo := 1; ; lineNo++ {
		line, complete, err := ingest.ReadLineInto(br, max, buf)
		buf = line
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ingest.Wrap(w.path, fmt.Sprintf("line %d", lineNo), err)
		}
		line = jsonTrim(line)
		if len(line) == 0 {
			continue
		}
		sawRecord = true
		rec, ok := fastDecodeInto(line, &w.reuse)
		if !ok {
			rec, err = decodeRecord(line)
			if q, quoted := ingest.QuotePythonNonFinite(line, ""); err != nil && quoted != nil {
				// Python's json.dumps writes NaN and Infinity bare: read
				// them as strings, which the value checks count and null
				if r, qerr := decodeRecord(q); qerr == nil {
					rec, err = r, nil
				}
			}
		}
		if rec != nil {
			rec.seen, w.reuse.seen = w.reuse.seen, nil
			rec.offs, w.reuse.offs = w.reuse.offs, nil
		}
		if err != nil {
			if !complete && errors.Is(err, io.ErrUnexpectedEOF) {
				w.truncated = true
				w.notes.Warn(fmt.Sprintf("line %d is incomplete (file cut); complete records imported before it: %d", lineNo, w.st.records+w.warmupCount()))
				break
			}
			return ingest.Wrap(w.path, fmt.Sprintf("line %d", lineNo), err)
		}
		more, err := use(rec, lineNo)
		if err != nil || !more {
			return err
		}
		// the record is done with (converted into a request and events;
		// nothing of it is kept): its buffers are the next line's
		w.reuse.keep(rec)
	}
	if !sawRecord {
		return ingest.Errorf(w.path, "", "empty file: no records")
	}
	return nil
}

func (w *runWriter) warmupCount() int {
	if w.warmupSt == nil {
		return 0
	}
	return w.warmupSt.records
}

// errCutLine is the cause of a line that ends inside a JSON value.
var errCutLine = fmt.Errorf("the line ends inside a JSON value (%w)", io.ErrUnexpectedEOF)

// decodeRecord decodes one line. An error that wraps io.ErrUnexpectedEOF
// means the line ends inside a value (a cut, if it is the file's last line).
func decodeRecord(line []byte) (*record, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var rec record
	if err := dec.Decode(&rec); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = errCutLine
		}
		return nil, fmt.Errorf("not a JSON record: %w", err)
	}
	if dec.InputOffset() != int64(len(bytes.TrimRight(line, " \t\r\n"))) {
		// (JSON whitespace after the record is no data, as for the fast
		// path; the import trims lines before either reads them)
		return nil, errors.New("data after the JSON record")
	}
	if rec.Metadata == nil {
		return nil, errors.New(`record has no "metadata" object`)
	}
	return &rec, nil
}

// add converts one record, read from line lineNo: a profiling record is
// appended to b (profiling true), a warmup record held.
func (w *runWriter) add(rec *record, lineNo int, b *formats.Batch) (profiling bool, err error) {
	var streaming *bool
	if w.sum != nil {
		streaming = w.sum.streaming
	}
	at := fmt.Sprintf("line %d", lineNo)
	if ph := rec.Metadata.phase(); ph != "" && ph != "profiling" {
		if w.warmupSt == nil {
			w.warmupSt, w.phases = newStats(), map[string]int{}
			w.warmup = formats.NewBatch(ingest.RunLabel(w.label, 1))
		}
		n := int64(w.warmup.Len())
		if err := rec.prepare(&w.warmupVals, ingest.Pos{Request: n, At: at}); err != nil {
			return false, ingest.Wrap(w.path, at, err)
		}
		w.phases[ph]++
		req := convert(rec, w.warmup.RunID, n, streaming, w.warmupSt)
		return false, appendRecord(w.warmup, &req, rec)
	}
	if err := rec.prepare(&w.vals, ingest.Pos{Request: w.keys, At: at}); err != nil {
		return false, ingest.Wrap(w.path, at, err)
	}
	if icl, _, ok := rec.list(); ok {
		if err := w.opt.CheckMessages(int64(len(icl))+1, fmt.Sprintf("inter_chunk_latency of %d values", len(icl))); err != nil {
			return false, ingest.Wrap(w.path, at, err)
		}
	}
	req := convert(rec, w.label, w.keys, streaming, w.st)
	w.keys++
	return true, appendRecord(b, &req, rec)
}

// finish sends the profiling Run row, then the held warmup requests and
// their Run row.
func (w *runWriter) finish(raw formats.SourceFile) error {
	run := w.baseRun(w.label, raw)
	run.RequestCount = int64(w.st.records)
	run.Truncated = w.truncated
	run.Notes = append(append(run.Notes, w.notes.Lines...), statNotes(w.st)...)
	run.Checks = w.vals.Checks()
	if ch := incompleteCheck(w.sum, w.st.records); ch != nil {
		run.Checks = append(run.Checks, *ch)
	}
	if ch := goodputCheck(w.sum); ch != nil {
		run.Checks = append(run.Checks, *ch)
	}
	w.vals.Warn(w.notes.WarnOnly, "")
	if w.telemetry != nil {
		run.Series = w.series
		run.SourceFiles = append(run.SourceFiles, *w.telemetry)
	}
	if w.warmupSt != nil {
		run.Notes = append(run.Notes, fmt.Sprintf("records of phase(s) %s imported into run %q, not this one: %d", phaseList(w.phases), ingest.RunLabel(w.label, 1), w.warmupSt.records))
	}
	if err := w.sink.Run(&run); err != nil {
		return err
	}
	if w.warmupSt == nil {
		return nil
	}
	if err := w.sink.Batch(w.warmup); err != nil {
		return err
	}
	wr := w.baseRun(ingest.RunLabel(w.label, 1), raw)
	wr.Reported = nil
	wr.RequestCount = int64(w.warmupSt.records)
	wr.Truncated = w.truncated
	wr.Notes = append([]string{fmt.Sprintf("records of phase(s) %s from %s (run %q holds the profiling records); AIPerf excludes them from its statistics, and the summary's values belong to run %q", phaseList(w.phases), w.path, w.label, w.label)}, statNotes(w.warmupSt)...)
	wr.Checks = w.warmupVals.Checks()
	w.warmupVals.Warn(w.notes.WarnOnly, wr.RunID)
	return w.sink.Run(&wr)
}

// baseRun is the Run row both runs of a file share.
func (w *runWriter) baseRun(id string, raw formats.SourceFile) formats.Run {
	run := formats.Run{
		RunID:             id,
		Tool:              Name,
		Convention:        "aiperf",
		ClockDomain:       formats.ClockUnix,
		SourceFiles:       []formats.SourceFile{raw},
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
	}
	if s := w.sum; s != nil {
		applySummary(&run, s)
	}
	treeLoad(&run, w.path)
	return run
}

// applySummary copies what the summary says into run.
func applySummary(run *formats.Run, s *summary) {
	run.ToolVersion = s.version
	run.Model = s.model
	run.Endpoint = s.endpoint
	run.Streaming = s.streaming
	run.LoadMode = s.loadMode
	run.Concurrency = s.conc
	run.RequestRateRPS = s.rate
	run.Tokenizer = s.tokenizer
	run.ConfigJSON = s.configJSON
	run.Reported = s.reported
	run.SourceFiles = append(append(run.SourceFiles, s.src), s.also...)
	run.Notes = append(run.Notes, s.notes...)
}

// statNotes turns the conversion counters into notes.
func statNotes(st *stats) []string {
	if st.records == 0 {
		return nil
	}
	notes := []string{fmt.Sprintf("records: %d (%s)", st.records, statusList(st.byStatus))}
	if st.rebuilt > 0 {
		notes = append(notes, noteEvents, noteTTFT)
	}
	if st.direct > 0 {
		notes = append(notes, fmt.Sprintf("records with time_to_first_token but no inter_chunk_latency (fewer than two content responses): %d; their offsets come from the reported metrics, they have no events, and token_message_count is 0 (unknown)", st.direct))
	}
	if st.noTiming > 0 {
		notes = append(notes, fmt.Sprintf("records without error and without time_to_first_token: %d; token offsets left null", st.noTiming))
	}
	if st.ttftUnknown > 0 {
		notes = append(notes, fmt.Sprintf("records whose time_to_first_token is an offending value (the run's data checks): %d; no events, first-token offset null, last-token offset = request_latency", st.ttftUnknown))
	}
	if st.unplaced > 0 {
		notes = append(notes, fmt.Sprintf("records whose inter_chunk_latency holds an offending value (the run's data checks): %d; no events rebuilt (the responses after it cannot be placed), offsets from the metrics as for a record without the list", st.unplaced))
	}
	if st.latencyMismatch > 0 {
		notes = append(notes, fmt.Sprintf("records whose last rebuilt event is off request_latency by more than the rounding tolerance: %d (largest difference %d ns)", st.latencyMismatch, st.maxMismatchNs))
	}
	if st.reasoningSplit > 0 {
		notes = append(notes, fmt.Sprintf("records whose events before time_to_first_output_token are marked reasoning: %d", st.reasoningSplit))
	}
	if st.reasoningOnly > 0 {
		notes = append(notes, fmt.Sprintf("records with reasoning tokens only (output_token_count 0), every event marked reasoning: %d", st.reasoningOnly))
	}
	if st.reasoningBlind > 0 {
		notes = append(notes, fmt.Sprintf("records with reasoning tokens but no time_to_first_output_token (AIPerf < 0.8): %d; their events are all marked content, so first_content_offset_ns is the first reasoning or content chunk", st.reasoningBlind))
	}
	if st.endKnown > 0 {
		notes = append(notes, noteEnd)
	} else {
		notes = append(notes, "no record has request_end_ns (AIPerf 0.1.x): stream_end_offset_ns left null")
	}
	if st.endNotAfter > 0 {
		notes = append(notes, fmt.Sprintf("records with request_end_ns not after request_start_ns: %d; stream_end_offset_ns left null", st.endNotAfter))
	}
	if st.endBeforeLast > 0 {
		notes = append(notes, fmt.Sprintf("records with request_end_ns before their last rebuilt event: %d; stream_end_offset_ns raised to that event", st.endBeforeLast))
	}
	if st.outServer > 0 || st.outTool > 0 {
		notes = append(notes, fmt.Sprintf("output_tokens from usage_completion_tokens (server_usage) in %d records, from output_sequence_length (tool_reported: AIPerf's re-tokenized content + reasoning) in %d", st.outServer, st.outTool))
	}
	if len(st.badUnits) > 0 {
		notes = append(notes, badUnitNote(st.badUnits))
	}
	return notes
}

// badUnitNote describes time metrics skipped for an unknown unit.
func badUnitNote(units map[string]int) string {
	var parts []string
	for u, n := range units {
		parts = append(parts, fmt.Sprintf("%d with unit %q", n, u))
	}
	sort.Strings(parts)
	return "inter_chunk_latency lists ignored for an unknown time unit: " + strings.Join(parts, ", ")
}

// statusList renders status counts in a fixed order.
func statusList(by map[string]int) string {
	var parts []string
	for _, s := range []string{formats.StatusOK, formats.StatusEmpty, formats.StatusError, formats.StatusCancelled} {
		if by[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", by[s], s))
		}
	}
	return strings.Join(parts, ", ")
}

// phaseList renders phase counts sorted by name.
func phaseList(ph map[string]int) string {
	var parts []string
	for p, n := range ph {
		parts = append(parts, fmt.Sprintf("%q (%d)", p, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// importSummaryOnly imports a summary with no JSONL beside it: a Run row
// with Reported and the configuration, no requests.
func importSummaryOnly(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	notes := ingest.NewNotes(path, opt)
	jsonPath, csvPath := "", path
	if !strings.HasSuffix(path, ".csv") {
		jsonPath, csvPath = path, csvBeside(path)
	}
	s, err := loadSummaries(in, opt, jsonPath, csvPath, notes.WarnNamed)
	if err != nil {
		return err
	}
	run := formats.Run{
		RunID:             label,
		Tool:              Name,
		Convention:        "aiperf",
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
	}
	applySummary(&run, s)
	if ch := incompleteCheck(s, -1); ch != nil {
		run.Checks = append(run.Checks, *ch)
	}
	if ch := goodputCheck(s); ch != nil {
		run.Checks = append(run.Checks, *ch)
	}
	run.Notes = append(append([]string{noteSummaryOnly}, run.Notes...), notes.Lines...)
	notes.WarnOnly(noteSummaryOnly)
	return sink.Run(&run)
}
