import { CountWindowOperator } from '../runtime/operators/count-window-operator.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { SingleOutputStream } from './data-stream.js';
import { FieldAggregations } from './field-aggregation.js';
import type { ReduceFunction } from './functions.js';
import type { KeyedStream } from './keyed-stream.js';
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

function count(name: string, n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`countWindow: the ${name} must be a whole number of records >= 1, got ${n}`);
  return n;
}

/**
 * Count windows of a keyed stream (Flink's `countWindow(size)` and `countWindow(size, slide)`):
 * a window per `size` records of a key, or, sliding, the key's last `size` records every
 * `slide` records. The window of a process function is the global window; results carry its
 * max timestamp, as in Flink.
 */
export class CountWindowedStream<T, K extends KeyType> extends FieldAggregations<T> {
  private readonly size: number;
  private readonly slide: number;

  constructor(
    private readonly keyed: KeyedStream<T, K>,
    size: number,
    slide: number,
  ) {
    super();
    this.size = count('size', size);
    this.slide = count('slide', slide);
  }

  /**
   * The window's reduced value, or what a window function makes of it: a ProcessWindowFunction
   * that collects results, or a function that returns the one result (its type inferred).
   */
  reduce(fn: ReduceFunction<T>): SingleOutputStream<T>;
  reduce<R = WindowResultOutputNotInferred>(fn: ReduceFunction<T>, windowFn: ProcessWindowFunction<T, R, K>): SingleOutputStream<R>;
  reduce<R>(fn: ReduceFunction<T>, windowFn: WindowResultFunction<T, R, K>): SingleOutputStream<R>;
  reduce<R>(fn: ReduceFunction<T>, windowFn?: ProcessWindowFunction<T, R, K> | WindowResultFunction<T, R, K>): SingleOutputStream<R> {
    return this.build<R>('CountWindow(Reduce)', { kind: 'reduce', reduce: fn as ReduceFunction<unknown>, process: resultWindowFunction(windowFn) as never });
  }

  /**
   * The window's aggregate, or what a window function makes of it: a ProcessWindowFunction
   * that collects results, or a function that returns the one result (its type inferred).
   */
  aggregate<ACC, R>(fn: AggregateFunction<T, ACC, R>): SingleOutputStream<R>;
  aggregate<ACC, V, R = WindowResultOutputNotInferred>(fn: AggregateFunction<T, ACC, V>, windowFn: ProcessWindowFunction<V, R, K>): SingleOutputStream<R>;
  aggregate<ACC, V, R>(fn: AggregateFunction<T, ACC, V>, windowFn: WindowResultFunction<V, R, K>): SingleOutputStream<R>;
  aggregate<ACC, V, R>(fn: AggregateFunction<T, ACC, V>, windowFn?: ProcessWindowFunction<V, R, K> | WindowResultFunction<V, R, K>): SingleOutputStream<R> {
    return this.build<R>('CountWindow(Aggregate)', { kind: 'aggregate', aggregate: fn as never, process: resultWindowFunction(windowFn) as never });
  }

  /** All of a window's records: a ProcessWindowFunction that collects results, or a function that returns the one result (its type inferred). */
  process<R = WindowProcessOutputNotInferred>(fn: ProcessWindowFunction<T, R, K>): SingleOutputStream<R>;
  process<R>(fn: WindowMapFunction<T, R, K>): SingleOutputStream<R>;
  process<R>(fn: ProcessWindowFunction<T, R, K> | WindowMapFunction<T, R, K>): SingleOutputStream<R> {
    return this.build<R>('CountWindow(Process)', { kind: 'process', process: processWindowFunction(fn) as never });
  }

  private build<R>(name: string, fn: WindowFunctionSpec): SingleOutputStream<R> {
    const options = { size: this.size, slide: this.slide, fn };
    return this.keyed.transformKeyed<R>(name, () => new CountWindowOperator(options));
  }
}
