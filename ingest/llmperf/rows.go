package llmperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// row is one element of individual_responses.json, parsed: a fixed-size
// value with no pointers (a run holds one per request until its version
// is known, and the collector has nothing in them to scan). Numbers may
// be JSON integers or floats (failed requests carry integer 0 timings);
// a field is null or absent where its has bit is clear.
type row struct {
	has       rowBits
	errorCode int64   // error_code: HTTP status, API code, -1, … (hasCode)
	ttft      float64 // ttft_s
	e2e       float64 // end_to_end_latency_s
	itl       float64 // inter_token_latency_s (a per-request number)
	thr       float64 // request_output_throughput_token_per_s
	nIn       int64   // number_input_tokens
	nOut      int64   // number_output_tokens (Llama-2 tokenizer, BOS included)
	// text is the row's strings in the set's texts (-1: none): a
	// non-numeric error_code verbatim, then error_msg; list is its
	// list-valued inter_token_latency_s in the set's lists (-1: none)
	text, list int32
}

// rowBits say which fields of a row are set.
type rowBits uint16

const (
	hasTTFT rowBits = 1 << iota
	hasE2E
	hasITL
	hasThr
	hasIn
	hasOut
	hasCode  // error_code is a number (errorCode)
	isFailed // error_code is not null
	itlBad   // a list-valued ITL held an offending value (the list is dropped)
)

func (r *row) is(b rowBits) bool { return r.has&b == b }

// rowSet is the parsed array: the rows and what they point to.
type rowSet struct {
	rows []row
	// texts holds two strings per row with text ≥ 0: the error type
	// (a non-numeric error_code) and error_msg
	texts []string
	lists [][]float64
	// genText counts the rows with a GEN_TEXT key (the leaderboard
	// Bedrock fork); unknown the rows with each other key
	genText int
	unknown map[string]int
}

func (s *rowSet) errorType(r *row) string {
	if r.text < 0 {
		return ""
	}
	return s.texts[2*r.text]
}

func (s *rowSet) errorMsg(r *row) string {
	if r.text < 0 {
		return ""
	}
	return s.texts[2*r.text+1]
}

func (s *rowSet) list(r *row) []float64 {
	if r.list < 0 {
		return nil
	}
	return s.lists[r.list]
}

// knownKeys are the per-request keys of common_metrics.py (ray-project/
// llmperf 1eac866 … f1d6bed), in the order of fields.v.
var knownKeys = [...]string{"error_code", "error_msg", "ttft_s", "end_to_end_latency_s", "inter_token_latency_s",
	"request_output_throughput_token_per_s", "number_total_tokens", "number_output_tokens", "number_input_tokens"}

const (
	kErrorCode = iota
	kErrorMsg
	kTTFT
	kE2E
	kITL
	kThr
	kTotal
	kOut
	kIn
	nKeys
)

// fields are one element's members: the known keys' raw values (nil when
// absent; the last of a repeated name wins, as in encoding/json), whether
// GEN_TEXT is one, and the other names (sorted, each once).
type fields struct {
	v       [nKeys][]byte
	genText bool
	unknown []string
}

func (f *fields) reset() {
	f.v = [nKeys][]byte{}
	f.genText = false
	f.unknown = f.unknown[:0]
}

// set records member name with value v.
func (f *fields) set(name string, v []byte) {
	for k, n := range knownKeys {
		if n == name {
			f.v[k] = v
			return
		}
	}
	if name == "GEN_TEXT" {
		f.genText = true
		return
	}
	if !slices.Contains(f.unknown, name) {
		f.unknown = append(f.unknown, name)
	}
}

// fieldsOf is the fields of an element that encoding/json decoded.
func fieldsOf(m map[string]json.RawMessage) *fields {
	f := &fields{}
	for k, v := range m {
		f.set(k, v)
	}
	sort.Strings(f.unknown)
	return f
}

// parseRow reads one array element's fields into set as a row. Wrong types
// (a string where a number belongs, …) are errors. Every number goes
// through the shared value checks (vals): a numeric string is read and
// counted; NaN, ±Infinity, a negative value and one out of range (a
// duration over a day, a count over 10^9) are counted and left null —
// never 0.
func (s *rowSet) parseRow(fl *fields, vals *ingest.Values, p ingest.Pos) error {
	f := fieldReader{f: fl, vals: vals, pos: p}
	day := ingest.MaxIn(ingest.Seconds)
	r := row{text: -1, list: -1}
	r.ttft = f.number(kTTFT, day, &r.has, hasTTFT)
	r.e2e = f.number(kE2E, day, &r.has, hasE2E)
	r.thr = f.number(kThr, math.MaxFloat64, &r.has, hasThr)
	r.nIn = toInt(f.number(kIn, ingest.MaxTokens, &r.has, hasIn))
	r.nOut = toInt(f.number(kOut, ingest.MaxTokens, &r.has, hasOut))
	if raw := bytes.TrimSpace(fl.v[kITL]); len(raw) > 0 && raw[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			f.fail("inter_token_latency_s", errors.New("not a list of numbers"))
		}
		list := make([]float64, 0, len(elems))
		for _, e := range elems {
			x, ok, err := vals.JSON("inter_token_latency_s", p, e)
			if err != nil || !ok {
				f.fail("inter_token_latency_s", errors.New("not a list of numbers"))
				break
			}
			if !vals.Check("inter_token_latency_s", p, x, day) {
				// one unknown gap: the list's sum, the last content time,
				// is unknown
				list = nil
				r.has |= itlBad
				break
			}
			list = append(list, x)
		}
		if list != nil {
			r.list = int32(len(s.lists))
			s.lists = append(s.lists, list)
		}
	} else {
		r.itl = f.number(kITL, day, &r.has, hasITL)
	}
	if f.err != nil {
		return f.err
	}
	msg := ingest.RawText(fl.v[kErrorMsg])
	errType := r.parseErrorCode(fl.v[kErrorCode])
	if msg != "" || errType != "" {
		r.text = int32(len(s.texts) / 2)
		s.texts = append(s.texts, errType, msg)
	}
	if fl.genText {
		s.genText++
	}
	for _, k := range fl.unknown {
		if s.unknown == nil {
			s.unknown = map[string]int{}
		}
		s.unknown[k]++
	}
	if len(s.rows) == cap(s.rows) && len(s.rows) >= 1024 {
		// double: append grows a large slice by ~1.25×
		s.rows = slices.Grow(s.rows, len(s.rows))
	}
	s.rows = append(s.rows, r)
	return nil
}

// fieldReader reads numeric fields of one element, keeping the first error.
type fieldReader struct {
	f    *fields
	vals *ingest.Values
	pos  ingest.Pos
	err  error
}

// number reads the field k: a number in [0, maxV], or a string holding
// one (counted), setting bit in has; left unset when null or absent, for
// an offending value (counted by the shared value checks), and after an
// error.
func (f *fieldReader) number(k int, maxV float64, has *rowBits, bit rowBits) float64 {
	if f.err != nil {
		return 0
	}
	key := knownKeys[k]
	x, ok, err := f.vals.JSON(key, f.pos, f.f.v[k])
	if err != nil {
		f.err = err
		return 0
	}
	if !ok || !f.vals.Check(key, f.pos, x, maxV) {
		return 0
	}
	*has |= bit
	return x
}

// fail records the first error, prefixed with its field.
func (f *fieldReader) fail(key string, err error) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: %w", key, err)
	}
}

// parseErrorCode reads error_code: null (success), a number (429, 429.0,
// -100), a numeric string, or any other value (returned, the error
// type).
func (r *row) parseErrorCode(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return ""
	}
	r.has |= isFailed
	if v, err := number(t); err == nil && v != nil && *v == math.Trunc(*v) && math.Abs(*v) < 1e15 {
		r.errorCode = int64(*v)
		r.has |= hasCode
		return ""
	}
	return ingest.RawText(t)
}

// number reads a JSON number, or a string holding one; null and absent are
// nil. NaN and infinities are nil too: they are no measurement.
func number(raw json.RawMessage) (*float64, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	s := string(t)
	if t[0] == '"' {
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, err
		}
		s = strings.TrimSpace(s)
	} else if t[0] != '-' && (t[0] < '0' || t[0] > '9') {
		return nil, errors.New("not a number")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("not a number: %q", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, nil
	}
	return &v, nil
}

// toInt rounds a count to an integer (counts are JSON integers in LLMPerf,
// but forks and pandas round trips may write 151.0); the value checks have
// kept it in [0, 10^9].
func toInt(v float64) int64 { return int64(math.Round(v)) }

// seconds converts a positive duration in seconds to nanoseconds; zero
// (LLMPerf's initial 0 on failed requests) and absent durations are not
// set (the value checks have left an offending one absent).
func seconds(v float64, set bool) (int64, bool) {
	if !set || v <= 0 {
		return 0, false
	}
	return int64(math.Round(v * 1e9)), true
}

// slackNs is the slack allowed when checking a recovered last-content time
// against ttft and e2e (float rounding of ITL·N, and the few hundred
// nanoseconds between LLMPerf's successive time.monotonic() calls).
const slackNs = 1000

// lastTokenStats counts how last-token offsets were found.
type lastTokenStats struct {
	fromITL, undivided, fromList int
	outOfRange, ambiguous        int
	notRecoverable, noTiming     int
}

// lastToken recovers the arrival of the last content chunk, t_last − st.
// LLMPerf's client sums the content-chunk gaps into inter_token_latency_s
// (= t_last − st, TTFT included) and the benchmark divides that sum by the
// Llama-2 token count N_tok (ray-project/llmperf token_benchmark_ray.py
// from 1eac866 to 03872a48f7df), so
// t_last = ITL·N_tok. Candidates:
//
//   - ITL·number_output_tokens, when divideByTokens (the version divides by
//     N_tok; f1d6bed divides by the client's chunk count, which the file
//     does not keep, so its rows get no last-token offset);
//   - the undivided ITL itself, for failed rows of those versions only: the
//     leaderboard's Bedrock rows marked -100 ("Output too few tokens") kept
//     the raw sum;
//   - the sum of a list-valued ITL (forks that store the gap list).
//
// A candidate is accepted when ttft − 1 µs ≤ t ≤ e2e + 1 µs (then clamped
// into [ttft, e2e]); when two different candidates pass, neither is used.
func lastToken(r *row, list []float64, ttft, e2e int64, timed, divideByTokens bool, st *lastTokenStats) (int64, bool) {
	if !timed {
		st.noTiming++
		return 0, false
	}
	type candidate struct {
		sec   float64
		count *int
	}
	var cands [2]candidate
	nc := 0
	switch {
	case list != nil:
		sum := 0.0
		for _, v := range list {
			sum += v
		}
		cands[nc] = candidate{sum, &st.fromList}
		nc++
	case r.is(hasITL):
		if divideByTokens && r.is(hasOut) && r.nOut > 0 {
			cands[nc] = candidate{r.itl * float64(r.nOut), &st.fromITL}
			nc++
		}
		if r.is(isFailed) && divideByTokens {
			cands[nc] = candidate{r.itl, &st.undivided}
			nc++
		}
	}
	if nc == 0 {
		st.notRecoverable++
		return 0, false
	}
	var found [2]int64
	nf := 0
	var count *int
	for _, c := range cands[:nc] {
		ns := int64(math.Round(c.sec * 1e9))
		if c.sec > 0 && ns >= ttft-slackNs && ns <= e2e+slackNs {
			found[nf] = min(max(ns, ttft), e2e)
			nf++
			count = c.count
		}
	}
	switch {
	case nf == 0:
		st.outOfRange++
		return 0, false
	case nf == 2 && absDiff(found[0], found[1]) > slackNs:
		st.ambiguous++
		return 0, false
	}
	*count++
	return found[nf-1], true
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// addRequest appends row r (the key-th element) to b. Status: "error"
// when error_code is not null (timings kept: the Bedrock -100 rows have
// real ones); "empty" when no content chunk arrived (ttft_s 0) and
// number_output_tokens ≤ 1 (the BOS token alone); else "ok". Rows without
// error get OutputTokens = number_output_tokens − 1 (the BOS token), and
// the correction TrapBOSInCount where that is below the raw count.
func (s *rowSet) addRequest(b *formats.Batch, r *row, key int64, divideByTokens bool, st *lastTokenStats) {
	i := b.AddRequest(key)
	q := &b.Req
	ttft, okT := seconds(r.ttft, r.is(hasTTFT))
	e2e, okE := seconds(r.e2e, r.is(hasE2E))
	if okT {
		q.FirstTokenOffsetNs.Set(i, ttft)
		q.FirstContentOffsetNs.Set(i, ttft)
	}
	if okE {
		q.StreamEndOffsetNs.Set(i, e2e)
	}
	if last, ok := lastToken(r, s.list(r), ttft, e2e, okT && okE, divideByTokens, st); ok {
		q.LastTokenOffsetNs.Set(i, last)
	}
	if r.is(hasIn) {
		q.InputTokens.Set(i, r.nIn)
		q.InputTokensSource.Set(i, formats.SourceToolReported)
	}
	switch {
	case r.is(isFailed):
		q.Status[i] = formats.CodeError
		if r.is(hasCode) {
			q.ErrorCode.Set(i, r.errorCode)
		}
		q.ErrorType.Set(i, s.errorType(r))
		q.ErrorText.Set(i, s.errorMsg(r))
	case (!r.is(hasOut) || r.nOut <= 1) && !okT:
		q.Status[i] = formats.CodeEmpty
	default:
		q.Status[i] = formats.CodeOK
	}
	if !r.is(isFailed) && r.is(hasOut) {
		n := max(r.nOut-1, 0)
		q.OutputTokens.Set(i, n)
		q.OutputTokensSource.Set(i, formats.SourceToolReported)
		if float64(n) < float64(r.nOut) {
			q.Corrections.Set(i, TrapBOSInCount)
		}
	}
	// LLMPerf's own per-request values: seconds → ms, the raw token
	// counts (BOS included) and the per-request throughput. A
	// list-valued ITL is reported as its mean, the per-request share of
	// the pooled statistic such forks summarize.
	if r.is(hasTTFT) {
		q.ReportedTTFTMs.Set(i, r.ttft*1000)
	}
	if r.is(hasE2E) {
		q.ReportedE2EMs.Set(i, r.e2e*1000)
	}
	if r.is(hasITL) {
		q.ReportedITLMs.Set(i, r.itl*1000)
	}
	if l := s.list(r); len(l) > 0 {
		sum := 0.0
		for _, v := range l {
			sum += v
		}
		q.ReportedITLMs.Set(i, sum/float64(len(l))*1000)
	}
	if r.is(hasOut) {
		q.ReportedOutputTokens.Set(i, float64(r.nOut))
	}
	if r.is(hasIn) {
		q.ReportedInputTokens.Set(i, float64(r.nIn))
	}
	if r.is(hasThr) {
		q.ReportedOutputTokensPS.Set(i, r.thr)
	}
}

// readRows decodes the array from rd one element at a time: with the fast
// scanner (fastElements) as far as it goes, then with encoding/json's
// Decoder (Token + Decode) from where it stopped. An array cut short — a
// last element that ends early, or no closing bracket — returns the
// complete elements and a note saying where the cut is; anything else
// undecodable is a positioned error.
func readRows(path string, rd io.Reader, max int64, vals *ingest.Values) (rows *rowSet, cut string, err error) {
	return readRowsWith(path, rd, max, vals, true)
}

// readRowsWith is readRows, without the fast scanner when fast is false
// (the reference, for tests).
func readRowsWith(path string, rd io.Reader, max int64, vals *ingest.Values, fast bool) (set *rowSet, cut string, err error) {
	set = &rowSet{}
	n := func() int { return len(set.rows) }
	add := func(f *fields) error {
		if f == nil {
			return ingest.Errorf(path, recordAt(n()), "null instead of an object")
		}
		if err := set.parseRow(f, vals, ingest.Pos{Request: int64(n()), At: recordAt(n())}); err != nil {
			return ingest.Wrap(path, recordAt(n()), err)
		}
		return nil
	}
	rest, skip := rd, 0
	if fast {
		// parseRow keeps nothing of the fields: one serves every element
		var reuse fields
		rest, skip, err = fastElements(rd, max, func(raw []byte) error {
			if fastFieldsInto(raw, &reuse) {
				return add(&reuse)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return ingest.Wrap(path, recordAt(n()), err)
			}
			if m == nil {
				return add(nil)
			}
			return add(fieldsOf(m))
		})
		if err != nil {
			return nil, "", err
		}
		if rest == nil {
			return set, "", nil
		}
	}
	dec := ingest.NewJSONDecoder(rest, max)
	t, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, "", ingest.Errorf(path, "", "empty file (expected a JSON array)")
	}
	if err != nil || t != json.Delim('[') {
		return nil, "", &ingest.FormatError{File: path, Msg: "not a JSON array", Err: err}
	}
	for range skip {
		// the element the fast path read last: read again, not kept
		if err := ingest.SkipJSONValue(dec); err != nil {
			return nil, "", ingest.Wrap(path, recordAt(n()-1), err)
		}
	}
	for dec.More() {
		f, err := decodeFields(dec)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return set, fmt.Sprintf("the array ends after record %d without its closing ']' (file cut)", n()), nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return set, recordAt(n()) + " is incomplete (file cut)", nil
			}
			return nil, "", ingest.Wrap(path, recordAt(n()), err)
		}
		if err := add(f); err != nil {
			return nil, "", err
		}
	}
	t, err = dec.Token()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return set, fmt.Sprintf("the array ends after record %d without its closing ']' (file cut)", n()), nil
	case err != nil:
		return nil, "", ingest.Wrap(path, recordAt(n()), err)
	case t != json.Delim(']'):
		return nil, "", ingest.Errorf(path, recordAt(n()), "unexpected %v", t)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "", ingest.Errorf(path, "", "data after the JSON array")
	}
	return set, "", nil
}

// recordAt names the element after the first n: "record n+1".
func recordAt(n int) string { return "record " + strconv.Itoa(n+1) }
