import { randomBytes } from 'node:crypto';
import { describeThrown } from '../../util/thrown.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { locateSnapshot, otherCompletedCheckpoints, readSnapshotMetadata, sharedDirOfSnapshot, snapshotDirOfPointer } from '../storage/snapshot-directory-reader.js';
import type { JobGraph } from '../../graph/job-graph.js';
import type { CheckpointBarrier } from '../channel/stream-element.js';
import type { CheckpointStorage, CheckpointStorageLocation, StateFileSource } from '../storage/checkpoint-storage.js';
import { createSavepointLocation, type SavepointLocation, type SavepointLocationOptions } from '../storage/savepoint-directory.js';
import type { CheckpointMetadata, KeyedStateHandle, SubtaskSnapshot } from '../storage/snapshot-format.js';
import type { KeyedStateSnapshot } from '../state/keyed-state-snapshot.js';
import { stateHandleSizeBytes, stateSizeBytes, subtaskStateHandles, unkeyedStateHandles } from '../storage/snapshot-format.js';
import { SharedStateRegistry, sharedPaths, sharedPathsOf } from './shared-state-registry.js';
import type { Clock } from '../task/clock.js';
import { checkpointTypeName, CheckpointStatsTracker } from './checkpoint-stats.js';
import {
  afterStorageFailure,
  decideTrigger,
  dispatchDecision,
  enqueueRequest,
  EXCEEDED_TOLERABLE_FAILURES_MESSAGE,
  failureReasonInfo,
  initialCoordinatorState,
  onAcknowledge,
  onCoordinatorFailure,
  onDecline,
  onTaskFailure,
  onTimeout,
  setTasksRunning,
  startPeriodicScheduling,
  stopPeriodicScheduling,
  type CheckpointCoordinatorConfig,
  type CheckpointFailureReason,
  type CoordinatorState,
  type Decision,
  type ManualCheckpointType,
  type Outcome,
  type RetainedCheckpoint,
  type TriggerRequest,
} from './coordinator-decisions.js';
import { checkpointMetadata, subtaskKey, writeKeyedState, writeSubtaskState } from './state-persistence.js';
import { discardOperatorStates, type CheckpointResponder, type SubtaskCheckpointMetrics, type SubtaskState } from './subtask-state.js';
import type { Logger } from '../../util/logger.js';

function changelogKey(operatorUid: string, vertexId: number, subtaskIndex: number): string {
  return `${operatorUid}@${subtaskKey(vertexId, subtaskIndex)}`;
}

/** Metadata of this many newest completed checkpoints is kept besides the retained ones. */
const RECENT_METADATA_KEPT = 8;

/** What the coordinator does to the running job. */
export interface CoordinatorGateway {
  /** Inject the barrier at every source subtask (through their mailboxes). */
  triggerSources(barrier: CheckpointBarrier): void;
  /**
   * The split enumerators' state (msgpack bytes by source operator uid), taken in the same
   * synchronous step as `triggerSources` (see split-enumerator.ts). Absent: no enumerators.
   */
  snapshotSplitEnumerators?(): ReadonlyMap<string, Uint8Array>;
  /** `final`: the checkpoint was taken after every source emitted its last record. */
  notifyComplete(checkpointId: number, final: boolean): void;
  notifyAborted(checkpointId: number, reason: string): void;
  /** Too many failed checkpoints: the job fails over. */
  failJob(reason: string): void;
  /** The job's logger: failed, declined and discarded checkpoints (warn), completed ones (debug). */
  readonly log: Logger;
}

/**
 * Where a highly available JobManager records its job's checkpoints (in ZooKeeper): `add`
 * runs when a checkpoint's _metadata is written and before its completion is notified (a
 * rejection fails the checkpoint); `triggered` hears every id used, so that a new leader's ids
 * go on after it.
 */
export interface CompletedCheckpointStore {
  add(info: CompletedCheckpointInfo): Promise<void>;
  triggered(checkpointId: number): void;
}

export interface CompletedCheckpointInfo {
  readonly checkpointId: number;
  readonly pointer: string;
  /** A snapshot the job was restored from in CLAIM mode: the job owns it, and deletes it when subsumed. */
  readonly claimed?: boolean;
}

/** Deletes a retained checkpoint: one of the job's own by id, a claimed snapshot by its directory. */
export async function discardRetained(storage: CheckpointStorage, c: CompletedCheckpointInfo, log: Logger): Promise<void> {
  if (c.claimed !== true) return storage.discardCheckpoint(c.checkpointId);
  if (/^[a-z0-9]+:\/\//i.test(c.pointer)) {
    log.warn(`the claimed snapshot ${c.pointer} is subsumed; remove it by hand (only local claimed snapshots are deleted)`);
    return;
  }
  const dir = snapshotDirOfPointer(c.pointer);
  // A claimed retained checkpoint's shared files are the job's too (as Flink's CLAIM): those no
  // other checkpoint left in its old job's directory references go with it.
  const sharedDir = sharedDirOfSnapshot(dir);
  let free: string[] = [];
  if (sharedDir !== undefined) {
    try {
      free = await sharedFilesOnlyIn(dir);
    } catch (e) {
      log.warn(`the claimed snapshot ${c.pointer}: its shared files are kept (${(e as Error).message})`);
    }
  }
  await rm(dir, { recursive: true, force: true });
  for (const name of free) await rm(join(sharedDir!, name), { force: true });
  log.info(`deleted the claimed snapshot ${c.pointer} (subsumed by newer checkpoints)${free.length > 0 ? ` and ${free.length} shared file(s) no other checkpoint of its job references` : ''}`);
}

/** The shared files the checkpoint in `dir` references that no other completed checkpoint beside it does; throws when one cannot be read (it might reference any). */
async function sharedFilesOnlyIn(dir: string): Promise<string[]> {
  const sharedOf = async (d: string) => sharedPathsOf(await readSnapshotMetadata(await locateSnapshot(d)));
  const mine = new Set(await sharedOf(dir));
  for (const other of await otherCompletedCheckpoints(dir)) for (const p of await sharedOf(other)) mine.delete(p);
  return [...mine];
}


/**
 * Deletes every retained checkpoint of a job that ended, with the shared files they
 * reference (nothing else references them once all are gone).
 */
export async function discardAllRetained(storage: CheckpointStorage, retained: readonly CompletedCheckpointInfo[], log: Logger): Promise<void> {
  const shared = new Set<string>();
  for (const c of retained) {
    try {
      if (c.claimed !== true && storage.kind !== 'jobmanager') for (const p of sharedPathsOf(await storage.readMetadata(c.pointer))) shared.add(p);
      await discardRetained(storage, c, log);
    } catch (e) {
      log.warn(`discarding checkpoint ${c.checkpointId} failed: ${(e as Error).message}`, { checkpointId: c.checkpointId });
    }
  }
  try {
    await storage.discardSharedFiles([...shared]);
  } catch (e) {
    log.warn(`deleting the shared state files of the discarded checkpoints failed: ${(e as Error).message}`);
  }
}

interface InFlight {
  readonly location: Promise<CheckpointStorageLocation>;
  /** Set for savepoints: they go to their own directory, not to checkpoint storage. */
  readonly savepoint: Promise<SavepointLocation> | undefined;
  readonly savepointFormat: 'canonical' | 'native';
  readonly timestampMs: number;
  readonly snapshots: Map<string, Map<string, SubtaskSnapshot>>;
  readonly unaligned: boolean;
  /** Shared files the acknowledged state references (registered: released when the checkpoint aborts). */
  readonly sharedPaths: string[];
  /** Split enumerator state by source operator uid, taken with the trigger. */
  readonly enumerators: ReadonlyMap<string, Uint8Array>;
  cancelTimeout: () => void;
}

/**
 * The checkpoint coordinator's I/O edge: timers, barriers, storage writes and notifications
 * around the pure decisions of coordinator-decisions.ts. Events are handled one at a time
 * in arrival order, so a completion's `_metadata` write finishes before the next event.
 */
export class CheckpointCoordinator implements CheckpointResponder {
  /** Acknowledged state is written here, in the process that runs the tasks. */
  readonly acceptsHeldKeyedState = true;
  private state: CoordinatorState;
  private readonly inFlight = new Map<number, InFlight>();
  private readonly requests = new Map<string, { resolve: (c: CompletedCheckpointInfo) => void; reject: (e: Error) => void }>();
  private readonly completed = new Map<number, CompletedCheckpointInfo>();
  /** Reference counts of the job's shared files (incremental checkpoints). */
  private readonly shared = new SharedStateRegistry();
  /** Per operator subtask: its state changelog (state.backend.changelog.enabled), in position order. */
  private readonly changelogs = new Map<string, { entries: { position: number; handle: KeyedStateHandle; full: boolean }[]; writes: Promise<void>; failed: Error | undefined }>();
  /** `_metadata` of retained and recent checkpoints: the chains later deltas build on, and what a discard releases. */
  private readonly completedMetadata = new Map<number, CheckpointMetadata>();
  private events: Promise<void> = Promise.resolve();
  /** Deletions in storage still running (aborted and subsumed checkpoints); `stop` waits for them. */
  private readonly cleanups = new Set<Promise<void>>();
  private cancelSchedule: (() => void) | undefined;
  private readonly finishedSources = new Set<string>();
  /** Set when every source has finished its data: checkpoints from this id on are final. */
  private finalFromId: number | undefined;
  /** The final checkpoint completed: the job ends, no checkpoint is triggered any more. */
  private finalCompleted = false;
  private stopRequest:
    | { requestId: string; targetDirectory: string; formatType: 'CANONICAL' | 'NATIVE'; resolve: (c: CompletedCheckpointInfo) => void; reject: (e: Error) => void }
    | undefined;
  private readonly sourceSubtasks: Set<string>;
  private stopped = false;
  /**
   * The synchronous savepoint of a stop-with-savepoint completed: the job only ends now. No
   * checkpoint is triggered any more (as Flink stops the checkpoint scheduler for a stop), and
   * one still in flight that fails does not count: a checkpoint failure must not restart a job
   * whose savepoint was handed out (it would restart from an older checkpoint and write again
   * what the savepoint's run already committed).
   */
  private stopSavepointDone = false;
  /** Why the latest failed checkpoint failed, as a subtask said (for the job's failure when too many failed in a row). */
  private latestFailure: { checkpointId: number; message: string } | undefined;
  /** The completed savepoint of a stop-with-savepoint (the job only ends after it). */
  stopSavepoint: CompletedCheckpointInfo | undefined;
  readonly stats: CheckpointStatsTracker;

  constructor(
    private readonly o: {
      readonly jobId: string;
      readonly graph: JobGraph;
      readonly config: CheckpointCoordinatorConfig;
      readonly storage: CheckpointStorage;
      /** How savepoint directories are created (the s3.* options for s3:// targets). */
      readonly savepointOptions?: SavepointLocationOptions;
      readonly clock: Clock;
      readonly random: () => number;
      readonly gateway: CoordinatorGateway;
      /** Completed checkpoints kept from before a restart (failover keeps the store). */
      readonly retained?: readonly CompletedCheckpointInfo[];
      readonly nextCheckpointId?: number;
      /** Whether the job waits for a checkpoint after its sources end. */
      readonly finalCheckpoint: boolean;
      /** execution.checkpointing.incremental: keyed state goes to shared files that later checkpoints build on. */
      readonly incremental?: boolean;
      /** Shared across restarts of the job. */
      readonly stats?: CheckpointStatsTracker;
      /** High availability (ZooKeeper): where completed checkpoints and used ids are recorded. */
      readonly completedCheckpointStore?: CompletedCheckpointStore;
    },
  ) {
    this.stats = o.stats ?? new CheckpointStatsTracker();
    const subtasks: string[] = [];
    const sources = new Set<string>();
    for (const v of o.graph.vertices) {
      for (let i = 0; i < v.parallelism; i++) {
        subtasks.push(subtaskKey(v.id, i));
        if (v.inputs.length === 0) sources.add(subtaskKey(v.id, i));
      }
    }
    this.sourceSubtasks = sources;
    for (const c of o.retained ?? []) this.completed.set(c.checkpointId, c);
    // The shared files retained checkpoints reference stay until those are discarded.
    const own = (o.retained ?? []).filter((c) => c.claimed !== true);
    if (own.length > 0 && o.storage.kind !== 'jobmanager') {
      this.enqueue(async () => {
        for (const c of own) {
          try {
            const metadata = await o.storage.readMetadata(c.pointer);
            this.completedMetadata.set(c.checkpointId, metadata);
            this.shared.register(sharedPathsOf(metadata));
          } catch (e) {
            o.gateway.log.warn(`retained checkpoint ${c.checkpointId}: cannot read its _metadata (${(e as Error).message}); its shared files are kept`);
          }
        }
      });
    }
    const restored: RetainedCheckpoint[] = (o.retained ?? []).map((c) => ({ checkpointId: c.checkpointId, isSavepoint: false }));
    this.state = initialCoordinatorState({
      subtasks,
      allTasksRunning: false,
      restored,
      ...(o.nextCheckpointId === undefined ? {} : { nextCheckpointId: o.nextCheckpointId }),
    });
  }

  get nextCheckpointId(): number {
    return this.state.nextCheckpointId;
  }

  /** Completed checkpoints in the store, oldest first. */
  retainedCheckpoints(): CompletedCheckpointInfo[] {
    return this.state.retained.map((r) => this.completed.get(r.checkpointId)).filter((c): c is CompletedCheckpointInfo => c !== undefined);
  }

  /** All tasks are running: periodic checkpoints may start. */
  start(): void {
    this.enqueue(() => {
      this.state = setTasksRunning(this.state, true);
      if (this.o.config.intervalMs !== undefined) this.apply(startPeriodicScheduling(this.state, this.o.config, this.o.clock.nowMs(), this.o.random));
      this.decide();
    });
  }

  /** Stops triggering; pending checkpoints are aborted, queued requests declined. */
  stop(): Promise<void> {
    this.enqueue(() => {
      if (this.stopped) return;
      this.stopped = true;
      // A stop-with-savepoint still waiting for its sources to stop: no savepoint is taken in
      // this attempt (the next one runs on), so it is answered now, not left pending forever.
      const stop = this.stopRequest;
      if (stop !== undefined && this.finalFromId === undefined) {
        stop.reject(new Error('the job failed over before its sources stopped, so no savepoint was taken and the job runs on; try again once it runs (sluice stop)'));
      }
      for (const [id, r] of this.requests) {
        if (this.state.queued.some((q) => q.requestId === id)) {
          r.reject(new Error('the job stopped before the checkpoint was taken'));
          this.requests.delete(id);
        }
      }
      this.cancelSchedule?.();
      if (this.o.config.intervalMs !== undefined || this.state.queued.length > 0) this.apply(stopPeriodicScheduling(this.state, this.o.config));
      const failure = onTaskFailure(this.state, this.o.config);
      this.state = failure.state;
      for (const d of failure.decisions) if (d.kind === 'abort') this.handleAbort(d.checkpointId, d.requestId, 'the job is stopping');
      // The changelogs end with this attempt: their files stay only where retained checkpoints reference them.
      for (const log of this.changelogs.values()) {
        const release = log.writes.then(() => {
          const free = this.shared.unregister(sharedPaths(log.entries.map((e) => e.handle.data)));
          log.entries = [];
          return this.o.storage.discardSharedFiles(free);
        });
        this.cleanup(release.catch((e: unknown) => this.o.gateway.log.warn(`deleting state changelog files failed: ${(e as Error).message}`)));
      }
    });
    // When the job's result is out, what is in the checkpoint directory is final.
    return this.events.then(() => Promise.all(this.cleanups)).then(() => {});
  }

  appendChangelog(vertexId: number, subtaskIndex: number, operatorUid: string, position: number, snapshot: KeyedStateSnapshot): void {
    if (this.stopped) return;
    const key = changelogKey(operatorUid, vertexId, subtaskIndex);
    let log = this.changelogs.get(key);
    if (log === undefined) this.changelogs.set(key, (log = { entries: [], writes: Promise.resolve(), failed: undefined }));
    const l = log;
    l.writes = l.writes.then(async () => {
      if (l.failed !== undefined || this.stopped) return;
      try {
        const handle = await writeKeyedState(snapshot, { checkpointId: 0, writeStateFile: (bytes) => this.o.storage.writeSharedStateFile(bytes) });
        this.shared.register(sharedPaths([handle.data]));
        l.entries.push({ position, handle, full: handle.baseCheckpointId === undefined });
        // Two materializations are kept: an acknowledgement may still name a position before the newest.
        const fulls = l.entries.flatMap((e, i) => (e.full ? [i] : []));
        if (fulls.length > 2) {
          const dropped = l.entries.splice(0, fulls.at(-2)!);
          const free = this.shared.unregister(sharedPaths(dropped.map((e) => e.handle.data)));
          this.cleanup(this.o.storage.discardSharedFiles(free).catch((e: unknown) => this.o.gateway.log.warn(`deleting state changelog files failed: ${(e as Error).message}`)));
        }
      } catch (e) {
        l.failed = e as Error;
        this.o.gateway.failJob(`the state changelog of operator ${operatorUid}, subtask ${subtaskKey(vertexId, subtaskIndex)} could not be written: ${(e as Error).message}`);
      }
    });
  }

  /** The keyed handles of an operator subtask's changelog up to `position`: its last materialization and the segments after it. */
  private async changelogChain(operatorUid: string, vertexId: number, subtaskIndex: number, position: number): Promise<KeyedStateHandle[]> {
    const log = this.changelogs.get(changelogKey(operatorUid, vertexId, subtaskIndex));
    if (log === undefined) throw new Error(`no state changelog of operator ${operatorUid}, subtask ${subtaskKey(vertexId, subtaskIndex)} was received`);
    await log.writes;
    if (log.failed !== undefined) throw log.failed;
    const upTo = log.entries.filter((e) => e.position <= position);
    const start = upTo.findLastIndex((e) => e.full);
    if (start < 0 || upTo.at(-1)!.position > position) {
      throw new Error(`the state changelog of operator ${operatorUid} up to position ${position} is no longer complete (materialized twice since)`);
    }
    return upTo.slice(start).map((e) => e.handle);
  }

  private cleanup(p: Promise<void>): void {
    this.cleanups.add(p);
    void p.finally(() => this.cleanups.delete(p));
  }

  /** A task failed: pending checkpoints abort (not counted). */
  taskFailed(): Promise<void> {
    this.enqueue(() => this.apply(onTaskFailure(this.state, this.o.config)));
    return this.events;
  }

  /** A manual checkpoint (`sluice checkpoint`, REST): resolves when it completed. */
  triggerCheckpoint(checkpointType: ManualCheckpointType = 'CONFIGURED'): Promise<CompletedCheckpointInfo> {
    return this.request((requestId, requestedAtMs) => ({ kind: 'checkpoint', requestId, requestedAtMs, checkpointType }));
  }

  /** A savepoint into `targetDirectory` (`sluice savepoint`, REST): resolves with its path when complete. */
  triggerSavepoint(targetDirectory: string, formatType: 'CANONICAL' | 'NATIVE' = 'CANONICAL'): Promise<CompletedCheckpointInfo> {
    return this.request((requestId, requestedAtMs) => ({ kind: 'savepoint', requestId, requestedAtMs, formatType, targetDirectory, synchronous: false }));
  }

  /** Queues a user request; the promise settles when its checkpoint or savepoint completed or failed. */
  private request(make: (requestId: string, requestedAtMs: number) => TriggerRequest): Promise<CompletedCheckpointInfo> {
    const requestId = randomBytes(8).toString('hex');
    const done = new Promise<CompletedCheckpointInfo>((resolve, reject) => this.requests.set(requestId, { resolve, reject }));
    this.enqueue(() => {
      if (this.stopped) {
        this.requests.get(requestId)?.reject(new Error('the job is not running (restarting or finished); try again when it runs'));
        this.requests.delete(requestId);
        return;
      }
      this.apply(enqueueRequest(this.state, this.o.config, make(requestId, this.o.clock.nowMs())));
      this.decide();
    });
    return done;
  }

  acknowledge(vertexId: number, subtaskIndex: number, checkpointId: number, state: SubtaskState, metrics: SubtaskCheckpointMetrics): void {
    const key = subtaskKey(vertexId, subtaskIndex);
    const f = this.inFlight.get(checkpointId);
    if (f === undefined) {
      discardOperatorStates(state.operators); // aborted or unknown: its state is dropped
      return;
    }
    const vertex = this.o.graph.vertices[vertexId]!;
    // Write the subtask's state while other events go on; the acknowledgement counts once written.
    const keyedWriting = {
      incremental: this.o.incremental === true,
      changelogChain: (uid: string, index: number, position: number) => this.changelogChain(uid, vertexId, index, position),
      chainOf: (id: number, uid: string, index: number) =>
        this.completedMetadata
          .get(id)
          ?.operators.find((o) => o.operatorUid === uid)
          ?.subtasks.find((s) => s.subtaskIndex === index)?.keyedState,
    };
    const written = f.location.then((location) => writeSubtaskState(vertex, subtaskIndex, state, location, keyedWriting));
    written.catch(() => discardOperatorStates(state.operators)); // what was not written yet
    this.enqueue(async () => {
      let snapshots;
      try {
        snapshots = await written;
      } catch (e) {
        if (!this.inFlight.has(checkpointId)) return;
        const message = `writing the state of ${vertex.name} (${subtaskIndex + 1}/${vertex.parallelism}) failed: ${(e as Error).message}`;
        this.latestFailure = { checkpointId, message };
        this.o.gateway.log.warn(`checkpoint ${checkpointId}: ${message}`, { checkpointId, vertex: vertex.name, subtask: subtaskIndex });
        this.stats.failed(checkpointId, this.o.clock.nowMs(), message);
        this.apply(onDecline(afterStorageFailure(this.state), this.o.config, checkpointId, 'CHECKPOINT_ASYNC_EXCEPTION', key));
        // As after a task's decline: the next periodic checkpoint may have come due while this
        // one was pending, and nothing else would trigger it.
        this.decide();
        return;
      }
      if (!this.inFlight.has(checkpointId)) return;
      f.snapshots.set(key, snapshots);
      let size = 0;
      let writtenBytes = 0;
      const keyedHandles = [...snapshots.values()].flatMap((s) => s.keyedState);
      for (const s of snapshots.values()) {
        for (const h of subtaskStateHandles(s)) size += stateHandleSizeBytes(h);
        // Of keyed state, the last handle of each operator's chain is what this checkpoint
        // wrote; operator state, source splits and in-flight data it writes whole.
        if (s.keyedState.length > 0) writtenBytes += stateHandleSizeBytes(s.keyedState.at(-1)!.data);
        for (const h of unkeyedStateHandles(s)) writtenBytes += stateHandleSizeBytes(h);
      }
      const paths = sharedPaths(keyedHandles.map((k) => k.data));
      this.shared.register(paths);
      f.sharedPaths.push(...paths);
      this.stats.acknowledged(checkpointId, { ...metrics, subtask: key, ackTimestampMs: this.o.clock.nowMs(), stateSizeBytes: size, checkpointedSizeBytes: writtenBytes });
      const before = this.state;
      const outcome = onAcknowledge(this.state, this.o.config, checkpointId, key, this.o.clock.nowMs());
      await this.applyAsync(outcome, before);
    });
  }

  decline(vertexId: number, subtaskIndex: number, checkpointId: number, reason: CheckpointFailureReason, message: string): void {
    this.enqueue(() => {
      if (!this.inFlight.has(checkpointId)) return;
      if (this.stopSavepointDone) {
        this.handleAbort(checkpointId, undefined, `declined after the job's stop-with-savepoint: ${message}`);
        return;
      }
      // A task's decline message starts with the subtask's name, 'map (2/4)' (numbered from 1, as in Flink's UI).
      const vertex = this.o.graph.vertices.find((v) => v.id === vertexId)?.name;
      this.o.gateway.log.warn(`checkpoint ${checkpointId} declined by ${message}`, { checkpointId, subtask: subtaskIndex, ...(vertex === undefined ? {} : { vertex }) });
      this.latestFailure = { checkpointId, message: `declined by ${message}` };
      const f = this.inFlight.get(checkpointId);
      if (f !== undefined) this.stats.failed(checkpointId, this.o.clock.nowMs(), message);
      this.apply(onDecline(this.state, this.o.config, checkpointId, reason, subtaskKey(vertexId, subtaskIndex)));
      this.decide();
    });
  }

  dataFinished(vertexId: number, subtaskIndex: number): void {
    this.enqueue(() => {
      this.finishedSources.add(subtaskKey(vertexId, subtaskIndex));
      if (this.finishedSources.size < this.sourceSubtasks.size || this.finalFromId !== undefined) return;
      if (!this.o.finalCheckpoint && this.stopRequest === undefined) return;
      // Every source has emitted its last record: the next checkpoint is final; take it now,
      // not at the next interval. A checkpoint already running may have started before some
      // source finished, so it does not count.
      this.finalFromId = this.state.nextCheckpointId;
      const stop = this.stopRequest;
      if (stop !== undefined) {
        // Stop-with-savepoint: the final snapshot is a synchronous savepoint.
        this.requests.set(stop.requestId, { resolve: stop.resolve, reject: stop.reject });
        this.apply(
          enqueueRequest(this.state, this.o.config, {
            kind: 'savepoint',
            requestId: stop.requestId,
            requestedAtMs: this.o.clock.nowMs(),
            formatType: stop.formatType,
            targetDirectory: stop.targetDirectory,
            synchronous: true,
          }),
        );
        this.decide();
        return;
      }
      void this.triggerCheckpoint('CONFIGURED').catch((e: unknown) => this.o.gateway.log.warn(`final checkpoint failed: ${(e as Error).message}`));
    });
  }

  /**
   * Stop-with-savepoint: once every source stopped (`stopSources`), a synchronous savepoint is
   * taken; it commits like a checkpoint and then the job ends. Resolves with its path.
   */
  stopWithSavepoint(targetDirectory: string, formatType: 'CANONICAL' | 'NATIVE', stopSources: () => void): Promise<CompletedCheckpointInfo> {
    return new Promise<CompletedCheckpointInfo>((resolve, reject) => {
      this.enqueue(() => {
        if (this.stopped) {
          reject(new Error('the job is not running (restarting or finished); try again when it runs'));
          return;
        }
        if (this.stopRequest !== undefined) {
          reject(new Error('the job is already stopping'));
          return;
        }
        if (this.finalFromId !== undefined || this.finishedSources.size >= this.sourceSubtasks.size) {
          // Every source already ended its data: no source is left to stop, and the job ends
          // on its own once its final checkpoint committed (Flink refuses the stop too: not all
          // of its tasks are running).
          reject(new Error('the job is finishing: its sources have ended their data and its final checkpoint commits the results, so there is nothing to stop with a savepoint'));
          return;
        }
        this.stopRequest = { requestId: randomBytes(8).toString('hex'), targetDirectory, formatType, resolve, reject };
        stopSources();
      });
    });
  }

  private enqueue(event: () => void | Promise<void>): void {
    this.events = this.events.then(event).catch((e: unknown) => {
      this.o.gateway.failJob(`checkpoint coordinator failed: ${(e as Error).stack ?? String(e)}`);
    });
  }

  private decide(): void {
    // After the final checkpoint the tasks finish: one triggered now would only be aborted
    // when the coordinator stops (Flink does not trigger once every task has finished).
    if (this.stopped || this.stopSavepointDone || this.finalCompleted) return;
    this.apply(decideTrigger(this.state, this.o.config, this.o.clock.nowMs()));
  }

  private apply(outcome: Outcome): void {
    this.state = outcome.state;
    for (const d of outcome.decisions) this.handle(d);
  }

  /** Like apply, but a `complete` writes `_metadata` before the decisions after it run. */
  private async applyAsync(outcome: Outcome, before: CoordinatorState): Promise<void> {
    const completeAt = outcome.decisions.findIndex((d) => d.kind === 'complete');
    if (completeAt < 0) {
      this.apply(outcome);
      this.decide();
      return;
    }
    const complete = outcome.decisions[completeAt] as Extract<Decision, { kind: 'complete' }>;
    const f = this.inFlight.get(complete.checkpointId)!;
    let info: CompletedCheckpointInfo;
    let metadata: CheckpointMetadata | undefined;
    let size = 0;
    try {
      const base = checkpointMetadata(this.o.jobId, complete.checkpointId, f.timestampMs, this.o.graph, f.snapshots, f.enumerators);
      metadata = base;
      size = stateSizeBytes(base);
      if (f.savepoint !== undefined) {
        const location = await f.savepoint;
        const handle = await location.finalize({ ...base, type: 'savepoint', savepointFormat: f.savepointFormat });
        info = { checkpointId: complete.checkpointId, pointer: handle.pointer };
      } else {
        const handle = await this.o.storage.finalizeCheckpoint(base);
        info = { checkpointId: complete.checkpointId, pointer: handle.pointer };
        // Recorded before any task hears of it (sinks commit then): a new leader restores it, not an older one.
        if (this.o.completedCheckpointStore !== undefined) await this.o.completedCheckpointStore.add(info);
      }
    } catch (e) {
      this.o.gateway.log.warn(`checkpoint ${complete.checkpointId}: writing _metadata failed: ${(e as Error).message}`, { checkpointId: complete.checkpointId });
      this.state = afterStorageFailure(before);
      this.apply(onCoordinatorFailure(this.state, this.o.config, complete.checkpointId, 'IO_EXCEPTION'));
      this.decide();
      return;
    }
    if (f.savepoint === undefined) {
      this.completed.set(info.checkpointId, info);
      this.completedMetadata.set(info.checkpointId, metadata!);
    }
    f.cancelTimeout();
    this.inFlight.delete(info.checkpointId);
    this.stats.completed(info.checkpointId, this.o.clock.nowMs(), info.pointer, size);
    this.o.gateway.log.debug(`${f.savepoint === undefined ? 'checkpoint' : 'savepoint'} ${info.checkpointId} completed: ${size} bytes, ${this.o.clock.nowMs() - f.timestampMs} ms (${info.pointer})`, { checkpointId: info.checkpointId });
    if (this.finalFromId !== undefined && info.checkpointId >= this.finalFromId) this.finalCompleted = true;
    this.state = outcome.state;
    for (const [i, d] of outcome.decisions.entries()) {
      if (i === completeAt) {
        for (const id of complete.dropRetained) {
          const dropped = this.completed.get(id) ?? { checkpointId: id, pointer: '' };
          this.completed.delete(id);
          const droppedMetadata = this.completedMetadata.get(id);
          const free = dropped.claimed === true || droppedMetadata === undefined ? [] : this.shared.unregister(sharedPathsOf(droppedMetadata));
          this.cleanup(
            discardRetained(this.o.storage, dropped, this.o.gateway.log)
              .then(() => this.o.storage.discardSharedFiles(free))
              .catch((e: unknown) => this.o.gateway.log.warn(`discarding checkpoint ${id} failed: ${(e as Error).message}`)),
          );
        }
        this.pruneCompletedMetadata();
        if (complete.requestId !== undefined) {
          if (complete.requestId === this.stopRequest?.requestId) {
            this.stopSavepointDone = true;
            this.stopSavepoint = info;
          }
          this.requests.get(complete.requestId)?.resolve(info);
          this.requests.delete(complete.requestId);
        }
        continue;
      }
      this.handle(d);
    }
    this.decide();
  }

  private handle(d: Decision): void {
    dispatchDecision<void>(d, {
      trigger: (t) => {
        // Savepoints are always aligned (as in Flink): no in-flight data, restorable at any parallelism.
        const unaligned = !t.isSavepoint && (t.alignment === 'UNALIGNED' || t.alignedCheckpointTimeoutMs !== undefined);
        const barrier: CheckpointBarrier = {
          kind: 'barrier',
          checkpointId: t.checkpointId,
          timestampMs: t.timestampMs,
          options: {
            type: t.isSavepoint ? (t.snapshotType === 'SYNC_SAVEPOINT' ? 'sync-savepoint' : 'savepoint') : 'checkpoint',
            unaligned,
            alignedCheckpointTimeoutMs: t.alignedCheckpointTimeoutMs ?? 0,
            ...(t.snapshotType === 'FULL_CHECKPOINT' ? { full: true } : {}),
          },
        };
        const request = t.request?.kind === 'savepoint' ? t.request : undefined;
        const savepoint = request === undefined ? undefined : createSavepointLocation(request.targetDirectory ?? '', this.o.jobId, this.o.savepointOptions);
        // A target directory that cannot be made (a file, no permission) fails the savepoint here,
        // on the coordinator's side, before the tasks fail writing into it: as in Flink, where the
        // JobManager initializes the location, that failure does not count against
        // tolerable-failed-checkpoints, and the requester learns why.
        savepoint?.catch((e: unknown) =>
          this.enqueue(() => {
            if (!this.inFlight.has(t.checkpointId)) return;
            const message = `the savepoint directory cannot be created: ${describeThrown(e)}`;
            this.o.gateway.log.warn(`savepoint ${t.checkpointId}: ${message}`, { checkpointId: t.checkpointId });
            const outcome = onCoordinatorFailure(this.state, this.o.config, t.checkpointId, 'IO_EXCEPTION');
            this.apply({ ...outcome, decisions: outcome.decisions.map((d) => (d.kind === 'abort' ? { ...d, message } : d)) });
            this.decide();
          }),
        );
        // Savepoint state goes into the savepoint's own, self-contained directory.
        const location: Promise<CheckpointStorageLocation> =
          savepoint === undefined ? this.o.storage.createCheckpointLocation(t.checkpointId) : savepoint.then((l) => savepointStateLocation(t.checkpointId, l));
        location.catch(() => {});
        // The timer may fire a little early (timers round, clocks step): a checkpoint not yet
        // expired is left running and the timer armed again for the rest of its time.
        const armTimeout = (): (() => void) =>
          this.o.clock.schedule(t.timeoutAtMs - this.o.clock.nowMs(), () =>
            this.enqueue(() => {
              const f = this.inFlight.get(t.checkpointId);
              if (f !== undefined && this.stopSavepointDone) {
                this.handleAbort(t.checkpointId, undefined, "expired after the job's stop-with-savepoint");
                return;
              }
              const outcome = onTimeout(this.state, this.o.config, t.checkpointId, this.o.clock.nowMs());
              const notExpired = outcome.decisions.length === 1 && outcome.decisions[0]!.kind === 'ignore' && outcome.decisions[0]!.reason === 'not-expired';
              if (notExpired) {
                if (f !== undefined) f.cancelTimeout = armTimeout();
                return;
              }
              if (f !== undefined) this.stats.failed(t.checkpointId, this.o.clock.nowMs(), 'Checkpoint expired before completing.');
              this.apply(outcome);
              this.decide();
            }),
          );
        const cancelTimeout = armTimeout();
        this.inFlight.set(t.checkpointId, {
          location,
          savepoint,
          savepointFormat: request?.formatType === 'NATIVE' ? 'native' : 'canonical',
          timestampMs: t.timestampMs,
          snapshots: new Map(),
          unaligned,
          sharedPaths: [],
          enumerators: this.o.gateway.snapshotSplitEnumerators?.() ?? new Map(),
          cancelTimeout,
        });
        this.stats.started({
          id: t.checkpointId,
          isSavepoint: t.isSavepoint,
          checkpointType: checkpointTypeName(t.snapshotType, t.alignment === 'UNALIGNED'),
          triggerTimestampMs: t.timestampMs,
          numSubtasks: t.subtasks.length,
        });
        this.o.completedCheckpointStore?.triggered(t.checkpointId);
        this.o.gateway.triggerSources(barrier);
      },
      schedule: (s) => {
        this.cancelSchedule?.();
        this.cancelSchedule = this.o.clock.schedule(s.atMs - this.o.clock.nowMs(), () => this.enqueue(() => this.decide()));
      },
      'await-pending': () => {},
      idle: () => {},
      'decline-request': (r) => {
        if (r.requestId === undefined) return;
        this.requests.get(r.requestId)?.reject(new Error(`checkpoint request declined: ${r.message}`));
        this.requests.delete(r.requestId);
      },
      'ack-recorded': () => {},
      ignore: () => {},
      complete: () => {
        throw new Error('a complete decision outside an acknowledgement');
      },
      abort: (a) => this.handleAbort(a.checkpointId, a.requestId, a.message || failureReasonInfo(a.reason).message),
      'notify-complete': (n) => this.o.gateway.notifyComplete(n.checkpointId, this.finalFromId !== undefined && n.checkpointId >= this.finalFromId),
      'notify-aborted': (n) => this.o.gateway.notifyAborted(n.checkpointId, `checkpoint ${n.checkpointId} was aborted`),
      'fail-job': (f) => this.o.gateway.failJob(f.reason === EXCEEDED_TOLERABLE_FAILURES_MESSAGE ? this.tooManyFailures(f.checkpointId, f.cause) : f.reason),
    });
  }

  /** Flink's message when too many checkpoints failed in a row, with why the latest failed. */
  private tooManyFailures(checkpointId: number, cause: CheckpointFailureReason): string {
    const why = this.latestFailure?.checkpointId === checkpointId ? this.latestFailure.message : failureReasonInfo(cause).message;
    return (
      `${EXCEEDED_TOLERABLE_FAILURES_MESSAGE} The latest checkpoint (${checkpointId}) failed due to ${why}; ` +
      'see the checkpoint history (sluice checkpoints <jobId>, REST /jobs/:jobid/checkpoints) or the JobManager log to find out why checkpoints failed in a row ' +
      '(execution.checkpointing.tolerable-failed-checkpoints sets how many may)'
    );
  }

  /** Keeps the metadata of retained checkpoints and of the few newest (a pending delta may build on one just subsumed). */
  private pruneCompletedMetadata(): void {
    const ids = [...this.completedMetadata.keys()].sort((a, b) => b - a);
    for (const id of ids.slice(RECENT_METADATA_KEPT)) if (!this.completed.has(id)) this.completedMetadata.delete(id);
  }

  private handleAbort(checkpointId: number, requestId: string | undefined, message: string): void {
    const f = this.inFlight.get(checkpointId);
    if (f !== undefined) {
      f.cancelTimeout();
      this.inFlight.delete(checkpointId);
      this.stats.failed(checkpointId, this.o.clock.nowMs(), message);
      const free = this.shared.unregister(f.sharedPaths);
      if (f.savepoint !== undefined) this.cleanup(f.savepoint.then((l) => l.abort()).catch(() => {}));
      else
        this.cleanup(
          f.location
            .then(() => this.o.storage.abortCheckpoint(checkpointId))
            .then(() => this.o.storage.discardSharedFiles(free))
            .catch(() => {}),
        );
    }
    if (requestId !== undefined) {
      this.requests.get(requestId)?.reject(new Error(`checkpoint ${checkpointId} aborted: ${message}`));
      this.requests.delete(requestId);
    }
  }
}

/** A savepoint directory as the location its checkpoint's tasks write state to. */
function savepointStateLocation(checkpointId: number, l: SavepointLocation): CheckpointStorageLocation {
  const from = l.writeStateFileFrom;
  return {
    checkpointId,
    writeStateFile: (b) => l.writeStateFile(b),
    ...(from === undefined ? {} : { writeStateFileFrom: (source: StateFileSource) => from.call(l, source) }),
  };
}
