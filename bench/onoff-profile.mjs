// Not a benchmark: profiles the checkpoint-overhead job's task thread in a window with
// checkpoints every second or without (argv[2] = on|off), for a per-event comparison.
import { Session } from 'node:inspector/promises';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamExecutionEnvironment } from '../dist/index.js';
import { LocalExecutor } from '../dist/runtime/local-executor.js';
import { queries } from './queries.js';

const [mode = 'on', out = `/tmp/onoff-${mode}.cpuprofile`, unaligned = 'false'] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'sluice-onoff-'));
const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'execution.checkpointing.interval': 24 * 3600 * 1000, 'execution.checkpointing.dir': dir, 'execution.checkpointing.unaligned.enabled': unaligned === 'true' });
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
const n0 = executor.progress().sourceRecords;
const c0 = process.cpuUsage();
await session.post('Profiler.start');
const t0 = performance.now();
for (let i = 0; i < 20; i++) {
  const next = t0 + (i + 1) * 1000;
  if (mode === 'on') await executor.triggerCheckpoint();
  await sleep(Math.max(0, next - performance.now()));
}
const { profile } = await session.post('Profiler.stop');
const seconds = (performance.now() - t0) / 1000;
const n = executor.progress().sourceRecords - n0;
const c = process.cpuUsage(c0);
writeFileSync(out, JSON.stringify(profile));
console.log(JSON.stringify({ mode, seconds, events: n, eventsPerSecond: n / seconds, processCpuSeconds: (c.user + c.system) / 1e6 }));
executor.cancel();
await running.catch(() => {});
rmSync(dir, { recursive: true, force: true });
process.exit(0);
