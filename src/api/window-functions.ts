import type { KeyType } from '../runtime/state/key-group.js';
import type { Collector, KeyedRuntimeContext, KeyedStateStore, ReduceFunction } from './functions.js';
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

/** What a window computes: the closed set the window operator dispatches on. */
export type WindowFunctionSpec =
  | { readonly kind: 'reduce'; readonly reduce: ReduceFunction<unknown>; readonly process?: ProcessWindowFunction<unknown, unknown, KeyType> | undefined }
  | {
      readonly kind: 'aggregate';
      readonly aggregate: AggregateFunction<unknown, unknown, unknown>;
      readonly process?: ProcessWindowFunction<unknown, unknown, KeyType> | undefined;
    }
  | { readonly kind: 'process'; readonly process: ProcessWindowFunction<unknown, unknown, KeyType> };
