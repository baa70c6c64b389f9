/**
 * The checkpoint coordinator's "what next" as pure functions over facts, after Flink's
 * CheckpointCoordinator, CheckpointRequestDecider, CheckpointFailureManager and
 * CheckpointSubsumeHelper. No clock, timer, storage or RPC lives here: every function takes an
 * immutable `CoordinatorState` (plus the config and, where time matters, `nowMs`) and returns the
 * next state with a list of `Decision`s for the I/O edge to carry out, in order.
 *
 * How the edge drives it:
 * - Call `decideTrigger` after every other function and whenever a `schedule.atMs` arrives (keep
 *   one timer: a later `schedule` replaces the earlier one). It ends with exactly one of
 *   `schedule`, `await-pending` (call again when a checkpoint completes or aborts) or `idle`.
 * - For each `trigger`, send barriers to `subtasks` and arm a timer for `timeoutAtMs` that calls
 *   `onTimeout` (or call `expireOverdue` from any tick).
 * - `complete` means: write `_metadata` and add the checkpoint to the store; do it before acting on
 *   the decisions after it (drops, `notify-complete`). If that write fails, throw the returned
 *   state away and call `onCoordinatorFailure` on the state from before the acknowledgement.
 * - `abort` means: discard the checkpoint's partial state and fail its request; `ignore`d
 *   acknowledgements carry state handles that the edge discards.
 */
import { ConfigError, type Configuration } from '../../config/configuration.js';

// ---------------------------------------------------------------------------------------------
// Facts
// ---------------------------------------------------------------------------------------------

export type SubtaskId = string;
export type CheckpointingMode = 'EXACTLY_ONCE' | 'AT_LEAST_ONCE';

export interface CheckpointCoordinatorConfig {
  /** Base interval of periodic checkpoints; undefined = no periodic checkpoints. */
  readonly intervalMs: number | undefined;
  readonly timeoutMs: number;
  readonly minPauseMs: number;
  readonly maxConcurrentCheckpoints: number;
  /** Consecutive counted failures tolerated; INTEGER_MAX_VALUE = unlimited (nothing is counted). */
  readonly tolerableFailedCheckpoints: number;
  readonly numRetained: number;
  readonly unaligned: boolean;
  readonly alignedCheckpointTimeoutMs: number;
  readonly mode: CheckpointingMode;
}

/** Java's Integer.MAX_VALUE: Flink's UNLIMITED_TOLERABLE_FAILURE_NUMBER. */
export const INTEGER_MAX_VALUE = 2_147_483_647;
/** Flink's CheckpointRequestDecider.DEFAULT_MAX_QUEUED_REQUESTS. */
export const MAX_QUEUED_REQUESTS = 1000;
/** Flink's MINIMAL_CHECKPOINT_TIME for interval and timeout. */
export const MIN_CHECKPOINT_TIME_MS = 10;
const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/** `flink checkpoint <jobId> [--full]` / REST `checkpointType`. */
export type ManualCheckpointType = 'CONFIGURED' | 'FULL' | 'INCREMENTAL';
export type SavepointFormatType = 'CANONICAL' | 'NATIVE';

/** A user request waiting to be triggered. Periodic checkpoints are not queued (see `nextPeriodicMs`). */
export type TriggerRequest =
  | {
      readonly kind: 'checkpoint';
      readonly requestId: string;
      readonly requestedAtMs: number;
      readonly checkpointType: ManualCheckpointType;
    }
  | {
      readonly kind: 'savepoint';
      readonly requestId: string;
      readonly requestedAtMs: number;
      readonly formatType: SavepointFormatType;
      readonly targetDirectory?: string;
      /** Stop-with-savepoint: the job stops after it; it notifies completion and subsumes like a checkpoint. */
      readonly synchronous: boolean;
    };

export type TriggerSource = 'periodic' | 'manual' | 'savepoint';
/** What the tasks snapshot. `CHECKPOINT` is incremental when the backend is configured so. */
export type SnapshotType = 'CHECKPOINT' | 'FULL_CHECKPOINT' | 'SAVEPOINT' | 'SYNC_SAVEPOINT';
/** Barrier handling requested from the tasks (Flink's CheckpointOptions.forConfig). */
export type Alignment = 'AT_LEAST_ONCE' | 'ALIGNED' | 'UNALIGNED';

export interface PendingCheckpoint {
  readonly checkpointId: number;
  readonly triggerMs: number;
  readonly source: TriggerSource;
  readonly requestId: string | undefined;
  readonly snapshotType: SnapshotType;
  readonly isSavepoint: boolean;
  /** Subtasks whose acknowledgement is still missing. */
  readonly awaiting: readonly SubtaskId[];
  readonly acknowledged: readonly SubtaskId[];
}

/** An entry of the completed checkpoint store, oldest first. */
export interface RetainedCheckpoint {
  readonly checkpointId: number;
  /**
   * A savepoint the job was restored from (NO_CLAIM). It counts towards num-retained and leaves
   * the store like a checkpoint, but its files are never deleted. A CLAIMed snapshot belongs to
   * the job: enter it with isSavepoint false.
   */
  readonly isSavepoint: boolean;
}

export interface CoordinatorState {
  /** Id the next trigger takes; ids strictly increase and are never reused. */
  readonly nextCheckpointId: number;
  /** Subtasks that receive barriers and must acknowledge (the checkpoint plan). */
  readonly subtasks: readonly SubtaskId[];
  readonly allTasksRunning: boolean;
  /** In-flight checkpoints and savepoints, ascending ids. */
  readonly pending: readonly PendingCheckpoint[];
  /** User requests not yet triggered, in arrival order. */
  readonly queued: readonly TriggerRequest[];
  /** Completed checkpoint store, ascending ids. */
  readonly retained: readonly RetainedCheckpoint[];
  /** When the periodic trigger is next due; undefined = periodic scheduling not running. */
  readonly nextPeriodicMs: number | undefined;
  /** When the last checkpoint or savepoint completed (min-pause counts from here). */
  readonly lastCompletionMs: number | undefined;
  readonly lastCompletedCheckpointId: number | undefined;
  /** CheckpointFailureManager's continuous failure counter. */
  readonly consecutiveFailures: number;
  /**
   * Checkpoints are full until one completes: after restoring from a NO_CLAIM snapshot (later
   * ones must not build on its files), and after one failed in the checkpoint storage (the
   * files a delta would build on may be gone with whatever made it fail).
   */
  readonly forceFullSnapshot: boolean;
}

/** A checkpoint failed writing to the checkpoint storage: the next ones are full until one completes. */
export function afterStorageFailure(state: CoordinatorState): CoordinatorState {
  return state.forceFullSnapshot ? state : { ...state, forceFullSnapshot: true };
}

// ---------------------------------------------------------------------------------------------
// Failure reasons (Flink's CheckpointFailureReason)
// ---------------------------------------------------------------------------------------------

export interface ReasonInfo {
  /** Happens before the checkpoint reaches the tasks; treated as a coordinator-side failure. */
  readonly preFlight: boolean;
  /** Counts against execution.checkpointing.tolerable-failed-checkpoints. */
  readonly counted: boolean;
  readonly message: string;
}

const REASONS = {
  PERIODIC_SCHEDULER_SHUTDOWN: { preFlight: true, counted: false, message: 'Periodic checkpoint scheduler is shut down.' },
  TOO_MANY_CHECKPOINT_REQUESTS: { preFlight: true, counted: false, message: 'The maximum number of queued checkpoint requests exceeded' },
  TOO_MANY_CONCURRENT_CHECKPOINTS: { preFlight: true, counted: false, message: 'The maximum number of concurrent checkpoints is exceeded' },
  MINIMUM_TIME_BETWEEN_CHECKPOINTS: { preFlight: true, counted: false, message: 'The minimum time between checkpoints is still pending. Checkpoint will be triggered after the minimum time.' },
  NOT_ALL_REQUIRED_TASKS_RUNNING: { preFlight: true, counted: false, message: 'Not all required tasks are currently running.' },
  IO_EXCEPTION: { preFlight: true, counted: true, message: 'An Exception occurred while triggering the checkpoint. IO-problem detected.' },
  CHECKPOINT_ASYNC_EXCEPTION: { preFlight: false, counted: true, message: 'Asynchronous task checkpoint failed.' },
  CHECKPOINT_EXPIRED: { preFlight: false, counted: true, message: 'Checkpoint expired before completing.' },
  CHECKPOINT_DECLINED: { preFlight: false, counted: true, message: 'Checkpoint was declined.' },
  CHECKPOINT_SUBSUMED: { preFlight: false, counted: false, message: 'Checkpoint has been subsumed.' },
  CHECKPOINT_DECLINED_TASK_NOT_READY: { preFlight: false, counted: false, message: 'Checkpoint was declined (tasks not ready)' },
  CHECKPOINT_DECLINED_TASK_CLOSING: { preFlight: false, counted: false, message: 'Checkpoint was declined (task is closing)' },
  CHECKPOINT_DECLINED_TASK_NOT_CHECKPOINTING: { preFlight: false, counted: false, message: 'Task does not support checkpointing' },
  CHECKPOINT_DECLINED_SUBSUMED: { preFlight: false, counted: false, message: 'Checkpoint was canceled because a barrier from newer checkpoint was received.' },
  CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER: { preFlight: false, counted: false, message: 'Task received cancellation from one of its inputs' },
  CHECKPOINT_DECLINED_ALIGNMENT_LIMIT_EXCEEDED: { preFlight: false, counted: false, message: 'The checkpoint alignment phase needed to buffer more than the configured maximum bytes' },
  CHECKPOINT_DECLINED_INPUT_END_OF_STREAM: { preFlight: false, counted: false, message: 'Checkpoint was declined because one input stream is finished' },
  CHECKPOINT_COORDINATOR_SHUTDOWN: { preFlight: false, counted: false, message: 'CheckpointCoordinator shutdown.' },
  CHECKPOINT_COORDINATOR_SUSPEND: { preFlight: false, counted: false, message: 'Checkpoint Coordinator is suspending.' },
  JOB_FAILURE: { preFlight: false, counted: false, message: 'The job has failed.' },
  JOB_FAILOVER_REGION: { preFlight: false, counted: false, message: 'FailoverRegion is restarting.' },
  TASK_FAILURE: { preFlight: false, counted: false, message: 'Task has failed.' },
  TASK_CHECKPOINT_FAILURE: { preFlight: false, counted: false, message: 'Task local checkpoint failure.' },
  TRIGGER_CHECKPOINT_FAILURE: { preFlight: false, counted: false, message: 'Trigger checkpoint failure.' },
  FINALIZE_CHECKPOINT_FAILURE: { preFlight: false, counted: false, message: 'Failure to finalize checkpoint.' },
} as const satisfies Record<string, ReasonInfo>;

export type CheckpointFailureReason = keyof typeof REASONS;

export function failureReasonInfo(reason: CheckpointFailureReason): ReasonInfo {
  return REASONS[reason];
}

export const EXCEEDED_TOLERABLE_FAILURES_MESSAGE = 'Exceeded checkpoint tolerable failure threshold.';

// ---------------------------------------------------------------------------------------------
// Decisions
// ---------------------------------------------------------------------------------------------

export type IgnoreReason =
  /** The id was never triggered. */
  | 'unknown-checkpoint'
  /** The checkpoint already completed, aborted or was subsumed (a late message). */
  | 'not-pending'
  /** The subtask is not part of this checkpoint's plan. */
  | 'unknown-subtask'
  | 'duplicate-ack'
  /** A timeout that fired before the checkpoint was timeoutMs old. */
  | 'not-expired';

export type Decision =
  | {
      readonly kind: 'trigger';
      readonly checkpointId: number;
      readonly timestampMs: number;
      readonly source: TriggerSource;
      readonly requestId: string | undefined;
      /** The queued request, for savepoint details (directory, format). */
      readonly request: TriggerRequest | undefined;
      readonly snapshotType: SnapshotType;
      readonly isSavepoint: boolean;
      readonly alignment: Alignment;
      /** Aligned checkpoints switch to unaligned after this; undefined = never. */
      readonly alignedCheckpointTimeoutMs: number | undefined;
      readonly timeoutAtMs: number;
      readonly subtasks: readonly SubtaskId[];
    }
  /** Nothing to trigger before `atMs`: call decideTrigger again then. */
  | { readonly kind: 'schedule'; readonly atMs: number }
  /** max-concurrent-checkpoints reached: call decideTrigger again when one completes or aborts. */
  | { readonly kind: 'await-pending'; readonly pendingIds: readonly number[] }
  /** No periodic checkpointing and nothing queued. */
  | { readonly kind: 'idle' }
  /** A request that never became a checkpoint (no id was taken). */
  | {
      readonly kind: 'decline-request';
      readonly source: TriggerSource;
      readonly requestId: string | undefined;
      readonly reason: CheckpointFailureReason;
      readonly message: string;
    }
  | { readonly kind: 'ack-recorded'; readonly checkpointId: number; readonly subtask: SubtaskId; readonly remaining: number }
  | { readonly kind: 'ignore'; readonly checkpointId: number; readonly subtask: SubtaskId | undefined; readonly reason: IgnoreReason }
  | {
      readonly kind: 'complete';
      readonly checkpointId: number;
      readonly isSavepoint: boolean;
      readonly requestId: string | undefined;
      /** Older pending checkpoints aborted by this completion (each also gets `abort` + `notify-aborted`). */
      readonly subsumed: readonly number[];
      /** Completed checkpoints leaving the store beyond num-retained: delete their files. */
      readonly dropRetained: readonly number[];
      /** Restored savepoints leaving the store: forget them, never delete their files. */
      readonly releasedSavepoints: readonly number[];
    }
  | {
      readonly kind: 'abort';
      readonly checkpointId: number;
      readonly requestId: string | undefined;
      readonly reason: CheckpointFailureReason;
      readonly message: string;
    }
  | { readonly kind: 'notify-complete'; readonly checkpointId: number; readonly lastSubsumedCheckpointId: number | undefined }
  | { readonly kind: 'notify-aborted'; readonly checkpointId: number; readonly latestCompletedCheckpointId: number | undefined }
  | {
      readonly kind: 'fail-job';
      readonly reason: string;
      readonly cause: CheckpointFailureReason;
      readonly checkpointId: number;
    };

export type DecisionKind = Decision['kind'];

export interface Outcome {
  readonly state: CoordinatorState;
  readonly decisions: readonly Decision[];
}

/** One handler per decision kind: a new kind without a handler fails to compile. */
export type DecisionHandlers<R> = { readonly [K in DecisionKind]: (decision: Extract<Decision, { kind: K }>) => R };

export function dispatchDecision<R>(decision: Decision, handlers: DecisionHandlers<R>): R {
  return (handlers[decision.kind] as (d: Decision) => R)(decision);
}

// ---------------------------------------------------------------------------------------------
// Configuration and initial state
// ---------------------------------------------------------------------------------------------

/** Reads `execution.checkpointing.*` and applies Flink's clamps (min-pause <= 1 year). */
export function checkpointCoordinatorConfig(config: Configuration): CheckpointCoordinatorConfig {
  const key = 'execution.checkpointing';
  const intervalMs = config.getOptionalNumber(`${key}.interval`);
  const timeoutMs = config.getNumber(`${key}.timeout`);
  if (intervalMs !== undefined && intervalMs < MIN_CHECKPOINT_TIME_MS) {
    throw new ConfigError(`'${key}.interval' must be at least ${MIN_CHECKPOINT_TIME_MS} ms (unset it to turn checkpointing off), got ${intervalMs} ms`);
  }
  if (timeoutMs < MIN_CHECKPOINT_TIME_MS) {
    throw new ConfigError(`'${key}.timeout' must be at least ${MIN_CHECKPOINT_TIME_MS} ms, got ${timeoutMs} ms`);
  }
  const mode = config.getString(`${key}.mode`);
  return {
    intervalMs,
    timeoutMs,
    minPauseMs: Math.min(config.getNumber(`${key}.min-pause`), ONE_YEAR_MS),
    maxConcurrentCheckpoints: config.getNumber(`${key}.max-concurrent-checkpoints`),
    tolerableFailedCheckpoints: config.getNumber(`${key}.tolerable-failed-checkpoints`),
    numRetained: config.getNumber(`${key}.num-retained`),
    unaligned: config.getBoolean(`${key}.unaligned.enabled`),
    alignedCheckpointTimeoutMs: config.getNumber(`${key}.aligned-checkpoint-timeout`),
    mode: mode === 'AT_LEAST_ONCE' ? 'AT_LEAST_ONCE' : 'EXACTLY_ONCE',
  };
}

export interface InitialStateFacts {
  readonly subtasks: readonly SubtaskId[];
  readonly allTasksRunning?: boolean;
  /** The store found on (re)start, oldest first. */
  readonly restored?: readonly RetainedCheckpoint[];
  /** Default: one above the highest restored id, or 1. */
  readonly nextCheckpointId?: number;
  /** Restored from a NO_CLAIM snapshot: the first checkpoint is full. */
  readonly restoredFromUnclaimedSnapshot?: boolean;
}

export function initialCoordinatorState(facts: InitialStateFacts): CoordinatorState {
  const retained = facts.restored ?? [];
  const highest = retained.at(-1)?.checkpointId ?? 0;
  const state: CoordinatorState = {
    nextCheckpointId: facts.nextCheckpointId ?? highest + 1,
    subtasks: [...facts.subtasks],
    allTasksRunning: facts.allTasksRunning ?? true,
    pending: [],
    queued: [],
    retained: [...retained],
    nextPeriodicMs: undefined,
    lastCompletionMs: undefined,
    lastCompletedCheckpointId: retained.length === 0 ? undefined : highest,
    consecutiveFailures: 0,
    forceFullSnapshot: facts.restoredFromUnclaimedSnapshot ?? false,
  };
  assertState(state);
  return state;
}

/**
 * Flink's startCheckpointScheduler: the first periodic checkpoint is due after a random delay in
 * [min-pause, interval] so that jobs started together do not checkpoint in lockstep.
 */
export function startPeriodicScheduling(state: CoordinatorState, config: CheckpointCoordinatorConfig, nowMs: number, random: () => number): Outcome {
  assertConfig(config);
  assertState(state, config);
  if (config.intervalMs === undefined) throw new Error('startPeriodicScheduling: no periodic checkpointing is configured (intervalMs undefined)');
  const r = random();
  if (!(r >= 0 && r < 1)) throw new Error(`startPeriodicScheduling: random() must return a number in [0, 1), got ${r}`);
  const intervalMs = effectiveIntervalMs(config);
  const delayMs = config.minPauseMs + Math.floor(r * (intervalMs - config.minPauseMs + 1));
  const atMs = nowMs + delayMs;
  return { state: { ...state, nextPeriodicMs: atMs }, decisions: [{ kind: 'schedule', atMs }] };
}

/**
 * Flink's stopCheckpointScheduler (job leaves RUNNING): periodic triggering stops, pending
 * checkpoints abort and queued requests are declined with CHECKPOINT_COORDINATOR_SUSPEND.
 */
export function stopPeriodicScheduling(state: CoordinatorState, config: CheckpointCoordinatorConfig): Outcome {
  assertConfig(config);
  assertState(state, config);
  const reason: CheckpointFailureReason = 'CHECKPOINT_COORDINATOR_SUSPEND';
  const decisions: Decision[] = state.queued.map((r) => declineRequest(sourceOf(r), r.requestId, reason));
  let next: CoordinatorState = { ...state, queued: [], nextPeriodicMs: undefined };
  for (const p of state.pending) {
    const out = abortPending(next, config, p.checkpointId, reason, 'coordinator');
    next = out.state;
    decisions.push(...out.decisions);
  }
  return { state: next, decisions };
}

/** Queues a manual checkpoint or savepoint request; call decideTrigger afterwards. */
export function enqueueRequest(state: CoordinatorState, config: CheckpointCoordinatorConfig, request: TriggerRequest): Outcome {
  assertConfig(config);
  assertState(state, config);
  const inUse = state.queued.some((r) => r.requestId === request.requestId) || state.pending.some((p) => p.requestId === request.requestId);
  if (inUse) throw new Error(`enqueueRequest: request id '${request.requestId}' is already queued or pending`);
  if (state.queued.length >= MAX_QUEUED_REQUESTS) {
    return { state, decisions: [declineRequest(sourceOf(request), request.requestId, 'TOO_MANY_CHECKPOINT_REQUESTS')] };
  }
  return { state: { ...state, queued: [...state.queued, request] }, decisions: [] };
}

/** The edge reports that all subtasks run again (or not), e.g. after a restart. */
export function setTasksRunning(state: CoordinatorState, allTasksRunning: boolean, subtasks: readonly SubtaskId[] = state.subtasks): CoordinatorState {
  const next = { ...state, allTasksRunning, subtasks: [...subtasks] };
  assertState(next);
  return next;
}

// ---------------------------------------------------------------------------------------------
// Triggering
// ---------------------------------------------------------------------------------------------

type Candidate = { readonly source: 'periodic' } | { readonly source: 'manual' | 'savepoint'; readonly request: TriggerRequest };

function sourceOf(request: TriggerRequest): TriggerSource {
  return request.kind === 'savepoint' ? 'savepoint' : 'manual';
}

/** Savepoints first, then manual checkpoints, each by request time; then a due periodic one. */
function nextCandidate(state: CoordinatorState, nowMs: number): Candidate | undefined {
  const byTime = (kind: TriggerRequest['kind']): TriggerRequest | undefined =>
    state.queued.filter((r) => r.kind === kind).reduce<TriggerRequest | undefined>((best, r) => (best === undefined || r.requestedAtMs < best.requestedAtMs ? r : best), undefined);
  const savepoint = byTime('savepoint');
  if (savepoint !== undefined) return { source: 'savepoint', request: savepoint };
  const manual = byTime('checkpoint');
  if (manual !== undefined) return { source: 'manual', request: manual };
  if (state.nextPeriodicMs !== undefined && state.nextPeriodicMs <= nowMs) return { source: 'periodic' };
  return undefined;
}

function effectiveIntervalMs(config: CheckpointCoordinatorConfig): number {
  if (config.intervalMs === undefined) throw new Error('no periodic checkpointing is configured');
  // Flink: "it does not make sense to schedule checkpoints more often than the min pause".
  return Math.max(config.intervalMs, config.minPauseMs);
}

function snapshotTypeOf(candidate: Candidate, forceFullSnapshot: boolean): SnapshotType {
  if (candidate.source === 'periodic') return forceFullSnapshot ? 'FULL_CHECKPOINT' : 'CHECKPOINT';
  const r = candidate.request;
  if (r.kind === 'savepoint') return r.synchronous ? 'SYNC_SAVEPOINT' : 'SAVEPOINT';
  if (forceFullSnapshot || r.checkpointType === 'FULL') return 'FULL_CHECKPOINT';
  return 'CHECKPOINT';
}

function isSavepointType(t: SnapshotType): boolean {
  return t === 'SAVEPOINT' || t === 'SYNC_SAVEPOINT';
}

/** Flink's CheckpointOptions.forConfig. */
function alignmentOf(config: CheckpointCoordinatorConfig, snapshotType: SnapshotType): { alignment: Alignment; alignedCheckpointTimeoutMs: number | undefined } {
  if (config.mode === 'AT_LEAST_ONCE') return { alignment: 'AT_LEAST_ONCE', alignedCheckpointTimeoutMs: undefined };
  if (isSavepointType(snapshotType) || !config.unaligned) return { alignment: 'ALIGNED', alignedCheckpointTimeoutMs: undefined };
  if (config.alignedCheckpointTimeoutMs === 0) return { alignment: 'UNALIGNED', alignedCheckpointTimeoutMs: undefined };
  return { alignment: 'ALIGNED', alignedCheckpointTimeoutMs: config.alignedCheckpointTimeoutMs };
}

function withoutRequest(state: CoordinatorState, candidate: Candidate): CoordinatorState {
  if (candidate.source === 'periodic') return state;
  return { ...state, queued: state.queued.filter((r) => r !== candidate.request) };
}

/**
 * What to trigger now: zero or more `trigger` / `decline-request` decisions followed by exactly
 * one of `schedule`, `await-pending` or `idle`.
 *
 * Flink's CheckpointRequestDecider rules: savepoints are forced (they ignore max-concurrent and
 * min-pause); manual checkpoints wait for max-concurrent but not for min-pause; periodic ones
 * wait for both. Min-pause counts from the last completion, the interval from the last periodic
 * trigger. Without all tasks running, the request that would trigger is declined with
 * NOT_ALL_REQUIRED_TASKS_RUNNING (not counted as a checkpoint failure).
 */
export function decideTrigger(state: CoordinatorState, config: CheckpointCoordinatorConfig, nowMs: number): Outcome {
  assertConfig(config);
  assertState(state, config);
  assertTime(nowMs);
  const decisions: Decision[] = [];
  let next = state;
  // Each round removes a queued request or moves the periodic due time past nowMs.
  const roundsMax = state.queued.length + 2;
  for (let round = 0; round < roundsMax; round++) {
    const candidate = nextCandidate(next, nowMs);
    if (candidate === undefined) {
      decisions.push(next.nextPeriodicMs === undefined ? { kind: 'idle' } : { kind: 'schedule', atMs: next.nextPeriodicMs });
      return finish(next, config, decisions);
    }
    const forced = candidate.source === 'savepoint';
    if (!forced && next.pending.length >= config.maxConcurrentCheckpoints) {
      decisions.push({ kind: 'await-pending', pendingIds: next.pending.map((p) => p.checkpointId) });
      return finish(next, config, decisions);
    }
    if (candidate.source === 'periodic' && next.lastCompletionMs !== undefined) {
      const earliestMs = next.lastCompletionMs + config.minPauseMs;
      if (earliestMs > nowMs) {
        next = { ...next, nextPeriodicMs: earliestMs };
        decisions.push({ kind: 'schedule', atMs: earliestMs });
        return finish(next, config, decisions);
      }
    }
    if (candidate.source === 'periodic') {
      next = { ...next, nextPeriodicMs: nowMs + effectiveIntervalMs(config) };
    }
    if (!next.allTasksRunning) {
      decisions.push(declineRequest(candidate.source, candidate.source === 'periodic' ? undefined : candidate.request.requestId, 'NOT_ALL_REQUIRED_TASKS_RUNNING'));
      next = withoutRequest(next, candidate);
      continue;
    }
    const triggered = trigger(withoutRequest(next, candidate), config, candidate, nowMs);
    next = triggered.state;
    decisions.push(triggered.decision);
  }
  throw new Error(`decideTrigger: no terminal decision after ${roundsMax} rounds`);
}

function finish(state: CoordinatorState, config: CheckpointCoordinatorConfig, decisions: Decision[]): Outcome {
  assertState(state, config);
  return { state, decisions };
}

function trigger(state: CoordinatorState, config: CheckpointCoordinatorConfig, candidate: Candidate, nowMs: number): { state: CoordinatorState; decision: Decision } {
  const checkpointId = state.nextCheckpointId;
  const newest = Math.max(state.pending.at(-1)?.checkpointId ?? 0, state.retained.at(-1)?.checkpointId ?? 0, state.lastCompletedCheckpointId ?? 0);
  if (!(checkpointId > newest)) throw new Error(`checkpoint id ${checkpointId} does not increase past ${newest}`);
  if (state.subtasks.length === 0) throw new Error('trigger: the checkpoint plan has no subtasks');
  const snapshotType = snapshotTypeOf(candidate, state.forceFullSnapshot);
  const isSavepoint = isSavepointType(snapshotType);
  const request = candidate.source === 'periodic' ? undefined : candidate.request;
  const pending: PendingCheckpoint = {
    checkpointId,
    triggerMs: nowMs,
    source: candidate.source,
    requestId: request?.requestId,
    snapshotType,
    isSavepoint,
    awaiting: [...state.subtasks],
    acknowledged: [],
  };
  return {
    state: { ...state, nextCheckpointId: checkpointId + 1, pending: [...state.pending, pending] },
    decision: {
      kind: 'trigger',
      checkpointId,
      timestampMs: nowMs,
      source: candidate.source,
      requestId: request?.requestId,
      request,
      snapshotType,
      isSavepoint,
      ...alignmentOf(config, snapshotType),
      timeoutAtMs: nowMs + config.timeoutMs,
      subtasks: pending.awaiting,
    },
  };
}

function declineRequest(source: TriggerSource, requestId: string | undefined, reason: CheckpointFailureReason): Decision {
  return { kind: 'decline-request', source, requestId, reason, message: REASONS[reason].message };
}

// ---------------------------------------------------------------------------------------------
// Acknowledgements and completion
// ---------------------------------------------------------------------------------------------

function findPending(state: CoordinatorState, checkpointId: number): PendingCheckpoint | undefined {
  return state.pending.find((p) => p.checkpointId === checkpointId);
}

function notPending(state: CoordinatorState, checkpointId: number, subtask: SubtaskId | undefined): Outcome {
  const reason: IgnoreReason = checkpointId >= state.nextCheckpointId ? 'unknown-checkpoint' : 'not-pending';
  return { state, decisions: [{ kind: 'ignore', checkpointId, subtask, reason }] };
}

/** A subtask acknowledged checkpoint `checkpointId` with its state handles. */
export function onAcknowledge(state: CoordinatorState, config: CheckpointCoordinatorConfig, checkpointId: number, subtask: SubtaskId, nowMs: number): Outcome {
  assertConfig(config);
  assertState(state, config);
  assertTime(nowMs);
  const pending = findPending(state, checkpointId);
  if (pending === undefined) return notPending(state, checkpointId, subtask);
  if (pending.acknowledged.includes(subtask)) {
    return { state, decisions: [{ kind: 'ignore', checkpointId, subtask, reason: 'duplicate-ack' }] };
  }
  if (!pending.awaiting.includes(subtask)) {
    return { state, decisions: [{ kind: 'ignore', checkpointId, subtask, reason: 'unknown-subtask' }] };
  }
  const acked: PendingCheckpoint = {
    ...pending,
    awaiting: pending.awaiting.filter((s) => s !== subtask),
    acknowledged: [...pending.acknowledged, subtask],
  };
  const next = replacePending(state, acked);
  const recorded: Decision = { kind: 'ack-recorded', checkpointId, subtask, remaining: acked.awaiting.length };
  if (acked.awaiting.length > 0) return finish(next, config, [recorded]);
  const completed = complete(next, config, acked, nowMs);
  return { state: completed.state, decisions: [recorded, ...completed.decisions] };
}

function replacePending(state: CoordinatorState, pending: PendingCheckpoint): CoordinatorState {
  return { ...state, pending: state.pending.map((p) => (p.checkpointId === pending.checkpointId ? pending : p)) };
}

/** Flink's completePendingCheckpoint + cleanupAfterCompletedCheckpoint. */
function complete(state: CoordinatorState, config: CheckpointCoordinatorConfig, done: PendingCheckpoint, nowMs: number): Outcome {
  const id = done.checkpointId;
  let next: CoordinatorState = { ...state, pending: state.pending.filter((p) => p.checkpointId !== id) };

  // Savepoints do not enter the store (they are the user's); checkpoints do.
  let dropRetained: number[] = [];
  let releasedSavepoints: number[] = [];
  let lastSubsumedCheckpointId: number | undefined;
  if (!done.isSavepoint) {
    const store = subsumeRetained([...next.retained, { checkpointId: id, isSavepoint: false }], config.numRetained, false);
    next = { ...next, retained: store.kept, forceFullSnapshot: false };
    dropRetained = store.removed.filter((c) => !c.isSavepoint).map((c) => c.checkpointId);
    releasedSavepoints = store.removed.filter((c) => c.isSavepoint).map((c) => c.checkpointId);
    const lastSubsumed = store.removed.reduce<RetainedCheckpoint | undefined>((a, c) => (a === undefined || c.checkpointId > a.checkpointId ? c : a), undefined);
    lastSubsumedCheckpointId = lastSubsumed === undefined || lastSubsumed.isSavepoint ? undefined : lastSubsumed.checkpointId;
  }

  // CheckpointFailureManager.handleCheckpointSuccess: any completion resets the count.
  if (next.lastCompletedCheckpointId === undefined || id > next.lastCompletedCheckpointId) {
    next = { ...next, lastCompletedCheckpointId: id, consecutiveFailures: 0 };
  }
  next = { ...next, lastCompletionMs: nowMs };

  // Only checkpoints and stop-with-savepoint subsume older pending ones and notify the tasks.
  const commits = !done.isSavepoint || done.snapshotType === 'SYNC_SAVEPOINT';
  const subsumed = commits ? next.pending.filter((p) => p.checkpointId < id && !p.isSavepoint).map((p) => p.checkpointId) : [];
  const decisions: Decision[] = [
    { kind: 'complete', checkpointId: id, isSavepoint: done.isSavepoint, requestId: done.requestId, subsumed, dropRetained, releasedSavepoints },
  ];
  for (const older of subsumed) {
    const out = abortPending(next, config, older, 'CHECKPOINT_SUBSUMED', 'coordinator');
    next = out.state;
    decisions.push(...out.decisions);
  }
  if (commits) decisions.push({ kind: 'notify-complete', checkpointId: id, lastSubsumedCheckpointId });

  if (next.pending.some((p) => p.checkpointId < id && !p.isSavepoint && commits)) {
    throw new Error(`completing ${id} left an older pending checkpoint`);
  }
  return finish(next, config, decisions);
}

/**
 * Flink's CheckpointSubsumeHelper.subsume over the store (oldest first): while more than
 * `numRetained` entries remain, remove the oldest ones, except the newest entry and the newest
 * non-savepoint (later incremental checkpoints may build on it) unless the newest is a
 * stop-with-savepoint.
 */
export function subsumeRetained(
  store: readonly RetainedCheckpoint[],
  numRetained: number,
  newestIsSyncSavepoint: boolean,
): { kept: RetainedCheckpoint[]; removed: RetainedCheckpoint[] } {
  if (!(Number.isInteger(numRetained) && numRetained >= 1)) throw new Error(`numRetained must be an integer >= 1, got ${numRetained}`);
  const kept = [...store];
  const removed: RetainedCheckpoint[] = [];
  if (kept.length <= numRetained) return { kept, removed };
  const newest = kept.at(-1)!;
  const newestCheckpoint = [...kept].reverse().find((c) => !c.isSavepoint);
  for (const c of store) {
    if (kept.length <= numRetained) break;
    const removable = c !== newest && (c.isSavepoint || newestIsSyncSavepoint || c !== newestCheckpoint);
    if (removable) {
      kept.splice(kept.indexOf(c), 1);
      removed.push(c);
    }
  }
  return { kept, removed };
}

// ---------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------

type FailureOrigin = 'task' | 'coordinator';

/** A subtask declined checkpoint `checkpointId` (its snapshot failed or it cannot take one). */
export function onDecline(
  state: CoordinatorState,
  config: CheckpointCoordinatorConfig,
  checkpointId: number,
  reason: CheckpointFailureReason,
  subtask?: SubtaskId,
): Outcome {
  assertConfig(config);
  assertState(state, config);
  if (findPending(state, checkpointId) === undefined) return notPending(state, checkpointId, subtask);
  return abortPending(state, config, checkpointId, reason, 'task');
}

/** The timeout timer of `checkpointId` fired: it expires if it is at least timeoutMs old. */
export function onTimeout(state: CoordinatorState, config: CheckpointCoordinatorConfig, checkpointId: number, nowMs: number): Outcome {
  assertConfig(config);
  assertState(state, config);
  assertTime(nowMs);
  const pending = findPending(state, checkpointId);
  if (pending === undefined) return notPending(state, checkpointId, undefined);
  if (nowMs - pending.triggerMs < config.timeoutMs) {
    return { state, decisions: [{ kind: 'ignore', checkpointId, subtask: undefined, reason: 'not-expired' }] };
  }
  return abortPending(state, config, checkpointId, 'CHECKPOINT_EXPIRED', 'coordinator');
}

/** Expires every pending checkpoint that is at least timeoutMs old (for a single-tick edge). */
export function expireOverdue(state: CoordinatorState, config: CheckpointCoordinatorConfig, nowMs: number): Outcome {
  assertConfig(config);
  assertState(state, config);
  assertTime(nowMs);
  let next = state;
  const decisions: Decision[] = [];
  for (const p of state.pending) {
    if (nowMs - p.triggerMs < config.timeoutMs) continue;
    const out = abortPending(next, config, p.checkpointId, 'CHECKPOINT_EXPIRED', 'coordinator');
    next = out.state;
    decisions.push(...out.decisions);
  }
  return finish(next, config, decisions);
}

/**
 * A coordinator-side failure of a pending checkpoint: the storage location could not be
 * initialized (IO_EXCEPTION, counted), triggering failed (TRIGGER_CHECKPOINT_FAILURE) or writing
 * `_metadata` failed (FINALIZE_CHECKPOINT_FAILURE; or IO_EXCEPTION to count it). For a failed
 * `complete`, pass the state from before the acknowledgement that completed it.
 */
export function onCoordinatorFailure(state: CoordinatorState, config: CheckpointCoordinatorConfig, checkpointId: number, reason: CheckpointFailureReason): Outcome {
  assertConfig(config);
  assertState(state, config);
  if (findPending(state, checkpointId) === undefined) return notPending(state, checkpointId, undefined);
  return abortPending(state, config, checkpointId, reason, 'coordinator');
}

/**
 * A task failed: abort every pending checkpoint with TASK_FAILURE (not counted) and mark the
 * tasks as not all running until the edge calls setTasksRunning. Queued requests stay queued.
 */
export function onTaskFailure(state: CoordinatorState, config: CheckpointCoordinatorConfig): Outcome {
  assertConfig(config);
  assertState(state, config);
  let next: CoordinatorState = { ...state, allTasksRunning: false };
  const decisions: Decision[] = [];
  for (const p of state.pending) {
    const out = abortPending(next, config, p.checkpointId, 'TASK_FAILURE', 'coordinator');
    next = out.state;
    decisions.push(...out.decisions);
  }
  return finish(next, config, decisions);
}

/** Flink's abortPendingCheckpoint: drop it, notify the tasks, consult the failure manager. */
function abortPending(
  state: CoordinatorState,
  config: CheckpointCoordinatorConfig,
  checkpointId: number,
  reason: CheckpointFailureReason,
  origin: FailureOrigin,
): Outcome {
  const pending = findPending(state, checkpointId);
  if (pending === undefined) throw new Error(`abortPending: checkpoint ${checkpointId} is not pending`);
  const info = REASONS[reason];
  let next: CoordinatorState = { ...state, pending: state.pending.filter((p) => p.checkpointId !== checkpointId) };
  const decisions: Decision[] = [
    { kind: 'abort', checkpointId, requestId: pending.requestId, reason, message: info.message },
    { kind: 'notify-aborted', checkpointId, latestCompletedCheckpointId: next.lastCompletedCheckpointId },
  ];
  const failure = judgeFailure(next, config, pending, reason, origin);
  next = { ...next, consecutiveFailures: failure.consecutiveFailures };
  if (failure.failJob !== undefined) {
    decisions.push({ kind: 'fail-job', reason: failure.failJob, cause: reason, checkpointId });
  }
  return { state: next, decisions };
}

/**
 * Flink's CheckpointFailureManager. Task-side failures (declines) of a stop-with-savepoint fail
 * the job at once; other task-side failures count for checkpoints and savepoints alike;
 * coordinator-side failures count only for checkpoints. Only IO_EXCEPTION,
 * CHECKPOINT_ASYNC_EXCEPTION, CHECKPOINT_DECLINED and CHECKPOINT_EXPIRED count, only for ids
 * above the last completed one; more than tolerable consecutive counted failures fail the job
 * and reset the count.
 */
function judgeFailure(
  state: CoordinatorState,
  config: CheckpointCoordinatorConfig,
  pending: PendingCheckpoint,
  reason: CheckpointFailureReason,
  origin: FailureOrigin,
): { consecutiveFailures: number; failJob: string | undefined } {
  const unchanged = { consecutiveFailures: state.consecutiveFailures, failJob: undefined };
  const info = REASONS[reason];
  const taskSide = origin === 'task' && !info.preFlight;
  if (taskSide && pending.snapshotType === 'SYNC_SAVEPOINT') {
    return { consecutiveFailures: state.consecutiveFailures, failJob: `Stop-with-savepoint ${pending.checkpointId} failed: ${info.message}` };
  }
  if (!taskSide && pending.isSavepoint) return unchanged;
  if (state.lastCompletedCheckpointId !== undefined && pending.checkpointId <= state.lastCompletedCheckpointId) return unchanged;
  if (config.tolerableFailedCheckpoints === INTEGER_MAX_VALUE || !info.counted) return unchanged;
  const consecutiveFailures = state.consecutiveFailures + 1;
  if (consecutiveFailures > config.tolerableFailedCheckpoints) {
    return { consecutiveFailures: 0, failJob: EXCEEDED_TOLERABLE_FAILURES_MESSAGE };
  }
  return { consecutiveFailures, failJob: undefined };
}

// ---------------------------------------------------------------------------------------------
// Invariants (programmer errors throw)
// ---------------------------------------------------------------------------------------------

function assertTime(nowMs: number): void {
  if (!Number.isFinite(nowMs)) throw new Error(`nowMs must be a finite number, got ${nowMs}`);
}

export function assertConfig(config: CheckpointCoordinatorConfig): void {
  const intOver = (v: number, min: number, what: string): void => {
    if (!(Number.isInteger(v) && v >= min)) throw new Error(`CheckpointCoordinatorConfig.${what} must be an integer >= ${min}, got ${v}`);
  };
  if (config.intervalMs !== undefined && !(config.intervalMs > 0)) throw new Error(`CheckpointCoordinatorConfig.intervalMs must be > 0 or undefined, got ${config.intervalMs}`);
  if (!(config.timeoutMs > 0)) throw new Error(`CheckpointCoordinatorConfig.timeoutMs must be > 0, got ${config.timeoutMs}`);
  if (!(config.minPauseMs >= 0)) throw new Error(`CheckpointCoordinatorConfig.minPauseMs must be >= 0, got ${config.minPauseMs}`);
  if (!(config.alignedCheckpointTimeoutMs >= 0)) throw new Error(`CheckpointCoordinatorConfig.alignedCheckpointTimeoutMs must be >= 0, got ${config.alignedCheckpointTimeoutMs}`);
  intOver(config.maxConcurrentCheckpoints, 1, 'maxConcurrentCheckpoints');
  intOver(config.tolerableFailedCheckpoints, 0, 'tolerableFailedCheckpoints');
  intOver(config.numRetained, 1, 'numRetained');
}

function assertAscending(ids: readonly number[], what: string): void {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i]! > ids[i - 1]!)) throw new Error(`${what} ids must strictly increase: ${ids.join(', ')}`);
  }
}

/** Checks the state's invariants; with a config also the max-concurrent bound. */
export function assertState(state: CoordinatorState, config?: CheckpointCoordinatorConfig): void {
  if (!(Number.isInteger(state.nextCheckpointId) && state.nextCheckpointId >= 1)) {
    throw new Error(`nextCheckpointId must be an integer >= 1, got ${state.nextCheckpointId}`);
  }
  const pendingIds = state.pending.map((p) => p.checkpointId);
  const retainedIds = state.retained.map((c) => c.checkpointId);
  assertAscending(pendingIds, 'pending');
  assertAscending(retainedIds, 'retained');
  for (const id of [...pendingIds, ...retainedIds, state.lastCompletedCheckpointId ?? 0]) {
    if (id >= state.nextCheckpointId) throw new Error(`checkpoint id ${id} is not below nextCheckpointId ${state.nextCheckpointId}`);
  }
  for (const p of state.pending) {
    if (p.isSavepoint !== isSavepointType(p.snapshotType)) throw new Error(`pending ${p.checkpointId}: isSavepoint disagrees with ${p.snapshotType}`);
    if (p.awaiting.length === 0) throw new Error(`pending ${p.checkpointId} awaits no acknowledgement but did not complete`);
    if (p.acknowledged.some((s) => p.awaiting.includes(s))) throw new Error(`pending ${p.checkpointId}: a subtask is both acknowledged and awaited`);
  }
  if (!(Number.isInteger(state.consecutiveFailures) && state.consecutiveFailures >= 0)) {
    throw new Error(`consecutiveFailures must be an integer >= 0, got ${state.consecutiveFailures}`);
  }
  const requestIds = [...state.queued.map((r) => r.requestId), ...state.pending.flatMap((p) => (p.requestId === undefined ? [] : [p.requestId]))];
  if (new Set(requestIds).size !== requestIds.length) throw new Error(`request ids must be unique: ${requestIds.join(', ')}`);
  if (state.queued.length > MAX_QUEUED_REQUESTS) throw new Error(`more than ${MAX_QUEUED_REQUESTS} queued requests`);
  if (config !== undefined) {
    if (config.intervalMs === undefined && state.nextPeriodicMs !== undefined) {
      throw new Error('nextPeriodicMs is set but no periodic checkpointing is configured');
    }
    const checkpoints = state.pending.filter((p) => !p.isSavepoint).length;
    if (checkpoints > config.maxConcurrentCheckpoints) {
      throw new Error(`${checkpoints} pending checkpoints exceed maxConcurrentCheckpoints ${config.maxConcurrentCheckpoints}`);
    }
    if (config.tolerableFailedCheckpoints !== INTEGER_MAX_VALUE && state.consecutiveFailures > config.tolerableFailedCheckpoints) {
      throw new Error(`consecutiveFailures ${state.consecutiveFailures} exceed tolerableFailedCheckpoints ${config.tolerableFailedCheckpoints}`);
    }
  }
}
