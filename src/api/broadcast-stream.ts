import { BroadcastProcessOperator, KeyedBroadcastProcessOperator } from '../runtime/operators/broadcast-process-operator.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { BroadcastStateDescriptor } from './broadcast-state.js';
import type { DataStream, SingleOutputStream } from './data-stream.js';
import type { BroadcastProcessFunction, KeyedBroadcastProcessFunction, KeySelector, ProcessOutputNotInferred } from './functions.js';
import type { KeyedStream } from './keyed-stream.js';

/** `stream.broadcast(descriptor, ...)`: a stream sent to every subtask of the operator it is connected to, with the broadcast states it writes there. */
export class BroadcastStream<T> {
  constructor(
    /** The stream, partitioned by broadcast. */
    readonly stream: DataStream<T>,
    readonly descriptors: readonly BroadcastStateDescriptor<unknown, unknown>[],
  ) {
    const names = new Set<string>();
    for (const d of descriptors) {
      if (d?.kind !== 'broadcast') throw new TypeError("broadcast(...) takes broadcast state descriptors: broadcastState('name')");
      if (names.has(d.name)) throw new Error(`broadcast(...): the broadcast state '${d.name}' is given twice`);
      names.add(d.name);
    }
  }
}

/** `stream.connect(broadcastStream)`: process it with a BroadcastProcessFunction. */
export class BroadcastConnectedStream<A, B> {
  constructor(
    readonly first: DataStream<A>,
    readonly broadcast: BroadcastStream<B>,
  ) {
    if (first.env !== broadcast.stream.env) throw new Error('connect: streams belong to different environments');
  }

  process<R = ProcessOutputNotInferred>(fn: BroadcastProcessFunction<A, B, R>, name = 'BroadcastProcess'): SingleOutputStream<R> {
    const descriptors = this.broadcast.descriptors;
    return this.first.env.twoInput<R>(name, this.first.transformation, this.broadcast.stream.transformation, () => new BroadcastProcessOperator(fn, descriptors), undefined, undefined);
  }
}

/** `keyedStream.connect(broadcastStream)`: process it with a KeyedBroadcastProcessFunction. */
export class KeyedBroadcastConnectedStream<A, B, K extends KeyType> {
  constructor(
    readonly first: KeyedStream<A, K>,
    readonly broadcast: BroadcastStream<B>,
  ) {
    if (first.input.env !== broadcast.stream.env) throw new Error('connect: streams belong to different environments');
  }

  process<R = ProcessOutputNotInferred>(fn: KeyedBroadcastProcessFunction<K, A, B, R>, name = 'KeyedBroadcastProcess'): SingleOutputStream<R> {
    const descriptors = this.broadcast.descriptors;
    return this.first.input.env.twoInput<R>(
      name,
      this.first.partitionedTransformation(),
      this.broadcast.stream.transformation,
      () => new KeyedBroadcastProcessOperator(fn, descriptors),
      this.first.keySelector as KeySelector<unknown, KeyType>,
      undefined,
    );
  }
}
