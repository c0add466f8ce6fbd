package inferenceperf

import (
	"fmt"
	"slices"
	"strings"
)

// Convention names written to Run.Convention, each a profile of Tool
// (profile.go; ConventionMessage is an alias of ConventionLine's profile).
const (
	// ConventionLine is inference-perf before 3631096 (2025-11-14; v0.1.1 …
	// v0.2.x, and v0.1.0, which took one time per network read): the
	// client appended a time for every line it read from the SSE stream.
	ConventionLine = "inference-perf@0.2"
	// ConventionMessage is 3631096 … v0.4.x: one time per SSE message,
	// [DONE], role-only and usage messages included.
	ConventionMessage = "inference-perf@0.4"
	// ConventionToken5 is v0.5.x: per-token times from chunks re-tokenized
	// with special tokens; output_tokens overwritten with the per-chunk sum.
	ConventionToken5 = "inference-perf@0.5"
	// ConventionToken is v0.6 and later (Profile).
	ConventionToken = "inference-perf"
)

// timing is how the tool took its output-token times.
type timing int

const (
	timingUnknown timing = iota
	timingRead           // v0.1.0: one per network read
	timingLine           // ≤ v0.2.x: one per SSE line
	timingMessage        // v0.3–v0.4: one per SSE message
	timingToken5         // v0.5: per token, BOS per chunk
	timingToken          // v0.6+: per token
)

func (t timing) convention() string {
	switch t {
	case timingRead, timingLine:
		return ConventionLine
	case timingMessage:
		return ConventionMessage
	case timingToken5:
		return ConventionToken5
	}
	return ConventionToken
}

// What each timing means for the reported numbers
// (kubernetes-sigs/inference-perf apis/completion.py, apis/chat.py,
// apis/streaming_parser.py and reportgen/base.py at tags v0.1.0 a097500c,
// v0.2.0 1ccc48b6, v0.3.0 a85b31b5, v0.4.0 e3e690ba, v0.5.0 e250731 and
// v0.6.1 a40897e; the changes in PRs #452, #410 and #566).
func (t timing) note() string {
	switch t {
	case timingRead:
		return "inference-perf v0.1.0 took one output-token time per network read of the stream (response.content.iter_chunks), whatever it held; TTFT = first read, TPOT = (t_last − t_first)/(reads − 1), ITL pools the gaps between reads"
	case timingLine:
		return "inference-perf before 3631096 (2025-11-14; v0.1.1–v0.2.x) appended an output-token time for every line read from the SSE stream — each data line, the blank separator line after it, and [DONE] — and computed TTFT = first line − start, TPOT = (t_last − t_first)/(lines − 1) and ITL over every line gap (about half of them microseconds): reported TPOT and ITL are about half the decode time per token (inference-perf PR #452, issue #392)"
	case timingMessage:
		return "inference-perf 3631096 (2025-11-14) … v0.4.x took one output-token time per SSE message, [DONE], role-only and usage messages included (fixed by PR #452): TPOT = (t_last − t_first)/(messages − 1), ITL pools the message gaps"
	case timingToken5:
		return "inference-perf v0.5.x gives every re-tokenized token of a content chunk the chunk's arrival time (zero gaps inside a chunk, pooled into ITL), re-tokenizes each chunk with special tokens (one BOS per chunk with Llama-style tokenizers: ITL deflated, PR #566, issue #564) and overwrites output_tokens with the per-chunk sum; TPOT = (t_last − t_first)/(output_tokens − 1)"
	case timingToken:
		return "inference-perf v0.6+ gives every re-tokenized token of a content chunk the chunk's arrival time (zero gaps inside a chunk, pooled into ITL); TPOT = (t_last − t_first)/(N − 1) with N the whole response re-tokenized (or the server's completion_tokens under use_server_output_tokens); TTFT, TPOT and ITL only over requests with two or more token times"
	}
	return ""
}

// layout is the version evidence in a lifecycle report's shape.
type layout struct {
	name     string // "v0.1", "v0.2–v0.3", "v0.4", "v0.5", "v0.6+", ""
	evidence string
}

// summaryLayout tells the report generation from its keys
// (reportgen/base.py at each tag): p10/p50/p90 only (v0.1.x); the fixed
// list mean, min, p0.1 … p99.9, max (v0.2–v0.3); configurable percentiles
// after mean, min, max (v0.4+); benchmark_time_seconds and
// token_count_mismatches (v0.5+); server-token sections prompt_tokens and
// output_tokens (v0.6+).
func summaryLayout(s *summaryFile) layout {
	if s == nil || s.prom {
		return layout{}
	}
	_, bench := s.value("benchmark_time_seconds", "value")
	usage := false
	for _, r := range s.reported {
		if strings.HasPrefix(r.Metric, "successes.prompt_tokens") || strings.HasPrefix(r.Metric, "successes.output_tokens") {
			usage = true
		}
	}
	order := s.statOrder
	if len(order) > 0 {
		order = order[1:]
	}
	switch {
	case usage:
		return layout{"v0.6+", "server-token sections successes.prompt_tokens/output_tokens (v0.6+)"}
	case bench:
		return layout{"v0.5", "benchmark_time_seconds without server-token sections (v0.5)"}
	case len(order) >= 3 && order[0] == "mean" && order[1] == "min" && order[2] == "max":
		return layout{"v0.4", "statistics in the order mean, min, max, percentiles (configurable percentiles, v0.4+) and no benchmark_time_seconds (before v0.5)"}
	case containsAll(order, "p10", "p50", "p90") && !slices.Contains(order, "p0.1"):
		return layout{"v0.1", "statistics mean, min, p10, p50, p90, max only (v0.1.x)"}
	case len(order) >= 3 && order[0] == "mean" && order[1] == "min" && order[len(order)-1] == "max":
		return layout{"v0.2–v0.3", "statistics in the fixed order mean, min, p0.1 … p99.9, max and no benchmark_time_seconds (v0.2–v0.3)"}
	}
	return layout{}
}

func containsAll(list []string, s ...string) bool {
	for _, x := range s {
		if !slices.Contains(list, x) {
			return false
		}
	}
	return true
}

// summaryTiming infers the timing from a lifecycle report alone. A v0.2–v0.3
// layout spans the per-line code and the per-message code (3631096, between
// v0.2.0 and v0.3.0); the per-line code leaves a signature in ITL: every
// data line is followed within microseconds by its blank separator line, so
// at least half the gaps are tiny — the ITL median is a few percent of the
// mean at most — and none is exactly 0 (per-token times from v0.5 on give
// exact zeros).
func summaryTiming(s *summaryFile) (timing, string) {
	l := summaryLayout(s)
	switch l.name {
	case "v0.6+":
		return timingToken, l.evidence
	case "v0.5":
		return timingToken5, l.evidence
	case "v0.4":
		return timingMessage, l.evidence
	case "v0.1":
		return timingLine, l.evidence + "; v0.1.0 took times per network read, v0.1.1 per SSE line"
	case "v0.2–v0.3":
		med, ok1 := s.value("successes.latency.inter_token_latency", "median")
		mean, ok2 := s.value("successes.latency.inter_token_latency", "mean")
		lo, ok3 := s.value("successes.latency.inter_token_latency", "min")
		if ok1 && ok2 && ok3 && mean > 0 && lo > 0 && med < 0.05*mean {
			return timingLine, fmt.Sprintf("%s; inter_token_latency median %.3g s is %.1f%% of its mean %.3g s and its minimum %.3g s is not 0: the per-SSE-line signature (a blank separator line microseconds after each data line)",
				l.evidence, med, 100*med/mean, mean, lo)
		}
		return timingMessage, l.evidence + "; no per-SSE-line signature in inter_token_latency (median not far below the mean), so one time per SSE message (3631096, 2025-11-14, and later) is assumed"
	}
	return timingUnknown, ""
}

// recordTiming is the timing a per-request record's layout implies.
func recordTiming(r *record) (timing, string) {
	switch r.gen {
	case genMetrics:
		return timingToken, "per-request records with " + r.gen.String()
	case genResponseInfo:
		return timingToken5, "per-request records with " + r.gen.String()
	case genTimes:
		if r.extraInfo {
			return timingMessage, "per-request records with info.output_token_times and info.extra_info (extra_info from 4ec6bfd, 2025-11-24: v0.3–v0.4)"
		}
		return timingLine, "per-request records with info.output_token_times and no info.extra_info (before 4ec6bfd, 2025-11-24: v0.1.1–v0.2.x; a build from 2025-11-14 to 11-24 would time per SSE message instead)"
	}
	return timingRead, "per-request records without info (v0.1.0)"
}
