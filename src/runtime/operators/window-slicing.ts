import type { WindowFunctionSpec } from '../../api/window-functions.js';
import type { WindowAssigner } from '../../api/windows.js';

/**
 * Slice sharing for sliding windows (what Flink SQL's window aggregations do, "slicing"): a
 * sliding window of size `n * slide` is the union of `n` slices of one slide each, so a record
 * is added to one accumulator, its slice's, instead of to the `n` accumulators of the windows
 * it belongs to, and a window's result is the merge of its slices' accumulators when it fires.
 * A sliding window job does a fifth of the state writes per record (size 10 s, slide 2 s) and
 * keeps a fifth of the entries, which is also what a checkpoint captures.
 *
 * The result is that of one accumulator per window as far as `merge` combines two accumulators
 * as `add` would have (Flink's contract for AggregateFunction.merge; not so for an order-
 * sensitive accumulator with out-of-order records, or for floating-point sums to the last
 * bit: `disableSlicing()` opts out). Slices are used only for:
 * - sliding windows whose size is a multiple of the slide (and larger than it),
 * - an AggregateFunction with `merge`,
 * - whose accumulator is a primitive (number, string, bigint, boolean): merging can then not
 *   modify a stored slice. Flink lets `merge(a, b)` reuse either argument as its result, so an
 *   object accumulator of a slice that is still needed by later windows could be changed by
 *   merging it into an earlier window's result.
 * Everything else keeps one accumulator per window.
 */
export interface SlicingPlan {
  readonly sliceMs: number;
  /** Slices in a window: size / slide. */
  readonly slicesPerWindow: number;
  readonly merge: (a: unknown, b: unknown) => unknown;
}

/** How a window operator slices its windows; undefined when it keeps one accumulator per window. */
export function slicingPlan(assigner: WindowAssigner, fn: WindowFunctionSpec): SlicingPlan | undefined {
  if (assigner.kind !== 'sliding') return undefined;
  const { sizeMs, slideMs } = assigner;
  if (!(sizeMs > slideMs) || sizeMs % slideMs !== 0) return undefined;
  if (fn.kind !== 'aggregate') return undefined;
  const merge = fn.aggregate.merge;
  if (merge === undefined) return undefined;
  const sample = fn.aggregate.createAccumulator();
  const t = typeof sample;
  if (t !== 'number' && t !== 'string' && t !== 'bigint' && t !== 'boolean') return undefined;
  return { sliceMs: slideMs, slicesPerWindow: sizeMs / slideMs, merge: merge.bind(fn.aggregate) as (a: unknown, b: unknown) => unknown };
}
