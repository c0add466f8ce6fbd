// Reads a Chrome trace-event JSON file with @paulirish/trace_engine, the
// trace model of the Chrome DevTools Performance panel (an implementation
// independent of tokentrace), and prints what it found as JSON:
// {"events": N, "processes": [{"pid", "threads": [{"tid", "name",
// "slices": {name: count}}]}], "counters": {name: count}}.
// Usage: node check.mjs TRACE.json
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine';

// The model measures layout with DOMRect, which Node lacks (the
// package's README says to polyfill it).
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) { Object.assign(this, {x, y, width, height}); }
};

const file = process.argv[2];
if (!file) {
  console.error('usage: node check.mjs TRACE.json');
  process.exit(2);
}
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(doc.traceEvents);
const parsed = model.parsedTrace();
const out = {events: parsed.traceEvents.length, processes: [], counters: {}};
for (const [pid, proc] of parsed.data.Renderer.processes) {
  const threads = [];
  for (const [tid, th] of proc.threads) {
    const slices = {};
    for (const e of th.entries) {
      slices[e.name] = (slices[e.name] ?? 0) + 1;
    }
    threads.push({tid, name: th.name ?? '', slices});
  }
  threads.sort((a, b) => a.tid - b.tid);
  out.processes.push({pid, threads});
}
out.processes.sort((a, b) => a.pid - b.pid);
for (const e of parsed.traceEvents) {
  if (e.ph === 'C') {
    out.counters[e.name] = (out.counters[e.name] ?? 0) + 1;
  }
}
console.log(JSON.stringify(out));
