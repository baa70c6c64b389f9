// Runs one benchmark once in this process and prints its result as JSON on stdout.
// usage: node bench/run-one.js <name> <parallelism> [events]     (Nexmark and word count)
//        node bench/run-one.js <name> <step>                     (bench/checkpoint-benchmarks.js)
import { StreamExecutionEnvironment } from '../dist/index.js';
import { queries } from './queries.js';
import { checkpointBenchmarks as faultToleranceBenchmarks } from './checkpoint-benchmarks.js';
import { stateBackendBenchmarks } from './state-backend-benchmarks.js';
import { clusterBenchmarks } from './cluster-benchmarks.js';

const [name, ...rest] = process.argv.slice(2);
// The Kafka benchmarks' module (and with it the Kafka client library) is loaded only for a
// Kafka benchmark (they are named kafka-*): loaded into every run, it cut the in-process word
// count from 1.1M to 0.4M lines/s. The library's modules shifted this process's early garbage
// collections so that V8 decided to allocate the job's [word, n] tuples straight into the old
// generation (allocation-site pretenuring, a decision V8 does not take back): 16 full
// collections a run instead of 1, GC time up from 0.2 s to 1.2 s (--trace-pretenuring,
// --trace-gc; docs/architecture.md).
const kafkaBenchmarks = name?.startsWith('kafka-') ? (await import('./kafka-benchmarks.js')).kafkaBenchmarks : {};
const checkpointBenchmarks = { ...faultToleranceBenchmarks, ...stateBackendBenchmarks, ...clusterBenchmarks, ...kafkaBenchmarks };
const q = queries[name];
const cb = checkpointBenchmarks[name];
if (q !== undefined) {
  const [parallelismText, eventsText] = rest;
  const parallelism = Number(parallelismText ?? 1);
  const events = Number(eventsText ?? q.events);
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism, ...(q.config ?? {}) });
  const sink = q.build(env, events);
  const started = performance.now();
  const result = await env.execute(name);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage();
  const sourceRecords = result.vertices.filter((v) => v.name.startsWith('nexmark') || v.name.startsWith('lines')).reduce((a, v) => a + v.recordsIn, 0);
  process.stdout.write(
    JSON.stringify({ name, parallelism, events, seconds, eventsPerSecond: events / seconds, outputRecords: sink.count, sourceRecords, cpuSeconds: (cpu.user + cpu.system) / 1e6 }) + '\n',
  );
} else if (cb !== undefined) {
  const [step] = rest;
  if (step === undefined) {
    console.error(`usage: node bench/run-one.js ${name} <step>   (steps: ${[...new Set([...cb.steps(0), ...cb.steps(1)])].join(', ')})`);
    process.exit(2);
  }
  const started = performance.now();
  const sample = await cb.runStep(step);
  const cpu = process.cpuUsage();
  process.stdout.write(JSON.stringify({ name, step, ...sample, seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 }) + '\n');
  // Timers of a canceled job (sleeping sinks, rate-limited sources) must not keep the process alive.
  process.exit(0);
} else {
  const { kafkaBenchmarks: all } = await import('./kafka-benchmarks.js');
  const known = new Set([...Object.keys(queries), ...Object.keys(checkpointBenchmarks), ...Object.keys(all)]);
  console.error(`unknown benchmark '${name}'; known: ${[...known].join(', ')}`);
  process.exit(2);
}
