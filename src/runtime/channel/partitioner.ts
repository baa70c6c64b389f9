import { assignToKeyGroup, operatorIndexForKeyGroup, type KeyType } from '../state/key-group.js';

/** How records of an edge are distributed over the consumer's subtasks. */
export type Partitioning =
  | { readonly kind: 'forward' }
  | { readonly kind: 'rebalance' }
  | { readonly kind: 'rescale' }
  | { readonly kind: 'broadcast' }
  | { readonly kind: 'hash'; readonly keySelector: (value: never) => KeyType }
  /** Uniformly random channels (Flink's shuffle()). */
  | { readonly kind: 'shuffle' }
  /** Every record to the first consumer subtask (Flink's global()). */
  | { readonly kind: 'global' }
  /** The channel a user's partitioner picks for the record's key (Flink's partitionCustom). */
  | { readonly kind: 'custom'; readonly partitioner: (key: never, numPartitions: number) => number; readonly keySelector: (value: never) => unknown };

export type PartitioningKind = Partitioning['kind'];

/** Picks the channel of a record; -1 means every channel. */
export interface ChannelSelector {
  select(value: unknown): number;
}

class SingleChannel implements ChannelSelector {
  select(): number {
    return 0;
  }
}

class RoundRobin implements ChannelSelector {
  private next: number;
  constructor(private readonly n: number, start: number) {
    this.next = start % n;
  }
  select(): number {
    const c = this.next;
    this.next = c + 1 === this.n ? 0 : c + 1;
    return c;
  }
}

class AllChannels implements ChannelSelector {
  select(): number {
    return -1;
  }
}

/** Uniformly random channels, from a xorshift generator seeded by the producer (reproducible runs). */
class RandomChannel implements ChannelSelector {
  private state: number;
  constructor(private readonly n: number, seed: number) {
    this.state = Math.imul(seed + 1, 0x9e3779b1) | 0 || 1;
  }
  select(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x;
    return (x >>> 0) % this.n;
  }
}

/** partitionCustom's selector: the user's partitioner, checked. */
class CustomChannel implements ChannelSelector {
  constructor(
    private readonly partitioner: (key: unknown, numPartitions: number) => number,
    private readonly keySelector: (value: unknown) => unknown,
    private readonly n: number,
  ) {}
  select(value: unknown): number {
    const key = this.keySelector(value);
    const c = this.partitioner(key, this.n);
    if (!Number.isInteger(c) || c < 0 || c >= this.n) {
      throw new RangeError(`partitionCustom: the partitioner returned ${String(c)} for key ${JSON.stringify(key) ?? String(key)}; it must return an integer in [0, ${this.n}) (numPartitions is the second argument)`);
    }
    return c;
  }
}

/** A keyBy's selector: the channel of the subtask that owns the record's key group. */
export class KeyGroupHash implements ChannelSelector {
  /** The key group of the record `select` was called with last (the writer ships it along). */
  keyGroup = -1;
  /** The channel of each key group (a lookup instead of a division per record). */
  private readonly channelOf: Int32Array;
  constructor(
    private readonly keySelector: (value: unknown) => KeyType,
    private readonly maxParallelism: number,
    n: number,
  ) {
    this.channelOf = new Int32Array(maxParallelism);
    for (let g = 0; g < maxParallelism; g++) this.channelOf[g] = operatorIndexForKeyGroup(maxParallelism, n, g);
  }
  select(value: unknown): number {
    const keyGroup = assignToKeyGroup(this.keySelector(value), this.maxParallelism);
    this.keyGroup = keyGroup;
    return this.channelOf[keyGroup]!;
  }
}

/**
 * The selector for one producer subtask. `numChannels` is the number of channels this
 * producer writes (1 for forward), `maxParallelism` the consumer's.
 */
export function channelSelector(p: Partitioning, numChannels: number, producerIndex: number, maxParallelism: number): ChannelSelector {
  switch (p.kind) {
    case 'forward':
      return new SingleChannel();
    case 'rebalance':
    case 'rescale':
      return numChannels === 1 ? new SingleChannel() : new RoundRobin(numChannels, producerIndex);
    case 'broadcast':
      return new AllChannels();
    case 'hash':
      return new KeyGroupHash(p.keySelector as (value: unknown) => KeyType, maxParallelism, numChannels);
    case 'shuffle':
      return numChannels === 1 ? new SingleChannel() : new RandomChannel(numChannels, producerIndex);
    case 'global':
      return new SingleChannel();
    case 'custom':
      return new CustomChannel(p.partitioner as (key: unknown, n: number) => number, p.keySelector as (value: unknown) => unknown, numChannels);
  }
}

/** Whether each producer subtask talks to exactly one consumer subtask. */
export function isPointwise(p: Partitioning): boolean {
  return p.kind === 'forward';
}
