import { spawn, type ChildProcess, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { latestRetainedCheckpoint } from '../src/cluster/job-manager.js';
import { sharedPathsOf } from '../src/runtime/checkpoint/shared-state-registry.js';
import { locateSnapshot, readSnapshotMetadata } from '../src/runtime/storage/snapshot-directory-reader.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { startS3Server } from './services/s3-server.js';
import { S3CheckpointStorage } from '../src/runtime/storage/s3-checkpoint-storage.js';
import { S3Client, s3SettingsFrom } from '../src/runtime/storage/s3-client.js';
import { Configuration } from '../src/config/configuration.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'sluice.js');
const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');

const processes: ChildProcess[] = [];
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-jm-restart-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts `sluice <args>` and resolves with the first match of `ready` in its output. */
function start(args: string[], ready: RegExp, cwd?: string): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(cwd === undefined ? {} : { cwd }) });
  processes.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = ready.exec(out);
      if (m !== null) resolve({ child, match: m, output: () => out });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`sluice ${args[0]} exited (${code}):\n${out}`)));
  });
}

async function get<T>(rest: string, path: string): Promise<T> {
  return (await (await fetch(`http://${rest}${path}`)).json()) as T;
}


const RECORDS = 40_000;
const KEYS = 5;

/**
 * Submits the keyed count job (detached) and resolves with its id once it has completed 3
 * checkpoints. `chk` undefined: the job names no checkpoint directory (it takes the JobManager's).
 */
async function submitAndCheckpoint(rest: string, chk: string | undefined, out: string, options: readonly string[] = []): Promise<string> {
  const { stdout } = await run(process.execPath, [
    BIN, 'run', '--jobmanager', rest, '--detached', '--no-typecheck', '-p', '2', ...options,
    '-D', 'execution.checkpointing.interval=100', ...(chk === undefined ? [] : ['-D', `execution.checkpointing.dir=${chk}`]),
    JOB, out, String(RECORDS), String(KEYS), '5000',
  ]);
  const jobId = stdout.trim();
  for (;;) {
    const c = await get<{ counts: { completed: number } }>(rest, `/jobs/${jobId}/checkpoints`);
    if (c.counts.completed >= 3) return jobId;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The job's status once it is FINISHED or FAILED (or after a minute). */
async function finalStatus(rest: string, jobId: string): Promise<string> {
  let status = '';
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && status !== 'FINISHED' && status !== 'FAILED') {
    await new Promise((r) => setTimeout(r, 200));
    status = (await get<{ jobs: { id: string; status: string }[] }>(rest, '/jobs')).jobs.find((j) => j.id === jobId)?.status ?? '';
  }
  return status;
}

describe('JobManager restart', () => {
  it.each([
    ['SIGKILL', 'killed', []],
    ['SIGTERM', 'stopped', []],
    // Nothing inlined in _metadata: the small state goes to shared files, which the restored checkpoint references.
    ['SIGKILL', 'killed, incremental checkpoints', ['-D', 'execution.checkpointing.incremental=true', '-D', 'execution.checkpointing.data-inline-threshold=0']],
  ] as const)('a JobManager %s (%s), started again, takes its job back from the latest checkpoint; TaskManagers reconnect; output exactly-once', async (signal, _how, options) => {
    const rpcPort = await freePort();
    const chk = tempDir();
    const jmArgs = ['jobmanager', '--rpc-port', String(rpcPort), '--rest-port', '0', '-D', `execution.checkpointing.dir=${chk}`];
    const first = await start(jmArgs, /REST API at http:\/\/(\S+)/);
    let rest = first.match[1]!;
    for (let i = 0; i < 2; i++) await start(['taskmanager', '--jobmanager', `127.0.0.1:${rpcPort}`, '--id', `tm-${i}`], /registered at the JobManager/);
    const out = tempDir();
    // Stop the JobManager once the job has completed a few checkpoints.
    const jobId = await submitAndCheckpoint(rest, chk, out, options);
    // SIGTERM stops it gracefully: it suspends the job (checkpoints and HA record kept).
    first.child.kill(signal);
    await new Promise((r) => first.child.once('exit', r));
    // The checkpoint the next JobManager takes the job back from, and the shared files it references.
    const takenBackFrom = latestRetainedCheckpoint(join(chk, jobId))!;
    const itsSharedFiles = sharedPathsOf(await readSnapshotMetadata(await locateSnapshot(takenBackFrom))).map((p) => join(chk, jobId, 'shared', p));
    const second = await start(jmArgs, /REST API at http:\/\/(\S+)/);
    rest = second.match[1]!;
    const state = await finalStatus(rest, jobId);
    expect(state).toBe('FINISHED');
    const restored = await get<{ latest: { restored: { id: number } | null } }>(rest, `/jobs/${jobId}/checkpoints`);
    expect(restored.latest.restored?.id).toBeGreaterThanOrEqual(3);
    const committed = await readCommittedLines(out);
    expect(compareMultisets(committed, countReference(RECORDS, KEYS))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    // The checkpoint it was taken back from joined the retained ones and went with them: a
    // finished job leaves no checkpoint behind (the restored chk-N stayed for ever).
    const jobDir = join(chk, jobId);
    expect(existsSync(jobDir) ? readdirSync(jobDir).filter((n) => n.startsWith('chk-')) : [], second.output()).toEqual([]);
    // With incremental checkpoints, the shared files it referenced went with it.
    if (options.length > 0) expect(itsSharedFiles.length, 'an incremental checkpoint references shared files').toBeGreaterThan(0);
    expect(itsSharedFiles.filter((f) => existsSync(f))).toEqual([]);
  }, 120_000);
});

describe('JobManager restart, checkpoints in S3', () => {
  // Both the checkpoints and the high-availability records (by default beside them) are in
  // the bucket: a restarted JobManager must find both there. The processes run in an empty
  // directory of their own, so a path that is not S3 (`s3:/...` from a path join) shows.
  it('a JobManager SIGKILLed while checkpointing to s3://, started again, takes its job back from the newest checkpoint in the bucket; output exactly-once', async () => {
    const s3 = await startS3Server(['sluice']);
    const mine = processes.length;
    try {
      const rpcPort = await freePort();
      const cwd = tempDir();
      const chk = 's3://sluice/checkpoints';
      const s3Options = Object.entries(s3.config).flatMap(([k, v]) => ['-D', `${k}=${String(v)}`]);
      const jmArgs = ['jobmanager', '--rpc-port', String(rpcPort), '--rest-port', '0', '-D', `execution.checkpointing.dir=${chk}`, ...s3Options];
      const first = await start(jmArgs, /REST API at http:\/\/(\S+)/, cwd);
      for (let i = 0; i < 2; i++) await start(['taskmanager', '--jobmanager', `127.0.0.1:${rpcPort}`, '--id', `tm-${i}`], /registered at the JobManager/, cwd);
      const out = tempDir();
      const jobId = await submitAndCheckpoint(first.match[1]!, undefined, out);
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
      // The newest checkpoint in the bucket once the JobManager is gone: the one to resume from.
      const client = new S3Client(s3SettingsFrom(new Configuration(Object.entries(s3.config)), {}));
      const storage = await S3CheckpointStorage.open({ jobId, checkpointsDir: chk, client });
      const newest = (await storage.listRetainedCheckpoints())[0]?.checkpointId;
      expect(newest, 'checkpoints in the bucket').toBeGreaterThanOrEqual(3);
      const second = await start(jmArgs, /REST API at http:\/\/(\S+)/, cwd);
      const rest = second.match[1]!;
      expect(await finalStatus(rest, jobId), second.output()).toBe('FINISHED');
      expect(second.output()).toContain(`taking back job ${jobId}`);
      const restored = await get<{ latest: { restored: { id: number } | null } }>(rest, `/jobs/${jobId}/checkpoints`);
      expect(restored.latest.restored?.id, second.output()).toBe(newest);
      expect(compareMultisets(await readCommittedLines(out), countReference(RECORDS, KEYS))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      // Nothing was written to a local directory named after the URI.
      expect(readdirSync(cwd)).toEqual([]);
      // The finished job's record and checkpoints are gone from the bucket.
      expect((await client.list('sluice', 'checkpoints/jobmanager-ha/')).keys).toEqual([]);
      expect(await storage.listRetainedCheckpoints()).toEqual([]);
    } finally {
      for (const p of processes.slice(mine)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      await s3.close();
    }
  }, 120_000);
});

describe('sluice cluster stop, then start', () => {
  // The job names no checkpoint directory: it takes the cluster's (-D of cluster start), as a
  // Flink job takes the cluster configuration's, so its checkpoints outlive the JobManager.
  it('the stopped cluster suspends its job; started again on the same checkpoint directory, it finishes the job exactly once', async () => {
    const state = tempDir();
    const chk = tempDir();
    const out = tempDir();
    const env = { ...process.env, SLUICE_CLUSTER_DIR: state };
    const cluster = (action: 'start' | 'stop') =>
      run(process.execPath, [BIN, 'cluster', action, ...(action === 'start' ? ['--taskmanagers', '2', '--rpc-port', '0', '--rest-port', '0', '-D', `execution.checkpointing.dir=${chk}`] : [])], { env });
    const restOf = (stdout: string): string => /REST API at http:\/\/(\S+?),/.exec(stdout)![1]!;
    let rest = restOf((await cluster('start')).stdout);
    try {
      const jobId = await submitAndCheckpoint(rest, undefined, out);
      expect((await get<{ checkpoint_storage: string }>(rest, `/jobs/${jobId}/checkpoints/config`)).checkpoint_storage).toBe('filesystem');
      await cluster('stop');
      expect((await readCommittedLines(out)).length, 'stopped before the end of the job').toBeLessThan(RECORDS);
      rest = restOf((await cluster('start')).stdout);
      const status = await finalStatus(rest, jobId);
      expect(status).toBe('FINISHED');
      expect(compareMultisets(await readCommittedLines(out), countReference(RECORDS, KEYS))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    } finally {
      await cluster('stop').catch(() => {});
    }
  }, 120_000);
});
