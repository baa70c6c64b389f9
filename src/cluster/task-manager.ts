import { randomBytes } from 'node:crypto';
import { awaitTasksClosed } from '../runtime/deploy/cancellation-watchdog.js';
import { existsSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { wiringOptions } from '../runtime/deploy/in-process-deployer.js';
import { wireTasks } from '../runtime/deploy/task-wiring.js';
import { subtaskKey } from '../runtime/checkpoint/state-persistence.js';
import type { CheckpointResponder } from '../runtime/checkpoint/subtask-state.js';
import { sentSubtaskState } from './sent-subtask-state.js';
import { systemClock } from '../runtime/task/clock.js';
import type { SourceStreamTask } from '../runtime/task/source-stream-task.js';
import type { StreamTask } from '../runtime/task/stream-task.js';
import { TaskScheduler } from '../runtime/task/task-scheduler.js';
import { isTerminal } from '../runtime/task/task-state.js';
import { NonRecoverableError } from '../runtime/recovery/non-recoverable-error.js';
import { describeGraphDifference, graphFingerprint } from './graph-fingerprint.js';
import { buildJob, storeBundle } from './job-bundle.js';
import { serializeError, type Deployment, type JobManagerMessage, type TaskManagerMessage } from './control-messages.js';
import { DataEndpoint, type AttemptNetwork } from './network/data-endpoint.js';
import { Connection, flushCorkedWrites } from './wire/connection.js';
import { MetricRegistry } from '../metrics/metric-registry.js';
import type { MetricGroup } from '../metrics/metric-group.js';
import { registerTaskMetrics } from '../metrics/job-metrics.js';
import { serveMetrics } from '../metrics/metrics-server.js';
import { hostname } from 'node:os';
import { proof } from './wire/shared-secret.js';
import { makeWorkDir } from './work-dir.js';
import { describeThrown } from '../util/thrown.js';
import { toLogger, type LogFields, type LogTarget, type Logger } from '../util/logger.js';
import { staleLeaderSession } from './ha/leader-fencing.js';
import { LeaderRetrieval } from './ha/leader-retrieval.js';
import type { LeaderInfo } from './ha/leader-info.js';
import type { ZooKeeperHaConfig } from './ha/zookeeper-ha-config.js';

export interface TaskManagerOptions {
  readonly jobManagerHost: string;
  readonly jobManagerPort: number;
  readonly slots: number;
  /** Address to listen on for data and to announce to peers. */
  readonly host: string;
  readonly dataPort?: number;
  /** Port of this TaskManager's /metrics (metrics.reporter.prom.port; 0: any free port). */
  readonly metricsPort?: number;
  readonly secret?: string | undefined;
  readonly id?: string;
  /** task.cancellation.timeout: how long a canceled attempt's tasks may take to close (0 or unset: no limit). */
  readonly cancellationTimeoutMs?: number;
  /** A fatal error (tasks that did not close in time); the `sluice taskmanager` process exits. Unset: logged, and the cancel answered. */
  readonly onFatalError?: (error: Error) => void;
  /** Default: this process's log as `[taskmanager <id>]`. */
  readonly log?: LogTarget;
  /** Log only problems (warnings and errors; not registration, nor the failures of tasks the JobManager reports). */
  readonly quiet?: boolean;
  /** How long to keep trying to reach the JobManager before giving up (default: forever). */
  readonly connectTimeoutMs?: number;
  /**
   * High availability: find the leading JobManager in ZooKeeper (jobManagerHost and
   * jobManagerPort are not used), and register with each new leader.
   */
  readonly leaderRetrieval?: ZooKeeperHaConfig;
}

type JmConnection = Connection<TaskManagerMessage, JobManagerMessage>;

/** The tasks of one attempt of a job on this TaskManager. */
interface LocalAttempt {
  readonly jobId: string;
  readonly attempt: number;
  readonly tasks: StreamTask[];
  readonly sources: SourceStreamTask[];
  readonly network: AttemptNetwork;
  readonly progressTimer: NodeJS.Timeout;
  readonly metricGroups: MetricGroup[];
  canceled: boolean;
}

/**
 * A TaskManager: registers its slots with the JobManager, runs the subtasks the JobManager
 * deploys to it on one task scheduler, exchanges data with the other TaskManagers over TCP
 * and reports task states, checkpoint acknowledgements and progress. When it loses the
 * JobManager it cancels its tasks and registers again as soon as it can reach it.
 */
export class TaskManager {
  readonly id: string;
  private readonly log: Logger;
  private readonly data: DataEndpoint;
  /**
   * One pass over the ready subtasks per event-loop turn (round budget 0): the network input
   * (batches, and credits a full output waits for) is read between passes, not after 5 ms of
   * slices (measured with the slice sizes, at SOURCE_SLICE_RECORDS in stream-task.ts).
   */
  private readonly scheduler = new TaskScheduler(0, flushCorkedWrites);
  private readonly attempts = new Map<string, LocalAttempt>();
  /** Attempts being deployed (job being built), by key: canceled ones must not start their tasks. */
  private readonly deploying = new Map<string, { canceled: boolean }>();
  private readonly metrics = new MetricRegistry();
  private metricsServer: { url: string; close: () => Promise<void> } | undefined;
  private readonly bundleDir: string;
  private connection: JmConnection | undefined;
  private stopped = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private lastFromJobManagerMs = Date.now();
  private heartbeatTimeoutMs = 5000;
  /** Why the JobManager refused the current connection, and when to try again. */
  private refusal: { readonly reason: string; readonly retryMs: number } | undefined;
  /** High availability: the leader in ZooKeeper, followed. */
  private retrieval: LeaderRetrieval | undefined;
  private leader: LeaderInfo | undefined;
  /** The leader session the JobManager of the current connection said it has when it acknowledged the registration. */
  private registeredLeaderSessionId: string | undefined;
  /** When this TaskManager last logged a message of an old leader session (once per 10 s). */
  private lastFencingComplaintMs = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  /** The connection the JobManager acknowledged the registration on. */
  private acknowledged: JmConnection | undefined;
  /** When this TaskManager last logged a connection closed before registering (logged once per 10 s). */
  private lastUnregisteredComplaintMs = 0;
  /** Resolves once registered the first time. */
  readonly registered: Promise<void>;
  private markRegistered!: () => void;

  constructor(private readonly o: TaskManagerOptions) {
    this.id = o.id ?? `tm-${randomBytes(4).toString('hex')}`;
    this.log = toLogger(o.log, 'taskmanager', { taskManager: this.id });
    this.bundleDir = makeWorkDir('sluice-tm-', 'TaskManager');
    this.data = new DataEndpoint(this.id, o.secret, (m) => this.log.warn(m));
    this.registered = new Promise((resolve) => (this.markRegistered = resolve));
  }

  async start(): Promise<void> {
    if (this.o.leaderRetrieval !== undefined) {
      this.retrieval = new LeaderRetrieval({ config: this.o.leaderRetrieval, log: this.log, onLeader: (l) => this.onLeader(l) });
      this.retrieval.start();
    }
    await this.data.start(this.o.host, this.o.dataPort ?? 0);
    this.metricsServer = await serveMetrics(this.metrics, { port: this.o.metricsPort ?? 0, address: this.o.host });
    void this.connectLoop();
    await this.registered;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.retrieval?.stop();
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.retryTimer);
    for (const d of this.deploying.values()) d.canceled = true;
    for (const a of [...this.attempts.values()]) this.cancelAttempt(a);
    this.connection?.close();
    await this.data.stop();
    await this.metricsServer?.close();
    rmSync(this.bundleDir, { recursive: true, force: true });
  }

  private async connectLoop(): Promise<void> {
    const started = Date.now();
    let lastComplaint = 0;
    while (!this.stopped) {
      try {
        await this.connectOnce();
        return;
      } catch (e) {
        if (this.o.connectTimeoutMs !== undefined && Date.now() - started > this.o.connectTimeoutMs) {
          this.log.error(`cannot reach the JobManager at ${this.jobManagerAddress}: ${(e as Error).message}; giving up`);
          process.exitCode = 1;
          await this.stop();
          return;
        }
        if (Date.now() - lastComplaint > 10_000) {
          this.log.warn(`cannot reach the JobManager at ${this.jobManagerAddress} (${(e as Error).message}); retrying`);
          lastComplaint = Date.now();
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Where the JobManager is: the leader in ZooKeeper (none known yet: undefined), or the one given. */
  private target(): { readonly host: string; readonly port: number } | undefined {
    if (this.o.leaderRetrieval === undefined) return { host: this.o.jobManagerHost, port: this.o.jobManagerPort };
    return this.leader === undefined ? undefined : { host: this.leader.rpcHost, port: this.leader.rpcPort };
  }

  /** The JobManager's address for log lines. */
  private get jobManagerAddress(): string {
    const t = this.target();
    if (this.o.leaderRetrieval !== undefined) return t === undefined ? `(no leader in ZooKeeper ${this.o.leaderRetrieval.quorum} yet)` : `${t.host}:${t.port} (the leader in ZooKeeper)`;
    return `${t!.host}:${t!.port}`;
  }

  /** A new leader in ZooKeeper: the connection to another JobManager goes (its attempts are canceled) and this TaskManager registers with the new one. */
  private onLeader(leader: LeaderInfo | undefined): void {
    this.leader = leader;
    if (leader === undefined) {
      this.info('no leading JobManager in ZooKeeper now');
      return;
    }
    this.info(`the leading JobManager is at ${leader.rpcHost}:${leader.rpcPort} (leader session ${leader.leaderSessionId})`);
    const conn = this.connection;
    if (conn !== undefined && this.acknowledged === conn && this.registeredLeaderSessionId !== leader.leaderSessionId) {
      conn.close(new Error(`a new JobManager leads (leader session ${leader.leaderSessionId})`));
    }
  }

  private connectOnce(): Promise<void> {
    return new Promise((resolve, reject) => {
      const target = this.target();
      if (target === undefined) return reject(new Error('no leading JobManager in ZooKeeper yet'));
      const socket = createConnection({ host: target.host, port: target.port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        const conn: JmConnection = new Connection(socket, `JobManager ${target.host}:${target.port}`);
        this.connection = conn;
        const address = this.data.address!;
        conn.send({ t: 'register', tm: this.id, slots: this.o.slots, dataHost: address.host, dataPort: address.port, pid: process.pid, proof: proof(this.o.secret, `register/${this.id}`), metricsUrl: this.metricsServer?.url });
        conn.onMessage((m) => this.onMessage(conn, m));
        conn.onClose((e) => this.onJobManagerLost(conn, e));
        resolve();
      });
    });
  }

  private onJobManagerLost(conn: JmConnection, e: Error | undefined): void {
    if (this.connection !== conn) return;
    this.connection = undefined;
    clearInterval(this.heartbeatTimer);
    if (this.stopped) return;
    const refusal = this.refusal;
    if (refusal !== undefined) {
      this.refusal = undefined;
      this.log.warn(`the JobManager at ${this.jobManagerAddress} refused this TaskManager: ${refusal.reason}; trying again in ${refusal.retryMs / 1000} s`);
      for (const d of this.deploying.values()) d.canceled = true;
      for (const a of [...this.attempts.values()]) this.cancelAttempt(a);
      this.retryTimer = setTimeout(() => void this.connectLoop(), refusal.retryMs);
      return;
    }
    if (this.acknowledged !== conn) {
      // The peer accepted the connection and closed it without acknowledging the registration:
      // not a JobManager (another service, the REST port), or one going down. Retried like an
      // unreachable address, not at once: a peer that accepts and closes must not make a loop.
      if (Date.now() - this.lastUnregisteredComplaintMs > 10_000) {
        this.lastUnregisteredComplaintMs = Date.now();
        this.log.warn(
          `${this.jobManagerAddress} closed the connection before registering this TaskManager${e === undefined ? '' : ` (${e.message})`}; ` +
            `is it the JobManager's RPC port (jobmanager.rpc.port, default 6123), not its REST port? retrying`,
        );
      }
      this.retryTimer = setTimeout(() => void this.connectLoop(), 1000);
      return;
    }
    this.log.warn(`lost the JobManager${e === undefined ? '' : ` (${e.message})`}: canceling ${this.attempts.size} attempt(s) and registering again`);
    for (const d of this.deploying.values()) d.canceled = true;
    for (const a of [...this.attempts.values()]) this.cancelAttempt(a);
    void this.connectLoop();
  }

  /** An info line, unless quiet. */
  private info(message: string, fields?: LogFields): void {
    if (this.o.quiet !== true) this.log.info(message, fields);
  }

  private send(m: TaskManagerMessage): void {
    this.connection?.send(m);
  }

  /**
   * Fencing: a message of an older leader session than the one this TaskManager follows (the
   * leader in ZooKeeper, else the one that acknowledged its registration) is ignored, and said.
   */
  private fromOldLeader(m: JobManagerMessage): boolean {
    const expected = this.leader?.leaderSessionId ?? this.registeredLeaderSessionId;
    const session = staleLeaderSession(m, expected);
    if (session === undefined) return false;
    if (Date.now() - this.lastFencingComplaintMs > 10_000) {
      this.lastFencingComplaintMs = Date.now();
      this.log.warn(`ignored '${m.t}' of leader session ${session}: the JobManager that leads now has leader session ${expected}`);
    }
    return true;
  }

  private onMessage(conn: JmConnection, m: JobManagerMessage): void {
    this.lastFromJobManagerMs = Date.now();
    if (this.fromOldLeader(m)) return;
    switch (m.t) {
      case 'registered':
        if (this.o.leaderRetrieval !== undefined && (m.leaderSessionId === undefined || (this.leader !== undefined && m.leaderSessionId !== this.leader.leaderSessionId))) {
          // A JobManager that does not lead (any more): find the leader again.
          this.refusal = { reason: `it does not lead${m.leaderSessionId === undefined ? '' : ` (its leader session ${m.leaderSessionId} is not the one in ZooKeeper)`}`, retryMs: 500 };
          conn.close(new Error('not the leading JobManager'));
          return;
        }
        this.registeredLeaderSessionId = m.leaderSessionId;
        this.acknowledged = conn;
        this.heartbeatTimeoutMs = m.heartbeatTimeoutMs;
        clearInterval(this.heartbeatTimer);
        this.heartbeatTimer = setInterval(() => {
          conn.send({ t: 'heartbeat' });
          if (Date.now() - this.lastFromJobManagerMs > this.heartbeatTimeoutMs) {
            // Checked again after the I/O phase: if this process was stalled, the JobManager's
            // heartbeats may be waiting unread in the socket.
            setImmediate(() => {
              if (Date.now() - this.lastFromJobManagerMs > this.heartbeatTimeoutMs) conn.close(new Error(`no heartbeat from the JobManager for ${this.heartbeatTimeoutMs} ms`));
            });
          }
        }, m.heartbeatIntervalMs);
        this.heartbeatTimer.unref();
        this.info(`registered at the JobManager with ${this.o.slots} slot(s)`);
        this.markRegistered();
        return;
      case 'heartbeat':
        return;
      case 'metrics-query': {
        const samples = this.metrics.collect().filter((x) => x.variables.job_id === m.jobId);
        this.send({ t: 'metrics', id: m.id, samples: samples.map((x) => [x.scope, x.variables, x.name, x.value] as const) });
        return;
      }
      case 'refused':
        this.refusal = { reason: m.reason, retryMs: 5000 };
        conn.close(new Error(`refused: ${m.reason}`));
        return;
      case 'deploy':
        void this.deploy(m.deployment).then(
          () => this.send({ t: 'deployed', jobId: m.deployment.jobId, attempt: m.deployment.attempt }),
          (e: unknown) => {
            const a = this.attempts.get(key(m.deployment.jobId, m.deployment.attempt));
            if (a !== undefined) this.cancelAttempt(a);
            this.send({ t: 'deploy-failed', jobId: m.deployment.jobId, attempt: m.deployment.attempt, error: serializeError(e) });
          },
        );
        return;
      case 'start': {
        const a = this.attempts.get(key(m.jobId, m.attempt));
        if (a !== undefined) for (const t of a.tasks) t.start();
        return;
      }
      case 'trigger': {
        const a = this.attempts.get(key(m.jobId, m.attempt));
        if (a !== undefined) for (const t of a.sources) t.triggerCheckpoint(m.barrier);
        return;
      }
      case 'complete': {
        const a = this.attempts.get(key(m.jobId, m.attempt));
        if (a !== undefined) for (const t of a.tasks) t.notifyCheckpointComplete(m.checkpointId, m.final);
        return;
      }
      case 'abort': {
        const a = this.attempts.get(key(m.jobId, m.attempt));
        if (a !== undefined) for (const t of a.tasks) t.notifyCheckpointAborted(m.checkpointId, m.reason);
        return;
      }
      case 'stop-sources': {
        const a = this.attempts.get(key(m.jobId, m.attempt));
        if (a !== undefined) for (const t of a.sources) t.stop(m.drain);
        return;
      }
      case 'assign-split': {
        const a = this.attempts.get(key(m.jobId, m.attempt));
        a?.sources.find((t) => t.vertex.id === m.subtask[0] && t.subtaskIndex === m.subtask[1])?.assignSplit(m.answer);
        return;
      }
      case 'max-watermark': {
        const a = this.attempts.get(key(m.jobId, m.attempt));
        a?.sources.find((t) => t.vertex.id === m.subtask[0] && t.subtaskIndex === m.subtask[1])?.announceMaxWatermark(m.maxWatermarkMs);
        return;
      }
      case 'cancel': {
        const a = this.attempts.get(key(m.jobId, m.attempt));
        if (a !== undefined) this.cancelAttempt(a);
        const d = this.deploying.get(key(m.jobId, m.attempt));
        if (d !== undefined) d.canceled = true;
        // Only once the tasks closed their operators: the JobManager starts the next attempt on this answer.
        const closed = a === undefined ? Promise.resolve() : awaitTasksClosed(a.tasks, this.o.cancellationTimeoutMs ?? 0);
        closed.then(
          () => this.send({ t: 'canceled', jobId: m.jobId, attempt: m.attempt }),
          (e: unknown) => {
            // Flink's fatal TaskManager error: the process ends (a local cluster starts a new one), and its operators with it.
            this.log.error(`fatal: ${(e as Error).message}`, { jobId: m.jobId, attempt: m.attempt, err: e as Error });
            if (this.o.onFatalError !== undefined) this.o.onFatalError(e as Error);
            else this.send({ t: 'canceled', jobId: m.jobId, attempt: m.attempt });
          },
        );
        return;
      }
    }
  }

  private async deploy(d: Deployment): Promise<void> {
    const k = key(d.jobId, d.attempt);
    const deploying = { canceled: false };
    this.deploying.set(k, deploying);
    try {
      await this.deployBuilt(d, deploying);
    } finally {
      if (this.deploying.get(k) === deploying) this.deploying.delete(k);
    }
  }

  private async deployBuilt(d: Deployment, deploying: { readonly canceled: boolean }): Promise<void> {
    const file = d.bundle === undefined ? storeBundleKnown(this.bundleDir, d.bundleId) : storeBundle(this.bundleDir, { id: d.bundleId, code: d.bundle });
    const { graph, env } = await buildJob(file, d.config, d.jobArgs, d.jobName);
    // Canceled (or the JobManager lost) while the job was being built: its tasks must not
    // initialize. A late sink writer of a stale attempt would clean up files of the attempt
    // that replaced it (the exactly-once file sink deletes its subtask's lingering files).
    if (deploying.canceled || this.stopped) throw new Error(`attempt ${d.attempt} of job ${d.jobId} was canceled while it was being deployed`);
    const difference = describeGraphDifference(d.graph, graphFingerprint(graph));
    if (difference !== undefined) {
      // The job's code: every attempt builds it again the same way.
      throw new NonRecoverableError(
        `the job graph built on TaskManager ${this.id} differs from the JobManager's: ${difference}. ` +
          'A job module must build the same graph on every process (no randomness or clock in names, parallelism or structure)',
      );
    }
    const placement = new Map(d.placement.map(([v, i, tm]) => [subtaskKey(v, i), tm]));
    const network = this.data.attempt(d.jobId, d.attempt);
    network.peers = new Map(d.peers.map(([tm, host, port]) => [tm, { host, port }]));
    network.placement = (v, i) => placement.get(subtaskKey(v, i))!;
    const jobId = d.jobId;
    const attempt = d.attempt;
    const spillDir = this.spillDirOf(d);
    const responder: CheckpointResponder = {
      // State goes to the JobManager as bytes (acceptsHeldKeyedState unset), but for full
      // snapshots spilled into the job's taskowned/ directory, which go as their file.
      keyedStateSpillDir: spillDir,
      acknowledge: (vertexId, subtaskIndex, checkpointId, state, metrics) =>
        this.send({ t: 'ack', jobId, attempt, subtask: [vertexId, subtaskIndex], checkpointId, state: sentSubtaskState(state, spillDir), metrics }),
      decline: (vertexId, subtaskIndex, checkpointId, reason, message) => this.send({ t: 'decline', jobId, attempt, subtask: [vertexId, subtaskIndex], checkpointId, reason, message }),
      dataFinished: (vertexId, subtaskIndex) => this.send({ t: 'data-finished', jobId, attempt, subtask: [vertexId, subtaskIndex] }),
      appendChangelog: (vertexId, subtaskIndex, operatorUid, position, snapshot) =>
        this.send({ t: 'changelog', jobId, attempt, subtask: [vertexId, subtaskIndex], operatorUid, position, snapshot }),
    };
    const { tasks, sourceTasks } = wireTasks({
      graph,
      isLocal: (v, i) => placement.get(subtaskKey(v.id, i)) === this.id,
      sameProcess: (source, p, target, c) => placement.get(subtaskKey(source.id, p)) === placement.get(subtaskKey(target.id, c)),
      remote: network,
      attemptNumber: attempt,
      scheduler: this.scheduler,
      clock: systemClock,
      ...wiringOptions(env.config),
      checkpointing: d.checkpointing === undefined ? undefined : { ...d.checkpointing, responder },
      restore: d.restore === undefined ? undefined : new Map(d.restore),
      splits: new Map(d.splits),
      requestSplit: (vertexId, subtaskIndex) => this.send({ t: 'split-request', jobId, attempt, subtask: [vertexId, subtaskIndex] }),
      reportWatermark: (vertexId, subtaskIndex, report) => this.send({ t: 'watermark-report', jobId, attempt, subtask: [vertexId, subtaskIndex], report }),
    });
    const progressTimer = setInterval(() => this.reportProgress(local), 500);
    progressTimer.unref();
    const variables = { host: hostname(), tm_id: this.id, job_id: jobId, job_name: d.jobName };
    const metricGroups = tasks.map((t) => registerTaskMetrics(this.metrics, t, variables));
    const local: LocalAttempt = { jobId, attempt, tasks, sources: sourceTasks, network, progressTimer, metricGroups, canceled: false };
    this.attempts.set(key(jobId, attempt), local);
    network.onBroken = (e) => {
      if (local.canceled) return;
      for (const t of tasks) if (!isTerminal(t.state)) t.fail(e);
    };
    const reported = new Set<StreamTask>();
    for (const t of tasks) {
      const ref = [t.vertex.id, t.subtaskIndex] as const;
      t.done.then(
        () => {
          if (local.canceled) return;
          this.send({ t: 'task-state', jobId, attempt, subtask: ref, state: t.state, error: undefined });
          reported.add(t);
          // Let go once every task has finished and said so (tasks may finish in one tick).
          if (tasks.every((x) => x.state === 'finished' && reported.has(x))) this.finishAttempt(local);
        },
        (e: unknown) => {
          if (local.canceled) return;
          const message = describeThrown(e);
          this.info(`job ${jobId}: ${message.includes(t.name) ? message : `${t.name} failed: ${message}`}`, { jobId, attempt, vertex: t.vertex.name, subtask: t.subtaskIndex, err: e as Error });
          this.send({ t: 'task-state', jobId, attempt, subtask: ref, state: 'failed', error: serializeError(e, `${t.name}`) });
        },
      );
    }
    await Promise.all(tasks.map((t) => t.initialize()));
  }

  /**
   * Where this TaskManager's keyed backends spill full snapshots: the job's taskowned/
   * directory, when checkpoint storage has one that this process reaches (the JobManager
   * created it, so seeing it here means sharing it); otherwise none, and full snapshots go to
   * the JobManager as bytes.
   */
  private spillDirOf(d: Deployment): string | undefined {
    const dir = d.checkpointing?.taskOwnedDir;
    if (dir === undefined) return undefined;
    if (existsSync(dir)) return dir;
    this.log.warn(`job ${d.jobId}: the checkpoint directory's ${dir} is not reachable from this TaskManager; full snapshots of lmdb state go to the JobManager in memory`);
    return undefined;
  }

  private reportProgress(a: LocalAttempt): void {
    this.send({
      t: 'progress',
      jobId: a.jobId,
      attempt: a.attempt,
      tasks: a.tasks.map((t) => [t.vertex.id, t.subtaskIndex, t.state, t.recordsIn, t.recordsOut(), t.inputWatermarkMs(), t.backPressuredTimeMsTotal()] as const),
    });
  }

  /** Every task of the attempt here finished: report the last progress and let it go. */
  private finishAttempt(a: LocalAttempt): void {
    if (a.canceled) return;
    this.reportProgress(a);
    // Every task's 'finished' went out before this (each sends its own before the last one calls this).
    a.canceled = true;
    clearInterval(a.progressTimer);
    for (const g of a.metricGroups) this.metrics.removeGroup(g);
    this.attempts.delete(key(a.jobId, a.attempt));
    void this.data.releaseFinished(a.jobId, a.attempt);
  }

  private cancelAttempt(a: LocalAttempt): void {
    if (a.canceled) return;
    a.canceled = true;
    clearInterval(a.progressTimer);
    for (const g of a.metricGroups) this.metrics.removeGroup(g);
    for (const t of a.tasks) t.cancel();
    this.data.release(a.jobId, a.attempt);
    this.attempts.delete(key(a.jobId, a.attempt));
  }
}

function key(jobId: string, attempt: number): string {
  return `${jobId}/${attempt}`;
}

function storeBundleKnown(dir: string, id: string): string {
  const file = join(dir, `job-${id}.mjs`);
  if (!existsSync(file)) throw new Error(`the JobManager sent no code for job bundle ${id} and this TaskManager has none`);
  return file;
}
