package inferenceperf

import (
	"fmt"
	"math"
	"slices"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// inference-perf's known per-request data errors (the data-check
// catalogue, analyze/TRAPS.md), detected in per_request_lifecycle_metrics
// .json; the version alone tells them in a report without it.
const (
	// TrapLineTimes: ≤ v0.2 timed every SSE line as a token.
	TrapLineTimes = "inference_perf_line_times"
	// TrapMessageTimes: v0.3–v0.4 timed every SSE message as a token.
	TrapMessageTimes = "inference_perf_message_times"
	// TrapBOSPerChunk: v0.5 counted one BOS token per re-tokenized chunk.
	TrapBOSPerChunk = "inference_perf_bos_per_chunk"
	// TrapBOSInOutputCount: v0.6.0 and earlier counted the whole reply
	// with special tokens: one BOS in output_tokens.
	TrapBOSInOutputCount = "inference_perf_bos_in_output_count"
	// TrapBuggyVersion: a lifecycle report of a version whose per-request
	// times or counts were wrong, without the per-request file that would
	// let them be corrected.
	TrapBuggyVersion = "inference_perf_buggy_version"
	// TrapConcurrencyOvershoot: a concurrent stage had more requests in
	// flight than its concurrency_level (v0.3.x gave every worker one slot
	// too many).
	TrapConcurrencyOvershoot = "inference_perf_concurrency_overshoot"
)

// Thresholds of the signatures. A blank SSE line follows its data line
// within microseconds: in a ≤ v0.2 record every data → blank gap must be
// below tinyGapShare × the median of the other gaps; in a v0.3–v0.4
// record [DONE] follows the last token the same way (its last gap below
// tinyGapShare × the median of the others, judged with ≥ minGaps other
// gaps). A file's records are corrected when at least judgedShare of the
// judged ones show it (or none can be judged: the version says so).
const (
	tinyGapShare = 0.25
	minGaps      = 3
	judgedShare  = 0.5
)

const srcTimes = "https://github.com/kubernetes-sigs/inference-perf/issues/392, fixed by https://github.com/kubernetes-sigs/inference-perf/pull/452"

// traps are inference-perf's entries of the catalogue.
var traps = []convention.Trap{{
	Code:  TrapConcurrencyOvershoot,
	Title: "inference-perf ran a concurrent stage with more requests in flight than its concurrency level",
	Tools: "inference-perf v0.3.x: the concurrent load type (PR #263, 2025-11) gave each of its W workers concurrency_level // W + 1 slots, up to W more than asked (32 asked of 32 workers ran 64); " +
		"PR #320 (7a44edf, in v0.4.0) divides without the + 1",
	Signature: "a concurrent stage (load_summary.concurrency, or the config's concurrency_level) whose per-request records have more requests in flight at once (start_time to end_time) " +
		"than the stage's concurrency: a worker starts a request only after taking a semaphore slot and records its end before giving the slot back, so a correct run never exceeds it",
	Action: convention.ActionFlag,
	Effect: "the run's values stay as measured, but at another load than its label: the warning names the observed concurrency (the in-flight maximum and its time-weighted mean over the stage) beside the configured one; " +
		"compare and capacity should match such a run on the observed concurrency, not the configured one",
	Metrics: []string{"concurrency", "ttft_ms", "e2e_ms", "request_throughput"},
	Source:  "https://github.com/kubernetes-sigs/inference-perf/issues/319, fixed by https://github.com/kubernetes-sigs/inference-perf/pull/320 (7a44edf, v0.4.0)",
	Test:    "ingest/inferenceperf TestTrapConcurrencyOvershoot",
}, {
	Code:  TrapLineTimes,
	Title: "inference-perf timed every SSE line as a token: each data line, the blank line after it, and [DONE]",
	Tools: "inference-perf v0.1.1 – v0.2.x (per-request records with info.output_token_times and no info.extra_info; apis/completion.py and chat.py iterate response.content line by line)",
	Signature: "a completed streamed record's times come in pairs, a data line then its blank separator microseconds later " +
		"(completions: d, b, …, [DONE], b — an even count; chat: role, b, d, b, …, [DONE] — odd)",
	Threshold: fmt.Sprintf("every data → blank gap < %.2f × the median of the other gaps; the file is corrected when ≥ %.0f%% of its judged records show it", tinyGapShare, 100*judgedShare),
	Action:    convention.ActionCorrect,
	Effect: "the blank-line times, the [DONE] time and (chat) the role chunk's time are marked as carrying no token (events.tokens = 0, times kept) and leave TTFT, E2E, TPOT and ITL: " +
		"the data lines are the token messages; a record whose times do not pair is not corrected",
	Fix:     convention.FixNotTokenTimes,
	Metrics: []string{"ttft_ms", "ttst_ms", "e2e_ms", "tpot_ms", "itl_ms"},
	Reproduction: "inference-perf's TPOT divided by the number of recorded line times and its ITL pooled their gaps, " +
		"which its profile for these versions reproduces from the times as written (about half the decode time per token)",
	Source: srcTimes,
	Test:   "ingest/inferenceperf TestTrapLineTimes",
}, {
	Code:      TrapMessageTimes,
	Title:     "inference-perf timed every SSE message as a token: [DONE] and, in chat, the role-only first chunk",
	Tools:     "inference-perf 3631096 (2025-11-14) – v0.4.x (records with info.output_token_times and info.extra_info; apis/completion.py and chat.py append a time per message before parsing it)",
	Signature: "a completed streamed record's last time is [DONE], microseconds after the last token; a chat record's first time is the role-only chunk",
	Threshold: fmt.Sprintf("the last gap < %.2f × the median of the record's other gaps (judged with ≥ %d of them); the file is corrected when ≥ %.0f%% of its judged records show it", tinyGapShare, minGaps, 100*judgedShare),
	Action:    convention.ActionCorrect,
	Effect: "the [DONE] time (and in chat the first, the role chunk's) is marked as carrying no token (events.tokens = 0, times kept) and leaves TTFT, E2E, TPOT and ITL; " +
		"a usage message is not sent by these versions (no stream_options)",
	Fix:     convention.FixNotTokenTimes,
	Metrics: []string{"ttft_ms", "ttst_ms", "e2e_ms", "tpot_ms", "itl_ms"},
	Reproduction: "inference-perf's TPOT divided by the number of recorded message times and its ITL pooled their gaps, " +
		"which its profile for these versions reproduces from the times as written",
	Source: srcTimes,
	Test:   "ingest/inferenceperf TestTrapMessageTimes",
}, {
	Code:  TrapBOSPerChunk,
	Title: "inference-perf re-tokenized each streamed chunk with special tokens: one BOS counted per chunk",
	Tools: "inference-perf v0.5.x with a tokenizer that prepends BOS (Llama, Gemma, Mistral, OPT); fixed in v0.6.0",
	Signature: "in a record with per-chunk token times, the chunk counts sum to the server's completion_tokens plus one per chunk; " +
		"without server usage, every chunk counts two or more tokens",
	Threshold: fmt.Sprintf("Σ tokens − chunks = usage.completion_tokens (exact), else every chunk ≥ 2; the file is corrected when ≥ %.0f%% of its judged records show it", 100*judgedShare),
	Action:    convention.ActionCorrect,
	Effect: "each chunk carries its count less one (ITL splits each gap over the real tokens), and an output count that is the tool's per-chunk sum (no server usage) becomes the corrected sum; " +
		"the events keep the tool's counts",
	Fix:     convention.FixBOSPerChunk,
	Metrics: []string{"itl_ms", "osl_tokens", "tpot_ms", "ntpot_ms"},
	Reproduction: "inference-perf's ITL pooled the zero gaps of the BOS-inflated token times and its output_tokens is their sum: " +
		"its v0.5 profile reproduces them from the counts as written",
	Source: "https://github.com/kubernetes-sigs/inference-perf/issues/564, fixed by https://github.com/kubernetes-sigs/inference-perf/pull/566 (the count by #565)",
	Test:   "ingest/inferenceperf TestTrapBOSPerChunk",
}, {
	Code:  TrapBOSInOutputCount,
	Title: "inference-perf's own output count includes a BOS: the whole reply counted with special tokens",
	Tools: "inference-perf up to v0.6.0 with a tokenizer that prepends BOS (Llama 3, Gemma); fixed by PR #644 in v0.6.1 (≤ v0.4 and v0.6.0 whole-reply counts; v0.5 is inference_perf_bos_per_chunk)",
	Signature: "in a v0.6 per-request file, the client's output_tokens is the server's completion_tokens + 1 on most records that have both; " +
		"the records without server usage then carry the BOS too",
	Threshold: fmt.Sprintf("output_tokens − usage.completion_tokens = 1 on ≥ %.0f%% of the records with both", 100*judgedShare),
	Action:    convention.ActionCorrect,
	Effect: "tokentrace's N is the server's count where there is one; on the records without it output_tokens = the tool's count − 1 " +
		"(reported_output_tokens keeps the raw one, which --no-corrections uses)",
	Fix:     convention.FixCountFromImport,
	Metrics: []string{"osl_tokens", "tpot_ms", "ntpot_ms", "output_throughput"},
	Reproduction: "inference-perf's TPOT, NTPOT and throughput divide by its own count (BOS included), which its profile reads as written: " +
		"they are reproduced",
	Source: "https://github.com/kubernetes-sigs/inference-perf/pull/644 (the last of the issue #564 line)",
	Test:   "ingest/inferenceperf TestTrapBOSInOutputCount",
}, {
	Code:  TrapBuggyVersion,
	Title: "an inference-perf version whose per-request times or counts were wrong, seen in a report without its per-request file",
	Tools: "inference-perf ≤ v0.2.x (per-line times: TPOT and ITL about half), v0.3–v0.4 ([DONE] and role messages timed), v0.5.x (BOS per chunk: ITL deflated)",
	Signature: "the lifecycle report's layout names the version (its statistics and keys: convention.go summaryLayout); " +
		"for v0.5, token_count_mismatches on most successes (the per-chunk count disagreeing with the server's) confirms the BOS",
	Threshold: fmt.Sprintf("v0.5: token_count_mismatches ≥ %.0f%% of successes.count", 100*judgedShare),
	Action:    convention.ActionFlag,
	Effect:    "the tool's reported TPOT and ITL (and TTFT, E2E for ≤ v0.4) carry the version's error and cannot be corrected without the per-request file (report.request_lifecycle.per_request)",
	Metrics:   []string{"tpot_ms", "itl_ms", "ttft_ms"},
	Source:    srcTimes + "; https://github.com/kubernetes-sigs/inference-perf/issues/564",
	Test:      "ingest/inferenceperf TestTrapBuggyVersion",
}}

// trapJudge is the first pass's verdict on one kind of trap in the
// per-request file.
type trapJudge struct {
	judged, shown int
}

// applies says whether the file's records are corrected for the trap:
// most judged records show it, or (times) none could be judged.
func (j trapJudge) applies(unjudgedOK bool) bool {
	if j.judged == 0 {
		return unjudgedOK
	}
	return float64(j.shown) >= judgedShare*float64(j.judged)
}

// trapTally counts a trap's corrected requests in one run.
type trapTally struct {
	requests int64
	first    string
}

// median of xs (sorted copy; NaN-free input).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// gaps returns the differences of consecutive times.
func gaps(times []float64) []float64 {
	out := make([]float64, 0, max(len(times)-1, 0))
	for i := 1; i < len(times); i++ {
		out = append(out, times[i]-times[i-1])
	}
	return out
}

// judgeable is a record the time traps apply to: a completed streamed
// ≤ v0.4 record.
func (r *record) judgeable() bool {
	return r.gen == genTimes && !r.failed && len(r.tokenTimes) >= 2
}

// linePairs checks the per-line layout of a ≤ v0.2 record: the time count's
// parity (completions even, chat odd) and every data → blank gap tiny.
// ok is false when the times do not pair; detail describes them.
func (r *record) linePairs() (ok bool, detail string) {
	n := len(r.tokenTimes)
	chat := r.chat != nil && *r.chat
	if n < 4 || chat != (n%2 == 1) {
		return false, ""
	}
	g := gaps(r.tokenTimes)
	var pair, other []float64
	for i, x := range g {
		if i%2 == 0 { // times[i] even (data line) → times[i+1] (its blank line)
			pair = append(pair, x)
		} else {
			other = append(other, x)
		}
	}
	m := median(other)
	top := slices.Max(pair)
	if !(m > 0) || top >= tinyGapShare*m {
		return false, ""
	}
	return true, fmt.Sprintf("%d line times; data → blank line gaps ≤ %.3g ms, the other gaps' median %.3g ms", n, top*1e3, m*1e3)
}

// lastGapTiny checks the [DONE] of a v0.3–v0.4 record: its last gap is
// tiny against the others. judged is false with fewer than minGaps others.
func (r *record) lastGapTiny() (judged, tiny bool, detail string) {
	g := gaps(r.tokenTimes)
	if len(g) < minGaps+1 {
		return false, false, ""
	}
	last, m := g[len(g)-1], median(g[:len(g)-1])
	return true, m > 0 && last < tinyGapShare*m,
		fmt.Sprintf("%d message times; last gap %.3g ms, the other gaps' median %.3g ms", len(r.tokenTimes), last*1e3, m*1e3)
}

// bosShown checks a v0.5 record's per-chunk counts for one BOS each.
// judged is false when the record has no consistent per-chunk counts.
func (r *record) bosShown() (judged, shown bool, detail string) {
	if r.gen != genResponseInfo || r.failed || len(r.chunkTimes) == 0 || len(r.tokenTimes) == 0 {
		return false, false, ""
	}
	toks, ok := chunkTokens(r.chunkTimes, r.tokenTimes)
	if !ok {
		return false, false, ""
	}
	sum, chunks, minTok := 0, 0, int32(1<<30)
	for _, k := range toks {
		if k > 0 {
			sum += int(k)
			chunks++
			minTok = min(minTok, k)
		}
	}
	if chunks == 0 {
		return false, false, ""
	}
	if r.serverCompletion != nil {
		usage := int(*r.serverCompletion)
		return true, sum-chunks == usage,
			fmt.Sprintf("%d content chunks whose token times count %d, server completion_tokens %d", chunks, sum, usage)
	}
	return true, minTok >= 2, fmt.Sprintf("%d content chunks, each counting ≥ %d tokens (no server usage)", chunks, minTok)
}

// judgeTraps is the first pass's look at record r (index i).
func (raw *rawFile) judgeTraps(r *record) {
	switch {
	case r.judgeable() && raw.timing == timingLine:
		raw.lineJudge.judged++
		if ok, _ := r.linePairs(); ok {
			raw.lineJudge.shown++
		}
	case r.judgeable() && raw.timing == timingMessage:
		if judged, tiny, _ := r.lastGapTiny(); judged {
			raw.msgJudge.judged++
			if tiny {
				raw.msgJudge.shown++
			}
		}
	case raw.timing == timingToken5:
		if judged, shown, _ := r.bosShown(); judged {
			raw.bosJudge.judged++
			if shown {
				raw.bosJudge.shown++
			}
		}
	case r.gen == genMetrics && !r.failed && r.serverCompletion != nil && r.outputTokens != nil:
		raw.countJudge.judged++
		if math.Round(*r.outputTokens)-math.Round(*r.serverCompletion) == 1 {
			raw.countJudge.shown++
		}
	}
}

// bosInCount corrects a v0.6 record's own count for its BOS when the file
// shows it (inference_perf_bos_in_output_count): only where the server
// gave no count (tokentrace's N is the server's elsewhere); the raw count
// stays in reported_output_tokens. It reports whether it corrected.
func (raw *rawFile) bosInCount(r *record, req *formats.Request) bool {
	if r.gen != genMetrics || r.failed || !raw.countJudge.applies(false) || req.OutputTokensSource != formats.SourceToolReported ||
		req.OutputTokens == nil || *req.OutputTokens < 1 {
		return false
	}
	n := *req.OutputTokens - 1
	req.OutputTokens = &n
	return true
}

// markTraps marks record r's events for the traps the file shows (the
// second pass): it sets the tokens of the times that carried none to 0 and
// returns the codes that apply, tallied per run in p.
func (raw *rawFile) markTraps(r *record, key int64, events []formats.Event, p *runPlan) []string {
	var code, detail string
	switch {
	case r.judgeable() && raw.timing == timingLine && raw.lineJudge.applies(true) && len(events) == len(r.tokenTimes):
		ok, d := r.linePairs()
		if !ok {
			return nil
		}
		n := len(events)
		for i := 1; i < n; i += 2 {
			events[i].Tokens = zeroTokens() // the blank line after a data line
		}
		last := n - 1
		if last%2 == 1 {
			last-- // completions: [DONE] and its blank line end the stream
		}
		events[last].Tokens = zeroTokens() // [DONE]
		if r.chat != nil && *r.chat {
			events[0].Tokens = zeroTokens() // the role-only chunk
		}
		code, detail = TrapLineTimes, d
	case r.judgeable() && raw.timing == timingMessage && raw.msgJudge.applies(true) && len(events) == len(r.tokenTimes):
		chat := r.chat != nil && *r.chat
		if chat && len(events) < 3 {
			return nil
		}
		events[len(events)-1].Tokens = zeroTokens() // [DONE]
		if chat {
			events[0].Tokens = zeroTokens() // the role-only chunk
		}
		_, _, d := r.lastGapTiny()
		if d == "" {
			d = fmt.Sprintf("%d message times", len(events))
		}
		code, detail = TrapMessageTimes, d
	case raw.timing == timingToken5 && raw.bosJudge.applies(false):
		if _, shown, d := r.bosShown(); shown {
			code, detail = TrapBOSPerChunk, d
		}
	}
	if code == "" {
		return nil
	}
	p.tally(code, fmt.Sprintf("request %d: %s", key, detail))
	return []string{code}
}

// tally counts a request the check code corrected in run p; first is the
// example kept for the first one.
func (p *runPlan) tally(code, first string) {
	if p.traps == nil {
		p.traps = map[string]*trapTally{}
	}
	t := p.traps[code]
	if t == nil {
		t = &trapTally{first: first}
		p.traps[code] = t
	}
	t.requests++
}

func zeroTokens() *int32 { z := int32(0); return &z }

// runChecks are the data checks of run p: the traps its requests showed,
// and, for a run without requests, the version's known errors.
func (im *runImport) runChecks(p *runPlan, t timing) []formats.DataCheck {
	var out []formats.DataCheck
	if p.hasRaw && im.raw.countJudge.applies(false) {
		// the check holds for the run even when every record had the
		// server's count (nothing to correct then)
		tl := p.traps[TrapBOSInOutputCount]
		detail := fmt.Sprintf("the client's count is the server's + 1 on %d of %d records with both", im.raw.countJudge.shown, im.raw.countJudge.judged)
		n := int64(0)
		if tl != nil {
			n = tl.requests
			detail = tl.first + "; " + detail
		}
		out = append(out, formats.DataCheck{Code: TrapBOSInOutputCount, Field: "output_tokens", Requests: n, Corrected: n > 0, Detail: detail})
	}
	for _, code := range []string{TrapLineTimes, TrapMessageTimes, TrapBOSPerChunk} {
		tl := p.traps[code]
		if tl == nil {
			continue
		}
		j := map[string]trapJudge{TrapLineTimes: im.raw.lineJudge, TrapMessageTimes: im.raw.msgJudge, TrapBOSPerChunk: im.raw.bosJudge}[code]
		detail := tl.first
		if j.judged > 0 {
			detail += fmt.Sprintf("; %d of %d judged records of the file show it", j.shown, j.judged)
		} else {
			detail += "; no record could be judged: corrected on the version's layout"
		}
		field := map[string]string{TrapLineTimes: "output_token_times", TrapMessageTimes: "output_token_times", TrapBOSPerChunk: "output_token_times"}[code]
		out = append(out, formats.DataCheck{Code: code, Field: field, Requests: tl.requests, Corrected: true, Detail: detail})
	}
	if p.requests > 0 {
		return out
	}
	switch t {
	case timingLine, timingRead:
		out = append(out, formats.DataCheck{Code: TrapBuggyVersion, Field: "successes.latency",
			Detail: "per-line times (" + TrapLineTimes + "): the reported TPOT and ITL are about half the decode time per token, TTFT and E2E end on SSE lines; " + versionEvidence(t)})
	case timingMessage:
		out = append(out, formats.DataCheck{Code: TrapBuggyVersion, Field: "successes.latency",
			Detail: "per-message times (" + TrapMessageTimes + "): the reported TTFT (chat: the role chunk), TPOT and ITL count [DONE] and role messages as tokens; " + versionEvidence(t)})
	case timingToken5:
		s := p.life
		if s == nil {
			s = im.summary
		}
		if s == nil {
			return out
		}
		mis, ok1 := s.value("successes.token_count_mismatches", "value")
		n, ok2 := s.value("successes", "count")
		if ok1 && ok2 && n > 0 && mis >= judgedShare*n {
			out = append(out, formats.DataCheck{Code: TrapBuggyVersion, Field: "successes.latency.inter_token_latency",
				Detail: fmt.Sprintf("v0.5 with the per-chunk count disagreeing with the server's on %g of %g successes (token_count_mismatches): one BOS per chunk (%s), the reported ITL deflated", mis, n, TrapBOSPerChunk)})
		}
	}
	return out
}

// versionEvidence names the version's evidence for the flag.
func versionEvidence(t timing) string {
	switch t {
	case timingRead:
		return "v0.1.0 timed network reads"
	case timingLine:
		return "inference-perf ≤ v0.2.x"
	}
	return "inference-perf v0.3–v0.4"
}

// goodputRules are how inference-perf divides its goodputs
// (reportgen/base.py calculate_goodput_metrics, called with the successful
// requests only): goodput_percentage over the successes, request_goodput
// over their time span.
var goodputRules = []ingest.GoodputRule{
	{Metric: "successes.goodput_metrics.goodput_percentage", Stat: "value", Rule: "100 · good / the successful requests, failures left out"},
	{Metric: "successes.goodput_metrics.request_goodput", Stat: "value", Rule: "good / the successful requests' time span"},
}

// goodputCheck is the shared goodput_denominator explanation of a stage
// whose lifecycle report (nil: none) has goodput metrics and failures.
func goodputCheck(life *summaryFile) *formats.DataCheck {
	if life == nil {
		return nil
	}
	ok, _ := life.value("successes", "count")
	failed, _ := life.value("failures", "count")
	return ingest.GoodputDenominator("inference-perf", life.reported, goodputRules, int64(failed), int64(ok+failed))
}

// overshootCheck is the TrapConcurrencyOvershoot flag of run p, nil unless
// it is a concurrent stage of concurrency conc whose requests (the records
// of lites routed to p by assign) had more of them in flight at once. An
// end at the same instant as a start frees its slot first.
func overshootCheck(p *runPlan, lites []lite, assign []*runPlan, conc float64) *formats.DataCheck {
	if !(conc >= 1) || len(lites) != len(assign) {
		return nil
	}
	var starts, ends []float64
	for i, l := range lites {
		if assign[i] == p && l.end >= l.start {
			starts, ends = append(starts, l.start), append(ends, l.end)
		}
	}
	if len(starts) == 0 {
		return nil
	}
	slices.Sort(starts)
	slices.Sort(ends)
	in, peak, over, at := 0, 0, 0, 0.0
	area, last := 0.0, starts[0]
	j := 0
	for _, st := range starts {
		for j < len(ends) && ends[j] <= st {
			area += float64(in) * (ends[j] - last)
			last = ends[j]
			in--
			j++
		}
		area += float64(in) * (st - last)
		last = st
		in++
		if in > peak {
			peak, at = in, st
		}
		if float64(in) > conc {
			over++
		}
	}
	for ; j < len(ends); j++ {
		area += float64(in) * (ends[j] - last)
		last = ends[j]
		in--
	}
	if float64(peak) <= conc {
		return nil
	}
	mean := math.NaN()
	if span := last - starts[0]; span > 0 {
		mean = area / span
	}
	return &formats.DataCheck{Code: TrapConcurrencyOvershoot, Field: "concurrency", Requests: int64(over),
		Detail: fmt.Sprintf("observed concurrency: up to %d requests in flight (first %.3f s after the stage's first start), time-weighted mean %.3g, for a configured concurrency of %g; %d request(s) started above it", peak, at-starts[0], mean, conc, over)}
}
