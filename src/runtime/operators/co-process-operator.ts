import type { CoProcessFunction, KeyedCoProcessFunction } from '../../api/functions.js';
import type { KeyType } from '../state/key-group.js';
import { StreamOperator } from '../task/stream-operator.js';
import { RecordContext, keyedRuntimeContext, runtimeContext } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { NO_TIMESTAMP } from '../channel/stream-element.js';
import { TimestampedCollector } from './timestamped-collector.js';

/** Two inputs, one function: connect(...).process(...). */
export class CoProcessOperator<IN1, IN2, OUT> extends StreamOperator<OUT> {
  private ctx!: RecordContext<never>;
  private collector!: TimestampedCollector<OUT>;

  private readonly fn: CoProcessFunction<IN1, IN2, OUT>;

  constructor(fn: CoProcessFunction<IN1, IN2, OUT>) {
    super();
    this.fn = perSubtask(fn);
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

  override snapshotState(checkpointId: number): void | Promise<void> {
    return this.fn.snapshotState?.(checkpointId);
  }

  override notifyCheckpointComplete(checkpointId: number): void | Promise<void> {
    return this.fn.notifyCheckpointComplete?.(checkpointId);
  }

  override notifyCheckpointAborted(checkpointId: number): void | Promise<void> {
    return this.fn.notifyCheckpointAborted?.(checkpointId);
  }

  override close(): void | Promise<void> {
    return this.fn.close?.();
  }
}

/** Two keyed inputs sharing keyed state and timers. */
export class KeyedCoProcessOperator<K extends KeyType, IN1, IN2, OUT> extends KeyedOperator<OUT> {
  private ctx!: RecordContext<K>;
  private collector!: TimestampedCollector<OUT>;

  private readonly fn: KeyedCoProcessFunction<K, IN1, IN2, OUT>;

  constructor(fn: KeyedCoProcessFunction<K, IN1, IN2, OUT>) {
    super();
    this.fn = perSubtask(fn);
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
    this.fn.processElement1(value as IN1, this.ctx, this.collector);
  }

  override processElement2(value: unknown, timestampMs: number): void {
    const selector = this.runtime.keySelector2;
    if (selector === undefined) throw new Error(`operator '${this.runtime.name}': the second input is not keyed`);
    this.backend.setCurrentKey(selector(value));
    this.ctx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    this.fn.processElement2(value as IN2, this.ctx, this.collector);
  }

  override onEventTime(timestampMs: number): void {
    this.fire(timestampMs, 'EVENT_TIME');
  }

  override onProcessingTime(timestampMs: number): void {
    this.fire(timestampMs, 'PROCESSING_TIME');
  }

  private fire(timestampMs: number, domain: 'EVENT_TIME' | 'PROCESSING_TIME'): void {
    if (this.fn.onTimer === undefined) return;
    this.ctx.timestampMs = timestampMs;
    this.ctx.domain = domain;
    // As Flink: output of an event-time timer carries the timer's time; output of a
    // processing-time timer has no event timestamp (side outputs carry the timer's time).
    this.collector.timestampMs = domain === 'EVENT_TIME' ? timestampMs : NO_TIMESTAMP;
    this.fn.onTimer(timestampMs, this.ctx, this.collector);
    this.ctx.domain = 'EVENT_TIME';
  }

  override snapshotState(checkpointId: number): void | Promise<void> {
    return this.fn.snapshotState?.(checkpointId);
  }

  override notifyCheckpointComplete(checkpointId: number): void | Promise<void> {
    return this.fn.notifyCheckpointComplete?.(checkpointId);
  }

  override notifyCheckpointAborted(checkpointId: number): void | Promise<void> {
    return this.fn.notifyCheckpointAborted?.(checkpointId);
  }

  override close(): void | Promise<void> {
    return this.fn.close?.();
  }
}
