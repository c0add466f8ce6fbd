package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
)

// The data checks the analysis makes itself (the catalogue's entries no
// importer can see: they need a convention's metrics, or a tokenizer).
const (
	// TrapITLBelowTPOT: the pooled ITL mean is below the TPOT mean.
	TrapITLBelowTPOT = "itl_below_tpot"
	// TrapRetokenizedBelowMessages: a re-tokenized output count is below
	// the number of token-carrying messages.
	TrapRetokenizedBelowMessages = "retokenized_below_messages"
	// TrapImplausibleValues: negative latencies, or latencies over a day.
	TrapImplausibleValues = "implausible_values"
	// TrapCoordinatedOmission: an open-loop run's sends fell behind their
	// schedule enough to hide its tail.
	TrapCoordinatedOmission = "coordinated_omission"
	// TrapFromActualSend: an open-loop run without intended starts: its
	// latencies are measured from the actual send, and a load generator
	// that fell behind cannot be seen.
	TrapFromActualSend = "coordinated_omission_unmeasured"
	// TrapCachedExceedsInput: a request's cached prompt tokens exceed its
	// prompt tokens.
	TrapCachedExceedsInput = "cached_exceeds_input"
	// TrapTTSTExceedsTTFT: on most requests the second token came far
	// later than the first: the first was signalled before the prefill
	// it stands for.
	TrapTTSTExceedsTTFT = "ttst_exceeds_ttft"
)

// ttstFactor, ttstShare, ttstMinJudged: a run is flagged when the TTST of
// at least ttstShare of its judged requests (a positive TTFT and a TTST;
// at least ttstMinJudged of them) exceeds ttstFactor × their TTFT. One
// decode step after a prefill that included the whole prompt is no longer
// than the prefill itself on a real server; five times the TTFT on most
// requests is a first token that came before its prefill.
const (
	ttstFactor    = 5
	ttstShare     = 0.5
	ttstMinJudged = 4
)

// coMargin: a run is flagged when its dispatch delay P99 exceeds this
// share of its E2E P50 — late enough that the users the schedule stands
// for waited a tenth of a typical request more than the tool measured.
const coMargin = 0.10

// itlBelowTPOTMargin: the pooled ITL mean must be below this share of the
// TPOT mean for the explanation to be given.
const itlBelowTPOTMargin = 0.95

// Traps are the analysis's entries of the data-check catalogue
// (analyze/TRAPS.md); the tools' own are with their importers.
var Traps = []convention.Trap{{
	Code:      TrapITLBelowTPOT,
	Title:     "the pooled ITL mean is below the TPOT mean (a weighting, not an error)",
	Tools:     "every tool that reports both (vLLM, SGLang, GenAI-Perf, AIPerf, …)",
	Signature: "the pooled ITL mean is below the per-request TPOT mean",
	Threshold: fmt.Sprintf("mean ITL < %.2f × mean TPOT", itlBelowTPOTMargin),
	Action:    convention.ActionExplain,
	Effect:    "not a bug, a weighting: pooled ITL weights each request by its number of gaps, so long replies (whose tokens came faster) dominate it, while TPOT weights every request once; one line says so",
	Metrics:   []string{"itl_ms", "tpot_ms"},
	Source:    "https://github.com/vllm-project/vllm/issues/6531, https://github.com/vllm-project/vllm/pull/17802",
	Test:      "analyze TestTrapITLBelowTPOT",
}, {
	Code:  TrapRetokenizedBelowMessages,
	Title: "a re-tokenized output count is below the number of token messages",
	Tools: "tokentrace's re-tokenized output count (--tokenizer, or a tool that re-tokenizes: flexible-inference-bench before PR #66)",
	Signature: "a completed request's re-tokenized output count is below its number of token-carrying messages, " +
		"impossible when every message carries at least one token (the tokenizer is not the model's, or the text was altered)",
	Action:  convention.ActionCorrect,
	Effect:  "N is the number of token messages (the lower bound) instead of the re-tokenized count, under conventions that correct; a warning names both numbers",
	Metrics: []string{"osl_tokens", "tpot_ms"},
	Source:  "https://github.com/CentML/flexible-inference-bench/pull/66",
	Test:    "analyze TestTrapRetokenizedBelowMessages",
}, {
	Code:      TrapImplausibleValues,
	Title:     "negative latencies, or latencies over a day",
	Tools:     "any: clock trouble, a broken file, a start time from another clock",
	Signature: "a latency (TTFT, TTST, TPOT, ITL, E2E) below 0 or above a day",
	Action:    convention.ActionFlag,
	Effect:    "the values stay in the statistics (they are the data's); the warning counts them per metric",
	Metrics:   []string{"ttft_ms", "ttst_ms", "tpot_ms", "itl_ms", "e2e_ms"},
	Source:    "tokentrace: a latency cannot be negative, and no request takes a day",
	Test:      "analyze TestImplausible",
}, {
	Code:  TrapCoordinatedOmission,
	Title: "sends fell behind the schedule: latencies measured from the actual send hide the wait (coordinated omission, Gil Tene's term)",
	Tools: "any open-loop load generator that records intended starts (AIPerf credit_issued_ns, guidellm targeted_start, vLLM bench queue_times, inference-perf scheduled_time)",
	Signature: "a request-rate run (finite rate) whose completed requests have intended starts, with the dispatch delay P99 (actual − intended start) " +
		"above a tenth of the E2E P50; closed-loop runs are never flagged: their next send waits for a free slot by design, so their schedule is the previous request's end and their delay is no lateness",
	Threshold: fmt.Sprintf("P99(dispatch_delay) > %.0f%% × P50(e2e)", 100*coMargin),
	Action:    convention.ActionFlag,
	Effect:    "the latencies stay as measured (from the send); the warning names how far the tail moves when measured from the schedule (sched_e2e, sched_ttft are in the report, SLOs and gates)",
	Metrics:   []string{"sched_e2e_ms", "sched_ttft_ms", "dispatch_delay_ms", "e2e_ms"},
	Source:    "https://github.com/vllm-project/vllm/issues/54101, https://github.com/vllm-project/guidellm/issues/1048",
	Test:      "analyze TestCoordinatedOmission",
}, {
	Code:      TrapCachedExceedsInput,
	Title:     "more cached prompt tokens than prompt tokens",
	Tools:     "any server usage with prompt_tokens_details.cached_tokens (vLLM, SGLang, OpenAI), AIPerf usage_prompt_cache_read_tokens",
	Signature: "a completed request's cached_input_tokens is above its input_tokens: impossible, the cached tokens are part of the prompt (a count from another field, or a server bug)",
	Action:    convention.ActionFlag,
	Effect:    "the request is left out of the cache block (hit fraction, TTFT by cache); its latencies are kept",
	Metrics:   []string{"cache.hit_fraction"},
	Source:    "OpenAI usage object: prompt_tokens_details.cached_tokens is a part of prompt_tokens",
	Test:      "analyze TestCacheReport",
}, {
	Code:      TrapFromActualSend,
	Title:     "a request-rate run without intended starts: its latencies are measured from the actual send",
	Tools:     "files that record no schedule (LLMPerf, GenAI-Perf, SGLang bench, vLLM bench before v0.30, inference-perf up to 7de5ef2, guidellm before v0.4 rate runs)",
	Signature: "a request-rate run (finite rate) with start times and no intended start on any request",
	Action:    convention.ActionExplain,
	Effect: "one line says so: if the load generator fell behind its schedule (a stall, a saturated client), the requests it sent late were timed from the late send and the tail is understated; " +
		"a seeded Poisson or gamma arrival process cannot be rebuilt from the file, so the schedule is not reconstructed",
	Metrics: []string{"e2e_ms", "ttft_ms"},
	Source:  "https://github.com/vllm-project/vllm/issues/54101",
	Test:    "analyze TestCoordinatedOmission",
}, {
	Code:  TrapTTSTExceedsTTFT,
	Title: "the second token came long after the first on most requests: the first was signalled before its prefill",
	Tools: "any streaming client against a server or simulator that sends its first token before the prefill it stands for: " +
		"the ai-dynamo/dynamo mocker before PR #5681 (2026-01: it signalled each token, then slept its prefill and decode time, so AIPerf's TTFT was near 0 and its TTST held the prefill); " +
		"judged on the metrics under the report's convention, after the importers' corrections (vLLM's role-only chunk, vllm_role_chunk_ttft, is corrected before this check sees it)",
	Signature: "a streaming run where, on most of its completed requests with a positive TTFT and a TTST, the TTST is several times the TTFT",
	Threshold: fmt.Sprintf("TTST > %d × TTFT on ≥ %.0f%% of the requests with both (at least %d of them)", ttstFactor, 100*ttstShare, ttstMinJudged),
	Action:    convention.ActionFlag,
	Effect: "the values stay as measured (the file cannot say when the prefill ended); the warning counts the requests and gives the first one's TTFT and TTST: " +
		"for such a server TTFT + TTST, the time to the second token, is the better first-token time, and TTFT, TTST and goodput under a TTFT SLO are too good",
	Metrics: []string{"ttft_ms", "ttst_ms"},
	Source:  "https://github.com/ai-dynamo/dynamo/pull/5681",
	Test:    "analyze TestTTSTExceedsTTFT",
}}

// retokenizedFloor applies the lower bound of the token messages to a
// re-tokenized count: it notes on m a count below the responses, and under
// a convention that corrects raises it to them.
func retokenizedFloor(c convention.Convention, m *RequestMetrics) {
	if !strings.HasPrefix(m.OutputSource, formats.SourceTokenizerPfx) || m.Responses == 0 || m.OutputTokens >= float64(m.Responses) {
		return
	}
	m.RetokenizedBelow, m.RetokenizedN = true, m.OutputTokens
	if c.Corrections {
		m.OutputTokens, m.OutputSource = float64(m.Responses), string(convention.CountResponses)
	}
}

// dataChecks are a run's data-check warnings under c: each check the
// importer recorded (Run.Checks), with how many requests a correction
// changed under c, and the analysis's own (Traps).
func (a *Analyzer) dataChecks(c convention.Convention, run *formats.Run, p *convAcc, rr *RunReport, s *Samples, tools *convention.Set) []Warning {
	var w []Warning
	for _, ch := range run.Checks {
		t, _ := tools.Trap(ch.Code)
		x := Warning{Code: ch.Code, DataCheck: true, Count: ch.Requests, Source: t.Source, Field: ch.Field, Metrics: t.Metrics,
			Routine: t.Routine || t.Action == convention.ActionExplain}
		if len(t.Metrics) > 0 {
			x.Metric = t.Metrics[0]
		}
		msg := t.Title
		if msg == "" {
			msg = "a data check this tokentrace does not describe (written by a newer one?)"
		}
		if ch.Field != "" {
			msg += " (field " + ch.Field + ")"
		}
		switch n := p.applied[ch.Code]; {
		case ch.Corrected && c.Corrections && n > 0:
			msg += fmt.Sprintf("; corrected in %d request(s)", n)
		case ch.Corrected && c.Corrections:
			msg += "; corrected at import"
		case ch.Corrected:
			msg += "; not corrected under this convention: the data as the tool wrote it"
		case t.Action == convention.ActionNull:
			msg += "; set to null (unknown), not 0"
		case t.Action == convention.ActionFlag:
			msg += "; flagged, not corrected: the data cannot say what the value was"
		}
		if ch.Detail != "" {
			msg += " (" + ch.Detail + ")"
		}
		x.Message = msg
		w = append(w, x)
	}
	if s.retokBelow > 0 {
		what := fmt.Sprintf("%d completed request(s) re-tokenize to fewer tokens than their token messages (first: %g tokens for %d messages)", s.retokBelow, s.retokFirstN, s.retokFirstMsgs)
		if c.Corrections {
			what += "; N is the message count there, a lower bound"
		} else {
			what += "; the re-tokenized count is used as it is"
		}
		w = append(w, Warning{Code: TrapRetokenizedBelowMessages, DataCheck: true, Metric: OSL.Key, Count: int64(s.retokBelow),
			Source: trapSource(TrapRetokenizedBelowMessages), Message: what + ": is the tokenizer the model's?"})
	}
	if bad, n := implausible(s); bad != "" {
		w = append(w, Warning{Code: TrapImplausibleValues, DataCheck: true, Count: int64(n), Source: trapSource(TrapImplausibleValues), Message: bad})
	}
	w = append(w, coordinatedOmission(run, rr, s, p.reqs, c)...)
	if s.ttstJudged >= ttstMinJudged && float64(s.ttstHigh) >= ttstShare*float64(s.ttstJudged) {
		w = append(w, Warning{Code: TrapTTSTExceedsTTFT, DataCheck: true, Metric: TTFT.Key, Metrics: []string{TTFT.Key, TTST.Key}, Count: int64(s.ttstHigh),
			Source: trapSource(TrapTTSTExceedsTTFT), Message: fmt.Sprintf(
				"%d of %d requests have a TTST over %d × their TTFT (first: request %d, TTFT %s, TTST %s): the first token came before the prefill it stands for (a simulator or server that signals first, then computes); TTFT + TTST is the better first-token time, and TTFT is understated",
				s.ttstHigh, s.ttstJudged, ttstFactor, s.ttstFirst, FormatValue(s.ttstFirstTTFT, "ms"), FormatValue(s.ttstFst, "ms"))})
	}
	itl, tpot := rr.Metrics.Of(ITL), rr.Metrics.Of(TPOT)
	if c.ITL != convention.ITLPerRequestMean && itl.N > 0 && tpot.N > 0 && !math.IsNaN(itl.Mean) && itl.Mean < itlBelowTPOTMargin*tpot.Mean {
		w = append(w, Warning{Code: TrapITLBelowTPOT, Metric: ITL.Key, Source: trapSource(TrapITLBelowTPOT), Message: fmt.Sprintf(
			"mean ITL %s is below mean TPOT %s: pooled ITL counts every gap, so long replies, whose tokens came faster, weigh more; TPOT counts each request once. Not an error",
			FormatValue(itl.Mean, "ms"), FormatValue(tpot.Mean, "ms"))})
	}
	return w
}

// trapSource is the Source of the analysis's trap code.
func trapSource(code string) string {
	i := slices.IndexFunc(Traps, func(t convention.Trap) bool { return t.Code == code })
	if i < 0 {
		return ""
	}
	return Traps[i].Source
}

// CanonicalFixesSQL is the canonical_fixes table of analyze/sql/canonical.sql:
// (code, fix) for every trap of traps with an analysis-time fix, so that
// the SQL applies the same corrections as the Go analyzer to the requests
// whose corrections column names them. canonical.sql embeds it between
// FixesBegin and FixesEnd (TestCanonicalSQLMetrics keeps it current).
func CanonicalFixesSQL(traps []convention.Trap) string {
	var rows []string
	for _, t := range traps {
		if t.Fix != convention.FixNone {
			rows = append(rows, fmt.Sprintf("    ('%s', '%s')", t.Code, t.Fix))
		}
	}
	if len(rows) == 0 {
		return "CREATE OR REPLACE TABLE canonical_fixes (code VARCHAR, fix VARCHAR);"
	}
	return "CREATE OR REPLACE TABLE canonical_fixes AS\nSELECT * FROM (VALUES\n" + strings.Join(rows, ",\n") + "\n) f(code, fix);"
}

// Markers around canonical.sql's generated canonical_fixes.
const (
	FixesBegin = "-- canonical-fixes:begin (generated from the data-check catalogue by go test ./analyze -run TestCanonicalSQLMetrics -update)"
	FixesEnd   = "-- canonical-fixes:end"
)

// OpenLoop reports whether run sent on a schedule of its own: a request
// rate that is finite (an infinite rate sends everything at once, and a
// concurrency sends into free slots: closed loops).
func OpenLoop(run *formats.Run) bool {
	return run.LoadMode == "request_rate" && run.RequestRateRPS != nil && *run.RequestRateRPS > 0 && !math.IsInf(*run.RequestRateRPS, 1)
}

// coordinatedOmission is the schedule checks of an open-loop run: with
// intended starts, the TrapCoordinatedOmission flag when sends fell behind
// by more than coMargin of the E2E P50; without, TrapFromActualSend's
// explanation. Closed-loop runs get neither.
func coordinatedOmission(run *formats.Run, rr *RunReport, s *Samples, reqs []RequestMetrics, c convention.Convention) []Warning {
	if !OpenLoop(run) || s.Counted == 0 {
		return nil
	}
	if !s.AnyScheduled {
		if !s.anyStart {
			return nil
		}
		return []Warning{{Code: TrapFromActualSend, Metric: E2E.Key, Source: trapSource(TrapFromActualSend), Message: fmt.Sprintf(
			"a %g req/s run without intended starts: latencies are from the actual send, so a load generator that fell behind its schedule would hide its tail here (coordinated omission); the file cannot say whether it did",
			*run.RequestRateRPS)}}
	}
	// E2E from the send whatever the convention measures it from (under
	// tokentrace-schedule the report's E2E is the schedule-relative one)
	var fromSend []float64
	for i := range reqs {
		m := &reqs[i]
		if !m.Counted || math.IsNaN(m.E2EMs) {
			continue
		}
		e := m.E2EMs
		if m.FromSchedule {
			e -= m.DispatchDelayMs
		}
		fromSend = append(fromSend, e)
	}
	sorted := stats.SortedCopy(fromSend)
	meth := stats.Method(c.Percentile)
	d, sched := rr.Metrics.Of(DispatchDelay), rr.Metrics.Of(SchedE2E)
	dp99, ep50 := d.Value(0.99), stats.Percentile(sorted, 0.5, meth)
	if d.N == 0 || math.IsNaN(dp99) || math.IsNaN(ep50) || !(dp99 > coMargin*ep50) {
		return nil
	}
	late := 0
	for _, v := range s.Values[DispatchDelay] {
		if v > coMargin*ep50 {
			late++
		}
	}
	ep99, sp99 := stats.Percentile(sorted, 0.99, meth), sched.Value(0.99)
	return []Warning{{Code: TrapCoordinatedOmission, DataCheck: true, Metric: SchedE2E.Key, Metrics: []string{SchedE2E.Key, DispatchDelay.Key}, Count: int64(late),
		Source: trapSource(TrapCoordinatedOmission), Message: fmt.Sprintf(
			"E2E P99 %s from the send, %s from the schedule (sched_e2e): sent over %s late (a tenth of E2E P50 %s) on the %g req/s schedule; dispatch delay P99 %s",
			FormatValue(ep99, "ms"), FormatValue(sp99, "ms"), FormatValue(coMargin*ep50, "ms"), FormatValue(ep50, "ms"), *run.RequestRateRPS, FormatValue(dp99, "ms"))}}
}
