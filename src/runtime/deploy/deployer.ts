import type { JobGraph, JobVertex } from '../../graph/job-graph.js';
import type { CheckpointBarrier } from '../channel/stream-element.js';
import type { SubtaskRestore } from '../checkpoint/subtask-state.js';
import type { TaskCheckpointing } from '../task/stream-task.js';
import type { TaskState } from '../task/task-state.js';
import type { SplitAnswer } from '../split-enumerator.js';
import type { WatermarkReport } from '../watermark-alignment.js';

/** What the job executor sees of a subtask, wherever it runs. */
export interface TaskView {
  readonly vertex: JobVertex;
  readonly subtaskIndex: number;
  readonly state: TaskState;
  readonly recordsIn: number;
  recordsOut(): number;
  /** Lowest event-time watermark over the task's inputs. */
  inputWatermarkMs(): number;
  /** Milliseconds the task has waited for room in its outputs, since it started. */
  backPressuredTimeMsTotal(): number;
  /** Which attempt of the job this task belongs to (0 first, +1 each restart). */
  readonly attemptNumber: number;
  /** The TaskManager it runs on (undefined: this process, the embedded runtime). */
  readonly taskManagerId?: string;
}

/** One deployment of the whole job (an attempt), as the executor asks for it. */
export interface AttemptSpec {
  readonly attemptNumber: number;
  readonly graph: JobGraph;
  /** State to start from, by subtaskKey(vertex id, subtask); undefined on a fresh start. */
  readonly restore: ReadonlyMap<string, SubtaskRestore> | undefined;
  /** Splits of every source subtask, by subtaskKey (none for on-request sources: their enumerator holds them). */
  readonly splits: ReadonlyMap<string, unknown[]>;
  /** A source subtask asks its enumerator for a split; the answer goes back with `assignSplit`. */
  readonly requestSplit: (vertexId: number, subtaskIndex: number) => void;
  /** A source subtask of an aligned group reports its watermark; the answer goes back with `announceMaxWatermark`. */
  readonly reportWatermark: (vertexId: number, subtaskIndex: number, report: WatermarkReport) => void;
  /** Absent when checkpointing is off; its responder is the coordinator. */
  readonly checkpointing: TaskCheckpointing | undefined;
  /** A subtask failed (or its process died): the attempt is over. */
  readonly fail: (error: Error) => void;
}

/** The tasks of an attempt, deployed somewhere: in this process or on TaskManagers. */
export interface DeployedAttempt {
  readonly tasks: readonly TaskView[];
  /** Restores every task's state; rejects when one cannot start. */
  initialize(): Promise<void>;
  /** Starts processing everywhere. */
  start(): void;
  /** Resolves when every task has finished; rejects with the first failure. */
  readonly done: Promise<void>;
  /**
   * Cancels every task; resolves when all have stopped and closed their operators (a sink
   * writer's requests to an external system are over), as Flink restarts a job only once every
   * task of the failed attempt is terminal: the next attempt's operators must not overlap them.
   */
  cancel(): Promise<void>;
  triggerSources(barrier: CheckpointBarrier): void;
  notifyComplete(checkpointId: number, final: boolean): void;
  notifyAborted(checkpointId: number, reason: string): void;
  /** Stop-with-savepoint: sources stop (with `drain`, event time is closed first). */
  stopSources(drain: boolean): void;
  /** The enumerator's answer to a source subtask's split request, on the path the triggers take. */
  assignSplit(vertexId: number, subtaskIndex: number, answer: SplitAnswer): void;
  /** Watermark alignment: the watermark a source subtask may reach (the answer to its report). */
  announceMaxWatermark(vertexId: number, subtaskIndex: number, maxWatermarkMs: number): void;
}

/** A deployment waiting for TaskManager slots (Flink's pending slot request). */
export interface SlotRequest {
  /** Slots the attempt needs (its highest parallelism). */
  readonly required: number;
  /** Free slots of the live TaskManagers now. */
  readonly available: number;
  readonly sinceMs: number;
  /** When the request fails and the attempt with it (slot.request.timeout after `sinceMs`). */
  readonly timeoutAtMs: number;
}

/** Places the subtasks of an attempt and runs them. */
export interface Deployer {
  deploy(spec: AttemptSpec): Promise<DeployedAttempt>;
  /** The deployer is no longer needed (the job ended). */
  close?(): Promise<void>;
  /** The slot request a deployment under way waits on; undefined when none waits (or there are no slots). */
  pendingSlotRequest?(): SlotRequest | undefined;
}
