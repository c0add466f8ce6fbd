// The DuckDB side of `make bench`: per-request TTFT, E2E and TPOT of a
// benchmark run under tokentrace's canonical convention
// (analyze/CONVENTIONS.md; see py_stats.py for the rules per format), their
// P50/P90/P99 and the pooled ITL's P99, in one SQL query per format: the
// file read with read_json/read_ndjson and an explicit schema of only the
// fields needed (which spares DuckDB materializing the rest), lists
// unnested, quantile_cont (linear, numpy's rule). Prints one JSON line.
//
// usage: node duckdb_stats.mjs FORMAT PATH
import { DuckDBInstance } from '@duckdb/node-api';

const [format, path] = process.argv.slice(2);
const big = 'maximum_object_size = 4000000000';

// Each query ends in a relation per(ttft_ms, e2e_ms, n) of completed
// requests and, where the format has per-message times, gaps(g_ms).
const queries = {
  // GenAI-Perf raw export: each response is one SSE read; a token message
  // has non-empty content or reasoning, or tool-call deltas; a request with an error message or
  // error body failed; N from the last usage.completion_tokens.
  'genai-perf': `
    WITH doc AS (
      SELECT unnest(experiments) AS e
      FROM read_json(?, format = 'unstructured', ${big},
        columns = {experiments: 'STRUCT(requests STRUCT("timestamp" BIGINT, response_timestamps BIGINT[], response_outputs STRUCT(response VARCHAR)[])[])[]'})
    ), req AS (
      SELECT unnest(e.requests) AS q FROM doc
    ), numbered AS (
      SELECT row_number() OVER () AS id, q."timestamp" AS t0, q.response_timestamps AS ts, q.response_outputs AS outs FROM req
    ), resp AS (
      SELECT id, t0, unnest(ts) AS t, unnest(outs).response AS r FROM numbered
    ), msg AS (
      SELECT id, t0, t,
        json_extract(CASE WHEN starts_with(r, 'data:') THEN substr(r, 6) ELSE r END,
          ['$.choices[0].delta.content', '$.choices[0].delta.reasoning_content', '$.choices[0].delta.reasoning',
           '$.error', '$.object', '$.usage.completion_tokens', '$.choices[0].delta.tool_calls']) AS f
      FROM resp WHERE NOT starts_with(r, 'data: [DONE]')
    ), cls AS (
      SELECT id, t0, t,
        coalesce(f[1]->>'$', '') <> '' OR coalesce(f[2]->>'$', '') <> '' OR coalesce(f[3]->>'$', '') <> ''
          OR coalesce(json_array_length(f[7]), 0) > 0 AS tok,
        (f[4] IS NOT NULL AND f[4]::VARCHAR <> 'null') OR coalesce(f[5]->>'$', '') = 'error' AS bad,
        TRY_CAST(f[6]::VARCHAR AS BIGINT) AS n
      FROM msg
    ), perreq AS (
      SELECT id, bool_or(bad) AS failed, count(*) FILTER (WHERE tok) AS tokens,
        (min(t) FILTER (WHERE tok) - any_value(t0)) / 1e6 AS ttft_ms,
        (max(t) FILTER (WHERE tok) - any_value(t0)) / 1e6 AS e2e_ms,
        max(n) AS n
      FROM cls GROUP BY id
    ), per AS (
      SELECT id, ttft_ms, e2e_ms, coalesce(n, tokens) AS n FROM perreq WHERE NOT failed AND tokens > 0
    ), gaps AS (
      SELECT (t - lag(t) OVER (PARTITION BY id ORDER BY t)) / 1e6 AS g_ms
      FROM cls WHERE tok AND id IN (SELECT id FROM per)
    )`,
  // AIPerf profile_export.jsonl: one record a line.
  'aiperf': aiperf('?'),
  // LLMPerf: E2E = inter_token_latency_s · number_output_tokens (the BOS
  // token included), N = number_output_tokens − 1.
  'llmperf': `
    WITH rows AS (
      SELECT * FROM read_json(?, format = 'array', ${big},
        columns = {error_code: 'BIGINT', ttft_s: 'DOUBLE', inter_token_latency_s: 'DOUBLE', number_output_tokens: 'BIGINT'})
    ), per AS (
      SELECT ttft_s * 1e3 AS ttft_ms, inter_token_latency_s * number_output_tokens * 1e3 AS e2e_ms, number_output_tokens - 1 AS n
      FROM rows WHERE error_code IS NULL
    )`,
  // vLLM / SGLang: index-aligned arrays, unnested side by side.
  'vllm': arrays('?', "format = 'unstructured'"),
  'sglang': arrays('?', "format = 'newline_delimited'"),
  // guidellm v0.4+: the successful records' timings (epoch s).
  'guidellm': `
    WITH doc AS (
      SELECT unnest(benchmarks) AS b FROM read_json(?, format = 'unstructured', ${big},
        columns = {benchmarks: 'STRUCT(requests STRUCT(successful STRUCT(info STRUCT(timings STRUCT(request_start DOUBLE, first_token_iteration DOUBLE, last_token_iteration DOUBLE)), output_tokens BIGINT)[]))[]'})
    ), recs AS (
      SELECT unnest(b.requests.successful) AS r FROM doc
    ), per AS (
      SELECT (r.info.timings.first_token_iteration - r.info.timings.request_start) * 1e3 AS ttft_ms,
        (r.info.timings.last_token_iteration - r.info.timings.request_start) * 1e3 AS e2e_ms,
        r.output_tokens AS n
      FROM recs WHERE r.info.timings.first_token_iteration IS NOT NULL
    )`,
  // inference-perf: the content chunks' times (perf_counter s).
  'inference-perf': `
    WITH recs AS (
      SELECT row_number() OVER () AS id, start_time AS s, info.response_metrics AS rm, error
      FROM read_json(?, format = 'array', ${big},
        columns = {start_time: 'DOUBLE', info: 'STRUCT(response_metrics STRUCT(output_tokens BIGINT, server_usage STRUCT(completion_tokens BIGINT), chunk_times DOUBLE[]))', error: 'JSON'})
    ), ok AS (
      SELECT id, s, rm FROM recs WHERE error IS NULL AND rm IS NOT NULL AND len(rm.chunk_times) > 0
    ), per AS (
      SELECT (rm.chunk_times[1] - s) * 1e3 AS ttft_ms, (rm.chunk_times[-1] - s) * 1e3 AS e2e_ms,
        coalesce(rm.server_usage.completion_tokens, rm.output_tokens) AS n
      FROM ok
    ), times AS (
      SELECT id, unnest(rm.chunk_times) AS t, generate_subscripts(rm.chunk_times, 1) AS k FROM ok
    ), gaps AS (
      SELECT (t - lag(t) OVER (PARTITION BY id ORDER BY k)) * 1e3 AS g_ms FROM times
    )`,
  // A folder of AIPerf runs, pooled.
  'aiperf-runs': aiperf("? || '/*/profile_export.jsonl'"),
};

function aiperf(src) {
  return `
    WITH recs AS (
      SELECT metrics AS m FROM read_ndjson(${src}, ${big},
        columns = {metrics: 'STRUCT(time_to_first_token STRUCT(value DOUBLE), request_latency STRUCT(value DOUBLE), usage_completion_tokens STRUCT(value BIGINT), output_sequence_length STRUCT(value BIGINT), inter_chunk_latency STRUCT(value DOUBLE[]))', error: 'JSON'})
      WHERE error IS NULL AND metrics.time_to_first_token IS NOT NULL
    ), per AS (
      SELECT m.time_to_first_token.value AS ttft_ms, m.request_latency.value AS e2e_ms,
        coalesce(m.usage_completion_tokens.value, m.output_sequence_length.value) AS n
      FROM recs
    ), gaps AS (
      SELECT unnest(m.inter_chunk_latency.value) AS g_ms FROM recs
    )`;
}

function arrays(src, fmt) {
  return `
    WITH rows AS (
      SELECT unnest(ttfts) AS ttft, unnest(itls) AS gaps, unnest(output_lens) AS n, unnest(errors) AS err
      FROM read_json(${src}, ${fmt}, ${big},
        columns = {ttfts: 'DOUBLE[]', itls: 'DOUBLE[][]', output_lens: 'BIGINT[]', errors: 'VARCHAR[]'})
    ), ok AS (
      SELECT * FROM rows WHERE err = '' AND ttft > 0
    ), per AS (
      SELECT ttft * 1e3 AS ttft_ms, (ttft + list_sum(gaps)) * 1e3 AS e2e_ms, n FROM ok
    ), gaps AS (
      SELECT unnest(gaps) * 1e3 AS g_ms FROM ok
    )`;
}

const hasGaps = !['llmperf', 'guidellm'].includes(format);
const sql = queries[format] + `
  SELECT (SELECT count(*) FROM per) AS requests,
    (SELECT quantile_cont(ttft_ms, [0.5, 0.9, 0.99]) FROM per) AS ttft,
    (SELECT quantile_cont(e2e_ms, [0.5, 0.9, 0.99]) FROM per) AS e2e,
    (SELECT quantile_cont((e2e_ms - ttft_ms) / (n - 1), [0.5, 0.9, 0.99]) FROM per WHERE n > 1) AS tpot` +
  (hasGaps ? `, (SELECT count(g_ms) FROM gaps) AS itl_n, (SELECT quantile_cont(g_ms, 0.99) FROM gaps) AS itl_p99` : '') +
  (format === 'aiperf-runs' ? `, (SELECT count(*) FROM glob(? || '/*/profile_export.jsonl')) AS runs` : '');

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const params = [...sql.matchAll(/\?/g)].map(() => path);
const reader = await con.runAndReadAll(sql, params);
const [row] = reader.getRowObjectsJS();
const res = { requests: Number(row.requests) };
for (const k of ['ttft', 'e2e', 'tpot']) {
  const q = row[k].map(Number);
  res[`${k}_p50_ms`] = q[0];
  res[`${k}_p90_ms`] = q[1];
  res[`${k}_p99_ms`] = q[2];
}
if (hasGaps) {
  res.itl_n = Number(row.itl_n);
  res.itl_p99_ms = Number(row.itl_p99);
}
if (format === 'aiperf-runs') res.runs = Number(row.runs);
console.log(JSON.stringify(res));
