import type { KeyType } from '../runtime/state/key-group.js';
import type { Collector, KeyedRuntimeContext, ReduceFunction } from './functions.js';
import type { OutputTag } from './output-tag.js';
import type { AggregateFunction } from './state-descriptors.js';
import type { TimeWindow } from './windows.js';

export interface WindowContext {
  readonly window: TimeWindow;
  currentWatermark(): number;
  currentProcessingTime(): number;
  output<X>(tag: OutputTag<X>, value: X): void;
}

/** Sees all of a window's elements (or the pre-aggregated result) when the window fires. */
export interface ProcessWindowFunction<IN, OUT, K extends KeyType> {
  open?(ctx: KeyedRuntimeContext<K>): void | Promise<void>;
  process(key: K, ctx: WindowContext, elements: readonly IN[], out: Collector<OUT>): void;
  close?(): void | Promise<void>;
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
