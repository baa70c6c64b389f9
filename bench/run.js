// `npm run bench [-- --only name[,name...]] [--runs N]`: runs every benchmark in fresh
// processes, writes bench/results/<name>.json (median of the runs) and prints a table.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { queries } from './queries.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = flag('--only')?.split(',');
const runs = Number(flag('--runs') ?? 3);
const eventsOverride = flag('--events');
const names = Object.keys(queries).filter((n) => only === undefined || only.includes(n));
if (only !== undefined) for (const n of only) if (!(n in queries)) throw new Error(`unknown benchmark '${n}'; known: ${Object.keys(queries).join(', ')}`);

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
  const r = spawnSync(process.execPath, ['--max-old-space-size=4096', ...argv], { encoding: 'utf8' });
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
    node: process.version,
    commit,
    at: new Date().toISOString(),
  };
  writeFileSync(join(here, 'results', `${name}.json`), JSON.stringify(result, null, 2) + '\n');
  rows.push([name, perP[1], perP[2]]);
  console.error(`${name}: done`);
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
console.log(`\n${'benchmark'.padEnd(16)} ${'events/s/core p=1'.padStart(18)} ${'events/s/core p=2'.padStart(18)}   (median of ${runs}, one process)`);
for (const [name, p1, p2] of rows) console.log(`${name.padEnd(16)} ${fmt(p1).padStart(18)} ${fmt(p2).padStart(18)}`);
