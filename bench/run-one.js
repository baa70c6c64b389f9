// Runs one benchmark once in this process and prints its result as JSON on stdout.
// usage: node bench/run-one.js <name> <parallelism> [events]
import { StreamExecutionEnvironment } from '../dist/index.js';
import { queries } from './queries.js';

const [name, parallelismText, eventsText] = process.argv.slice(2);
const q = queries[name];
if (q === undefined) {
  console.error(`unknown benchmark '${name}'; known: ${Object.keys(queries).join(', ')}`);
  process.exit(2);
}
const parallelism = Number(parallelismText ?? 1);
const events = Number(eventsText ?? q.events);
const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism });
const sink = q.build(env, events);
const started = performance.now();
const result = await env.execute(name);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage();
const sourceRecords = result.vertices.filter((v) => v.name.startsWith('nexmark') || v.name.startsWith('lines')).reduce((a, v) => a + v.recordsIn, 0);
process.stdout.write(
  JSON.stringify({ name, parallelism, events, seconds, eventsPerSecond: events / seconds, outputRecords: sink.count, sourceRecords, cpuSeconds: (cpu.user + cpu.system) / 1e6 }) + '\n',
);
