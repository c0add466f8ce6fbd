// Independent reader check for tokentrace tables.
//
// Usage: node check.mjs DIR [SQL ...]
//
// Opens DIR/events.parquet, DIR/requests.parquet and DIR/runs.parquet with
// DuckDB (nothing of tokentrace's own code involved) and prints one JSON
// object on stdout:
//
//   {
//     "duckdb_version": "v1.5.6",
//     "tables": {
//       "events": {
//         "rows": 123,
//         "columns": [{"name": "run_id", "type": "VARCHAR", "nulls": 0}, ...],
//         "metadata": {"tokentrace.schema_version": "1", ...}
//       }, ...
//     },
//     "queries": [{"sql": "...", "rows": [{...}, ...]}, ...]
//   }
//
// DIR may also hold the hive-partitioned layout (DIR/events/run_id=…/
// part-NNNNN.parquet, …): each table is then read as one table with
// read_parquet('DIR/<table>/**/*.parquet', hive_partitioning = true).
//
// Each extra SQL argument is run as is and its result rows are reported
// under "queries" (values as DuckDB's JSON conversion gives them). The
// process exits non-zero with a message on stderr if DuckDB cannot read a
// file or a query fails.
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import path from 'node:path';

const [dir, ...queries] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node check.mjs DIR [SQL ...]');
  process.exit(2);
}

const sqlString = (s) => "'" + s.replaceAll("'", "''") + "'";
const ident = (s) => '"' + s.replaceAll('"', '""') + '"';

async function main() {
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  const all = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();

  const out = { duckdb_version: (await all('SELECT version() AS v'))[0].v, tables: {}, queries: [] };
  const hive = fs.statSync(path.join(dir, 'runs'), { throwIfNoEntry: false })?.isDirectory() ?? false;
  out.layout = hive ? 'hive' : 'flat';
  for (const table of ['events', 'requests', 'runs']) {
    const file = hive ? sqlString(path.join(dir, table, '**', '*.parquet')) : sqlString(path.join(dir, table + '.parquet'));
    const scan = hive ? `read_parquet(${file}, hive_partitioning = true)` : `read_parquet(${file})`;
    const cols = await all(`DESCRIBE SELECT * FROM ${scan}`);
    const counts = cols.map((c) => `count(*) - count(${ident(c.column_name)}) AS ${ident(c.column_name)}`);
    const [nulls] = await all(`SELECT count(*) AS "__rows", ${counts.join(', ')} FROM ${scan}`);
    const meta = await all(
      `SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(${file})`);
    out.tables[table] = {
      rows: Number(nulls.__rows),
      columns: cols.map((c) => ({ name: c.column_name, type: c.column_type, nulls: Number(nulls[c.column_name]) })),
      metadata: Object.fromEntries(meta.map((m) => [m.key, m.value])),
    };
  }
  for (const sql of queries) {
    out.queries.push({ sql, rows: await all(sql) });
  }
  con.closeSync();
  instance.closeSync();
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

main().catch((err) => {
  console.error(`duckdb-check: ${err.message ?? err}`);
  process.exit(1);
});
