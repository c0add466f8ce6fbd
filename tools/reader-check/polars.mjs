// Independent reader check for tokentrace tables with nodejs-polars.
//
// Usage: node polars.mjs PATTERN [PATTERN ...]
//
// Reads each PATTERN (a Parquet file or a glob such as
// 'sweeps/*/requests/**/*.parquet', formats/SCHEMA.md) with
// pl.scanParquet(PATTERN, {hivePartitioning: true}), run_id read as a
// string, and prints one JSON object on stdout:
//
//   {"polars_version": "…",
//    "tables": [{"pattern": "…", "rows": 123,
//                "columns": [{"name": "run_id", "dtype": "String", "nulls": 0}, …],
//                "run_ids": ["a", "b", …]}, …]}
//
// Exits non-zero with polars' message on stderr when a pattern cannot be
// read as one table (e.g. files inside and outside run_id= partitions).
import pl from 'nodejs-polars';

const patterns = process.argv.slice(2);
if (patterns.length === 0) {
  console.error('usage: node polars.mjs PATTERN [PATTERN ...]');
  process.exit(2);
}

const out = { polars_version: pl.version ?? '', tables: [] };
for (const pattern of patterns) {
  try {
    const df = pl
      .scanParquet(pattern, { hivePartitioning: true, hiveSchema: { run_id: pl.String }, tryParseHiveDates: false })
      .collectSync();
    const nulls = df.nullCount();
    out.tables.push({
      pattern,
      rows: df.height,
      columns: df.columns.map((name) => ({ name, dtype: String(df.getColumn(name).dtype), nulls: Number(nulls.getColumn(name).get(0)) })),
      run_ids: df.getColumn('run_id').unique().sort().toArray(),
    });
  } catch (err) {
    console.error(`polars.mjs: ${pattern}: ${err.message ?? err}`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify(out) + '\n');
