import { assert } from '../../util/assert.js';

/**
 * The entries of one key group of a heap state table while every key, namespace and value is
 * a number (counts, sums, window slices keyed by an id): (key, namespace) -> value in an
 * open-addressing hash table of typed arrays, linear probing, deletion by backward shift (no
 * tombstones), at most half full.
 *
 * Against a map per key of maps per namespace it saves two objects per key (less garbage to
 * collect), and a snapshot copies it with a walk over typed arrays (`writeColumns`) instead
 * of visiting every key's map: a full capture of q5's window slices became one pass over
 * memory laid out in order.
 *
 * Keys and namespaces are compared with `===` after -0 became 0 (as a Map's SameValueZero
 * does); NaN is not a valid key or namespace here (`accepts`).
 */
export class NumericEntries {
  private keys: Float64Array;
  private namespaces: Float64Array;
  private values: Float64Array;
  /** Hash of the entry in a slot; 0 marks a free slot (a hash of 0 is stored as 1). */
  private hashes: Int32Array;
  private mask: number;
  size = 0;

  constructor(capacity = 8) {
    assert(capacity >= 2 && (capacity & (capacity - 1)) === 0, `capacity ${capacity} is a power of two`);
    this.keys = new Float64Array(capacity);
    this.namespaces = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
    this.hashes = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  /** Whether a key and namespace can be kept here (numbers, not NaN). */
  static accepts(key: unknown, namespace: number): key is number {
    return typeof key === 'number' && key === key && namespace === namespace;
  }

  /**
   * The slot `get` found last: a read-modify-write (an aggregate's add, a counter) sets the
   * entry it just read, found again by comparing the slot's key and namespace instead of a
   * hash and a probe. Entries move (a removal's shift, growth), so the slot is only a guess,
   * checked before use: a used slot holding the same key and namespace is that entry.
   */
  private lastFound = 0;

  get(key: number, namespace: number): number | undefined {
    const i = this.find(key + 0, namespace + 0, numericPairHash(key + 0, namespace + 0));
    if (i < 0) return undefined;
    this.lastFound = i;
    return this.values[i];
  }

  /** Sets the value; true when the entry is new. */
  set(key: number, namespace: number, value: number): boolean {
    key += 0;
    namespace += 0;
    const last = this.lastFound;
    if (this.hashes[last] !== 0 && this.keys[last] === key && this.namespaces[last] === namespace) {
      this.values[last] = value;
      return false;
    }
    const h = numericPairHash(key, namespace);
    const i = this.find(key, namespace, h);
    if (i >= 0) {
      this.values[i] = value;
      return false;
    }
    if (2 * (this.size + 1) > this.hashes.length) this.grow();
    let at = h & this.mask;
    while (this.hashes[at] !== 0) at = (at + 1) & this.mask;
    this.hashes[at] = h;
    this.keys[at] = key;
    this.namespaces[at] = namespace;
    this.values[at] = value;
    this.size++;
    return true;
  }

  /** Removes an entry; true when it was there. */
  delete(key: number, namespace: number): boolean {
    const i = this.find(key + 0, namespace + 0, numericPairHash(key + 0, namespace + 0));
    if (i < 0) return false;
    this.removeAt(i);
    return true;
  }

  /** Removes every namespace of `key` (a walk over the table: for restores, not per record); returns how many. */
  deleteKey(key: number): number {
    key += 0;
    let removed = 0;
    for (let i = 0; i <= this.mask; ) {
      if (this.hashes[i] !== 0 && this.keys[i] === key) {
        this.removeAt(i); // an entry may have shifted into slot i: look at it again
        removed++;
      } else i++;
    }
    return removed;
  }

  /** Calls `fn` for every entry, in slot order. */
  forEach(fn: (key: number, namespace: number, value: number) => void): void {
    const { hashes, keys, namespaces, values } = this;
    for (let i = 0; i <= this.mask; i++) if (hashes[i] !== 0) fn(keys[i]!, namespaces[i]!, values[i]!);
  }

  /** Writes every entry as (key, namespace, value) triples into `out` from index `at`; returns the index after the last. */
  writeColumns(out: Float64Array, at: number): number {
    assert(out.length - at >= 3 * this.size, 'the columns have room for every entry');
    const { hashes, keys, namespaces, values } = this;
    for (let i = 0; i <= this.mask; i++) {
      if (hashes[i] === 0) continue;
      out[at] = keys[i]!;
      out[at + 1] = namespaces[i]!;
      out[at + 2] = values[i]!;
      at += 3;
    }
    return at;
  }

  /** As writeColumns, only the entries whose key is in `keys`; returns the index after the last. */
  writeColumnsOf(keys: ReadonlySet<unknown>, out: Float64Array, at: number): number {
    assert(out.length - at >= 3 * this.size, 'the columns have room for every entry');
    const { hashes, keys: ks, namespaces, values } = this;
    for (let i = 0; i <= this.mask; i++) {
      if (hashes[i] === 0 || !keys.has(ks[i]!)) continue;
      out[at] = ks[i]!;
      out[at + 1] = namespaces[i]!;
      out[at + 2] = values[i]!;
      at += 3;
    }
    return at;
  }

  private find(key: number, namespace: number, h: number): number {
    const { hashes, keys, namespaces, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = hashes[i]!;
      if (s === 0) return -1;
      if (s === h && keys[i] === key && namespaces[i] === namespace) return i;
    }
  }

  /** Frees slot `i` and shifts later entries of its probe run back (so no lookup passes a hole). */
  private removeAt(i: number): void {
    const { hashes, keys, namespaces, values, mask } = this;
    let hole = i;
    for (let j = (i + 1) & mask; hashes[j] !== 0; j = (j + 1) & mask) {
      const home = hashes[j]! & mask;
      // The entry at j may move to the hole unless its home lies cyclically in (hole, j].
      const stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (stays) continue;
      hashes[hole] = hashes[j]!;
      keys[hole] = keys[j]!;
      namespaces[hole] = namespaces[j]!;
      values[hole] = values[j]!;
      hole = j;
    }
    hashes[hole] = 0;
    this.size--;
  }

  private grow(): void {
    const { hashes, keys, namespaces, values } = this;
    const capacity = 2 * hashes.length;
    this.keys = new Float64Array(capacity);
    this.namespaces = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
    this.hashes = new Int32Array(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < hashes.length; i++) {
      const h = hashes[i]!;
      if (h === 0) continue;
      let at = h & this.mask;
      while (this.hashes[at] !== 0) at = (at + 1) & this.mask;
      this.hashes[at] = h;
      this.keys[at] = keys[i]!;
      this.namespaces[at] = namespaces[i]!;
      this.values[at] = values[i]!;
    }
  }
}

const scratch = new Float64Array(1);
const words = new Int32Array(scratch.buffer);

/** A non-zero 32-bit hash of (key, namespace): both doubles' bits, mixed (murmur3's finalizer). -0 must be folded into 0 first. */
export function numericPairHash(key: number, namespace: number): number {
  let h: number;
  if ((key | 0) === key) h = Math.imul(key, 0x9e3779b1);
  else {
    scratch[0] = key;
    h = Math.imul(words[0]! ^ Math.imul(words[1]!, 0x85ebca6b), 0x9e3779b1);
  }
  if ((namespace | 0) === namespace) h ^= Math.imul(namespace, 0xc2b2ae35);
  else {
    scratch[0] = namespace;
    h ^= Math.imul(words[0]! ^ Math.imul(words[1]!, 0x27d4eb2f), 0xc2b2ae35);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h === 0 ? 1 : h;
}
