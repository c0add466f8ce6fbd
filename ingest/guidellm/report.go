package guidellm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// statuses are guidellm's request-list keys and the status each becomes.
var statuses = map[string]string{
	"successful": formats.StatusOK,
	"incomplete": formats.StatusCancelled,
	"errored":    formats.StatusError,
}

// knownBenchmark are a benchmark's keys in both shapes.
var knownBenchmark = map[string]bool{
	// both
	"type_": true, "id_": true, "run_id": true, "metrics": true, "requests": true,
	"start_time": true, "end_time": true, "duration": true,
	// v0.2–v0.3
	"args": true, "run_stats": true, "worker": true, "request_loader": true, "extras": true,
	"request_totals": true, "request_samples": true,
	// v0.4+
	"config": true, "scheduler_state": true, "scheduler_metrics": true,
	"warmup_duration": true, "cooldown_duration": true,
}

// decoder reads one report from a JSON stream.
type decoder struct {
	file string
	dec  *json.Decoder
	// src is what dec reads; decBase is the offset in it where dec
	// started (the fast path hands over to a new decoder, fastlist.go)
	src     io.Reader
	decBase int64
	// scanBase is added to a syntax error's offset: encoding/json's
	// Decoder counts there the bytes its value scanner has read, which a
	// decoder taking over counts from 0 (fastList keeps the count).
	scanBase int64
	// subs are the nested objects of the record being converted, split
	// by the fast path (scanner.object), for sub
	subs  map[*byte]obj
	label string
	opt   ingest.Options
	sink  *formats.RowWriter

	// inputOffset maps the decoder's offsets to the file's (the JSON
	// path quotes Python's NaN, shifting them); end is the file's length
	// read so far. Both nil for the YAML path (its JSON is generated).
	inputOffset func(int64) int64
	end         func() int64

	metadata   json.RawMessage
	args       json.RawMessage // top-level args (v0.4–v0.6) or config (v0.7)
	version    string          // metadata.guidellm_version
	topUnknown []string
	runs       []*benchmark
	cut        string // where the file was cut, "" if complete
}

// benchmark is what is known of one benchmark of the report.
type benchmark struct {
	index    int
	label    string
	entries  []ingest.Entry // every key but metrics and requests, in order
	metrics  json.RawMessage
	shape    int // 3 or 4 from the request records; 0 until one is read
	shapes   map[int]int
	kept     map[string]int // request records per status list
	emitted  int64
	complete bool // the benchmark's closing brace was read
	cutIn    string
	rs       requestStats
	vals     ingest.Values // the shared value checks of its records
	// strategyType is config.strategy.type_ (v0.4+) or args.strategy.type_
	// (v0.3), read once from the entries before the requests.
	strategyType string
	strategyRead bool
}

// errCut marks the end of the input inside the report.
var errCut = errors.New("file cut")

func importJSON(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	path := in.Path
	nf := newNonFiniteReader(in)
	d := newDecoder(path, label, opt, sink, nf)
	d.inputOffset = nf.inputOffset
	d.end = func() int64 { return nf.inTotal }
	if err := d.report(); err != nil {
		return err
	}
	src, err := in.SourceFile(d.role())
	if err != nil {
		return err
	}
	sources := []formats.SourceFile{src}
	var extra []string
	if twin := yamlTwin(path); twin != "" {
		ts, err := hashOnly(twin, "yaml_twin")
		if err == nil {
			sources = append(sources, ts)
			extra = append(extra, fmt.Sprintf("%s holds the same report as YAML (guidellm --outputs json yaml): listed, not imported again", filepath.Base(twin)))
		}
	}
	return d.finish(sources, extra)
}

// hashOnly describes the file at path (its digest and size) without
// keeping its content.
func hashOnly(path, role string) (formats.SourceFile, error) {
	in, err := ingest.Open(path, ingest.Options{})
	if err != nil {
		return formats.SourceFile{}, err
	}
	defer in.Close()
	return in.SourceFile(role)
}

func newDecoder(path, label string, opt ingest.Options, sink formats.Sink, r io.Reader) *decoder {
	dec := ingest.NewJSONDecoder(r, opt.MaxValue())
	dec.UseNumber()
	return &decoder{file: path, dec: dec, src: r, label: label, opt: opt, sink: formats.NewRowWriter(sink)}
}

// role is the source-file role: "raw" when the report held request
// records, "summary" otherwise.
func (d *decoder) role() string {
	for _, b := range d.runs {
		if b.emitted > 0 {
			return "raw"
		}
	}
	return "summary"
}

// fail turns a decoding error into errCut (end of input) or a positioned
// FormatError.
func (d *decoder) fail(where string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errCut
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// the offset is the decoder's input offset (a token out of place)
		// or its scanner's count (inside a value): after a hand-over each
		// has its own base
		off := se.Offset + d.decBase
		if n, ok := scannedBytes(d.dec); ok && n == se.Offset {
			off = se.Offset + d.scanBase
		}
		return &ingest.FormatError{File: d.file, Where: fmt.Sprintf("%s (byte %d)", where, d.mapOffset(off)), Msg: "invalid JSON", Err: err}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &ingest.FormatError{File: d.file, Where: where, Msg: "invalid JSON", Err: err}
	}
	return &ingest.FormatError{File: d.file, Where: where, Msg: "invalid JSON", Err: err}
}

func (d *decoder) token(where string) (json.Token, error) {
	t, err := d.dec.Token()
	if err != nil {
		return nil, d.fail(where, err)
	}
	return t, nil
}

func (d *decoder) raw(where string) (json.RawMessage, error) {
	var v json.RawMessage
	if err := d.dec.Decode(&v); err != nil {
		return nil, d.fail(where, err)
	}
	return v, nil
}

func (d *decoder) expect(where string, want json.Delim) error {
	t, err := d.token(where)
	if err != nil {
		return err
	}
	if t != want {
		return ingest.Errorf(d.file, where, "expected %q, found %v", string(want), tokenText(t))
	}
	return nil
}

func tokenText(t json.Token) string {
	switch x := t.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(x))
	case string:
		return fmt.Sprintf("the string %q", x)
	case nil:
		return "null"
	}
	return fmt.Sprint(t)
}

// report reads the top-level object.
func (d *decoder) report() error {
	err := d.reportObject()
	if errors.Is(err, errCut) {
		d.cut = d.cutDescription()
		if len(d.runs) == 0 || (len(d.runs) == 1 && d.runs[0].empty()) {
			return ingest.Errorf(d.file, fmt.Sprintf("byte %d", d.offset(d.dec.InputOffset())), "the file ends before its first benchmark")
		}
		return nil
	}
	return err
}

func (d *decoder) reportObject() error {
	if err := d.expect("top level", '{'); err != nil {
		return err
	}
	sawBenchmarks := false
	for d.dec.More() {
		t, err := d.token("top level")
		if err != nil {
			return err
		}
		key, _ := t.(string)
		switch key {
		case "benchmarks":
			sawBenchmarks = true
			if err := d.benchmarks(); err != nil {
				return err
			}
		case "metadata":
			if d.metadata, err = d.raw("metadata"); err != nil {
				return err
			}
			d.version = stringField(d.metadata, "guidellm_version")
		case "args", "config":
			if d.args, err = d.raw(key); err != nil {
				return err
			}
		default:
			if _, err := d.raw(key); err != nil {
				return err
			}
			d.topUnknown = append(d.topUnknown, key)
		}
	}
	if err := d.expect("top level", '}'); err != nil {
		return err
	}
	if !sawBenchmarks {
		return ingest.Errorf(d.file, "top level", `no "benchmarks" key`)
	}
	return nil
}

func (d *decoder) benchmarks() error {
	t, err := d.token("benchmarks")
	if err != nil {
		return err
	}
	if t == nil {
		return nil
	}
	if t != json.Delim('[') {
		return ingest.Errorf(d.file, "benchmarks", "expected an array, found %s", tokenText(t))
	}
	for i := 0; d.dec.More(); i++ {
		if err := d.benchmark(i); err != nil {
			return err
		}
	}
	return d.expect("benchmarks", ']')
}

func (b *benchmark) empty() bool { return len(b.entries) == 0 && b.metrics == nil && b.emitted == 0 }

func (b *benchmark) where() string { return fmt.Sprintf("benchmark %d", b.index+1) }

func (d *decoder) benchmark(i int) error {
	b := &benchmark{index: i, label: ingest.RunLabel(d.label, i), kept: map[string]int{}, shapes: map[int]int{}}
	d.runs = append(d.runs, b)
	where := b.where()
	t, err := d.token(where)
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return ingest.Errorf(d.file, where, "expected an object, found %s", tokenText(t))
	}
	for d.dec.More() {
		t, err := d.token(where)
		if err != nil {
			return err
		}
		key, _ := t.(string)
		switch key {
		case "requests":
			if err := d.requests(b); err != nil {
				return err
			}
		case "metrics":
			if b.metrics, err = d.raw(where + ": metrics"); err != nil {
				b.cutIn = "metrics"
				return err
			}
		default:
			v, err := d.raw(where + ": " + key)
			if err != nil {
				b.cutIn = key
				return err
			}
			b.entries = append(b.entries, ingest.Entry{Key: key, Value: v})
		}
	}
	if err := d.expect(where, '}'); err != nil {
		return err
	}
	b.complete = true
	return nil
}

// requests reads requests{successful, incomplete, errored, total}, sending
// each record to the sink as it is read.
func (d *decoder) requests(b *benchmark) error {
	where := b.where() + ": requests"
	t, err := d.token(where)
	if err != nil {
		b.cutIn = "requests"
		return err
	}
	if t == nil {
		return nil
	}
	if t != json.Delim('{') {
		return ingest.Errorf(d.file, where, "expected an object, found %s", tokenText(t))
	}
	for d.dec.More() {
		t, err := d.token(where)
		if err != nil {
			b.cutIn = "requests"
			return err
		}
		list, _ := t.(string)
		lw := where + "." + list
		status, known := statuses[list]
		if !known {
			// "total" is always null; anything else is unknown
			v, err := d.raw(lw)
			if err != nil {
				b.cutIn = "requests." + list
				return err
			}
			if list != "total" || strings.TrimSpace(string(v)) != "null" {
				b.rs.unknownLists = append(b.rs.unknownLists, list)
			}
			continue
		}
		t, err = d.token(lw)
		if err != nil {
			b.cutIn = "requests." + list
			return err
		}
		if t == nil {
			continue
		}
		if t != json.Delim('[') {
			return ingest.Errorf(d.file, lw, "expected an array, found %s", tokenText(t))
		}
		k, err := d.fastList(b, list, status, lw)
		if err != nil {
			return err
		}
		for ; d.dec.More(); k++ {
			rw := fmt.Sprintf("%s[%d]", lw, k)
			v, err := d.raw(rw)
			if err != nil {
				b.cutIn = fmt.Sprintf("requests.%s after %d complete records", list, k)
				return err
			}
			if err := d.record(b, list, status, rw, v, nil); err != nil {
				return err
			}
		}
		if err := d.expect(lw, ']'); err != nil {
			b.cutIn = fmt.Sprintf("requests.%s after %d complete records", list, b.kept[list])
			return err
		}
	}
	if err := d.expect(where, '}'); err != nil {
		b.cutIn = "requests"
		return err
	}
	return nil
}

// record converts request record v (at rw of list) and sends it.
// When o is not nil it holds v's members, already split.
func (d *decoder) record(b *benchmark, list, status, rw string, v []byte, o obj) error {
	var req formats.Request
	var shape int
	var err error
	if o != nil {
		req, shape, err = d.requestObj(b, o, status, ingest.Pos{Request: b.emitted, At: rw})
	} else {
		req, shape, err = d.request(b, v, status, ingest.Pos{Request: b.emitted, At: rw})
	}
	if err != nil {
		return &ingest.FormatError{File: d.file, Where: rw, Msg: err.Error()}
	}
	b.shapes[shape]++
	if b.shape == 0 {
		b.shape = shape
	}
	b.kept[list]++
	req.RunID = b.label
	req.RequestKey = b.emitted
	b.emitted++
	return d.sink.Request(&req, nil)
}

// offset is the file offset of the decoder's offset off.
func (d *decoder) offset(off int64) int64 {
	return d.mapOffset(off + d.decBase)
}

// mapOffset maps an offset of the text the decoders read to the file's.
func (d *decoder) mapOffset(off int64) int64 {
	if d.inputOffset == nil {
		return off
	}
	return d.inputOffset(off)
}

// cutDescription says where the file ended: its end (the cut) and how far
// it is complete (the end of the last value or token the decoder
// finished; the offsets are the file's, not those of the text the decoder
// reads, where each Python NaN gained two quotes).
func (d *decoder) cutDescription() string {
	complete := d.offset(d.dec.InputOffset())
	at := fmt.Sprintf("the file is cut at byte %d", complete)
	if d.end != nil {
		at = fmt.Sprintf("the file ends at byte %d, cut", d.end())
	}
	if len(d.runs) == 0 {
		return fmt.Sprintf("%s before the first benchmark (complete up to byte %d)", at, complete)
	}
	b := d.runs[len(d.runs)-1]
	if b.complete {
		return fmt.Sprintf("%s after benchmark %d (complete up to byte %d; the report's closing brackets are missing)", at, b.index+1, complete)
	}
	in := ""
	if b.cutIn != "" {
		in = " in " + b.cutIn
	}
	return fmt.Sprintf("%s inside benchmark %d%s (complete up to byte %d): %d complete request records of it imported", at, b.index+1, in, complete, b.emitted)
}

// finish sends the Run rows, in benchmark order, once the whole report
// (and its metadata, wherever it was) is known.
func (d *decoder) finish(sources []formats.SourceFile, extraNotes []string) error {
	warn := ingest.NewNotes(d.file, d.opt) // for the warnings: d.run builds the notes
	if d.cut != "" {
		warn.WarnOnly(d.cut)
	}
	for _, b := range d.runs {
		if b.empty() && !b.complete {
			continue // cut before anything of it was read
		}
		run, warnings := d.run(b, sources)
		run.Notes = append(run.Notes, extraNotes...)
		for _, w := range warnings {
			warn.WarnOnly(b.where() + ": " + w)
		}
		if err := d.sink.Run(&run); err != nil {
			return err
		}
	}
	return nil
}

// stringField returns obj[key] when it is a string, else "".
func stringField(obj json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}

// countList renders "a ×2, b ×1" sorted by key.
func countList(m map[string]int) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
