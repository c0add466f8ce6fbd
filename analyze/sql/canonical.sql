-- tokentrace's canonical metric convention ("tokentrace", analyze.Canonical)
-- as DuckDB SQL over the Parquet tables of formats/SCHEMA.md.
--
-- Derived from analyze/metrics.go (ComputeRequest, count), analyze/samples.go
-- (samplesOf), analyze/stats.go (Summarize), analyze/analyzer.go (runReport,
-- duration, throughput, goodput); the rules are stated in
-- analyze/CONVENTIONS.md. analyze/sql_test.go runs this file in DuckDB on every
-- bundled corpus run and compares each statistic with the Go report
-- (relative tolerance 1e-9); the exclusions it lists are the places SQL does
-- not follow the Go analyzer, each with its reason (also marked "NOT IN SQL"
-- below).
--
-- Input: three relations named runs, requests and events with the tables'
-- columns. Create them first, for either layout:
--
--   CREATE VIEW runs     AS SELECT * FROM 'out/runs.parquet';
--   CREATE VIEW requests AS SELECT * FROM 'out/requests.parquet';
--   CREATE VIEW events   AS SELECT * FROM 'out/events.parquet';
-- or (import --layout hive)
--   CREATE VIEW requests AS SELECT * FROM read_parquet('out/requests/**/*.parquet', hive_partitioning = false);
--   … likewise for runs and events.
--
-- Then `.read analyze/sql/canonical.sql` (DuckDB CLI) and query:
--   canonical_requests    one row per request: the per-request metrics (a table,
--                         computed when this file is read: read it again after the
--                         tables change; the views below use it, so the events are
--                         scanned once — about 3 s for 0.85 M events on 2 cores)
--   canonical_itl         the pooled inter-token-latency samples (a table, likewise)
--   canonical_request_fixes, canonical_responses
--                         the data checks' fixes per request, and the messages that
--                         are responses after them (used by the two above)
--   canonical_samples     (run_id, metric, v): every value a statistic is over
--   canonical_stats       per run and metric: n, mean, std, min, p50, p90, p95, p99, max
--   canonical_counts      per run: request counts by status, tpot_undefined, error_rate
--   canonical_throughput  per run: duration_s, requests_per_s, output/total tokens per s
--   canonical_goodput(ttft_ms, ttfo_ms, tpot_ms, e2e_ms)
--                         per run: good, total, fraction, requests_per_s, tpot_vacuous
--                         for the SLO "metric <= limit" (NULL: unconstrained)
--
-- Units: times in milliseconds (the tables hold nanoseconds), counts in tokens.
-- Undefined values are NULL, never 0.

-- The data checks' corrections (analyze/TRAPS.md): a request whose
-- corrections column names a code is computed as the Go analyzer computes
-- it under the canonical convention (corrections true), from the raw
-- events the tables keep: phantom_second_gap drops the second response and
-- moves every later one back by its gap; first_not_token takes the first
-- response as carrying no token; count_not_stuck takes N from the
-- responses, not from the tool's stuck count; not_token_times drops the
-- content events an importer marked with tokens = 0 (times of messages that
-- carried no token); bos_per_chunk takes one BOS off every event count of
-- 2 or more, and N from their sum when the count is the tool's.
-- count_from_import needs nothing here: output_tokens holds the corrected
-- count.
-- canonical-fixes:begin (generated from the data-check catalogue by go test ./analyze -run TestCanonicalSQLMetrics -update)
CREATE OR REPLACE TABLE canonical_fixes AS
SELECT * FROM (VALUES
    ('inference_perf_bos_in_output_count', 'count_from_import'),
    ('inference_perf_bos_per_chunk', 'bos_per_chunk'),
    ('inference_perf_line_times', 'not_token_times'),
    ('inference_perf_message_times', 'not_token_times'),
    ('llmperf_bos_in_count', 'count_from_import'),
    ('output_count_below_messages', 'count_from_import'),
    ('sglang_output_len_stuck', 'count_not_stuck'),
    ('vllm_role_chunk_ttft', 'first_not_token'),
    ('vllm_ttft_in_itls', 'phantom_second_gap')
) f(code, fix);
-- canonical-fixes:end

-- Per request. Responses are the messages carrying generated tokens (kind
-- content, reasoning or tool_call, in arrival order "index"): a role-only first chunk
-- (kind role), usage and [DONE] messages are not responses. A request without
-- events (LLMPerf, summary sources) takes the importer's offsets instead.
-- Server-side events (kind server.*, on server rows) are no client messages:
-- left out, as in the Go analyzer (formats.ClientEvents).
-- The fixes that apply to each request (its corrections column's codes).
CREATE OR REPLACE TABLE canonical_request_fixes AS
SELECT run_id, request_key,
       list_has_any(cs, (SELECT coalesce(list(code), []) FROM canonical_fixes WHERE fix = 'phantom_second_gap')) AS fix_phantom,
       list_has_any(cs, (SELECT coalesce(list(code), []) FROM canonical_fixes WHERE fix = 'first_not_token')) AS fix_first,
       list_has_any(cs, (SELECT coalesce(list(code), []) FROM canonical_fixes WHERE fix = 'count_not_stuck')) AS fix_stuck,
       list_has_any(cs, (SELECT coalesce(list(code), []) FROM canonical_fixes WHERE fix = 'not_token_times')) AS fix_notok,
       list_has_any(cs, (SELECT coalesce(list(code), []) FROM canonical_fixes WHERE fix = 'bos_per_chunk')) AS fix_bos
FROM (SELECT run_id, request_key, string_split(coalesce(corrections, ''), ',') AS cs FROM requests);

-- The client messages that are responses, with the tokens each carried
-- (NULL: unknown), after not_token_times and bos_per_chunk.
CREATE OR REPLACE VIEW canonical_responses AS
SELECT e.run_id, e.request_key, e."index", e.offset_ns,
       CASE WHEN coalesce(fx.fix_bos, false) AND e.tokens >= 2 THEN e.tokens - 1 ELSE e.tokens END AS tokens
FROM events e LEFT JOIN canonical_request_fixes fx USING (run_id, request_key)
WHERE e.kind IN ('content', 'reasoning', 'tool_call')
  AND NOT (coalesce(fx.fix_notok, false) AND coalesce(e.tokens = 0, false));

CREATE OR REPLACE TABLE canonical_requests AS
WITH fx AS (
    SELECT * FROM canonical_request_fixes
),
evs AS (
    SELECT run_id, request_key,
           count(*) AS n_events,
           bool_or(kind = 'reasoning' OR coalesce(reasoning_text, '') <> '') AS reasoning_event
    FROM events
    WHERE kind NOT LIKE 'server.%'
    GROUP BY run_id, request_key
),
rs AS (
    SELECT run_id, request_key,
           list(offset_ns ORDER BY "index") AS resp_ns,
           -- N from the corrected per-message counts (bos_per_chunk), when
           -- every response's count is known
           CASE WHEN count(*) = count(tokens) THEN sum(tokens) END AS tokens_sum
    FROM canonical_responses
    GROUP BY run_id, request_key
),
ev0 AS (
    SELECT evs.run_id, evs.request_key, evs.n_events, evs.reasoning_event, rs.resp_ns, rs.tokens_sum
    FROM evs LEFT JOIN rs USING (run_id, request_key)
),
ev AS (
    SELECT ev0.run_id, ev0.request_key, ev0.n_events, ev0.reasoning_event, ev0.tokens_sum,
           CASE WHEN fx.fix_phantom AND len(ev0.resp_ns) >= 2
                     THEN [ev0.resp_ns[1]] || list_transform(ev0.resp_ns[3:], x -> x - (ev0.resp_ns[2] - ev0.resp_ns[1]))
                WHEN fx.fix_first AND len(ev0.resp_ns) >= 2 THEN ev0.resp_ns[2:]
                ELSE ev0.resp_ns END AS resp_ns
    FROM ev0 LEFT JOIN fx USING (run_id, request_key)
),
q AS (
    SELECT r.run_id, r.request_key, r.status, r.start_ns, r.scheduled_start_ns,
           -- completed: status ok (no error, at least one token message)
           r.status = 'ok' AS counted,
           coalesce(ev.n_events, 0) > 0 AS has_events,
           CASE WHEN coalesce(ev.n_events, 0) > 0 THEN ev.resp_ns[1] ELSE r.first_token_offset_ns END AS first_ns,
           CASE WHEN coalesce(ev.n_events, 0) > 0 THEN ev.resp_ns[-1] ELSE r.last_token_offset_ns END AS last_ns,
           CASE WHEN coalesce(ev.n_events, 0) > 0 THEN ev.resp_ns[2] - ev.resp_ns[1]
                ELSE r.second_token_offset_ns - r.first_token_offset_ns END AS ttst_ns,
           CASE WHEN coalesce(ev.n_events, 0) > 0 THEN coalesce(len(ev.resp_ns), 0) ELSE r.token_message_count END AS responses,
           -- N: server usage > the tool's count (LLMPerf's without BOS) > a
           -- stored re-tokenized count (never below the responses: the
           -- retokenized_below_messages check) > the number of responses;
           -- a count stuck at the requested length (count_not_stuck) is
           -- not used.
           -- NOT IN SQL: re-tokenizing generated text (the Go analyzer does
           -- when a tokenizer is configured or built in); SQL uses a count
           -- only when the importer stored one ('tokenizer:<name>').
           CASE WHEN coalesce(fx.fix_stuck, false) THEN NULL
                WHEN coalesce(fx.fix_bos, false) AND r.output_tokens_source = 'tool_reported' AND ev.tokens_sum IS NOT NULL THEN ev.tokens_sum
                WHEN r.output_tokens IS NOT NULL AND r.output_tokens_source IN ('server_usage', 'tool_reported') THEN r.output_tokens
                WHEN r.output_tokens IS NOT NULL AND starts_with(r.output_tokens_source, 'tokenizer:')
                     THEN greatest(r.output_tokens, CASE WHEN coalesce(ev.n_events, 0) > 0 THEN coalesce(len(ev.resp_ns), 0) ELSE r.token_message_count END)
           END AS osl_counted,
           r.input_tokens AS isl,
           r.first_content_offset_ns,
           coalesce(r.reasoning_tokens, 0) > 0 OR coalesce(ev.reasoning_event, false) AS has_reasoning
    FROM requests r LEFT JOIN ev USING (run_id, request_key) LEFT JOIN fx USING (run_id, request_key)
),
q2 AS (
    SELECT q.* EXCLUDE (osl_counted),
           coalesce(q.osl_counted, CASE WHEN q.has_events OR q.responses > 0 THEN q.responses END) AS osl
    FROM q
),
run_kind AS (
    -- Streaming: the run's flag; when the source does not say, whether any
    -- request (any status) received more than one response.
    SELECT ru.run_id,
           coalesce(ru.streaming, (SELECT bool_or(q2.responses > 1) FROM q2 WHERE q2.run_id = ru.run_id), false) AS streaming,
           coalesce((SELECT bool_or(q2.has_reasoning) FROM q2 WHERE q2.run_id = ru.run_id AND q2.counted), false) AS run_has_reasoning
    FROM runs ru
)
SELECT q.run_id, q.request_key, q.status, q.counted, q.start_ns, q.has_events, q.responses,
       k.streaming, k.run_has_reasoning, q.has_reasoning,
       q.first_ns, q.last_ns,
       q.first_ns / 1e6 AS ttft_ms,
       q.first_content_offset_ns / 1e6 AS ttfo_ms,
       q.ttst_ns / 1e6 AS ttst_ms,
       -- dispatch delay: actual − intended start (NULL without a schedule);
       -- sched_ttft and sched_e2e add it to TTFT and E2E.
       (q.start_ns - q.scheduled_start_ns) / 1e6 AS dispatch_delay_ms,
       -- E2E ends at the last response (the last generated token), not at
       -- the stream's end.
       q.last_ns / 1e6 AS e2e_ms,
       -- TPOT = (last − first response) / (N − 1), in ns then ms; undefined
       -- (NULL) for N ≤ 1, unknown N, and in non-streaming runs.
       CASE WHEN k.streaming AND q.osl > 1 AND q.first_ns >= 0 AND q.last_ns >= 0
            THEN (q.last_ns - q.first_ns) / (q.osl - 1) / 1e6 END AS tpot_ms,
       q.osl, q.isl
FROM q2 q JOIN run_kind k USING (run_id);

-- Pooled ITL: gaps between consecutive responses of completed requests of
-- streaming runs; a gap before a response known to carry k > 1 tokens
-- (events.tokens) counts as k samples of gap/k.
-- Completed requests only (CONVENTIONS.md): a failed request's partial
-- stream adds no samples (as in analyzer.go, Analyzer.Request).
-- A request corrected by phantom_second_gap or first_not_token loses its
-- first gap (the repeated TTFT; the role-only chunk's wait for prefill).
CREATE OR REPLACE TABLE canonical_itl AS
WITH resp AS (
    SELECT run_id, request_key, offset_ns, tokens,
           lag(offset_ns) OVER (PARTITION BY run_id, request_key ORDER BY "index") AS prev_ns,
           row_number() OVER (PARTITION BY run_id, request_key ORDER BY "index") AS rank
    FROM canonical_responses
),
dropped AS (
    SELECT run_id, request_key
    FROM requests, unnest(string_split(coalesce(corrections, ''), ',')) AS u(code)
    WHERE code IN (SELECT code FROM canonical_fixes WHERE fix IN ('phantom_second_gap', 'first_not_token'))
    GROUP BY run_id, request_key
),
gaps AS (
    SELECT g.run_id, g.request_key, (g.offset_ns - g.prev_ns) / 1e6 AS gap_ms,
           CASE WHEN g.tokens > 1 THEN g.tokens ELSE 1 END AS k
    FROM resp g JOIN canonical_requests r USING (run_id, request_key)
    WHERE g.prev_ns IS NOT NULL AND r.counted AND r.streaming
      AND NOT (g.rank = 2 AND (g.run_id, g.request_key) IN (SELECT (run_id, request_key) FROM dropped))
)
SELECT run_id, request_key, gap_ms / k AS itl_ms
FROM (SELECT run_id, request_key, gap_ms, k, unnest(range(k)) AS rep FROM gaps);

-- Every value each statistic is over, as DOUBLE.
-- canonical-samples:begin (generated from analyze/metric.go by go test ./analyze -run TestCanonicalSQLMetrics -update)
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
-- canonical-samples:end

-- Statistics: n, mean, sample std (n − 1; NULL for n ≤ 1), min, P50, P90,
-- P95, P99 by linear interpolation at rank p·(n − 1) (numpy's default;
-- DuckDB quantile_cont is the same rule), max. One row per run and metric,
-- n = 0 and NULLs when the run has no values.
CREATE OR REPLACE VIEW canonical_stats AS
WITH s AS (
    SELECT run_id, metric, count(v) AS n, avg(v) AS mean, stddev_samp(v) AS std, min(v) AS min,
           quantile_cont(v, [0.5, 0.9, 0.95, 0.99]) AS p, max(v) AS max
    FROM canonical_samples
    WHERE v IS NOT NULL AND isfinite(v)
    GROUP BY run_id, metric
)
SELECT ru.run_id, m.metric, coalesce(s.n, 0) AS n, s.mean, s.std, s.min,
       s.p[1] AS p50, s.p[2] AS p90, s.p[3] AS p95, s.p[4] AS p99, s.max
FROM runs ru
CROSS JOIN
-- canonical-metrics:begin (generated likewise)
(VALUES ('ttft_ms'), ('ttfo_ms'), ('ttst_ms'), ('tpot_ms'), ('itl_ms'), ('e2e_ms'), ('ntpot_ms'), ('dispatch_delay_ms'), ('sched_ttft_ms'), ('sched_e2e_ms'), ('osl_tokens'), ('isl_tokens')) m(metric)
-- canonical-metrics:end
LEFT JOIN s USING (run_id, metric);

-- Request counts: every status counted; failed is status error (and any
-- unknown status); tpot_undefined counts completed requests of streaming
-- runs without a TPOT.
CREATE OR REPLACE VIEW canonical_counts AS
SELECT ru.run_id,
       count(r.run_id) AS total,
       count(*) FILTER (WHERE r.status = 'ok') AS completed,
       count(*) FILTER (WHERE r.status = 'empty') AS empty,
       count(*) FILTER (WHERE r.status NOT IN ('ok', 'empty', 'cancelled')) AS failed,
       count(*) FILTER (WHERE r.status = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE r.counted AND r.streaming AND r.tpot_ms IS NULL) AS tpot_undefined,
       (count(*) FILTER (WHERE r.status NOT IN ('ok', 'empty')))::DOUBLE / nullif(count(r.run_id), 0) AS error_rate
FROM runs ru LEFT JOIN canonical_requests r USING (run_id)
GROUP BY ru.run_id;

-- Duration: earliest start of any request → latest last-token arrival of a
-- completed request (runs whose requests have start times). Throughput:
-- completed requests, Σ N of completed requests, and Σ N + Σ ISL, per second
-- of that duration.
-- NOT IN SQL: for sources without start times (LLMPerf) the Go report shows
-- the tool's own reported throughput ("reported": true); here it is NULL.
CREATE OR REPLACE VIEW canonical_throughput AS
WITH d AS (
    SELECT run_id,
           (max(start_ns + last_ns) FILTER (WHERE counted AND last_ns IS NOT NULL) - min(start_ns)) / 1e9 AS duration_s
    FROM canonical_requests
    WHERE start_ns IS NOT NULL
    GROUP BY run_id
),
t AS (
    SELECT run_id,
           count(*) FILTER (WHERE counted) AS completed,
           sum(osl) FILTER (WHERE counted)::DOUBLE AS output_tokens,
           coalesce(sum(isl) FILTER (WHERE counted), 0)::DOUBLE AS input_tokens
    FROM canonical_requests
    GROUP BY run_id
)
SELECT ru.run_id, d.duration_s,
       t.completed / nullif(d.duration_s, 0) AS requests_per_s,
       t.output_tokens / nullif(d.duration_s, 0) AS output_tokens_per_s,
       (t.output_tokens + t.input_tokens) / nullif(d.duration_s, 0) AS total_tokens_per_s
FROM runs ru LEFT JOIN d USING (run_id) LEFT JOIN t USING (run_id);

-- Goodput for the SLO "ttft <= ttft_ms, ttfo <= ttfo_ms, tpot <= tpot_ms,
-- e2e <= e2e_ms" (NULL: not constrained): a request is good when its status
-- is ok and it meets every constraint; fraction = good / all requests;
-- requests_per_s = good / duration. A completed request lacking a
-- constrained value is not good, except TPOT with a known N ≤ 1, which is
-- vacuously met (counted in tpot_vacuous).
-- NOT IN SQL: strict bounds ("<"); and a TPOT constraint on a
-- non-streaming run, which the Go analyzer rejects as an error, here makes
-- every request of that run not good.
CREATE OR REPLACE MACRO canonical_goodput(ttft_max_ms, ttfo_max_ms, tpot_max_ms, e2e_max_ms) AS TABLE
WITH g AS (
    SELECT run_id,
           status = 'ok'
           AND (ttft_max_ms IS NULL OR coalesce(ttft_ms <= ttft_max_ms, false))
           AND (ttfo_max_ms IS NULL OR coalesce(ttfo_ms <= ttfo_max_ms, false))
           AND (tpot_max_ms IS NULL OR coalesce(tpot_ms <= tpot_max_ms, tpot_ms IS NULL AND osl <= 1 AND streaming))
           AND (e2e_max_ms IS NULL OR coalesce(e2e_ms <= e2e_max_ms, false)) AS good,
           tpot_max_ms IS NOT NULL AND tpot_ms IS NULL AND osl <= 1 AND streaming AS vacuous
    FROM canonical_requests
)
SELECT ru.run_id,
       count(*) FILTER (WHERE g.good) AS good,
       count(g.run_id) AS total,
       (count(*) FILTER (WHERE g.good))::DOUBLE / nullif(count(g.run_id), 0) AS fraction,
       (count(*) FILTER (WHERE g.good)) / nullif(any_value(t.duration_s), 0) AS requests_per_s,
       count(*) FILTER (WHERE g.good AND g.vacuous) AS tpot_vacuous
FROM runs ru LEFT JOIN g USING (run_id) LEFT JOIN canonical_throughput t USING (run_id)
GROUP BY ru.run_id;
