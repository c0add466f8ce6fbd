package vllmbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// The known bugs of vLLM bench's per-request data (the data-check
// catalogue, analyze/TRAPS.md), detected in the arrays of --save-detailed.
const (
	// TrapTTFTInITLs: the OpenAI completions client appended the TTFT to
	// the ITL list (a missing else).
	TrapTTFTInITLs = "vllm_ttft_in_itls"
	// TrapRoleChunkTTFT: the chat client timed TTFT at the role-only first
	// chunk, sent before prefill finished (chunked prefill).
	TrapRoleChunkTTFT = "vllm_role_chunk_ttft"
	// TrapGoodputSingleToken: vLLM's goodput gave a request of at most one
	// output token a TPOT of 0, which meets any TPOT SLO.
	TrapGoodputSingleToken = "vllm_goodput_single_token"
	// TrapRoleChunkUnjudged: the role-chunk check could not judge some
	// completed requests of a chat run (too few gaps, or no itls): their
	// TTFT is neither corrected nor known to be right.
	TrapRoleChunkUnjudged = "vllm_role_chunk_unjudged"
	// TrapRustBenchDefaults: the result is the Rust vllm-bench's, whose
	// defaults differ from vllm bench serve's.
	TrapRustBenchDefaults = "vllm_rust_bench_defaults"
)

// ttftRepeatTolerance is how close itls[i][0] must be to ttfts[i] to be
// the TTFT appended again: the two are differences of two perf_counter
// readings a few microseconds apart.
const ttftRepeatTolerance = 0.01 // relative, with an absolute floor of 1 ms

// roleChunkFactor: a first gap more than this many times the median of a
// request's other gaps is prefill-sized; roleChunkMinGaps other gaps are
// needed to judge, and roleChunkShare of the judged requests must show it
// for the run's TTFT messages to be taken as role-only chunks.
const (
	roleChunkFactor  = 5
	roleChunkMinGaps = 4
	roleChunkShare   = 0.5
)

// traps is what vLLM's traps are, for the catalogue.
var traps = []convention.Trap{{
	Code:  TrapTTFTInITLs,
	Title: "vLLM's completions client appended each TTFT to its ITL list",
	Tools: "vLLM benchmark_serving.py, OpenAI completions backend, before PR #7372 (August 2024)",
	Signature: "a completed request's itls has as many gaps as output_lens (one too many: the first token's gap is counted) " +
		"and its first gap equals its TTFT",
	Threshold: "|itls[i][0] − ttfts[i]| ≤ max(1% of ttfts[i], 1 ms)",
	Action:    convention.ActionCorrect,
	Effect:    "the first gap is dropped (the second message moves back by it, and every later one): TTFT is not counted twice in E2E, TPOT and ITL; the events keep vLLM's arrays as written",
	Fix:       convention.FixPhantomSecondGap,
	Metrics:   []string{"e2e_ms", "tpot_ms", "itl_ms", "ttst_ms"},
	Reproduction: "vLLM's E2EL and TPOT come from its measured latency, which the repeated TTFT does not enter; " +
		"rebuilt from the ITL list as written, the last token comes one TTFT late (vLLM's ITL, computed from the list, is reproduced)",
	Source: "https://github.com/vllm-project/vllm/issues/7242, fixed by https://github.com/vllm-project/vllm/pull/7372",
	Test:   "ingest/vllmbench TestTrapTTFTInITLs",
}, {
	Code:  TrapRoleChunkTTFT,
	Title: "vLLM's chat client timed TTFT at the role-only first chunk, before the first token",
	Tools: "vLLM bench serve, chat backends (TTFT at the first message with choices, the role-only chunk), with chunked prefill",
	Signature: "in a chat run, the first ITL gap of most requests is prefill-sized against their other gaps: " +
		"the TTFT message was the role-only chunk, the first token came one gap later",
	Threshold: fmt.Sprintf("itls[i][0] > %d × median(itls[i][1:]) for at least %.0f%% of the requests with ≥ %d further gaps", roleChunkFactor, 100*roleChunkShare, roleChunkMinGaps),
	Action:    convention.ActionCorrect,
	Effect:    "the first message is taken as carrying no token: TTFT = ttft + itls[0], the gap leaves ITL; without itls (no --save-detailed) it cannot be seen, and requests with too few gaps are not judged: vllm_role_chunk_unjudged says how many",
	Fix:       convention.FixFirstNotToken,
	Metrics:   []string{"ttft_ms", "ttst_ms", "itl_ms", "tpot_ms"},
	Source:    "https://github.com/vllm-project/vllm/issues/15106",
	Test:      "ingest/vllmbench TestTrapRoleChunkTTFT",
}, {
	Code:  TrapRoleChunkUnjudged,
	Title: "vLLM's role-only-chunk TTFT could not be judged on some requests of a chat run",
	Tools: "vLLM bench serve, chat backends, the same runs vllm_role_chunk_ttft judges: replies too short to show a prefill-sized first gap, or a result without itls (no --save-detailed)",
	Signature: fmt.Sprintf("in a chat run, completed requests with a TTFT and fewer than %d further gaps after the first "+
		"(a median of fewer than %d gaps says nothing of one gap), or a result with per-request arrays but no itls", roleChunkMinGaps, roleChunkMinGaps),
	Action: convention.ActionExplain,
	Effect: "the check says what it could not do instead of nothing: the count of requests it did not judge, why, and the first of them; " +
		"their TTFT stays vLLM's (not corrected), which is the role chunk's if the run's other requests show it (vllm_role_chunk_ttft then names the judged ones), " +
		"and unknown when no request could be judged; no data warning: nothing in the data is wrong, the check lacked the data",
	Metrics: []string{"ttft_ms", "ttst_ms", "itl_ms"},
	Source:  "https://github.com/vllm-project/vllm/issues/15106 (the trap); tokentrace: a check that cannot judge says so",
	Test:    "ingest/vllmbench TestTrapRoleChunkUnjudged",
}, {
	Code:  TrapRustBenchDefaults,
	Title: "the result is the Rust vllm-bench's, whose defaults are not vllm bench serve's",
	Tools: "vllm-bench (Rust, vllm-project/vllm-bench, 2026-06 on), standalone or as vllm bench serve, which delegated to it from PR #48930 (2026-07-17) until PR #50081 (2026-07-28) made it opt-in (VLLM_USE_RUST_BENCH=1)",
	Signature: "a result object with a steady_state key (src/output/json.rs writes it always, null unless --max-concurrency set its window) or a failed_requests list (written when a request failed); " +
		"vllm bench serve's Python writer has neither",
	Action: convention.ActionExplain,
	Effect: "not a bug, another implementation: the run's notes name it, and one line says what differs by default: --percentile-metrics is ttft,tpot,itl,e2el (Python: ttft,tpot,itl), so E2EL percentiles are there unasked; " +
		"an unset --max-concurrency is unlimited in both (vllm-bench prints num_prompts as the maximum and writes null); " +
		"steady_state (its own window statistics) is kept in config_json and failed_requests (its failure log; the errors array, with --save-detailed, has the same failures) is not imported; the metrics are read as vLLM's",
	Metrics: []string{"e2e_ms"},
	Source: "https://github.com/vllm-project/vllm/pull/48930, https://github.com/vllm-project/vllm/pull/50081 (opt-in because the two still differ in arguments and defaults), " +
		"https://github.com/vllm-project/vllm-bench/blob/f3131823f167aa1e6f31a48be1ae15a18667a534/src/output/json.rs, " +
		"https://github.com/vllm-project/vllm-bench/blob/f3131823f167aa1e6f31a48be1ae15a18667a534/src/config.rs (default_percentile_metrics)",
	Test: "ingest/vllmbench TestTrapRustBenchDefaults",
}, {
	Code:  TrapGoodputSingleToken,
	Title: "vLLM's goodput took TPOT 0 for a request of at most one output token, so it met any TPOT SLO",
	Tools: "vLLM bench serve and benchmark_serving.py with --goodput (serve.py calculate_metrics: all_tpots gets 0 when output_len ≤ 1), and vllm-bench (Rust, src/metrics/calculator.rs, which mirrors serve.py)",
	Signature: "a result with request_goodput (a --goodput run) whose successful requests include one with output_lens ≤ 1: " +
		"it entered vLLM's goodput with TPOT 0 and its TPOT statistics not at all",
	Action: convention.ActionExplain,
	Effect: "not a bug, a rule both tools state differently: TPOT = (E2E − TTFT)/(N − 1) is undefined for N ≤ 1, so tokentrace's TPOT constraint does not apply to such a request (met vacuously: its goodput counts it good when its other constraints hold, and the report says how many were, \"TPOT vacuously met by k with N ≤ 1\"); " +
		"vLLM's 0 gives the same verdict, so goodput agrees on these requests, and both leave them out of the TPOT statistics; one line says how many there were",
	Metrics: []string{"goodput", "tpot_ms"},
	Source: "https://github.com/vllm-project/vllm/blob/def9ce85ba1079af970a58ed3d42dd861ae35d58/vllm/benchmarks/serve.py (calculate_metrics: \"if output_len <= 1, we regard tpot as 0 for goodput\"), " +
		"https://github.com/vllm-project/vllm-bench/blob/186a2924edca0d5b10e42504a7cbb88dbcfc1f48/src/metrics/calculator.rs",
	Test: "ingest/vllmbench TestTrapGoodputSingleToken",
}}

// goodputRules are how vLLM divides its goodput (serve.py calculate_metrics:
// the SLO check runs over the successful requests' lists only).
var goodputRules = []ingest.GoodputRule{{Metric: "request_goodput", Stat: "value", Rule: "good / duration (only successful requests are compared with the SLO)"}}

// singleTokenCheck is the TrapGoodputSingleToken explanation of a result
// that reports a goodput (goodput true), nil when no successful request
// has output_lens ≤ 1 or the arrays say nothing of it.
func (d *details) singleTokenCheck(goodput bool) *formats.DataCheck {
	if !goodput || d.outLens == nil {
		return nil
	}
	n, first := 0, -1
	for i := 0; i < d.n; i++ {
		if d.errs != nil && d.errs[i] != "" || d.ttfts != nil && !(d.ttfts[i] > 0) {
			continue
		}
		if out := d.outLens[i]; out >= 0 && out <= 1 && !(out == 0 && d.ttfts == nil) {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return &formats.DataCheck{Code: TrapGoodputSingleToken, Field: "output_lens", Requests: int64(n),
		Detail: fmt.Sprintf("request %d: output_lens %g, TPOT 0 in vLLM's goodput, undefined in tokentrace's (the TPOT constraint does not apply)", first, d.outLens[first])}
}

// trapFinds are the traps found in a result's arrays: the requests each
// applies to (by index) and the checks for the run.
type trapFinds struct {
	byRequest map[int][]string
	checks    []formats.DataCheck
}

// itlSum is what the traps read of one request's itls (offending values
// NaN): the number of gaps, the first and the median of the others (NaN
// for fewer than roleChunkMinGaps+1 gaps, which cannot be judged, and when
// the first cannot be over roleChunkFactor times it: mayExceedMedian).
type itlSum struct {
	n       int32
	g0, med float64
}

// summarize is the itlSum of one list.
func summarize(gaps []float64, scratch *[]float64) itlSum {
	s := itlSum{n: int32(len(gaps)), g0: math.NaN(), med: math.NaN()}
	if len(gaps) > 0 {
		s.g0 = gaps[0]
	}
	if len(gaps) >= roleChunkMinGaps+1 && mayExceedMedian(s.g0, gaps[1:]) {
		rest := append((*scratch)[:0], gaps[1:]...)
		s.med = median(rest)
		*scratch = rest
	}
	return s
}

// mayExceedMedian reports whether g0 may be more than roleChunkFactor times
// the median of rest, the only use of the median: false when g0 is not
// positive, or when fewer than half of rest have roleChunkFactor times
// themselves below g0 (then the lower middle value has not, nor has the
// median, which is at least it: the exact test's own product, rounded
// monotonically, so no margin is needed; a quotient g0/roleChunkFactor
// rounds to a whole multiple of the smallest double among subnormal gaps
// and refused some the exact test takes). The median is then left NaN and
// not computed: a quickselect per request was 0.5 s of a 100k-request
// result. A NaN among rest leaves the decision to the exact test.
func mayExceedMedian(g0 float64, rest []float64) bool {
	if !(g0 > 0) {
		return false
	}
	below := 0
	for _, x := range rest {
		if x != x {
			return true
		}
		if roleChunkFactor*x < g0 {
			below++
		}
	}
	return below >= len(rest)/2
}

// findTraps looks for vLLM's traps in the arrays of a run whose endpoint
// is endpoint ("" when unknown), from the itls summaries d.sums. Only
// completed requests with a TTFT are judged.
func (d *details) findTraps(endpoint string) trapFinds {
	out := trapFinds{byRequest: map[int][]string{}}
	if d.sums == nil || d.ttfts == nil {
		if ch := d.noGapsCheck(endpoint); ch != nil {
			out.checks = append(out.checks, *ch)
		}
		return out
	}
	ok := func(i int) bool {
		return (d.errs == nil || d.errs[i] == "") && d.ttfts[i] > 0
	}
	// TTFT appended to the ITL list.
	var n int
	first := ""
	for i := 0; i < d.n; i++ {
		if !ok(i) || d.outLens == nil || d.sums[i].n == 0 {
			continue
		}
		ttft, g0 := d.ttfts[i], d.sums[i].g0
		if float64(d.sums[i].n) == d.outLens[i] && math.Abs(g0-ttft) <= max(ttftRepeatTolerance*ttft, 1e-3) {
			out.byRequest[i] = append(out.byRequest[i], TrapTTFTInITLs)
			if n == 0 {
				first = fmt.Sprintf("request %d: ttft %.4g s, itls[0] %.4g s, %d gaps for %g output tokens", i, ttft, g0, d.sums[i].n, d.outLens[i])
			}
			n++
		}
	}
	if n > 0 {
		out.checks = append(out.checks, formats.DataCheck{Code: TrapTTFTInITLs, Field: "itls", Requests: int64(n), Corrected: true, Detail: first})
	}
	// The role-only chunk timed as TTFT (chat runs; not where the TTFT was
	// already found repeated).
	if endpoint != "" && !slices.Contains([]string{"v1/chat/completions"}, endpoint) {
		return out
	}
	var judged []int
	var hits []int
	unjudged, firstUnjudged := 0, -1
	first = ""
	for i := 0; i < d.n; i++ {
		if !ok(i) || len(out.byRequest[i]) > 0 {
			continue
		}
		if d.sums[i].n < roleChunkMinGaps+1 {
			if firstUnjudged < 0 {
				firstUnjudged = i
			}
			unjudged++
			continue
		}
		judged = append(judged, i)
		med := d.sums[i].med
		if g0 := d.sums[i].g0; med > 0 && g0 > roleChunkFactor*med {
			hits = append(hits, i)
			if first == "" {
				first = fmt.Sprintf("request %d: ttft %.4g s, first gap %.4g s, median of its other gaps %.4g s", i, d.ttfts[i], g0, med)
			}
		}
	}
	found := len(judged) > 0 && float64(len(hits)) >= roleChunkShare*float64(len(judged))
	if found {
		for _, i := range hits {
			out.byRequest[i] = append(out.byRequest[i], TrapRoleChunkTTFT)
		}
		detail := fmt.Sprintf("%s; %d of %d judged requests", first, len(hits), len(judged))
		out.checks = append(out.checks, formats.DataCheck{Code: TrapRoleChunkTTFT, Field: "ttfts", Requests: int64(len(hits)), Corrected: true, Detail: detail})
	}
	if unjudged > 0 {
		detail := fmt.Sprintf("%d completed request(s) have fewer than %d gaps after the first (first: request %d, %d gap(s) in all): not judged, not corrected; ",
			unjudged, roleChunkMinGaps, firstUnjudged, d.sums[firstUnjudged].n)
		switch {
		case found:
			detail += fmt.Sprintf("%d of the %d judged requests show the role chunk, so their TTFT is likely the role chunk's too", len(hits), len(judged))
		case len(judged) > 0:
			detail += fmt.Sprintf("%d of the %d judged requests show the role chunk (under %.0f%%: the run is not corrected)", len(hits), len(judged), 100*roleChunkShare)
		default:
			detail += "no request of the run could be judged: whether its TTFT is the role chunk's is unknown"
		}
		out.checks = append(out.checks, formats.DataCheck{Code: TrapRoleChunkUnjudged, Field: "itls", Requests: int64(unjudged), Detail: detail})
	}
	return out
}

// noGapsCheck is the TrapRoleChunkUnjudged explanation of a chat result
// whose arrays hold no itls or no ttfts (the role chunk cannot be seen
// without both), nil for another endpoint or when no request completed.
func (d *details) noGapsCheck(endpoint string) *formats.DataCheck {
	if endpoint != "v1/chat/completions" {
		return nil
	}
	n, first := 0, -1
	for i := 0; i < d.n; i++ {
		if d.errs != nil && d.errs[i] != "" {
			continue
		}
		if d.ttfts != nil && d.ttfts[i] > 0 || d.ttfts == nil && d.lats != nil && d.lats[i] > 0 {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	missing := "itls"
	if d.ttfts == nil {
		missing = "ttfts and itls"
	}
	return &formats.DataCheck{Code: TrapRoleChunkUnjudged, Field: "itls", Requests: int64(n),
		Detail: fmt.Sprintf("the result has no %s (run without --save-detailed?): none of its %d completed request(s) could be judged (first: request %d); whether their TTFT is the role chunk's is unknown", missing, n, first)}
}

// median is the median of xs (the mean of the two middle values for an
// even count), as sorting xs would give it; xs is reordered. Without NaN
// it selects in linear time (quickselect), else it sorts.
func median(xs []float64) float64 {
	h := len(xs) / 2
	for _, x := range xs {
		if x != x {
			slices.Sort(xs)
			if len(xs)%2 == 0 {
				return (xs[h-1] + xs[h]) / 2
			}
			return xs[h]
		}
	}
	m := selectKth(xs, h)
	if len(xs)%2 == 0 {
		return (slices.Max(xs[:h]) + m) / 2
	}
	return m
}

// selectKth reorders xs (no NaN) so that xs[k] is the value sorting would
// put there, every value before it ≤ it and every one after ≥ it, and
// returns it.
func selectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		p := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < p {
				i++
			}
			for xs[j] > p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// rustKeys are the result keys only the Rust vllm-bench writes
// (src/output/json.rs): steady_state and failed_requests mark it.
var rustKeys = map[string]bool{"steady_state": true, "failed_requests": true}

// rustConfigKeys are its configuration keys that vllm bench serve's Python
// does not write, configuration when the result is vllm-bench's.
var rustConfigKeys = []string{"max_model_len"}

// rustNote is the run's note of a vllm-bench result.
const rustNote = "the Rust vllm-bench (steady_state / failed_requests keys), read as vllm bench serve's result: its metrics have the same names and definitions (src/metrics/calculator.rs mirrors serve.py); its defaults differ (vllm_rust_bench_defaults)"

// rustMarks are what a result holds of vllm-bench's own keys.
type rustMarks struct {
	steadyState    bool // a steady_state key
	steadyStateSet bool // … that is not null
	failed         int  // failed_requests entries, -1 when the key is absent
}

// addRustKey takes one of rustKeys: steady_state into config_json (it is
// the tool's own window, not a statistic tokentrace recomputes),
// failed_requests counted, not imported.
func (r *result) addRustKey(key string, e ingest.Entry) {
	if r.rust == nil {
		r.rust = &rustMarks{failed: -1}
	}
	t := bytes.TrimSpace(e.Value)
	switch key {
	case "steady_state":
		r.rust.steadyState, r.rust.steadyStateSet = true, string(t) != "null"
		r.config = append(r.config, e)
	case "failed_requests":
		var list []json.RawMessage
		if json.Unmarshal(t, &list) == nil {
			r.rust.failed = len(list)
		} else {
			r.rust.failed = 0
		}
	}
}

// takeRustConfig moves vllm-bench's own configuration keys out of the
// unknown ones when the result is vllm-bench's (they stay in config_json).
func (r *result) takeRustConfig() {
	if r.rust == nil {
		return
	}
	r.unknownCfg = slices.DeleteFunc(r.unknownCfg, func(k string) bool { return slices.Contains(rustConfigKeys, k) })
	r.unknownNum = slices.DeleteFunc(r.unknownNum, func(k string) bool { return slices.Contains(rustConfigKeys, k) })
}

// rustCheck is the TrapRustBenchDefaults explanation of a vllm-bench
// result, nil for vllm bench serve's.
func (r *result) rustCheck() *formats.DataCheck {
	if r.rust == nil {
		return nil
	}
	var marks []string
	field := "steady_state"
	if r.rust.steadyState {
		ss := "steady_state null (no --max-concurrency: no window)"
		if r.rust.steadyStateSet {
			ss = "steady_state set (kept in config_json)"
		}
		marks = append(marks, ss)
	}
	if r.rust.failed >= 0 {
		if !r.rust.steadyState {
			field = "failed_requests"
		}
		marks = append(marks, fmt.Sprintf("failed_requests of %d (not imported)", r.rust.failed))
	}
	e2el := "no e2el percentiles (--percentile-metrics was given without it)"
	for _, s := range r.reported {
		if s.Metric == "e2el_ms" && strings.HasPrefix(s.Stat, "p") {
			e2el = "e2el percentiles present, as its default --percentile-metrics ttft,tpot,itl,e2el gives them (Python's default: ttft,tpot,itl)"
			break
		}
	}
	conc := "max_concurrency null: unlimited, as in Python (vllm-bench prints num_prompts as the maximum)"
	if r.conc != nil {
		conc = fmt.Sprintf("max_concurrency %g", *r.conc)
	}
	return &formats.DataCheck{Code: TrapRustBenchDefaults, Field: field,
		Detail: "vllm-bench (Rust): " + strings.Join(marks, ", ") + "; " + e2el + "; " + conc}
}
