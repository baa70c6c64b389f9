import { numericPairHash } from '../state/numeric-entries.js';
import { assert } from '../../util/assert.js';

/** Below this many positions a bucket finds a timer by scanning; from it on, through its index. */
const SCAN_LIMIT = 8;

/**
 * Index arrays of buckets that fired, by length, to be zeroed and used again: a new typed
 * array's memory is fresh pages, and on the virtual machines measured here every first touch
 * of a 4 KB page costs about 10 us (see snapshot-parts.ts), which made allocating the index
 * most of a window job's timer registration cost. Bounded: at most `POOL_BYTES` kept.
 */
const freeSlots = new Map<number, Int32Array[]>();
let freeSlotBytes = 0;
const POOL_BYTES = 32 << 20;

function takeSlots(length: number): Int32Array {
  const reused = freeSlots.get(length)?.pop();
  if (reused === undefined) return new Int32Array(length);
  freeSlotBytes -= reused.byteLength;
  return reused.fill(0);
}

function giveSlots(slots: Int32Array): void {
  if (freeSlotBytes + slots.byteLength > POOL_BYTES) return;
  let list = freeSlots.get(slots.length);
  if (list === undefined) freeSlots.set(slots.length, (list = []));
  list.push(slots);
  freeSlotBytes += slots.byteLength;
}

/**
 * The timers of one key group at one timestamp whose keys are numbers (and neither key nor
 * namespace is NaN): (key, namespace) pairs in registration order in one array of doubles,
 * a removed timer's namespace set to NaN, and, once more than a few were registered, an
 * open-addressing index over them (linear probing, backward-shift deletion, at most half
 * full) that finds a pair without a scan.
 *
 * A map of keys to namespaces per timestamp made registering a timer most of a sliding
 * window job's timer cost (a Map insertion per key and window, and its garbage); here it is
 * a hash, a probe and two stores. Keys and namespaces compare with `===` after -0 became 0,
 * as a Map's keys do.
 *
 * Firing (`fire`) walks the positions in order and removes each timer before calling back,
 * so the callback may register or delete timers of this bucket: new ones are appended and
 * fire in the same walk, deleted ones are skipped. Positions are compacted only outside a walk.
 */
export class NumericTimerBucket {
  /** key, namespace, key, namespace, ... in registration order; NaN namespace: removed. */
  private pairs: number[] = [];
  /** Index slots as (hash, position + 1) pairs, hash 0 marking a free slot; null while the bucket is small. */
  private slots: Int32Array | null = null;
  private mask = 0;
  private firing = false;
  /** Live timers. */
  size = 0;

  /**
   * `expectedSize`: how many timers the bucket will likely hold (the size of the group's last
   * one, in a window job); its index is built that large at once rather than grown step by step.
   */
  constructor(private readonly expectedSize = 0) {}

  /** Whether a timer of this key and namespace can be kept in a numeric bucket. */
  static accepts(key: unknown, namespace: number): key is number {
    return typeof key === 'number' && key === key && namespace === namespace;
  }

  has(key: number, namespace: number): boolean {
    return this.positionOf(key + 0, namespace + 0) >= 0;
  }

  /** Registers a timer that is not here (`has` said so). */
  append(key: number, namespace: number): void {
    key += 0;
    namespace += 0;
    const pairs = this.pairs;
    const position = pairs.length >> 1;
    if (!this.firing && position >= 2 * SCAN_LIMIT && 2 * this.size < position) {
      this.compact();
      this.append(key, namespace);
      return;
    }
    pairs.push(key, namespace);
    this.size++;
    if (this.slots !== null) {
      if (2 * (position + 1) > this.slots.length >> 1) this.reindex(position + 1);
      else this.insertSlot(numericPairHash(key, namespace), position);
    } else if (position + 1 > SCAN_LIMIT) this.reindex(Math.max(position + 1, this.expectedSize));
  }

  /** Removes a timer; true when it was here. */
  delete(key: number, namespace: number): boolean {
    key += 0;
    namespace += 0;
    const position = this.positionOf(key, namespace);
    if (position < 0) return false;
    this.removeAt(position, key, namespace);
    return true;
  }

  /**
   * Removes and fires every timer, in registration order, also those registered while
   * firing; a timer deleted while firing does not fire.
   */
  fire(fn: (key: number, namespace: number) => void): void {
    assert(!this.firing, 'a timer bucket fires once at a time');
    this.firing = true;
    try {
      const pairs = this.pairs;
      for (let i = 0; i < pairs.length; i += 2) {
        const namespace = pairs[i + 1]!;
        if (namespace !== namespace) continue;
        const key = pairs[i]!;
        this.removeAt(i >> 1, key, namespace);
        fn(key, namespace);
      }
    } finally {
      this.firing = false;
    }
    if (this.size === 0) this.clear();
  }

  /** Calls `fn` for every live timer in registration order. */
  forEach(fn: (key: number, namespace: number) => void): void {
    const pairs = this.pairs;
    for (let i = 0; i < pairs.length; i += 2) {
      const namespace = pairs[i + 1]!;
      if (namespace === namespace) fn(pairs[i]!, namespace);
    }
  }

  /**
   * Writes the live timers as columns: (timestampMs, namespace) pairs into `out` from
   * `pairAt`, keys from `keyAt`; returns how many.
   */
  writeColumns(timestampMs: number, out: Float64Array, pairAt: number, keyAt: number): number {
    const pairs = this.pairs;
    let n = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      const namespace = pairs[i + 1]!;
      if (namespace !== namespace) continue;
      out[pairAt + 2 * n] = timestampMs;
      out[pairAt + 2 * n + 1] = namespace;
      out[keyAt + n] = pairs[i]!;
      n++;
    }
    return n;
  }

  private positionOf(key: number, namespace: number): number {
    const pairs = this.pairs;
    const slots = this.slots;
    if (slots === null) {
      for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === key && pairs[i + 1] === namespace) return i >> 1;
      return -1;
    }
    const h = numericPairHash(key, namespace);
    const mask = this.mask;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const sh = slots[2 * s]!;
      if (sh === 0) return -1;
      if (sh === h) {
        const p = slots[2 * s + 1]! - 1;
        if (pairs[2 * p] === key && pairs[2 * p + 1] === namespace) return p;
      }
    }
  }

  private removeAt(position: number, key: number, namespace: number): void {
    this.pairs[2 * position + 1] = NaN;
    this.size--;
    const slots = this.slots;
    if (slots === null) return;
    const h = numericPairHash(key, namespace);
    const mask = this.mask;
    let s = h & mask;
    while (slots[2 * s + 1] !== position + 1) {
      assert(slots[2 * s] !== 0, 'a live timer is in the index');
      s = (s + 1) & mask;
    }
    // Backward shift: later entries of the probe run move into the hole unless their home lies cyclically in (hole, j].
    let hole = s;
    for (let j = (s + 1) & mask; slots[2 * j] !== 0; j = (j + 1) & mask) {
      const home = slots[2 * j]! & mask;
      const stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (stays) continue;
      slots[2 * hole] = slots[2 * j]!;
      slots[2 * hole + 1] = slots[2 * j + 1]!;
      hole = j;
    }
    slots[2 * hole] = 0;
    slots[2 * hole + 1] = 0;
  }

  private insertSlot(h: number, position: number): void {
    const slots = this.slots!;
    const mask = this.mask;
    let s = h & mask;
    while (slots[2 * s] !== 0) s = (s + 1) & mask;
    slots[2 * s] = h;
    slots[2 * s + 1] = position + 1;
  }

  /** Builds the index for `positions` positions (at most half full, room to grow). */
  private reindex(positions: number): void {
    let capacity = 4 * SCAN_LIMIT;
    while (capacity < 4 * positions) capacity *= 2;
    if (this.slots !== null) giveSlots(this.slots);
    this.slots = takeSlots(2 * capacity);
    this.mask = capacity - 1;
    const pairs = this.pairs;
    for (let i = 0; i < pairs.length; i += 2) {
      const namespace = pairs[i + 1]!;
      if (namespace === namespace) this.insertSlot(numericPairHash(pairs[i]!, namespace), i >> 1);
    }
  }

  /** Drops removed positions (more than half of them) and rebuilds the index. */
  private compact(): void {
    const pairs = this.pairs;
    let to = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      const namespace = pairs[i + 1]!;
      if (namespace !== namespace) continue;
      pairs[to] = pairs[i]!;
      pairs[to + 1] = namespace;
      to += 2;
    }
    pairs.length = to;
    assert(to === 2 * this.size, 'compaction keeps every live timer');
    if (this.size > SCAN_LIMIT) this.reindex(this.size);
    else if (this.slots !== null) {
      giveSlots(this.slots);
      this.slots = null;
    }
  }

  private clear(): void {
    this.pairs = [];
    if (this.slots !== null) giveSlots(this.slots);
    this.slots = null;
    this.mask = 0;
  }
}
