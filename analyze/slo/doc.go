// Package slo holds the grammar of SLOs and gates (ParseSLO, ParseGates,
// ReadGateFile), checks gates on a run's report and data (Check), with
// significance tests against a baseline, and computes the goodput capacity
// of a rate sweep (ComputeCapacity). A good request under an SLO is
// defined in package analyze (analyze.SLO, analyze.Constraint.Check), so
// the report's goodput, the gates and the plots share one rule.
//
// # SLO and gate grammar
//
// One grammar, two forms: an SLO is a list of per-request constraints that
// together define a good request (ParseSLO); gates are conditions over a
// run (ParseGates). Both are parsed and validated before any data is read;
// a syntax error is an *SLOError with the 1-based character position of
// the offending text. Spaces are allowed between tokens; items are
// separated by commas, semicolons or newlines (a comma inside parentheses
// belongs to its item).
//
//	slo        = constraint { sep constraint } | vllm-alias
//	constraint = latency ( "<=" | "<" ) time
//	           | "fluidity" deadlines ( ">=" | ">" ) fraction
//	latency    = a metric with "slo" in REPORT.md's metric table, but fluidity
//	             (today "ttft" | "ttfo" | "tpot" | "e2e" | "max_itl")
//	deadlines  = "(" time "," time ")"          (* TTFT deadline, TBT deadline *)
//	vllm-alias = key ":" number { ( " " | "," ) key ":" number }
//	key        = "ttft" | "tpot" | "e2el"         (* values in ms, vLLM's --goodput *)
//
//	gates      = gate { sep gate }
//	gate       = lhs op rhs
//	lhs        = stat "(" metric [ "|" cond { ( "&" | "and" ) cond } ] ")"
//	           | runmetric
//	           | "capacity" [ "(" fraction ")" ]  (* attainment target, default 0.9 *)
//	stat       = "p" number                       (* 0 < number < 100: p50, p99, p99.9 *)
//	           | "mean" | "min" | "max"
//	metric     = a per-request or pooled metric with "gate" in the metric table
//	             (today "ttft" | "ttfo" | "ttst" | "tpot" | "itl" | "e2e" | "max_itl"
//	             | "osl" | "isl" | "fluidity" deadlines)
//	cond       = a metric with "gate condition" ( "osl" | "isl" ) op tokens
//	                                              (* not with pooled itl *)
//	runmetric  = a run-level metric with "gate", or one of its aliases:
//	             "goodput" | "goodput.fraction"
//	           | "goodput_rate" | "goodput.requests_per_s"
//	           | "throughput" | "throughput.output_tokens_per_s"
//	           | "request_rate" | "throughput.requests_per_s"
//	           | "error_rate" | "requests.error_rate"
//	           | "data_warnings" | "warnings.data_check"
//	op         = "<=" | "<" | ">=" | ">"           (* "≤" and "≥" too, as Markdown prints them *)
//	rhs        = quantity
//	           | number "*" "baseline" [ ( "+" | "-" ) quantity ]
//	           | "baseline" [ "*" number ] [ ( "+" | "-" ) quantity ]
//	quantity   = number unit                      (* the unit the lhs takes: *)
//	time       = number ( "ns" | "us" | "µs" | "ms" | "s" )   (* required *)
//	fraction   = number [ "%" ]                   (* goodput, error_rate, fluidity *)
//	rate       = number ( "/s" | "req/s" )        (* goodput_rate, request_rate, capacity *)
//	tokrate    = number ( "tok/s" | "tokens/s" )  (* throughput *)
//	tokens     = number [ "tok" | "tokens" ]      (* osl, isl *)
//	count      = number                           (* data_warnings *)
//	sep        = "," | ";" | newline
//
// Units are required for times and rates: "500" is an error, never silently
// milliseconds. Latency constraints are upper bounds, fluidity a lower one;
// capacity is a floor. Per-request metrics: ttft, ttfo, ttst, tpot, e2e as
// in the report (under its convention); max_itl is a request's largest gap
// between two responses; fluidity(D_p, D_d) is Etalon's fluidity-index
// (analyze.FluidityIndex). Run metrics are the report's JSON keys: goodput =
// goodput.fraction, goodput_rate = goodput.requests_per_s, throughput =
// throughput.output_tokens_per_s, request_rate = throughput.requests_per_s,
// error_rate = requests.error_rate, data_warnings = the number of data
// checks that found the run's data wrong or impossible (analyze/TRAPS.md;
// data_warnings<=0 fails CI on data that disagrees with itself); capacity
// is DistServe's goodput over a
// rate sweep (Capacity). A gate against "baseline" is a regression gate: it
// fails only when the violation is significant (regressionSignificant),
// by the tests of analyze/stats that `tokentrace compare` also uses; a
// baseline holding runs of several configurations is matched to each run
// as compare matches (baseline.go, GateSpec.MatchKeys).
//
// Examples:
//
//	ttft<=500ms, tpot<=15ms, e2e<=2s
//	ttft:500 tpot:15 e2el:2000
//	p99(ttft)<=800ms, p99(tpot)<25ms, p99(e2e | osl<300)<=3s, goodput>=0.99
//	p1(fluidity(500ms,50ms))>=0.9, goodput_rate>=2.5/s, error_rate<=1%
//	p99(ttft) <= 1.10 * baseline, goodput >= baseline - 0.01
package slo
