// Runs SQL files over a tokentrace table directory in ClickHouse (chDB:
// ClickHouse embedded in the process, the npm package `chdb`).
//
// Usage: node run-sql.mjs DIR FILE.sql [FILE.sql ...] -- [QUERY ...]
//
// Creates the views runs, requests and events over DIR — the flat layout
// (DIR/runs.parquet, …) or the hive-partitioned one (DIR/runs/run_id=…/…,
// read with the glob DIR/runs/**/*.parquet, use_hive_partitioning off:
// every part file holds run_id, undecoded in the directory names)
// — executes every statement of each FILE in order in one session, then
// runs each QUERY and prints one JSON object on stdout:
//
//   {"clickhouse_version": "26.7.2.1", "layout": "hive",
//    "queries": [{"sql": "...", "rows": [{...}, ...]}, ...]}
//
// Values are as ClickHouse's JSONEachRow gives them (64-bit integers as
// strings). Statements are the text between semicolons that end a line,
// comments (-- to the end of the line) removed. Exits non-zero with a
// message on stderr when a file or a query fails, naming the file and the
// statement's position.
import { Session } from 'chdb';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const sep = args.indexOf('--');
const [dirArg, ...files] = sep < 0 ? args : args.slice(0, sep);
const queries = sep < 0 ? [] : args.slice(sep + 1);
if (!dirArg || files.length === 0) {
  console.error('usage: node run-sql.mjs DIR FILE.sql [FILE.sql ...] -- [QUERY ...]');
  process.exit(2);
}
const dir = path.resolve(dirArg);
const sqlString = (s) => "'" + s.replaceAll('\\', '\\\\').replaceAll("'", "\\'") + "'";

// statements splits SQL text at semicolons that end a line.
function statements(text) {
  const body = text
    .split('\n')
    .map((l) => l.replace(/--.*$/, ''))
    .join('\n');
  return body
    .split(/;[ \t]*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'chdb-check-'));
const session = new Session(work);
const rows = (sql) =>
  session
    .query(sql, 'JSONEachRow')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
try {
  const hive = fs.statSync(path.join(dir, 'runs'), { throwIfNoEntry: false })?.isDirectory() ?? false;
  for (const table of ['runs', 'requests', 'events']) {
    const src = hive ? path.join(dir, table, '**', '*.parquet') : path.join(dir, table + '.parquet');
    // use_hive_partitioning = 0: ClickHouse would take run_id from the
    // directory name without decoding its %XX escapes; the files hold it.
    session.query(`CREATE VIEW ${table} AS SELECT * FROM file(${sqlString(src)}, Parquet) SETTINGS use_hive_partitioning = 0`);
  }
  for (const file of files) {
    statements(fs.readFileSync(file, 'utf8')).forEach((stmt, i) => {
      try {
        session.query(stmt);
      } catch (err) {
        throw new Error(`${file}: statement ${i + 1}: ${err.message ?? err}\n${stmt.slice(0, 200)}`);
      }
    });
  }
  const out = { clickhouse_version: rows('SELECT version() AS v')[0].v, layout: hive ? 'hive' : 'flat', queries: [] };
  for (const sql of queries) {
    try {
      out.queries.push({ sql, rows: rows(sql) });
    } catch (err) {
      throw new Error(`query ${sql}: ${err.message ?? err}`);
    }
  }
  process.stdout.write(JSON.stringify(out) + '\n');
} catch (err) {
  console.error(`chdb run-sql: ${err.message ?? err}`);
  process.exitCode = 1;
} finally {
  session.cleanup?.();
  fs.rmSync(work, { recursive: true, force: true });
}
