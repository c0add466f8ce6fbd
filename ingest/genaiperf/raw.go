package genaiperf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// experiment is what the raw file says about one perf_analyzer experiment
// (load level), gathered while its requests stream past.
type experiment struct {
	mode     string   // experiment.mode: "concurrency" or "request_rate"
	value    *float64 // experiment.value
	requests int64
	windows  int  // len(window_boundaries)
	streamed bool // a request arrived as SSE or as several Triton responses
	whole    bool // a request arrived as one non-streaming body
	// stream is the payload's "stream" flag: nil until seen; true if any
	// request asked to stream.
	stream *bool
	models ingest.Models // the payloads' "model"s
	notes  notes
	// coalesced tallies the multi-token messages per-chunk usage showed
	coalesced coalesced
	// vals are the shared value checks of the experiment's requests, and
	// unplaced counts the requests whose times they left unknown.
	vals     ingest.Values
	unplaced int64
}

// rawReader walks a raw export with a lexer, one request at a time.
type rawReader struct {
	path string
	dec  *lexer
	reqs reqParser
	// errOff, when ≥ 0, is the input offset to report for the current
	// error (a request that decoded but did not convert).
	errOff int64
	conv   converter
	sink   *formats.RowWriter
	// label and sum describe the runs, for formats.StartRun.
	label string
	sum   *summary

	exps                           []*experiment
	version, serviceKind, endpoint string

	// position, for errors and the truncation note
	sawExperiments bool
	inExperiments  bool
	inRequests     bool
	exp            int // index of the experiment being read
	req            int // requests of it read so far
}

// errTruncated marks an input that ends before its top-level object does.
var errTruncated = errors.New("truncated")

// importRaw imports a raw export and its summaries (see the package
// documentation).
func importRaw(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	var jsonPath, csvPath string
	for _, c := range (importer{}).Companions(path) {
		if strings.HasSuffix(c, summaryJSONSuffix) {
			jsonPath = c
		} else {
			csvPath = c
		}
	}
	sum, err := readSummaries(in, opt, jsonPath, csvPath, false)
	if err != nil {
		return err
	}
	r := &rawReader{path: path, dec: newLexer(in, in.MaxValue()), sink: formats.NewRowWriter(sink), label: label, sum: sum, errOff: -1}
	r.conv = converter{label: label, noText: opt.NoText, opt: opt}
	err = r.read()
	truncated := errors.Is(err, errTruncated)
	if err != nil && !truncated {
		return r.positioned(err)
	}
	if truncated && !r.sawExperiments {
		return ingest.Errorf(path, fmt.Sprintf("byte %d", r.dec.offset()), "file ends before any experiment")
	}
	if !r.sawExperiments {
		return &ingest.FormatError{File: path, Where: "top level", Msg: `no "experiments" array`, Err: ingest.ErrNotThisFormat}
	}
	if len(r.exps) == 0 {
		return ingest.Errorf(path, "top level", "the experiments array is empty")
	}
	raw, err := in.SourceFile("raw")
	if err != nil {
		return err
	}
	var fileNotes notes
	if truncated {
		fileNotes.add(true, "truncated: %s", r.cutPoint(in.Offset()))
	}
	return r.emitRuns(label, opt, sum, raw, truncated, &fileNotes)
}

// read walks the top-level object.
func (r *rawReader) read() error {
	if err := r.dec.expect('{'); err != nil {
		if errors.Is(err, errTruncated) {
			return err
		}
		return fmt.Errorf("not a JSON object: %w", ingest.ErrNotThisFormat)
	}
	for first := true; ; first = false {
		more, err := r.dec.next(first, '}')
		if err != nil {
			return err
		}
		if !more {
			break
		}
		key, err := r.dec.key()
		if err != nil {
			return err
		}
		switch key {
		case "experiments":
			err = r.experiments()
		case "version":
			err = decodeString(r.dec, &r.version)
		case "service_kind":
			err = decodeString(r.dec, &r.serviceKind)
		case "endpoint":
			err = decodeString(r.dec, &r.endpoint)
		default:
			err = r.dec.skipValue()
		}
		if err != nil {
			return err
		}
	}
	if !r.dec.atEOF() {
		return errors.New("data after the top-level JSON object")
	}
	return nil
}

// experiments walks the "experiments" array.
func (r *rawReader) experiments() error {
	if err := r.dec.expect('['); err != nil {
		return err
	}
	r.sawExperiments, r.inExperiments = true, true
	for first := true; ; first = false {
		more, err := r.dec.next(first, ']')
		if err != nil {
			return err
		}
		if !more {
			break
		}
		r.exp, r.req = len(r.exps), 0
		x := &experiment{}
		r.exps = append(r.exps, x)
		if err := r.experiment(x); err != nil {
			return err
		}
	}
	r.inExperiments = false
	return nil
}

// experiment walks one element of "experiments".
func (r *rawReader) experiment(x *experiment) error {
	if err := r.dec.expect('{'); err != nil {
		return err
	}
	for first := true; ; first = false {
		more, err := r.dec.next(first, '}')
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		key, err := r.dec.key()
		if err != nil {
			return err
		}
		switch key {
		case "experiment":
			var e struct {
				Mode  string          `json:"mode"`
				Value json.RawMessage `json:"value"`
			}
			err = r.dec.decodeValue(&e)
			x.mode, x.value = e.Mode, jsonFloat(e.Value)
		case "requests":
			err = r.requests(x)
		case "window_boundaries":
			var wb []json.RawMessage
			err = r.dec.decodeValue(&wb)
			x.windows = len(wb)
		default:
			err = r.dec.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// requests walks a "requests" array, decoding and sending one request at a
// time.
func (r *rawReader) requests(x *experiment) error {
	if err := r.dec.expect('['); err != nil {
		return err
	}
	r.inRequests = true
	// Tell the sink what is known of the run before its first request: the
	// tokenizer and streaming flag come from the summary read above.
	if x.requests == 0 {
		start := r.baseRun(r.label, r.exp, x, r.sum)
		if err := formats.StartRun(r.sink, &start); err != nil {
			return &sinkError{err}
		}
	}
	err := r.pipeline(func(rr *rawRequest, endOff int64) error {
		req, events, err := r.conv.request(r.exp, r.req, rr, x)
		if err != nil {
			r.errOff = endOff
			return err
		}
		if err := r.sink.Request(req, events); err != nil {
			return &sinkError{err}
		}
		r.req++
		x.requests++
		return nil
	})
	if err != nil {
		return err
	}
	r.inRequests = false
	return nil
}

// pipeline decodes the requests of a "requests" array (after its "[") on
// a second goroutine, up to pipelineDepth ahead, and calls use with each in
// order on this one: decoding and conversion overlap on two cores. use gets
// the lexer offset just after the request (for errors) and must not keep
// rr, which is reused once use returns. The first error of either side
// stops both; a decoding error comes after use has seen every request
// before it, so the reader's position is that of the failing request.
func (r *rawReader) pipeline(use func(rr *rawRequest, endOff int64) error) error {
	type decoded struct {
		rr     *rawRequest
		endOff int64
		err    error
	}
	free := make(chan *rawRequest, pipelineDepth+2)
	for i := 0; i < pipelineDepth+2; i++ {
		free <- &rawRequest{}
	}
	out := make(chan decoded, pipelineDepth)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for first := true; ; first = false {
			var rr *rawRequest
			select {
			case rr = <-free:
			case <-stop:
				return
			}
			more, err := r.dec.next(first, ']')
			if err == nil && more {
				err = r.nextRequest(rr)
			}
			if err == nil && more {
				rr.readInputs() // here, to spare the converting goroutine
			}
			if err == nil && !more {
				return
			}
			select {
			case out <- decoded{rr, r.dec.offset(), err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var err error
	for d := range out {
		if err = d.err; err != nil {
			break
		}
		if err = use(d.rr, d.endOff); err != nil {
			break
		}
		free <- d.rr
	}
	close(stop)
	<-done
	return err
}

// pipelineDepth is how many decoded requests may wait for conversion.
const pipelineDepth = 4

// nextRequest decodes the next request into rr: by the fast path straight
// from the lexer's buffer (reading more while the request is incomplete),
// else from the request's bytes (fast path, then encoding/json).
func (r *rawReader) nextRequest(rr *rawRequest) error {
	l := r.dec
	for {
		c, err := l.peek()
		if err != nil {
			return err
		}
		if c != '{' {
			break
		}
		l.began = l.offset()
		n, ok, short := r.reqs.parseObject(l.buf[l.pos:], rr)
		if ok {
			l.pos += n
			return nil
		}
		if !short || !l.more() {
			break
		}
	}
	raw, err := l.value()
	if err != nil {
		return err
	}
	return l.spanErr(r.reqs.decode(raw, rr))
}

// sinkError wraps an error returned by the Sink, which is passed through
// unchanged.
type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }
func (e *sinkError) Unwrap() error { return e.err }

// where is the reader's position in words.
func (r *rawReader) where() string {
	switch {
	case r.inRequests:
		return fmt.Sprintf("experiment %d, request %d", r.exp, r.req)
	case r.inExperiments:
		return fmt.Sprintf("experiment %d", r.exp)
	}
	return "top level"
}

// cutPoint describes where a truncated file of size bytes ends. The
// decoder stops at the start of the value it could not finish, so its
// offset is where the incomplete request (or other value) began.
func (r *rawReader) cutPoint(size int64) string {
	at := fmt.Sprintf("file ends at byte %d", size)
	began := r.dec.began
	switch {
	case r.inRequests:
		return fmt.Sprintf("%s inside experiment %d, request %d (begun at byte %d; the %d complete requests before it imported); version, service_kind and endpoint missing",
			at, r.exp, r.req, began, r.req)
	case r.inExperiments:
		return fmt.Sprintf("%s inside experiment %d, outside its requests; version, service_kind and endpoint missing", at, r.exp)
	}
	return at + " after the experiments; the top-level object is not closed"
}

// positioned turns a walk error into the error Import returns.
func (r *rawReader) positioned(err error) error {
	var se *sinkError
	if errors.As(err, &se) {
		return se.err
	}
	var fe *ingest.FormatError
	if errors.As(err, &fe) {
		return fe
	}
	where := r.where()
	off := r.dec.offset()
	if r.errOff >= 0 {
		off = r.errOff
	}
	var span *spanError
	var syn *json.SyntaxError
	var lex *syntaxError
	switch {
	case errors.As(err, &span) && errors.As(err, &syn):
		off = span.base + syn.Offset
	case errors.As(err, &span):
		off = span.base
	case errors.As(err, &lex):
		off = lex.at
	}
	return &ingest.FormatError{File: r.path, Where: fmt.Sprintf("%s (byte %d)", where, off), Msg: "invalid raw export", Err: err}
}

// emitRuns sends one Run row per experiment.
func (r *rawReader) emitRuns(label string, opt ingest.Options, sum *summary, raw formats.SourceFile, truncated bool, fileNotes *notes) error {
	target := r.summaryTarget(sum, fileNotes)
	files := append([]formats.SourceFile{raw}, sum.files...)
	fileWarn := ingest.NewNotes(r.path, opt).Once() // for the warnings: each run's notes are built below
	for i, x := range r.exps {
		run := r.baseRun(label, i, x, sum)
		run.SourceFiles = files
		run.Truncated = truncated
		if i == target {
			run.Reported = sum.reported
		}
		var all notes
		all.merge(fileNotes)
		all.merge(&sum.notes)
		all.merge(&x.notes)
		if r.serviceKind != "" && r.serviceKind != "openai" {
			all.add(false, "perf_analyzer service_kind %q", r.serviceKind)
		}
		if x.unplaced > 0 {
			all.add(false, "requests whose timestamp, or a response time against it, is an offending value (the run's data checks): %d; kept with their status and counts, without events or offsets", x.unplaced)
		}
		if x.windows > 0 {
			all.add(false, "perf_analyzer window_boundaries: %d (%s)", x.windows, plural(x.windows-1, "measurement window"))
		}
		if i != target && target >= 0 {
			all.add(false, "summary statistics belong to run %s", ingest.RunLabel(label, target))
		}
		run.Notes = all.lines()
		if ch := x.coalesced.check(); ch != nil {
			run.Checks = append(run.Checks, *ch)
		}
		run.Checks = append(run.Checks, x.vals.Checks()...)
		x.vals.Warn(fileWarn.WarnOnly, run.RunID)
		// A remark about the whole file is in every run's notes but
		// warned once; remarks about requests name their experiment.
		for _, w := range all.warnings() {
			fileWarn.WarnOnly(w)
		}
		if err := r.sink.Run(&run); err != nil {
			return err
		}
	}
	return nil
}

// baseRun builds experiment i's Run row without files, notes and stats.
func (r *rawReader) baseRun(label string, i int, x *experiment, sum *summary) formats.Run {
	run := formats.Run{
		RunID:             ingest.RunLabel(label, i),
		Tool:              Name,
		ToolVersion:       r.version,
		Endpoint:          r.endpoint,
		ClockDomain:       formats.ClockUnix,
		Tokenizer:         sum.config.tokenizer,
		Convention:        Name,
		TokentraceVersion: formats.Version,
		SchemaVersion:     formats.SchemaVersion,
		RequestCount:      x.requests,
		ConfigJSON:        sum.configJSON,
	}
	if run.Endpoint == "" {
		run.Endpoint = sum.config.endpoint
	}
	run.Model = x.models.Name()
	if ch, several := x.models.Check(); several {
		// the payloads' own names, all of them, over the config's one
		run.Checks = append(run.Checks, ch)
	} else if len(sum.config.models) > 0 {
		run.Model = sum.config.models[0]
	}
	switch {
	case sum.config.streaming != nil:
		run.Streaming = sum.config.streaming
	case x.stream != nil:
		run.Streaming = x.stream
	case x.streamed || x.whole:
		run.Streaming = ingest.Ptr(x.streamed)
	}
	switch x.mode {
	case "concurrency":
		run.LoadMode, run.Concurrency = x.mode, x.value
	case "request_rate":
		run.LoadMode, run.RequestRateRPS = x.mode, x.value
	case "":
	default:
		x.notes.add(false, "unknown experiment mode %q", x.mode)
	}
	return run
}

// summaryTarget returns the index of the experiment the summary describes,
// or -1: the only experiment, else the one whose mode and value equal
// input_config's load setting.
func (r *rawReader) summaryTarget(sum *summary, fileNotes *notes) int {
	if len(sum.files) == 0 || len(r.exps) == 0 {
		return -1
	}
	if len(r.exps) == 1 {
		return 0
	}
	mode, v := sum.config.loadMode()
	for i, x := range r.exps {
		if x.mode == mode && v != nil && x.value != nil && *x.value == *v {
			return i
		}
	}
	fileNotes.add(true, "summary matches no experiment (input_config load %s %s); its statistics are not attached",
		mode, fmtFloat(v))
	return -1
}

// plural returns "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

func fmtFloat(v *float64) string {
	if v == nil {
		return "unset"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func decodeString(dec *lexer, s *string) error {
	var v any
	if err := dec.decodeValue(&v); err != nil {
		return err
	}
	*s, _ = v.(string)
	return nil
}

// expectDelim reads the next token and checks it is the delimiter want.
// The end of input is errTruncated.
func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return eof(err)
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", string(want), tokenText(t))
	}
	return nil
}

// readKey reads an object key.
func readKey(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", eof(err)
	}
	k, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("expected an object key, found %v", tokenText(t))
	}
	return k, nil
}

// eof maps the decoder's end-of-input errors to errTruncated.
func eof(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

func tokenText(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		return strconv.Quote(string(v))
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	}
	return fmt.Sprint(t)
}
