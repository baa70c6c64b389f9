import { randomBytes } from 'node:crypto';
import { describeThrown } from '../util/thrown.js';
import { assert } from '../util/assert.js';
import { TaskCancellationTimeoutError } from './deploy/cancellation-watchdog.js';
import { ConfigError, type Configuration } from '../config/configuration.js';
import type { JobGraph } from '../graph/job-graph.js';
import type { CheckpointBarrier } from './channel/stream-element.js';
import { CheckpointCoordinator, discardAllRetained, type CompletedCheckpointInfo, type CompletedCheckpointStore } from './checkpoint/checkpoint-coordinator.js';
import { CheckpointStatsTracker } from './checkpoint/checkpoint-stats.js';
import { checkpointCoordinatorConfig, type CheckpointCoordinatorConfig } from './checkpoint/coordinator-decisions.js';
import { encodeSplitEnumeratorState, restoreAssignments, restoreSplitEnumerators, subtaskKey, type StateReader } from './checkpoint/state-persistence.js';
import { SplitEnumerator } from './split-enumerator.js';
import { WatermarkAlignmentCoordinator } from './watermark-alignment.js';
import type { CheckpointMetadata, OperatorSnapshot } from './storage/snapshot-format.js';
import type { SubtaskRestore } from './checkpoint/subtask-state.js';
import { createRestartStrategy, maxRestartDelayMs, type RestartBackoffTimeStrategy } from './recovery/restart-strategy.js';
import { RestartMessages } from './recovery/restart-messages.js';
import { findNonRecoverable } from './recovery/throwable-classifier.js';
import { createCheckpointStorage } from './storage/checkpoint-storage-factory.js';
import type { CheckpointStorage } from './storage/checkpoint-storage.js';
import { FilesystemCheckpointStorage } from './storage/filesystem-checkpoint-storage.js';
import { chooseCheckpointToRestore, describeFallbacks } from './storage/choose-checkpoint-to-restore.js';
import { CorruptCheckpointError } from './storage/storage-errors.js';
import { locateSnapshot, otherSnapshotHint, readSnapshotMetadata, readStateHandleInDirectory, snapshotDirOfPointer } from './storage/snapshot-directory-reader.js';
import { systemClock, type Clock } from './task/clock.js';
import type { StreamTask, TaskCheckpointing } from './task/stream-task.js';
import type { DeployedAttempt, Deployer, SlotRequest, TaskView } from './deploy/deployer.js';
import { InProcessDeployer } from './deploy/in-process-deployer.js';
import { failedTaskName } from './task/task-failure.js';
import { taskNameFields, toLogger, type LogTarget, type Logger } from '../util/logger.js';

/** Splits created at job start: by subtaskKey (static sources), by vertex id (split enumerators). */
interface InitialSplits {
  readonly perSubtask: Map<string, unknown[]>;
  readonly enumerators: ReadonlyMap<number, readonly unknown[]>;
}

/** What an attempt restores: every subtask's state and the split enumerators' unassigned splits. */
interface Restored {
  readonly assignments: Map<string, SubtaskRestore>;
  readonly enumerators: ReadonlyMap<number, readonly unknown[]>;
}

export interface VertexResult {
  readonly name: string;
  readonly parallelism: number;
  readonly recordsIn: number;
  readonly recordsOut: number;
}

/** A job's status, as Flink's JobStatus (the subset Sluice goes through). */
export type JobStatus = 'INITIALIZING' | 'RUNNING' | 'RESTARTING' | 'FINISHED' | 'FAILED' | 'CANCELED' | 'SUSPENDED';

export interface JobResult {
  readonly jobId: string;
  readonly jobName: string;
  /** SUSPENDED: stopped with its JobManager; its checkpoints are kept to take it back from. */
  readonly status: 'FINISHED' | 'CANCELED' | 'SUSPENDED';
  readonly durationMs: number;
  /** Restarts after failures. */
  readonly numRestarts: number;
  readonly completedCheckpoints: number;
  readonly vertices: readonly VertexResult[];
  /** The newest retained checkpoint of a suspended job, to resume it from (`sluice run -s`). */
  readonly latestCheckpoint?: string;
}

/** Live counters of a running job. */
export interface JobProgress {
  /** Records emitted by sources so far (this attempt). */
  readonly sourceRecords: number;
  /** Records received by the last operators (those without outputs). */
  readonly sinkRecords: number;
  /** Lowest event-time watermark at the last operators; undefined before the first. */
  readonly watermarkMs: number | undefined;
  readonly runningTasks: number;
  readonly numRestarts: number;
  readonly completedCheckpoints: number;
}

export class JobExecutionError extends Error {
  override readonly name = 'JobExecutionError';
}

/**
 * Flink's StopWithSavepointStoppingException: the savepoint of a stop completed, but the job
 * then ended other than FINISHED. The savepoint holds the job's state and output up to the
 * stop; output not yet committed is committed by the job resumed from it.
 */
export class StopWithSavepointStoppingError extends Error {
  override readonly name = 'StopWithSavepointStoppingError';
  constructor(
    readonly savepointPath: string,
    jobId: string,
    readonly jobStatus: JobStatus,
    cause: Error | undefined,
  ) {
    super(
      `a savepoint was created at ${savepointPath}, but job ${jobId} then ended ${jobStatus} instead of finishing` +
        `${cause === undefined ? '' : ` (${cause.message})`}. The savepoint is consistent; output of the stop not committed yet ` +
        `is committed by the job resumed from it: sluice run -s ${savepointPath} <job.ts>`,
      cause === undefined ? undefined : { cause },
    );
  }
}

export interface JobExecutorOptions {
  readonly clock?: Clock;
  readonly jobId?: string;
  readonly random?: () => number;
  /** Where the runtime reports restarts, fallbacks and checkpoint failures (default: this process's log, docs/cli.md). */
  readonly log?: LogTarget;
  /** Start from a savepoint or a retained checkpoint (`sluice run -s <path>`). */
  readonly restoreFrom?: {
    readonly path: string;
    readonly allowNonRestoredState: boolean;
    /** CLAIM: the job owns the snapshot (deleted when subsumed); NO_CLAIM (default): never touched. */
    readonly claimMode?: 'CLAIM' | 'NO_CLAIM';
  };
  /**
   * The job's own completed checkpoints, when a restarted JobManager takes the job back (its
   * high-availability record): restored from the newest readable one and kept as retained
   * checkpoints, subsumed and deleted as any other; checkpoint ids go on after the newest.
   */
  readonly recoveredCheckpoints?: readonly CompletedCheckpointInfo[];
  /** High availability: the job's next checkpoint id as ZooKeeper knows it (ids go on at or after it). */
  readonly nextCheckpointIdAtLeast?: number;
  /** High availability: where completed checkpoints and used ids are recorded (see CompletedCheckpointStore). */
  readonly completedCheckpointStore?: CompletedCheckpointStore;
  /** Called with each attempt's tasks once they run (fault injection in tests). */
  readonly onAttemptStarted?: (attempt: RunningAttempt) => void;
  /** Where the subtasks run (default: all in this process). */
  readonly deployer?: Deployer;
}

/** One deployment of the job: its tasks and coordinator. */
export interface RunningAttempt {
  readonly attemptNumber: number;
  /** The tasks of the attempt that run in this process (none on a cluster). */
  readonly tasks: readonly StreamTask[];
  readonly coordinator: CheckpointCoordinator | undefined;
}

/**
 * Runs a job graph: deploys its subtasks (in this process, or on TaskManagers), runs a
 * checkpoint coordinator when checkpointing is on, and restarts from the latest completed
 * checkpoint after a failure, as the restart strategy allows.
 */
export class JobExecutor {
  readonly jobId: string;
  private readonly clock: Clock;
  private readonly random: () => number;
  /** This job's lines (JSON: with its id). */
  private readonly logger: Logger;
  /** An info line. */
  private readonly log: (message: string) => void;
  /** The tasks of the current attempt. */
  tasks: readonly TaskView[] = [];
  private attempt: DeployedAttempt | undefined;
  private readonly deployer: Deployer;
  /** Why the job is being ended from outside: canceled, or suspended with its JobManager. */
  private endRequest: 'CANCELED' | 'SUSPENDED' | undefined;
  private cancelAttempt: ((e: Error) => void) | undefined;
  private numRestarts = 0;
  readonly checkpointStats = new CheckpointStatsTracker();
  private coordinator: CheckpointCoordinator | undefined;
  private readonly checkpointing: CheckpointCoordinatorConfig | undefined;

  constructor(
    readonly jobGraph: JobGraph,
    readonly config: Configuration,
    private readonly options: JobExecutorOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.jobId = options.jobId ?? randomBytes(16).toString('hex');
    this.logger = toLogger(options.log, 'sluice').with({ jobId: this.jobId });
    this.log = (m) => this.logger.info(m);
    this.deployer = options.deployer ?? new InProcessDeployer(config, this.clock);
    this.checkpointing = config.getOptionalNumber('execution.checkpointing.interval') === undefined ? undefined : checkpointCoordinatorConfig(config);
    if (this.checkpointing?.unaligned === true) {
      if (this.checkpointing.mode !== 'EXACTLY_ONCE') {
        throw new ConfigError(
          `execution.checkpointing.unaligned.enabled needs execution.checkpointing.mode EXACTLY_ONCE (it is ${this.checkpointing.mode}): turn one of them off`,
        );
      }
      if (this.checkpointing.maxConcurrentCheckpoints > 1) {
        throw new ConfigError(
          `unaligned checkpoints need execution.checkpointing.max-concurrent-checkpoints 1 (it is ${this.checkpointing.maxConcurrentCheckpoints})`,
        );
      }
    }
  }

  /** Flink's job states that a local job goes through. */
  status: JobStatus = 'INITIALIZING';
  startTimeMs = Date.now();
  endTimeMs: number | undefined;
  /** Failures of the job, oldest first (REST /jobs/:id/exceptions). */
  readonly exceptions: { timestampMs: number; message: string; stack: string | undefined; taskName: string | undefined }[] = [];

  private running: Promise<JobResult> | undefined;

  /** Runs the job to its end; a second call returns the same result. */
  run(): Promise<JobResult> {
    this.running ??= this.runOnce();
    return this.running;
  }

  private async runOnce(): Promise<JobResult> {
    try {
      const result = await this.runAttempts();
      this.status = result.status;
      return result;
    } catch (e) {
      this.status = this.endRequest ?? 'FAILED';
      if (this.status === 'FAILED') this.recordFinalFailure(e);
      throw e;
    } finally {
      this.endTimeMs = Date.now();
      await this.deployer.close?.();
    }
  }

  /**
   * Why the job failed, as the last entry of its exception history (REST, `sluice run
   * --jobmanager`): a failure before any attempt ran (a savepoint that cannot be restored,
   * checkpoint storage that cannot be created) is recorded nowhere else.
   */
  private recordFinalFailure(e: unknown): void {
    const error = e instanceof Error ? e : new Error(String(e));
    if (this.exceptions.at(-1)?.message === error.message) return;
    this.exceptions.push({ timestampMs: Date.now(), message: error.message, stack: rootCause(error).stack ?? error.stack, taskName: failedTaskName(error) });
  }

  private async runAttempts(): Promise<JobResult> {
    const startedMs = Date.now();
    this.startTimeMs = startedMs;
    const storage = await this.createStorage();
    const strategy = createRestartStrategy(this.config, this.checkpointing !== undefined, this.random);
    const restartMessages = new RestartMessages();
    const initialSplits = await this.createSplits();
    let restore: Restored | undefined;
    let retained: CompletedCheckpointInfo[] = [];
    let nextCheckpointId = 1;
    const recovered = this.options.recoveredCheckpoints ?? [];
    if (recovered.length > 0 && storage !== undefined) {
      // Oldest first, as the coordinator keeps its store (the newest last, subsumed from the front).
      retained = [...recovered].sort((a, b) => a.checkpointId - b.checkpointId);
      nextCheckpointId = Math.max(...recovered.map((c) => c.checkpointId)) + 1;
      restore = await this.loadLatest(storage, retained);
    } else if (this.options.restoreFrom !== undefined) {
      const initial = await this.loadSnapshot(this.options.restoreFrom.path, this.options.restoreFrom.allowNonRestoredState);
      restore = initial.restored;
      nextCheckpointId = initial.checkpointId + 1;
      const claimMode = this.options.restoreFrom.claimMode ?? (this.config.getString('execution.state-recovery.claim-mode') as 'CLAIM' | 'NO_CLAIM' | undefined) ?? 'NO_CLAIM';
      if (claimMode === 'CLAIM' && storage !== undefined) {
        // Like a retained checkpoint of this job: subsumed (and deleted) by newer ones.
        retained = [{ checkpointId: initial.checkpointId, pointer: initial.dir, claimed: true }];
        this.log(`job ${this.jobId}: claimed ${initial.dir} (CLAIM mode): it is deleted once newer checkpoints subsume it`);
      }
    }
    nextCheckpointId = Math.max(nextCheckpointId, this.options.nextCheckpointIdAtLeast ?? 1);
    for (let attempt = 0; ; attempt++) {
      // Canceled or suspended before this attempt could be reached (while the job was starting).
      if (this.endRequest !== undefined) return this.endedByRequest(this.endRequest, storage, retained, startedMs);
      const result = await this.runAttempt(attempt, storage, initialSplits, restore, retained, nextCheckpointId);
      if (result.ok) {
        await this.cleanUpCheckpoints(storage, result.retained, 'FINISHED');
        return {
          jobId: this.jobId,
          jobName: this.jobGraph.jobName,
          // Every task finished: a cancel that came too late does not change that.
          status: 'FINISHED',
          durationMs: Date.now() - startedMs,
          numRestarts: this.numRestarts,
          completedCheckpoints: this.checkpointStats.counts.completed,
          vertices: this.vertexResults(),
        };
      }
      const cause = result.error;
      if (this.endRequest !== undefined) return this.endedByRequest(this.endRequest, storage, result.retained, startedMs);
      retained = result.retained;
      nextCheckpointId = result.nextCheckpointId;
      this.exceptions.push({ timestampMs: Date.now(), message: cause.message, stack: rootCause(cause).stack, taskName: failedTaskName(cause) });
      const notRestarted = this.whyNotRestart(result, strategy);
      if (notRestarted !== undefined) {
        // FAILED from here on: a client polling the job must not take the cleanup for a restart.
        this.status = 'FAILED';
        await this.cleanUpCheckpoints(storage, result.retained, 'FAILED');
        throw notRestarted;
      }
      this.status = 'RESTARTING';
      const delayMs = strategy.getBackoffTimeMs();
      const restartLine = restartMessages.line({ cause: cause.message, atMs: Date.now(), restart: this.numRestarts + 1, restartsMax: strategy.restartsMax, delayMs });
      // The error (JSON: its stack) once, with the line that says the cause in full.
      this.logger.warn(`job ${this.jobId}: ${restartLine.text}`, { ...taskNameFields(failedTaskName(cause)), ...(restartLine.repeated ? {} : { err: cause }) });
      // A cancel or suspend during the backoff ends the wait.
      await new Promise<void>((r) => {
        this.clock.schedule(delayMs, r);
        this.cancelAttempt = () => r();
      });
      if (this.endRequest !== undefined) return this.endedByRequest(this.endRequest, storage, retained, startedMs);
      restore = storage === undefined ? undefined : await this.loadLatest(storage, retained);
      this.numRestarts++;
    }
  }

  /**
   * The job's failure when the failed attempt must not be restarted, as Flink's
   * ExecutionFailureHandler decides: tasks that did not stop, a completed stop-with-savepoint,
   * a non-recoverable cause (not shown to the restart strategy), or the strategy gives up.
   */
  private whyNotRestart(
    result: { readonly error: Error; readonly stuck?: TaskCancellationTimeoutError | undefined; readonly stopSavepoint?: CompletedCheckpointInfo | undefined },
    strategy: RestartBackoffTimeStrategy,
  ): JobExecutionError | undefined {
    const cause = result.error;
    const job = `job '${this.jobGraph.jobName}'`;
    if (result.stuck !== undefined) return new JobExecutionError(`${job} failed: ${cause.message}; not restarted: ${result.stuck.message}`, { cause: result.stuck });
    if (result.stopSavepoint !== undefined) {
      // Stopped with a savepoint that committed its output: a restart would go back to an
      // older checkpoint and write that output again, beside the run resumed from the savepoint.
      const pointer = result.stopSavepoint.pointer;
      return new JobExecutionError(
        `${job} failed after its stop-with-savepoint completed: ${cause.message}; not restarted: ` +
          `its state and committed output are in the savepoint ${pointer}; resume from it (sluice run -s ${pointer} <job.ts>)`,
        { cause },
      );
    }
    // "job 'x' failed: job 'x' failed to start: ..." says the job's name twice.
    const failed = cause.message.startsWith(`${job} `) ? cause.message : `${job} failed: ${cause.message}`;
    if (findNonRecoverable(cause) !== undefined) return new JobExecutionError(`${failed} (not restarted: a restart cannot fix this failure)`, { cause });
    strategy.notifyFailure(cause, this.clock.nowMs());
    if (!strategy.canRestart()) return new JobExecutionError(`${failed} (${strategy.givingUpReason() ?? 'the restart strategy gives up'})`, { cause });
    return undefined;
  }

  /**
   * What happens to retained checkpoints when the job ends, as Flink's CheckpointProperties:
   * a finished job discards them; a canceled one keeps them with RETAIN_ON_CANCELLATION; a
   * failed one keeps them unless checkpoints are not externalized.
   */
  private async cleanUpCheckpoints(storage: CheckpointStorage | undefined, retained: readonly CompletedCheckpointInfo[], status: 'FINISHED' | 'CANCELED' | 'FAILED'): Promise<void> {
    // Full snapshots TaskManagers spilled and never handed over (one died first): no task is left to.
    if (storage instanceof FilesystemCheckpointStorage) await storage.discardTaskOwnedSpills().catch((e: unknown) => this.logger.warn(`removing spilled snapshots left in ${storage.taskOwnedDir} failed: ${(e as Error).message}`));
    if (storage === undefined || retained.length === 0) return;
    const retention = this.config.getString('execution.checkpointing.externalized-checkpoint-retention');
    const discard =
      status === 'FINISHED' ||
      (status === 'CANCELED' && retention !== 'RETAIN_ON_CANCELLATION') ||
      (status === 'FAILED' && retention === 'NO_EXTERNALIZED_CHECKPOINTS');
    if (!discard) {
      this.log(`job ${this.jobId} ${status.toLowerCase()}: keeping ${retained.length} checkpoint(s): ${retained.map((c) => c.pointer).join(', ')}`);
      return;
    }
    await discardAllRetained(storage, retained, this.logger);
  }

  /** The result of a job canceled or suspended from outside, its checkpoints kept or discarded. */
  private async endedByRequest(ended: 'CANCELED' | 'SUSPENDED', storage: CheckpointStorage | undefined, retained: readonly CompletedCheckpointInfo[], startedMs: number): Promise<JobResult> {
    // A suspended job keeps every checkpoint (Flink's SUSPENDED is not a terminal state).
    const latest = ended === 'SUSPENDED' ? this.keepForResume(retained, storage) : undefined;
    if (ended === 'CANCELED') await this.cleanUpCheckpoints(storage, retained, 'CANCELED');
    return {
      jobId: this.jobId,
      jobName: this.jobGraph.jobName,
      status: ended,
      durationMs: Date.now() - startedMs,
      numRestarts: this.numRestarts,
      completedCheckpoints: this.checkpointStats.counts.completed,
      vertices: this.vertexResults(),
      ...(latest === undefined ? {} : { latestCheckpoint: latest }),
    };
  }

  /** Logs what a suspended job keeps; the newest retained checkpoint's pointer. */
  private keepForResume(retained: readonly CompletedCheckpointInfo[], storage: CheckpointStorage | undefined): string | undefined {
    const newest = [...retained].sort((a, b) => b.checkpointId - a.checkpointId)[0];
    if (newest !== undefined && storage?.kind === 'jobmanager') {
      // Checkpoints in this process's memory end with it: nothing is kept to resume from.
      this.log(
        `job ${this.jobId} suspended: its ${retained.length} checkpoint(s) were in the JobManager's memory (execution.checkpointing.storage: jobmanager) and end with it, ` +
          `so a JobManager started again runs the job from the beginning, and a sink writes again what it wrote before; ` +
          `set execution.checkpointing.dir (for the job or the JobManager) to resume from the newest checkpoint`,
      );
      return undefined;
    }
    this.log(
      newest === undefined
        ? `job ${this.jobId} suspended before its first completed checkpoint`
        : `job ${this.jobId} suspended: keeping ${retained.length} checkpoint(s), the newest ${newest.pointer}`,
    );
    return newest?.pointer;
  }

  private async createStorage(): Promise<CheckpointStorage | undefined> {
    if (this.checkpointing === undefined) return undefined;
    const storage = this.config.getString('execution.checkpointing.storage') as 'jobmanager' | 'filesystem' | undefined;
    const dir = this.config.getString('execution.checkpointing.dir');
    return createCheckpointStorage({
      jobId: this.jobId,
      ...(storage === undefined ? {} : { storage }),
      ...(dir === undefined ? {} : { checkpointsDir: dir }),
      dataInlineThresholdBytes: this.config.getNumber('execution.checkpointing.data-inline-threshold'),
      config: this.config,
    });
  }

  /**
   * The splits of every source, created once at job start: by subtaskKey for sources that
   * assign them statically, by vertex id for the split enumerators of on-request sources.
   */
  private async createSplits(): Promise<InitialSplits> {
    const perSubtask = new Map<string, unknown[]>();
    const enumerators = new Map<number, unknown[]>();
    for (const v of this.jobGraph.vertices) {
      const source = v.nodes[0]!.source;
      if (source === undefined) continue;
      const splits = await source.createSplits(v.parallelism);
      for (let i = 0; i < v.parallelism; i++) perSubtask.set(subtaskKey(v.id, i), []);
      if (source.splitAssignment === 'on-request') {
        enumerators.set(v.id, splits);
        continue;
      }
      splits.forEach((s, i) => perSubtask.get(subtaskKey(v.id, source.assignSplit?.(s, i, v.parallelism) ?? i % v.parallelism))!.push(s));
    }
    return { perSubtask, enumerators };
  }

  /** A savepoint or retained checkpoint: a local directory, or s3:// (with the s3.* options). */
  private async openSnapshot(path: string): Promise<{ dir: string; metadata: CheckpointMetadata; readStateHandle: StateReader['readStateHandle'] }> {
    if (/^s3[ap]?:\/\//i.test(path)) {
      const { openSnapshotSource } = await import('./storage/s3-checkpoint-storage.js');
      const source = await openSnapshotSource(path, this.config);
      return { dir: source.pointer, metadata: source.metadata, readStateHandle: (h, ref) => source.readStateHandle(h, ref) };
    }
    const snapshot = await locateSnapshot(path);
    return { dir: snapshot.dir, metadata: await readSnapshotMetadata(snapshot), readStateHandle: readStateHandleInDirectory };
  }

  /** The snapshot at `path` and its state, assigned to this job's subtasks. */
  private async readSnapshotState(path: string, allowNonRestoredState: boolean) {
    const snapshot = await this.openSnapshot(path);
    const ref = { pointer: snapshot.dir, checkpointId: snapshot.metadata.checkpointId };
    const reader = { readStateHandle: snapshot.readStateHandle };
    const assignments = await restoreAssignments(snapshot.metadata, this.jobGraph, reader, ref, { allowNonRestoredState, log: this.log });
    const enumerators = await restoreSplitEnumerators(snapshot.metadata, this.jobGraph, reader, ref);
    return { snapshot, assignments, enumerators };
  }

  /** A savepoint or retained checkpoint given by path, redistributed to this job. */
  private async loadSnapshot(path: string, allowNonRestoredState: boolean): Promise<{ restored: Restored; checkpointId: number; dir: string }> {
    const { snapshot, assignments, enumerators } = await this.readSnapshotState(path, allowNonRestoredState).catch(async (e: unknown) => {
      // A damaged snapshot: name one to restore from instead.
      if (e instanceof CorruptCheckpointError) e.message += await otherSnapshotHint(snapshotDirOfPointer(path));
      throw e;
    });
    const metadata = snapshot.metadata;
    // Only operators whose state the snapshot holds: a stateless map without a uid loses nothing.
    const stateful = new Set(metadata.operators.filter(holdsState).map((o) => o.operatorUid));
    const withoutUid = this.jobGraph.vertices.flatMap((v) => v.nodes).filter((n) => !n.hasUserUid && stateful.has(n.operatorUid));
    if (withoutUid.length > 0) {
      this.logger.warn(
        `stateful operators without uid(): ${withoutUid.map((n) => `'${n.name}'`).join(', ')}; their state is matched by position in the graph, ` +
          'which breaks when the job changes: give every stateful operator a uid()',
      );
    }
    this.log(`job ${this.jobId}: restoring from ${metadata.type} ${metadata.checkpointId} of job ${metadata.jobId} (${snapshot.dir})`);
    this.checkpointStats.counts.restored++;
    this.checkpointStats.latestRestored = { id: metadata.checkpointId, restoreTimestampMs: this.clock.nowMs(), externalPath: snapshot.dir, isSavepoint: metadata.type === 'savepoint' };
    return { restored: { assignments, enumerators }, checkpointId: metadata.checkpointId, dir: snapshot.dir };
  }

  /** The newest readable retained checkpoint, redistributed to the job; older ones when it cannot be read. */
  private async loadLatest(storage: CheckpointStorage, retained: readonly CompletedCheckpointInfo[]): Promise<Restored | undefined> {
    const candidates = [...retained].sort((a, b) => b.checkpointId - a.checkpointId);
    const tried: { checkpointId: number; readable: boolean | Error }[] = [];
    for (const c of candidates) {
      try {
        const metadata = await storage.readMetadata(c.pointer);
        const assignments = await restoreAssignments(metadata, this.jobGraph, storage, c, { allowNonRestoredState: false });
        const enumerators = await restoreSplitEnumerators(metadata, this.jobGraph, storage, c);
        tried.push({ checkpointId: c.checkpointId, readable: true });
        for (const line of describeFallbacks(chooseCheckpointToRestore(tried))) this.logger.warn(line);
        this.log(`job ${this.jobId}: restoring from checkpoint ${c.checkpointId} (${c.pointer})`);
        this.checkpointStats.counts.restored++;
        this.checkpointStats.latestRestored = { id: c.checkpointId, restoreTimestampMs: this.clock.nowMs(), externalPath: c.pointer, isSavepoint: false };
        return { assignments, enumerators };
      } catch (e) {
        tried.push({ checkpointId: c.checkpointId, readable: e as Error });
      }
    }
    if (tried.length === 0 && this.options.restoreFrom !== undefined) {
      // No checkpoint of its own yet: the job restarts from the snapshot it was started from.
      const again = await this.loadSnapshot(this.options.restoreFrom.path, this.options.restoreFrom.allowNonRestoredState);
      return again.restored;
    }
    if (tried.length > 0) {
      for (const line of describeFallbacks(chooseCheckpointToRestore(tried))) this.logger.warn(line);
      // Starting from scratch would replay everything into sinks that already committed it.
      throw new JobExecutionError(
        `job '${this.jobGraph.jobName}': none of the ${tried.length} retained checkpoint(s) can be read; ` +
          'restore it by hand from a savepoint or a readable checkpoint (sluice run -s <path>), or start it anew',
      );
    }
    this.log(`job ${this.jobId}: no completed checkpoint to restore; starting from the beginning`);
    return undefined;
  }

  private async runAttempt(
    attempt: number,
    storage: CheckpointStorage | undefined,
    splits: InitialSplits,
    restored: Restored | undefined,
    retained: CompletedCheckpointInfo[],
    nextCheckpointId: number,
  ): Promise<
    | { ok: true; retained: CompletedCheckpointInfo[] }
    | { ok: false; error: Error; retained: CompletedCheckpointInfo[]; nextCheckpointId: number; stuck?: TaskCancellationTimeoutError; stopSavepoint?: CompletedCheckpointInfo }
  > {
    const finalCheckpoint = this.config.getBoolean('execution.checkpointing.checkpoints-after-tasks-finish');
    const restore = restored?.assignments;
    // The enumerators start from the checkpoint restored, else from the source's own splits.
    const enumerators = new Map(
      [...splits.enumerators].map(([vertexId, initial]) => [vertexId, new SplitEnumerator(restored?.enumerators.get(vertexId) ?? initial)] as const),
    );
    // Watermark alignment starts anew with every attempt (the restarted sources report again).
    const alignment = new WatermarkAlignmentCoordinator();
    let failAttempt!: (e: Error) => void;
    const attemptFailed = new Promise<never>((_, reject) => (failAttempt = reject));
    attemptFailed.catch(() => {});
    this.cancelAttempt = failAttempt;
    let deployed: DeployedAttempt | undefined;
    let coordinator: CheckpointCoordinator | undefined;
    if (this.checkpointing !== undefined && storage !== undefined) {
      coordinator = new CheckpointCoordinator({
        jobId: this.jobId,
        graph: this.jobGraph,
        config: this.checkpointing,
        storage,
        savepointOptions: { config: this.config },
        clock: this.clock,
        random: this.random,
        retained,
        nextCheckpointId,
        finalCheckpoint,
        incremental: this.config.getBoolean('execution.checkpointing.incremental'),
        stats: this.checkpointStats,
        ...(this.options.completedCheckpointStore === undefined ? {} : { completedCheckpointStore: this.options.completedCheckpointStore }),
        gateway: {
          triggerSources: (barrier: CheckpointBarrier) => deployed?.triggerSources(barrier),
          snapshotSplitEnumerators: () => new Map([...enumerators].map(([vertexId, e]) => [this.sourceUidOf(vertexId), encodeSplitEnumeratorState(e.snapshot())])),
          notifyComplete: (id, final) => deployed?.notifyComplete(id, final),
          notifyAborted: (id, reason) => deployed?.notifyAborted(id, reason),
          failJob: (reason) => failAttempt(new Error(reason)),
          log: this.logger,
        },
      });
    }
    const checkpointing: TaskCheckpointing | undefined =
      coordinator === undefined
        ? undefined
        : {
            mode: this.checkpointing!.mode === 'AT_LEAST_ONCE' ? 'at-least-once' : 'exactly-once',
            responder: coordinator,
            finalCheckpoint,
            timeoutMs: this.checkpointing!.timeoutMs,
            restartDelayMsMax: maxRestartDelayMs(this.config, true),
            incremental: this.config.getBoolean('execution.checkpointing.incremental'),
            ...(storage instanceof FilesystemCheckpointStorage ? { taskOwnedDir: storage.taskOwnedDir } : {}),
            ...(this.config.getBoolean('state.backend.changelog.enabled')
              ? {
                  changelog: {
                    persistDelayMs: Math.max(1, this.config.getNumber('state.changelog.dstl.dfs.batch.persist-delay')),
                    materializeIntervalMs: Math.max(1, this.config.getNumber('state.backend.changelog.periodic-materialize.interval')),
                  },
                }
              : {}),
          };
    this.coordinator = coordinator;

    const shutdown = async (): Promise<{ retained: CompletedCheckpointInfo[]; nextCheckpointId: number; stuck?: TaskCancellationTimeoutError; stopSavepoint?: CompletedCheckpointInfo }> => {
      let stuck: TaskCancellationTimeoutError | undefined;
      try {
        await deployed?.cancel();
      } catch (e) {
        if (!(e instanceof TaskCancellationTimeoutError)) throw e;
        stuck = e; // the job must not start again alongside them
      }
      const more = stuck === undefined ? {} : { stuck };
      if (coordinator === undefined) return { retained, nextCheckpointId, ...more };
      await coordinator.stop();
      const stopped = coordinator.stopSavepoint === undefined ? {} : { stopSavepoint: coordinator.stopSavepoint };
      return { retained: coordinator.retainedCheckpoints(), nextCheckpointId: coordinator.nextCheckpointId, ...more, ...stopped };
    };

    try {
      try {
        deployed = await Promise.race([
          this.deployer.deploy({
            attemptNumber: attempt,
            graph: this.jobGraph,
            restore,
            splits: splits.perSubtask,
            requestSplit: (vertexId, subtaskIndex) => {
              const answer = enumerators.get(vertexId)?.handleSplitRequest();
              if (answer === undefined) failAttempt(new Error(`subtask ${subtaskIndex} of vertex ${vertexId} asked for a split, but its source assigns splits statically here`));
              else deployed?.assignSplit(vertexId, subtaskIndex, answer);
            },
            reportWatermark: (vertexId, subtaskIndex, report) => {
              deployed?.announceMaxWatermark(vertexId, subtaskIndex, alignment.report(subtaskKey(vertexId, subtaskIndex), report));
            },
            checkpointing,
            fail: failAttempt,
          }),
          attemptFailed,
        ]);
        this.attempt = deployed;
        this.tasks = deployed.tasks;
        await Promise.race([deployed.initialize(), attemptFailed]);
      } catch (e) {
        throw new Error(`job '${this.jobGraph.jobName}' failed to start: ${describeThrown(e)}`, { cause: e });
      }
      deployed.start();
      this.status = 'RUNNING';
      coordinator?.start();
      this.options.onAttemptStarted?.({ attemptNumber: attempt, tasks: deployed.tasks.filter(isStreamTask), coordinator });
      await Promise.race([deployed.done, attemptFailed]);
      await coordinator?.stop();
      return { ok: true, retained: coordinator?.retainedCheckpoints() ?? [] };
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      return { ok: false, error, ...(await shutdown()) };
    }
  }

  private sourceUidOf(vertexId: number): string {
    return this.jobGraph.vertices.find((v) => v.id === vertexId)!.nodes[0]!.operatorUid;
  }

  private vertexResults(): VertexResult[] {
    return this.jobGraph.vertices.map((v) => {
      const ts = this.tasks.filter((t) => t.vertex === v);
      return {
        name: v.name,
        parallelism: v.parallelism,
        recordsIn: ts.reduce((a, t) => a + t.recordsIn, 0),
        recordsOut: ts.reduce((a, t) => a + t.recordsOut(), 0),
      };
    });
  }

  /** A manual checkpoint of the running job (`sluice checkpoint`). */
  triggerCheckpoint(full = false): Promise<CompletedCheckpointInfo> {
    if (this.checkpointing === undefined) return Promise.reject(new Error('checkpointing is not enabled for this job (set execution.checkpointing.interval)'));
    if (this.coordinator === undefined || this.status !== 'RUNNING') {
      return Promise.reject(new Error(`job ${this.jobId} is ${this.status.toLowerCase()}, not running: no checkpoint now`));
    }
    return this.coordinator.triggerCheckpoint(full ? 'FULL' : 'CONFIGURED');
  }

  /**
   * A savepoint of the running job into `targetDirectory` (default:
   * execution.checkpointing.savepoint-dir); resolves with its directory.
   */
  triggerSavepoint(targetDirectory?: string, formatType: 'CANONICAL' | 'NATIVE' = 'CANONICAL'): Promise<CompletedCheckpointInfo> {
    const dir = targetDirectory ?? this.config.getString('execution.checkpointing.savepoint-dir');
    if (dir === undefined) {
      return Promise.reject(new Error('no savepoint directory: give one (sluice savepoint <jobId> <dir>) or set execution.checkpointing.savepoint-dir'));
    }
    if (this.checkpointing === undefined) {
      return Promise.reject(new Error('savepoints need checkpointing enabled for this job (set execution.checkpointing.interval)'));
    }
    if (this.coordinator === undefined || this.status !== 'RUNNING') {
      return Promise.reject(new Error(`job ${this.jobId} is ${this.status.toLowerCase()}, not running: no savepoint now`));
    }
    return this.coordinator.triggerSavepoint(dir, formatType);
  }

  /**
   * Stop-with-savepoint (`sluice stop`): sources stop, a synchronous savepoint is taken into
   * `targetDirectory` (default execution.checkpointing.savepoint-dir) and committed, then the
   * job finishes. With `drain`, event time is closed and operators finish before the savepoint.
   *
   * Resolves, as Flink's stop does, once the job has ended FINISHED, not when the savepoint
   * completes: a job that ends otherwise after its savepoint (a sink whose close fails, a
   * cancel meanwhile) rejects with a StopWithSavepointStoppingError naming the savepoint,
   * which is still the one to resume from.
   */
  async stopWithSavepoint(targetDirectory?: string, drain = false, formatType: 'CANONICAL' | 'NATIVE' = 'CANONICAL'): Promise<CompletedCheckpointInfo> {
    const savepoint = await this.stopWithSavepointOnly(targetDirectory, drain, formatType);
    const running = this.running;
    assert(running !== undefined, 'a job stopped with a savepoint was running');
    const ended = await running.then(
      (r) => ({ status: r.status as JobStatus, cause: undefined as Error | undefined }),
      (e: unknown) => ({ status: this.status, cause: e as Error }),
    );
    if (ended.status !== 'FINISHED') throw new StopWithSavepointStoppingError(savepoint.pointer, this.jobId, ended.status, ended.cause);
    return savepoint;
  }

  private stopWithSavepointOnly(targetDirectory: string | undefined, drain: boolean, formatType: 'CANONICAL' | 'NATIVE'): Promise<CompletedCheckpointInfo> {
    const dir = targetDirectory ?? this.config.getString('execution.checkpointing.savepoint-dir');
    if (dir === undefined) {
      return Promise.reject(new Error('no savepoint directory: give one (sluice stop --savepoint-path <dir> <jobId>) or set execution.checkpointing.savepoint-dir'));
    }
    if (this.checkpointing === undefined) {
      return Promise.reject(new Error('stop-with-savepoint needs checkpointing enabled for this job (set execution.checkpointing.interval)'));
    }
    const coordinator = this.coordinator;
    if (coordinator === undefined || this.status !== 'RUNNING') {
      return Promise.reject(new Error(`job ${this.jobId} is ${this.status.toLowerCase()}, not running: cannot stop it with a savepoint now`));
    }
    const attempt = this.attempt;
    return coordinator.stopWithSavepoint(dir, formatType, () => attempt?.stopSources(drain));
  }

  progress(): JobProgress {
    let sourceRecords = 0;
    let sinkRecords = 0;
    let watermark = Number.POSITIVE_INFINITY;
    let running = 0;
    for (const t of this.tasks) {
      if (t.state === 'running') running++;
      if (t.vertex.inputs.length === 0) sourceRecords += t.recordsIn;
      if (t.vertex.outputs.length === 0 && t.vertex.inputs.length > 0) {
        sinkRecords += t.recordsIn;
        watermark = Math.min(watermark, t.inputWatermarkMs());
      }
    }
    const valid = Number.isFinite(watermark) && watermark > Number.MIN_SAFE_INTEGER;
    return {
      sourceRecords,
      sinkRecords,
      watermarkMs: valid ? watermark : undefined,
      runningTasks: running,
      numRestarts: this.numRestarts,
      completedCheckpoints: this.checkpointStats.counts.completed,
    };
  }

  /** The TaskManager slots the attempt being deployed waits for (on a cluster); undefined when it waits for none. */
  pendingSlotRequest(): SlotRequest | undefined {
    return this.deployer.pendingSlotRequest?.();
  }

  cancel(): void {
    this.endRequest = 'CANCELED';
    this.cancelAttempt?.(new Error('canceled'));
  }

  /**
   * Stops the job without ending it, as Flink suspends the jobs of a JobManager that shuts
   * down: its tasks are canceled but its checkpoints are kept whatever the retention, so a
   * JobManager started again (or `sluice run -s`) resumes it from the newest one.
   */
  suspend(): void {
    this.endRequest ??= 'SUSPENDED';
    this.cancelAttempt?.(new Error('suspended'));
  }
}

function rootCause(e: Error): Error {
  let c: Error = e;
  while (c.cause instanceof Error) c = c.cause;
  return c;
}

function isStreamTask(t: TaskView): t is StreamTask {
  return 'chain' in t;
}

/** Whether a snapshot holds state of an operator (keyed, operator or split state). */
function holdsState(o: OperatorSnapshot): boolean {
  return o.coordinatorState !== undefined || o.subtasks.some((t) => t.keyedState.length > 0 || t.operatorState !== undefined || t.sourceSplits !== undefined);
}
