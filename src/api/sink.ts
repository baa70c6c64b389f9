export interface SinkWriterContext {
  readonly subtaskIndex: number;
  readonly parallelism: number;
  readonly attemptNumber: number;
  /**
   * The checkpoint or savepoint the job restored this attempt from (Flink's
   * `InitContext.getRestoredCheckpointId()`); undefined on a fresh start, also after a restart
   * that found no completed checkpoint. Every subtask gets it, also one that restored no state
   * of its own (a new subtask after a rescale).
   */
  readonly restoredCheckpointId?: number;
  /** Whether the job takes checkpoints (transactional sinks commit per checkpoint then). */
  readonly checkpointing?: boolean;
  /**
   * With checkpoints: `execution.checkpointing.timeout` and the restart strategy's longest
   * delay, in ms. A transaction pre-committed at a barrier may stay open for both before it
   * commits, so transactional sinks check their transaction timeout against them.
   */
  readonly checkpointTimeoutMs?: number;
  readonly restartDelayMsMax?: number;
}

/**
 * Writes the records of one sink subtask. `write` may return a promise: the subtask then
 * reads no more input until it settles, so a slow external system backpressures the job.
 *
 * Checkpoint hooks, in order at a barrier: `prepareCommit` (flush; what was written before
 * the barrier becomes committable; a promise delays the checkpoint's acknowledgement, not the
 * records after the barrier), then `snapshotState` (the writer's state, e.g. its pending
 * transactions, kept in the checkpoint and handed back to `createWriter` on restore).
 */
export interface SinkWriter<in T> {
  write(value: T, timestampMs: number | undefined): void | Promise<void>;
  /** Push out what is buffered; `endOfInput` when no record follows. */
  flush?(endOfInput: boolean): void | Promise<void>;
  prepareCommit?(checkpointId: number): void | Promise<void>;
  snapshotState?(checkpointId: number): unknown[];
  /** The checkpoint is complete: commit what was prepared for it and before. */
  notifyCheckpointComplete?(checkpointId: number): void | Promise<void>;
  notifyCheckpointAborted?(checkpointId: number): void | Promise<void>;
  close?(): void | Promise<void>;
}

export interface Sink<in T> {
  /** `restoredState`: what writers' `snapshotState` returned, redistributed to this subtask (empty on a fresh start). */
  createWriter(ctx: SinkWriterContext, restoredState: readonly unknown[]): SinkWriter<T> | Promise<SinkWriter<T>>;
}
