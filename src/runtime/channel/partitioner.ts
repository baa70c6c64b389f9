import { assignToKeyGroup, operatorIndexForKeyGroup, type KeyType } from '../state/key-group.js';

/** How records of an edge are distributed over the consumer's subtasks. */
export type Partitioning =
  | { readonly kind: 'forward' }
  | { readonly kind: 'rebalance' }
  | { readonly kind: 'rescale' }
  | { readonly kind: 'broadcast' }
  | { readonly kind: 'hash'; readonly keySelector: (value: never) => KeyType };

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
  }
}

/** Whether each producer subtask talks to exactly one consumer subtask. */
export function isPointwise(p: Partitioning): boolean {
  return p.kind === 'forward';
}
