package vllmbench

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// details are a result's per-request arrays, index-aligned; a nil slice is
// an array the file does not hold.
type details struct {
	n                                            int
	ttfts, inLens, outLens, starts, lats, queues []float64
	itls                                         [][]float64
	errs, texts                                  []string
	names                                        []string // the arrays present, sorted
	// schedule: queue_times give each request's intended start
	// (start_times − queue_times), set by emit for a finite request rate.
	schedule bool
	// sums are the itls' summaries for the traps (nil without itls).
	sums []itlSum
	// stream, when set, is where the itls and generated_texts are read
	// again, request by request (pybench.Scan read the file; itls and
	// texts are then nil).
	stream *pybench.SecondPass
}

// rowArrays are the arrays that make rows: they say when or whether each
// request answered. input_lens, start_times, generated_texts and
// queue_times alone do not.
//
// queue_times (vllm-project/vllm PR #54136, v0.30.0) are each request's
// wait between its arrival — when vLLM's request generator yielded it on
// the --request-rate schedule — and its start_time, spent on the
// --max-concurrency semaphore: client_queue_time = start_time −
// arrival, and e2el_including_client_queue = latency + queue_time, in
// vllm/benchmarks/serve.py. The arrival is the request's intended start
// (ScheduledStartNs = start_times − queue_times) when the rate is finite;
// with an infinite rate every request arrives at the benchmark's start, no
// schedule (vLLM leaves e2el_including_client_queue out then too).
var rowArrays = []string{"ttfts", "itls", "output_lens", "errors", "latencies"}

// Ranges of the per-request arrays (the shared value checks: an element
// outside its range is recorded in the run's checks and read as NaN, no
// value): durations and gaps in seconds up to a day, token counts, and
// start_times, perf_counter readings in seconds.
var arrayMax = map[string]float64{
	"ttfts": ingest.MaxIn(ingest.Seconds), "latencies": ingest.MaxIn(ingest.Seconds), "itls": ingest.MaxIn(ingest.Seconds),
	"input_lens": ingest.MaxTokens, "output_lens": ingest.MaxTokens,
	"start_times": ingest.MaxTimeNs / ingest.Seconds, "queue_times": ingest.MaxIn(ingest.Seconds),
}

// parseDetails reads the arrays; nil when none of rowArrays is present.
// Arrays of different lengths, and wrong element types, are errors. The
// shared value checks of the elements go to vals; at names the result
// object in positions ("line 3"; "" for a file of one).
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
	floats := func(key string, dst *[]float64) error {
		raw, ok := arrays[key]
		if !ok {
			return nil
		}
		var v []float64
		var err error
		if maxV, checked := arrayMax[key]; checked {
			v, err = pybench.Column(key, raw, vals, at, maxV)
		} else {
			v, err = pybench.Floats(key, raw)
		}
		if err != nil {
			return err
		}
		*dst, lengths[key] = v, len(v)
		return nil
	}
	strs := func(key string, dst *[]string) error {
		raw, ok := arrays[key]
		if !ok {
			return nil
		}
		v, err := pybench.Strings(key, raw)
		if err != nil {
			return err
		}
		*dst, lengths[key] = v, len(v)
		return nil
	}
	for _, err := range []error{
		floats("ttfts", &d.ttfts), floats("input_lens", &d.inLens), floats("output_lens", &d.outLens),
		floats("start_times", &d.starts), floats("latencies", &d.lats), floats("queue_times", &d.queues),
		strs("errors", &d.errs), strs("generated_texts", &d.texts),
	} {
		if err != nil {
			return nil, err
		}
	}
	if raw, ok := arrays["itls"]; ok {
		v, err := pybench.Columns("itls", raw, vals, at, arrayMax["itls"])
		if err != nil {
			return nil, err
		}
		d.itls, lengths["itls"] = v, len(v)
		d.sums = make([]itlSum, len(v))
		var scratch []float64
		for i, l := range v {
			d.sums[i] = summarize(l, &scratch)
		}
	}
	var err error
	if d.names, d.n, err = pybench.Aligned(lengths); err != nil {
		return nil, err
	}
	d.checkTimeOrder(vals, at)
	return d, nil
}

// checkTimeOrder nulls a first token after the request's end (time_order):
// the latency is trusted (vLLM's own E2E statistics use it).
func (d *details) checkTimeOrder(vals *ingest.Values, at string) {
	for i := 0; i < len(d.ttfts) && i < len(d.lats); i++ {
		if d.lats[i] == 0 && d.errs != nil && i < len(d.errs) && d.errs[i] != "" {
			// a request that failed mid-stream: vLLM leaves its latency
			// 0.0 (the status says it failed; no clock is wrong)
			continue
		}
		pos := ingest.Pos{Request: int64(i), At: strings.TrimPrefix(fmt.Sprintf("%s, ttfts[%d]", at, i), ", ")}
		if !vals.NotAfter("ttfts", pos, d.ttfts[i], "latencies", d.lats[i], ingest.Seconds, "s") {
			d.ttfts[i] = math.NaN()
		}
	}
}

func (d *details) clockDomain() string {
	if d.starts != nil {
		return formats.ClockMonotonic
	}
	return ""
}

// rowStats counts what the rows needed, for the run's notes.
type rowStats struct {
	ok, failed, empty        int
	errTypes                 map[string]int
	emptyReason              int // failed with errors[i] == "" (no reply, no reason)
	scheduled                int // requests given an intended start (queue_times)
	rebuilt                  pybench.Rebuilt
	noTTFT                   int // ok requests without a first-token time
	fromLatencyOnly          int
	latencyMismatch          int
	maxMismatchNs            int64
	badStarts, badTokenCount int
}

// latencySlackNs is how far the last rebuilt message may be from
// round(latency·1e9): vLLM's latency is last − start and its TTFT and gaps
// are differences of the same perf_counter readings, so they add up to the
// latency but for float rounding (the rebuilt offsets add one rounding per
// gap, each under half a nanosecond).
func latencySlackNs(gaps int) int64 { return int64(gaps/2) + 2 }

// request builds request i and its events (appended to events[:0]).
//
// Status: "error" when errors[i] is not empty; also when the request has no
// first-token time (ttfts[i] 0) and no output (output_lens[i] 0 or absent) —
// vLLM's success needs a first choices message, so this is a failure whose
// reason (aiohttp's response.reason) was empty; without ttfts, a latency of
// 0 with no output marks one too (vLLM leaves latency 0.0 on failures).
// Otherwise the events decide (ok), or, without events, "ok" when the
// request has output or a latency, else "empty".
//
// gaps are the request's itls (nil without them) and text its generated
// text (nil when absent or not wanted).
// overrun reports whether request i's last token, ttfts[i] + Σ itls[i],
// comes after its latency by more than the rounding slack and 1 µs (the
// time_order threshold), recording it under field itls: the latency is
// trusted (vLLM's own E2E statistics use it; AIPerf's importer reads the
// same shape the same way) and no message is rebuilt.
func (d *details) overrun(i int, gaps []float64, vals *ingest.Values, at string) bool {
	ttft, lat := pybench.At(d.ttfts, i), pybench.At(d.lats, i)
	if !(ttft > 0) || !(lat > 0) || !pybench.GapsKnown(gaps) {
		return false
	}
	last := ttft
	for _, g := range gaps {
		last += g
	}
	if (last-lat)*1e9 <= float64(latencySlackNs(len(gaps)))+1e3 {
		return false
	}
	pos := ingest.Pos{Request: int64(i), At: strings.TrimPrefix(fmt.Sprintf("%s, itls[%d]", at, i), ", ")}
	vals.Record(ingest.CheckTimeOrder, "itls", pos, fmt.Sprintf("last token at %s s (ttfts + Σ itls), after latencies %s s",
		ingest.FormatValue(last), ingest.FormatValue(lat)))
	return true
}

func (d *details) request(runID string, i int, gaps []float64, text *string, st *rowStats, events []formats.Event, overrun bool) (formats.Request, []formats.Event) {
	req := formats.Request{RunID: runID, RequestKey: int64(i)}
	events = events[:0]
	ttft, out, lat := pybench.At(d.ttfts, i), pybench.At(d.outLens, i), pybench.At(d.lats, i)
	errText := ""
	if d.errs != nil {
		errText = d.errs[i]
	}
	noOutput := !(out > 0)
	failed := errText != "" ||
		(d.ttfts != nil && !(ttft > 0) && noOutput) ||
		(d.ttfts == nil && d.lats != nil && !(lat > 0) && noOutput)
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
	if d.starts != nil {
		if ns, ok := pybench.SecondsNs(d.starts[i]); ok {
			req.StartNs, req.ClockDomain = ingest.Ptr(ns), formats.ClockMonotonic
			if d.schedule {
				if q, ok := pybench.SecondsNs(d.queues[i]); ok {
					req.ScheduledStartNs, req.ScheduledStartSource = ingest.Ptr(ns-q), SourceQueueTimes
					st.scheduled++
				}
			}
		} else {
			st.badStarts++
		}
	}
	if ttftNs, ok := pybench.SecondsNs(ttft); ok && ttft > 0 && (!pybench.GapsKnown(gaps) || overrun) {
		// A gap is unknown (an offending value, in the run's checks), or
		// the gaps overrun the latency (time_order): no message after the
		// first can be placed, so none is rebuilt; the offsets are the
		// request's own fields.
		st.rebuilt.Unplaced++
		req.FirstTokenOffsetNs, req.FirstContentOffsetNs = ingest.Ptr(ttftNs), ingest.Ptr(ttftNs)
		if len(gaps) > 0 && pybench.GapsKnown(gaps[:1]) {
			g, _ := pybench.SecondsNs(gaps[0])
			req.SecondTokenOffsetNs = ingest.Ptr(ttftNs + g)
		}
		if latNs, ok := pybench.SecondsNs(lat); ok && lat > 0 {
			req.LastTokenOffsetNs = ingest.Ptr(latNs)
		}
		req.MessageCount, req.TokenMessageCount = int64(len(gaps)+1), int64(len(gaps)+1)
		if !failed {
			req.Status = formats.StatusOK
		}
	} else if ok && ttft > 0 {
		events = pybench.RebuildEvents(events, runID, int64(i), ttftNs, gaps, text, false, 0, &st.rebuilt)
		formats.FillFromEvents(&req, events)
		if latNs, ok := pybench.SecondsNs(lat); ok && lat > 0 {
			dd := events[len(events)-1].OffsetNs - latNs
			if dd < 0 {
				dd = -dd
			}
			if dd > latencySlackNs(len(gaps)) {
				st.latencyMismatch++
				st.maxMismatchNs = max(st.maxMismatchNs, dd)
			}
		}
		// The usage message and [DONE] follow the last choices message
		// untimed: the stream's end is unknown.
		req.StreamEndOffsetNs = nil
	} else if !failed {
		if latNs, ok := pybench.SecondsNs(lat); ok && lat > 0 {
			req.LastTokenOffsetNs = ingest.Ptr(latNs)
			if d.ttfts == nil {
				st.fromLatencyOnly++
			}
		}
		if d.ttfts != nil {
			st.noTTFT++
		}
		if !noOutput || req.LastTokenOffsetNs != nil {
			req.Status = formats.StatusOK
		} else {
			req.Status = formats.StatusEmpty
		}
	}
	switch req.Status {
	case formats.StatusOK:
		st.ok++
	case formats.StatusEmpty:
		st.empty++
	default:
		st.failed++
	}
	d.setTokens(&req, i, failed, st)
	if ttft > 0 {
		req.ReportedTTFTMs = ingest.Ptr(ttft * 1000)
	}
	if lat > 0 {
		req.ReportedE2EMs = ingest.Ptr(lat * 1000)
	}
	return req, events
}

// setTokens sets the token counts: input_lens for every request,
// output_lens for those that did not fail (a failure's 0 is vLLM's
// placeholder), both tool_reported and as the reported values.
func (d *details) setTokens(req *formats.Request, i int, failed bool, st *rowStats) {
	if n, ok := pybench.Count(pybench.At(d.inLens, i)); ok {
		req.InputTokens, req.InputTokensSource = ingest.Ptr(n), formats.SourceToolReported
		req.ReportedInputTokens = ingest.Ptr(float64(n))
	} else if d.inLens != nil {
		st.badTokenCount++
	}
	if failed {
		return
	}
	if n, ok := pybench.Count(pybench.At(d.outLens, i)); ok {
		req.OutputTokens, req.OutputTokensSource = ingest.Ptr(n), formats.SourceToolReported
		req.ReportedOutputTokens = ingest.Ptr(float64(n))
	} else if d.outLens != nil {
		st.badTokenCount++
	}
}

// notes describes the rows for the run's notes.
func (d *details) notes(st *rowStats) []string {
	notes := []string{
		fmt.Sprintf("requests: %d from the per-request arrays (%s): %d ok, %d empty, %d error%s", d.n, strings.Join(d.names, ", "), st.ok, st.empty, st.failed, countList(st.errTypes)),
	}
	if st.rebuilt.Requests > 0 {
		notes = append(notes, fmt.Sprintf("events rebuilt for %d requests from ttfts and itls: one per message with non-empty choices (vLLM's TTFT message, then one per ITL gap), kind content, has_choices true; per-message text, bytes and token counts are not recorded, so each reply's whole generated text is on its last event; a chat run's first message may be the role-only chunk (vLLM issue #15106)", st.rebuilt.Requests))
	}
	if st.rebuilt.Unplaced > 0 {
		notes = append(notes, fmt.Sprintf("requests without rebuilt events because an ITL gap is unknown (null, or an offending value: the run's data checks): %d; their first token is at ttfts, their last at latencies when saved, and their gaps leave pooled ITL", st.rebuilt.Unplaced))
	}
	if d.starts != nil {
		notes = append(notes, "start_ns = start_times (time.perf_counter seconds: monotonic clock, arbitrary epoch)")
	} else {
		notes = append(notes, "no start_times (written since vLLM PR #32667, 2026-01): start_ns null")
	}
	notes = append(notes, "stream_end_offset_ns left null: the usage message and [DONE] after the last choices message are not timed")
	if d.outLens != nil {
		notes = append(notes, "output_tokens = output_lens (tool_reported): vLLM's usage.completion_tokens when the server sent usage, else its count of the re-tokenized generated text (add_special_tokens=False); left null on failed requests, where vLLM writes 0")
	}
	if d.inLens != nil {
		notes = append(notes, "input_tokens = input_lens (tool_reported): usage.prompt_tokens when the server sent it, else the dataset's prompt length")
	}
	if st.emptyReason > 0 {
		notes = append(notes, fmt.Sprintf("failed requests with an empty error (no first token, no output: vLLM's placeholders for a non-200 reply whose reason was empty): %d", st.emptyReason))
	}
	if st.noTTFT > 0 {
		notes = append(notes, fmt.Sprintf("requests without error but without a first-token time (ttfts 0): %d, imported without events", st.noTTFT))
	}
	if st.fromLatencyOnly > 0 {
		notes = append(notes, fmt.Sprintf("requests with a latency but no ttfts array (vLLM keeps latencies without --save-detailed): %d; last_token_offset_ns = latency, no first token, no events; a latency of 0 with no output is taken as a failure", st.fromLatencyOnly))
	}
	if d.lats != nil {
		if st.latencyMismatch > 0 {
			notes = append(notes, fmt.Sprintf("requests whose ttft + Σ itls differs from their latency by more than the rounding slack: %d (largest %d ns); the rebuilt events follow ttfts and itls", st.latencyMismatch, st.maxMismatchNs))
		} else if st.rebuilt.Requests > 0 {
			notes = append(notes, "every rebuilt last message matches the request's latency (vLLM: latency = last choices message − start)")
		}
	}
	switch {
	case d.queues != nil && d.schedule:
		notes = append(notes, fmt.Sprintf("scheduled_start_ns = start_times − queue_times (the wait for the --max-concurrency semaphore after the request's arrival on the --request-rate schedule) on %d of %d requests", st.scheduled, d.n))
	case d.queues != nil && d.starts == nil:
		notes = append(notes, "queue_times not imported as intended starts: the file has no start_times to subtract them from")
	case d.queues != nil:
		notes = append(notes, "queue_times not imported as intended starts: the request_rate is inf (every request arrives at the benchmark's start, a burst and no schedule; vLLM leaves e2el_including_client_queue out too), missing or not positive")
	}
	if st.badStarts > 0 || st.badTokenCount > 0 {
		notes = append(notes, fmt.Sprintf("values left null (null in the file, or an offending value: the run's data checks): %d start times, %d token counts", st.badStarts, st.badTokenCount))
	}
	return notes
}

// SourceQueueTimes is Request.ScheduledStartSource of vLLM's intended
// starts (start_times − queue_times).
const SourceQueueTimes = "vllm:queue_times"

// countList renders "a ×2, b ×1" sorted, prefixed with ": ".
func countList(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(parts)
	return ": " + strings.Join(parts, ", ")
}
