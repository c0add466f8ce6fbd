package inferenceperf_test

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/inferenceperf"
)

// words is the fixtures' tokenizer: inference-perf "counted" their tokens
// with it (testdata/make_fixtures.py), so tokentrace re-tokenizing with it
// is what the InferencePerf profile's CountTokenizer means — as a user
// would give tokentrace the run's own tokenizer (Llama-3 for a real run).
type words struct{}

func (words) Name() string                        { return "whitespace" }
func (words) Count(s string, _ bool) (int, error) { return len(strings.Fields(s)), nil }

// reproduce imports path into an Analyzer computing under convs and
// reports every run under convs[0] (Options.Convention).
func reproduceIn(t *testing.T, path string, tok analyze.TokenCounter, convs ...convention.Convention) *analyze.Report {
	t.Helper()
	a := analyze.NewAnalyzer(convs...)
	if tok != nil {
		a.SetTokenizer(tok)
	}
	if err := ingest.ImportFile(inferenceperf.New(), path, ingest.Options{}, a); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: func(*formats.Run) convention.Convention { return convs[0] }})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// notReproducible lists, by metric (or metric prefix ending in "."), a
// phrase the reason of a not-reproducible statistic must contain: the
// statistics inference-perf reports that no per-request file can give
// back, each for a stated reason.
var notReproducible = map[string]string{
	"load_summary.schedule_delay":                        "intended start",
	"load_summary.send_duration":                         "send_duration",
	"load_summary.achieved_rate":                         "send_duration",
	"load_summary.requested_rate":                        "configured",
	"successes.latency.normalized_time_per_output_token": "E2E/N",
	"successes.throughput.input_tokens_per_sec":          "input_tokens_per_sec",
	"successes.throughput.images_per_sec":                "image",
	"successes.throughput.videos_per_sec":                "image",
	"successes.throughput.audios_per_sec":                "image",
	"successes.request_size_bytes":                       "request-size",
	"successes.image.":                                   "image",
	"successes.video.":                                   "image",
	"successes.audio.":                                   "image",
	"successes.prompt_tokens.cached":                     "prompt-cache",
	"successes.prompt_tokens.uncached":                   "prompt-cache",
	"failures.prompt_tokens.cached":                      "prompt-cache",
	"failures.prompt_tokens.uncached":                    "prompt-cache",
	"successes.token_count_mismatches":                   "per-chunk",
	"failures.request_latency":                           "failed requests",
	"failures.by_label":                                  "classification",
	"prometheus.":                                        "server-side",
	"prometheus.benchmark_time_seconds":                  "0.0",
}

func reasonFor(metric string) (string, bool) {
	if p, ok := notReproducible[metric]; ok {
		return p, true
	}
	for k, p := range notReproducible {
		if strings.HasSuffix(k, ".") && strings.HasPrefix(metric, k) {
			return p, true
		}
	}
	return "", false
}

// check asserts that every statistic of rr's reproduction is reproduced,
// or not reproducible for its listed reason, or differs and is listed in
// differs; it returns the metrics reproduced.
func check(t *testing.T, rr *analyze.RunReport, differs map[string]bool, extraNR ...map[string]string) map[string]int {
	t.Helper()
	if rr.Reproduction == nil {
		t.Fatalf("run %s: no reproduction", rr.RunID)
	}
	got := map[string]int{}
	seen := map[string]bool{}
	for _, it := range rr.Reproduction.Items {
		switch it.Status {
		case "reproduced":
			got[it.Metric]++
		case "not_reproducible":
			phrase, ok := reasonFor(it.Metric)
			for _, m := range extraNR {
				if p, found := m[it.Metric]; found {
					phrase, ok = p, true
				}
			}
			if !ok || !strings.Contains(it.Reason, phrase) {
				t.Errorf("%s: %s/%s not reproducible: %s (reported %v)", rr.RunID, it.Metric, it.Stat, it.Reason, it.Reported)
			}
		case "differs":
			seen[it.Metric] = true
			if !differs[it.Metric] {
				t.Errorf("%s: %s/%s differs: reported %.12g, recomputed %.12g", rr.RunID, it.Metric, it.Stat, float64(it.Reported), float64(it.Recomputed))
			}
		}
	}
	for m := range differs {
		if !seen[m] {
			t.Errorf("%s: %s was expected to differ but does not", rr.RunID, m)
		}
	}
	return got
}

// recomputed returns the recomputed value of metric/stat.
func recomputed(t *testing.T, rr *analyze.RunReport, metric, stat string) float64 {
	t.Helper()
	for _, it := range rr.Reproduction.Items {
		if it.Metric == metric && it.Stat == stat {
			return float64(it.Recomputed)
		}
	}
	t.Fatalf("%s: no %s/%s", rr.RunID, metric, stat)
	return 0
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestReproduceHeadTwoStages recomputes both stages of the v0.6+ fixture
// under inferenceperf.Profile and finds every client statistic
// inference-perf reported: TTFT, TPOT, ITL (pooled, with the zero gaps
// inside multi-token chunks), E2E, output_len, prompt and server token
// counts, throughput over max(end) − min(start), the counts and the
// duration — 14 statistics each for the distributions (mean, min, max and
// 11 numpy-linear percentiles).
func TestReproduceHeadTwoStages(t *testing.T) {
	rep := reproduceIn(t, "testdata/head-2stages/per_request_lifecycle_metrics.json", words{}, inferenceperf.Profile)
	if len(rep.Runs) != 3 {
		t.Fatalf("%d runs", len(rep.Runs))
	}
	wantStage := map[string]int{
		"benchmark_time_seconds": 1, "load_summary": 1, "successes": 1, "failures": 1, "failures.prompt_tokens.total": 1,
		"successes.latency.request_latency": 14, "successes.latency.time_to_first_token": 14,
		"successes.latency.time_per_output_token": 14, "successes.latency.inter_token_latency": 14,
		"successes.throughput.requests_per_sec": 1, "successes.throughput.output_tokens_per_sec": 1,
		"successes.throughput.total_tokens_per_sec": 1,
		"successes.prompt_tokens":                   14, "successes.prompt_tokens.total": 1,
		"successes.output_len": 14, "successes.output_tokens": 14, "successes.output_tokens.total": 1,
	}
	for i, rr := range rep.Runs[:2] {
		got := check(t, rr, nil)
		want := map[string]int{}
		for k, v := range wantStage {
			want[k] = v
		}
		if i == 1 { // stage 1's 429: failures.prompt_tokens over the failed request
			want["failures.prompt_tokens"] = 14
		}
		for m, n := range want {
			if got[m] != n {
				t.Errorf("%s: %s: %d statistics reproduced, want %d", rr.RunID, m, got[m], n)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: reproduced %v", rr.RunID, keys(got))
		}
		t.Logf("%s: %d of %d reproduced, %d not reproducible", rr.RunID, rr.Reproduction.Reproduced, rr.Reproduction.Total, rr.Reproduction.NotReproducible)
	}
	// Hand-checked values (s), stage 0 (r0, r1, r2):
	s0 := rep.Runs[0]
	for _, x := range []struct {
		metric, stat string
		want         float64
	}{
		// TTFT 0.100, 0.080, 0.050
		{"successes.latency.time_to_first_token", "mean", (0.1 + 0.08 + 0.05) / 3},
		// TPOT (0.150−0.100)/3, (0.640−0.580)/4, (0.090−0.050)/1
		{"successes.latency.time_per_output_token", "median", 0.05 / 3},
		{"successes.latency.time_per_output_token", "max", 0.04},
		// ITL pooled per token: r0 .02 0 .03, r1 .02 .04 0 0, r2 .04 → 8 gaps summing to 0.15
		{"successes.latency.inter_token_latency", "mean", 0.15 / 8},
		{"successes.latency.inter_token_latency", "p25", 0},
		{"successes.latency.inter_token_latency", "p75", 0.0325},
		// throughput over max(end) − min(start) = 1001.100 − 1000.000
		{"successes.throughput.output_tokens_per_sec", "value", 11 / 1.1},
		{"benchmark_time_seconds", "value", 1.1},
	} {
		if got := recomputed(t, s0, x.metric, x.stat); !near(got, x.want) {
			t.Errorf("stage 0 %s/%s recomputed %v, want %v", x.metric, x.stat, got, x.want)
		}
	}
	// The summary over both stages: its requests are in the stage runs, so
	// nothing is recomputed in it.
	if sum := rep.Runs[2]; sum.RunID != "head-2stages" || sum.Reproduction == nil || sum.Reproduction.Reproduced != 0 || sum.Requests.Total != 0 {
		t.Errorf("summary run %+v", sum.Reproduction)
	}
}

// TestReproduceHeadWithoutTokenizer: the InferencePerf profile takes N
// from the tool's own whole-reply count first (tool_reported_raw), so no
// tokenizer is needed: r5's server counted 5 tokens where inference-perf's
// tokenizer found 4, and both stages still reproduce.
func TestReproduceHeadWithoutTokenizer(t *testing.T) {
	rep := reproduceIn(t, "testdata/head-2stages/per_request_lifecycle_metrics.json", nil, inferenceperf.Profile)
	check(t, rep.Runs[0], nil)
	check(t, rep.Runs[1], nil)
}

// TestReproduceV02Lines recomputes the ≤v0.2 fixture (one time per SSE
// line). Under inferenceperf.Profile TTFT, ITL and E2E reproduce, but TPOT
// and output_len cannot (the profile's N comes from a tokenizer over text
// the v0.2 file does not keep, or from server usage it does not have), and
// the output-token throughput differs (Σ N = 0). A profile for these
// versions — N = the tool's own count (tool_reported_raw) and a TPOT
// divisor of the recorded times (chunk_count) — reproduces everything,
// TPOT included, which is why a versioned "inference-perf@0.2" profile is
// proposed.
func TestReproduceV02Lines(t *testing.T) {
	const path = "testdata/v02-lines/per_request_lifecycle_metrics.json"
	// Under the v0.5+ profile, the ≤v0.2 file's TPOT differs: v0.2 divided
	// by its recorded line times, not by the token count.
	rep := reproduceIn(t, path, words{}, inferenceperf.Profile)
	for _, it := range rep.Runs[0].Reproduction.Items {
		if it.Metric == "successes.latency.time_per_output_token" && it.Status != "differs" {
			t.Errorf("under the v0.5+ profile %s/%s: %s", it.Metric, it.Stat, it.Status)
		}
	}

	line := inferenceperf.Profile02
	rep = reproduceIn(t, path, nil, line)
	got := check(t, rep.Runs[0], nil)
	for _, m := range []string{"successes.latency.time_per_output_token", "successes.output_len", "successes.latency.time_to_first_token"} {
		if got[m] != 14 {
			t.Errorf("under %s: %s: %d reproduced", line.Name, m, got[m])
		}
	}
	// TPOT of request 1, the largest: (111.004 − 30) ms over the 10 − 1 gaps
	// of its line times = 9.0004 ms, where its data lines (30, 60, 80, 110
	// ms) give a decode time per token of 80/3 = 26.7 ms: the per-line
	// deflation the notes warn about (about half for 64-token replies, more
	// for these short ones).
	if v := recomputed(t, rep.Runs[0], "successes.latency.time_per_output_token", "max"); !near(v, 0.081004/9) {
		t.Errorf("TPOT max %v", v)
	}
}

// TestReproduceEdgeV06 names, by recomputation, where tokentrace's
// InferencePerf profile and inference-perf still part ways on the edge
// fixture (the profile counts empty replies as successes, takes the tool's
// own N, and pools the first chunk's in-chunk zero gaps, so those agree):
//   - time_to_first_token: inference-perf takes TTFT only from requests
//     with two or more token times (the one-token reply e2 has none); the
//     profile takes every request's first response.
//   - output_tokens: inference-perf falls back to its own count for e4,
//     which has no server usage; osl_usage has no value for it.
func TestReproduceEdgeV06(t *testing.T) {
	const path = "testdata/edge-v06/per_request_lifecycle_metrics.json"
	differs := map[string]bool{
		"successes.latency.time_to_first_token": true,
		"successes.output_tokens":               true, "successes.output_tokens.total": true,
	}
	rep := reproduceIn(t, path, words{}, inferenceperf.Profile)
	rr := rep.Runs[0]
	check(t, rr, differs)
	// TTFT: inference-perf's 0.040, 0.050, 0.040 (e0, e1, e4) against
	// 0.040, 0.050, 0.030, 0.040 with e2's one-token reply.
	if v := recomputed(t, rr, "successes.latency.time_to_first_token", "mean"); !near(v, 0.16/4) {
		t.Errorf("TTFT mean %v", v)
	}
	// ITL: inference-perf pools .02 .03 | 0 .03 | .02 .03: 6 gaps, mean
	// 0.13/6, the zero inside e1's first (2-token) chunk included.
	if v := recomputed(t, rr, "successes.latency.inter_token_latency", "mean"); !near(v, 0.13/6) {
		t.Errorf("ITL mean %v", v)
	}
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tools are the canonical convention and inference-perf's profiles.
var tools = convention.NewSet(analyze.Canonical, inferenceperf.Tool)
