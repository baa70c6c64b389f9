import type { KeySelector, OperatorStateStore } from '../../api/functions.js';
import type { KeyType } from '../state/key-group.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import type { ProcessingTimeService } from './processing-time-service.js';

/** What a subtask gives each operator of its chain. */
export interface OperatorRuntime {
  readonly name: string;
  readonly uid: string;
  readonly subtaskIndex: number;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly attemptNumber: number;
  /** The checkpoint or savepoint this attempt restored (undefined: a fresh start, without state). */
  readonly restoredCheckpointId: number | undefined;
  /** Whether the job takes checkpoints. */
  readonly checkpointing: boolean;
  /** With checkpoints: the checkpoint timeout and the restart strategy's longest delay (ms). */
  readonly checkpointTimeoutMs?: number | undefined;
  readonly restartDelayMsMax?: number | undefined;
  readonly processingTime: ProcessingTimeService;
  readonly operatorState: OperatorStateStore;
  /** Present for operators on keyed streams. */
  readonly keyedBackend: KeyedStateBackend | undefined;
  readonly keySelector1: KeySelector<unknown, KeyType> | undefined;
  readonly keySelector2: KeySelector<unknown, KeyType> | undefined;
  /** Suspends the subtask's input and mail until the promise settles (an asynchronous write). */
  waitFor(promise: Promise<void>): void;
  /** Suspends the subtask's input, not its mail, until the promise settles (an async operator's full queue). */
  pauseInput(promise: Promise<void>): void;
  /** Runs `mail` on the subtask's thread between records, in order with timers and checkpoints (nothing once the subtask ended). */
  enqueueMail(mail: () => void): void;
  /**
   * Present when the subtask runs long work in bounded slices: true once the current slice
   * has used its time, or its output is full. Firing timers (a watermark's, or processing-time
   * ones) then stops part-way and hands the rest to `defer`.
   */
  readonly shouldYield?: (() => boolean) | undefined;
  /**
   * Work that stopped part-way: the subtask calls `rest` at the start of its next slices,
   * before any mail or input, until it returns true (done).
   */
  readonly defer?: ((rest: () => boolean) => void) | undefined;
}
