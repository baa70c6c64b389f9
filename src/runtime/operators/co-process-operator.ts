import type { CoProcessFunction, KeyedCoProcessFunction } from '../../api/functions.js';
import type { KeyType } from '../state/key-group.js';
import { StreamOperator } from '../task/stream-operator.js';
import { RecordContext, fireKeyedTimer, keyedRuntimeContext, runtimeContext } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { KeyTypeAgreement } from './key-type-agreement.js';
import { TimestampedCollector } from './timestamped-collector.js';

/** Two inputs, one function: connect(...).process(...). */
export class CoProcessOperator<IN1, IN2, OUT> extends StreamOperator<OUT> {
  private ctx!: RecordContext<never>;
  private collector!: TimestampedCollector<OUT>;

  private readonly fn: CoProcessFunction<IN1, IN2, OUT>;

  constructor(fn: CoProcessFunction<IN1, IN2, OUT>) {
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
    this.fn.processElement1(value as IN1, this.ctx, this.collector);
  }

  override processElement2(value: unknown, timestampMs: number): void {
    this.ctx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    this.fn.processElement2(value as IN2, this.ctx, this.collector);
  }

}

/** Two keyed inputs sharing keyed state and timers. */
export class KeyedCoProcessOperator<K extends KeyType, IN1, IN2, OUT> extends KeyedOperator<OUT> {
  private readonly keyTypes = new KeyTypeAgreement('connect(...).keyBy(key1, key2)');
  private ctx!: RecordContext<K>;
  private collector!: TimestampedCollector<OUT>;

  private readonly fn: KeyedCoProcessFunction<K, IN1, IN2, OUT>;

  constructor(fn: KeyedCoProcessFunction<K, IN1, IN2, OUT>) {
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
    this.keyTypes.check(0, this.backend.getCurrentKey());
    this.ctx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    this.fn.processElement1(value as IN1, this.ctx, this.collector);
  }

  override processElement2(value: unknown, timestampMs: number): void {
    const selector = this.runtime.keySelector2;
    if (selector === undefined) throw new Error(`operator '${this.runtime.name}': the second input is not keyed`);
    this.setKeyWith(selector, value);
    this.keyTypes.check(1, this.backend.getCurrentKey());
    this.ctx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    this.fn.processElement2(value as IN2, this.ctx, this.collector);
  }

  override onEventTime(timestampMs: number): void {
    fireKeyedTimer(this.fn.onTimer?.bind(this.fn), this.ctx, this.collector, timestampMs, 'EVENT_TIME');
  }

  override onProcessingTime(timestampMs: number): void {
    fireKeyedTimer(this.fn.onTimer?.bind(this.fn), this.ctx, this.collector, timestampMs, 'PROCESSING_TIME');
  }
}
