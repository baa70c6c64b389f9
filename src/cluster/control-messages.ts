import type { ChangelogOptions } from '../runtime/task/keyed-changelog.js';
import type { KeyedStateSnapshot } from '../runtime/state/keyed-state-snapshot.js';
import type { ConfigValue } from '../config/configuration.js';
import type { CheckpointBarrier } from '../runtime/channel/stream-element.js';
import type { CheckpointFailureReason } from '../runtime/checkpoint/coordinator-decisions.js';
import type { SubtaskCheckpointMetrics, SubtaskRestore } from '../runtime/checkpoint/subtask-state.js';
import type { SentSubtaskState } from './sent-subtask-state.js';
import type { BarrierMode } from '../runtime/checkpoint/barrier-handler.js';
import type { TaskState } from '../runtime/task/task-state.js';
import type { SplitAnswer } from '../runtime/split-enumerator.js';
import type { WatermarkReport } from '../runtime/watermark-alignment.js';
import { TaskFailure } from '../runtime/task/task-failure.js';
import { declaresNonRecoverable, type ThrowableType } from '../runtime/recovery/non-recoverable-error.js';
import { findNonRecoverable } from '../runtime/recovery/throwable-classifier.js';

/** A subtask of a job: vertex id and subtask index. */
export type SubtaskRef = readonly [vertexId: number, subtaskIndex: number];

export interface SerializedError {
  readonly message: string;
  readonly stack: string | undefined;
  /** Name of the subtask where it happened, when a subtask failed. */
  readonly task: string | undefined;
  /** The error's cause (what the job's code threw, under the task's failure). */
  readonly cause?: SerializedError;
  /** The error's class name, when not plain `Error` (`DataConnectionLost`: a consequence of a failure elsewhere). */
  readonly name?: string;
  /** Set when the error declares itself non-recoverable: the job fails without restarts (runtime/recovery/non-recoverable-error.ts). */
  readonly nonRecoverable?: true;
}

/** How deep a cause chain crosses the wire. */
const MAX_CAUSE_DEPTH = 8;

/** What a TaskManager needs to run its part of one attempt of a job. */
export interface Deployment {
  readonly jobId: string;
  readonly attempt: number;
  /** Content hash of the job bundle; the bundle itself is sent once per TaskManager. */
  readonly bundleId: string;
  readonly bundle: string | undefined;
  readonly jobArgs: readonly string[];
  readonly jobName: string;
  /** The job's configuration as given at submission (before the job module ran). */
  readonly config: readonly (readonly [string, ConfigValue])[];
  /** Fingerprint of the job graph the JobManager built; the TaskManager's must match. */
  readonly graph: string;
  /** TaskManager of every subtask: [vertexId, subtaskIndex, taskManagerId]. */
  readonly placement: readonly (readonly [number, number, string])[];
  /** Data addresses of the TaskManagers of this attempt. */
  readonly peers: readonly (readonly [string, string, number])[];
  /** Restored state of this TaskManager's subtasks, by subtaskKey. */
  readonly restore: readonly (readonly [string, SubtaskRestore])[] | undefined;
  /** Splits of this TaskManager's source subtasks, by subtaskKey. */
  readonly splits: readonly (readonly [string, unknown[]])[];
  readonly checkpointing:
    | {
        readonly mode: BarrierMode;
        readonly finalCheckpoint: boolean;
        readonly timeoutMs: number;
        readonly restartDelayMsMax: number;
        readonly incremental?: boolean;
        readonly changelog?: ChangelogOptions;
        /** The job's taskowned/ directory (filesystem checkpoint storage): where the TaskManager spills full snapshots, if it can reach it. */
        readonly taskOwnedDir?: string;
      }
    | undefined;
}

/** TaskManager -> JobManager. */
export type TaskManagerMessage =
  | {
      readonly t: 'register';
      readonly tm: string;
      readonly slots: number;
      readonly dataHost: string;
      readonly dataPort: number;
      readonly pid: number;
      readonly proof: string;
      /** Where the TaskManager serves /metrics. */
      readonly metricsUrl: string | undefined;
    }
  | { readonly t: 'heartbeat' }
  | { readonly t: 'deployed'; readonly jobId: string; readonly attempt: number }
  | { readonly t: 'deploy-failed'; readonly jobId: string; readonly attempt: number; readonly error: SerializedError }
  | { readonly t: 'task-state'; readonly jobId: string; readonly attempt: number; readonly subtask: SubtaskRef; readonly state: TaskState; readonly error: SerializedError | undefined }
  | {
      readonly t: 'ack';
      readonly jobId: string;
      readonly attempt: number;
      readonly subtask: SubtaskRef;
      readonly checkpointId: number;
      readonly state: SentSubtaskState;
      readonly metrics: SubtaskCheckpointMetrics;
    }
  | {
      readonly t: 'changelog';
      readonly jobId: string;
      readonly attempt: number;
      readonly subtask: SubtaskRef;
      readonly operatorUid: string;
      readonly position: number;
      readonly snapshot: KeyedStateSnapshot;
    }
  | {
      readonly t: 'decline';
      readonly jobId: string;
      readonly attempt: number;
      readonly subtask: SubtaskRef;
      readonly checkpointId: number;
      readonly reason: CheckpointFailureReason;
      readonly message: string;
    }
  | { readonly t: 'data-finished'; readonly jobId: string; readonly attempt: number; readonly subtask: SubtaskRef }
  /** A source subtask asks its split enumerator for a split (on-request sources). */
  | { readonly t: 'split-request'; readonly jobId: string; readonly attempt: number; readonly subtask: SubtaskRef }
  /** Watermark alignment: an aligned source subtask's watermark, every update interval. */
  | { readonly t: 'watermark-report'; readonly jobId: string; readonly attempt: number; readonly subtask: SubtaskRef; readonly report: WatermarkReport }
  | { readonly t: 'canceled'; readonly jobId: string; readonly attempt: number }
  /** Live counters: [vertexId, subtaskIndex, state, recordsIn, recordsOut, inputWatermarkMs, backPressuredTimeMsTotal]. */
  | { readonly t: 'progress'; readonly jobId: string; readonly attempt: number; readonly tasks: readonly (readonly [number, number, TaskState, number, number, number, number])[] }
  /** The answer to a metrics query: the job's task and operator metrics here, as [scope, variables, name, value]. */
  | { readonly t: 'metrics'; readonly id: number; readonly samples: readonly RemoteMetricSample[] };

/** A metric sample on the wire (MetricSample without its kind: every metric is reported as a gauge). */
export type RemoteMetricSample = readonly [scope: readonly string[], variables: Readonly<Record<string, string>>, name: string, value: number];

/** JobManager -> TaskManager. */
export type JobManagerMessage =
  /** `leaderSessionId` (high availability): the leader session of the JobManager, absent when it does not lead or has no election. */
  | { readonly t: 'registered'; readonly heartbeatIntervalMs: number; readonly heartbeatTimeoutMs: number; readonly leaderSessionId?: string | undefined }
  /** Registration refused (wrong cluster secret); the JobManager closes the connection. */
  | { readonly t: 'refused'; readonly reason: string }
  | { readonly t: 'heartbeat' }
  /** These four carry the sender's leader session (`FencedMessage`): a TaskManager ignores an older leader's. */
  | { readonly t: 'deploy'; readonly deployment: Deployment; readonly leaderSessionId?: string | undefined }
  | { readonly t: 'start'; readonly jobId: string; readonly attempt: number; readonly leaderSessionId?: string | undefined }
  | { readonly t: 'trigger'; readonly jobId: string; readonly attempt: number; readonly barrier: CheckpointBarrier; readonly leaderSessionId?: string | undefined }
  | { readonly t: 'complete'; readonly jobId: string; readonly attempt: number; readonly checkpointId: number; readonly final: boolean; readonly leaderSessionId?: string | undefined }
  | { readonly t: 'abort'; readonly jobId: string; readonly attempt: number; readonly checkpointId: number; readonly reason: string }
  | { readonly t: 'stop-sources'; readonly jobId: string; readonly attempt: number; readonly drain: boolean }
  /** The enumerator's answer to a split request: on this connection, in order with the triggers. */
  | { readonly t: 'assign-split'; readonly jobId: string; readonly attempt: number; readonly subtask: SubtaskRef; readonly answer: SplitAnswer }
  /** Watermark alignment: the answer to a report, the watermark the subtask may reach. */
  | { readonly t: 'max-watermark'; readonly jobId: string; readonly attempt: number; readonly subtask: SubtaskRef; readonly maxWatermarkMs: number }
  | { readonly t: 'cancel'; readonly jobId: string; readonly attempt: number }
  /** Flink's metric fetcher: the TaskManager answers with `metrics` of the same id. */
  | { readonly t: 'metrics-query'; readonly id: number; readonly jobId: string };

/** The JobManager messages that carry its leader session (fencing). */
export const FENCED_MESSAGES: ReadonlySet<JobManagerMessage['t']> = new Set(['deploy', 'start', 'trigger', 'complete']);

export function serializeError(e: unknown, task?: string, depth = 0): SerializedError {
  const err = e instanceof Error ? e : new Error(String(e));
  const cause = err.cause instanceof Error && depth < MAX_CAUSE_DEPTH ? serializeError(err.cause, undefined, depth + 1) : undefined;
  return {
    message: err.message,
    stack: err.stack,
    task: task ?? (err instanceof TaskFailure ? err.taskName : undefined),
    ...(cause === undefined ? {} : { cause }),
    ...(err.name === 'Error' || err instanceof TaskFailure ? {} : { name: err.name }),
    // A cause left off (too deep, or not an Error) still makes the error non-recoverable.
    ...(declaresNonRecoverable(err) || (cause === undefined && findNonRecoverable(err.cause) !== undefined) ? { nonRecoverable: true as const } : {}),
  };
}

/** The error again, with its cause chain; a subtask's failure as a TaskFailure naming the task. */
export function deserializeError(s: SerializedError): Error {
  const cause = s.cause === undefined ? undefined : deserializeError(s.cause);
  // A task's own failure says which task already; other errors get the task's name in front.
  const message = s.task === undefined || s.message.includes(`task ${s.task}`) ? s.message : `${s.task}: ${s.message}`;
  const named = (x: Error): Error => {
    if (s.name !== undefined) x.name = s.name;
    return x;
  };
  const e = s.task === undefined ? named(new Error(message, cause === undefined ? undefined : { cause })) : new TaskFailure(s.task, message, { cause: cause ?? named(new Error(s.message)) });
  if (s.stack !== undefined) e.stack = s.stack;
  if (s.nonRecoverable === true) Object.defineProperty(e, 'throwableType', { value: 'NonRecoverableError' satisfies ThrowableType, enumerable: false });
  return e;
}
