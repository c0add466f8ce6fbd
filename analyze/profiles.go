package analyze

import (
	"fmt"
	"sort"
	"strings"
)

// Canonical is tokentrace's own convention: the definitions its reports use
// unless told otherwise. CONVENTIONS.md states each choice and its reason.
var Canonical = Convention{
	Name:               "tokentrace",
	Completed:          CompletedOK,
	Responses:          ResponsesTokens,
	ResponseUnit:       UnitMessage,
	E2EEnd:             E2ELastResponse,
	OutputTokens:       []CountSource{CountServerUsage, CountToolReported, CountTokenizer, CountResponses},
	TokenizeReasoning:  true,
	TPOTFrom:           TPOTFromFirstResponse,
	TPOTDivisor:        DivideNMinus1,
	TPOTRounding:       RoundNone,
	ITL:                ITLPooledTokenSplit,
	Percentile:         PercentileLinear,
	StdDDOF:            1,
	Duration:           DurationFirstStartToLastResponse,
	ThroughputRequests: ThroughputCompleted,
	Goodput:            GoodputFractionAndRate,
	Sources: map[string]string{
		"completed":           "tokentrace: no error and at least one generated token; every status still counted",
		"responses":           "tokentrace: the user waits for the first generated token, reasoning included (= AIPerf time_to_first_token)",
		"response_unit":       "tokentrace: SSE messages, as the server sent them",
		"e2e_end":             "tokentrace: the last generated token; usage/[DONE] are transport, kept as stream_end",
		"output_count":        "tokentrace: the server's count is exact; tool counts and re-tokenization are fallbacks",
		"tokenize_reasoning":  "tokentrace: reasoning tokens are generated tokens",
		"special_tokens":      "tokentrace: BOS is not generated",
		"tpot_from":           "tokentrace: decode cost after the first token, so E2E = TTFT + TPOT·(N−1)",
		"tpot_divisor":        "tokentrace: N − 1 gaps follow the first token",
		"tpot_count":          "tokentrace: same N as the output count",
		"tpot_rounding":       "tokentrace: none",
		"itl":                 "tokentrace: pooled gaps show stalls a per-request mean hides; k-token chunks split",
		"percentile":          "numpy default (linear, h=(n−1)p), shared by GenAI-Perf, AIPerf, vLLM, SGLang, LLMPerf",
		"std":                 "tokentrace: a benchmark is a sample of the deployment",
		"duration":            "tokentrace: first request sent → last token received",
		"throughput_requests": "tokentrace: completed requests",
		"goodput":             "tokentrace: share of all requests meeting every SLO, and good requests/s",
	},
}

const (
	srcGenAIPerf = "perf_analyzer 263c5f6 genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py"
	srcGPStats   = "perf_analyzer 263c5f6 genai-perf/genai_perf/metrics/statistics.py"
	srcAIPerf    = "ai-dynamo/aiperf db4f639 (0.1.1) and 0fec57a/58dd5de (0.8–0.14)"
	srcLLMPerf   = "ray-project/llmperf token_benchmark_ray.py, src/llmperf/ray_clients/openai_chat_completions_client.py"
	srcVLLM      = "vllm-project/vllm 009e6d4 vllm/benchmarks/serve.py; 02cfb53 vllm/benchmarks/lib/endpoint_request_func.py"
	srcSGLang    = "sgl-project/sglang 0033168 python/sglang/bench_serving.py; 1291c7f python/sglang/benchmark/metrics.py"
	srcGuideLLM  = "vllm-project/guidellm"
	srcMLPerf    = "mlcommons/inference loadgen/results.cc, loadgen/logging.cc"
	srcInfPerf   = "kubernetes-sigs/inference-perf inference_perf/reportgen/base.py (summarize_requests)"
)

// GenAIPerf is GenAI-Perf's convention (perf_analyzer 2.x / GenAI-Perf
// 0.0.x, 2024–2025).
var GenAIPerf = Convention{
	Name: "genai-perf", Tool: "genai-perf",
	Completed: CompletedWithContent, Responses: ResponsesContent, ResponseUnit: UnitRead, E2EEnd: E2ELastResponse,
	OutputTokens: []CountSource{CountTokenizer}, TPOTFrom: TPOTFromFirstResponse, TPOTDivisor: DivideNMinus1,
	TPOTRounding: RoundWholeNs, ITL: ITLPooledGaps, Percentile: PercentileLinear, StdDDOF: 0,
	Duration: DurationCompletedSpan, ThroughputRequests: ThroughputAllRequests, Goodput: GoodputPerSecond,
	Sources: map[string]string{
		"completed":           srcGenAIPerf + " 144-145: requests left with no content response are skipped",
		"responses":           srcGenAIPerf + " 391-399: responses with empty content text are dropped (role, usage, [DONE], reasoning-only)",
		"response_unit":       srcGenAIPerf + " 302-383: splintered events glued, several events of one read merged into one response",
		"e2e_end":             srcGenAIPerf + " 165: request_latency = last kept response − start",
		"output_count":        srcGenAIPerf + " 435-459: re-tokenized concatenated content; server usage never read",
		"tokenize_reasoning":  srcGenAIPerf + " 542-557: only delta.content / message.content is text",
		"special_tokens":      "perf_analyzer genai-perf/genai_perf/tokenizer.py 39-41: add_special_tokens=False",
		"tpot_from":           srcGenAIPerf + " 187-192: (request_latency − TTFT)",
		"tpot_divisor":        srcGenAIPerf + " 187-192: / (OSL − 1)",
		"tpot_count":          srcGenAIPerf + " 187-192: OSL (re-tokenized)",
		"tpot_rounding":       srcGenAIPerf + " 187-192: round() to whole ns",
		"itl":                 srcGenAIPerf + " 198-212: per-chunk ITL kept for plots only; exported inter_token_latency is per request (tpot)",
		"percentile":          srcGPStats + " 97-101: np.percentile default",
		"std":                 srcGPStats + " 107-109: np.std (ddof 0)",
		"duration":            srcGenAIPerf + " 160-162, 233: max last response − min start over requests with a response",
		"throughput_requests": srcGenAIPerf + " 271: len(all requests) / duration",
		"goodput":             "perf_analyzer genai-perf goodput_calculator/goodput_calculator.py 40, 177-181: good/duration, -1.0 for an invalid SLO",
	},
}

// AIPerf is AIPerf's convention (0.1 – 0.10; records JSONL).
var AIPerf = Convention{
	Name: "aiperf", Tool: "aiperf",
	Completed: CompletedOK, Responses: ResponsesTokens, ResponseUnit: UnitMessage, E2EEnd: E2ELastResponse,
	OutputTokens: []CountSource{CountToolRaw}, TokenizeReasoning: true, TPOTFrom: TPOTFromFirstResponse, TPOTDivisor: DivideNMinus1,
	TPOTRounding: RoundNone, ITL: ITLPooledGaps, Percentile: PercentileLinear, StdDDOF: 0,
	Duration: DurationCompletedSpan, ThroughputRequests: ThroughputCompleted, Goodput: GoodputPerSecond,
	Sources: map[string]string{
		"completed":           srcAIPerf + " common/models/record_models.py 582-599: valid = no error and ≥1 response",
		"responses":           srcAIPerf + " parsers/openai_parsers.py 123-134: non-empty content or reasoning",
		"response_unit":       srcAIPerf + " parsers/openai_parsers.py 85-86: one per SSE message",
		"e2e_end":             srcAIPerf + " metrics/types/request_latency_metric.py 35-39: last response − start",
		"output_count":        srcAIPerf + " inference_result_parser.py 186-214: output_sequence_length (tokenizer or --use-server-token-count)",
		"tokenize_reasoning":  srcAIPerf + " output_sequence_length_metric.py 48: output + reasoning tokens",
		"special_tokens":      srcAIPerf + " common/tokenizer.py 36-37: add_special_tokens=False",
		"tpot_from":           srcAIPerf + " inter_token_latency_metric.py 46-52: (latency − TTFT)",
		"tpot_divisor":        srcAIPerf + " inter_token_latency_metric.py 46-52: / (OSL − 1)",
		"tpot_count":          srcAIPerf + " inter_token_latency_metric.py: OSL",
		"tpot_rounding":       srcAIPerf + ": not rounded",
		"itl":                 srcAIPerf + " inter_chunk_latency_metric.py 58-65, metric_results_processor.py 79-84: pooled gaps",
		"percentile":          srcAIPerf + " metric_dicts.py 187-212: np.percentile default",
		"std":                 srcAIPerf + " metric_dicts.py 187-212: np.std (ddof 0)",
		"duration":            srcAIPerf + " benchmark_duration_metric.py 45: max(start + latency) − min start over valid records",
		"throughput_requests": srcAIPerf + " request_throughput_metric.py 40: valid records / duration",
		"goodput":             srcAIPerf + " goodput_metric.py 39: good / duration",
	},
}

// LLMPerf2023 is LLMPerf from "LLMPerfV2" 1eac866 (2023-12-05) to before
// afd137a (2024-04-07): per-request throughput counts SSE chunks.
var LLMPerf2023 = Convention{
	Name: "llmperf@2023-12", Tool: "llmperf",
	Completed: CompletedNoError, Responses: ResponsesContent, ResponseUnit: UnitMessage, E2EEnd: E2EStreamEnd,
	OutputTokens: []CountSource{CountToolRaw, CountTokenizer}, SpecialTokens: true,
	TPOTFrom: TPOTFromRequestStart, TPOTDivisor: DivideN, TPOTCount: []CountSource{CountToolRaw, CountTokenizer},
	TPOTRounding: RoundNone, ITL: ITLPooledGaps, Percentile: PercentileLinear, StdDDOF: 1,
	Duration: DurationNotRecorded, ThroughputRequests: ThroughputCompleted, Goodput: GoodputNone,
	Sources: map[string]string{
		"completed":           srcLLMPerf + " metrics_summary: rows with error_code null",
		"responses":           srcLLMPerf + ": only chunks with non-empty delta.content are timed",
		"response_unit":       srcLLMPerf + ": SSE lines",
		"e2e_end":             srcLLMPerf + ": end_to_end_latency_s after the stream closes",
		"output_count":        srcLLMPerf + ": len(LlamaTokenizerFast.encode(text)) incl. BOS (issue #35)",
		"tokenize_reasoning":  srcLLMPerf + ": generated_text is content only",
		"special_tokens":      srcLLMPerf + ": encode() adds BOS",
		"tpot_from":           srcLLMPerf + " 1eac866: Σ time_to_next_token = t_last_content − start (includes TTFT)",
		"tpot_divisor":        srcLLMPerf + " 1eac866: / N_tok",
		"tpot_count":          srcLLMPerf + " 1eac866: N_tok (with BOS)",
		"tpot_rounding":       srcLLMPerf + ": none",
		"itl":                 srcLLMPerf + ": inter_token_latency_s is a per-request mean (tpot), no gaps kept",
		"percentile":          srcLLMPerf + " metrics_summary: pandas Series.quantile (linear)",
		"std":                 srcLLMPerf + " metrics_summary: pandas Series.std (ddof 1)",
		"duration":            srcLLMPerf + ": wall time of the whole threaded request loop, not in the files",
		"throughput_requests": srcLLMPerf + ": num_completed_requests / loop wall time",
		"goodput":             srcLLMPerf + ": none",
	},
}

// LLMPerf2024 is LLMPerf from afd137a (2024-04-07) to before f1d6bed:
// per-request throughput = N_tok / E2E.
var LLMPerf2024 = withName(LLMPerf2023, "llmperf@2024-04", map[string]string{
	"output_count": srcLLMPerf + " afd137a: N_tok incl. BOS; request_output_throughput = N_tok / e2e",
})

// LLMPerf2024Dec is LLMPerf from f1d6bed (2024-12-09, final): the client
// divides its ITL sum by its SSE chunk counter.
var LLMPerf2024Dec = func() Convention {
	c := withName(LLMPerf2023, "llmperf@2024-12", map[string]string{
		"tpot_count": srcLLMPerf + " f1d6bed: / tokens_received (every non-empty SSE line except [DONE])",
	})
	c.TPOTCount = []CountSource{CountSSEMessages}
	return c
}()

// VLLM is vLLM's `vllm bench serve` (benchmark_serving.py) convention.
var VLLM = Convention{
	Name: "vllm", Tool: "vllm",
	Completed: CompletedOK, Responses: ResponsesChoices, ResponseUnit: UnitMessage, E2EEnd: E2ELastResponse,
	OutputTokens: []CountSource{CountServerUsage, CountToolReported, CountTokenizer}, TPOTFrom: TPOTFromFirstResponse, TPOTDivisor: DivideNMinus1,
	TPOTRounding: RoundNone, ITL: ITLPooledGaps, Percentile: PercentileLinear, StdDDOF: 0,
	Duration: DurationNotRecorded, ThroughputRequests: ThroughputCompleted, Goodput: GoodputPerSecond,
	Sources: map[string]string{
		"completed":           srcVLLM + ": success requires ≥1 choices message",
		"responses":           srcVLLM + ": TTFT at the first message with non-empty choices (role-only chunk counts; issue #15106)",
		"response_unit":       srcVLLM + ": SSE messages",
		"e2e_end":             srcVLLM + ": latency = last choices message − start",
		"output_count":        srcVLLM + ": usage.completion_tokens, else re-tokenized generated_text",
		"tokenize_reasoning":  srcVLLM + ": generated_text is content",
		"special_tokens":      srcVLLM + ": add_special_tokens=False",
		"tpot_from":           srcVLLM + " serve.py: (latency − ttft)",
		"tpot_divisor":        srcVLLM + " serve.py: / (output_len − 1), only output_len > 1",
		"tpot_count":          srcVLLM + ": output_len",
		"tpot_rounding":       srcVLLM + ": none",
		"itl":                 srcVLLM + ": pooled gaps, one per chunk (no splitting; issue #27485)",
		"percentile":          srcVLLM + ": np.percentile default",
		"std":                 srcVLLM + ": np.std (ddof 0)",
		"duration":            srcVLLM + ": perf_counter around the dispatch loop (the file's duration key)",
		"throughput_requests": srcVLLM + ": completed / duration",
		"goodput":             srcVLLM + " PR #9338: request_goodput = good / duration (req/s)",
	},
}

// SGLang is SGLang bench_serving with OpenAI-style backends (sglang-oai,
// vllm, *-chat).
var SGLang = Convention{
	Name: "sglang", Tool: "sglang",
	Completed: CompletedWithContent, Responses: ResponsesContent, ResponseUnit: UnitMessage, E2EEnd: E2EStreamEnd,
	OutputTokens: []CountSource{CountServerUsage, CountToolReported, CountRequested}, TPOTFrom: TPOTFromFirstResponse, TPOTDivisor: DivideNMinus1,
	TPOTRounding: RoundNone, ITL: ITLPooledGaps, Percentile: PercentileLinear, StdDDOF: 0,
	Duration: DurationNotRecorded, ThroughputRequests: ThroughputCompleted, Goodput: GoodputNone,
	Sources: map[string]string{
		"completed":           srcSGLang + ": success with ≥1 content chunk",
		"responses":           srcSGLang + ": first chunk with non-empty text/content",
		"response_unit":       srcSGLang + ": SSE lines",
		"e2e_end":             srcSGLang + ": latency stamped for every line, [DONE] included",
		"output_count":        srcSGLang + ": usage.completion_tokens, else the requested max tokens (issue #24254)",
		"tokenize_reasoning":  srcSGLang + ": retokenized count reported aside only",
		"special_tokens":      srcSGLang + ": add_special_tokens=False (retokenized aside)",
		"tpot_from":           srcSGLang + ": (latency − ttft)",
		"tpot_divisor":        srcSGLang + ": / (output_len − 1)",
		"tpot_count":          srcSGLang + ": output_len",
		"tpot_rounding":       srcSGLang + ": none",
		"itl":                 srcSGLang + ": one sample per content chunk",
		"percentile":          srcSGLang + ": np.percentile default",
		"std":                 srcSGLang + ": np.std (ddof 0)",
		"duration":            srcSGLang + ": dispatch to after profiler stop / server-info call",
		"throughput_requests": srcSGLang + ": completed / duration",
		"goodput":             srcSGLang + ": none (PR #5495 closed)",
	},
}

// SGLangNative is SGLang bench_serving with the native /generate backend:
// server token counts, token-split ITL.
var SGLangNative = func() Convention {
	c := withName(SGLang, "sglang-native", map[string]string{
		"output_count": srcSGLang + ": meta_info.completion_tokens",
		"itl":          srcSGLang + ": a chunk adding k tokens gives k samples of gap/k",
	})
	c.OutputTokens = []CountSource{CountServerUsage}
	c.ITL = ITLPooledTokenSplit
	return c
}()

// GuideLLM03 is guidellm v0.2–v0.3.
var GuideLLM03 = Convention{
	Name: "guidellm@0.3", Tool: "guidellm",
	Completed: CompletedOK, Responses: ResponsesTokens, ResponseUnit: UnitMessage, E2EEnd: E2EStreamEnd,
	OutputTokens: []CountSource{CountToolReported, CountServerUsage, CountRequested, CountTokenizer}, TPOTFrom: TPOTFromFirstResponse, TPOTDivisor: DivideN,
	TPOTRounding: RoundNone, ITL: ITLPerRequestMean, Percentile: PercentileWeightedNearestRank, StdDDOF: 0,
	Duration: DurationAllSpan, ThroughputRequests: ThroughputCompleted, Goodput: GoodputNone,
	Sources: map[string]string{
		"completed":           srcGuideLLM + " v0.3.0 benchmark.py: successful requests; N=0 dropped from TTFT/TPOT",
		"responses":           srcGuideLLM + " v0.3.0: first streamed iteration carrying tokens",
		"response_unit":       srcGuideLLM + ": iterations (SSE messages)",
		"e2e_end":             srcGuideLLM + ": request_latency = request_end − request_start",
		"output_count":        srcGuideLLM + " v0.3.0 benchmark/aggregator.py _compile_tokens_count: the record's output_tokens (usage, else the request's count, else tokenizer)",
		"tokenize_reasoning":  srcGuideLLM + " v0.3: content text",
		"special_tokens":      srcGuideLLM + " v0.3: none",
		"tpot_from":           srcGuideLLM + " v0.3.0 benchmark.py GenerativeTextResponseStats: (t_last − t_first)",
		"tpot_divisor":        srcGuideLLM + " v0.3.0: / N (docstring says TTFT included; code does not)",
		"tpot_count":          srcGuideLLM + ": output tokens",
		"tpot_rounding":       srcGuideLLM + ": none",
		"itl":                 srcGuideLLM + " v0.3.0: per request (t_last − t_first)/(N − 1), weighted by N − 1",
		"percentile":          srcGuideLLM + " v0.3 objects/statistics.py: weighted nearest rank (argmax cdf ≥ p)",
		"std":                 srcGuideLLM + ": from the weighted pmf (population)",
		"duration":            srcGuideLLM + " v0.3: max(end) − min(start) over all requests",
		"throughput_requests": srcGuideLLM + ": time-weighted rate distribution of request ends",
		"goodput":             srcGuideLLM + ": none",
	},
}

// GuideLLM04 is guidellm v0.4 and later: TPOT includes TTFT.
var GuideLLM04 = func() Convention {
	c := withName(GuideLLM03, "guidellm@0.4", map[string]string{
		"tpot_from":    srcGuideLLM + " 31e2630 schemas/request_stats.py: (t_last − t_request)/N, includes TTFT",
		"output_count": srcGuideLLM + " v0.4–v0.5 schemas/response.py compile_stats: the record's output_tokens (usage, else the request's target count; v0.6+ ef589a01: else token_iterations)",
		"duration":     srcGuideLLM + " v0.4+: scheduler measure window (measure_end − measure_start), in the file",
		"percentile":   srcGuideLLM + " v0.4+ schemas/statistics.py: weighted nearest rank (searchsorted left)",
		"completed":    srcGuideLLM + " v0.4+: no filter; missing values enter as 0 (trap)",
	})
	c.TPOTFrom = TPOTFromRequestStart
	c.OutputTokens = []CountSource{CountToolReported, CountServerUsage, CountResponses}
	c.Duration = DurationNotRecorded
	return c
}()

// MLPerf is MLPerf Inference LoadGen's token-latency convention.
var MLPerf = Convention{
	Name: "mlperf", Tool: "mlperf",
	Completed: CompletedOK, Responses: ResponsesTokens, ResponseUnit: UnitMessage, E2EEnd: E2EStreamEnd,
	OutputTokens: []CountSource{CountToolReported}, TPOTFrom: TPOTFromFirstResponse, TPOTDivisor: DivideNMinus1,
	TPOTRounding: RoundFloorNs, ITL: ITLPooledGaps, Percentile: PercentileFloorRank, StdDDOF: 0,
	Duration: DurationNotRecorded, ThroughputRequests: ThroughputCompleted, Goodput: GoodputNone,
	Sources: map[string]string{
		"completed":           srcMLPerf + ": every completed sample",
		"responses":           srcMLPerf + ": FirstTokenComplete called by the SUT; latency origin is the scheduled time",
		"response_unit":       srcMLPerf + ": SUT callbacks",
		"e2e_end":             srcMLPerf + ": QuerySamplesComplete",
		"output_count":        srcMLPerf + ": response.n_tokens from the SUT (includes the first token)",
		"tokenize_reasoning":  srcMLPerf + ": SUT count",
		"special_tokens":      srcMLPerf + ": SUT count",
		"tpot_from":           srcMLPerf + ": (latency − TTFT)",
		"tpot_divisor":        srcMLPerf + ": / (n_tokens − 1)",
		"tpot_count":          srcMLPerf + ": n_tokens",
		"tpot_rounding":       srcMLPerf + ": integer ns division",
		"itl":                 srcMLPerf + ": no ITL; no per-token times recorded",
		"percentile":          srcMLPerf + " results.cc: sorted[(size_t)(n·p)]",
		"std":                 srcMLPerf + ": no std reported",
		"duration":            srcMLPerf + ": test start → final_query_all_samples_done_time",
		"throughput_requests": srcMLPerf + ": (n − 1) / final completion time (Server)",
		"goodput":             srcMLPerf + ": none; PerfConstraintsMet = P99 TTFT and P99 TPOT within limits",
	},
}

// InferencePerf is kubernetes-sigs/inference-perf at v0.5+.
var InferencePerf = Convention{
	Name: "inference-perf", Tool: "inference-perf",
	Completed: CompletedNoError, Responses: ResponsesContent, ResponseUnit: UnitMessage, E2EEnd: E2EStreamEnd,
	OutputTokens: []CountSource{CountToolRaw, CountTokenizer, CountServerUsage}, TPOTFrom: TPOTFromFirstResponse, TPOTDivisor: DivideNMinus1,
	TPOTRounding: RoundNone, ITL: ITLTokenZeroGaps, Percentile: PercentileLinear, StdDDOF: 0,
	Duration: DurationAllSpan, ThroughputRequests: ThroughputCompleted, Goodput: GoodputFractionAndRate,
	Sources: map[string]string{
		"completed":           srcInfPerf + ": successful requests, empty replies included (corpus: output_len min 0)",
		"responses":           srcInfPerf + ": output_token_times from delta.content chunks only",
		"response_unit":       srcInfPerf + " v0.3+: one time per SSE message (≤v0.2: every line)",
		"e2e_end":             srcInfPerf + ": end_time − start_time",
		"output_count":        srcInfPerf + " v0.5: the tool's count of the whole reply (re-tokenized, or server completion_tokens with use_server_output_tokens)",
		"tokenize_reasoning":  srcInfPerf + ": response text",
		"special_tokens":      srcInfPerf + " PR #566: add_special_tokens=False",
		"tpot_from":           srcInfPerf + ": (t_last − t_first)",
		"tpot_divisor":        srcInfPerf + ": / (N_eff − 1)",
		"tpot_count":          srcInfPerf + ": N_eff",
		"tpot_rounding":       srcInfPerf + ": none",
		"itl":                 srcInfPerf + ": every token gets its chunk's time: pooled gaps incl. zeros",
		"percentile":          srcInfPerf + ": np.percentile default",
		"std":                 srcInfPerf + ": np.std",
		"duration":            srcInfPerf + ": max(end) − min(start) over all requests of the stage",
		"throughput_requests": srcInfPerf + ": successes / total_time",
		"goodput":             srcInfPerf + " docs/goodput.md: good / T and 100·good / successful",
	},
}

// InferencePerf02 is inference-perf up to v0.4 (v0.2: a time per SSE line,
// blank lines and [DONE] included; v0.3–0.4: per SSE message, usage and
// role messages included): TPOT divides by the number of recorded times,
// ITL pools those times' gaps. Registered as @0.2 and @0.4.
var InferencePerf02 = func() Convention {
	c := withName(InferencePerf, "inference-perf@0.2", map[string]string{
		"tpot_count": srcInfPerf + " ≤v0.4: (t_last − t_first)/(len(times) − 1), one time per SSE line (≤v0.2, issue #392) or message (v0.3–0.4, PR #452)",
		"itl":        srcInfPerf + " ≤v0.4: pooled gaps between recorded times (≈ half the decode time per token on ≤v0.2 files)",
	})
	c.TPOTCount = []CountSource{CountResponses}
	c.ITL = ITLPooledGaps
	return c
}()

// InferencePerf05 is inference-perf v0.5 (re-tokenized per-token times).
var InferencePerf05 = withName(InferencePerf, "inference-perf@0.5", map[string]string{
	"itl": srcInfPerf + " v0.5 PR #410: re-tokenized tokens, each at its chunk's time (zero gaps inside chunks)",
})

// withName copies c under a new name with some sources replaced.
func withName(c Convention, name string, sources map[string]string) Convention {
	c.Name = name
	src := make(map[string]string, len(c.Sources))
	for k, v := range c.Sources {
		src[k] = v
	}
	for k, v := range sources {
		src[k] = v
	}
	c.Sources = src
	return c
}

// Profiles are every named convention, canonical first.
var Profiles = []Convention{
	Canonical, GenAIPerf, AIPerf, LLMPerf2023, LLMPerf2024, LLMPerf2024Dec,
	VLLM, SGLang, SGLangNative, GuideLLM03, GuideLLM04, MLPerf, InferencePerf, InferencePerf02, InferencePerf05,
}

// profileAliases map tool names to their default profile.
var profileAliases = map[string]string{
	"canonical": "tokentrace", "llmperf": "llmperf@2024-12", "guidellm": "guidellm@0.4",
	"inference-perf@0.4": "inference-perf@0.2",
}

// LookupConvention returns the profile called name ("tokentrace",
// "genai-perf", "llmperf@2024-04", …; "llmperf" and "guidellm" name their
// latest versions).
func LookupConvention(name string) (Convention, error) {
	if a, ok := profileAliases[name]; ok {
		name = a
	}
	for _, c := range Profiles {
		if c.Name == name {
			return c, nil
		}
	}
	names := make([]string, len(Profiles))
	for i, c := range Profiles {
		names[i] = c.Name
	}
	sort.Strings(names)
	return Convention{}, fmt.Errorf("unknown convention %q (known: %s)", name, strings.Join(names, ", "))
}

// ToolConvention returns the profile of the tool that produced a run: the
// importer's detected convention (Run.Convention, e.g. "llmperf@2023-12"),
// else the tool's default profile; ok is false when the tool has none.
func ToolConvention(convention, tool string) (Convention, bool) {
	for _, name := range []string{convention, tool} {
		if name == "" {
			continue
		}
		if c, err := LookupConvention(name); err == nil {
			return c, true
		}
	}
	return Convention{}, false
}
