import { operatorListState, type ListState } from '../../api/state-descriptors.js';
import type { Sink, SinkWriter } from '../../api/sink.js';
import { NO_TIMESTAMP } from '../channel/stream-element.js';
import { blame, StreamOperator } from '../task/stream-operator.js';

/** The end of a chain: hands records to a sink writer and drives its checkpoint hooks. */
export class SinkOperator<T> extends StreamOperator<never> {
  private writer!: SinkWriter<T>;
  private writerState!: ListState<unknown>;

  constructor(private readonly sink: Sink<T>) {
    super();
  }

  override async open(): Promise<void> {
    const rt = this.runtime;
    this.writerState = rt.operatorState.getListState(operatorListState<unknown>('_sink-writer-state'));
    this.writer = await this.sink.createWriter(
      {
        subtaskIndex: rt.subtaskIndex,
        parallelism: rt.parallelism,
        attemptNumber: rt.attemptNumber,
        ...(rt.restoredCheckpointId === undefined ? {} : { restoredCheckpointId: rt.restoredCheckpointId }),
        checkpointing: rt.checkpointing,
        ...(rt.checkpointTimeoutMs === undefined ? {} : { checkpointTimeoutMs: rt.checkpointTimeoutMs }),
        ...(rt.restartDelayMsMax === undefined ? {} : { restartDelayMsMax: rt.restartDelayMsMax }),
      },
      this.writerState.get(),
    );
  }

  /** The last write still running: writes happen one after the other, in order. */
  private writing: Promise<void> | null = null;

  processElement(value: unknown, timestampMs: number): void {
    const ts = timestampMs === NO_TIMESTAMP ? undefined : timestampMs;
    const before = this.writing;
    if (before !== null) {
      // A source emitted more records in the same poll while a write was running.
      const next: Promise<void> = before.then(() => this.writer.write(value as T, ts));
      this.track(next);
      return;
    }
    const r = this.writer.write(value as T, ts);
    if (r !== undefined) this.track(r);
  }

  private track(p: Promise<void>): void {
    this.writing = p;
    void p.then(
      () => {
        if (this.writing === p) this.writing = null;
      },
      () => {},
    );
    // A failed write fails the subtask naming this sink, not the head of its chain.
    this.runtime.waitFor(p.catch((e: unknown) => Promise.reject(blame(e, this))));
  }

  override snapshotState(checkpointId: number): void | Promise<void> {
    const prepared = this.writer.prepareCommit?.(checkpointId);
    this.writerState.update(this.writer.snapshotState?.(checkpointId) ?? []);
    return prepared;
  }

  override notifyCheckpointComplete(checkpointId: number): void | Promise<void> {
    return this.writer.notifyCheckpointComplete?.(checkpointId);
  }

  override notifyCheckpointAborted(checkpointId: number): void | Promise<void> {
    return this.writer.notifyCheckpointAborted?.(checkpointId);
  }

  override finish(): void | Promise<void> {
    return this.writer.flush?.(true);
  }

  override close(): void | Promise<void> {
    return this.writer?.close?.();
  }
}
