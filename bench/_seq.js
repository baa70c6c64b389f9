// node bench/_seq.js <query> <events...>: jobs back to back on one cluster; per job lines/s per core, per-TM CPU share
// and the CPU share of this process (the JobManager and the driver). PIN=1 pins TaskManager i to core i.
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Configuration } from '../dist/config/configuration.js';
import { LocalCluster } from '../dist/cluster/local-cluster.js';
import { bundleJob } from '../dist/cli/job-loader.js';
const here = dirname(fileURLToPath(import.meta.url));
const [query, ...sizes] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'seq-'));
const code = await bundleJob(join(here, 'jobs', 'cluster-bench-job.js'), join(dir, 'job.mjs'));
const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };
const cluster = new LocalCluster({ config: new Configuration([['jobmanager.rpc.port', 0], ['rest.port', 0]]), taskManagers: 2, slotsPerTaskManager: 1, taskManagerOutput: 'inherit', log: () => {} });
await cluster.start();
if (process.env.PIN) cluster.taskManagers.forEach((t, i) => execSync(`taskset -p -c ${i} ${t.process.pid}`));
const config = [['parallelism.default', 2], ...JSON.parse(process.env.BENCH_EXTRA ?? '[]')];
for (const n of sizes) {
  const before = cluster.taskManagers.map((t) => cpu(t.process.pid));
  const selfBefore = cpu(process.pid);
  const ex = await cluster.jobManager.submit({ bundle: code, config, args: [query, n], name: query });
  const r = await ex.run();
  const s = r.durationMs / 1000;
  const used = cluster.taskManagers.map((t, i) => cpu(t.process.pid) - before[i]);
  const tot = used.reduce((a, b) => a + b, 0);
  const selfUsed = cpu(process.pid) - selfBefore;
  console.log(`jm+driver ${(selfUsed / s).toFixed(3)} ${n}: ${Math.round(Number(n) / s / 2 / 1000)}k/core  busy ${used.map((u) => (u / s).toFixed(2)).join('/')}  perCpuSec ${Math.round(Number(n) / tot / 1000)}k`);
}
await cluster.stop();
rmSync(dir, { recursive: true, force: true });
