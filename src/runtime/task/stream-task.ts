import type { JobVertex } from '../../graph/job-graph.js';
import { asError, describeThrown } from '../../util/thrown.js';
import type { StreamEdge } from '../../graph/stream-graph.js';
import { OutputAvailability, RecordWriter } from '../channel/record-writer.js';
import { channelSelector } from '../channel/partitioner.js';
import type { OutputChannel } from '../channel/channel.js';
import { RingQueue } from '../channel/ring-queue.js';
import { END_OF_DATA, END_OF_PARTITION, SUSPEND_PARTITION } from '../channel/stream-element.js';
import type { Clock } from './clock.js';
import { OperatorChain } from './operator-chain.js';
import { blame, blamedOperator, isUnblamable, type StreamOperator } from './stream-operator.js';
import type { BarrierMode } from '../checkpoint/barrier-handler.js';
import { discardOperatorStates, type CheckpointResponder, type InFlightBatch, type OperatorSubtaskState, type SubtaskRestore } from '../checkpoint/subtask-state.js';
import type { CheckpointBarrier } from '../channel/stream-element.js';
import { ProcessingTimeService } from './processing-time-service.js';
import type { Schedulable, TaskScheduler } from './task-scheduler.js';
import { assertTransition, isTerminal, type TaskState } from './task-state.js';
import { WaitTimer } from './wait-timer.js';
import { KeyedChangelog, type ChangelogOptions } from './keyed-changelog.js';
import { TaskFailure } from './task-failure.js';

export interface TaskCheckpointing {
  readonly mode: BarrierMode;
  readonly responder: CheckpointResponder;
  /** Wait for a checkpoint after the end of data before ending (checkpoints-after-tasks-finish). */
  readonly finalCheckpoint: boolean;
  /** `execution.checkpointing.timeout` and the restart strategy's longest delay (for transactional sinks). */
  readonly timeoutMs?: number;
  readonly restartDelayMsMax?: number;
  /** execution.checkpointing.incremental: keyed state backends may snapshot deltas. */
  readonly incremental?: boolean;
  /** state.backend.changelog.enabled: keyed state changes go to a log continuously. */
  readonly changelog?: ChangelogOptions;
  /**
   * The job's `taskowned/` directory of filesystem checkpoint storage, where the JobManager
   * takes full snapshots TaskManagers spilled (responders in this process ignore it).
   */
  readonly taskOwnedDir?: string;
}

export interface TaskDeployment {
  readonly vertex: JobVertex;
  readonly subtaskIndex: number;
  readonly attemptNumber: number;
  /** Output channels per stream edge that leaves the vertex. */
  readonly outputs: ReadonlyMap<StreamEdge, readonly OutputChannel[]>;
  readonly scheduler: TaskScheduler;
  readonly clock: Clock;
  readonly batchSizeRecords: number;
  /** Absent when checkpointing is off. */
  readonly checkpointing: TaskCheckpointing | undefined;
  readonly restore: SubtaskRestore | undefined;
}

/** A checkpoint this subtask has snapshotted but not acknowledged yet. */
export interface PendingSnapshot {
  readonly checkpointId: number;
  readonly startedMs: number;
  readonly barrierTimestampMs: number;
  readonly syncDurationMs: number;
  unaligned: boolean;
  alignmentDurationMs: number;
  readonly inFlight: InFlightBatch[];
  /** The barrier arrived on every input channel (in-flight capture complete). */
  channelsComplete: boolean;
  /** Why the captured in-flight records cannot be stored (the checkpoint is declined). */
  inFlightError?: string;
  operators: OperatorSubtaskState[] | undefined;
  asyncDurationMs: number;
  readonly sourceSplits: readonly unknown[] | undefined;
}

export type InputResult = 'more' | 'wait' | 'end-of-data' | 'end';

/**
 * Records a subtask processes before it lets the others run: a source polls this many, a
 * subtask with inputs takes this many from its channels.
 *
 * A source's slice is short because its records go out to channels that other processes
 * drain: while it runs, the process reads no network input, so the credits and batches the
 * other TaskManagers send wait for the slice to end. A subtask with inputs drains more in one
 * slice: what it takes frees room (credits) for the producers, and its work is bounded by
 * what its channels hold. Measured with 2 TaskManagers (tcp-wordcount, three alternating
 * runs each, with one scheduler pass per event-loop turn): 2,048/16,384 gave 791k lines/s
 * per core at 93% busy; 4,096/4,096 (before) 669k at 82%; 1,024/16,384 761k; 2,048/65,536 780k.
 */
export const SOURCE_SLICE_RECORDS = 2048;
export const INPUT_SLICE_RECORDS = 16384;

/**
 * How long a slice fires timers (a watermark's, or the processing time's) before it lets the
 * others run (and the process's network I/O: credits, heartbeats, the data other processes
 * wait for).
 */
const SLICE_BUDGET_TIMERS_MS = 5;

/**
 * One parallel instance of a job vertex: a mailbox-style loop on the process's single thread.
 * Each slice first continues timers whose firing stopped part-way, then runs the mail
 * (timers, control messages), then input, in order; it stops when input runs out, an output
 * channel is full, or an asynchronous write is pending.
 */
export abstract class StreamTask implements Schedulable {
  scheduled = false;
  state: TaskState = 'created';
  readonly name: string;
  readonly chain: OperatorChain;
  readonly processingTime: ProcessingTimeService;
  protected readonly availability = new OutputAvailability();
  protected readonly writers: RecordWriter[] = [];
  protected pendingAsync: Promise<void> | null = null;
  /** An operator's pause of the input (an async operator's queue is full): mail still runs. */
  private inputPause: Promise<void> | null = null;
  /** `pendingAsync !== null || inputPause !== null`, kept in a field: it is checked after every record. */
  protected inputStopped = false;
  private readonly mailbox = new RingQueue<() => void>();
  /**
   * Work that stopped part-way (firing a watermark's or the processing time's timers), in the
   * order it stopped (a chained operator gets the watermark when the one before it finishes).
   * Until it is done the subtask takes no mail and no input, so nothing interleaves with it.
   */
  private readonly unfinished: (() => boolean)[] = [];
  /** performance.now() at which the current slice stops firing timers. */
  private timersUntilMs = 0;
  private finishing = false;
  /** End of data: 'running' until the last record, then operators finish, then 'finished'. */
  protected dataPhase: 'running' | 'finishing' | 'finished' = 'running';
  /** Stopped without draining: the subtask ends without finishing its operators. */
  protected suspended = false;
  private resolveDone!: () => void;
  private rejectDone!: (e: Error) => void;
  /** Settles when the task is finished, failed or canceled. */
  readonly done: Promise<void>;
  /**
   * Resolves once the task ended (as `done`) and its operators and input are closed, with
   * whatever they still had running (an open that was under way, checkpoint commits). `done`
   * settles at once on a failure or cancel; a new attempt of the job must wait for this
   * instead, or the old attempt's operators act on external systems alongside the new one's
   * (a Kafka sink writer's late InitProducerId fences the new attempt's pre-committed
   * transaction of the same transactional id, which its completed checkpoint then cannot commit).
   */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  /** The operators' open (initialize) while it runs: closing waits for it, so nothing opens after the close. */
  private opening: Promise<void> = Promise.resolve();
  private chainClosing: Promise<void> | undefined;
  private inputClosing: Promise<void> | undefined;
  recordsIn = 0;
  /** Time waiting for room in a full output channel (Flink's backPressuredTime) and for input (idleTime). */
  private readonly backPressuredTime: WaitTimer;
  private readonly idleTime: WaitTimer;
  failureCause: Error | undefined;
  protected readonly pendingSnapshots = new Map<number, PendingSnapshot>();
  /** Checkpoint notifications still running (commits), in order. */
  private notifications: Promise<void> = Promise.resolve();
  /** Per operator of the chain: its state changelog (state.backend.changelog.enabled, keyed operators). */
  private changelogs: (KeyedChangelog | undefined)[] = [];

  constructor(protected readonly d: TaskDeployment) {
    this.name = `${d.vertex.name} (${d.subtaskIndex + 1}/${d.vertex.parallelism})`;
    this.done = new Promise<void>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => {});
    this.closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));
    this.processingTime = new ProcessingTimeService(d.clock, (mail) => this.enqueueMail(mail));
    this.backPressuredTime = new WaitTimer(d.clock);
    this.idleTime = new WaitTimer(d.clock);
    const writers = new Map<StreamEdge, RecordWriter>();
    for (const [edge, channels] of d.outputs) {
      const selector = channelSelector(edge.partitioning, channels.length, d.subtaskIndex, edge.target.maxParallelism);
      const writer = new RecordWriter(channels, selector, d.batchSizeRecords, this.availability);
      for (const c of channels) c.onWritable(() => this.wake());
      writers.set(edge, writer);
      this.writers.push(writer);
    }
    this.chain = new OperatorChain(d.vertex, {
      subtaskIndex: d.subtaskIndex,
      attemptNumber: d.attemptNumber,
      processingTime: this.processingTime,
      writerFor: (edge) => {
        const w = writers.get(edge);
        if (w === undefined) throw new Error(`no channels for edge ${edge.source.name} -> ${edge.target.name}`);
        return w;
      },
      waitFor: (p) => this.waitFor(p),
      pauseInput: (p) => this.pauseInput(p),
      enqueueMail: (mail) => this.enqueueMail(mail),
      shouldYield: () => this.availability.blocked || performance.now() >= this.timersUntilMs,
      defer: (rest) => this.unfinished.push(rest),
      restore: d.restore,
      checkpointing: d.checkpointing !== undefined,
      fullSnapshots: d.checkpointing !== undefined && d.checkpointing.incremental !== true && d.checkpointing.changelog === undefined,
      checkpointTimeoutMs: d.checkpointing?.timeoutMs,
      restartDelayMsMax: d.checkpointing?.restartDelayMsMax,
    });
  }

  get subtaskIndex(): number {
    return this.d.subtaskIndex;
  }

  get vertex(): JobVertex {
    return this.d.vertex;
  }

  get attemptNumber(): number {
    return this.d.attemptNumber;
  }

  /** The event-time watermark of this task's input (minimum over its inputs). */
  inputWatermarkMs(): number {
    return Number.MIN_SAFE_INTEGER;
  }

  /** Milliseconds this attempt waited for room in its output channels so far. */
  backPressuredTimeMsTotal(): number {
    return this.backPressuredTime.totalMs(isTerminal(this.state));
  }

  /** Milliseconds this attempt waited for input so far. */
  idleTimeMsTotal(): number {
    return this.idleTime.totalMs(isTerminal(this.state));
  }

  isBackPressured(): boolean {
    return this.backPressuredTime.waiting && !isTerminal(this.state);
  }

  recordsOut(): number {
    let n = 0;
    for (const w of this.writers) n += w.recordsOut;
    return n;
  }

  protected transition(to: TaskState): void {
    assertTransition(this.state, to, this.name);
    this.state = to;
    if (isTerminal(to)) for (const stop of this.stopPeriodic.splice(0)) stop();
  }

  /** Opens operators (and the source reader); the task does not run yet. */
  async initialize(): Promise<void> {
    this.transition('initializing');
    const initializing = this.initializeOperators();
    this.opening = initializing.then(
      () => {},
      () => {},
    );
    await initializing;
  }

  private async initializeOperators(): Promise<void> {
    await this.chain.open();
    await this.initializeInput();
    const cp = this.d.checkpointing;
    const changelog = cp?.changelog;
    if (cp !== undefined && changelog !== undefined) {
      this.changelogs = this.chain.operators.map((c) => {
        const backend = c.keyedBackend;
        if (backend === undefined) return undefined;
        const uid = c.node.operatorUid;
        return new KeyedChangelog(
          backend,
          (position, snapshot) => cp.responder.appendChangelog(this.d.vertex.id, this.d.subtaskIndex, uid, position, snapshot),
          (e) => this.fail(new Error(`${this.name}: the state changelog of '${c.node.name}' could not be captured: ${(e as Error).message}`, { cause: e })),
        );
      });
      if (this.changelogs.some((c) => c !== undefined)) {
        this.every(changelog.persistDelayMs, () => {
          for (const c of this.changelogs) c?.persistIfIdle();
        });
        this.every(changelog.materializeIntervalMs, () => {
          for (const c of this.changelogs) c?.requestMaterialization();
        });
      }
    }
  }

  /** Cancels the timers of `every`: called when the task ends. */
  private readonly stopPeriodic: (() => void)[] = [];

  /**
   * Runs `fn` as mail every `intervalMs` while the task is not terminal. The pending timer is
   * cancelled when the task ends: a timer left behind (the materialization interval is 10
   * minutes) would keep the task and its state reachable, and the process alive, that long.
   */
  private every(intervalMs: number, fn: () => void): void {
    let cancel: () => void;
    const tick = (): void => {
      if (isTerminal(this.state)) return;
      this.enqueueMail(() => {
        if (this.state === 'running') fn();
      });
      cancel = this.d.clock.schedule(intervalMs, tick);
    };
    cancel = this.d.clock.schedule(intervalMs, tick);
    this.stopPeriodic.push(() => cancel());
  }

  protected async initializeInput(): Promise<void> {}

  start(): void {
    if (this.state !== 'initializing') return;
    this.transition('running');
    this.wake();
  }

  wake(): void {
    if (!isTerminal(this.state)) this.d.scheduler.wake(this);
  }

  enqueueMail(mail: () => void): void {
    if (isTerminal(this.state)) return;
    this.mailbox.push(mail);
    this.wake();
  }

  /**
   * The task reads no input and runs no mail until `promise` (and any operation still
   * pending before it) settled. A source may emit several records in one poll, so several
   * operations can start before the task stops: they are waited for together.
   */
  waitFor(promise: Promise<void>): void {
    const p = this.stopInputUntil(this.pendingAsync, promise, (settled) => {
      if (this.pendingAsync === settled) this.pendingAsync = null;
    });
    this.pendingAsync = p;
  }

  /**
   * The task reads no input until `promise` settles, but runs its mail (checkpoint triggers,
   * timers, the completions that end the pause): an async operator whose queue is full.
   */
  pauseInput(promise: Promise<void>): void {
    const p = this.stopInputUntil(this.inputPause, promise, (settled) => {
      if (this.inputPause === settled) this.inputPause = null;
    });
    this.inputPause = p;
  }

  /** `promise` joined to the one still pending before it; once both settle, `clear` and wake. */
  private stopInputUntil(prev: Promise<void> | null, promise: Promise<void>, clear: (settled: Promise<void>) => void): Promise<void> {
    const all = prev === null ? promise : Promise.all([prev, promise]).then(() => {});
    const p: Promise<void> = all.then(
      () => {
        clear(p);
        this.inputStopped = this.pendingAsync !== null || this.inputPause !== null;
        this.wake();
      },
      (e: unknown) => this.fail(e),
    );
    this.inputStopped = true;
    return p;
  }

  runSlice(): boolean {
    if (this.state !== 'running') return false;
    this.idleTime.stop();
    try {
      this.timersUntilMs = performance.now() + SLICE_BUDGET_TIMERS_MS;
      if (this.unfinished.length > 0) return this.resumeUnfinished();
      // Mail (checkpoint triggers, notifications, timers) waits for a pending asynchronous
      // write, as it waits for a record being processed: a barrier must not pass records
      // that were handed to the sink before it.
      let mails = 0;
      while (this.mailbox.size > 0 && this.pendingAsync === null) {
        this.mailbox.shift()!();
        mails++;
        if (this.state !== 'running') return false;
        // A mail's timers stopped part-way: the rest runs first, in the next slice.
        if (this.unfinished.length > 0) return true;
      }
      if (this.finishing || this.pendingAsync !== null || this.dataPhase === 'finishing' || this.inputPause !== null) {
        // What the mail emitted (an async operator's results) goes out now, not with the next input.
        if (mails > 0) for (const w of this.writers) w.flushAll();
        if (this.inputPause !== null && !this.finishing) this.whileInputPaused();
        return false;
      }
      if (this.outputFull()) return false;
      const result = this.processInput(this.sliceBudgetRecords);
      for (const w of this.writers) w.flushAll();
      if (this.availability.blocked) this.backPressuredTime.start();
      else if (result === 'wait' && !this.inputStopped) this.idleTime.start();
      if (result === 'end-of-data') {
        this.dataPhase = 'finishing';
        void this.finishData();
        return false;
      }
      if (result === 'end') {
        this.finishing = true;
        void this.endOfInput();
        return false;
      }
      return result === 'more';
    } catch (e) {
      this.fail(e);
      return false;
    }
  }

  protected abstract processInput(budgetRecords: number): InputResult;

  /** Input is paused (pauseInput): what the task still takes from its input (unaligned barriers). */
  protected whileInputPaused(): void {}

  /** Records one slice processes (SOURCE_SLICE_RECORDS or INPUT_SLICE_RECORDS). */
  protected abstract readonly sliceBudgetRecords: number;

  /**
   * Waiting for room in a full output channel: back-pressured until woken with room (counted
   * as back-pressured time from here).
   */
  private outputFull(): boolean {
    if (this.availability.blocked && !this.availability.recheck()) {
      this.backPressuredTime.start();
      return true;
    }
    this.backPressuredTime.stop();
    return false;
  }

  /** Work stopped part-way (timers of a watermark or of the processing time): input must stop until it is finished. */
  protected get workUnfinished(): boolean {
    return this.unfinished.length > 0;
  }

  /** Continues the unfinished work (a slice of it); true when the subtask should run again soon. */
  private resumeUnfinished(): boolean {
    // As input does, firing waits for an asynchronous write and for room in the outputs.
    if (this.pendingAsync !== null || this.outputFull()) return false;
    const unfinished = this.unfinished;
    while (unfinished.length > 0 && unfinished[0]!()) unfinished.shift();
    for (const w of this.writers) w.flushAll();
    if (this.availability.blocked) {
      this.backPressuredTime.start();
      return false;
    }
    return true;
  }

  /**
   * The last record went through: operators finish (flush what they buffer), end-of-data
   * goes downstream. The subtask stays up for a final checkpoint, then ends with the input.
   */
  private async finishData(): Promise<void> {
    try {
      await this.drainPending();
      await this.chain.finish();
      await this.drainPending();
      for (const w of this.writers) w.broadcastEvent(END_OF_DATA);
      this.dataPhase = 'finished';
      this.onDataFinished();
      this.wake();
    } catch (e) {
      this.fail(e);
    }
  }

  protected onDataFinished(): void {}

  /** All input consumed and closed: close the channels, report finished. */
  private async endOfInput(): Promise<void> {
    try {
      if (this.dataPhase === 'running' && !this.suspended) {
        this.dataPhase = 'finishing';
        await this.finishData();
      }
      await this.drainPending();
      // Commits of the final checkpoint finish before the subtask (and its sink) closes.
      await this.notifications;
      if (this.state !== 'running') return;
      for (const w of this.writers) w.broadcastEvent(this.suspended ? SUSPEND_PARTITION : END_OF_PARTITION);
      await this.closeInputOnce();
      await this.closeChainOnce();
      this.processingTime.quiesce();
      if (this.state !== 'running') return;
      this.transition('finished');
      this.resolveDone();
      this.resolveClosed();
    } catch (e) {
      this.fail(e);
    }
  }

  private async drainPending(): Promise<void> {
    while (this.pendingAsync !== null) await this.pendingAsync;
  }

  protected async closeInput(): Promise<void> {}

  /**
   * Closes the operators once (an end of input, a failure and a cancel may each ask), after
   * their open and the checkpoint notifications still running: a commit is not cut off
   * half-way, and an operator still opening (a sink writer aborting lingering transactions)
   * is closed when it is open, not left running.
   */
  private closeChainOnce(): Promise<void> {
    this.chainClosing ??= Promise.all([this.opening, this.notifications]).then(() => {
      // Checkpoints this subtask has not acknowledged it will not: its keyed backends go with
      // the operators (an asynchronous part cut short by that is no failure to report), and
      // what was captured for them is let go.
      for (const id of [...this.pendingSnapshots.keys()]) this.dropPendingSnapshot(id);
      return this.chain.close();
    });
    return this.chainClosing;
  }

  private closeInputOnce(): Promise<void> {
    this.inputClosing ??= this.opening.then(() => this.closeInput());
    return this.inputClosing;
  }

  /** A failure or cancel: closes operators and input in the background; `closed` resolves when both are done, either way. */
  private closeAfterEnd(): void {
    void Promise.allSettled([this.closeChainOnce(), this.closeInputOnce()]).then(() => this.resolveClosed());
  }

  /**
   * Takes this subtask's part of a checkpoint: the synchronous capture of every operator's
   * state, then the barrier goes downstream (ahead of queued data when unaligned), then the
   * asynchronous part runs while records keep flowing. Acknowledges when the asynchronous part
   * is done and (unaligned) every input delivered the barrier.
   */
  protected performCheckpoint(barrier: CheckpointBarrier, unaligned: boolean, sourceSplits: readonly unknown[] | undefined): void {
    const cp = this.d.checkpointing;
    if (cp === undefined) throw new Error(`${this.name}: checkpoint barrier ${barrier.checkpointId} while checkpointing is off`);
    const started = this.d.clock.nowMs();
    const asyncParts: Promise<unknown>[] = [];
    const captures: (() => Promise<OperatorSubtaskState>)[] = [];
    // Savepoints are always full and never serve as a base; a checkpoint requested full (or
    // forced full by the coordinator) starts a new chain that later deltas build on.
    const incremental = cp.incremental === true && barrier.options.type === 'checkpoint';
    const full = barrier.options.full === true;
    for (const [i, c] of this.chain.operators.entries()) {
      let hook: void | Promise<void>;
      try {
        hook = c.operator.snapshotState(barrier.checkpointId);
      } catch (e) {
        throw blame(e, c.operator);
      }
      if (hook !== undefined) asyncParts.push(hook.catch((e: unknown) => Promise.reject(blame(e, c.operator))));
      const operatorState = c.operatorState.snapshot();
      const uid = c.node.operatorUid;
      const changelog = barrier.options.type === 'checkpoint' ? this.changelogs[i] : undefined;
      if (changelog !== undefined) {
        // The log up to this position is the keyed state of the checkpoint; only the tail is new.
        // A checkpoint requested full (`sluice checkpoint --full`) materializes.
        if (barrier.options.full === true) changelog.requestMaterialization();
        const position = changelog.persist();
        captures.push(async () => ({ operatorUid: uid, keyed: undefined, changelogPosition: await position, operatorState }));
        continue;
      }
      const spillDir = cp.responder.keyedStateSpillDir;
      const keyed = c.keyedBackend?.snapshot({ checkpointId: barrier.checkpointId, incremental, ...(full ? { full } : {}), hold: cp.responder.acceptsHeldKeyedState === true, ...(spillDir === undefined ? {} : { spillDir }) });
      captures.push(async () => ({ operatorUid: uid, keyed: keyed === undefined ? undefined : await keyed(), operatorState }));
    }
    for (const w of this.writers) {
      if (unaligned) w.broadcastPriority(barrier);
      else w.broadcastEvent(barrier);
    }
    // A synchronous savepoint (stop-with-savepoint) is the last thing a subtask emits, as in
    // Flink: no processing-time timer and no periodic watermark after it, whose output the
    // resumed job would produce again. (Its sources emit no records after it either.)
    if (barrier.options.type === 'sync-savepoint') this.processingTime.quiesce();
    const afterSync = this.d.clock.nowMs();
    const pending: PendingSnapshot = {
      checkpointId: barrier.checkpointId,
      startedMs: started,
      barrierTimestampMs: barrier.timestampMs,
      syncDurationMs: afterSync - started,
      unaligned,
      alignmentDurationMs: 0,
      inFlight: [],
      channelsComplete: this.checkpointChannelsCompleteAtSnapshot(),
      operators: undefined,
      asyncDurationMs: 0,
      sourceSplits,
    };
    this.pendingSnapshots.set(barrier.checkpointId, pending);
    void (async () => {
      const operators: OperatorSubtaskState[] = [];
      try {
        await Promise.all(asyncParts);
        for (const capture of captures) operators.push(await capture());
        pending.operators = operators;
        pending.asyncDurationMs = this.d.clock.nowMs() - afterSync;
        this.maybeAcknowledge(pending);
      } catch (e) {
        discardOperatorStates(operators); // spill files of operators captured before the one that failed
        if (this.pendingSnapshots.delete(barrier.checkpointId) && !isTerminal(this.state)) {
          cp.responder.decline(this.d.vertex.id, this.d.subtaskIndex, barrier.checkpointId, 'CHECKPOINT_ASYNC_EXCEPTION', `${this.name}: asynchronous part${operatorOf(e)} failed: ${(e as Error).message}`);
        }
      }
    })();
  }

  /** Source subtasks have no inputs to wait for. */
  protected checkpointChannelsCompleteAtSnapshot(): boolean {
    return true;
  }

  protected maybeAcknowledge(p: PendingSnapshot): void {
    if (p.operators === undefined || !p.channelsComplete) return;
    if (!this.pendingSnapshots.delete(p.checkpointId) || isTerminal(this.state)) {
      discardOperatorStates(p.operators); // aborted, or the subtask ended: never acknowledged
      return;
    }
    if (p.inFlightError !== undefined) {
      discardOperatorStates(p.operators);
      this.d.checkpointing!.responder.decline(this.d.vertex.id, this.d.subtaskIndex, p.checkpointId, 'CHECKPOINT_ASYNC_EXCEPTION', `${this.name}: ${p.inFlightError}`);
      return;
    }
    let inFlightRecords = 0;
    for (const b of p.inFlight) inFlightRecords += b.values.length;
    this.d.checkpointing!.responder.acknowledge(
      this.d.vertex.id,
      this.d.subtaskIndex,
      p.checkpointId,
      { operators: p.operators, sourceSplits: p.sourceSplits, inFlight: p.inFlight },
      {
        syncDurationMs: p.syncDurationMs,
        asyncDurationMs: p.asyncDurationMs,
        alignmentDurationMs: p.alignmentDurationMs,
        startDelayMs: Math.max(0, p.startedMs - p.barrierTimestampMs),
        unaligned: p.unaligned,
        inFlightRecords,
      },
    );
  }

  /**
   * The coordinator completed a checkpoint: operators may commit. Notifications run one after
   * another (a commit never overlaps the next), and the subtask does not end before they ran.
   */
  notifyCheckpointComplete(checkpointId: number, final: boolean): void {
    this.enqueueMail(() => {
      for (const c of this.chain.operators) c.keyedBackend?.notifyCheckpointComplete(checkpointId);
      for (const c of this.chain.operators) this.notifyInOrder(() => c.operator.notifyCheckpointComplete(checkpointId), c.operator);
      this.notifyInOrder(() => this.onCheckpointComplete(checkpointId, final));
    });
  }

  protected onCheckpointComplete(_checkpointId: number, _final: boolean): void | Promise<void> {}

  /** Forgets a checkpoint this subtask will not acknowledge, and lets go of the state it captured for it. */
  protected dropPendingSnapshot(checkpointId: number): void {
    discardOperatorStates(this.pendingSnapshots.get(checkpointId)?.operators);
    this.pendingSnapshots.delete(checkpointId);
  }

  notifyCheckpointAborted(checkpointId: number, reason: string): void {
    this.enqueueMail(() => {
      this.dropPendingSnapshot(checkpointId);
      this.onCheckpointAborted(checkpointId, reason);
      for (const c of this.chain.operators) c.keyedBackend?.notifyCheckpointAborted(checkpointId);
      for (const c of this.chain.operators) this.notifyInOrder(() => c.operator.notifyCheckpointAborted(checkpointId), c.operator);
    });
  }

  /** Runs checkpoint notifications of this subtask strictly in order; a failure fails the subtask. */
  private notifyInOrder(fn: () => void | Promise<void>, operator?: StreamOperator): void {
    this.notifications = this.notifications.then(fn).catch((e: unknown) => this.fail(operator === undefined ? e : blame(e, operator)));
  }

  protected onCheckpointAborted(_checkpointId: number, _reason: string): void {}

  fail(cause: unknown): void {
    if (isTerminal(this.state)) return;
    const error = asError(cause);
    const operator = blamedOperator(error) ?? (isUnblamable(error) ? undefined : this.chain.head?.runtime?.name);
    const message = describeThrown(error);
    // An error that names its operator already (one that failed to open) is not prefixed twice.
    const where = operator === undefined || message.startsWith(`operator '${operator}' `) ? '' : `operator '${operator}' in `;
    this.failureCause = new TaskFailure(this.name, `${where}task ${this.name} failed: ${message}`, { cause: error });
    this.transition('failed');
    this.processingTime.quiesce();
    this.closeAfterEnd();
    this.rejectDone(this.failureCause);
  }

  cancel(): void {
    if (isTerminal(this.state)) return;
    this.transition('canceled');
    this.processingTime.quiesce();
    this.closeAfterEnd();
    this.resolveDone();
  }
}

/** ` of operator 'name'` for an error blamed on an operator, else nothing. */
function operatorOf(e: unknown): string {
  const operator = blamedOperator(e);
  return operator === undefined ? '' : ` of operator '${operator}'`;
}
