package tokenizer

import (
	"testing"
)

// benchTexts are the generated texts of the bundled GenAI-Perf and LLMPerf
// runs (285 texts, 169 KB of mostly English prose).
func benchTexts(b *testing.B) []string {
	b.Helper()
	var texts []string
	for _, run := range genaiPerfRuns {
		texts = append(texts, genaiPerfOutputs(b, run)...)
	}
	var rows []llmperfRow
	readJSON(b, "../../testdata/llmperf/leaderboard-bedrock-70b/individual_responses.json", &rows)
	for _, r := range rows {
		texts = append(texts, r.GenText)
	}
	return texts
}

// BenchmarkCount reports the counting speed in tokens/s (and MB/s of
// text) for the built-in r50k_base (GenAI-Perf's gpt2) and, when
// tools/tokenizer-fixtures is installed, the real tokenizer files.
func BenchmarkCount(b *testing.B) {
	texts := benchTexts(b)
	size := 0
	for _, s := range texts {
		size += len(s)
	}
	var toks []labeled
	for _, name := range []string{"r50k_base", "cl100k_base", "o200k_base"} {
		toks = append(toks, labeled{name, mustOpen(b, name)})
	}
	toks = append(toks, realTokenizers()...)
	for _, l := range toks {
		tok := l.tok
		perPass := 0
		for _, s := range texts {
			perPass += mustCount(b, tok, s, false)
		}
		b.Run(l.label, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, s := range texts {
					if _, err := tok.Count(s, false); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(perPass)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
	// All goroutines sharing one tokenizer.
	tok := toks[0].tok
	perPass := 0
	for _, s := range texts {
		perPass += mustCount(b, tok, s, false)
	}
	b.Run(tok.Name()+"/parallel", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				for _, s := range texts {
					if _, err := tok.Count(s, false); err != nil {
						b.Error(err)
						return
					}
				}
			}
		})
		b.ReportMetric(float64(perPass)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
}
