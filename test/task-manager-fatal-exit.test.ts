// task.cancellation.timeout on a real TaskManager process: a canceled task whose close never
// ends is Flink's fatal TaskManager error. The process exits with code 1 (so its stuck
// operators go with it), the local cluster starts a new one, and the cancel completes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Configuration } from '../src/config/configuration.js';
import { LocalCluster } from '../src/cluster/local-cluster.js';
import { bundleJob } from '../src/cli/job-loader.js';

const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'stuck-close-job.ts');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('TaskManager process: task.cancellation.timeout', () => {
  it('a TaskManager whose canceled task does not close in time exits with code 1 and is replaced; the cancel completes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-fatal-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const logs: string[] = [];
    const cluster = new LocalCluster({
      config: new Configuration([
        ['jobmanager.rpc.port', 0],
        ['rest.port', 0],
        ['task.cancellation.timeout', 500],
      ]),
      taskManagers: 1,
      slotsPerTaskManager: 1,
      taskManagerOutput: 'ignore',
      log: (m) => logs.push(m),
    });
    await cluster.start();
    cleanups.push(() => cluster.stop());
    const tm = cluster.taskManagers[0]!;
    const firstPid = tm.process.pid;
    const exited = new Promise<number | null>((resolve) => tm.process.once('exit', (code) => resolve(code)));

    const bundle = await bundleJob(JOB, join(dir, 'job.mjs'));
    const executor = await cluster.jobManager.submit({ bundle, config: [['parallelism.default', 1], ['restart-strategy.type', 'none']], args: [], name: 'stuck-close' });
    const running = executor.run();
    running.catch(() => {});
    const deadline = Date.now() + 30_000;
    while (executor.progress().sourceRecords < 100) {
      if (Date.now() > deadline) throw new Error('the job did not start within 30 s');
      await new Promise((r) => setTimeout(r, 20));
    }

    const canceledAt = Date.now();
    executor.cancel();
    // The close never ends: after 500 ms the TaskManager has a fatal error and exits.
    const timeout = new Promise<string>((r) => setTimeout(() => r('still running 20 s after the cancel'), 20_000).unref());
    expect(await Promise.race([exited, timeout])).toBe(1);
    expect(Date.now() - canceledAt).toBeGreaterThanOrEqual(500);
    expect(logs.some((m) => m.includes(`(pid ${firstPid}) exited (code 1); starting a new one`)), logs.join('\n')).toBe(true);
    // The cancel completes (the TaskManager's tasks went with its process)...
    const outcome = await running.then(
      (r) => r.status,
      (e: Error) => `failed: ${e.message}`,
    );
    expect(outcome).toBe('CANCELED');
    // ...and a new TaskManager process took its place.
    const replaced = Date.now() + 30_000;
    while (tm.process.pid === firstPid || cluster.jobManager.registry.taskManagers.size < 1) {
      if (Date.now() > replaced) throw new Error('no new TaskManager registered within 30 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(tm.restarts).toBe(1);
  }, 90_000);
});
