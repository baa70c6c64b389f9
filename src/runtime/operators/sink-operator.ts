import type { Sink, SinkWriter } from '../../api/sink.js';
import { NO_TIMESTAMP } from '../channel/stream-element.js';
import { StreamOperator } from '../task/stream-operator.js';

/** The end of a chain: hands records to a sink writer. */
export class SinkOperator<T> extends StreamOperator<never> {
  private writer!: SinkWriter<T>;

  constructor(private readonly sink: Sink<T>) {
    super();
  }

  override async open(): Promise<void> {
    const rt = this.runtime;
    this.writer = await this.sink.createWriter({ subtaskIndex: rt.subtaskIndex, parallelism: rt.parallelism, attemptNumber: rt.attemptNumber });
  }

  processElement(value: unknown, timestampMs: number): void {
    const r = this.writer.write(value as T, timestampMs === NO_TIMESTAMP ? undefined : timestampMs);
    if (r !== undefined) this.runtime.waitFor(r);
  }

  override finish(): void | Promise<void> {
    return this.writer.flush?.(true);
  }

  override close(): void | Promise<void> {
    return this.writer?.close?.();
  }
}
