import type { KeyedProcessFunction } from '../../api/functions.js';
import { expectNothingReturned } from './synchronous-function.js';
import type { KeyType } from '../state/key-group.js';
import { RecordContext, fireKeyedTimer, keyedRuntimeContext } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { TimestampedCollector } from './timestamped-collector.js';

export class KeyedProcessOperator<K extends KeyType, IN, OUT> extends KeyedOperator<OUT> {
  private ctx!: RecordContext<K>;
  private collector!: TimestampedCollector<OUT>;

  private readonly fn: KeyedProcessFunction<K, IN, OUT>;

  constructor(fn: KeyedProcessFunction<K, IN, OUT>) {
    super();
    this.fn = perSubtask(fn);
    this.userFunction = this.fn;
  }

  protected override openKeyed(): void | Promise<void> {
    this.ctx = new RecordContext<K>(this.runtime, this.output as never, this.timers, () => this.currentWatermark);
    this.collector = new TimestampedCollector(this.output);
    return this.fn.open?.(keyedRuntimeContext<K>(this.runtime));
  }

  processElement(value: unknown, timestampMs: number): void {
    this.setKeyOf(value);
    this.ctx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    const r = this.fn.processElement(value as IN, this.ctx, this.collector) as unknown;
    if (r !== undefined) expectNothingReturned(r, 'processElement function');
  }

  override onEventTime(timestampMs: number): void {
    fireKeyedTimer(this.fn.onTimer?.bind(this.fn), this.ctx, this.collector, timestampMs, 'EVENT_TIME');
  }

  override onProcessingTime(timestampMs: number): void {
    fireKeyedTimer(this.fn.onTimer?.bind(this.fn), this.ctx, this.collector, timestampMs, 'PROCESSING_TIME');
  }
}
