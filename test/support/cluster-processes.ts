import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { StreamExecutionEnvironment } from '../../src/index.js';
import { CollectSink } from '../../src/connectors/collect-sink.js';
import { KafkaCluster, sleep } from '../../src/connectors/kafka/kafka-cluster.js';
import { KafkaSource } from '../../src/connectors/kafka/kafka-source.js';
import { RecordSender } from '../../src/connectors/kafka/record-sender.js';

/**
 * Helpers for tests that run jobs on a cluster of real processes: `sluice` processes started
 * and stopped, jobs submitted with `sluice run --jobmanager`, the REST API, Kafka input
 * written at a pace, and TaskManagers SIGKILLed at seeded random moments.
 */

export const SLUICE_BIN = join(import.meta.dirname, '..', '..', 'bin', 'sluice.js');
export const execFileAsync = promisify(execFile);
export { sleep };

/** The processes and temporary directories a test file started; `cleanUp()` in afterAll. */
export class ClusterProcesses {
  private readonly processes: ChildProcess[] = [];
  private readonly dirs: string[] = [];

  constructor(private readonly dirPrefix = 'sluice-cluster-') {}

  tempDir(): string {
    const d = mkdtempSync(join(tmpdir(), this.dirPrefix));
    this.dirs.push(d);
    return d;
  }

  /** Starts `sluice <args>` (in `env`, default this process's) and resolves with the first match of `ready` in its output. */
  start(args: readonly string[], ready: RegExp, env?: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
    const child = spawn(process.execPath, [SLUICE_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(env === undefined ? {} : { env }) });
    this.processes.push(child);
    let out = '';
    return new Promise((resolve, reject) => {
      let done = false;
      const onData = (d: Buffer): void => {
        out = (out + d.toString()).slice(-20_000);
        const m = ready.exec(out);
        if (m !== null && !done) {
          done = true;
          resolve({ child, match: m, output: () => out });
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`sluice ${args[0]} exited (${code}):\n${out}`)));
    });
  }

  /** `sluice cluster run` with `taskManagers` TaskManagers on free ports (in `env`, default this process's); resolves with the REST address (host:port). */
  async startCluster(taskManagers: number, env?: NodeJS.ProcessEnv): Promise<string> {
    const c = await this.start(['cluster', 'run', '--taskmanagers', String(taskManagers), '--rpc-port', '0', '--rest-port', '0'], /cluster ready: rpc \S+ rest http:\/\/(\S+)/, env);
    return c.match[1]!;
  }

  /** SIGTERM (then SIGKILL after 5 s) to every process still running; deletes the directories. */
  async cleanUp(): Promise<void> {
    for (const p of this.processes) {
      if (p.exitCode === null && p.signalCode === null) {
        p.kill('SIGTERM');
        const exited = await Promise.race([new Promise((r) => p.once('exit', r)).then(() => true), sleep(5000).then(() => false)]);
        if (!exited) p.kill('SIGKILL');
      }
    }
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Runs `sluice <args>` to its end (in `env`, default this process's): its exit code and output. */
export function runSluice(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SLUICE_BIN, ...args], { ...(env === undefined ? {} : { env }), maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

export async function restGet<T>(rest: string, path: string): Promise<T> {
  return (await (await fetch(`http://${rest}${path}`)).json()) as T;
}

export async function jobState(rest: string, jobId: string): Promise<string> {
  const jobs = await restGet<{ jobs: { id: string; status: string }[] }>(rest, '/jobs');
  return jobs.jobs.find((j) => j.id === jobId)?.status ?? '';
}

export async function numRestarts(rest: string, jobId: string): Promise<number> {
  return (await restGet<{ numRestarts: number }>(rest, `/jobs/${jobId}/result`)).numRestarts;
}

/** The latest completed checkpoint: its id and trigger time (id 0 if none). */
export async function latestCompletedCheckpoint(rest: string, jobId: string): Promise<{ id: number; triggeredAtMs: number }> {
  const c = await restGet<{ latest?: { completed?: { id: number; trigger_timestamp: number } | null } }>(rest, `/jobs/${jobId}/checkpoints`);
  const l = c.latest?.completed;
  return l == null ? { id: 0, triggeredAtMs: 0 } : { id: l.id, triggeredAtMs: l.trigger_timestamp };
}

/** Cancels the job and waits (up to 20 s) for it to reach a terminal state. */
export async function cancelJob(rest: string, jobId: string): Promise<void> {
  await fetch(`http://${rest}/jobs/${jobId}?mode=cancel`, { method: 'PATCH' });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && !['CANCELED', 'FAILED', 'FINISHED'].includes(await jobState(rest, jobId))) await sleep(100);
}

/**
 * Submits `jobFile` with `args` detached to the JobManager at `rest` (parallelism 2, checkpoints
 * every 200 ms, fixed-delay restarts); resolves with the job id. A job whose first attempt
 * fails is submitted too (`sluice run --detached` exits 1 then, saying so).
 */
export async function submitJob(rest: string, jobFile: string, args: readonly string[], extra: readonly string[] = []): Promise<string> {
  const r = await runSluice([
    'run', '--jobmanager', rest, '--detached', '--no-typecheck', '-p', '2',
    '-D', 'execution.checkpointing.interval=200',
    '-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=200', '-D', 'restart-strategy.fixed-delay.delay=200 ms',
    ...extra,
    jobFile, ...args,
  ]);
  const id = r.stdout.trim().split('\n').at(-1)?.trim() ?? '';
  if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`sluice run --detached exited ${r.code} without a job id:\n${r.stderr}`);
  return id;
}

/** Writes the numbers [from, to) to `topic` (acks=all; number i to partition i % partitions), `perSecond` records a second. */
export async function producePaced(bootstrap: string, topic: string, from: number, to: number, perSecond: number, partitions: number): Promise<void> {
  const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
  try {
    await cluster.topic(topic);
    const sender = new RecordSender(cluster, { batchRecordsMax: 1000, compression: 'none', produceTimeoutMs: 30_000 });
    const t0 = Date.now();
    for (let i = from; i < to; i++) {
      await sender.add({ topic, partition: i % partitions, value: Buffer.from(String(i)), timestamp: BigInt(Date.now()) });
      if ((i - from) % 100 === 99) {
        await sender.flush();
        const due = t0 + ((i - from + 1) / perSecond) * 1000;
        if (due > Date.now()) await sleep(due - Date.now());
      }
    }
    await sender.flush();
  } finally {
    await cluster.close();
  }
}

/** The topic's records visible to read_committed readers so far (a local bounded job up to the current end). */
export async function readTopicValues(bootstrap: string, topic: string): Promise<string[]> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
  const sink = new CollectSink<string>();
  env.fromSource(new KafkaSource<string>({ bootstrapServers: bootstrap, topics: topic, stoppingOffsets: 'latest' }), 'out').sinkTo(sink);
  await env.executeAsync(undefined, { log: () => {} }).result;
  return sink.values;
}

/** When a kill lands relative to the job's checkpoints (see killTaskManagers). */
export type KillPhase = 'any' | 'checkpoint-in-progress' | 'checkpoint-just-completed';

/**
 * The failure schedule of the cluster fault tests: `kills` SIGKILLs of TaskManager processes,
 * each after a pause of 400..1300 ms drawn from `next`, the victim drawn from `next` among the
 * registered TaskManagers; a round is skipped while fewer than `minTaskManagers` are
 * registered (a killed one is still coming back). Resolves with the number of kills.
 *
 * With `progressOf` (the job id) two things change, both drawn from the same seeded `next`:
 * - each pause starts only once the job completed a checkpoint after the previous kill
 *   (waiting at most 15 s): a recovery takes longer than the pauses, so without this most
 *   kills hit a job that is still restoring the same early checkpoint;
 * - after the pause, a third of the kills land at once ('any'), a third while a checkpoint is
 *   in progress ('checkpoint-in-progress': sinks may have pre-committed for it, e.g. a
 *   prepared transaction that the restart must roll back) and a third right after a
 *   checkpoint completed ('checkpoint-just-completed': its commits may not have run, so the
 *   restart must commit them from the restored state). Each waits at most 2 s for its moment,
 *   polling the REST API every 5 ms, then kills anyway.
 */
export async function killTaskManagers(
  rest: string,
  next: () => number,
  o: { kills: number; minTaskManagers?: number; progressOf?: string },
): Promise<{ kills: number; checkpointsAtKills: number[]; phases: KillPhase[] }> {
  const min = o.minTaskManagers ?? 2;
  const jobId = o.progressOf;
  let kills = 0;
  const checkpointsAtKills: number[] = [];
  const phases: KillPhase[] = [];
  let lastCheckpoint = 0;
  const counts = async (id: string): Promise<{ inProgress: number; completed: number }> => {
    const c = await restGet<{ counts: { in_progress: number; completed: number } }>(rest, `/jobs/${id}/checkpoints`);
    return { inProgress: c.counts.in_progress, completed: c.counts.completed };
  };
  while (kills < o.kills) {
    if (jobId !== undefined) {
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && (await latestCompletedCheckpoint(rest, jobId)).id <= lastCheckpoint) await sleep(50);
    }
    await sleep(400 + Math.floor(next() * 900));
    const { taskmanagers } = await restGet<{ taskmanagers: { path: string }[] }>(rest, '/taskmanagers');
    const pids = taskmanagers.map((t) => Number(t.path.split('/').at(-1)));
    if (pids.length < min) continue;
    const victim = pids[Math.floor(next() * pids.length)]!;
    let phase: KillPhase = 'any';
    if (jobId !== undefined) {
      const r = next();
      phase = r < 1 / 3 ? 'any' : r < 2 / 3 ? 'checkpoint-in-progress' : 'checkpoint-just-completed';
      const deadline = Date.now() + 2000;
      if (phase === 'checkpoint-in-progress') {
        while (Date.now() < deadline && (await counts(jobId)).inProgress === 0) await sleep(5);
      } else if (phase === 'checkpoint-just-completed') {
        const before = (await counts(jobId)).completed;
        while (Date.now() < deadline && (await counts(jobId)).completed === before) await sleep(5);
      }
    }
    const checkpoint = jobId === undefined ? 0 : (await latestCompletedCheckpoint(rest, jobId)).id;
    try {
      process.kill(victim, 'SIGKILL');
      kills++;
      lastCheckpoint = checkpoint;
      checkpointsAtKills.push(checkpoint);
      phases.push(phase);
    } catch {
      // it exited on its own meanwhile
    }
  }
  return { kills, checkpointsAtKills, phases };
}

/**
 * Waits until `done()` holds and still holds after a checkpoint that was triggered after it
 * was seen has completed, without a restart in between: then the job has a completed
 * checkpoint covering the output `done()` saw, so no later replay can take it back (an upsert
 * sink's older values, a failure not detected yet). Throws when the job fails or is
 * cancelled; resolves with false at the deadline.
 */
export async function waitUntilSettled(rest: string, jobId: string, done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const restarts = await numRestarts(rest, jobId);
    if (await done()) {
      const seenAt = Date.now();
      while (Date.now() < deadline && (await latestCompletedCheckpoint(rest, jobId)).triggeredAtMs <= seenAt) await sleep(100);
      if ((await numRestarts(rest, jobId)) === restarts && (await done())) return true;
      continue;
    }
    const state = await jobState(rest, jobId);
    if (state === 'FAILED' || state === 'CANCELED') throw new Error(`job ${jobId} is ${state}`);
    await sleep(300);
  }
  return false;
}
