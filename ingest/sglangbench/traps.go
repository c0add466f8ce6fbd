package sglangbench

import (
	"fmt"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest/pybench"
)

// TrapOutputLenStuck: SGLang's OpenAI-style clients keep output_len at the
// requested max_tokens when the stream's usage never reaches them (the
// data-check catalogue, analyze/TRAPS.md).
const TrapOutputLenStuck = "sglang_output_len_stuck"

// TrapConcurrencySuccesses: SGLang's reported concurrency sums the
// latencies of the successful requests only.
const TrapConcurrencySuccesses = "sglang_concurrency_successes"

// The signature's thresholds: a completed request is "far above" its
// messages when output_len ≥ stuckFactor × accept × messages (accept:
// the reported speculative accept length when above 1, else 1: chunks of
// that many tokens are expected); stuckShare of the judged requests must
// be so, and a reported re-tokenized total must be below stuckRetokShare
// × total_output_tokens (the re-tokenized count of the generated text does
// not depend on the stream's chunking).
const (
	stuckFactor     = 2
	stuckShare      = 0.5
	stuckRetokShare = 0.8
)

// traps are SGLang bench_serving's entries of the catalogue.
var traps = []convention.Trap{{
	Code:  TrapOutputLenStuck,
	Title: "SGLang's OpenAI-style client kept output_len at the requested max_tokens: the stream's usage never updated it",
	Tools: "SGLang bench_serving, OpenAI-style backends (sglang-oai, vllm, lmdeploy, *-chat): the 2024 script always, " +
		"the 2025–2026 completions client when the usage chunk carries no text (issue #24254), the chat client when the server sends no usage (issue #10746); " +
		"bites when generation stops before max_tokens (EOS with --disable-ignore-eos, chat, stop strings, aborts)",
	Signature: "most completed requests' output_len is far above their number of content messages (len(itls) + 1), " +
		"and the run's re-tokenized total, when reported, is far below total_output_tokens; a summary without --output-details shows it in its totals alone. " +
		"The 2024 script's every backend (\"sglang\" included) used that client",
	Threshold: fmt.Sprintf("output_len ≥ %d × accept_length × (len(itls) + 1) for at least %.0f%% of the completed requests, and total_output_tokens_retokenized < %.1f × total_output_tokens when reported (a summary: that alone)", stuckFactor, 100*stuckShare, stuckRetokShare),
	Action:    convention.ActionCorrect,
	Effect: "every completed request whose output_len exceeds its content messages is corrected: N is the re-tokenized generated text under --tokenizer, else the number of content messages (a lower bound), " +
		"never output_len; TPOT, NTPOT, OSL and output throughput use it. Throughput shown as the tool's own (SGLang saves no start times) keeps the stuck count, " +
		"and a summary alone is flagged, not corrected",
	Fix:     convention.FixCountNotStuck,
	Metrics: []string{"osl_tokens", "tpot_ms", "ntpot_ms", "output_throughput"},
	Reproduction: "SGLang's totals and throughputs sum the stuck output_lens, which its profile reads as written: " +
		"they are reproduced; its TPOT divides by them and is not reproducible for want of its latency",
	Source: "https://github.com/sgl-project/sglang/issues/24254, https://github.com/sgl-project/sglang/issues/10746",
	Test:   "ingest/sglangbench TestTrapOutputLenStuck",
}, {
	Code:  TrapConcurrencySuccesses,
	Title: "SGLang's concurrency is the successful requests' latency over the duration: failed requests, in flight until they failed, are left out",
	Tools: "SGLang bench_serving, every version that reports concurrency (2025 on: bench_serving.py calculate_metrics, then python/sglang/benchmark/metrics.py do_calculate_metrics)",
	Signature: "a run that reports concurrency and whose --output-details errors count failed requests: " +
		"SGLang's concurrency = Σ latency / duration over successful requests only (Little's law on the successes)",
	Action: convention.ActionExplain,
	Effect: "not a bug, a definition: SGLang's number is the mean count of successful requests in flight, " +
		"while tokentrace's in-flight count (report in_flight, forensics) holds every request from its send to its end, failures included, " +
		"so with failures SGLang's is the lower; one line names the failures it leaves out",
	Metrics: []string{"concurrency"},
	Reproduction: "SGLang's concurrency is not reproducible: its latency (to the last stream line) is not saved per request and its duration is its own; " +
		"had both been, Σ latency of the successes / duration would give it",
	Source: "https://github.com/sgl-project/sglang/blob/1291c7fc351de2eb2548a95b82a27fb166143efa/python/sglang/benchmark/metrics.py (do_calculate_metrics: e2e_latencies gets a latency only if outputs[i].success; concurrency = np.sum(e2e_latencies) / dur_s)",
	Test:   "ingest/sglangbench TestTrapConcurrencySuccesses",
}}

// concurrencyCheck is the TrapConcurrencySuccesses explanation of a run
// that reports concurrency and has failed failed requests of n, nil
// otherwise.
func concurrencyCheck(reported []formats.ReportedStat, failed, n int) *formats.DataCheck {
	conc, ok := reportedValue(reported, "concurrency")
	if !ok || failed == 0 {
		return nil
	}
	dur := "SGLang's duration"
	if d, ok := reportedValue(reported, "duration"); ok {
		dur = fmt.Sprintf("duration %g s", d)
	}
	return &formats.DataCheck{Code: TrapConcurrencySuccesses, Field: "concurrency", Requests: int64(failed),
		Detail: fmt.Sprintf("concurrency %.4g = Σ latency of the %d successful request(s) / %s; the %d failed request(s) of %d, in flight until they failed, are not in it (tokentrace's in-flight count includes them)",
			conc, n-failed, dur, failed, n)}
}

// stuckFinds are the requests (by index) whose output_len the run's check
// found stuck, and the check.
type stuckFinds struct {
	byRequest map[int]bool
	check     *formats.DataCheck
}

// reportedValue is the run's scalar metric, if reported.
func reportedValue(reported []formats.ReportedStat, metric string) (float64, bool) {
	for _, s := range reported {
		if s.Metric == metric && s.Stat == "value" && s.Value != nil {
			return *s.Value, true
		}
	}
	return 0, false
}

// summaryStuck looks for the stuck output_len in a summary without
// per-request arrays: only the totals can show it (nothing is corrected:
// no request is imported).
func summaryStuck(native bool, reported []formats.ReportedStat) *formats.DataCheck {
	if native {
		return nil
	}
	total, ok1 := reportedValue(reported, "total_output_tokens")
	retok, ok2 := reportedValue(reported, "total_output_tokens_retokenized")
	if !ok1 || !ok2 || total <= 0 || retok >= stuckRetokShare*total {
		return nil
	}
	return &formats.DataCheck{Code: TrapOutputLenStuck, Field: "total_output_tokens",
		Detail: fmt.Sprintf("summary only: total_output_tokens %g against %g re-tokenized from the generated text: SGLang's output token total, throughputs and TPOT count requested lengths", total, retok)}
}

// findStuck looks for the stuck output_len in a run of an OpenAI-style
// client (native backends read the server's count). reported are the
// run's summary values.
func (d *details) findStuck(native bool, reported []formats.ReportedStat) stuckFinds {
	out := stuckFinds{byRequest: map[int]bool{}}
	if native || d.outLens == nil || d.itls == nil && d.itlLens == nil || d.ttfts == nil {
		return out
	}
	value := func(metric string) (float64, bool) { return reportedValue(reported, metric) }
	accept := 1.0
	if a, ok := value("accept_length"); ok && a > 1 {
		accept = a
	}
	judged, hits := 0, 0
	var over []int
	first := ""
	for i := 0; i < d.n; i++ {
		if d.errs != nil && d.errs[i] != "" || !(pybench.At(d.ttfts, i) > 0) {
			continue
		}
		n, ok := pybench.Count(d.outLens[i])
		if !ok {
			continue
		}
		msgs := int64(d.itlLen(i)) + 1
		judged++
		if float64(n) >= stuckFactor*accept*float64(msgs) {
			hits++
			if first == "" {
				first = fmt.Sprintf("request %d: output_len %d for %d content messages", i, n, msgs)
			}
		}
		if n > msgs {
			over = append(over, i)
		}
	}
	if judged == 0 || float64(hits) < stuckShare*float64(judged) {
		return out
	}
	detail := fmt.Sprintf("%s; %d of %d completed requests at ≥ %g× their messages", first, hits, judged, stuckFactor*accept)
	if retok, ok := value("total_output_tokens_retokenized"); ok {
		total, ok := value("total_output_tokens")
		if !ok || retok >= stuckRetokShare*total {
			return out // the generated text has as many tokens: multi-token chunks, not a stuck count
		}
		detail += fmt.Sprintf("; total_output_tokens %g, re-tokenized %g", total, retok)
	}
	for _, i := range over {
		out.byRequest[i] = true
	}
	out.check = &formats.DataCheck{Code: TrapOutputLenStuck, Field: "output_lens", Requests: int64(len(over)), Corrected: true, Detail: detail}
	return out
}

// itlLen is the number of gaps of request i.
func (d *details) itlLen(i int) int {
	if d.itlLens != nil {
		return int(d.itlLens[i])
	}
	return len(d.itls[i])
}
