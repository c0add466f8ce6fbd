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

// row is one element of individual_responses.json, parsed. Numbers may be
// JSON integers or floats (failed requests carry integer 0 timings); a nil
// pointer means null or absent.
type row struct {
	errorCode *int64    // error_code: null on success, HTTP status, API code, -1, …
	errorType string    // a non-numeric error_code, verbatim
	failed    bool      // error_code is not null
	errorMsg  string    // error_msg
	ttft      *float64  // ttft_s
	e2e       *float64  // end_to_end_latency_s
	itl       *float64  // inter_token_latency_s (a per-request number)
	itlList   []float64 // inter_token_latency_s as a list (some forks)
	itlBad    bool      // … holding an offending value (the list is dropped)
	thr       *float64  // request_output_throughput_token_per_s
	nIn       *int64    // number_input_tokens
	nOut      *int64    // number_output_tokens (Llama-2 tokenizer, BOS included)
	genText   bool      // the row has a GEN_TEXT key (leaderboard Bedrock fork)
	unknown   []string  // other keys
}

// knownKeys are the per-request keys of common_metrics.py (ray-project/
// llmperf 1eac866 … f1d6bed).
var knownKeys = map[string]bool{
	"error_code": true, "error_msg": true, "ttft_s": true, "end_to_end_latency_s": true,
	"inter_token_latency_s": true, "request_output_throughput_token_per_s": true,
	"number_total_tokens": true, "number_output_tokens": true, "number_input_tokens": true,
}

// parseRow reads one array element, the row at p. Wrong types (a string
// where a number belongs, …) are errors. Every number goes through the
// shared value checks (vals): a numeric string is read and counted; NaN,
// ±Infinity, a negative value and one out of range (a duration over a day,
// a count over 10^9) are counted and left null — never 0.
func parseRow(fields map[string]json.RawMessage, vals *ingest.Values, p ingest.Pos) (row, error) {
	f := fieldReader{fields: fields, vals: vals, pos: p}
	day := ingest.MaxIn(ingest.Seconds)
	r := row{
		ttft: f.number("ttft_s", day),
		e2e:  f.number("end_to_end_latency_s", day),
		thr:  f.number("request_output_throughput_token_per_s", math.MaxFloat64),
		nIn:  toInt(f.number("number_input_tokens", ingest.MaxTokens)),
		nOut: toInt(f.number("number_output_tokens", ingest.MaxTokens)),
	}
	if raw := bytes.TrimSpace(fields["inter_token_latency_s"]); len(raw) > 0 && raw[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			f.fail("inter_token_latency_s", errors.New("not a list of numbers"))
		}
		r.itlList = make([]float64, 0, len(elems))
		for _, e := range elems {
			x, ok, err := vals.JSON("inter_token_latency_s", p, e)
			if err != nil || !ok {
				f.fail("inter_token_latency_s", errors.New("not a list of numbers"))
				break
			}
			if !vals.Check("inter_token_latency_s", p, x, day) {
				// one unknown gap: the list's sum, the last content time,
				// is unknown
				r.itlList, r.itlBad = nil, true
				break
			}
			r.itlList = append(r.itlList, x)
		}
	} else {
		r.itl = f.number("inter_token_latency_s", day)
	}
	if f.err != nil {
		return r, f.err
	}
	r.errorMsg = ingest.RawText(fields["error_msg"])
	r.parseErrorCode(fields["error_code"])
	for k := range fields {
		switch {
		case k == "GEN_TEXT":
			r.genText = true
		case !knownKeys[k]:
			r.unknown = append(r.unknown, k)
		}
	}
	sort.Strings(r.unknown)
	return r, nil
}

// fieldReader reads numeric fields of one element, keeping the first error.
type fieldReader struct {
	fields map[string]json.RawMessage
	vals   *ingest.Values
	pos    ingest.Pos
	err    error
}

// number reads the field key: a number in [0, maxV], or a string holding
// one (counted); nil when null or absent, and for an offending value
// (counted by the shared value checks); nil after an error.
func (f *fieldReader) number(key string, maxV float64) *float64 {
	if f.err != nil {
		return nil
	}
	x, ok, err := f.vals.JSON(key, f.pos, f.fields[key])
	if err != nil {
		f.err = err
		return nil
	}
	if !ok || !f.vals.Check(key, f.pos, x, maxV) {
		return nil
	}
	return &x
}

// fail records the first error, prefixed with its field.
func (f *fieldReader) fail(key string, err error) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: %w", key, err)
	}
}

// parseErrorCode reads error_code: null (success), a number (429, 429.0,
// -100), a numeric string, or any other value (kept as the error type).
func (r *row) parseErrorCode(raw json.RawMessage) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return
	}
	r.failed = true
	if v, err := number(t); err == nil && v != nil && *v == math.Trunc(*v) && math.Abs(*v) < 1e15 {
		r.errorCode = ingest.Ptr(int64(*v))
		return
	}
	r.errorType = ingest.RawText(t)
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
func toInt(v *float64) *int64 {
	if v == nil {
		return nil
	}
	return ingest.Ptr(int64(math.Round(*v)))
}

// seconds converts a positive duration in seconds to nanoseconds; zero
// (LLMPerf's initial 0 on failed requests) and absent durations are nil
// (the value checks have left an offending one absent).
func seconds(v *float64) *int64 {
	if v == nil || *v <= 0 {
		return nil
	}
	return ingest.Ptr(int64(math.Round(*v * 1e9)))
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
func lastToken(r *row, ttft, e2e *int64, divideByTokens bool, st *lastTokenStats) *int64 {
	if ttft == nil || e2e == nil {
		st.noTiming++
		return nil
	}
	type candidate struct {
		sec   float64
		count *int
	}
	var cands []candidate
	switch {
	case r.itlList != nil:
		sum := 0.0
		for _, v := range r.itlList {
			sum += v
		}
		cands = append(cands, candidate{sum, &st.fromList})
	case r.itl != nil:
		if divideByTokens && r.nOut != nil && *r.nOut > 0 {
			cands = append(cands, candidate{*r.itl * float64(*r.nOut), &st.fromITL})
		}
		if r.failed && divideByTokens {
			cands = append(cands, candidate{*r.itl, &st.undivided})
		}
	}
	if len(cands) == 0 {
		st.notRecoverable++
		return nil
	}
	var found []int64
	var count *int
	for _, c := range cands {
		ns := int64(math.Round(c.sec * 1e9))
		if c.sec > 0 && ns >= *ttft-slackNs && ns <= *e2e+slackNs {
			found = append(found, min(max(ns, *ttft), *e2e))
			count = c.count
		}
	}
	switch {
	case len(found) == 0:
		st.outOfRange++
		return nil
	case len(found) == 2 && absDiff(found[0], found[1]) > slackNs:
		st.ambiguous++
		return nil
	}
	*count++
	return ingest.Ptr(found[len(found)-1])
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// toRequest builds the Request of row r (the key-th element). Status:
// "error" when error_code is not null (timings kept: the Bedrock -100 rows
// have real ones); "empty" when no content chunk arrived (ttft_s 0) and
// number_output_tokens ≤ 1 (the BOS token alone); else "ok". Rows without
// error get OutputTokens = number_output_tokens − 1 (the BOS token).
func (r *row) toRequest(runID string, key int64, divideByTokens bool, st *lastTokenStats) formats.Request {
	req := formats.Request{RunID: runID, RequestKey: key}
	ttft, e2e := seconds(r.ttft), seconds(r.e2e)
	req.FirstTokenOffsetNs, req.FirstContentOffsetNs = ttft, copyPtr(ttft)
	req.StreamEndOffsetNs = e2e
	req.LastTokenOffsetNs = lastToken(r, ttft, e2e, divideByTokens, st)
	if r.nIn != nil {
		req.InputTokens, req.InputTokensSource = ingest.Ptr(*r.nIn), formats.SourceToolReported
	}
	switch {
	case r.failed:
		req.Status = formats.StatusError
		req.ErrorCode, req.ErrorType, req.ErrorText = r.errorCode, r.errorType, r.errorMsg
	case (r.nOut == nil || *r.nOut <= 1) && ttft == nil:
		req.Status = formats.StatusEmpty
	default:
		req.Status = formats.StatusOK
	}
	if !r.failed && r.nOut != nil {
		req.OutputTokens, req.OutputTokensSource = ingest.Ptr(max(*r.nOut-1, 0)), formats.SourceToolReported
	}
	r.setReported(&req)
	return req
}

// setReported copies LLMPerf's own per-request values: seconds → ms, the
// raw token counts (BOS included) and the per-request throughput. A
// list-valued ITL is reported as its mean, the per-request share of the
// pooled statistic such forks summarize.
func (r *row) setReported(req *formats.Request) {
	ms := func(v *float64) *float64 {
		if v == nil {
			return nil
		}
		return ingest.Ptr(*v * 1000)
	}
	req.ReportedTTFTMs = ms(r.ttft)
	req.ReportedE2EMs = ms(r.e2e)
	req.ReportedITLMs = ms(r.itl)
	if len(r.itlList) > 0 {
		sum := 0.0
		for _, v := range r.itlList {
			sum += v
		}
		req.ReportedITLMs = ingest.Ptr(sum / float64(len(r.itlList)) * 1000)
	}
	if r.nOut != nil {
		req.ReportedOutputTokens = ingest.Ptr(float64(*r.nOut))
	}
	if r.nIn != nil {
		req.ReportedInputTokens = ingest.Ptr(float64(*r.nIn))
	}
	req.ReportedOutputTokensPS = r.thr
}

func copyPtr(p *int64) *int64 {
	if p == nil {
		return nil
	}
	return ingest.Ptr(*p)
}

// readRows decodes the array from rd one element at a time: with the fast
// scanner (fastElements) as far as it goes, then with encoding/json's
// Decoder (Token + Decode) from where it stopped. An array cut short — a
// last element that ends early, or no closing bracket — returns the
// complete elements and a note saying where the cut is; anything else
// undecodable is a positioned error.
func readRows(path string, rd io.Reader, max int64, vals *ingest.Values) (rows []row, cut string, err error) {
	return readRowsWith(path, rd, max, vals, true)
}

// readRowsWith is readRows, without the fast scanner when fast is false
// (the reference, for tests).
func readRowsWith(path string, rd io.Reader, max int64, vals *ingest.Values, fast bool) (rows []row, cut string, err error) {
	add := func(fields map[string]json.RawMessage) error {
		if fields == nil {
			return ingest.Errorf(path, recordAt(len(rows)), "null instead of an object")
		}
		r, err := parseRow(fields, vals, ingest.Pos{Request: int64(len(rows)), At: recordAt(len(rows))})
		if err != nil {
			return ingest.Wrap(path, recordAt(len(rows)), err)
		}
		if len(rows) == cap(rows) && len(rows) >= 1024 {
			// double: append grows a large slice by ~1.25×, copying
			// the ~180-byte rows about five times over (LLMPerf 100k:
			// peak RSS 125 -> 113 MB)
			rows = slices.Grow(rows, len(rows))
		}
		rows = append(rows, r)
		return nil
	}
	rest, skip := rd, 0
	if fast {
		// parseRow keeps nothing of the map: one serves every element
		reuse := make(map[string]json.RawMessage, 12)
		rest, skip, err = fastElements(rd, max, func(raw []byte) error {
			fields, ok := fastFieldsInto(raw, reuse)
			if !ok {
				if err := json.Unmarshal(raw, &fields); err != nil {
					return ingest.Wrap(path, recordAt(len(rows)), err)
				}
			}
			return add(fields)
		})
		if err != nil {
			return nil, "", err
		}
		if rest == nil {
			return rows, "", nil
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
			return nil, "", ingest.Wrap(path, recordAt(len(rows)-1), err)
		}
	}
	for dec.More() {
		fields, err := decodeFields(dec)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return rows, fmt.Sprintf("the array ends after record %d without its closing ']' (file cut)", len(rows)), nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return rows, recordAt(len(rows)) + " is incomplete (file cut)", nil
			}
			return nil, "", ingest.Wrap(path, recordAt(len(rows)), err)
		}
		if err := add(fields); err != nil {
			return nil, "", err
		}
	}
	t, err = dec.Token()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return rows, fmt.Sprintf("the array ends after record %d without its closing ']' (file cut)", len(rows)), nil
	case err != nil:
		return nil, "", ingest.Wrap(path, recordAt(len(rows)), err)
	case t != json.Delim(']'):
		return nil, "", ingest.Errorf(path, recordAt(len(rows)), "unexpected %v", t)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "", ingest.Errorf(path, "", "data after the JSON array")
	}
	return rows, "", nil
}

// recordAt names the element after the first n: "record n+1".
func recordAt(n int) string { return "record " + strconv.Itoa(n+1) }
