import type { ProcessFunction } from '../../api/functions.js';
import { expectNothingReturned } from './synchronous-function.js';
import { StreamOperator } from '../task/stream-operator.js';
import { RecordContext, runtimeContext } from './contexts.js';
import { perSubtask } from './keyed-operator.js';
import { TimestampedCollector } from './timestamped-collector.js';

export class ProcessOperator<IN, OUT> extends StreamOperator<OUT> {
  private ctx!: RecordContext<never>;
  private collector!: TimestampedCollector<OUT>;

  private readonly fn: ProcessFunction<IN, OUT>;

  constructor(fn: ProcessFunction<IN, OUT>) {
    super();
    this.fn = perSubtask(fn);
    this.userFunction = this.fn;
  }

  override open(): void | Promise<void> {
    this.ctx = new RecordContext(this.runtime, this.output as never, undefined, () => this.currentWatermark);
    this.collector = new TimestampedCollector(this.output);
    return this.fn.open?.(runtimeContext(this.runtime));
  }

  processElement(value: unknown, timestampMs: number): void {
    this.ctx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    const r = this.fn.processElement(value as IN, this.ctx, this.collector) as unknown;
    if (r !== undefined) expectNothingReturned(r, 'processElement function');
  }

}
