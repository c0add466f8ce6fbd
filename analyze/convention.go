package analyze

// A Convention is a named set of explicit metric-definition choices: which
// message starts TTFT and ends E2E, where the output-token count N comes
// from, how TPOT and ITL are formed, how percentiles and the standard
// deviation are computed, what the run's duration is, and how goodput is
// expressed. Every metric tokentrace reports is computed under one
// Convention; reproducing a peer tool's numbers is computing under that
// tool's Convention. Conventions are plain values: compare them, copy them,
// change one field to see what that choice is worth.
//
// CONVENTIONS.md in this directory states each choice of each convention
// with its source.
type Convention struct {
	// Name identifies the convention ("tokentrace", "genai-perf",
	// "llmperf@2023-12").
	Name string
	// TTFTStart is the message whose arrival ends TTFT.
	TTFTStart TTFTRule
	// E2EEnd is the message whose arrival ends E2E.
	E2EEnd E2ERule
	// OutputTokens lists the sources of N in order of preference; the first
	// one the request has is used.
	OutputTokens []CountSource
	// TPOT is the per-request time-per-output-token formula.
	TPOT TPOTRule
	// ITL is how inter-token latency samples are formed.
	ITL ITLRule
	// Percentile is the percentile method.
	Percentile PercentileMethod
	// StdDDOF is the standard deviation's divisor offset: 1 for the sample
	// std (n − 1), 0 for the population std (n).
	StdDDOF int
	// Duration is the span throughput is measured over.
	Duration DurationRule
	// Sources gives, per choice name (the JSON keys of Choices), where the
	// choice comes from: tool, file, version, reason.
	Sources map[string]string
}

// TTFTRule chooses the message that ends TTFT.
type TTFTRule string

const (
	// TTFTFirstToken: the first message carrying generated tokens, content
	// or reasoning (canonical; AIPerf).
	TTFTFirstToken TTFTRule = "first_token_message"
	// TTFTFirstContent: the first message carrying non-empty content text
	// (GenAI-Perf, LLMPerf, SGLang).
	TTFTFirstContent TTFTRule = "first_content_message"
	// TTFTFirstChoices: the first message with a non-empty choices array,
	// even a role-only one (vLLM bench serve).
	TTFTFirstChoices TTFTRule = "first_choices_message"
)

// E2ERule chooses the message that ends E2E.
type E2ERule string

const (
	// E2ELastToken: the last message carrying generated tokens (canonical,
	// GenAI-Perf, AIPerf).
	E2ELastToken E2ERule = "last_token_message"
	// E2EStreamEnd: the last message of any kind or the stream's close
	// (LLMPerf, SGLang).
	E2EStreamEnd E2ERule = "stream_end"
)

// CountSource is one source of a request's output-token count N.
type CountSource string

const (
	// CountServerUsage: the server's usage.completion_tokens.
	CountServerUsage CountSource = "server_usage"
	// CountToolReported: the benchmark tool's own count (LLMPerf's without
	// its BOS token).
	CountToolReported CountSource = "tool_reported"
	// CountTokenizer: the generated text re-tokenized by tokentrace.
	CountTokenizer CountSource = "tokenizer"
	// CountMessages: the number of messages carrying generated tokens.
	CountMessages CountSource = "chunk_count"
)

// TPOTRule is a per-request TPOT formula.
type TPOTRule string

const (
	// TPOTExcludeFirst: (E2E − TTFT) / (N − 1), undefined for N ≤ 1
	// (canonical, GenAI-Perf, AIPerf, vLLM, SGLang).
	TPOTExcludeFirst TPOTRule = "(e2e-ttft)/(n-1)"
)

// ITLRule is how inter-token-latency samples are formed.
type ITLRule string

const (
	// ITLPooledTokenSplit: every gap between consecutive token-carrying
	// messages of every request, pooled; a gap before a message known to
	// carry k tokens counts as k samples of gap/k (canonical).
	ITLPooledTokenSplit ITLRule = "pooled_token_split_gaps"
)

// DurationRule is the span a run's throughput is measured over.
type DurationRule string

const (
	// DurationFirstStartToLastToken: the earliest request start to the
	// latest last-token arrival of a completed request (canonical).
	DurationFirstStartToLastToken DurationRule = "first_start_to_last_token"
)

// Choices returns the convention's choices by name, as shown in reports
// ("convention": {"choices": {...}}).
func (c Convention) Choices() map[string]string {
	out := map[string]string{
		"ttft_start":   string(c.TTFTStart),
		"e2e_end":      string(c.E2EEnd),
		"tpot":         string(c.TPOT),
		"itl":          string(c.ITL),
		"percentile":   string(c.Percentile),
		"std":          map[int]string{0: "population (n)", 1: "sample (n-1)"}[c.StdDDOF],
		"duration":     string(c.Duration),
		"completed":    "status ok",
		"goodput":      "fraction of all requests meeting every SLO; good requests per second",
		"output_count": "",
	}
	for i, s := range c.OutputTokens {
		if i > 0 {
			out["output_count"] += " > "
		}
		out["output_count"] += string(s)
	}
	return out
}

// Canonical is tokentrace's own convention: the definitions its reports use
// unless told otherwise. Each choice and its reason is stated in
// CONVENTIONS.md.
var Canonical = Convention{
	Name:         "tokentrace",
	TTFTStart:    TTFTFirstToken,
	E2EEnd:       E2ELastToken,
	OutputTokens: []CountSource{CountServerUsage, CountToolReported, CountTokenizer, CountMessages},
	TPOT:         TPOTExcludeFirst,
	ITL:          ITLPooledTokenSplit,
	Percentile:   PercentileLinear,
	StdDDOF:      1,
	Duration:     DurationFirstStartToLastToken,
	Sources: map[string]string{
		"ttft_start":   "tokentrace: the user waits for the first generated token, reasoning included (AIPerf time_to_first_token agrees)",
		"e2e_end":      "tokentrace: the last generated token; trailing usage/[DONE] messages are transport, kept as stream_end",
		"output_count": "tokentrace: the server's own count is exact; tool counts and re-tokenization are fallbacks",
		"tpot":         "tokentrace: decode cost per token after the first, so E2E = TTFT + TPOT·(N−1)",
		"itl":          "tokentrace: the pooled gap distribution shows stalls a per-request mean hides",
		"percentile":   "numpy default (linear, h=(n−1)p), shared by GenAI-Perf, AIPerf, vLLM, SGLang, LLMPerf",
		"std":          "sample standard deviation: a benchmark is a sample of the deployment's behaviour",
		"duration":     "tokentrace: from the first request sent to the last token received",
	},
}
