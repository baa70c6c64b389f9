import { KeyedAggregateOperator, KeyedReduceOperator } from '../runtime/operators/keyed-aggregation-operators.js';
import { KeyedProcessOperator } from '../runtime/operators/keyed-process-operator.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { Transformation } from '../graph/transformation.js';
import { BroadcastStream, KeyedBroadcastConnectedStream } from './broadcast-stream.js';
import { ConnectedKeyedStreams } from './connected-streams.js';
import { CountWindowedStream } from './count-windowed-stream.js';
import { IntervalJoin } from './interval-join.js';
import { FieldAggregations, type FieldAggregation } from './field-aggregation.js';
import { DataStream as DataStreamClass, type DataStream, type DataStreamSink, type SingleOutputStream } from './data-stream.js';
import type { FilterFunction, FlatMapFunction, KeyedProcessFunction, KeySelector, MapFunction, OutputTypeNotInferred, ProcessOutputNotInferred, ReduceFunction } from './functions.js';
import type { Sink } from './sink.js';
import type { AggregateFunction } from './state-descriptors.js';
import { WindowedStream } from './windowed-stream.js';
import type { WindowAssigner } from './windows.js';

/**
 * A stream partitioned by key: records with equal keys go to the same subtask, in order.
 * Keyed state, timers and windows exist only here.
 */
export class KeyedStream<T, K extends KeyType> extends FieldAggregations<T> {
  private partitioned: Transformation | undefined;

  constructor(
    readonly input: DataStream<T>,
    readonly keySelector: KeySelector<T, K>,
  ) {
    super();
    if (typeof keySelector !== 'function') throw new TypeError('keyBy needs a function that returns the key of a record');
  }

  /** The hash-partitioned input, shared by every operator on this keyed stream. */
  partitionedTransformation(): Transformation {
    if (this.partitioned === undefined) {
      this.partitioned = this.input.env.addTransformation({
        kind: 'partition',
        name: 'hash',
        input: this.input.transformation,
        partitioning: { kind: 'hash', keySelector: this.keySelector as (v: never) => KeyType },
      });
    }
    return this.partitioned;
  }

  /** The records as partitioned by key, for operators that need no keyed state (map, filter, flatMap, sinks). */
  private partitionedStream(): DataStream<T> {
    return new DataStreamClass<T>(this.input.env, this.partitionedTransformation());
  }

  /** A map on the stream as partitioned by key (as Flink's KeyedStream, a DataStream): each key's records reach one subtask, in order. */
  map<R>(fn: MapFunction<T, R>, name = 'Map'): SingleOutputStream<R> {
    return this.partitionedStream().map(fn, name);
  }

  filter<S extends T>(fn: (value: T) => value is S, name?: string): SingleOutputStream<S>;
  filter(fn: FilterFunction<T>, name?: string): SingleOutputStream<T>;
  filter(fn: FilterFunction<T>, name = 'Filter'): SingleOutputStream<T> {
    return this.partitionedStream().filter(fn, name);
  }

  flatMap<R = OutputTypeNotInferred<'give it as flatMap<Out>(...), or annotate out: Collector<Out>'>>(fn: FlatMapFunction<T, R>, name = 'FlatMap'): SingleOutputStream<R> {
    return this.partitionedStream().flatMap(fn, name);
  }

  /** Ends the stream as partitioned by key in a sink: each key's records reach one sink subtask. */
  sinkTo(sink: Sink<T>, name = 'Sink'): DataStreamSink {
    return this.partitionedStream().sinkTo(sink, name);
  }

  /** Adds a keyed one-input operator. */
  transformKeyed<R>(name: string, operator: () => import('../runtime/task/stream-operator.js').StreamOperator): SingleOutputStream<R> {
    return this.input.env.keyedOneInput<R>(name, this.partitionedTransformation(), operator, this.keySelector as KeySelector<unknown, KeyType>);
  }

  process<R = ProcessOutputNotInferred>(fn: KeyedProcessFunction<K, T, R>, name = 'KeyedProcess'): SingleOutputStream<R> {
    return this.transformKeyed<R>(name, () => new KeyedProcessOperator(fn));
  }

  /** Rolling reduce: emits the reduced value of the key for every record. */
  reduce(fn: ReduceFunction<T>, name = 'Reduce'): SingleOutputStream<T> {
    return this.transformKeyed<T>(name, () => new KeyedReduceOperator(fn));
  }

  /** Field aggregations on a keyed stream are rolling: the key's new value for every record. */
  protected override aggregateField(kind: FieldAggregation, fn: ReduceFunction<T>): SingleOutputStream<T> {
    return this.reduce(fn, kind[0]!.toUpperCase() + kind.slice(1));
  }

  /** Rolling aggregate: emits the key's current result for every record. */
  aggregate<ACC, R>(fn: AggregateFunction<T, ACC, R>, name = 'Aggregate'): SingleOutputStream<R> {
    return this.transformKeyed<R>(name, () => new KeyedAggregateOperator(fn));
  }

  window(assigner: WindowAssigner): WindowedStream<T, K> {
    const kind = (assigner as WindowAssigner | undefined)?.kind;
    if (kind !== 'sliding' && kind !== 'session' && kind !== 'global') {
      throw new TypeError(
        `window(...) needs a window assigner, such as TumblingEventTimeWindows.of(60_000) or EventTimeSessionWindows.withGap(30_000); got ${String(assigner)}`,
      );
    }
    return new WindowedStream<T, K>(this, assigner);
  }

  /** Count windows: a window per `size` records of a key, or (sliding) the key's last `size` records every `slide` records. */
  countWindow(size: number, slide: number = size): CountWindowedStream<T, K> {
    return new CountWindowedStream<T, K>(this, size, slide);
  }

  /** Two keyed streams with the same key type: shared keyed state and timers per key. */
  connect<U>(other: KeyedStream<U, K>): ConnectedKeyedStreams<T, U, K>;
  connect<U>(other: BroadcastStream<U>): KeyedBroadcastConnectedStream<T, U, K>;
  connect<U>(other: KeyedStream<U, K> | BroadcastStream<U>): ConnectedKeyedStreams<T, U, K> | KeyedBroadcastConnectedStream<T, U, K> {
    return other instanceof BroadcastStream ? new KeyedBroadcastConnectedStream<T, U, K>(this, other) : new ConnectedKeyedStreams<T, U, K>(this, other);
  }

  /**
   * Joins with another keyed stream in event time (Flink's interval join): each record of this
   * stream meets the records of `other` with the same key whose timestamps lie within the
   * bounds given to `between(lowerMs, upperMs)` relative to its own.
   */
  intervalJoin<U>(other: KeyedStream<U, K>): IntervalJoin<T, U, K> {
    return new IntervalJoin<T, U, K>(this, other);
  }
}
