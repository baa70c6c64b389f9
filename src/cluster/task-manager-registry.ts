import type { Socket } from 'node:net';
import { Connection } from './wire/connection.js';
import { checkProof } from './wire/shared-secret.js';
import { FENCED_MESSAGES, type JobManagerMessage, type RemoteMetricSample, type TaskManagerMessage } from './control-messages.js';
import type { MetricSample } from '../metrics/metric-group.js';
import type { ClusterAttempt } from './cluster-deployer.js';
import type { Logger } from '../util/logger.js';

type TmConnection = Connection<JobManagerMessage, TaskManagerMessage>;

/** A TaskManager as the JobManager knows it. */
export class RegisteredTaskManager {
  lost = false;
  lastHeartbeatMs = Date.now();
  readonly registeredAtMs = Date.now();
  /** Job bundles this TaskManager has been sent. */
  readonly bundles = new Set<string>();
  /** Slots taken, by job id. */
  readonly slotsByJob = new Map<string, number>();

  constructor(
    readonly id: string,
    readonly slots: number,
    readonly dataHost: string,
    readonly dataPort: number,
    readonly pid: number,
    private readonly conn: TmConnection,
    readonly metricsUrl: string | undefined,
    /** The JobManager's leader session now (high availability), stamped on fenced messages. */
    private readonly leaderSessionId: () => string | undefined = () => undefined,
  ) {}

  get freeSlots(): number {
    let used = 0;
    for (const n of this.slotsByJob.values()) used += n;
    return this.slots - used;
  }

  send(m: JobManagerMessage): void {
    if (this.lost) return;
    const session = this.leaderSessionId();
    this.conn.send(session !== undefined && FENCED_MESSAGES.has(m.t) ? ({ ...m, leaderSessionId: session } as JobManagerMessage) : m);
  }

  close(why: Error): void {
    this.conn.close(why);
  }
}

/**
 * The JobManager's view of its TaskManagers: registration (with the cluster secret),
 * heartbeats both ways, slots, and the routing of their messages to the attempt they
 * belong to. A TaskManager whose connection closes is lost at once; one that stays silent
 * for heartbeat.timeout is disconnected and lost.
 */
export class TaskManagerRegistry {
  readonly taskManagers = new Map<string, RegisteredTaskManager>();
  private readonly attempts = new Map<string, ClusterAttempt>();
  private readonly slotWaiters: (() => void)[] = [];
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** The JobManager's leader session (high availability): in registration replies and fenced messages; undefined when it does not lead. */
  leaderSessionId: string | undefined;

  constructor(
    private readonly o: {
      readonly secret: string | undefined;
      readonly heartbeatIntervalMs: number;
      readonly heartbeatTimeoutMs: number;
      readonly log: Logger;
    },
  ) {
    this.heartbeatTimer = setInterval(() => this.checkHeartbeats(), o.heartbeatIntervalMs);
    this.heartbeatTimer.unref();
  }

  close(): void {
    clearInterval(this.heartbeatTimer);
    for (const tm of this.taskManagers.values()) tm.close(new Error('the JobManager is shutting down'));
  }

  /** Closes every TaskManager's connection (they are lost, and register again: with the new leader). */
  disconnectAll(why: string): void {
    for (const tm of [...this.taskManagers.values()]) tm.close(new Error(why));
  }

  /** A TaskManager connected: it must register first. */
  accept(socket: Socket): void {
    const conn: TmConnection = new Connection(socket, `TaskManager at ${socket.remoteAddress}:${socket.remotePort}`);
    let tm: RegisteredTaskManager | undefined;
    let refused = false;
    conn.onMessage((m) => {
      if (refused) return;
      if (tm === undefined) {
        const refuse = (why: string): void => {
          this.o.log.warn(`refused a TaskManager connection from ${socket.remoteAddress}: ${why}`);
          // Tell the TaskManager why (its log says so), then close once it has read it.
          refused = true;
          conn.send({ t: 'refused', reason: why });
          socket.end();
          setTimeout(() => conn.close(new Error('refused')), 2000).unref();
        };
        const malformed = m.t === 'register' ? registrationProblem(m) : undefined;
        if (m.t !== 'register' || malformed !== undefined || !checkProof(this.o.secret, `register/${m.tm}`, m.proof)) {
          refuse(m.t !== 'register' ? 'it did not register' : (malformed ?? 'wrong cluster secret (cluster.secret)'));
          return;
        }
        const old = this.taskManagers.get(m.tm);
        // The same process registering again (it reconnects) replaces its old registration, as
        // does a new process once the old one is silent; another live process with the same id
        // would evict it, and be evicted back when it reconnects, for ever.
        if (old !== undefined && (old.pid !== m.pid || old.dataHost !== m.dataHost) && Date.now() - old.lastHeartbeatMs <= this.o.heartbeatTimeoutMs) {
          refuse(
            `TaskManager '${m.tm}' is registered already by another process (pid ${old.pid}, data at ${old.dataHost}:${old.dataPort}), ` +
              'which is alive: give each TaskManager its own --id (or none, and one is made up)',
          );
          return;
        }
        if (old !== undefined) this.lose(old, 'it registered again');
        tm = new RegisteredTaskManager(m.tm, m.slots, m.dataHost, m.dataPort, m.pid, conn, m.metricsUrl, () => this.leaderSessionId);
        this.taskManagers.set(tm.id, tm);
        conn.send({ t: 'registered', heartbeatIntervalMs: this.o.heartbeatIntervalMs, heartbeatTimeoutMs: this.o.heartbeatTimeoutMs, leaderSessionId: this.leaderSessionId });
        this.o.log.info(`TaskManager ${tm.id} registered: ${tm.slots} slot(s), pid ${tm.pid}, data at ${tm.dataHost}:${tm.dataPort}`, { taskManager: tm.id });
        for (const w of this.slotWaiters.splice(0)) w();
        return;
      }
      tm.lastHeartbeatMs = Date.now();
      if (m.t === 'heartbeat' || m.t === 'register') return;
      if (m.t === 'metrics') {
        this.metricQueries.get(m.id)?.(m.samples);
        return;
      }
      const attempt = this.attempts.get(m.jobId);
      if (attempt !== undefined && attempt.attemptNumber === m.attempt) attempt.onMessage(tm, m);
    });
    conn.onClose((e) => {
      if (tm === undefined && !refused && e !== undefined) this.o.log.warn(`refused a TaskManager connection from ${socket.remoteAddress}: ${e.message}`);
      if (tm !== undefined) this.lose(tm, `its connection closed${e === undefined ? '' : ` (${e.message})`}`);
    });
  }

  private lose(tm: RegisteredTaskManager, why: string): void {
    if (tm.lost) return;
    tm.lost = true;
    if (this.taskManagers.get(tm.id) === tm) this.taskManagers.delete(tm.id);
    this.o.log.warn(`TaskManager ${tm.id} (pid ${tm.pid}) lost: ${why}`, { taskManager: tm.id });
    for (const a of this.attempts.values()) a.taskManagerLost(tm, why);
    tm.close(new Error(why));
  }

  private checkHeartbeats(): void {
    const now = Date.now();
    const silent: RegisteredTaskManager[] = [];
    for (const tm of [...this.taskManagers.values()]) {
      if (now - tm.lastHeartbeatMs > this.o.heartbeatTimeoutMs) silent.push(tm);
      else tm.send({ t: 'heartbeat' });
    }
    if (silent.length === 0) return;
    // Decide after the next I/O phase: timers run before it, so when this process itself was
    // stalled (building a job, a long GC), heartbeats that arrived meanwhile are still unread
    // in the sockets, and every TaskManager would look silent.
    setImmediate(() => {
      const later = Date.now();
      for (const tm of silent) {
        if (!tm.lost && later - tm.lastHeartbeatMs > this.o.heartbeatTimeoutMs) this.lose(tm, `no heartbeat for ${later - tm.lastHeartbeatMs} ms (heartbeat.timeout ${this.o.heartbeatTimeoutMs} ms)`);
      }
    });
  }

  private readonly metricQueries = new Map<number, (samples: readonly RemoteMetricSample[]) => void>();
  private nextMetricQuery = 0;

  /**
   * The task and operator metrics of a job on every TaskManager (Flink's metric fetcher):
   * what answered within `timeoutMs`, as metric samples.
   */
  async queryMetrics(jobId: string, timeoutMs: number): Promise<MetricSample[]> {
    const answers = [...this.taskManagers.values()]
      .filter((tm) => !tm.lost)
      .map(
        (tm) =>
          new Promise<readonly RemoteMetricSample[]>((resolve) => {
            const id = ++this.nextMetricQuery;
            const done = (samples: readonly RemoteMetricSample[]): void => {
              clearTimeout(timer);
              this.metricQueries.delete(id);
              resolve(samples);
            };
            const timer = setTimeout(() => done([]), timeoutMs);
            this.metricQueries.set(id, done);
            tm.send({ t: 'metrics-query', id, jobId });
          }),
      );
    return (await Promise.all(answers)).flat().map(([scope, variables, name, value]) => ({ scope, variables, name, value, kind: 'gauge' as const }));
  }

  /** Messages of the job go to this attempt from now on. */
  routeAttempt(jobId: string, attempt: ClusterAttempt): void {
    this.attempts.set(jobId, attempt);
  }

  forgetJob(jobId: string): void {
    this.attempts.delete(jobId);
    this.releaseSlots(jobId);
  }

  /** Takes `n` slots for a job, round-robin over TaskManagers; waits for them up to `timeoutMs`. */
  async takeSlots(jobId: string, n: number, timeoutMs: number): Promise<RegisteredTaskManager[]> {
    this.releaseSlots(jobId);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const free = [...this.taskManagers.values()].filter((t) => !t.lost).sort((a, b) => (a.id < b.id ? -1 : 1));
      const total = free.reduce((s, t) => s + t.freeSlots, 0);
      if (total >= n) {
        const taken: RegisteredTaskManager[] = [];
        const left = new Map(free.map((t) => [t, t.freeSlots]));
        while (taken.length < n) {
          for (const t of free) {
            if (taken.length === n) break;
            if (left.get(t)! > 0) {
              left.set(t, left.get(t)! - 1);
              taken.push(t);
            }
          }
        }
        for (const t of taken) t.slotsByJob.set(jobId, (t.slotsByJob.get(jobId) ?? 0) + 1);
        // Slots are numbered so that pipelines of one TaskManager are next to each other.
        return taken;
      }
      const waitMs = deadline - Date.now();
      if (waitMs <= 0) {
        throw new Error(
          `the job needs ${n} slot(s) but the cluster has ${total} free (${free.length} TaskManager(s)); ` +
            'start more TaskManagers (sluice taskmanager) or give them more slots (taskmanager.numberOfTaskSlots), or lower the parallelism',
        );
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(waitMs, 1000));
        this.slotWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Free slots of the live TaskManagers. */
  freeSlots(): number {
    let free = 0;
    for (const t of this.taskManagers.values()) if (!t.lost) free += t.freeSlots;
    return free;
  }

  releaseSlots(jobId: string): void {
    for (const t of this.taskManagers.values()) t.slotsByJob.delete(jobId);
    for (const w of this.slotWaiters.splice(0)) w();
  }
}

/**
 * What is wrong with a registration's fields, checked before any is used: they come from
 * whoever connected (with no cluster secret configured, anyone who reaches the RPC port).
 */
export function registrationProblem(m: Extract<TaskManagerMessage, { t: 'register' }>): string | undefined {
  const fields = m as unknown as Record<string, unknown>;
  const bad = (name: string, want: string): string => `a malformed registration: ${name} must be ${want}, got ${JSON.stringify(fields[name]) ?? 'undefined'}`;
  if (typeof fields.tm !== 'string' || fields.tm.length === 0 || fields.tm.length > 200) return bad('tm', 'a TaskManager id of 1 to 200 characters');
  if (!Number.isInteger(fields.slots) || (fields.slots as number) < 1) return bad('slots', 'an integer >= 1');
  if (typeof fields.dataHost !== 'string' || fields.dataHost.length === 0) return bad('dataHost', 'a host name or address');
  if (!Number.isInteger(fields.dataPort) || (fields.dataPort as number) < 1 || (fields.dataPort as number) > 65_535) return bad('dataPort', 'a port from 1 to 65535');
  if (!Number.isInteger(fields.pid) || (fields.pid as number) < 0) return bad('pid', 'a process id');
  if (fields.metricsUrl !== undefined && fields.metricsUrl !== null && typeof fields.metricsUrl !== 'string') return bad('metricsUrl', 'a URL or absent');
  return undefined;
}
