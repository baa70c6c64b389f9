import { TriggerWindowOperator } from '../runtime/operators/trigger-window-operator.js';
import { WindowOperator } from '../runtime/operators/window-operator.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { SingleOutputStream } from './data-stream.js';
import { FieldAggregations } from './field-aggregation.js';
import type { ReduceFunction } from './functions.js';
import type { KeyedStream } from './keyed-stream.js';
import type { OutputTag } from './output-tag.js';
import type { AggregateFunction } from './state-descriptors.js';
import {
  processWindowFunction,
  resultWindowFunction,
  type ProcessWindowFunction,
  type WindowFunctionSpec,
  type WindowMapFunction,
  type WindowProcessOutputNotInferred,
  type WindowResultFunction,
  type WindowResultOutputNotInferred,
} from './window-functions.js';
import type { Evictor } from './evictors.js';
import { EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger, type Trigger } from './triggers.js';
import type { WindowAssigner } from './windows.js';

/** Windows over a keyed stream; finish with reduce, aggregate or process. */
export class WindowedStream<T, K extends KeyType> extends FieldAggregations<T> {
  private allowedLatenessMs = 0;
  private lateDataTag: OutputTag<T> | undefined;
  private slicing = true;
  private customTrigger: Trigger<T> | undefined;
  private customEvictor: Evictor<T> | undefined;

  constructor(
    private readonly keyed: KeyedStream<T, K>,
    private readonly assigner: WindowAssigner,
  ) {
    super();
  }

  /** Keep windows this long after the watermark passed their end; late records fire them again. */
  allowedLateness(ms: number): this {
    if (!(ms >= 0)) throw new RangeError(`allowed lateness must be >= 0 ms, got ${ms}`);
    if (this.assigner.time === 'processing-time' && ms > 0) throw new Error('allowed lateness applies to event-time windows only');
    this.allowedLatenessMs = ms;
    return this;
  }

  /** Records too late for every window they belong to go to this side output instead of being dropped. */
  sideOutputLateData(tag: OutputTag<T>): this {
    this.lateDataTag = tag;
    return this;
  }

  /**
   * Decides when windows fire and purge instead of the assigner's default (Flink's
   * `trigger(...)`): `CountTrigger.of(n)`, `ContinuousEventTimeTrigger.of(ms)` for early
   * results, `PurgingTrigger.of(t)`, or a Trigger of your own (on session windows, one with `onMerge`).
   */
  trigger(trigger: Trigger<T>): this {
    if (typeof trigger?.onElement !== 'function') throw new TypeError('trigger(...) needs a Trigger, such as CountTrigger.of(100) or ContinuousEventTimeTrigger.of(5_000)');
    if (this.assigner.kind === 'session' && typeof trigger.onMerge !== 'function') {
      throw new Error(`trigger(${trigger.name ?? '...'}): session windows merge, and this trigger has no onMerge(window, ctx) to merge its state: add one, or use tumbling or sliding windows`);
    }
    this.customTrigger = trigger;
    return this;
  }

  /**
   * Removes records from a window when it fires (Flink's `evictor(...)`): `CountEvictor.of(n)`
   * keeps the last n, `TimeEvictor.of(ms)` those within `ms` of the newest, `DeltaEvictor.of(...)`
   * those close to the last. The window keeps all its records (reduce and aggregate run over
   * them at each firing).
   */
  evictor(evictor: Evictor<T>): this {
    if (typeof evictor?.evictBefore !== 'function' && typeof evictor?.evictAfter !== 'function') {
      throw new TypeError('evictor(...) needs an Evictor with evictBefore or evictAfter, such as CountEvictor.of(100) or TimeEvictor.of(5_000)');
    }
    this.customEvictor = evictor;
    return this;
  }

  /**
   * Keeps one accumulator per window even where sliding windows could share slices (see
   * docs/concepts.md, "Sliding windows share slices"): `add` then sees every record of a
   * window in arrival order and `merge` is never called, exactly as Flink's DataStream
   * windows. For an aggregate whose `merge` does not combine two accumulators as `add` would
   * have (floating-point sums that must match to the last bit, an order-sensitive accumulator).
   */
  disableSlicing(): this {
    this.slicing = false;
    return this;
  }

  /**
   * The window's reduced value, or what a window function makes of it: a ProcessWindowFunction
   * that collects results, or a function that returns the one result (its type inferred).
   */
  reduce(fn: ReduceFunction<T>): SingleOutputStream<T>;
  reduce<R = WindowResultOutputNotInferred>(fn: ReduceFunction<T>, windowFn: ProcessWindowFunction<T, R, K>): SingleOutputStream<R>;
  reduce<R>(fn: ReduceFunction<T>, windowFn: WindowResultFunction<T, R, K>): SingleOutputStream<R>;
  reduce<R>(fn: ReduceFunction<T>, windowFn?: ProcessWindowFunction<T, R, K> | WindowResultFunction<T, R, K>): SingleOutputStream<R> {
    return this.build<R>('Window(Reduce)', { kind: 'reduce', reduce: fn as ReduceFunction<unknown>, process: resultWindowFunction(windowFn) as never });
  }

  /**
   * The window's aggregate, or what a window function makes of it: a ProcessWindowFunction
   * that collects results, or a function that returns the one result (its type inferred).
   */
  aggregate<ACC, R>(fn: AggregateFunction<T, ACC, R>): SingleOutputStream<R>;
  aggregate<ACC, V, R = WindowResultOutputNotInferred>(fn: AggregateFunction<T, ACC, V>, windowFn: ProcessWindowFunction<V, R, K>): SingleOutputStream<R>;
  aggregate<ACC, V, R>(fn: AggregateFunction<T, ACC, V>, windowFn: WindowResultFunction<V, R, K>): SingleOutputStream<R>;
  aggregate<ACC, V, R>(fn: AggregateFunction<T, ACC, V>, windowFn?: ProcessWindowFunction<V, R, K> | WindowResultFunction<V, R, K>): SingleOutputStream<R> {
    return this.build<R>('Window(Aggregate)', { kind: 'aggregate', aggregate: fn as never, process: resultWindowFunction(windowFn) as never });
  }

  /** All of a window's records: a ProcessWindowFunction that collects results, or a function that returns the one result (its type inferred). */
  process<R = WindowProcessOutputNotInferred>(fn: ProcessWindowFunction<T, R, K>): SingleOutputStream<R>;
  process<R>(fn: WindowMapFunction<T, R, K>): SingleOutputStream<R>;
  process<R>(fn: ProcessWindowFunction<T, R, K> | WindowMapFunction<T, R, K>): SingleOutputStream<R> {
    return this.build<R>('Window(Process)', { kind: 'process', process: processWindowFunction(fn) as never });
  }

  private build<R>(name: string, fn: WindowFunctionSpec): SingleOutputStream<R> {
    const assigner = this.assigner;
    if (this.customTrigger !== undefined || this.customEvictor !== undefined || assigner.kind === 'global') {
      const trigger =
        (this.customTrigger as Trigger<unknown> | undefined) ??
        (assigner.kind === 'global' ? NeverTrigger : assigner.time === 'event-time' ? EventTimeTrigger.create() : ProcessingTimeTrigger.create());
      const options = {
        assigner,
        trigger,
        evictor: this.customEvictor as Evictor<unknown> | undefined,
        fn,
        allowedLatenessMs: this.allowedLatenessMs,
        lateDataTag: this.lateDataTag as OutputTag<unknown> | undefined,
      };
      return this.keyed.transformKeyed<R>(name, () => new TriggerWindowOperator(options));
    }
    const options = {
      assigner,
      fn,
      allowedLatenessMs: this.allowedLatenessMs,
      lateDataTag: this.lateDataTag as OutputTag<unknown> | undefined,
      slicing: this.slicing,
    };
    return this.keyed.transformKeyed<R>(name, () => new WindowOperator(options));
  }
}
