// Runs SQL files over a tokentrace table directory in DuckDB.
//
// Usage: node run-sql.mjs DIR FILE.sql [FILE.sql ...] -- [QUERY ...]
//
// Creates the views runs, requests and events over DIR — the flat layout
// (DIR/runs.parquet, …) or the hive-partitioned one (DIR/runs/run_id=…/…,
// read with hive_partitioning = false: run_id from the files, as the README's views) — executes every statement of each FILE in
// order, then runs each QUERY and prints one JSON object on stdout:
//
//   {"duckdb_version": "v1.5.6", "layout": "hive",
//    "queries": [{"sql": "...", "rows": [{...}, ...]}, ...]}
//
// Values are as DuckDB's JSON conversion gives them (DOUBLE as numbers,
// BIGINT as strings). Exits non-zero with a message on stderr when a file
// or a query fails, naming the file and the statement's position.
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const sep = args.indexOf('--');
const [dir, ...files] = sep < 0 ? args : args.slice(0, sep);
const queries = sep < 0 ? [] : args.slice(sep + 1);
if (!dir || files.length === 0) {
  console.error('usage: node run-sql.mjs DIR FILE.sql [FILE.sql ...] -- [QUERY ...]');
  process.exit(2);
}

const sqlString = (s) => "'" + s.replaceAll("'", "''") + "'";

async function main() {
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  const all = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
  const hive = fs.statSync(path.join(dir, 'runs'), { throwIfNoEntry: false })?.isDirectory() ?? false;
  for (const table of ['runs', 'requests', 'events']) {
    const scan = hive
      ? `read_parquet(${sqlString(path.join(dir, table, '**', '*.parquet'))}, hive_partitioning = false)`
      : `read_parquet(${sqlString(path.join(dir, table + '.parquet'))})`;
    await con.run(`CREATE VIEW ${table} AS SELECT * FROM ${scan}`);
  }
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const stmts = await con.extractStatements(text);
    for (let i = 0; i < stmts.count; i++) {
      try {
        const prepared = await stmts.prepare(i);
        await prepared.run();
      } catch (err) {
        throw new Error(`${file}: statement ${i + 1}: ${err.message ?? err}`);
      }
    }
  }
  const out = { duckdb_version: (await all('SELECT version() AS v'))[0].v, layout: hive ? 'hive' : 'flat', queries: [] };
  for (const sql of queries) {
    try {
      out.queries.push({ sql, rows: await all(sql) });
    } catch (err) {
      throw new Error(`query ${sql}: ${err.message ?? err}`);
    }
  }
  con.closeSync();
  instance.closeSync();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  console.error(`run-sql: ${err.message ?? err}`);
  process.exit(1);
});
