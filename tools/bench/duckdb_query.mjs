// The DuckDB side of `make bench`: per-request TTFT, E2E and TPOT of a
// GenAI-Perf raw export (profile_export.json, streaming chat chunks) and
// their P50/P90/P99, in one SQL query (read_json + unnest + quantile_cont),
// printed as one JSON line. The definitions are tokentrace's canonical ones
// (analyze/CONVENTIONS.md): TTFT = first response with non-empty content −
// request timestamp, E2E = last such response − timestamp, N =
// usage.completion_tokens, TPOT = (E2E − TTFT)/(N − 1); requests without a
// usage chunk (failed) are left out. Each response is taken to hold one SSE
// message, as in the files `tokentrace synth` writes.
//
// usage: node duckdb_query.mjs profile_export.json
import { DuckDBInstance } from '@duckdb/node-api';

const file = process.argv[2];
const sql = `
WITH doc AS (
  SELECT unnest(experiments) AS e
  FROM read_json(?, format = 'unstructured', maximum_object_size = 2000000000,
    columns = {experiments: 'STRUCT(requests STRUCT("timestamp" BIGINT, response_timestamps BIGINT[], response_outputs STRUCT(response VARCHAR)[])[])[]'})
), req AS (
  SELECT unnest(e.requests) AS q FROM doc
), numbered AS (
  SELECT row_number() OVER () AS id, q."timestamp" AS t0, q.response_timestamps AS ts, q.response_outputs AS outs FROM req
), resp AS (
  SELECT id, t0, unnest(ts) AS t, unnest(outs).response AS r FROM numbered
), msg AS (
  SELECT id, t0, t,
    json_extract_string(substr(r, 7), '$.choices[0].delta.content') AS content,
    CAST(json_extract(substr(r, 7), '$.usage.completion_tokens') AS BIGINT) AS n
  FROM resp WHERE starts_with(r, 'data: {')
), per AS (
  SELECT id,
    (min(t) FILTER (WHERE content <> '') - any_value(t0)) / 1e6 AS ttft_ms,
    (max(t) FILTER (WHERE content <> '') - any_value(t0)) / 1e6 AS e2e_ms,
    max(n) AS n,
    count(*) FILTER (WHERE content <> '') AS tokens
  FROM msg GROUP BY id
  HAVING max(n) IS NOT NULL AND count(*) FILTER (WHERE content <> '') > 0
)
SELECT count(*) AS requests, sum(tokens) AS token_events,
  quantile_cont(ttft_ms, [0.5, 0.9, 0.99]) AS ttft,
  quantile_cont(e2e_ms, [0.5, 0.9, 0.99]) AS e2e,
  quantile_cont((e2e_ms - ttft_ms) / (n - 1), [0.5, 0.9, 0.99]) FILTER (WHERE n > 1) AS tpot
FROM per`;

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const reader = await con.runAndReadAll(sql, [file]);
const [row] = reader.getRowObjectsJS();
const q = (v) => v.map(Number);
const [t, e, p] = [q(row.ttft), q(row.e2e), q(row.tpot)];
console.log(JSON.stringify({
  requests: Number(row.requests), token_events: Number(row.token_events),
  ttft_p50_ms: t[0], ttft_p90_ms: t[1], ttft_p99_ms: t[2],
  e2e_p50_ms: e[0], e2e_p90_ms: e[1], e2e_p99_ms: e[2],
  tpot_p50_ms: p[0], tpot_p90_ms: p[1], tpot_p99_ms: p[2],
}));
