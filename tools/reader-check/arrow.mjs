// Arrow-based reader check for tokentrace tables: parquet-wasm (arrow-rs's
// Parquet reader, which takes the column types from the ARROW:schema key
// when a file has one) reads each file into Arrow, apache-arrow decodes it.
//
// Usage: node arrow.mjs FILE.parquet [FILE.parquet ...]
//
// Prints one JSON object on stdout:
//
//   {"files": [{"path": "…", "rows": 123,
//               "fields": [{"name": "start_time", "type": "Timestamp<NANOSECOND, UTC>",
//                           "nullable": true, "nulls": 4}, …]}, …]}
//
// Exits non-zero with the reader's message on stderr when a file cannot be
// read.
import fs from 'node:fs';
import { readParquet } from 'parquet-wasm/node';
import { tableFromIPC } from 'apache-arrow';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node arrow.mjs FILE.parquet [FILE.parquet ...]');
  process.exit(2);
}
const out = { files: [] };
for (const path of files) {
  try {
    const wasmTable = readParquet(new Uint8Array(fs.readFileSync(path)));
    const table = tableFromIPC(wasmTable.intoIPCStream());
    out.files.push({
      path,
      rows: table.numRows,
      fields: table.schema.fields.map((f) => ({
        name: f.name,
        type: String(f.type),
        nullable: f.nullable,
        nulls: table.getChild(f.name).nullCount,
      })),
    });
  } catch (err) {
    console.error(`arrow.mjs: ${path}: ${err.message ?? err}`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify(out) + '\n');
