// The nodejs-polars side of `make bench`: per-request TTFT, E2E and TPOT of
// a benchmark run under tokentrace's canonical convention
// (analyze/CONVENTIONS.md; see py_stats.py for the rules per format), their
// P50/P90/P99 (quantile 'linear', numpy's rule) and the pooled ITL's P99,
// written as a polars user would: the file read by polars' native JSON
// readers (scanJson with a declared schema for JSON lines, readJSON for
// documents), lists exploded, SSE strings classified with vectorized regex
// matches. Prints one JSON line.
//
// nodejs-polars 0.25.2: readJSON's "lines" format is broken (scanJson
// reads JSON lines instead), and its JSON parser rejects Python's bare
// Infinity, which SGLang writes for an unlimited request rate: the line is
// read into a Buffer and that token blanked before parsing.
//
// usage: node polars_stats.mjs FORMAT PATH
import fs from 'node:fs';
import pl from 'nodejs-polars';

const [format, path] = process.argv.slice(2);
const col = pl.col;
const f = (c, ...names) => names.reduce((e, n) => e.struct.field(n), col(c));

function finish(per, gaps, extra = {}) {
  // per: ttft_ms, e2e_ms, n of completed requests; gaps: g_ms or null.
  const q = [0.5, 0.9, 0.99];
  const tp = per.filter(col('n').gt(1)).select(col('e2e_ms').minus(col('ttft_ms')).div(col('n').minus(1)).alias('tpot_ms'));
  const res = { requests: per.height };
  for (const [name, df] of [['ttft', per], ['e2e', per], ['tpot', tp]]) {
    const row = df.select(...q.map((p, i) => col(`${name}_ms`).quantile(p, 'linear').alias(`q${i}`))).toRecords()[0];
    res[`${name}_p50_ms`] = row.q0;
    res[`${name}_p90_ms`] = row.q1;
    res[`${name}_p99_ms`] = row.q2;
  }
  if (gaps) {
    const g = gaps.filter(col('g_ms').isNotNull());
    res.itl_n = g.height;
    res.itl_p99_ms = g.select(col('g_ms').quantile(0.99, 'linear').alias('q')).toRecords()[0].q;
  }
  console.log(JSON.stringify({ ...res, ...extra }));
}

const num = pl.Struct([new pl.Field('value', pl.Float64)]);
const cnt = pl.Struct([new pl.Field('value', pl.Int64)]);
const aiperfSchema = {
  metrics: pl.Struct([
    new pl.Field('time_to_first_token', num), new pl.Field('request_latency', num),
    new pl.Field('usage_completion_tokens', cnt), new pl.Field('output_sequence_length', cnt),
    new pl.Field('inter_chunk_latency', pl.Struct([new pl.Field('value', pl.List(pl.Float64))])),
  ]),
  error: pl.Struct([new pl.Field('code', pl.Int64)]),
};

function aiperf(src, extra) {
  const recs = pl.scanJson(src, { schema: aiperfSchema })
    .filter(col('error').isNull())
    .select(
      f('metrics', 'time_to_first_token', 'value').alias('ttft_ms'),
      f('metrics', 'request_latency', 'value').alias('e2e_ms'),
      f('metrics', 'usage_completion_tokens', 'value').fillNull(f('metrics', 'output_sequence_length', 'value')).alias('n'),
      f('metrics', 'inter_chunk_latency', 'value').alias('icl'),
    )
    .filter(col('ttft_ms').isNotNull())
    .collectSync();
  const gaps = recs.select(col('icl').explode().alias('g_ms'));
  finish(recs.select('ttft_ms', 'e2e_ms', 'n'), gaps, extra);
}

// vLLM / SGLang: one object of index-aligned arrays.
function arrays(df) {
  const rows = df.select('ttfts', 'itls', 'output_lens', 'errors')
    .explode(['ttfts', 'itls', 'output_lens', 'errors'])
    .filter(col('errors').eq(pl.lit('')).and(col('ttfts').gt(0)));
  const per = rows.select(
    col('ttfts').mul(1e3).alias('ttft_ms'),
    col('ttfts').plus(col('itls').lst.sum()).mul(1e3).alias('e2e_ms'),
    col('output_lens').alias('n'),
  );
  const gaps = rows.select(col('itls').explode().mul(1e3).alias('g_ms'));
  finish(per, gaps);
}

const run = {
  'genai-perf'() {
    const doc = pl.readJSON(path, { format: 'json', inferSchemaLength: null });
    const req = doc.select('experiments').explode('experiments').unnest('experiments')
      .select('requests').explode('requests').unnest('requests')
      .select('timestamp', 'response_timestamps', 'response_outputs')
      .withRowIndex('id');
    const msg = req.explode(['response_timestamps', 'response_outputs']).unnest('response_outputs')
      .filter(col('response').str.startsWith('data: [DONE]').not())
      .select(
        'id', 'timestamp', col('response_timestamps').alias('t'),
        // A token message: non-empty content or reasoning, or tool-call
        // deltas (a quote inside a JSON string is escaped, so the key
        // cannot occur in text).
        col('response').str.contains('"(?:content|reasoning_content|reasoning)":"[^"]|"tool_calls":\\[[^\\]]').alias('tok'),
        col('response').str.contains('"error":|"object":"error"').alias('bad'),
        col('response').str.extract(/"completion_tokens":(\d+)/, 1).cast(pl.Int64).alias('n'),
      );
    const perReq = msg.groupBy('id').agg(
      col('bad').any().alias('failed'),
      col('tok').sum().alias('tokens'),
      col('t').filter(col('tok')).min().minus(col('timestamp').first()).div(1e6).alias('ttft_ms'),
      col('t').filter(col('tok')).max().minus(col('timestamp').first()).div(1e6).alias('e2e_ms'),
      col('n').max().alias('n'),
    ).filter(col('failed').not().and(col('tokens').gt(0)));
    const per = perReq.select('ttft_ms', 'e2e_ms', col('n').fillNull(col('tokens')).alias('n'));
    const gaps = msg.filter(col('tok')).join(perReq.select('id'), { on: 'id' })
      .sort(['id', 't'])
      .select(col('t').diff(1, 'ignore').over('id').div(1e6).alias('g_ms'));
    finish(per, gaps);
  },
  'aiperf'() { aiperf(path); },
  'aiperf-runs'() {
    const runs = fs.readdirSync(path).filter((d) => fs.existsSync(`${path}/${d}/profile_export.jsonl`)).length;
    aiperf(`${path}/*/profile_export.jsonl`, { runs });
  },
  'llmperf'() {
    const rows = pl.readJSON(path, { format: 'json', inferSchemaLength: null }).filter(col('error_code').isNull());
    finish(rows.select(
      col('ttft_s').mul(1e3).alias('ttft_ms'),
      col('inter_token_latency_s').mul(col('number_output_tokens')).mul(1e3).alias('e2e_ms'),
      col('number_output_tokens').minus(1).alias('n'),
    ), null);
  },
  'vllm'() { arrays(pl.readJSON(path, { format: 'json', inferSchemaLength: null })); },
  'sglang'() {
    const buf = fs.readFileSync(path);
    const head = buf.subarray(0, Math.min(buf.length, 4096)).toString('latin1');
    const i = head.indexOf(': Infinity');
    if (i >= 0) buf.write(': null    ', i, 'latin1');
    arrays(pl.readJSON(buf, { format: 'json', inferSchemaLength: null }));
  },
  'guidellm'() {
    const recs = pl.readJSON(path, { format: 'json', inferSchemaLength: null })
      .select('benchmarks').explode('benchmarks')
      .select(f('benchmarks', 'requests', 'successful').alias('r')).explode('r')
      .select(
        f('r', 'info', 'timings', 'request_start').alias('s'),
        f('r', 'info', 'timings', 'first_token_iteration').alias('first'),
        f('r', 'info', 'timings', 'last_token_iteration').alias('last'),
        f('r', 'output_tokens').alias('n'),
      ).filter(col('first').isNotNull());
    finish(recs.select(
      col('first').minus(col('s')).mul(1e3).alias('ttft_ms'),
      col('last').minus(col('s')).mul(1e3).alias('e2e_ms'),
      'n',
    ), null);
  },
  'inference-perf'() {
    const recs = pl.readJSON(path, { format: 'json', inferSchemaLength: null })
      .filter(col('error').isNull())
      .select(
        col('start_time').alias('s'),
        f('info', 'response_metrics', 'chunk_times').alias('ct'),
        f('info', 'response_metrics', 'server_usage', 'completion_tokens').fillNull(f('info', 'response_metrics', 'output_tokens')).alias('n'),
      ).filter(col('ct').lst.lengths().gt(0))
      .withRowIndex('id');
    const per = recs.select(
      col('ct').lst.first().minus(col('s')).mul(1e3).alias('ttft_ms'),
      col('ct').lst.last().minus(col('s')).mul(1e3).alias('e2e_ms'),
      'n',
    );
    const gaps = recs.select('id', 'ct').explode('ct')
      .select(col('ct').diff(1, 'ignore').over('id').mul(1e3).alias('g_ms'));
    finish(per, gaps);
  },
};

run[format]();
