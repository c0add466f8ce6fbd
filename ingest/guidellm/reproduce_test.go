package guidellm

import (
	"math"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/analyze/stats"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// toolConvention is the run's guidellm profile with the file's own token
// count first among N's sources: guidellm's summaries use output_tokens as
// written (imported with source tool_reported), whatever its origin. Until
// the profiles Profile03/Profile04 list CountToolReported themselves, the
// test adds it (see the report of this change).
func toolConvention(t *testing.T, name string) convention.Convention {
	t.Helper()
	c, err := tools.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.OutputTokens {
		if s == convention.CountToolReported {
			return c
		}
	}
	c.OutputTokens = append([]convention.CountSource{convention.CountToolReported}, c.OutputTokens...)
	return c
}

// reproduceRuns imports path into an Analyzer and reports every run under
// its own guidellm convention.
func reproduceRuns(t *testing.T, path string) (*formats.Collector, *analyze.Report, map[string]convention.Convention) {
	t.Helper()
	convs := map[string]convention.Convention{Convention03: toolConvention(t, Convention03), Convention04: toolConvention(t, Convention04)}
	a := analyze.NewAnalyzer(convs[Convention03], convs[Convention04])
	var c formats.Collector
	if err := ingest.ImportFile(New(), path, ingest.Options{Label: "r"}, formats.Tee(a, &c)); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Report(analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools), Convention: func(r *formats.Run) convention.Convention { return convs[r.Convention] }})
	if err != nil {
		t.Fatal(err)
	}
	return &c, rep, convs
}

// sample is one quantity's per-request values and guidellm's weights,
// rebuilt here from the imported rows by guidellm's formulas.
type sample struct {
	xs, ws []float64
	scale  float64 // tokentrace unit → the tool's
}

func samplesByHand(reqs []formats.Request, runID, conv string) map[string]sample {
	s := map[string]sample{}
	add := func(q string, x, w, scale float64) {
		v := s[q]
		v.xs, v.ws, v.scale = append(v.xs, x), append(v.ws, w), scale
		s[q] = v
	}
	for _, r := range reqs {
		if r.RunID != runID || r.Status != formats.StatusOK {
			continue
		}
		n := float64(*r.OutputTokens)
		first, last, end := float64(*r.FirstTokenOffsetNs)/1e6, float64(*r.LastTokenOffsetNs)/1e6, float64(*r.StreamEndOffsetNs)/1e6
		add("time_to_first_token_ms", first, 1, 1)
		add("request_latency", end, 1, 1e-3)
		add("output_token_count", n, 1, 1)
		add("prompt_token_count", float64(*r.InputTokens), 1, 1)
		tpot := (last - first) / n // v0.3
		if conv == Convention04 {
			tpot = last / n // from the request start
		}
		add("time_per_output_token_ms", tpot, n, 1)
		if n > 1 {
			add("inter_token_latency_ms", (last-first)/(n-1), n-1, 1)
		}
	}
	return s
}

// needsWiring are the statistics analyze's generic statOf gets wrong for
// guidellm (token weights ignored by percentiles and count, tool-only
// names, count multiplied by the unit scale): they reproduce through
// stats.PMFStat once recompute calls it for guidellm runs.
func needsWiring(metric, stat string) bool {
	switch stat {
	case "mode", "variance", "std_dev", "total_sum", "count":
		return true
	}
	return strings.HasPrefix(metric, "time_per_output_token_ms.") || strings.HasPrefix(metric, "inter_token_latency_ms.")
}

// notReproducible lists metric prefixes and suffixes with a phrase of their
// reason, metric-specific ones first.
var notReproducible = []struct{ match, phrase string }{
	{"request_streaming_iterations_count.", "iteration counts"},
	{"total_token_count.", "prompt + output"},
	{"request_totals.incomplete", "cancelled"},
	{"warmup_duration", "measurement window"},
	{"cooldown_duration", "measurement window"},
	{"duration", "measurement window"}, // v0.4+ only: v0.3's reproduces
	{".incomplete", "successful requests only"},
	{".errored", "successful requests only"},
	{".total", "successful requests only"},
}

// TestReproduce checks that recomputing the hand-made fixtures under their
// tool's convention gives back the summaries FIXTURES.md computed by
// guidellm's rules: every statistic of the successful requests' TTFT, TPOT
// (token-weighted), ITL (weighted by N − 1), E2E, OSL and ISL, the request
// totals and (v0.3) the duration.
func TestReproduce(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		runs       int
		// items the generic path reproduces now, and in all
		direct, total int
	}{
		{"v03-requests", "testdata/v03-requests/benchmarks.json", 2, 0, 0},
		{"v04-requests", "testdata/v04-requests/benchmarks.json", 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rep, convs := reproduceRuns(t, tc.path)
			if len(rep.Runs) != tc.runs {
				t.Fatalf("%d runs", len(rep.Runs))
			}
			for _, rr := range rep.Runs {
				rp := rr.Reproduction
				if rp == nil {
					t.Fatalf("run %s: no reproduction", rr.RunID)
				}
				conv := convs[rp.Convention]
				hand := samplesByHand(c.Requests, rr.RunID, rp.Convention)
				direct, viaHook, nr := 0, 0, 0
				for _, it := range rp.Items {
					key := it.Metric + "/" + it.Stat
					if it.Status == "reproduced" {
						direct++
						continue
					}
					if phrase, ok := nrPhrase(it.Metric); ok {
						if it.Status != "not_reproducible" || !strings.Contains(it.Reason, phrase) {
							t.Errorf("%s %s: %s %q, want not reproducible (%q)", rr.RunID, key, it.Status, it.Reason, phrase)
						}
						nr++
						continue
					}
					base, _, _ := strings.Cut(it.Metric, ".")
					smp, ok := hand[base]
					if !ok || !needsWiring(it.Metric, it.Stat) {
						t.Errorf("%s %s: %s (reported %.12g, recomputed %.12g) %s", rr.RunID, key, it.Status, float64(it.Reported), float64(it.Recomputed), it.Reason)
						continue
					}
					ws := smp.ws
					if base != "time_per_output_token_ms" && base != "inter_token_latency_ms" {
						ws = nil
					}
					v, ok := stats.PMFStat(smp.xs, ws, smp.scale, it.Stat, conv.Name != Convention03)
					if !ok || !close(v, float64(it.Reported)) {
						t.Errorf("%s %s: PMFStat %.12g, reported %.12g", rr.RunID, key, v, float64(it.Reported))
						continue
					}
					viaHook++
				}
				if direct+viaHook+nr != rp.Total {
					t.Errorf("%s: %d + %d + %d of %d items accounted for", rr.RunID, direct, viaHook, nr, rp.Total)
				}
				t.Logf("%s (%s): %d of %d reported statistics reproduced by the report, %d more by GuideLLMStat (recompute must call it), %d not reproducible", rr.RunID, rp.Convention, direct, rp.Total, viaHook, nr)
			}
		})
	}
}

func nrPhrase(metric string) (string, bool) {
	for _, r := range notReproducible {
		if strings.HasSuffix(metric, r.match) || strings.HasPrefix(metric, r.match) {
			return r.phrase, true
		}
	}
	return "", false
}

func close(a, b float64) bool {
	if b == 0 {
		return math.Abs(a) <= 1e-9
	}
	return math.Abs(a-b) <= analyze.ReproTolerance*math.Abs(b)
}

// TestReproduceHandValues pins a few of the fixtures' numbers to values
// worked out by hand from the records (FIXTURES.md), so that a mistake
// shared by the generator and GuideLLMStat would still show.
func TestReproduceHandValues(t *testing.T) {
	c, _ := importFile(t, "testdata/v04-requests/benchmarks.json", "h")
	run := c.Runs[0]
	// TPOT v0.4 = (t_last − t_request)/N per request, weighted by N:
	// a1 (0.12 + 63·0.020)/64, a2 (0.15 + 127·0.018)/128, a3 (0.2 + 15·0.025)/16,
	// a4 (0.09 + 199·0.022)/200, a5 0.11/1, a6 (0.13 + 63·0.021)/64 seconds;
	// weighted mean = Σ(t_last − t_request)/ΣN = 10.422 s / 473.
	if got, want := reported(t, run, "time_per_output_token_ms.successful", "mean"), 10422.0/473; math.Abs(got-want) > 1e-4 {
		t.Errorf("TPOT mean %v, by hand %v", got, want)
	}
	// Weighted median: sorted TPOTs 19.03 (a2, w128), 21.56 (a1, w64), 22.34 (a4, w200),
	// 22.70 (a6, w64), 35.94 (a3, w16), 110 (a5, w1); cumulative weights 128, 192,
	// 392 ≥ 236.5 = 473/2 → a4's (0.09 + 199·0.022)/200 = 22.34 ms.
	if got := reported(t, run, "time_per_output_token_ms.successful", "median"); math.Abs(got-22.34) > 1e-4 {
		t.Errorf("TPOT median %v, by hand 22.34", got)
	}
	// ITL mean = Σ(t_last − t_first)/Σ(N − 1) over N > 1: (1.26 + 2.286 + 0.375 + 4.378
	// + 1.323) s / (63 + 127 + 15 + 199 + 63) = 9.622 s / 467.
	if got, want := reported(t, run, "inter_token_latency_ms.successful", "mean"), 9622.0/467; math.Abs(got-want) > 1e-4 {
		t.Errorf("ITL mean %v, by hand %v", got, want)
	}
	c3, _ := importFile(t, "testdata/v03-requests/benchmarks.json", "h3")
	r3 := c3.Runs[0]
	// TPOT v0.3 = (t_last − t_first)/N: s1 127·12/128, s2 63·20/64, s3 0/1, s4 99·15/100,
	// s5 9·30/10 ms, weighted by N: Σ(t_last − t_first)/ΣN = (1524 + 1260 + 0 + 1485 + 270)/303.
	if got, want := reported(t, r3, "time_per_output_token_ms.successful", "mean"), 4539.0/303; math.Abs(got-want) > 1e-4 {
		t.Errorf("v0.3 TPOT mean %v, by hand %v", got, want)
	}
	// v0.3 ITL leaves s3 (N = 1) out: 4539 ms / (127 + 63 + 99 + 9).
	if got, want := reported(t, r3, "inter_token_latency_ms.successful", "mean"), 4539.0/298; math.Abs(got-want) > 1e-4 {
		t.Errorf("v0.3 ITL mean %v, by hand %v", got, want)
	}
}

// TestReproduceSampled shows why a sampled run cannot be reproduced: the
// summaries cover six successful requests, the file keeps two.
func TestReproduceSampled(t *testing.T) {
	_, rep, _ := reproduceRuns(t, "testdata/v04-sampled/benchmarks.json")
	rp := rep.Runs[0].Reproduction
	differs := 0
	for _, it := range rp.Items {
		if it.Metric == "time_to_first_token_ms.successful" && it.Stat == "mean" && it.Status == "differs" {
			differs++
		}
	}
	if differs != 1 {
		t.Errorf("sampled run: TTFT mean not flagged as differing: %+v", rp)
	}
}

// tools are the canonical convention and this tool's profiles.
var tools = convention.NewSet(analyze.Canonical, Tool)
