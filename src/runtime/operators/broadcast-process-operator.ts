import type { BroadcastState, BroadcastStateDescriptor } from '../../api/broadcast-state.js';
import type { BroadcastProcessFunction, Collector, KeyedBroadcastContext, KeyedBroadcastProcessFunction, OnTimerContext } from '../../api/functions.js';
import type { KeyedStateDescriptor } from '../../api/state-descriptors.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import type { KeyType } from '../state/key-group.js';
import type { InternalTimerService } from '../task/internal-timer-service.js';
import type { OperatorRuntime } from '../task/operator-runtime.js';
import type { Output } from '../task/output.js';
import { StreamOperator } from '../task/stream-operator.js';
import { BroadcastStateStore } from './broadcast-state-store.js';
import { RecordContext, fireKeyedTimer, keyedRuntimeContext, runtimeContext } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { TimestampedCollector } from './timestamped-collector.js';

/** A record context with the operator's broadcast states: read-only, or writable for the broadcast input. */
class BroadcastRecordContext<K extends KeyType> extends RecordContext<K> {
  constructor(
    rt: OperatorRuntime,
    out: Output<unknown>,
    timers: InternalTimerService | undefined,
    watermark: () => number,
    private readonly store: BroadcastStateStore,
    private readonly writable: boolean,
  ) {
    super(rt, out, timers, watermark);
  }

  getBroadcastState<BK, BV>(descriptor: BroadcastStateDescriptor<BK, BV>): BroadcastState<BK, BV> {
    return this.store.get(descriptor, this.writable);
  }
}

/**
 * The context of a broadcast record on a keyed stream: it also goes through the keyed state
 * of every key of the subtask (Flink's applyToKeyedState).
 */
class KeyedBroadcastRecordContext extends BroadcastRecordContext<never> {
  constructor(
    rt: OperatorRuntime,
    out: Output<unknown>,
    watermark: () => number,
    store: BroadcastStateStore,
    private readonly keyedBackend: KeyedStateBackend,
  ) {
    super(rt, out, undefined, watermark, store, true);
  }

  applyToKeyedState(descriptor: KeyedStateDescriptor, fn: (key: KeyType, state: unknown) => void): void {
    const backend = this.keyedBackend;
    const state = backend.getOrCreateState(descriptor, false);
    // The keys as they are now: fn may write and clear entries as it goes.
    for (const key of backend.keys(descriptor.name, 0)) {
      backend.setCurrentKey(key);
      fn(key, state);
    }
  }
}

/**
 * `stream.connect(broadcastStream).process(fn)`: input 1 is the stream, input 2 the broadcast
 * stream (every subtask gets every record); the broadcast states live in operator state
 * (broadcast-state-store.ts).
 */
export class BroadcastProcessOperator<IN1, IN2, OUT> extends StreamOperator<OUT> {
  private ctx!: BroadcastRecordContext<never>;
  private broadcastCtx!: BroadcastRecordContext<never>;
  private collector!: TimestampedCollector<OUT>;
  private store!: BroadcastStateStore;
  private readonly fn: BroadcastProcessFunction<IN1, IN2, OUT>;

  constructor(
    fn: BroadcastProcessFunction<IN1, IN2, OUT>,
    private readonly descriptors: readonly BroadcastStateDescriptor<unknown, unknown>[],
  ) {
    super();
    this.fn = perSubtask(fn);
    this.userFunction = this.fn;
  }

  override open(): void | Promise<void> {
    this.store = new BroadcastStateStore(this.runtime, this.descriptors);
    const watermark = () => this.currentWatermark;
    this.ctx = new BroadcastRecordContext(this.runtime, this.output as never, undefined, watermark, this.store, false);
    this.broadcastCtx = new BroadcastRecordContext(this.runtime, this.output as never, undefined, watermark, this.store, true);
    this.collector = new TimestampedCollector(this.output);
    return this.fn.open?.(runtimeContext(this.runtime));
  }

  processElement(value: unknown, timestampMs: number): void {
    this.ctx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    this.fn.processElement(value as IN1, this.ctx, this.collector);
  }

  override processElement2(value: unknown, timestampMs: number): void {
    this.broadcastCtx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    this.fn.processBroadcastElement(value as IN2, this.broadcastCtx, this.collector);
  }

  override snapshotState(checkpointId: number): void | Promise<void> {
    this.store.snapshot();
    return super.snapshotState(checkpointId);
  }
}

/** `keyedStream.connect(broadcastStream).process(fn)`: keyed state and timers on input 1; input 2 has no key. */
export class KeyedBroadcastProcessOperator<K extends KeyType, IN1, IN2, OUT> extends KeyedOperator<OUT> {
  private ctx!: BroadcastRecordContext<K>;
  private broadcastCtx!: KeyedBroadcastRecordContext;
  private collector!: TimestampedCollector<OUT>;
  private store!: BroadcastStateStore;
  private readonly fn: KeyedBroadcastProcessFunction<K, IN1, IN2, OUT>;

  constructor(
    fn: KeyedBroadcastProcessFunction<K, IN1, IN2, OUT>,
    private readonly descriptors: readonly BroadcastStateDescriptor<unknown, unknown>[],
  ) {
    super();
    this.fn = perSubtask(fn);
    this.userFunction = this.fn;
  }

  protected override openKeyed(): void | Promise<void> {
    this.store = new BroadcastStateStore(this.runtime, this.descriptors);
    const watermark = () => this.currentWatermark;
    this.ctx = new BroadcastRecordContext<K>(this.runtime, this.output as never, this.timers, watermark, this.store, false);
    // The broadcast input has no key: no timers; keyed state only through applyToKeyedState.
    this.broadcastCtx = new KeyedBroadcastRecordContext(this.runtime, this.output as never, watermark, this.store, this.backend);
    this.collector = new TimestampedCollector(this.output);
    return this.fn.open?.(keyedRuntimeContext<K>(this.runtime));
  }

  processElement(value: unknown, timestampMs: number): void {
    this.setKeyOf(value);
    this.ctx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    this.fn.processElement(value as IN1, this.ctx, this.collector);
  }

  override processElement2(value: unknown, timestampMs: number): void {
    this.broadcastCtx.timestampMs = timestampMs;
    this.collector.timestampMs = timestampMs;
    this.fn.processBroadcastElement(value as IN2, this.broadcastCtx as unknown as KeyedBroadcastContext<K>, this.collector);
  }

  /** The function's onTimer: its context is `ctx`, which has the broadcast states. */
  private onTimer(): ((timestampMs: number, ctx: OnTimerContext<K>, out: Collector<OUT>) => void) | undefined {
    return this.fn.onTimer?.bind(this.fn) as ((timestampMs: number, ctx: OnTimerContext<K>, out: Collector<OUT>) => void) | undefined;
  }

  override onEventTime(timestampMs: number): void {
    fireKeyedTimer(this.onTimer(), this.ctx, this.collector, timestampMs, 'EVENT_TIME');
  }

  override onProcessingTime(timestampMs: number): void {
    fireKeyedTimer(this.onTimer(), this.ctx, this.collector, timestampMs, 'PROCESSING_TIME');
  }

  override snapshotState(checkpointId: number): void | Promise<void> {
    this.store.snapshot();
    return super.snapshotState(checkpointId);
  }
}
