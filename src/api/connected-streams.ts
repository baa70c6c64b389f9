import { CoProcessOperator, KeyedCoProcessOperator } from '../runtime/operators/co-process-operator.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { DataStream, SingleOutputStream } from './data-stream.js';
import type { CoProcessFunction, KeyedCoProcessFunction, KeySelector } from './functions.js';
import type { KeyedStream } from './keyed-stream.js';

/** Two streams of possibly different types feeding one two-input operator. */
export class ConnectedStreams<A, B> {
  constructor(
    readonly first: DataStream<A>,
    readonly second: DataStream<B>,
  ) {
    if (first.env !== second.env) throw new Error('connect: streams belong to different environments');
  }

  process<R>(fn: CoProcessFunction<A, B, R>, name = 'CoProcess'): SingleOutputStream<R> {
    return this.first.env.twoInput<R>(name, this.first.transformation, this.second.transformation, () => new CoProcessOperator(fn), undefined, undefined);
  }

  /** Partitions both inputs by key; the result can use keyed state and timers. */
  keyBy<K extends KeyType>(key1: KeySelector<A, K>, key2: KeySelector<B, K>): ConnectedKeyedStreams<A, B, K> {
    return new ConnectedKeyedStreams<A, B, K>(this.first.keyBy(key1), this.second.keyBy(key2));
  }
}

export class ConnectedKeyedStreams<A, B, K extends KeyType> {
  constructor(
    readonly first: KeyedStream<A, K>,
    readonly second: KeyedStream<B, K>,
  ) {}

  process<R>(fn: KeyedCoProcessFunction<K, A, B, R>, name = 'KeyedCoProcess'): SingleOutputStream<R> {
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
}
