package sglangbench

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// details are a line's --output-details arrays, index-aligned; a nil slice
// is an array the line does not hold.
type details struct {
	n                      int
	ttfts, inLens, outLens []float64
	itls                   [][]float64
	errs, texts            []string
	names                  []string
	// itlLens are the itls' lengths (set with itls, and alone when the
	// itls are streamed: stream then reads them again).
	itlLens []int32
	stream  *pybench.SecondPass
}

// rowArrays are the arrays that make rows: they say when or whether each
// request answered.
var rowArrays = []string{"ttfts", "itls", "output_lens", "errors"}

// parseDetails reads the arrays; nil when none of rowArrays is present.
// The shared value checks of the elements go to vals (an offending element
// is read as NaN, no value); at names the line in positions.
func parseDetails(arrays map[string]json.RawMessage, vals *ingest.Values, at string) (*details, error) {
	found := false
	for _, k := range rowArrays {
		if _, ok := arrays[k]; ok {
			found = true
		}
	}
	if !found {
		return nil, nil
	}
	d := &details{n: -1}
	lengths := map[string]int{}
	for _, a := range []struct {
		key  string
		dst  *[]float64
		maxV float64
	}{{"ttfts", &d.ttfts, ingest.MaxIn(ingest.Seconds)}, {"input_lens", &d.inLens, ingest.MaxTokens}, {"output_lens", &d.outLens, ingest.MaxTokens}} {
		raw, ok := arrays[a.key]
		if !ok {
			continue
		}
		v, err := pybench.Column(a.key, raw, vals, at, a.maxV)
		if err != nil {
			return nil, err
		}
		*a.dst, lengths[a.key] = v, len(v)
	}
	for _, a := range []struct {
		key string
		dst *[]string
	}{{"errors", &d.errs}, {"generated_texts", &d.texts}} {
		raw, ok := arrays[a.key]
		if !ok {
			continue
		}
		v, err := pybench.Strings(a.key, raw)
		if err != nil {
			return nil, err
		}
		*a.dst, lengths[a.key] = v, len(v)
	}
	if raw, ok := arrays["itls"]; ok {
		v, err := pybench.Columns("itls", raw, vals, at, ingest.MaxIn(ingest.Seconds))
		if err != nil {
			return nil, err
		}
		d.itls, lengths["itls"] = v, len(v)
		d.itlLens = make([]int32, len(v))
		for i, l := range v {
			d.itlLens[i] = int32(len(l))
		}
	}
	var err error
	if d.names, d.n, err = pybench.Aligned(lengths); err != nil {
		return nil, err
	}
	return d, nil
}

// rowStats counts what the rows needed, for the run's notes.
type rowStats struct {
	ok, failed, empty int
	errTypes          map[string]int
	emptyReason       int
	rebuilt           pybench.Rebuilt
	firstUnknown      int // native requests whose first chunk's tokens are unknown
	badTokenCount     int
}

// request builds request i and its events (appended to events[:0]).
// gaps are its itls (nil without them), text its generated text (nil when
// absent or not wanted).
func (d *details) request(runID string, i int, gaps []float64, text *string, native bool, st *rowStats, events []formats.Event) (formats.Request, []formats.Event) {
	req := formats.Request{RunID: runID, RequestKey: int64(i)}
	events = events[:0]
	ttft, out := pybench.At(d.ttfts, i), pybench.At(d.outLens, i)
	errText := ""
	if d.errs != nil {
		errText = d.errs[i]
	}
	failed := errText != "" || (!(ttft > 0) && !(out > 0))
	if failed {
		req.Status = formats.StatusError
		req.ErrorText = errText
		req.ErrorCode, req.ErrorType = pybench.ErrorClass(errText)
		if errText == "" {
			st.emptyReason++
		}
		if st.errTypes == nil {
			st.errTypes = map[string]int{}
		}
		st.errTypes[pybench.ErrorLabel(&req)]++
	}
	if ttftNs, ok := pybench.SecondsNs(ttft); ok && ttft > 0 && !pybench.GapsKnown(gaps) {
		// A gap is unknown (an offending value, in the run's checks): no
		// message after it can be placed, so none is rebuilt. SGLang saves
		// no latency: the first token is known, the last is not.
		st.rebuilt.Unplaced++
		req.FirstTokenOffsetNs, req.FirstContentOffsetNs = ingest.Ptr(ttftNs), ingest.Ptr(ttftNs)
		if len(gaps) > 0 && pybench.GapsKnown(gaps[:1]) && !native {
			g, _ := pybench.SecondsNs(gaps[0])
			req.SecondTokenOffsetNs = ingest.Ptr(ttftNs + g)
		}
		if !native {
			req.MessageCount, req.TokenMessageCount = int64(len(gaps)+1), int64(len(gaps)+1)
		}
		req.ReportedTTFTMs = ingest.Ptr(ttft * 1000)
		if !failed {
			req.Status = formats.StatusOK
		}
	} else if ok && ttft > 0 {
		first := int64(0)
		if native {
			if n, ok := pybench.Count(out); ok && n > int64(len(gaps)) {
				first = n - int64(len(gaps))
			} else {
				st.firstUnknown++
			}
		}
		events = pybench.RebuildEvents(events, runID, int64(i), ttftNs, gaps, text, native, first, &st.rebuilt)
		formats.FillFromEvents(&req, events)
		// SGLang's latency ends at the last stream line, [DONE]
		// included, and is not saved: the stream's end is unknown.
		req.StreamEndOffsetNs = nil
		req.ReportedTTFTMs = ingest.Ptr(ttft * 1000)
	} else if !failed {
		req.Status = formats.StatusEmpty
	}
	switch req.Status {
	case formats.StatusOK:
		st.ok++
	case formats.StatusEmpty:
		st.empty++
	default:
		st.failed++
	}
	if n, ok := pybench.Count(pybench.At(d.inLens, i)); ok {
		req.InputTokens, req.InputTokensSource = ingest.Ptr(n), formats.SourceToolReported
		req.ReportedInputTokens = ingest.Ptr(float64(n))
	} else if d.inLens != nil {
		st.badTokenCount++
	}
	if !failed {
		if n, ok := pybench.Count(out); ok {
			req.OutputTokens, req.OutputTokensSource = ingest.Ptr(n), formats.SourceToolReported
			if native {
				req.OutputTokensSource = formats.SourceServerUsage
			}
			req.ReportedOutputTokens = ingest.Ptr(float64(n))
		} else if d.outLens != nil {
			st.badTokenCount++
		}
	}
	return req, events
}

// notes describes the rows for the run's notes.
func (d *details) notes(st *rowStats, native bool) []string {
	errs := ""
	if len(st.errTypes) > 0 {
		var parts []string
		for k, n := range st.errTypes {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, n))
		}
		sort.Strings(parts)
		errs = ": " + strings.Join(parts, ", ")
	}
	notes := []string{
		fmt.Sprintf("requests: %d from the --output-details arrays (%s): %d ok, %d empty, %d error%s", d.n, strings.Join(d.names, ", "), st.ok, st.empty, st.failed, errs),
		"no start times (SGLang saves none): start_ns null",
	}
	if st.rebuilt.Requests > 0 {
		n := fmt.Sprintf("events rebuilt for %d requests from ttfts and itls: the first content message at TTFT, then one per gap; kind content, has_choices true; per-chunk text and bytes are not recorded, so each reply's whole generated text is on its last event", st.rebuilt.Requests)
		if native {
			n += fmt.Sprintf("; native backend: runs of equal consecutive gaps are one chunk of k tokens that SGLang split into k gaps of gap/k, rebuilt as one message carrying k tokens (%d such messages), the first message carrying output_len − len(itls) tokens", st.rebuilt.Merged)
		}
		notes = append(notes, n)
	}
	if st.firstUnknown > 0 {
		notes = append(notes, fmt.Sprintf("native requests whose output_len does not exceed their ITL count, so the first message's token count is unknown: %d", st.firstUnknown))
	}
	if st.rebuilt.Unplaced > 0 {
		notes = append(notes, fmt.Sprintf("requests without rebuilt events because an ITL gap is unknown (null, or an offending value: the run's data checks): %d; their first token is at ttfts, their last is unknown (SGLang saves no latency), and their gaps leave pooled ITL", st.rebuilt.Unplaced))
	}
	notes = append(notes, "stream_end_offset_ns left null: SGLang's latency (its E2E, and TPOT's numerator) ends at the last stream line, [DONE] included, which --output-details does not save")
	if d.outLens != nil {
		if native {
			notes = append(notes, "output_tokens = output_lens (server_usage: meta_info.completion_tokens of the last chunk); left null on failed requests, where SGLang writes 0")
		} else {
			notes = append(notes, "output_tokens = output_lens (tool_reported: usage.completion_tokens when the stream carried usage, else the requested max tokens, sglang issue #24254); left null on failed requests, where SGLang writes 0")
		}
	}
	if d.inLens != nil {
		notes = append(notes, "input_tokens = input_lens (tool_reported: the dataset's prompt length)")
	}
	if st.emptyReason > 0 {
		notes = append(notes, fmt.Sprintf("failed requests with an empty error (no first token, no output: a non-200 reply whose reason was empty): %d", st.emptyReason))
	}
	if st.empty > 0 {
		notes = append(notes, fmt.Sprintf("requests without error and without a first content chunk (SGLang counts them completed, with TTFT 0): %d, status empty", st.empty))
	}
	if st.badTokenCount > 0 {
		notes = append(notes, fmt.Sprintf("token counts left null (null in the file, or an offending value: the run's data checks): %d", st.badTokenCount))
	}
	return notes
}
