package reproduce_test

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/tokenizer"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// toolReport imports dir and reports each run under its tool's convention.
func toolReport(t *testing.T, dir string, tok analyze.TokenCounter) *analyze.Report {
	t.Helper()
	jobs, _, err := registry.Resolve([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	a := analyze.NewAnalyzer(tools.Profiles()...)
	if tok != nil {
		a.SetTokenizer(tok)
	}
	// Runs that recorded a built-in tokenizer (GenAI-Perf corpus: gpt2) use it.
	a.SetTokenizerOpener(func(name string) (analyze.TokenCounter, error) { return tokenizer.Open(name) })
	if err := registry.Import(jobs, nil, ingest.Options{}, a); err != nil {
		t.Fatal(err)
	}
	opt := options
	opt.Convention = func(r *formats.Run) convention.Convention {
		c, ok := tools.ForRun(r.Convention, r.Tool)
		if !ok {
			t.Fatalf("run %s: no convention for tool %q", r.RunID, r.Tool)
		}
		return c
	}
	rep, err := a.Report(opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// fidelityCase is one corpus run and what its reproduction must show: every
// statistic the tool reported is reproduced within 1e-6, except those
// listed as not reproducible (with the reason's key phrase) or as
// approximate (differs, with a reason).
type fidelityCase struct {
	dir string
	// notReproducible maps "metric" or "metric/stat" to a phrase its reason
	// must contain.
	notReproducible map[string]string
	// differs lists "metric/stat" allowed to differ (with a reason).
	differs map[string]bool
	// sampled: the file keeps a sample of the requests, so differences
	// must say so.
	sampled bool
}

var aiperfNR = map[string]string{"http_req_": "HTTP timing", "osl_mismatch": "OSL-mismatch", "cache_read": "prompt-cache"}

func TestFidelity(t *testing.T) {
	var cases []fidelityCase
	dirs, _ := filepath.Glob("../../testdata/genai-perf/*")
	for _, d := range dirs {
		cases = append(cases, fidelityCase{dir: d, notReproducible: map[string]string{"input_sequence_length": "prompt text"}})
	}
	if len(dirs) != 2 {
		t.Fatalf("%d GenAI-Perf corpus runs, want 2", len(dirs))
	}
	dirs, _ = filepath.Glob("../../testdata/aiperf/*")
	for _, d := range dirs {
		cases = append(cases, fidelityCase{dir: d, notReproducible: aiperfNR})
	}
	dirs, _ = filepath.Glob("../../testdata/llmperf/*")
	for _, d := range dirs {
		cases = append(cases, fidelityCase{dir: d, notReproducible: map[string]string{
			"mean_output_throughput_token_per_s": "wall time", "num_completed_requests_per_min": "wall time",
			"request_output_throughput_token_per_s": "chunk count", "inter_token_latency_s": "chunk counter",
		}})
	}
	// Summary-only corpus runs (vLLM, SGLang, inference-perf publish no
	// per-request data): every statistic must say so.
	for _, glob := range []string{"../../testdata/vllm-bench/*", "../../testdata/sglang-bench/*", "../../testdata/inference-perf/*", "../../testdata/mlperf/*"} {
		dirs, _ = filepath.Glob(glob)
		for _, d := range dirs {
			cases = append(cases, fidelityCase{dir: d, notReproducible: map[string]string{"": "summary only"}})
		}
	}
	// guidellm's corpus report keeps 1 of its 46 requests: statistics over
	// successful requests differ (and say why); the others cannot be
	// recomputed, with reasons.
	dirs, _ = filepath.Glob("../../testdata/guidellm/*")
	for _, d := range dirs {
		// every non-reproducible statistic must carry a reason (checked
		// below); which one is the guidellm package's own test
		cases = append(cases, fidelityCase{dir: d, sampled: true, notReproducible: map[string]string{"": ""}})
	}
	perTool := map[string][3]int{}
	for _, fc := range cases {
		t.Run(filepath.Base(fc.dir), func(t *testing.T) {
			rep := toolReport(t, fc.dir, nil)
			for _, rr := range rep.Runs {
				rp := rr.Reproduction
				if rp == nil {
					if len(rr.Reported) > 0 {
						t.Fatalf("run %s: reported statistics but no reproduction", rr.RunID)
					}
					continue
				}
				for _, it := range rp.Items {
					key := it.Metric + "/" + it.Stat
					switch it.Status {
					case "reproduced":
					case "not_reproducible":
						phrase, ok := lookupPrefix(fc.notReproducible, it.Metric, key)
						if !ok {
							t.Errorf("%s: %s not reproducible (%s): reported %v", rr.RunID, key, it.Reason, it.Reported)
						} else if !strings.Contains(it.Reason, phrase) || it.Reason == "" {
							t.Errorf("%s: %s not reproducible, reason %q lacks %q", rr.RunID, key, it.Reason, phrase)
						}
					case "differs":
						if !fc.differs[key] && !(it.Reason != "" && strings.Contains(it.Reason, "t-digest")) && !(fc.sampled && strings.Contains(it.Reason, "sample")) {
							t.Errorf("%s: %s differs: reported %.12g recomputed %.12g (rel %.3g) %s", rr.RunID, key, float64(it.Reported), float64(it.Recomputed), float64(it.RelDiff), it.Reason)
						}
					}
				}
				c := perTool[rr.Tool]
				c[0] += rp.Reproduced
				c[1] += rp.Total
				c[2] += rp.NotReproducible
				perTool[rr.Tool] = c
				t.Logf("%s (%s): %d of %d reproduced, %d differ, %d not reproducible", rr.RunID, rp.Convention, rp.Reproduced, rp.Total, rp.Differs, rp.NotReproducible)
			}
		})
	}
	tools := make([]string, 0, len(perTool))
	for k := range perTool {
		tools = append(tools, k)
	}
	sort.Strings(tools)
	for _, k := range tools {
		c := perTool[k]
		t.Logf("fidelity %-10s reproduced %4d / %4d reported statistics (%d not reproducible from the files)", k, c[0], c[1], c[2])
	}
}

func lookupPrefix(m map[string]string, metric, key string) (string, bool) {
	if p, ok := m[key]; ok {
		return p, true
	}
	if p, ok := m[metric]; ok {
		return p, true
	}
	for k, p := range m {
		if k != "" && strings.Contains(metric, k) {
			return p, true
		}
	}
	if p, ok := m[""]; ok {
		return p, true
	}
	return "", false
}
