import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Configuration } from '../src/config/configuration.js';
import { JobManager } from '../src/cluster/job-manager.js';
import { TaskManager } from '../src/cluster/task-manager.js';
import { bundleJob } from '../src/cli/job-loader.js';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { countReference } from './support/counting-job.js';
// @ts-expect-error no types
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-cluster-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
};

async function cluster(taskManagers: number, slots = 1): Promise<{ jm: JobManager; tms: TaskManager[] }> {
  const jm = new JobManager({ config: new Configuration([['jobmanager.rpc.port', 0], ['rest.port', 0]]), log: () => {} });
  await jm.start();
  cleanups.push(() => jm.stop());
  const tms: TaskManager[] = [];
  for (let i = 0; i < taskManagers; i++) {
    const tm = new TaskManager({ jobManagerHost: '127.0.0.1', jobManagerPort: jm.rpcPort, slots, host: '127.0.0.1', id: `tm-${i}`, log: () => {} });
    await tm.start();
    cleanups.push(() => tm.stop());
    tms.push(tm);
  }
  return { jm, tms };
}

describe('cluster runtime: JobManager and TaskManagers over TCP', () => {
  it.each([
    ['aligned', false],
    ['unaligned', true],
  ])('runs a keyed job across two TaskManagers exactly-once, with %s checkpoints', async (_mode, unaligned) => {
    const { jm } = await cluster(2);
    const out = tempDir();
    const bundle = await bundleJob(JOB, join(tempDir(), 'job.mjs'));
    const executor = await jm.submit({
      bundle,
      config: [
        ['parallelism.default', 2],
        ['execution.checkpointing.interval', 50],
        ['execution.checkpointing.dir', tempDir()],
        ['execution.checkpointing.unaligned.enabled', unaligned],
      ],
      args: [out, '20000', '7', '40000'],
      name: 'keyed-count',
    });
    const result = await executor.run();
    expect(result.status).toBe('FINISHED');
    const committed = await readCommittedLines(out);
    expect(compareMultisets(committed, countReference(20_000, 7))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(executor.checkpointStats.counts.completed).toBeGreaterThan(0);
    if (unaligned) expect(executor.checkpointStats.entries().some((e) => e.checkpointType === 'UNALIGNED_CHECKPOINT')).toBe(true);
  });

  it('watermark alignment across TaskManagers: aligned, a source far ahead waits for the slow one of its group (reports and answers travel over the control connection)', { timeout: 60_000 }, async () => {
    const { jm } = await cluster(2);
    const bundle = await bundleJob(join(import.meta.dirname, 'fixtures', 'cluster', 'aligned-sources-job.ts'), join(tempDir(), 'job.mjs'));
    const gapMs = async (aligned: boolean): Promise<number> => {
      const file = join(tempDir(), 'ends.txt');
      const executor = await jm.submit({ bundle, config: [['parallelism.default', 2]], args: [file, String(aligned), '2000'], name: `aligned-${aligned}` });
      expect((await executor.run()).status).toBe('FINISHED');
      const ends = new Map<string, number>();
      for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
        const [name, at] = line.split(' ');
        ends.set(name!, Math.max(ends.get(name!) ?? 0, Number(at)));
      }
      return ends.get('slow')! - ends.get('fast')!;
    };
    // The slow source takes 2 s (2,000 records at 1,000/s), the fast one 0.1 s alone: unaligned they end ~1.9 s apart.
    expect(await gapMs(false)).toBeGreaterThan(600);
    // Aligned with a drift of 100 ms of event time (the slow source's next 100 ms), they end ~0.1 s apart.
    expect(await gapMs(true)).toBeLessThan(400);
  });

  it('a record holding a function fails the job with a message that says so, instead of losing the function on the way', async () => {
    const { jm } = await cluster(2);
    const bundle = await bundleJob(join(import.meta.dirname, 'fixtures', 'cluster', 'function-record-job.ts'), join(tempDir(), 'job.mjs'));
    const executor = await jm.submit({ bundle, config: [['parallelism.default', 2], ['restart-strategy.type', 'none']], args: [], name: 'function-records' });
    const failure = await executor.run().then(
      (r) => new Error(`finished with status ${r.status}`),
      (e: Error) => e,
    );
    const messages: string[] = [];
    for (let e: unknown = failure; e instanceof Error; e = e.cause) messages.push(e.message);
    expect(messages.join(' <- ')).toMatch(/cannot be sent: it holds a function.*create functions and symbols in the operator that uses them/);
  });

  it.each([
    ['name', /the job graph built on TaskManager tm-\d differs from the JobManager's: operator 1 of vertex '.*' is 'numbers-elsewhere \(uid numbers\)' here but 'numbers \(uid numbers\)' on the JobManager/],
    ['splits', /the job graph built on TaskManager tm-\d differs from the JobManager's: source 'numbers.*' assigns its splits on-request here but static on the JobManager/],
  ])('a job module that builds another graph on a TaskManager (%s) fails to deploy, naming what differs, without restarts (a restart builds it again)', async (differs, message) => {
    const { jm } = await cluster(2);
    const bundle = await bundleJob(join(import.meta.dirname, 'fixtures', 'cluster', 'process-dependent-job.ts'), join(tempDir(), 'job.mjs'));
    (globalThis as { __sluiceTestBuilds?: number }).__sluiceTestBuilds = 0;
    const restarts = [['restart-strategy.type', 'fixed-delay'], ['restart-strategy.fixed-delay.attempts', 5], ['restart-strategy.fixed-delay.delay', 1]] as const;
    const executor = await jm.submit({ bundle, config: [['parallelism.default', 2], ...restarts], args: [differs], name: `differs-${differs}` });
    const failure = await executor.run().then(
      (r) => new Error(`finished with status ${r.status}`),
      (e: Error) => e,
    );
    const messages: string[] = [];
    for (let e: unknown = failure; e instanceof Error; e = e.cause) messages.push(e.message);
    expect(messages.join(' <- ')).toMatch(message);
    expect(failure.message).toMatch(/\(not restarted: a restart cannot fix this failure\)$/);
    expect(executor.progress().numRestarts).toBe(0);
  });

  it('every TaskManager serves /metrics of its tasks (Prometheus text), listed by /taskmanagers', async () => {
    const { jm } = await cluster(2);
    const out = tempDir();
    const bundle = await bundleJob(JOB, join(tempDir(), 'job.mjs'));
    const executor = await jm.submit({ bundle, config: [['parallelism.default', 2]], args: [out, '20000', '7', '5000'], name: 'metrics' });
    const done = executor.run();
    const tms = (await (await fetch(`${jm.restUrl}/taskmanagers`)).json()) as { taskmanagers: { id: string; metricsUrl?: string }[] };
    expect(tms.taskmanagers.length).toBe(2);
    const counts = async (url: string): Promise<number> => {
      const families = parsePrometheusTextFormat(await (await fetch(url)).text()) as { name: string; metrics: { value: string; labels: Record<string, string> }[] }[];
      const f = families.find((x) => x.name === 'flink_taskmanager_job_task_numRecordsIn');
      return (f?.metrics ?? []).filter((m) => m.labels.job_id === executor.jobId).reduce((a, m) => a + Number(m.value), 0);
    };
    await expect.poll(async () => {
      let total = 0;
      for (const t of tms.taskmanagers) total += await counts(t.metricsUrl!);
      return total;
    }, { timeout: 20_000 }).toBeGreaterThan(0);
    expect((await done).status).toBe('FINISHED');
  });

  it('stop-with-savepoint on the cluster, then a run restored from it at another parallelism: exactly-once', async () => {
    const { jm } = await cluster(2, 2);
    const out = tempDir();
    const savepoints = tempDir();
    const bundle = await bundleJob(JOB, join(tempDir(), 'job.mjs'));
    const config = (p: number): [string, number | string][] => [
      ['parallelism.default', p],
      ['execution.checkpointing.interval', 100],
      ['execution.checkpointing.dir', tempDir()],
    ];
    const first = await jm.submit({ bundle, config: config(2), args: [out, '30000', '7', '10000'], name: 'stop' });
    const firstDone = first.run();
    await expect.poll(() => first.checkpointStats.counts.completed, { timeout: 20_000 }).toBeGreaterThan(1);
    const savepoint = await first.stopWithSavepoint(savepoints);
    expect((await firstDone).status).toBe('FINISHED');
    const second = await jm.submit({ bundle, config: config(3), args: [out, '30000', '7', '10000'], name: 'resume', savepointPath: savepoint.pointer });
    expect((await second.run()).status).toBe('FINISHED');
    const committed = await readCommittedLines(out);
    expect(compareMultisets(committed, countReference(30_000, 7))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});

describe('TaskManagers with the same --id', () => {
  // They evicted each other: each registration dropped the other, which reconnected and dropped it back.
  it('the second live process is refused with the fix; the first stays registered', { timeout: 60_000 }, async () => {
    const { spawn } = await import('node:child_process');
    const { jm } = await cluster(0);
    const spawnTm = (): { proc: ReturnType<typeof spawn>; stderr: () => string } => {
      const proc = spawn(process.execPath, ['bin/sluice.js', 'taskmanager', '--jobmanager', `127.0.0.1:${jm.rpcPort}`, '--id', 'same'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      cleanups.push(() => void proc.kill('SIGKILL'));
      return { proc, stderr: () => err };
    };
    const registered = async (): Promise<string[]> => {
      const body = (await (await fetch(`${jm.restUrl}/taskmanagers`)).json()) as { taskmanagers: { id: string; path: string }[] };
      return body.taskmanagers.map((t) => `${t.id} ${t.path.split('/').at(-1)}`);
    };
    const first = spawnTm();
    await expect.poll(first.stderr, { timeout: 30_000 }).toMatch(/registered at the JobManager/);
    const second = spawnTm();
    await expect.poll(second.stderr, { timeout: 30_000 }).toMatch(
      new RegExp(`refused this TaskManager: TaskManager 'same' is registered already by another process \\(pid ${first.proc.pid}, data at [\\d.]+:\\d+\\), which is alive: give each TaskManager its own --id`),
    );
    // Over several heartbeats (1 s) and a retry of the second (5 s), the first keeps its registration.
    for (let i = 0; i < 7; i++) {
      expect(await registered()).toEqual([`same ${first.proc.pid}`]);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(first.stderr()).not.toMatch(/lost|refused|registered at the JobManager[\s\S]*registered at the JobManager/);
    // Once the first is gone, the second gets in on its next try.
    first.proc.kill('SIGKILL');
    await expect.poll(registered, { timeout: 30_000, interval: 200 }).toEqual([`same ${second.proc.pid}`]);
  });
});

describe('a JobManager that stops while a job runs', () => {
  // It claimed a restarted JobManager would take the job back, also without a directory to keep it in.
  it.each([
    ['with a checkpoint directory', true, /^job [0-9a-f]{32} suspended: a JobManager started again on the same high-availability directory \(.*jobmanager-ha\) takes it back$/m],
    ['without one', false, /^job [0-9a-f]{32} suspended: no JobManager takes it back, since no high-availability directory keeps it \(set high-availability\.storageDir or execution\.checkpointing\.dir\)$/m],
  ])('logs what becomes of the suspended job, %s', { timeout: 60_000 }, async (_name, withDir, expected) => {
    const log: string[] = [];
    const config = new Configuration([
      ['jobmanager.rpc.port', 0],
      ['rest.port', 0],
      ...(withDir ? ([['execution.checkpointing.dir', tempDir()]] as const) : []),
    ]);
    const jm = new JobManager({ config, log: (m) => log.push(m) });
    await jm.start();
    const tm = new TaskManager({ jobManagerHost: '127.0.0.1', jobManagerPort: jm.rpcPort, slots: 1, host: '127.0.0.1', id: 'tm-0', log: () => {} });
    await tm.start();
    cleanups.push(() => tm.stop());
    const bundle = await bundleJob(JOB, join(tempDir(), 'job.mjs'));
    const executor = await jm.submit({ bundle, config: [['parallelism.default', 1]], args: [tempDir(), '100000000', '7', '1000'], name: 'keyed-count' });
    await expect.poll(() => executor.status, { timeout: 30_000 }).toBe('RUNNING');
    await jm.stop();
    expect(log.join('\n')).toMatch(expected);
  });
});
