import { AsyncWaitOperator } from '../runtime/operators/async-wait-operator.js';
import type { AsyncRetryStrategy } from './async-retry-strategy.js';
import type { DataStream, SingleOutputStream } from './data-stream.js';
import type { AsyncFunction, OutputTypeNotInferred, ResultFuture } from './functions.js';

/** Flink's default capacity of an async operator's queue. */
export const DEFAULT_ASYNC_CAPACITY = 100;

/** An AsyncFunction, or just its asyncInvoke. */
export type AsyncFunctionLike<IN, OUT> = AsyncFunction<IN, OUT> | ((input: IN, resultFuture: ResultFuture<OUT>) => void | Promise<void>);

/** The default output type of an async function, which completes its results rather than returning them. */
type AsyncOutputNotInferred<Method extends string> = OutputTypeNotInferred<`give both types as ${Method}<In, Out>(...), or annotate the result future: (input, result: ResultFuture<Out>) => ...`>;

export interface AsyncWaitSettings<OUT> {
  readonly ordered: boolean;
  /** A call's time to complete, retries included; 0: no timeout. */
  readonly timeoutMs: number;
  /** Records (and watermarks) the operator holds at most before it stops taking input. */
  readonly capacity: number;
  readonly retry: AsyncRetryStrategy<OUT> | undefined;
}

function asFunction<IN, OUT>(fn: AsyncFunctionLike<IN, OUT>): AsyncFunction<IN, OUT> {
  if (typeof fn === 'function') return { asyncInvoke: fn };
  if (fn === null || typeof fn !== 'object' || typeof fn.asyncInvoke !== 'function') {
    throw new Error('AsyncDataStream: the function must be an AsyncFunction (an object with asyncInvoke(input, resultFuture)) or that function itself');
  }
  return fn;
}

/**
 * Calls an external system for every record without waiting for one call before the next
 * (Flink's AsyncDataStream): up to `capacity` calls are under way per subtask. The records
 * whose calls are under way are part of every checkpoint and are called again on recovery,
 * so results are exactly-once downstream.
 *
 * - `orderedWait`: results leave in the order the records came.
 * - `unorderedWait`: results leave as they come, but never across a watermark.
 *
 * `timeoutMs` bounds each call (with its retries); 0 means no timeout.
 */
export const AsyncDataStream = {
  orderedWait<IN, OUT = AsyncOutputNotInferred<'orderedWait'>>(stream: DataStream<IN>, fn: AsyncFunctionLike<IN, OUT>, timeoutMs: number, capacity = DEFAULT_ASYNC_CAPACITY): SingleOutputStream<OUT> {
    return asyncWait(true, stream, fn, timeoutMs, capacity, undefined);
  },
  unorderedWait<IN, OUT = AsyncOutputNotInferred<'unorderedWait'>>(stream: DataStream<IN>, fn: AsyncFunctionLike<IN, OUT>, timeoutMs: number, capacity = DEFAULT_ASYNC_CAPACITY): SingleOutputStream<OUT> {
    return asyncWait(false, stream, fn, timeoutMs, capacity, undefined);
  },
  orderedWaitWithRetry<IN, OUT = AsyncOutputNotInferred<'orderedWaitWithRetry'>>(stream: DataStream<IN>, fn: AsyncFunctionLike<IN, OUT>, timeoutMs: number, capacity: number, retry: AsyncRetryStrategy<OUT> | undefined): SingleOutputStream<OUT> {
    return asyncWait(true, stream, fn, timeoutMs, capacity, retry);
  },
  unorderedWaitWithRetry<IN, OUT = AsyncOutputNotInferred<'unorderedWaitWithRetry'>>(stream: DataStream<IN>, fn: AsyncFunctionLike<IN, OUT>, timeoutMs: number, capacity: number, retry: AsyncRetryStrategy<OUT> | undefined): SingleOutputStream<OUT> {
    return asyncWait(false, stream, fn, timeoutMs, capacity, retry);
  },
} as const;

/** Checks the settings and adds the async operator. */
function asyncWait<IN, OUT>(
  ordered: boolean,
  stream: DataStream<IN>,
  fn: AsyncFunctionLike<IN, OUT>,
  timeoutMs: number,
  capacity: number,
  retry: AsyncRetryStrategy<OUT> | undefined,
): SingleOutputStream<OUT> {
  const name = ordered ? 'orderedWait' : 'unorderedWait';
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw new Error(`AsyncDataStream.${name}: the timeout must be a finite number of milliseconds >= 0 (0: no timeout), not ${String(timeoutMs)}`);
  }
  if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`AsyncDataStream.${name}: the capacity must be an integer >= 1, not ${String(capacity)}`);
  const settings: AsyncWaitSettings<OUT> = { ordered, timeoutMs, capacity, retry };
  const f = asFunction(fn);
  return stream.transform<OUT>('Async Wait', () => new AsyncWaitOperator<IN, OUT>(f, settings));
}
