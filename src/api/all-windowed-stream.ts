import { perSubtask } from '../runtime/operators/keyed-operator.js';
import type { SingleOutputStream } from './data-stream.js';
import { FieldAggregations } from './field-aggregation.js';
import type { Collector, OutputTypeNotInferred, ReduceFunction, RuntimeContext } from './functions.js';
import type { OutputTag } from './output-tag.js';
import type { AggregateFunction } from './state-descriptors.js';
import type { Evictor } from './evictors.js';
import type { Trigger } from './triggers.js';
import type { ProcessWindowFunction, WindowContext } from './window-functions.js';
import type { WindowedStream } from './windowed-stream.js';

/** Sees all of a window's elements (or the pre-aggregated result) of a stream without keys (Flink's ProcessAllWindowFunction). */
export interface ProcessAllWindowFunction<IN, OUT> {
  open?(ctx: RuntimeContext): void | Promise<void>;
  process(ctx: WindowContext, elements: readonly IN[], out: Collector<OUT>): void;
  /** The window's time is over: clear its `windowState()` here. */
  clear?(ctx: WindowContext): void;
  close?(): void | Promise<void>;
}

/** A function that returns the one result of a window without keys, from all its records: `process((ctx, elements) => elements.length)`. */
export type AllWindowMapFunction<in IN, out OUT> = (ctx: WindowContext, elements: readonly IN[]) => OUT;

/** A function that returns the one result of a window without keys, from its reduced or aggregated value: `aggregate(count, (ctx, n) => [ctx.window.end, n])`. */
export type AllWindowResultFunction<in IN, out OUT> = (ctx: WindowContext, result: IN) => OUT;

/** The default output type of a window's `process(fn)` without keys when `fn` collects its results. */
type AllWindowProcessOutputNotInferred = OutputTypeNotInferred<
  'give it as process<Out>(...), annotate out: Collector<Out>, or return the one result: process((ctx, elements) => result)'
>;

/** The default output type of `reduce(fn, windowFn)` and `aggregate(agg, windowFn)` without keys when `windowFn` collects its results. */
type AllWindowResultOutputNotInferred = OutputTypeNotInferred<'annotate out: Collector<Out>, or return the one result: (ctx, result) => output'>;

/** Why the parallelism of a windowAll operator cannot change (Flink's non-parallel all-window operator). */
export const WINDOW_ALL_PARALLELISM = 'windowAll runs on one subtask (every record of the stream meets in the same windows), so its parallelism is 1';

/**
 * A ProcessAllWindowFunction run by the keyed window operator under the one constant key:
 * each subtask works on its own object inheriting from the user's (as every function object).
 */
class AllWindowFunction<IN, OUT> implements ProcessWindowFunction<IN, OUT, number> {
  private own: ProcessAllWindowFunction<IN, OUT> | undefined;

  /** Only when the user's function has one: the window operator skips the call (and the window's lookup) otherwise. */
  readonly clear: ((ctx: WindowContext) => void) | undefined;

  constructor(private readonly fn: ProcessAllWindowFunction<IN, OUT>) {
    this.clear = fn.clear === undefined ? undefined : (ctx) => this.f.clear?.(ctx);
  }

  private get f(): ProcessAllWindowFunction<IN, OUT> {
    return (this.own ??= perSubtask(this.fn));
  }

  open(ctx: RuntimeContext): void | Promise<void> {
    return this.f.open?.(ctx);
  }

  process(_key: number, ctx: WindowContext, elements: readonly IN[], out: Collector<OUT>): void {
    this.f.process(ctx, elements, out);
  }



  close(): void | Promise<void> {
    return this.own?.close?.();
  }
}

/**
 * Windows over a whole stream, without keys (Flink's AllWindowedStream, from
 * `DataStream.windowAll`): one subtask sees every record. Finish with reduce, aggregate,
 * process or a field aggregation.
 */
export class AllWindowedStream<T> extends FieldAggregations<T> {
  constructor(private readonly windowed: WindowedStream<T, number>) {
    super();
  }

  /** Keep windows this long after the watermark passed their end; late records fire them again. */
  allowedLateness(ms: number): this {
    this.windowed.allowedLateness(ms);
    return this;
  }

  /** Records too late for every window they belong to go to this side output instead of being dropped. */
  sideOutputLateData(tag: OutputTag<T>): this {
    this.windowed.sideOutputLateData(tag);
    return this;
  }

  /** When windows fire and purge (see WindowedStream.trigger). */
  trigger(trigger: Trigger<T>): this {
    this.windowed.trigger(trigger);
    return this;
  }

  /** Removes records from a window when it fires (see WindowedStream.evictor). */
  evictor(evictor: Evictor<T>): this {
    this.windowed.evictor(evictor);
    return this;
  }

  /** One accumulator per window even where sliding windows could share slices (see WindowedStream.disableSlicing). */
  disableSlicing(): this {
    this.windowed.disableSlicing();
    return this;
  }

  /** The window's reduced value, or what a window function makes of it (see WindowedStream.reduce). */
  reduce(fn: ReduceFunction<T>): SingleOutputStream<T>;
  reduce<R = AllWindowResultOutputNotInferred>(fn: ReduceFunction<T>, windowFn: ProcessAllWindowFunction<T, R>): SingleOutputStream<R>;
  reduce<R>(fn: ReduceFunction<T>, windowFn: AllWindowResultFunction<T, R>): SingleOutputStream<R>;
  reduce<R>(fn: ReduceFunction<T>, windowFn?: ProcessAllWindowFunction<T, R> | AllWindowResultFunction<T, R>): SingleOutputStream<R> {
    return nonParallel<R>(
      windowFn === undefined ? (this.windowed.reduce(fn) as unknown as SingleOutputStream<R>) : this.windowed.reduce(fn, new AllWindowFunction(allResultWindowFunction(windowFn))),
    );
  }

  /** The window's aggregate, or what a window function makes of it (see WindowedStream.aggregate). */
  aggregate<ACC, R>(fn: AggregateFunction<T, ACC, R>): SingleOutputStream<R>;
  aggregate<ACC, V, R = AllWindowResultOutputNotInferred>(fn: AggregateFunction<T, ACC, V>, windowFn: ProcessAllWindowFunction<V, R>): SingleOutputStream<R>;
  aggregate<ACC, V, R>(fn: AggregateFunction<T, ACC, V>, windowFn: AllWindowResultFunction<V, R>): SingleOutputStream<R>;
  aggregate<ACC, V, R>(fn: AggregateFunction<T, ACC, V>, windowFn?: ProcessAllWindowFunction<V, R> | AllWindowResultFunction<V, R>): SingleOutputStream<R> {
    return nonParallel<R>(
      windowFn === undefined
        ? (this.windowed.aggregate(fn) as unknown as SingleOutputStream<R>)
        : this.windowed.aggregate(fn, new AllWindowFunction(allResultWindowFunction(windowFn))),
    );
  }

  /** All of a window's records: a ProcessAllWindowFunction that collects results, or a function that returns the one result (its type inferred). */
  process<R = AllWindowProcessOutputNotInferred>(fn: ProcessAllWindowFunction<T, R>): SingleOutputStream<R>;
  process<R>(fn: AllWindowMapFunction<T, R>): SingleOutputStream<R>;
  process<R>(fn: ProcessAllWindowFunction<T, R> | AllWindowMapFunction<T, R>): SingleOutputStream<R> {
    const f: ProcessAllWindowFunction<T, R> = typeof fn === 'function' ? { process: (ctx, elements, out) => out.collect(fn(ctx, elements)) } : fn;
    return nonParallel(this.windowed.process(new AllWindowFunction(f)));
  }
}

/** The window function of a reduce or an aggregate without keys, made from an AllWindowResultFunction if given one. */
function allResultWindowFunction<IN, OUT>(fn: ProcessAllWindowFunction<IN, OUT> | AllWindowResultFunction<IN, OUT>): ProcessAllWindowFunction<IN, OUT> {
  if (typeof fn !== 'function') return fn;
  return {
    process: (ctx, results, out) => {
      // The operators hand over the one pre-aggregated value.
      for (const result of results) out.collect(fn(ctx, result));
    },
  };
}

function nonParallel<R>(stream: SingleOutputStream<R>): SingleOutputStream<R> {
  stream.setParallelism(1);
  stream.transformation.fixedParallelism = WINDOW_ALL_PARALLELISM;
  return stream;
}
