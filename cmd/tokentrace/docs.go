package main

// commandDocs are each command's long help (used where the command has
// none of its own) and its Example section, by command name. Every
// example is a real command line: TestEveryCommandDocumented parses each
// one with the command's own flags.
var commandDocs = map[string]struct{ long, example string }{
	"analyze": {
		long: `analyze imports traces (any supported tool's files, or directories holding them; - is
standard input), writes the events, requests and runs tables as Parquet and report.json to DIR,
draws every plot into DIR/plots/ with the self-contained DIR/report.html, and prints the report.

Latencies are computed under one convention (--convention; the default "tokentrace" is
documented in analyze/CONVENTIONS.md), so runs of different tools compare. A summary-only input
(a tool's aggregate file without per-request data) is reported from its own statistics.

Output: the report on stdout (--format text, json or markdown; nothing with -q); what was written
on stderr. Exit status: 0 on success, 1 on an error, 2 on a usage error.`,
		example: `  # three tools' runs, one convention, a goodput SLO
  tokentrace analyze results/aiperf results/llmperf/individual_responses.json -o out --slo 'ttft<=500ms,e2e<=15s'

  # standard input, its format named (a summary has no file name to tell it by)
  cat summary.json | tokentrace analyze - --from llmperf -o out

  # JSON report only, no plots, quiet
  tokentrace analyze run.jsonl -o out --no-plots --format json -q`,
	},
	"import": {
		long: `import reads traces and writes the three tables (events, requests, runs) to DIR as Parquet,
and as Arrow IPC files with --arrow; no report. The tables are documented column by column in
formats/SCHEMA.md. --layout hive writes one folder per run (DIR/requests/run_id=…/part-NNNNN.parquet),
so that several imports into one folder read as one dataset.`,
		example: `  tokentrace import results/profile_export.jsonl -o tables
  tokentrace import results/ -o dataset --layout hive --compression snappy --drop-text
  tokentrace import run.jsonl -o tables --arrow`,
	},
	"report": {
		long: `report prints the report of traces (imported on the fly, nothing written) or of table
directories written by analyze or import. The same inputs and flags give the same report as
analyze prints. --pool adds one report over all runs pooled; --format json gives the versioned
contract documented in analyze/REPORT.md.`,
		example: `  tokentrace report results/aiperf --slo 'ttft<=500ms,tpot<=15ms'
  tokentrace report out/ --format markdown >> "$GITHUB_STEP_SUMMARY"
  tokentrace report run-a run-b --pool --percentiles 50,90,99,99.9
  tokentrace report genai-perf-run --convention tool --tokenizer gpt2`,
	},
	"compare": {
		example: `  # two providers serving one model under different names
  tokentrace compare results/groq results/anyscale --ignore model --label groq --label anyscale --stat p50,p99

  # yesterday's build against today's, as a pull-request comment
  tokentrace compare baseline/ candidate/ --slo 'ttft<=500ms,e2e<=15s' --format markdown

  # two rate sweeps: curves, Pareto, knee, capacity and cost per million tokens
  tokentrace compare sweep-vllm/ sweep-sglang/ --slo 'ttft<=1s' --gpus 8 --cost-per-hour 2.5 --plot plots/`,
	},
	"reconcile": {
		example: `  # why GenAI-Perf's own P99 TTFT differs from tokentrace's
  tokentrace reconcile results/genai-perf --stat p99 --stat mean
  tokentrace reconcile out/ --from-convention llmperf --to-convention tokentrace --format markdown`,
	},
	"gate": {
		example: `  tokentrace gate results/ --slo 'ttft<=500ms,e2e<=15s' --gate 'p99(ttft)<=800ms, goodput>=0.95'
  tokentrace gate results/ --preset chat --junit gate.xml --format markdown >> "$GITHUB_STEP_SUMMARY"
  tokentrace gate new/ --baseline old/ --gate 'p99(ttft) <= 1.10 * baseline' --alpha 0.01
  tokentrace gate results/ --spec slo.yaml --json gate.json -q   # exit status only`,
	},
	"capacity": {
		example: `  tokentrace capacity sweep/rate-* --slo 'ttft<=500ms,tpot<=50ms'
  tokentrace capacity sweep/ --slo 'ttft<=500ms' --target 0.99 --gpus 8 --plot capacity.svg`,
	},
	"plot": {
		example: `  tokentrace plot results/ -o plots --slo 'ttft<=500ms' --html
  tokentrace plot run-a run-b -o plots --kind ccdf,goodput --slo 'e2e<=15s' --format png
  tokentrace plot results/llmperf -o plots --convention tokentrace,llmperf --kind ccdf`,
	},
	"export": {
		example: `  tokentrace export out/ --format csv -o csv
  tokentrace export results/profile_export.jsonl --format arrow -o arrow --drop-text`,
	},
	"synth": {
		example: `  tokentrace synth -o synth-run --format aiperf --requests 1000 --seed 7
  tokentrace synth -o sweep/rate-4 --format genai-perf --rate 4 --stall-prob 0.01 --failure-rate 0.02`,
	},
	"version": {
		long: `version prints tokentrace's version and the versions of the table schema (formats/SCHEMA.md)
and of the JSON report (analyze/REPORT.md); tokentrace --version prints the same line.`,
		example: `  tokentrace version
  tokentrace --version`,
	},
	"memory": {
		example: `  GOMEMLIMIT=2GiB tokentrace analyze big-run/ -o out
  GOGC=off GOMEMLIMIT=1GiB tokentrace report big-run/`,
	},
}
