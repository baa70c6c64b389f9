// Not a benchmark: profiles the checkpoint-overhead job in one process, in alternating
// windows with checkpoints every second (on) and without (off), so that both profiles share
// the same compiled code. argv: [cycles=3] [unaligned=false] [outPrefix=/tmp/onoff] [incremental=false]
// Writes <outPrefix>-on.cpuprofiles.json and -off (arrays of profiles) and prints events.
import { Session } from 'node:inspector/promises';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamExecutionEnvironment } from '../dist/index.js';
import { LocalExecutor } from '../dist/runtime/local-executor.js';
import { queries } from './queries.js';

const [cycles = '3', unaligned = 'false', out = '/tmp/onoff', incremental = 'false'] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'sluice-onoff-'));
const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'execution.checkpointing.interval': 24 * 3600 * 1000, 'execution.checkpointing.dir': dir, 'execution.checkpointing.unaligned.enabled': unaligned === 'true', 'execution.checkpointing.incremental': incremental === 'true' });
queries['nexmark-q5'].build(env, undefined, { firstEventRate: 500_000 });
const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
const running = executor.run();
running.catch(() => {});
await sleep(15000);
await executor.triggerCheckpoint();
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 500 });
const result = { on: { events: 0, seconds: 0, profiles: [] }, off: { events: 0, seconds: 0, profiles: [] } };
async function window(mode) {
  if (mode === 'off') await sleep(300); // let the last checkpoint's asynchronous part finish
  const n0 = executor.progress().sourceRecords;
  await session.post('Profiler.start');
  const t0 = performance.now();
  for (let i = 0; i < 5; i++) {
    const next = t0 + (i + 1) * 1000;
    if (mode === 'on') executor.triggerCheckpoint().catch(() => {});
    await sleep(Math.max(0, next - performance.now()));
  }
  const { profile } = await session.post('Profiler.stop');
  const r = result[mode];
  r.seconds += (performance.now() - t0) / 1000;
  r.events += executor.progress().sourceRecords - n0;
  r.profiles.push(profile);
}
for (let c = 0; c < Number(cycles); c++) for (const m of ['off', 'on', 'on', 'off']) await window(m);
for (const m of ['on', 'off']) {
  writeFileSync(`${out}-${m}.cpuprofiles.json`, JSON.stringify(result[m].profiles));
  console.log(JSON.stringify({ mode: m, events: result[m].events, seconds: result[m].seconds, eventsPerSecond: result[m].events / result[m].seconds }));
}
console.log('ratio', result.on.events / result.on.seconds / (result.off.events / result.off.seconds));
executor.cancel();
await running.catch(() => {});
rmSync(dir, { recursive: true, force: true });
process.exit(0);
