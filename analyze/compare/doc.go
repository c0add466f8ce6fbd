// Package compare compares runs side by side the way golang.org/x/perf's
// benchstat compares benchmarks: a table per metric, the sides' values in
// columns, the change against the first side (the base), bounds of the
// difference from a significance test, "~" when the difference is not
// significant, and a geometric-mean row. `tokentrace compare` prints it;
// `tokentrace gate --baseline` matches runs and tests differences with the
// same functions, so the two cannot disagree.
//
// # Matching
//
// Each side is one argument's runs. A run's configuration (ConfigOf) is
// its value of each key of Keys: model, concurrency, rate (from the Run
// row), isl and osl (the configured mean lengths, from the tool's
// configuration echo), streaming. Runs are matched by the keys ParseKeys
// returns (--match keeps only the keys given, --ignore drops some): a
// configuration the base side and another side both have is compared
// (Match's Groups), and every other configuration is listed as unmatched,
// never dropped silently. Several runs of one side with the same
// configuration are repetitions (trials): their samples are pooled, and
// each run's own value is kept to show the between-run spread. When a
// side pairs nothing, Matching.Differ names the keys that kept the sides
// apart (LLMPerf's leaderboard providers name one model three ways:
// --ignore model).
//
// # Values and tests
//
// Per-request and pooled metrics (TTFT, TPOT, ITL, E2E, OSL, …) are
// compared by statistic (ParseStats: pNN, mean, min, max) over the pooled
// samples, read by each side's convention; run-level metrics have one
// value: a proportion (goodput, error rate) is all successes over all
// trials, a rate (throughput, request rate) the runs' mean. The tests are
// those of analyze/stats (stats/difference.go), one-sided at Alpha in
// each direction:
//
//   - percentiles: the distribution-free order-statistic bounds of each
//     side's percentile (the seeded percentile bootstrap, B = 2000, where
//     a sample is too small for them), the difference bounded by the
//     candidate's lower bound minus the base's upper and the candidate's
//     upper minus the base's lower;
//   - means: Welch's unequal-variance t test;
//   - proportions: the Agresti–Caffo interval and test;
//   - rates: Welch's t over the runs' values when both sides have two
//     runs or more; untested otherwise;
//   - extremes (min, max) and values a tool reported for a run without
//     per-request data: untested, shown side by side with the reason.
//
// A change is significant ("higher" or "lower") when the bound on its
// side excludes 0; the two bounds together are a (1 − 2·Alpha) interval
// (90% at the default 0.05, each bound a one-sided 95% bound). This is the
// verdict `gate --baseline` reaches on "STAT(metric) <= baseline" at the
// same --alpha.
package compare
