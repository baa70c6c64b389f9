// `sluice upgrade <jobId> job.ts` against a real JobManager and TaskManager: a new version that
// cannot take the running job's state is refused before anything stops (the job runs on); a
// compatible one replaces the job through a savepoint at another parallelism, and the output of
// both versions together is exactly the reference (no count lost or repeated across the switch).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobManager } from '../src/cluster/job-manager.js';
import { TaskManager } from '../src/cluster/task-manager.js';
import { Configuration } from '../src/config/configuration.js';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { parseUpgradeArgs } from '../src/cli/upgrade-command.js';
import { jobState, latestCompletedCheckpoint, runSluice } from './support/cluster-processes.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'cluster');
const cleanups: (() => Promise<void> | void)[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-upgrade-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
};
let rest = '';

beforeAll(async () => {
  const jm = new JobManager({ config: new Configuration([['jobmanager.rpc.port', 0], ['rest.port', 0]]), log: () => {} });
  await jm.start();
  cleanups.push(() => jm.stop());
  rest = jm.restUrl.replace(/^http:\/\//, '');
  const tm = new TaskManager({ jobManagerHost: '127.0.0.1', jobManagerPort: jm.rpcPort, slots: 4, host: '127.0.0.1', id: 'tm-upgrade', log: () => {} });
  await tm.start();
  cleanups.push(() => tm.stop());
});

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('sluice upgrade', () => {
  it('reads its own options, the job id, then sluice run\'s options and the job', () => {
    const id = 'ab'.repeat(16);
    expect(parseUpgradeArgs(['--jobmanager', 'h:1', '--savepoint-path', '/sp', '-p', '3', id, 'job.ts', 'a', '-p'])).toEqual({
      jobId: id,
      savepointDir: '/sp',
      formatType: 'CANONICAL',
      checkState: true,
      runArgv: ['-d', '--jobmanager', 'h:1', '-p', '3', 'job.ts', 'a', '-p'],
    });
    expect(() => parseUpgradeArgs(['job.ts'])).toThrow(/'job\.ts' is not a job id/);
    expect(() => parseUpgradeArgs([id])).toThrow(/the new job's module is missing/);
    expect(() => parseUpgradeArgs(['-s', '/sp', id, 'job.ts'])).toThrow(/-s: the new job starts from the savepoint the running job stops with/);
  });

  it('refuses a version that cannot take the state without stopping the job, then replaces it by a compatible one at another parallelism: exactly once across the switch', { timeout: 180_000 }, async () => {
    const checkpoints = tempDir();
    const out = join(tempDir(), 'out');
    const records = 20_000;
    const keys = 7;
    // The first version runs slowly, so it is still running when it is upgraded; the new one
    // reads the rest fast (the rate is an argument, not state).
    const jobArgs = (eventsPerSecond: number): string[] => [out, String(records), String(keys), String(eventsPerSecond), '0'];
    const options = ['--jobmanager', rest, '-D', `execution.checkpointing.dir=${checkpoints}`, '-D', 'execution.checkpointing.interval=200ms'];
    const submitted = await runSluice(['run', '-d', ...options, '-p', '2', join(FIXTURES, 'keyed-count-job.ts'), ...jobArgs(200)]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const jobId = /\b([0-9a-f]{32})\b/.exec(submitted.stdout)![1]!;
    for (let i = 0; (await latestCompletedCheckpoint(rest, jobId)).id < 1; i++) {
      if (i > 400) throw new Error('no checkpoint completed');
      await new Promise((r) => setTimeout(r, 50));
    }

    // The new version's counting operator has another uid: the keyed counts would be dropped.
    const refused = await runSluice(['upgrade', ...options, jobId, join(FIXTURES, 'keyed-count-job.ts'), ...jobArgs(200), 'static', 'count-renamed']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`cannot take the state of job ${jobId}: the snapshot has state for operators that are not in the job: count; .*Job ${jobId} was not stopped`));
    expect(await jobState(rest, jobId)).toBe('RUNNING');

    const upgraded = await runSluice(['upgrade', ...options, '--savepoint-path', join(checkpoints, 'savepoints'), '-p', '3', jobId, join(FIXTURES, 'keyed-count-job.ts'), ...jobArgs(20_000)]);
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(upgraded.stderr).toMatch(new RegExp(`Job ${jobId} stopped with savepoint `));
    const newId = /\b([0-9a-f]{32})\b/.exec(upgraded.stdout)![1]!;
    expect(newId).not.toBe(jobId);
    expect(await jobState(rest, jobId)).toBe('FINISHED');
    for (let i = 0; (await jobState(rest, newId)) !== 'FINISHED'; i++) {
      if (i > 1200) throw new Error(`the upgraded job did not finish: ${await jobState(rest, newId)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const vertices = ((await (await fetch(`http://${rest}/jobs/${newId}`)).json()) as { vertices: { parallelism: number }[] }).vertices;
    expect(Math.max(...vertices.map((v) => v.parallelism))).toBe(3);
    expect(compareMultisets(await readCommittedLines(out), countReference(records, keys))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});
