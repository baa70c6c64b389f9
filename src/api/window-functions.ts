import type { KeyType } from '../runtime/state/key-group.js';
import type { Collector, KeyedRuntimeContext, KeyedStateStore, OutputTypeNotInferred, ReduceFunction } from './functions.js';
import type { OutputTag } from './output-tag.js';
import type { AggregateFunction } from './state-descriptors.js';
import type { TimeWindow } from './windows.js';

export interface WindowContext {
  readonly window: TimeWindow;
  currentWatermark(): number;
  currentProcessingTime(): number;
  output<X>(tag: OutputTag<X>, value: X): void;
  /**
   * State of the current key in this window (Flink's per-window state): kept across the
   * window's firings (early, late) and in checkpoints; clear it in the function's `clear`.
   * Not for session windows (they merge).
   */
  windowState(): KeyedStateStore;
  /** State of the current key across all windows. */
  globalState(): KeyedStateStore;
}

/** Sees all of a window's elements (or the pre-aggregated result) when the window fires. */
export interface ProcessWindowFunction<IN, OUT, K extends KeyType> {
  open?(ctx: KeyedRuntimeContext<K>): void | Promise<void>;
  process(key: K, ctx: WindowContext, elements: readonly IN[], out: Collector<OUT>): void;
  /** The window's time is over (its end plus the allowed lateness): clear its `windowState()` here. */
  clear?(ctx: WindowContext): void;
  close?(): void | Promise<void>;
}

/**
 * A window function that returns the window's one result rather than collecting results, so
 * the stream's type is inferred from what it returns:
 * `process((key, ctx, elements) => ({ key, end: ctx.window.end, count: elements.length }))`.
 */
export type WindowMapFunction<in IN, out OUT, in K extends KeyType> = (key: K, ctx: WindowContext, elements: readonly IN[]) => OUT;

/**
 * A window function after a reduce or an aggregate that returns the window's one result,
 * computed from the pre-aggregated value: `aggregate(count, (key, ctx, n) => ({ key, n }))`.
 */
export type WindowResultFunction<in IN, out OUT, in K extends KeyType> = (key: K, ctx: WindowContext, result: IN) => OUT;

/** The default output type of a window's `process(fn)` when `fn` collects its results. */
export type WindowProcessOutputNotInferred = OutputTypeNotInferred<
  'give it as process<Out>(...), annotate out: Collector<Out>, or return the one result: process((key, ctx, elements) => result)'
>;

/** The default output type of `reduce(fn, windowFn)` and `aggregate(agg, windowFn)` when `windowFn` collects its results. */
export type WindowResultOutputNotInferred = OutputTypeNotInferred<'annotate out: Collector<Out>, or return the one result: (key, ctx, result) => output'>;

/** A window function as the operators run it: a ProcessWindowFunction, made from a WindowMapFunction if given one. */
export function processWindowFunction<IN, OUT, K extends KeyType>(fn: ProcessWindowFunction<IN, OUT, K> | WindowMapFunction<IN, OUT, K>): ProcessWindowFunction<IN, OUT, K> {
  if (typeof fn !== 'function') return fn;
  return { process: (key, ctx, elements, out) => out.collect(fn(key, ctx, elements)) };
}

/** The window function of a reduce or an aggregate as the operators run it, made from a WindowResultFunction if given one. */
export function resultWindowFunction<IN, OUT, K extends KeyType>(
  fn: ProcessWindowFunction<IN, OUT, K> | WindowResultFunction<IN, OUT, K> | undefined,
): ProcessWindowFunction<IN, OUT, K> | undefined {
  if (typeof fn !== 'function') return fn;
  return {
    process: (key, ctx, results, out) => {
      // The operators hand over the one pre-aggregated value.
      for (const result of results) out.collect(fn(key, ctx, result));
    },
  };
}

/** What a window computes: the closed set the window operator dispatches on. */
export type WindowFunctionSpec =
  | { readonly kind: 'reduce'; readonly reduce: ReduceFunction<unknown>; readonly process?: ProcessWindowFunction<unknown, unknown, KeyType> | undefined }
  | {
      readonly kind: 'aggregate';
      readonly aggregate: AggregateFunction<unknown, unknown, unknown>;
      readonly process?: ProcessWindowFunction<unknown, unknown, KeyType> | undefined;
    }
  | { readonly kind: 'process'; readonly process: ProcessWindowFunction<unknown, unknown, KeyType> };
