import type { Sink, SinkWriter } from '../api/sink.js';

/** Collects every record in memory (tests, examples); all subtasks share one list. */
export class CollectSink<T> implements Sink<T> {
  readonly values: T[] = [];
  readonly timestamps: (number | undefined)[] = [];
  /** Records per subtask, in arrival order. */
  readonly bySubtask = new Map<number, T[]>();

  createWriter(ctx: { subtaskIndex: number }): SinkWriter<T> {
    const mine: T[] = [];
    this.bySubtask.set(ctx.subtaskIndex, mine);
    return {
      write: (value, timestampMs) => {
        this.values.push(value);
        this.timestamps.push(timestampMs);
        mine.push(value);
      },
    };
  }
}
