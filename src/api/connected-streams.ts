import { CoProcessOperator, KeyedCoProcessOperator } from '../runtime/operators/co-process-operator.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { DataStream, SingleOutputStream } from './data-stream.js';
import type { CoProcessFunction, FlatMapFunction, KeyedCoProcessFunction, KeySelector, MapFunction, OutputTypeNotInferred, ProcessOutputNotInferred } from './functions.js';
import type { KeyedStream } from './keyed-stream.js';

/** Two streams of possibly different types feeding one two-input operator. */
export class ConnectedStreams<A, B> {
  constructor(
    readonly first: DataStream<A>,
    readonly second: DataStream<B>,
  ) {
    if (first.env !== second.env) throw new Error('connect: streams belong to different environments');
  }

  process<R = ProcessOutputNotInferred>(fn: CoProcessFunction<A, B, R>, name = 'CoProcess'): SingleOutputStream<R> {
    return this.first.env.twoInput<R>(name, this.first.transformation, this.second.transformation, () => new CoProcessOperator(fn), undefined, undefined);
  }

  /** One function per input, one result per record (Flink's CoMapFunction). */
  map<R>(fn1: MapFunction<A, R>, fn2: MapFunction<B, R>, name = 'CoMap'): SingleOutputStream<R> {
    return this.process<R>(coMap(fn1, fn2), name);
  }

  /** One function per input, any number of results per record (Flink's CoFlatMapFunction). */
  flatMap<R = OutputTypeNotInferred<'give it as flatMap<Out>(...), or annotate out: Collector<Out> in either function'>>(fn1: FlatMapFunction<A, R>, fn2: FlatMapFunction<B, R>, name = 'CoFlatMap'): SingleOutputStream<R> {
    return this.process<R>(coFlatMap(fn1, fn2), name);
  }

  /** Partitions both inputs by key; the result can use keyed state and timers. */
  keyBy<K extends KeyType>(key1: KeySelector<A, K>, key2: KeySelector<B, K>): ConnectedKeyedStreams<A, B, K> {
    return new ConnectedKeyedStreams<A, B, K>(this.first.keyBy(key1), this.second.keyBy(key2));
  }
}

function coMap<A, B, R>(fn1: MapFunction<A, R>, fn2: MapFunction<B, R>): CoProcessFunction<A, B, R> {
  return {
    processElement1: (value, _ctx, out) => out.collect(fn1(value)),
    processElement2: (value, _ctx, out) => out.collect(fn2(value)),
  };
}

function coFlatMap<A, B, R>(fn1: FlatMapFunction<A, R>, fn2: FlatMapFunction<B, R>): CoProcessFunction<A, B, R> {
  return {
    processElement1: (value, _ctx, out) => fn1(value, out),
    processElement2: (value, _ctx, out) => fn2(value, out),
  };
}

export class ConnectedKeyedStreams<A, B, K extends KeyType> {
  constructor(
    readonly first: KeyedStream<A, K>,
    readonly second: KeyedStream<B, K>,
  ) {}

  process<R = ProcessOutputNotInferred>(fn: KeyedCoProcessFunction<K, A, B, R>, name = 'KeyedCoProcess'): SingleOutputStream<R> {
    const env = this.first.input.env;
    return env.twoInput<R>(
      name,
      this.first.partitionedTransformation(),
      this.second.partitionedTransformation(),
      () => new KeyedCoProcessOperator(fn),
      this.first.keySelector as KeySelector<unknown, KeyType>,
      this.second.keySelector as KeySelector<unknown, KeyType>,
    );
  }

  /** CoMap on the inputs as partitioned by key: each key's records of both inputs reach one subtask. */
  map<R>(fn1: MapFunction<A, R>, fn2: MapFunction<B, R>, name = 'CoMap'): SingleOutputStream<R> {
    return this.partitioned<R>(coMap(fn1, fn2), name);
  }

  /** CoFlatMap on the inputs as partitioned by key. */
  flatMap<R = OutputTypeNotInferred<'give it as flatMap<Out>(...), or annotate out: Collector<Out> in either function'>>(fn1: FlatMapFunction<A, R>, fn2: FlatMapFunction<B, R>, name = 'CoFlatMap'): SingleOutputStream<R> {
    return this.partitioned<R>(coFlatMap(fn1, fn2), name);
  }

  private partitioned<R>(fn: CoProcessFunction<A, B, R>, name: string): SingleOutputStream<R> {
    const env = this.first.input.env;
    return env.twoInput<R>(name, this.first.partitionedTransformation(), this.second.partitionedTransformation(), () => new CoProcessOperator(fn), undefined, undefined);
  }
}
