// Package pybench reads what vLLM's serving benchmark
// (benchmarks/benchmark_serving.py, later `vllm bench serve`) and its
// descendant, SGLang's bench_serving ("Adapted from vllm-project/vllm …
// benchmark_serving.py", python/sglang/bench_serving.py line 1), write: the
// output of Python's json module, one result object per run, with
//
//   - bare NaN, Infinity and -Infinity tokens (json.dump's allow_nan
//     default; SGLang writes float("inf") request rates as Infinity),
//   - several objects in one file (vLLM --append-result: a newline then
//     another object; SGLang appends one JSON line per run), or a JSON array
//     of them (vLLM `bench sweep` summary.json),
//   - summary statistics keyed "<stat>_<metric>_ms" ("mean_ttft_ms",
//     "p99.9_itl_ms", "median_e2e_latency_ms"),
//   - index-aligned per-request arrays (ttfts, itls, output_lens, …).
//
// It is shared by ingest/vllmbench and ingest/sglangbench. The layouts are
// those of vllm-project/vllm@009e6d4a1cd6 vllm/benchmarks/serve.py and
// sgl-project/sglang@0033168f0f58 python/sglang/bench_serving.py (2024 keys:
// the same file at 50a613687fe1).
package pybench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// mark starts the strings NonFinite writes for Python's bare tokens (a NUL,
// which Python's json never leaves unescaped in a real string: it writes
// "\u0000"), so that a bare NaN and the string "NaN" stay apart.
const mark = "\x00"

// NonFinite returns raw with the bare NaN, Infinity and -Infinity tokens
// that Python's json module writes (outside strings) replaced by marked
// strings ("\u0000NaN"), so that encoding/json parses it; Number reads
// them back as numbers, Unmark turns them into plain "NaN" text. Newlines
// are kept, so line numbers do not move. raw itself is returned when it
// holds none.
func NonFinite(raw []byte) []byte {
	out, _ := ingest.QuotePythonNonFinite(raw, `\u0000`)
	return out
}

// Unmark replaces the marked strings of NonFinite in a JSON text (as
// json.Marshal writes them: "\u0000NaN") with the plain words.
func Unmark(js string) string {
	if !strings.Contains(js, `\u0000`) {
		return js
	}
	for _, w := range []string{"NaN", "Infinity", "-Infinity"} {
		js = strings.ReplaceAll(js, `"\u0000`+w+`"`, `"`+w+`"`)
	}
	return js
}

// Value is one top-level JSON value of a file: a run's result object.
type Value struct {
	// Index is the value's 0-based position in the file.
	Index int
	// Line is the 1-based line the value starts on.
	Line int
	// Where names the value for messages: "object 2 (line 3)", "line 3"
	// (JSONL) or "element 2 (line 40)" (an array).
	Where string
	// Entries are the object's members in file order, values with NonFinite
	// applied.
	Entries []ingest.Entry
	// Arrays are the per-request arrays Scan read as columns (their
	// Entries hold "[]"); nil from ReadValues.
	Arrays map[string]*Stream
}

// Layout is how a file holds its values.
type Layout int

const (
	// Objects: one or more objects one after the other (vLLM
	// --append-result, a single --save-result object).
	Objects Layout = iota
	// Lines: one object per line (SGLang JSONL).
	Lines
	// Array: a JSON array of objects (vLLM bench sweep summary.json).
	Array
)

// ErrEmpty is returned by ReadValues for a file with nothing but
// whitespace.
var ErrEmpty = errors.New("empty file")

// ReadValues splits data (a whole file) into its result objects. A value
// cut short at the end of the file is not an error: the complete values
// before it are returned with cut describing where the file ends. Any other
// damage is a *ingest.FormatError naming path and the position. Lines
// layout reads one object per non-blank line; the other layouts follow
// JSON structure, so an object may span lines.
func ReadValues(path string, data []byte, layout Layout) (vals []Value, cut string, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, "", ErrEmpty
	}
	t := NonFinite(data)
	if layout == Lines {
		return readLines(path, t)
	}
	return readStructured(path, t, layout)
}

// readLines reads JSONL: each non-blank line one object. Only the last line
// may be cut (no final newline and the object ends early).
func readLines(path string, t []byte) ([]Value, string, error) {
	var vals []Value
	line := 0
	for len(t) > 0 {
		line++
		var l []byte
		i := bytes.IndexByte(t, '\n')
		last := i < 0
		if last {
			l, t = t, nil
		} else {
			l, t = t[:i], t[i+1:]
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		where := fmt.Sprintf("line %d", line)
		dec := json.NewDecoder(bytes.NewReader(l))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if last && errors.Is(err, io.ErrUnexpectedEOF) {
				return vals, where + " is incomplete (file cut)", nil
			}
			return nil, "", ingest.Wrap(path, where, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, "", ingest.Errorf(path, where, "data after the JSON object")
		}
		v, err := toValue(path, raw, len(vals), line, where)
		if err != nil {
			return nil, "", err
		}
		vals = append(vals, v)
	}
	return vals, "", nil
}

// readStructured reads concatenated objects or an array of objects.
func readStructured(path string, t []byte, layout Layout) ([]Value, string, error) {
	dec := json.NewDecoder(bytes.NewReader(t))
	lines := lineCounter{t: t, line: 1}
	noun := "object"
	if layout == Array {
		noun = "element"
		tok, err := dec.Token()
		if err != nil || tok != json.Delim('[') {
			return nil, "", &ingest.FormatError{File: path, Where: "line 1", Msg: "not a JSON array", Err: err}
		}
	}
	var vals []Value
	for {
		if layout == Array && !dec.More() {
			break
		}
		start := skipSpace(t, int(dec.InputOffset()))
		if layout == Objects && start >= len(t) {
			break
		}
		line := lines.at(start)
		where := fmt.Sprintf("%s %d (line %d)", noun, len(vals)+1, line)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return vals, where + " is incomplete (file cut)", nil
			}
			var se *json.SyntaxError
			if errors.As(err, &se) {
				where = fmt.Sprintf("%s %d (line %d)", noun, len(vals)+1, lines.at(int(se.Offset)))
			}
			return nil, "", ingest.Wrap(path, where, err)
		}
		v, err := toValue(path, raw, len(vals), line, where)
		if err != nil {
			return nil, "", err
		}
		vals = append(vals, v)
	}
	if layout == Array {
		tok, err := dec.Token()
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return vals, fmt.Sprintf("the array ends after element %d without its closing ']' (file cut)", len(vals)), nil
		case err != nil:
			return nil, "", ingest.Wrap(path, fmt.Sprintf("element %d", len(vals)+1), err)
		case tok != json.Delim(']'):
			return nil, "", ingest.Errorf(path, fmt.Sprintf("element %d", len(vals)+1), "unexpected %v", tok)
		}
		if rest := skipSpace(t, int(dec.InputOffset())); rest < len(t) {
			return nil, "", ingest.Errorf(path, fmt.Sprintf("line %d", lines.at(rest)), "data after the JSON array")
		}
	}
	return vals, "", nil
}

// toValue checks that raw is an object and splits it into its members.
func toValue(path string, raw json.RawMessage, index, line int, where string) (Value, error) {
	if r := bytes.TrimSpace(raw); len(r) == 0 || r[0] != '{' {
		return Value{}, ingest.Errorf(path, where, "not a JSON object")
	}
	entries, err := ingest.ObjectEntries(raw)
	if err != nil {
		return Value{}, &ingest.FormatError{File: path, Where: where, Msg: "unreadable object", Err: err}
	}
	return Value{Index: index, Line: line, Where: where, Entries: entries}, nil
}

func skipSpace(t []byte, i int) int {
	for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n') {
		i++
	}
	return i
}

// lineCounter turns byte offsets (non-decreasing in the common case) into
// 1-based line numbers without rescanning the file.
type lineCounter struct {
	t    []byte
	off  int
	line int
}

func (c *lineCounter) at(off int) int {
	off = min(max(off, 0), len(c.t))
	if off < c.off {
		c.off, c.line = 0, 1
	}
	c.line += bytes.Count(c.t[c.off:off], []byte{'\n'})
	c.off = off
	return c.line
}

// TopKeys returns the keys of the first object in head (the first bytes of
// a file), as far as head goes, and whether that object is the first
// element of an array. Detection uses it to judge a file by its own keys
// rather than by substrings that nested objects (server_info) or other
// tools' files could also hold.
func TopKeys(head []byte) (keys []string, inArray bool) {
	head = bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	keys, inArray, _ = ingest.HeadKeys(NonFinite(head))
	return keys, inArray
}

// Kind classifies a JSON value read as a number.
type Kind int

const (
	// Absent: null or a missing key.
	Absent Kind = iota
	// Finite: a finite number.
	Finite
	// NonFiniteNumber: NaN, ±Infinity (bare, after NonFinite) or vLLM's
	// "inf" string; the float is NaN or ±Inf.
	NonFiniteNumber
	// NotNumber: any other value (a string, a bool, a list, an object).
	NotNumber
)

// Number reads raw as a number. JSON numbers are Finite; null and absent
// are Absent; Python's bare NaN, Infinity and -Infinity (as NonFinite
// marks them) and the strings "inf", "-inf" (vLLM writes an unlimited
// request_rate so) are NonFiniteNumber; anything else — numeric strings and
// the string "NaN" included — is NotNumber: these tools write numbers as
// numbers.
func Number(raw json.RawMessage) (float64, Kind) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return 0, Absent
	}
	switch t[0] {
	case '"':
		var s string
		if json.Unmarshal(t, &s) != nil {
			return 0, NotNumber
		}
		switch s {
		case mark + "NaN":
			return math.NaN(), NonFiniteNumber
		case mark + "Infinity", "inf":
			return math.Inf(1), NonFiniteNumber
		case mark + "-Infinity", "-inf":
			return math.Inf(-1), NonFiniteNumber
		}
		return 0, NotNumber
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		v, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			// 1e999: a number too large for a double is ±Inf to Python
			var ne *strconv.NumError
			if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
				return v, NonFiniteNumber
			}
			return 0, NotNumber
		}
		return v, Finite
	}
	return 0, NotNumber
}

// describe renders a short excerpt of a JSON value for error messages.
func describe(raw json.RawMessage) string {
	return formats.CutRunes(Unmark(strings.TrimSpace(string(raw[:min(len(raw), 400)]))), 40)
}

// Floats reads a list of numbers; null elements and non-finite numbers
// become NaN ("no value"). An element of another type is an error naming
// it ("ttfts[3]: not a number: \"x\"").
func Floats(name string, raw json.RawMessage) ([]float64, error) {
	// Fast path: a list of plain numbers (null elements would read as 0,
	// so lists holding null take the slow path).
	if !bytes.Contains(raw, []byte("null")) {
		var fast []float64
		if json.Unmarshal(raw, &fast) == nil {
			return fast, nil
		}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%s: not a list of numbers", name)
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		v, k := Number(e)
		switch k {
		case Finite:
			out[i] = v
		case Absent, NonFiniteNumber:
			out[i] = math.NaN()
		default:
			return nil, fmt.Errorf("%s[%d]: not a number: %s", name, i, describe(e))
		}
	}
	return out, nil
}

// FloatLists reads a list of lists of numbers (itls); a null inner list is
// empty.
func FloatLists(name string, raw json.RawMessage) ([][]float64, error) {
	if !bytes.Contains(raw, []byte("null")) {
		var fast [][]float64
		if json.Unmarshal(raw, &fast) == nil {
			return fast, nil
		}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%s: not a list of lists of numbers", name)
	}
	out := make([][]float64, len(elems))
	for i, e := range elems {
		if t := bytes.TrimSpace(e); len(t) == 0 || string(t) == "null" {
			continue
		}
		v, err := Floats(fmt.Sprintf("%s[%d]", name, i), e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Strings reads a list of strings; null elements are "". Another type is an
// error.
func Strings(name string, raw json.RawMessage) ([]string, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%s: not a list of strings", name)
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		t := bytes.TrimSpace(e)
		if len(t) == 0 || string(t) == "null" {
			continue
		}
		if json.Unmarshal(t, &out[i]) != nil || strings.HasPrefix(out[i], mark) {
			return nil, fmt.Errorf("%s[%d]: not a string: %s", name, i, describe(e))
		}
	}
	return out, nil
}

// statKey matches the tools' summary statistics: "<stat>_<metric>_ms" with
// stat mean, median, std, min, max or p<P> (P may keep a decimal, vLLM's
// str(p) for a non-integral --metric-percentiles value: "p99.9").
var statKey = regexp.MustCompile(`^(mean|median|std|min|max|p\d+(?:\.\d+)?)_(.+_ms)$`)

// StatKey splits a summary statistic key into the metric (with its "_ms"
// unit suffix: "ttft_ms", "e2e_latency_ms") and the statistic ("mean",
// "p99.9"); ok is false for other keys.
func StatKey(key string) (metric, stat string, ok bool) {
	m := statKey.FindStringSubmatch(key)
	if m == nil {
		return "", "", false
	}
	return m[2], m[1], true
}

// SecondsNs converts a duration or a perf_counter reading in seconds to
// whole nanoseconds (math.Round(v·1e9)); ok is false for NaN, infinities
// and values beyond ±2^62 ns.
func SecondsNs(v float64) (int64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v*1e9) > 1<<62 {
		return 0, false
	}
	return int64(math.Round(v * 1e9)), true
}

// Column reads a per-request array (ttfts, output_lens, latencies, …):
// element i is request i's value of field name. A number in [0, maxV] is
// its value; null is NaN (no value). Every other number — NaN, ±Infinity,
// negative, above maxV — is recorded in vals (the shared value checks) at
// request i and read as NaN, so a caller never sees it; a number written as
// a string ("0.25") is recorded and read as its value (then range-checked
// the same). An element of another type is an error naming it. at names
// the result object for positions ("line 3"; "" for a file of one).
func Column(name string, raw json.RawMessage, vals *ingest.Values, at string, maxV float64) ([]float64, error) {
	if !bytes.Contains(raw, []byte("null")) && !bytes.Contains(raw, []byte(`"`)) {
		var fast []float64
		if json.Unmarshal(raw, &fast) == nil {
			for i, x := range fast {
				if !check(vals, name, at, i, -1, x, maxV) {
					fast[i] = math.NaN()
				}
			}
			return fast, nil
		}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%s: not a list of numbers", name)
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		x, ok, err := element(name, e, vals, elemPos(at, name, i, -1))
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", name, i, err)
		}
		if !ok || !check(vals, name, at, i, -1, x, maxV) {
			x = math.NaN()
		}
		out[i] = x
	}
	return out, nil
}

// Columns reads a per-request array of lists (itls): list i is request
// i's; a null list is empty. Each element is checked as Column's are, and
// an offending one is NaN in its list (RebuildEvents then rebuilds no
// events for the request: the later messages cannot be placed).
func Columns(name string, raw json.RawMessage, vals *ingest.Values, at string, maxV float64) ([][]float64, error) {
	if !bytes.Contains(raw, []byte("null")) && !bytes.Contains(raw, []byte(`"`)) {
		var fast [][]float64
		if json.Unmarshal(raw, &fast) == nil {
			for i, l := range fast {
				for j, x := range l {
					if !check(vals, name, at, i, j, x, maxV) {
						l[j] = math.NaN()
					}
				}
			}
			return fast, nil
		}
	}
	var lists []json.RawMessage
	if err := json.Unmarshal(raw, &lists); err != nil {
		return nil, fmt.Errorf("%s: not a list of lists of numbers", name)
	}
	out := make([][]float64, len(lists))
	for i, l := range lists {
		if t := bytes.TrimSpace(l); len(t) == 0 || string(t) == "null" {
			continue
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(l, &elems); err != nil {
			return nil, fmt.Errorf("%s[%d]: not a list of numbers", name, i)
		}
		out[i] = make([]float64, len(elems))
		for j, e := range elems {
			p := elemPos(at, name, i, j)
			x, ok, err := element(name, e, vals, p)
			if err != nil {
				return nil, fmt.Errorf("%s[%d][%d]: %w", name, i, j, err)
			}
			if !ok || !check(vals, name, at, i, j, x, maxV) {
				x = math.NaN()
			}
			out[i][j] = x
		}
	}
	return out, nil
}

// element reads one array element: a number, null (ok false), a bare
// non-finite token (as NonFinite marks it), vLLM's "inf", or a number
// written as a string (recorded).
func element(name string, e json.RawMessage, vals *ingest.Values, p ingest.Pos) (float64, bool, error) {
	switch v, k := Number(e); k {
	case Absent:
		return 0, false, nil
	case Finite, NonFiniteNumber:
		return v, true, nil
	}
	v, ok, err := vals.JSON(name, p, e)
	if err != nil {
		return 0, false, fmt.Errorf("not a number: %s", describe(e))
	}
	return v, ok, nil
}

// check is vals.Check at element i (and j) of array name, the position
// built only for an offending value.
func check(vals *ingest.Values, name, at string, i, j int, x, maxV float64) bool {
	if ingest.Classify(x, maxV) == ingest.Valid {
		return true
	}
	return vals.Check(name, elemPos(at, name, i, j), x, maxV)
}

// elemPos is the position of element i (and j of a list) of array name.
func elemPos(at, name string, i, j int) ingest.Pos {
	s := fmt.Sprintf("%s[%d]", name, i)
	if j >= 0 {
		s += fmt.Sprintf("[%d]", j)
	}
	if at != "" {
		s = at + ", " + s
	}
	return ingest.Pos{Request: int64(i), At: s}
}
