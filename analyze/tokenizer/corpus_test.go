package tokenizer

import (
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// specForGolden maps a golden.json key to an Open spec.
func specForGolden(t *testing.T, key string) string {
	t.Helper()
	switch {
	case builtinAliases[key] != "":
		return key
	case key == "sentencepiece:llama2":
		return llama2Model(t)
	case hfFixtures[key] != "":
		return npmFixture(t, hfFixtures[key])
	case strings.HasPrefix(key, "tokenizer.json:tiny-"):
		return filepath.Join("testdata", strings.TrimPrefix(key, "tokenizer.json:"))
	case strings.HasPrefix(key, "sentencepiece:tiny-"):
		return filepath.Join("testdata", strings.TrimPrefix(key, "sentencepiece:"))
	}
	t.Fatalf("golden.json key %q has no spec", key)
	return ""
}

// TestGolden compares every count with the reference implementations'
// (Hugging Face tokenizers, tiktoken, sentencepiece; see golden.mjs), on
// the edge-case texts and on the generated texts of the bundled runs.
func TestGolden(t *testing.T) {
	g := loadGolden(t)
	texts := corpusTexts(t, g)
	keys := make([]string, 0, len(g.Counts))
	for k := range g.Counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		t.Run(strings.NewReplacer(":", "_", "/", "_").Replace(key), func(t *testing.T) {
			tok := mustOpen(t, specForGolden(t, key))
			total, agree := 0, 0
			for set, want := range g.Counts[key] {
				for i, w := range want {
					s := texts[set][i]
					for j, addSpecial := range []bool{false, true} {
						total++
						got := mustCount(t, tok, s, addSpecial)
						if got == w[j] {
							agree++
							continue
						}
						if len(s) > 80 {
							s = s[:80] + "…"
						}
						t.Errorf("%s[%d] addSpecial=%v: got %d, reference %d; text %q", set, i, addSpecial, got, w[j], s)
					}
				}
			}
			t.Logf("%s: %d/%d counts equal the reference", key, agree, total)
		})
	}
}

// GenAI-Perf: output_sequence_length = len(AutoTokenizer("gpt2").encode(
// text, add_special_tokens=False)) of the concatenated content, and
// input_sequence_length = the same of the messages' contents joined by a
// space. Both bundled runs used --tokenizer gpt2. The statistics are
// numpy's (linear percentiles, population std).
func TestGenAIPerfSequenceLengths(t *testing.T) {
	tok := mustOpen(t, "gpt2")
	for _, run := range genaiPerfRuns {
		var summary map[string]any
		readJSON(t, filepath.Join("../../testdata/genai-perf", run, "profile_export_genai_perf.json"), &summary)
		for metric, texts := range map[string][]string{
			"output_sequence_length": genaiPerfOutputs(t, run),
			"input_sequence_length":  genaiPerfInputs(t, run),
		} {
			counts := make([]float64, len(texts))
			for i, s := range texts {
				counts[i] = float64(mustCount(t, tok, s, false))
			}
			want := summary[metric].(map[string]any)
			got := numpyStats(counts)
			for _, stat := range []string{"avg", "min", "max", "p25", "p50", "p75", "p90", "p95", "p99", "std"} {
				w := want[stat].(float64)
				if math.Abs(got[stat]-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Errorf("%s %s %s = %v, GenAI-Perf reported %v", run, metric, stat, got[stat], w)
				}
			}
			t.Logf("%s %s: n=%d avg=%v p90=%v (GenAI-Perf: avg=%v p90=%v)", run, metric, len(counts), got["avg"], got["p90"], want["avg"], want["p90"])
		}
	}
}

func numpyStats(v []float64) map[string]float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	pct := func(p float64) float64 {
		pos := p / 100 * float64(len(s)-1)
		lo := math.Floor(pos)
		hi := math.Min(lo+1, float64(len(s)-1))
		return s[int(lo)] + (s[int(hi)]-s[int(lo)])*(pos-lo)
	}
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(len(s))
	ss := 0.0
	for _, x := range s {
		ss += (x - mean) * (x - mean)
	}
	return map[string]float64{
		"avg": mean, "min": s[0], "max": s[len(s)-1], "std": math.Sqrt(ss / float64(len(s))),
		"p25": pct(25), "p50": pct(50), "p75": pct(75), "p90": pct(90), "p95": pct(95), "p99": pct(99),
	}
}

// LLMPerf: number_output_tokens = len(LlamaTokenizerFast(
// "hf-internal-testing/llama-tokenizer").encode(text)), BOS included. The
// leaderboard's Bedrock run keeps the generated text (GEN_TEXT) of all 150
// rows, the 49 rows flagged error_code -100 ("Output too few tokens")
// included; every row must agree.
func TestLLMPerfNumberOutputTokens(t *testing.T) {
	tok := mustOpen(t, llama2Model(t))
	var rows []llmperfRow
	readJSON(t, "../../testdata/llmperf/leaderboard-bedrock-70b/individual_responses.json", &rows)
	agree, errRows, errAgree := 0, 0, 0
	for i, r := range rows {
		got := mustCount(t, tok, r.GenText, true)
		if r.ErrorCode != nil {
			errRows++
		}
		if got == r.NumberOutputTokens {
			agree++
			if r.ErrorCode != nil {
				errAgree++
			}
			continue
		}
		t.Errorf("row %d (error_code %v): count+BOS %d, number_output_tokens %d", i, r.ErrorCode, got, r.NumberOutputTokens)
	}
	t.Logf("Llama-2 tokenizer.model + BOS = number_output_tokens on %d/%d rows (%d/%d error rows)", agree, len(rows), errAgree, errRows)
	if len(rows) != 150 {
		t.Errorf("%d rows, want 150", len(rows))
	}
	// The LLMPerf convention with the wrong tokenizer: Mistral's vocabulary
	// (the @lenml "llama2" package) disagrees on most rows, which is why
	// the tokenizer must be the one the tool used.
	mistral := mustOpen(t, npmFixture(t, hfFixtures["tokenizer.json:tokenizer-llama2"]))
	same := 0
	for _, r := range rows {
		if mustCount(t, mistral, r.GenText, true) == r.NumberOutputTokens {
			same++
		}
	}
	t.Logf("Mistral tokenizer.json + BOS = number_output_tokens on %d/%d rows", same, len(rows))
}
