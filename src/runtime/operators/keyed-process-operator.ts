import type { KeyedProcessFunction } from '../../api/functions.js';
import type { KeyType } from '../state/key-group.js';
import { RecordContext, keyedRuntimeContext } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { NO_TIMESTAMP } from '../channel/stream-element.js';
import { TimestampedCollector } from './timestamped-collector.js';

export class KeyedProcessOperator<K extends KeyType, IN, OUT> extends KeyedOperator<OUT> {
  private ctx!: RecordContext<K>;
  private collector!: TimestampedCollector<OUT>;

  private readonly fn: KeyedProcessFunction<K, IN, OUT>;

  constructor(fn: KeyedProcessFunction<K, IN, OUT>) {
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
    this.fn.processElement(value as IN, this.ctx, this.collector);
  }

  override onEventTime(timestampMs: number): void {
    this.fireTimer(timestampMs, 'EVENT_TIME');
  }

  override onProcessingTime(timestampMs: number): void {
    this.fireTimer(timestampMs, 'PROCESSING_TIME');
  }

  private fireTimer(timestampMs: number, domain: 'EVENT_TIME' | 'PROCESSING_TIME'): void {
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
