// Reads a Touchstone Chrome trace with Chrome DevTools' own trace engine (install.sh) and checks
// that it reads it whole: every complete slice ('X') becomes an entry of its thread, and every flow
// (s/f pair) binds at both ends. Prints the counts; exits 1 on a shortfall.
//   node check_trace.mjs ENGINE_DIR TRACE.json
import {readFileSync} from 'node:fs';
import {pathToFileURL} from 'node:url';
import {join} from 'node:path';

const [engineDir, tracePath] = process.argv.slice(2);
const {Trace} = await import(pathToFileURL(join(engineDir, 'trace_engine.mjs')).href);
const events = JSON.parse(readFileSync(tracePath, 'utf8')).traceEvents;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events, {isFreshRecording: false});
const data = model.parsedTrace(0).data;

const slices = events.filter(e => e.ph === 'X').length;
let entries = 0;
for (const [, p] of data.Renderer.processes)
  for (const [, t] of p.threads) entries += t.entries.length;
const flowIds = new Set(events.filter(e => e.ph === 's').map(e => e.id));
// A bound flow is the list of the events its phase events bound to, one per end (same-time ends of
// a vertical arrow on one thread bind to one event).
const bound = data.Flows.flows.length;
console.log(`${tracePath}: ${entries} of ${slices} slices read, ${bound} of ${flowIds.size} flows bound`);
if (entries !== slices || bound !== flowIds.size || flowIds.size === 0) process.exit(1);
