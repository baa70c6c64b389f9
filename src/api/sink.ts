export interface SinkWriterContext {
  readonly subtaskIndex: number;
  readonly parallelism: number;
  readonly attemptNumber: number;
}

/**
 * Writes the records of one sink subtask. `write` may return a promise: the subtask then
 * reads no more input until it settles, so a slow external system backpressures the job.
 */
export interface SinkWriter<T> {
  write(value: T, timestampMs: number | undefined): void | Promise<void>;
  /** Push out what is buffered; `endOfInput` when no record follows. */
  flush?(endOfInput: boolean): void | Promise<void>;
  close?(): void | Promise<void>;
}

export interface Sink<T> {
  createWriter(ctx: SinkWriterContext): SinkWriter<T> | Promise<SinkWriter<T>>;
}
