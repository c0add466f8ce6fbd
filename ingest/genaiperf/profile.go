package genaiperf

import "github.com/tokentrace/tokentrace/convention"

// Sources of GenAI-Perf's definitions (triton-inference-server/perf_analyzer
// at 263c5f6).
const (
	srcParser = "perf_analyzer 263c5f6 genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py"
	srcStats  = "perf_analyzer 263c5f6 genai-perf/genai_perf/metrics/statistics.py"
)

// Profile is GenAI-Perf's convention (perf_analyzer 2.x / GenAI-Perf
// 0.0.x, 2024–2025).
var Profile = convention.Convention{
	Name: Name, Tool: Name,
	Completed: convention.CompletedWithContent, Responses: convention.ResponsesContent, ResponseUnit: convention.UnitRead, E2EEnd: convention.E2ELastResponse,
	OutputTokens: []convention.CountSource{convention.CountTokenizer}, TPOTFrom: convention.TPOTFromFirstResponse, TPOTDivisor: convention.DivideNMinus1,
	TPOTRounding: convention.RoundWholeNs, ITL: convention.ITLPooledGaps, Percentile: convention.PercentileLinear, StdDDOF: 0,
	Duration: convention.DurationCompletedSpan, ThroughputRequests: convention.ThroughputAllRequests, Goodput: convention.GoodputPerSecond,
	Sources: map[string]string{
		"completed":           srcParser + " 144-145: requests left with no content response are skipped",
		"responses":           srcParser + " 391-399: responses with empty content text are dropped (role, usage, [DONE], reasoning-only)",
		"response_unit":       srcParser + " 302-383: splintered events glued, several events of one read merged into one response",
		"e2e_end":             srcParser + " 165: request_latency = last kept response − start",
		"latency_from":        srcParser + ": from the request's send timestamp",
		"failed_requests":     srcParser + ": completed responses only",
		"output_count":        srcParser + " 435-459: re-tokenized concatenated content; server usage never read",
		"tokenize_reasoning":  srcParser + " 542-557: only delta.content / message.content is text",
		"special_tokens":      "perf_analyzer genai-perf/genai_perf/tokenizer.py 39-41: add_special_tokens=False",
		"tpot_from":           srcParser + " 187-192: (request_latency − TTFT)",
		"tpot_divisor":        srcParser + " 187-192: / (OSL − 1)",
		"tpot_count":          srcParser + " 187-192: OSL (re-tokenized)",
		"tpot_rounding":       srcParser + " 187-192: round() to whole ns",
		"itl":                 srcParser + " 198-212: per-chunk ITL kept for plots only; exported inter_token_latency is per request (tpot)",
		"percentile":          srcStats + " 97-101: np.percentile default",
		"std":                 srcStats + " 107-109: np.std (ddof 0)",
		"duration":            srcParser + " 160-162, 233: max last response − min start over requests with a response",
		"throughput_requests": srcParser + " 271: len(all requests) / duration",
		"goodput":             "perf_analyzer genai-perf goodput_calculator/goodput_calculator.py 40, 177-181: good/duration, -1.0 for an invalid SLO",
		"corrections":         "the tool computes from its data as written, its known bugs included: reproducing its numbers needs them uncorrected",
	},
}

// whyPrompt: GenAI-Perf's ISL is its re-tokenized prompt.
const whyPrompt = "GenAI-Perf re-tokenizes the prompt text, which tokentrace does not store"

// metrics maps GenAI-Perf's reported metrics (profile_export_genai_perf.json)
// to tokentrace's quantities.
var metrics = map[string]convention.ReportedMetric{
	"time_to_first_token":                 convention.Map("ttft", 1),
	"time_to_second_token":                convention.Map("ttst", 1),
	"inter_token_latency":                 convention.Map("tpot", 1),
	"request_latency":                     convention.Map("e2e", 1),
	"output_sequence_length":              convention.Map("osl", 1),
	"input_sequence_length":               convention.Unmapped(whyPrompt),
	"output_token_throughput_per_request": convention.Map("osl_per_e2e_s", 1),
	"output_token_throughput_per_user":    convention.Map("tpot_tokens_per_s", 1),
	"output_token_throughput":             convention.Map("scalar:output_token_throughput", 1),
	"request_throughput":                  convention.Map("scalar:request_throughput", 1),
	"request_count":                       convention.Map("scalar:e2e_count", 1),
	"request_goodput":                     convention.Unmapped(convention.ReasonGoodput),
}

// Headline are the summary metrics of GenAI-Perf and AIPerf (which share
// their names) that the text report shows.
var Headline = []string{
	"time_to_first_token", "time_to_first_output_token", "time_to_second_token",
	"inter_token_latency", "inter_chunk_latency", "request_latency",
	"output_sequence_length", "input_sequence_length", "request_throughput",
	"output_token_throughput", "request_count", "error_request_count",
	"request_goodput", "goodput", "benchmark_duration",
}

// Tool is what tokentrace knows of GenAI-Perf's numbers.
var Tool = convention.Tool{
	Name:       Name,
	Profiles:   []convention.Convention{Profile},
	Metrics:    func(convention.Convention) map[string]convention.ReportedMetric { return metrics },
	Traps:      traps,
	Throughput: &convention.ReportedThroughput{OutputMetric: "output_token_throughput", OutputStat: "avg", RequestMetric: "request_throughput", RequestStat: "avg", RequestScale: 1},
	Headline:   Headline,
}
