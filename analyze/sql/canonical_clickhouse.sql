-- tokentrace's canonical metric convention ("tokentrace", analyze.Canonical)
-- as ClickHouse SQL over the Parquet tables of formats/SCHEMA.md: the same
-- relations, columns and rules as analyze/sql/canonical.sql (DuckDB), which
-- states them in its comments; this file notes only where ClickHouse needs
-- another form. The generated parts (canonical_fixes, canonical_samples and
-- canonical_stats' metric list) come from the same Go tables as the DuckDB
-- file's (go test ./analyze -run TestCanonicalSQLMetrics -update).
--
-- analyze/sql_test.go runs this file in ClickHouse (chDB, the npm package
-- `chdb`: ClickHouse embedded, tools/chdb-check) over the hive dataset of
-- every bundled corpus run and compares each statistic with the Go report,
-- as it does for the DuckDB file (relative tolerance 1e-9, the same listed
-- exclusions).
--
-- Input: three relations named runs, requests and events with the tables'
-- columns, created first, e.g. over `import --layout hive` datasets:
--
--   CREATE VIEW runs     AS SELECT * FROM file('out/runs/**/*.parquet', Parquet) SETTINGS use_hive_partitioning = 0;
--   CREATE VIEW requests AS SELECT * FROM file('out/requests/**/*.parquet', Parquet) SETTINGS use_hive_partitioning = 0;
--   CREATE VIEW events   AS SELECT * FROM file('out/events/**/*.parquet', Parquet) SETTINGS use_hive_partitioning = 0;
--
-- use_hive_partitioning = 0 (on by default in recent ClickHouse): ClickHouse
-- would take run_id from the directory name (run_id=gp%2Frun) without
-- decoding its %XX escapes; every part file holds the true run_id. On a
-- cluster: s3Cluster(…) or Distributed tables instead (README.md).
-- Then run this file (clickhouse-client --multiquery < …, or statement by
-- statement in one session) and query the same relations as in DuckDB:
-- canonical_requests, canonical_itl, canonical_samples, canonical_stats,
-- canonical_counts, canonical_throughput, and
--   SELECT * FROM canonical_goodput(ttft_max_ms = 1000, ttfo_max_ms = NULL,
--                                   tpot_max_ms = NULL, e2e_max_ms = 20000)
-- (a parameterized view; NULL: unconstrained).
--
-- ClickHouse differences that matter here:
--   * join_use_nulls = 1: an unmatched outer-join row gets NULLs, not the
--     type's default values (0, '').
--   * cast_keep_nullable = 1: x::DOUBLE of a NULL is NULL (the generated
--     canonical_samples casts as DuckDB does), not an error.
--   * array[i] out of range is the default value (0), not NULL: every index
--     is guarded by length().
--   * quantilesExactInclusive is the linear interpolation at rank p·(n − 1)
--     (numpy's default, DuckDB's quantile_cont); quantileExact is not.
--   * stddevSampStable (stddevSamp is numerically unstable); NULL for n ≤ 1.
--   * aggregates over no rows: the -OrNull combinator gives NULL as DuckDB's
--     do (maxIf gives 0).
--   * no correlated subqueries: per-run flags by GROUP BY and a join.
--   * canonical_requests and canonical_itl are Memory tables (computed when
--     this file runs, as the DuckDB file's tables); on a cluster use
--     MergeTree (or views).
SET join_use_nulls = 1;
SET cast_keep_nullable = 1;

-- canonical-fixes-clickhouse:begin (generated from the data-check catalogue by go test ./analyze -run TestCanonicalSQLMetrics -update)
CREATE OR REPLACE TABLE canonical_fixes (code String, fix String) ENGINE = Memory;
INSERT INTO canonical_fixes VALUES
    ('inference_perf_bos_in_output_count', 'count_from_import'),
    ('inference_perf_bos_per_chunk', 'bos_per_chunk'),
    ('inference_perf_line_times', 'not_token_times'),
    ('inference_perf_message_times', 'not_token_times'),
    ('llmperf_bos_in_count', 'count_from_import'),
    ('output_count_below_messages', 'count_from_import'),
    ('sglang_output_len_stuck', 'count_not_stuck'),
    ('vllm_role_chunk_ttft', 'first_not_token'),
    ('vllm_ttft_in_itls', 'phantom_second_gap');
-- canonical-fixes-clickhouse:end

-- The fixes that apply to each request (canonical.sql:
-- canonical_request_fixes).
CREATE OR REPLACE TABLE canonical_request_fixes ENGINE = Memory AS
SELECT run_id, request_key,
       hasAny(cs, (SELECT groupArray(code) FROM canonical_fixes WHERE fix = 'phantom_second_gap')) AS fix_phantom,
       hasAny(cs, (SELECT groupArray(code) FROM canonical_fixes WHERE fix = 'first_not_token')) AS fix_first,
       hasAny(cs, (SELECT groupArray(code) FROM canonical_fixes WHERE fix = 'count_not_stuck')) AS fix_stuck,
       hasAny(cs, (SELECT groupArray(code) FROM canonical_fixes WHERE fix = 'not_token_times')) AS fix_notok,
       hasAny(cs, (SELECT groupArray(code) FROM canonical_fixes WHERE fix = 'bos_per_chunk')) AS fix_bos
FROM (SELECT run_id, request_key, splitByChar(',', coalesce(corrections, '')) AS cs FROM requests);

-- The client messages that are responses, with the tokens each carried
-- (NULL: unknown), after not_token_times and bos_per_chunk (canonical.sql:
-- canonical_responses).
CREATE OR REPLACE VIEW canonical_responses AS
SELECT e.run_id AS run_id, e.request_key AS request_key, e."index" AS "index", e.offset_ns AS offset_ns,
       if(coalesce(fx.fix_bos, 0) AND e.tokens >= 2, e.tokens - 1, e.tokens) AS tokens
FROM events e LEFT JOIN canonical_request_fixes fx ON fx.run_id = e.run_id AND fx.request_key = e.request_key
WHERE e.kind IN ('content', 'reasoning', 'tool_call')
  AND NOT (coalesce(fx.fix_notok, 0) AND coalesce(e.tokens = 0, 0));

-- Per request (canonical.sql: canonical_requests).
CREATE OR REPLACE TABLE canonical_requests ENGINE = Memory AS
WITH fx AS (
    SELECT * FROM canonical_request_fixes
),
evs AS (
    SELECT run_id, request_key,
           count() AS n_events,
           max(kind = 'reasoning' OR coalesce(reasoning_text, '') != '') AS reasoning_event
    FROM events
    WHERE kind NOT LIKE 'server.%'
    GROUP BY run_id, request_key
),
rs AS (
    SELECT run_id, request_key,
           -- responses' offsets in arrival order ("index")
           arrayMap(x -> x.2, arraySort(x -> x.1, groupArray(("index", offset_ns)))) AS resp_ns,
           -- N from the corrected per-message counts (bos_per_chunk), when
           -- every response's count is known
           if(count() = count(tokens), sum(tokens), NULL) AS tokens_sum
    FROM canonical_responses
    GROUP BY run_id, request_key
),
ev0 AS (
    SELECT evs.run_id AS run_id, evs.request_key AS request_key, evs.n_events AS n_events, evs.reasoning_event AS reasoning_event,
           if(rs.run_id IS NULL, [], rs.resp_ns) AS resp_ns, rs.tokens_sum AS tokens_sum
    FROM evs LEFT JOIN rs ON rs.run_id = evs.run_id AND rs.request_key = evs.request_key
),
ev AS (
    SELECT ev0.run_id AS run_id, ev0.request_key AS request_key, ev0.n_events AS n_events, ev0.reasoning_event AS reasoning_event,
           ev0.tokens_sum AS tokens_sum,
           multiIf(coalesce(fx.fix_phantom, 0) AND length(ev0.resp_ns) >= 2,
                       arrayConcat([ev0.resp_ns[1]], arrayMap(x -> x - (ev0.resp_ns[2] - ev0.resp_ns[1]), arraySlice(ev0.resp_ns, 3))),
                   coalesce(fx.fix_first, 0) AND length(ev0.resp_ns) >= 2, arraySlice(ev0.resp_ns, 2),
                   ev0.resp_ns) AS resp_ns
    FROM ev0 LEFT JOIN fx ON fx.run_id = ev0.run_id AND fx.request_key = ev0.request_key
),
q AS (
    SELECT r.run_id AS run_id, r.request_key AS request_key, r.status AS status, r.start_ns AS start_ns,
           r.scheduled_start_ns AS scheduled_start_ns,
           r.status = 'ok' AS counted,
           coalesce(ev.n_events, 0) > 0 AS has_events,
           if(has_events, if(length(ev.resp_ns) >= 1, toNullable(ev.resp_ns[1]), NULL), r.first_token_offset_ns) AS first_ns,
           if(has_events, if(length(ev.resp_ns) >= 1, toNullable(ev.resp_ns[-1]), NULL), r.last_token_offset_ns) AS last_ns,
           if(has_events, if(length(ev.resp_ns) >= 2, toNullable(ev.resp_ns[2] - ev.resp_ns[1]), NULL),
              r.second_token_offset_ns - r.first_token_offset_ns) AS ttst_ns,
           if(has_events, length(ev.resp_ns), r.token_message_count) AS responses,
           -- N (canonical.sql: osl_counted)
           multiIf(coalesce(fx.fix_stuck, 0), NULL,
                   coalesce(fx.fix_bos, 0) AND r.output_tokens_source = 'tool_reported' AND ev.tokens_sum IS NOT NULL, toInt64(ev.tokens_sum),
                   r.output_tokens IS NOT NULL AND r.output_tokens_source IN ('server_usage', 'tool_reported'), r.output_tokens,
                   r.output_tokens IS NOT NULL AND startsWith(coalesce(r.output_tokens_source, ''), 'tokenizer:'),
                       greatest(assumeNotNull(r.output_tokens), toInt64(responses)),
                   NULL) AS osl_counted,
           r.input_tokens AS isl,
           r.first_content_offset_ns AS first_content_offset_ns,
           coalesce(r.reasoning_tokens, 0) > 0 OR coalesce(ev.reasoning_event, 0) AS has_reasoning
    FROM requests r
    LEFT JOIN ev ON ev.run_id = r.run_id AND ev.request_key = r.request_key
    LEFT JOIN fx ON fx.run_id = r.run_id AND fx.request_key = r.request_key
),
q2 AS (
    SELECT * EXCEPT (osl_counted),
           coalesce(osl_counted, if(has_events OR responses > 0, toNullable(toInt64(responses)), NULL)) AS osl
    FROM q
),
rk AS (
    SELECT run_id, max(responses > 1) AS any_multi, maxIf(has_reasoning, counted) AS any_reasoning
    FROM q2 GROUP BY run_id
),
run_kind AS (
    -- Streaming: the run's flag; when the source does not say, whether any
    -- request received more than one response.
    SELECT ru.run_id AS run_id,
           toBool(coalesce(toUInt8(ru.streaming), rk.any_multi, 0)) AS streaming,
           toBool(coalesce(rk.any_reasoning, 0)) AS run_has_reasoning
    FROM runs ru LEFT JOIN rk ON rk.run_id = ru.run_id
)
SELECT q.run_id AS run_id, q.request_key AS request_key, q.status AS status, q.counted AS counted, q.start_ns AS start_ns,
       q.has_events AS has_events, q.responses AS responses,
       k.streaming AS streaming, k.run_has_reasoning AS run_has_reasoning, q.has_reasoning AS has_reasoning,
       q.first_ns AS first_ns, q.last_ns AS last_ns,
       q.first_ns / 1e6 AS ttft_ms,
       q.first_content_offset_ns / 1e6 AS ttfo_ms,
       q.ttst_ns / 1e6 AS ttst_ms,
       (q.start_ns - q.scheduled_start_ns) / 1e6 AS dispatch_delay_ms,
       q.last_ns / 1e6 AS e2e_ms,
       if(k.streaming AND q.osl > 1 AND q.first_ns >= 0 AND q.last_ns >= 0,
          (q.last_ns - q.first_ns) / (q.osl - 1) / 1e6, NULL) AS tpot_ms,
       q.osl AS osl, q.isl AS isl
FROM q2 q JOIN run_kind k ON k.run_id = q.run_id;

-- Pooled ITL (canonical.sql: canonical_itl). lagInFrame of a Nullable
-- value gives NULL before the first response.
CREATE OR REPLACE TABLE canonical_itl ENGINE = Memory AS
WITH resp AS (
    SELECT run_id, request_key, offset_ns, tokens,
           lagInFrame(toNullable(offset_ns)) OVER w AS prev_ns,
           row_number() OVER w AS rank
    FROM canonical_responses
    WINDOW w AS (PARTITION BY run_id, request_key ORDER BY "index" ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
gaps AS (
    SELECT g.run_id AS run_id, g.request_key AS request_key, (g.offset_ns - g.prev_ns) / 1e6 AS gap_ms,
           if(coalesce(g.tokens, 0) > 1, toUInt32(g.tokens), 1) AS k
    FROM resp g JOIN canonical_requests r ON r.run_id = g.run_id AND r.request_key = g.request_key
    WHERE g.prev_ns IS NOT NULL AND r.counted AND r.streaming
      AND NOT (g.rank = 2 AND (g.run_id, g.request_key) IN (
          SELECT run_id, request_key FROM requests
          WHERE hasAny(splitByChar(',', coalesce(corrections, '')),
                       (SELECT groupArray(code) FROM canonical_fixes WHERE fix IN ('phantom_second_gap', 'first_not_token')))))
)
SELECT run_id, request_key, gap_ms / k AS itl_ms
FROM gaps ARRAY JOIN range(k) AS rep;

-- Every value each statistic is over (the same generated view as DuckDB's).
-- canonical-samples-clickhouse:begin (generated from analyze/metric.go by go test ./analyze -run TestCanonicalSQLMetrics -update)
CREATE OR REPLACE VIEW canonical_samples AS
          SELECT run_id, 'ttft_ms' AS metric, ttft_ms AS v FROM canonical_requests WHERE counted
UNION ALL SELECT run_id, 'ttfo_ms' AS metric, ttfo_ms AS v FROM canonical_requests WHERE counted AND run_has_reasoning
UNION ALL SELECT run_id, 'ttst_ms' AS metric, ttst_ms AS v FROM canonical_requests WHERE counted AND streaming
UNION ALL SELECT run_id, 'tpot_ms' AS metric, tpot_ms AS v FROM canonical_requests WHERE counted AND streaming
UNION ALL SELECT run_id, 'itl_ms' AS metric, itl_ms AS v FROM canonical_itl
UNION ALL SELECT run_id, 'e2e_ms' AS metric, e2e_ms AS v FROM canonical_requests WHERE counted
UNION ALL SELECT run_id, 'ntpot_ms' AS metric, CASE WHEN osl >= 1 THEN e2e_ms / osl END AS v FROM canonical_requests WHERE counted
UNION ALL SELECT run_id, 'dispatch_delay_ms' AS metric, dispatch_delay_ms AS v FROM canonical_requests WHERE counted AND dispatch_delay_ms IS NOT NULL
UNION ALL SELECT run_id, 'sched_ttft_ms' AS metric, dispatch_delay_ms + ttft_ms AS v FROM canonical_requests WHERE counted AND dispatch_delay_ms IS NOT NULL
UNION ALL SELECT run_id, 'sched_e2e_ms' AS metric, dispatch_delay_ms + e2e_ms AS v FROM canonical_requests WHERE counted AND dispatch_delay_ms IS NOT NULL
UNION ALL SELECT run_id, 'osl_tokens' AS metric, osl::DOUBLE AS v FROM canonical_requests WHERE counted
UNION ALL SELECT run_id, 'isl_tokens' AS metric, isl::DOUBLE AS v FROM canonical_requests WHERE counted;
-- canonical-samples-clickhouse:end

-- Statistics (canonical.sql: canonical_stats).
CREATE OR REPLACE VIEW canonical_stats AS
WITH s AS (
    SELECT run_id, metric, count(v) AS n, avg(v) AS mean,
           if(count(v) > 1, stddevSampStable(v), NULL) AS std, min(v) AS min,
           quantilesExactInclusive(0.5, 0.9, 0.95, 0.99)(v) AS p, max(v) AS max
    FROM canonical_samples
    WHERE v IS NOT NULL AND isFinite(v)
    GROUP BY run_id, metric
)
SELECT ru.run_id AS run_id, m.metric AS metric, coalesce(s.n, 0) AS n, s.mean AS mean, s.std AS std, s.min AS min,
       -- an array cannot be NULL: a run without values gets [] from the join
       if(s.n > 0, s.p[1], NULL) AS p50, if(s.n > 0, s.p[2], NULL) AS p90,
       if(s.n > 0, s.p[3], NULL) AS p95, if(s.n > 0, s.p[4], NULL) AS p99, s.max AS max
FROM runs ru
CROSS JOIN
-- canonical-metrics-clickhouse:begin (generated likewise)
(SELECT arrayJoin(['ttft_ms', 'ttfo_ms', 'ttst_ms', 'tpot_ms', 'itl_ms', 'e2e_ms', 'ntpot_ms', 'dispatch_delay_ms', 'sched_ttft_ms', 'sched_e2e_ms', 'osl_tokens', 'isl_tokens']) AS metric) m
-- canonical-metrics-clickhouse:end
LEFT JOIN s ON s.run_id = ru.run_id AND s.metric = m.metric;

-- Request counts (canonical.sql: canonical_counts); r.request_key is NULL
-- for a run without requests.
CREATE OR REPLACE VIEW canonical_counts AS
SELECT ru.run_id AS run_id,
       count(r.request_key) AS total,
       countIf(r.status = 'ok') AS completed,
       countIf(r.status = 'empty') AS empty,
       countIf(r.status NOT IN ('ok', 'empty', 'cancelled')) AS failed,
       countIf(r.status = 'cancelled') AS cancelled,
       countIf(r.counted AND r.streaming AND r.tpot_ms IS NULL) AS tpot_undefined,
       countIf(r.status NOT IN ('ok', 'empty')) / nullIf(count(r.request_key), 0) AS error_rate
FROM runs ru LEFT JOIN canonical_requests r ON r.run_id = ru.run_id
GROUP BY ru.run_id;

-- Duration and throughput (canonical.sql: canonical_throughput).
CREATE OR REPLACE VIEW canonical_throughput AS
WITH d AS (
    SELECT run_id,
           (maxIfOrNull(start_ns + last_ns, counted AND last_ns IS NOT NULL) - min(start_ns)) / 1e9 AS duration_s
    FROM canonical_requests
    WHERE start_ns IS NOT NULL
    GROUP BY run_id
),
t AS (
    SELECT run_id,
           countIf(counted) AS completed,
           toFloat64(sumIfOrNull(osl, counted)) AS output_tokens,
           toFloat64(coalesce(sumIfOrNull(isl, counted), 0)) AS input_tokens
    FROM canonical_requests
    GROUP BY run_id
)
SELECT ru.run_id AS run_id, d.duration_s AS duration_s,
       t.completed / nullIf(d.duration_s, 0) AS requests_per_s,
       t.output_tokens / nullIf(d.duration_s, 0) AS output_tokens_per_s,
       (t.output_tokens + t.input_tokens) / nullIf(d.duration_s, 0) AS total_tokens_per_s
FROM runs ru LEFT JOIN d ON d.run_id = ru.run_id LEFT JOIN t ON t.run_id = ru.run_id;

-- Goodput (canonical.sql: canonical_goodput), a parameterized view.
CREATE OR REPLACE VIEW canonical_goodput AS
WITH g AS (
    SELECT run_id, request_key,
           status = 'ok'
           AND ({ttft_max_ms:Nullable(Float64)} IS NULL OR coalesce(ttft_ms <= {ttft_max_ms:Nullable(Float64)}, false))
           AND ({ttfo_max_ms:Nullable(Float64)} IS NULL OR coalesce(ttfo_ms <= {ttfo_max_ms:Nullable(Float64)}, false))
           AND ({tpot_max_ms:Nullable(Float64)} IS NULL
                OR coalesce(tpot_ms <= {tpot_max_ms:Nullable(Float64)}, tpot_ms IS NULL AND osl <= 1 AND streaming))
           AND ({e2e_max_ms:Nullable(Float64)} IS NULL OR coalesce(e2e_ms <= {e2e_max_ms:Nullable(Float64)}, false)) AS good,
           {tpot_max_ms:Nullable(Float64)} IS NOT NULL AND tpot_ms IS NULL AND osl <= 1 AND streaming AS vacuous
    FROM canonical_requests
)
SELECT ru.run_id AS run_id,
       countIf(g.good) AS good,
       count(g.request_key) AS total,
       countIf(g.good) / nullIf(count(g.request_key), 0) AS fraction,
       countIf(g.good) / nullIf(any(t.duration_s), 0) AS requests_per_s,
       countIf(g.good AND g.vacuous) AS tpot_vacuous
FROM runs ru LEFT JOIN g ON g.run_id = ru.run_id LEFT JOIN canonical_throughput t ON t.run_id = ru.run_id
GROUP BY ru.run_id;
