import { spawn, type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { seededRandom } from '../src/testing/seeded-random.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'sluice.js');
const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');

let cluster: ChildProcess;
let rest = '';
/** The cluster's log (JobManager and TaskManagers), for the message of a failing test. */
let clusterLog = '';
const logTail = (): string => clusterLog.split('\n').slice(-60).join('\n');
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-failover-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  cluster = spawn(process.execPath, [BIN, 'cluster', 'run', '--taskmanagers', '2', '--rpc-port', '0', '--rest-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  cluster.stderr!.on('data', (d: Buffer) => {
    clusterLog += d.toString();
    if (clusterLog.length > 1_000_000) clusterLog = clusterLog.slice(-500_000);
  });
  rest = await new Promise<string>((resolve, reject) => {
    let out = '';
    cluster.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /cluster ready: rpc \S+ rest http:\/\/(\S+)/.exec(out);
      if (m !== null) resolve(m[1]!);
    });
    cluster.once('exit', (code) => reject(new Error(`the cluster exited (${code}):\n${clusterLog}`)));
  });
});

afterAll(async () => {
  cluster.kill('SIGTERM');
  await new Promise((r) => cluster.once('exit', r));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function get<T>(path: string): Promise<T> {
  const res = await fetch(`http://${rest}${path}`);
  return (await res.json()) as T;
}

/** Pids of the TaskManager processes, from the JobManager's REST API. */
async function taskManagerPids(): Promise<number[]> {
  const { taskmanagers } = await get<{ taskmanagers: { path: string }[] }>('/taskmanagers');
  return taskmanagers.map((t) => Number(t.path.split('/').at(-1)));
}

/** The job's state once it finished or failed (or the last one seen after 90 s). */
async function finalState(jobId: string): Promise<string> {
  const deadline = Date.now() + 90_000;
  let state = '';
  while (Date.now() < deadline) {
    state = (await get<{ state: string }>(`/jobs/${jobId}`)).state;
    if (state === 'FINISHED' || state === 'FAILED') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return state;
}

describe('cluster failover with real processes', () => {
  const variants: { name: string; options: string[]; lmdb?: true }[] = [
    // Incremental: subtasks on the TaskManagers send deltas, the JobManager builds the chains.
    { name: 'incremental checkpoints', options: ['-D', 'execution.checkpointing.incremental=true'] },
    // Changelog: subtasks send log segments continuously, checkpoints name a log position.
    { name: 'state changelog', options: ['-D', 'state.backend.changelog.enabled=true', '-D', 'state.changelog.dstl.dfs.batch.persist-delay=20 ms', '-D', 'state.backend.changelog.periodic-materialize.interval=500 ms'] },
    // lmdb, full checkpoints: subtasks spill them into the job's taskowned/ directory and send the file, which the JobManager moves into place.
    // Its working directories in a temp dir of the test: a TaskManager killed leaves them behind.
    { name: 'lmdb, full snapshots spilled into taskowned/', options: ['-D', 'state.backend.type=lmdb'], lmdb: true },
  ];
  for (const variant of variants)
  it(`SIGKILL of TaskManagers at seeded random moments (${variant.name}): the keyed job still gives exactly the reference`, async () => {
    const seed = Number(process.env.SLUICE_SEED ?? Date.now() % 100_000);
    console.log(`cluster failover seed: ${seed} (rerun with SLUICE_SEED=${seed})`);
    const next = seededRandom(seed);
    const random = { nextInt: (n: number): number => Math.floor(next() * n) };
    const out = tempDir();
    const checkpoints = tempDir();
    const records = 60_000;
    const keys = 7;
    const { stdout } = await run(process.execPath, [
      BIN, 'run', '--jobmanager', rest, '--detached', '--no-typecheck', '-p', '2',
      '-D', 'execution.checkpointing.interval=100', '-D', `execution.checkpointing.dir=${checkpoints}`,
      ...variant.options,
      ...(variant.lmdb === true ? ['-D', `state.backend.lmdb.localdir=${tempDir()}`] : []),
      '-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=100', '-D', 'restart-strategy.fixed-delay.delay=200 ms',
      JOB, out, String(records), String(keys), '6000',
    ]);
    const jobId = stdout.trim();
    let kills = 0;
    const deadline = Date.now() + 90_000;
    while (kills < 5) {
      const job = await get<{ state: string }>(`/jobs/${jobId}`);
      if (job.state === 'FINISHED') break;
      await new Promise((r) => setTimeout(r, 300 + random.nextInt(900)));
      const pids = await taskManagerPids();
      if (Date.now() > deadline) throw new Error(`seed ${seed}: ${kills} of 5 kills in 90 s (${pids.length} TaskManagers registered); the cluster's log ends:\n${logTail()}`);
      if (pids.length < 2) continue; // a killed one is still coming back
      const victim = pids[random.nextInt(pids.length)]!;
      try {
        process.kill(victim, 'SIGKILL');
        kills++;
      } catch {
        // it exited on its own meanwhile
      }
    }
    expect(await finalState(jobId), `seed ${seed}; the cluster's log ends:\n${logTail()}`).toBe('FINISHED');
    const restarts = (await get<{ numRestarts: number }>(`/jobs/${jobId}/result`)).numRestarts;
    expect(kills, `seed ${seed}: the job ended before 5 kills`).toBe(5);
    expect(restarts, `seed ${seed}`).toBeGreaterThanOrEqual(1);
    const committed = await readCommittedLines(out);
    expect(compareMultisets(committed, countReference(records, keys)), `seed ${seed}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    // Spill files of TaskManagers killed before they handed them over are removed with the job.
    expect(readdirSync(join(checkpoints, jobId, 'taskowned')), `seed ${seed}`).toEqual([]);
  }, 180_000);

  // The first job hands out ranges of the numbers on request (split requests and answers cross
  // the control connections, the enumerator's state is in every checkpoint and the savepoint);
  // the resumed one assigns statically: its one reader takes both readers' ranges, at different
  // positions, and the ranges the enumerator had not handed out.
  it('stop-with-savepoint between TaskManager kills (splits on request), resumed at parallelism 1 with static splits (one reader takes every range): exactly the reference', async () => {
    const seed = Number(process.env.SLUICE_SEED ?? Date.now() % 100_000);
    console.log(`cluster rescale seed: ${seed} (rerun with SLUICE_SEED=${seed})`);
    const next = seededRandom(seed);
    const nextInt = (n: number): number => Math.floor(next() * n);
    const out = tempDir();
    const checkpoints = tempDir();
    const savepoints = tempDir();
    const records = 40_000;
    const keys = 7;
    const submit = async (parallelism: number, splits: 'static' | 'on-request', savepoint?: string): Promise<string> =>
      (
        await run(process.execPath, [
          BIN, 'run', '--jobmanager', rest, '--detached', '--no-typecheck', '-p', String(parallelism),
          ...(savepoint === undefined ? [] : ['-s', savepoint]),
          '-D', 'execution.checkpointing.interval=100', '-D', `execution.checkpointing.dir=${checkpoints}`,
          '-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=100', '-D', 'restart-strategy.fixed-delay.delay=200 ms',
          JOB, out, String(records), String(keys), '5000', '0', splits,
        ])
      ).stdout.trim();
    const killTaskManagers = async (jobId: string, n: number): Promise<void> => {
      const deadline = Date.now() + 60_000;
      for (let kills = 0; kills < n; ) {
        await new Promise((r) => setTimeout(r, 300 + nextInt(700)));
        if ((await get<{ state: string }>(`/jobs/${jobId}`)).state === 'FINISHED') return;
        const pids = await taskManagerPids();
        if (Date.now() > deadline) throw new Error(`seed ${seed}: ${kills} of ${n} kills in 60 s (${pids.length} TaskManagers registered); the cluster's log ends:\n${logTail()}`);
        if (pids.length < 2) continue; // a killed one is still coming back
        try {
          process.kill(pids[nextInt(pids.length)]!, 'SIGKILL');
          kills++;
        } catch {
          // it exited on its own meanwhile
        }
      }
    };
    const first = await submit(2, 'on-request');
    await killTaskManagers(first, 2);
    // The stop is refused while the job restarts after a kill: try again until it is taken.
    let savepoint: string | undefined;
    for (let attempt = 0; savepoint === undefined && attempt < 100; attempt++) {
      try {
        const { stdout } = await run(process.execPath, [BIN, 'stop', '-m', rest, '--savepoint-path', savepoints, first], { timeout: 60_000 });
        savepoint = /Savepoint: (\S+)/.exec(stdout)?.[1];
      } catch (e) {
        // Refused (restarting, already stopping) is retried; a stop that does not answer is the failure.
        if ((e as { killed?: boolean }).killed === true) throw new Error(`seed ${seed}: sluice stop did not answer within 60 s; the cluster's log ends:\n${logTail()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    expect(savepoint, `seed ${seed}: stop-with-savepoint of the first job`).toBeDefined();
    const second = await submit(1, 'static', savepoint);
    await killTaskManagers(second, 2);
    expect(await finalState(second), `seed ${seed}; the cluster's log ends:\n${logTail()}`).toBe('FINISHED');
    const committed = await readCommittedLines(out);
    expect(compareMultisets(committed, countReference(records, keys)), `seed ${seed}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  }, 180_000);
});
