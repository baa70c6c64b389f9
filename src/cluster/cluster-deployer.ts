import type { JobVertex } from '../graph/job-graph.js';
import type { CheckpointBarrier } from '../runtime/channel/stream-element.js';
import { subtaskKey } from '../runtime/checkpoint/state-persistence.js';
import type { CheckpointResponder } from '../runtime/checkpoint/subtask-state.js';
import type { AttemptSpec, DeployedAttempt, Deployer, SlotRequest, TaskView } from '../runtime/deploy/deployer.js';
import type { SplitAnswer } from '../runtime/split-enumerator.js';
import { isTerminal, type TaskState } from '../runtime/task/task-state.js';
import type { ConfigValue } from '../config/configuration.js';
import { deserializeError, type Deployment, type JobManagerMessage, type TaskManagerMessage } from './control-messages.js';
import type { JobBundle } from './job-bundle.js';
import type { RegisteredTaskManager, TaskManagerRegistry } from './task-manager-registry.js';
import { isDataConnectionLoss } from './network/data-endpoint.js';
import { receivedSubtaskState } from './sent-subtask-state.js';

/** How a job was submitted: what every TaskManager needs to rebuild its graph. */
export interface ClusterJob {
  readonly jobId: string;
  readonly jobName: string;
  readonly bundle: JobBundle;
  readonly config: readonly (readonly [string, ConfigValue])[];
  readonly jobArgs: readonly string[];
  readonly graphFingerprint: string;
}

/**
 * Deploys a job's attempts onto registered TaskManagers. Slots are shared as in Flink: one
 * slot runs one parallel pipeline, subtask i of every vertex, so a job needs as many slots as
 * its highest parallelism; slots are taken round-robin over the TaskManagers so that
 * pipelines spread. It waits for enough slots (slot.request.timeout).
 */
export class ClusterDeployer implements Deployer {
  /** The slots the deployment under way asks for. */
  private request: Omit<SlotRequest, 'available'> | undefined;

  constructor(
    private readonly registry: TaskManagerRegistry,
    private readonly job: ClusterJob,
    private readonly slotRequestTimeoutMs: number,
  ) {}

  pendingSlotRequest(): SlotRequest | undefined {
    const r = this.request;
    if (r === undefined) return undefined;
    const available = this.registry.freeSlots();
    // Enough slots: they are being taken, nothing waits.
    return available >= r.required ? undefined : { ...r, available };
  }

  async deploy(spec: AttemptSpec): Promise<DeployedAttempt> {
    const needed = Math.max(...spec.graph.vertices.map((v) => v.parallelism));
    const sinceMs = Date.now();
    this.request = { required: needed, sinceMs, timeoutAtMs: sinceMs + this.slotRequestTimeoutMs };
    let slots: RegisteredTaskManager[];
    try {
      slots = await this.registry.takeSlots(this.job.jobId, needed, this.slotRequestTimeoutMs);
    } finally {
      this.request = undefined;
    }
    const placement = new Map<string, RegisteredTaskManager>();
    for (const v of spec.graph.vertices) for (let i = 0; i < v.parallelism; i++) placement.set(subtaskKey(v.id, i), slots[i]!);
    const involved = [...new Set(slots)];
    const attempt = new ClusterAttempt(this.job.jobId, spec, placement, involved, () => this.registry.releaseSlots(this.job.jobId));
    this.registry.routeAttempt(this.job.jobId, attempt);
    for (const tm of involved) {
      const mine = (key: string): boolean => placement.get(key) === tm;
      const deployment: Deployment = {
        jobId: this.job.jobId,
        attempt: spec.attemptNumber,
        bundleId: this.job.bundle.id,
        bundle: tm.bundles.has(this.job.bundle.id) ? undefined : this.job.bundle.code,
        jobArgs: this.job.jobArgs,
        jobName: this.job.jobName,
        config: this.job.config,
        graph: this.job.graphFingerprint,
        placement: [...placement].map(([k, t]) => {
          const [v, i] = k.split('/').map(Number) as [number, number];
          return [v, i, t.id] as const;
        }),
        peers: involved.map((t) => [t.id, t.dataHost, t.dataPort] as const),
        restore: spec.restore === undefined ? undefined : [...spec.restore].filter(([k]) => mine(k)),
        splits: [...spec.splits].filter(([k]) => mine(k)),
        checkpointing:
          spec.checkpointing === undefined
            ? undefined
            : {
                mode: spec.checkpointing.mode,
                finalCheckpoint: spec.checkpointing.finalCheckpoint,
                timeoutMs: spec.checkpointing.timeoutMs ?? 600_000,
                restartDelayMsMax: spec.checkpointing.restartDelayMsMax ?? 0,
                incremental: spec.checkpointing.incremental === true,
                ...(spec.checkpointing.changelog === undefined ? {} : { changelog: spec.checkpointing.changelog }),
                ...(spec.checkpointing.taskOwnedDir === undefined ? {} : { taskOwnedDir: spec.checkpointing.taskOwnedDir }),
              },
      };
      tm.bundles.add(this.job.bundle.id);
      tm.send({ t: 'deploy', deployment });
    }
    return attempt;
  }
}

/** The live state of a subtask on a TaskManager, from its reports. */
class RemoteTaskView implements TaskView {
  state: TaskState = 'created';
  recordsIn = 0;
  out = 0;
  watermarkMs = Number.MIN_SAFE_INTEGER;
  backPressuredMs = 0;

  constructor(
    readonly vertex: JobVertex,
    readonly subtaskIndex: number,
    readonly taskManager: RegisteredTaskManager,
    readonly attemptNumber: number,
  ) {}

  get taskManagerId(): string {
    return this.taskManager.id;
  }

  recordsOut(): number {
    return this.out;
  }

  inputWatermarkMs(): number {
    return this.watermarkMs;
  }

  backPressuredTimeMsTotal(): number {
    return this.backPressuredMs;
  }
}

/** How long a subtask's lost data connection waits for the failure that caused it before it fails the attempt itself. */
export const CONSEQUENCE_GRACE_MS = 500;

/** One attempt of a job spread over TaskManagers, driven by their messages. */
export class ClusterAttempt implements DeployedAttempt {
  readonly tasks: RemoteTaskView[] = [];
  private readonly byKey = new Map<string, RemoteTaskView>();
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (e: Error) => void;
  private readonly deployed = new Set<RegisteredTaskManager>();
  private initialized!: () => void;
  private initFailed!: (e: Error) => void;
  private readonly initializedPromise: Promise<void>;
  private readonly canceledBy = new Set<RegisteredTaskManager>();
  private onCanceled: (() => void) | undefined;
  private over = false;
  /** A lost data connection reported by a subtask, failing the attempt unless its cause is reported first. */
  private consequence: ReturnType<typeof setTimeout> | undefined;
  private readonly responder: CheckpointResponder | undefined;

  constructor(
    readonly jobId: string,
    private readonly spec: AttemptSpec,
    placement: ReadonlyMap<string, RegisteredTaskManager>,
    private readonly involved: readonly RegisteredTaskManager[],
    private readonly release: () => void,
  ) {
    for (const v of spec.graph.vertices) {
      for (let i = 0; i < v.parallelism; i++) {
        const view = new RemoteTaskView(v, i, placement.get(subtaskKey(v.id, i))!, spec.attemptNumber);
        this.tasks.push(view);
        this.byKey.set(subtaskKey(v.id, i), view);
      }
    }
    this.responder = spec.checkpointing?.responder;
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch((e: unknown) => spec.fail(e as Error));
    this.initializedPromise = new Promise((resolve, reject) => {
      this.initialized = resolve;
      this.initFailed = reject;
    });
    this.initializedPromise.catch(() => {});
  }

  get attemptNumber(): number {
    return this.spec.attemptNumber;
  }

  initialize(): Promise<void> {
    return this.initializedPromise;
  }

  start(): void {
    for (const tm of this.involved) tm.send({ t: 'start', jobId: this.jobId, attempt: this.attemptNumber });
    // Started: running until their reports say otherwise (the first comes within 500 ms).
    for (const view of this.tasks) if (!isTerminal(view.state)) view.state = 'running';
  }

  cancel(): Promise<void> {
    this.over = true;
    clearTimeout(this.consequence);
    const live = this.involved.filter((tm) => !tm.lost);
    const all = new Promise<void>((resolve) => {
      this.onCanceled = () => {
        if (live.every((tm) => this.canceledBy.has(tm) || tm.lost)) resolve();
      };
      this.onCanceled();
    });
    for (const tm of live) tm.send({ t: 'cancel', jobId: this.jobId, attempt: this.attemptNumber });
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
    return Promise.race([all, timeout]).finally(() => {
      this.settleViews(undefined, 'canceled');
      this.release();
    });
  }

  /**
   * Subtasks that will report no more (on a lost TaskManager, or of an attempt that is over)
   * take the state they ended in, so the REST API does not show them running from their last report.
   */
  private settleViews(on: RegisteredTaskManager | undefined, state: 'failed' | 'canceled'): void {
    for (const view of this.tasks) if ((on === undefined || view.taskManager === on) && !isTerminal(view.state)) view.state = state;
  }

  triggerSources(barrier: CheckpointBarrier): void {
    this.broadcast({ t: 'trigger', jobId: this.jobId, attempt: this.attemptNumber, barrier });
  }

  notifyComplete(checkpointId: number, final: boolean): void {
    this.broadcast({ t: 'complete', jobId: this.jobId, attempt: this.attemptNumber, checkpointId, final });
  }

  notifyAborted(checkpointId: number, reason: string): void {
    this.broadcast({ t: 'abort', jobId: this.jobId, attempt: this.attemptNumber, checkpointId, reason });
  }

  stopSources(drain: boolean): void {
    this.broadcast({ t: 'stop-sources', jobId: this.jobId, attempt: this.attemptNumber, drain });
  }

  assignSplit(vertexId: number, subtaskIndex: number, answer: SplitAnswer): void {
    const tm = this.byKey.get(subtaskKey(vertexId, subtaskIndex))?.taskManager;
    if (tm !== undefined && !tm.lost) tm.send({ t: 'assign-split', jobId: this.jobId, attempt: this.attemptNumber, subtask: [vertexId, subtaskIndex], answer });
  }

  announceMaxWatermark(vertexId: number, subtaskIndex: number, maxWatermarkMs: number): void {
    const tm = this.byKey.get(subtaskKey(vertexId, subtaskIndex))?.taskManager;
    if (tm !== undefined && !tm.lost) tm.send({ t: 'max-watermark', jobId: this.jobId, attempt: this.attemptNumber, subtask: [vertexId, subtaskIndex], maxWatermarkMs });
  }

  private broadcast(m: JobManagerMessage): void {
    for (const tm of this.involved) if (!tm.lost) tm.send(m);
  }

  /** A TaskManager of this attempt is gone: the attempt fails over. */
  taskManagerLost(tm: RegisteredTaskManager, why: string): void {
    if (!this.involved.includes(tm)) return;
    const error = new Error(`TaskManager ${tm.id} (pid ${tm.pid}, ${tm.dataHost}) was lost: ${why}`);
    this.settleViews(tm, 'failed');
    this.initFailed(error);
    this.fail(error);
    this.onCanceled?.();
  }

  /**
   * A subtask failed because a data connection closed: usually because a subtask elsewhere
   * failed first and its TaskManager let go of the attempt's connections, and that failure (or
   * the loss of its TaskManager) may reach this JobManager a moment later over another
   * connection. It is waited for up to CONSEQUENCE_GRACE_MS, so the job's failure names the
   * cause ('PREPARE TRANSACTION is disabled'), not the consequence ('a data connection closed').
   */
  private failUnlessCauseFollows(error: Error): void {
    if (this.over || this.consequence !== undefined) return;
    this.consequence = setTimeout(() => this.fail(error), CONSEQUENCE_GRACE_MS);
  }

  private fail(error: Error): void {
    clearTimeout(this.consequence);
    if (this.over) return;
    this.over = true;
    this.rejectDone(error);
  }

  /** A message of this attempt from one of its TaskManagers. */
  onMessage(tm: RegisteredTaskManager, m: TaskManagerMessage): void {
    switch (m.t) {
      case 'deployed':
        this.deployed.add(tm);
        // Its tasks are initialized and wait for the start.
        for (const view of this.tasks) if (view.taskManager === tm && view.state === 'created') view.state = 'initializing';
        if (this.involved.every((t) => this.deployed.has(t))) this.initialized();
        return;
      case 'deploy-failed': {
        const e = deserializeError(m.error);
        this.initFailed(e);
        this.fail(e);
        return;
      }
      case 'task-state': {
        const view = this.byKey.get(subtaskKey(m.subtask[0], m.subtask[1]));
        if (view === undefined) return;
        view.state = m.state;
        if (m.state === 'failed') {
          const error = m.error === undefined ? new Error(`subtask ${view.vertex.name}#${view.subtaskIndex} failed`) : deserializeError(m.error);
          if (isDataConnectionLoss(error)) this.failUnlessCauseFollows(error);
          else this.fail(error);
          return;
        }
        if (this.tasks.every((t) => t.state === 'finished')) {
          this.over = true;
          this.resolveDone();
        }
        return;
      }
      case 'progress':
        for (const [v, i, state, recordsIn, recordsOut, wm, backPressuredMs] of m.tasks) {
          const view = this.byKey.get(subtaskKey(v, i));
          if (view === undefined) continue;
          if (!isTerminal(view.state)) view.state = state;
          view.recordsIn = recordsIn;
          view.out = recordsOut;
          view.watermarkMs = wm;
          view.backPressuredMs = backPressuredMs;
        }
        return;
      case 'ack': {
        let state;
        try {
          state = receivedSubtaskState(m.state, this.spec.checkpointing?.taskOwnedDir);
        } catch (e) {
          this.responder?.decline(m.subtask[0], m.subtask[1], m.checkpointId, 'CHECKPOINT_DECLINED', (e as Error).message);
          return;
        }
        this.responder?.acknowledge(m.subtask[0], m.subtask[1], m.checkpointId, state, m.metrics);
        return;
      }
      case 'changelog':
        this.responder?.appendChangelog(m.subtask[0], m.subtask[1], m.operatorUid, m.position, m.snapshot);
        return;
      case 'decline':
        this.responder?.decline(m.subtask[0], m.subtask[1], m.checkpointId, m.reason, m.message);
        return;
      case 'data-finished':
        this.responder?.dataFinished(m.subtask[0], m.subtask[1]);
        return;
      case 'split-request':
        if (!this.over && this.byKey.get(subtaskKey(m.subtask[0], m.subtask[1]))?.taskManager === tm) this.spec.requestSplit(m.subtask[0], m.subtask[1]);
        return;
      case 'watermark-report':
        if (!this.over && this.byKey.get(subtaskKey(m.subtask[0], m.subtask[1]))?.taskManager === tm) this.spec.reportWatermark(m.subtask[0], m.subtask[1], m.report);
        return;
      case 'canceled':
        this.settleViews(tm, 'canceled');
        this.canceledBy.add(tm);
        this.onCanceled?.();
        return;
      default:
        return;
    }
  }
}
