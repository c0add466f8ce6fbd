// Package analyze is tokentrace's core: it recomputes LLM-inference
// latency metrics from the tables under a documented Convention
// (CONVENTIONS.md) — TTFT, TTFO, TTST, TPOT, ITL, E2E, OSL/ISL, throughput
// and goodput, each defined once in the metric Table (metric.go) — per
// request as rows stream by (Analyzer, ComputeRequest), and builds the
// report whose JSON contract is REPORT.md.
//
// The rest of the analysis lives in rooms around it: analyze/stats
// (percentile methods, intervals, summaries: no knowledge of requests),
// analyze/slo (the SLO and gate grammar, gates, capacity), analyze/reproduce
// (each tool's own statistics recomputed, reconcile) and analyze/render
// (text, Markdown, JSON and the HTML tables). What tokentrace knows of each
// peer tool comes from its importer through convention.Tool values
// (Options.Tools).
package analyze
