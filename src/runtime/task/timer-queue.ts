import type { ChangedEntries } from '../state/changed-entries.js';
import { GroupCapture } from '../state/heap-snapshot.js';
import type { KeyType } from '../state/key-group.js';
import { packGroup, unpackGroup } from '../state/keyed-state-snapshot.js';
import { assert } from '../../util/assert.js';
import { MinHeap } from './min-heap.js';
import { NumericTimerBucket } from './numeric-timer-bucket.js';

/**
 * The timers of one key group whose keys are not numbers: timestamp -> key -> namespaces, in registration order. One
 * namespace (the common case: a window's timestamp implies its namespace) is kept as the
 * number itself, two or more as an array: a timer costs no array of its own.
 */
type Namespaces = number | number[];
type TimerGroup = Map<number, Map<KeyType, Namespaces>>;

/** The nested-map format of timer groups written before the columnar one. */
type LegacyTimerGroup = Map<number, Map<KeyType, number[]>>;

function namespaceCount(namespaces: Namespaces): number {
  return typeof namespaces === 'number' ? 1 : namespaces.length;
}

/**
 * Timers of one keyed operator in one time domain, deduplicated per (timestamp, key,
 * namespace), fired in timestamp order and, within a timestamp, key group by key group in
 * registration order, timers of number keys before the others (Flink's order within a
 * timestamp is not defined either).
 *
 * Timers are kept per key group (Flink's KeyGroupPartitionedPriorityQueue), so a snapshot
 * captures them the way heap state is captured: copy on access per key group, the rest
 * serialized in the asynchronous phase, nothing copied at the synchronous point. Within a
 * key group, per timestamp: timers of number keys in a `NumericTimerBucket` (arrays of
 * doubles), the others in a map of keys to namespaces.
 */
export class TimerQueue {
  /** Per key group index of the operator's range: timestamp -> timers of number keys. */
  private readonly numeric: Map<number, NumericTimerBucket>[];
  /** Per key group index: timestamp -> timers of other keys. */
  private readonly general: TimerGroup[];
  /** Timestamps that may hold a timer (a fired or deleted one may linger until popped). */
  private readonly times = new MinHeap();
  /** Per timestamp in `times`: the key groups that got a timer at it (may repeat or be stale). */
  private readonly groupsAt = new Map<number, number[]>();
  private count = 0;
  /** Per key group index: how many timers its last numeric bucket held when it fired (the next one likely holds as many). */
  private readonly lastFiredSize: Int32Array;
  /** Set while a snapshot still has groups of this queue to serialize. */
  capture: GroupCapture | null = null;
  /** Set when checkpoints are incremental: the keys whose timers changed, per key group. */
  changes: ChangedEntries<KeyType> | null = null;

  /**
   * `groupIndexOf` maps a key to its key group's index in the operator's range; the default
   * (one group) suits a queue that is never snapshotted per key group.
   */
  constructor(
    groupCount = 1,
    private readonly groupIndexOf: (key: KeyType) => number = () => 0,
  ) {
    assert(groupCount >= 1, 'a timer queue has at least one key group');
    this.numeric = Array.from({ length: groupCount }, () => new Map());
    this.general = Array.from({ length: groupCount }, () => new Map());
    this.lastFiredSize = new Int32Array(groupCount);
  }

  get size(): number {
    return this.count;
  }

  get groupCount(): number {
    return this.numeric.length;
  }

  /** The earliest timestamp that may hold a timer (a deleted one may linger). */
  peekTime(): number | undefined {
    return this.times.peek();
  }

  add(timestampMs: number, key: KeyType, namespace: number): boolean {
    const g = this.groupIndexOf(key);
    // Many registrations repeat a timer that exists (a process function that registers one per
    // element, a session window): nothing changes, so the snapshot capture and the change
    // tracking are not bothered.
    if (NumericTimerBucket.accepts(key, namespace)) {
      const buckets = this.numeric[g]!;
      let bucket = buckets.get(timestampMs);
      if (bucket !== undefined && bucket.has(key, namespace)) return false;
      this.changing(g, key);
      if (bucket === undefined) {
        buckets.set(timestampMs, (bucket = new NumericTimerBucket(this.lastFiredSize[g])));
        this.noteGroupAt(timestampMs, g);
      }
      bucket.append(key, namespace);
      this.count++;
      return true;
    }
    const group = this.general[g]!;
    let byKey = group.get(timestampMs);
    const namespaces = byKey?.get(key);
    if (namespaces !== undefined && (namespaces === namespace || (typeof namespaces !== 'number' && namespaces.includes(namespace)))) return false;
    this.changing(g, key);
    if (byKey === undefined) {
      group.set(timestampMs, (byKey = new Map()));
      this.noteGroupAt(timestampMs, g);
    }
    if (namespaces === undefined) byKey.set(key, namespace);
    else if (typeof namespaces === 'number') byKey.set(key, [namespaces, namespace]);
    else namespaces.push(namespace);
    this.count++;
    return true;
  }

  delete(timestampMs: number, key: KeyType, namespace: number): boolean {
    const g = this.groupIndexOf(key);
    if (NumericTimerBucket.accepts(key, namespace)) {
      const bucket = this.numeric[g]!.get(timestampMs);
      if (bucket === undefined || !bucket.has(key, namespace)) return false;
      this.changing(g, key);
      bucket.delete(key, namespace);
      this.count--;
      return true;
    }
    const byKey = this.general[g]!.get(timestampMs);
    const namespaces = byKey?.get(key);
    if (namespaces === undefined) return false;
    const i = typeof namespaces === 'number' ? (namespaces === namespace ? 0 : -1) : namespaces.indexOf(namespace);
    if (i < 0) return false;
    this.changing(g, key);
    if (typeof namespaces === 'number') {
      byKey!.delete(key);
    } else {
      namespaces.splice(i, 1);
      if (namespaces.length === 1) byKey!.set(key, namespaces[0]!);
    }
    this.count--;
    return true;
  }

  /** Before a change of a key's timers in key group `g`: the capture and the change tracking learn of it. */
  private changing(g: number, key: KeyType): void {
    if (this.capture !== null) this.capture.touch(g);
    if (this.changes !== null) this.changes.mark(g, key);
  }

  /** A key group got its first timer at a timestamp (of one kind of key). */
  private noteGroupAt(timestampMs: number, g: number): void {
    let at = this.groupsAt.get(timestampMs);
    if (at === undefined) {
      this.groupsAt.set(timestampMs, (at = []));
      this.times.push(timestampMs);
    }
    at.push(g);
  }

  /**
   * Fires every timer with timestamp <= upToMs, one at a time (as Flink polls its queue):
   * timers added while firing fire too when due, and a timer deleted while its timestamp is
   * firing does not fire. One live Map iterator per (timestamp, key group) keeps this linear
   * (restarting iteration after each deletion would skip ever more holes).
   *
   * `shouldStop` is asked after each (timestamp, key group): when it says yes, firing stops
   * there and false is returned; a later call continues where it stopped. True when every
   * timer up to `upToMs` fired.
   */
  fireUpTo(upToMs: number, fire: (timestampMs: number, key: KeyType, namespace: number) => void, shouldStop?: () => boolean): boolean {
    for (let first = true; ; first = false) {
      const t = this.times.peek();
      if (t === undefined || t > upToMs) return true;
      if (!first && shouldStop !== undefined && shouldStop()) return false;
      const at = this.groupsAt.get(t);
      // `at` grows while firing when a timer at t lands in a group that had none left at t.
      for (let i = 0; at !== undefined && i < at.length; i++) {
        const g = at[i]!;
        const buckets = this.numeric[g]!;
        const bucket = buckets.get(t);
        if (bucket !== undefined) {
          if (this.capture !== null) this.capture.touch(g);
          const changes = this.changes;
          this.lastFiredSize[g] = bucket.size;
          bucket.fire((key, ns) => {
            if (changes !== null) changes.mark(g, key);
            this.count--;
            fire(t, key, ns);
          });
          // Every timer of the bucket fired or was deleted; one registered later at t gets a new bucket (and a visit).
          if (buckets.get(t) === bucket) buckets.delete(t);
        }
        this.fireGeneral(t, g, fire);
        if (shouldStop !== undefined && i + 1 < at.length && shouldStop()) {
          // The groups visited leave the list: the next call starts with the first one left.
          at.splice(0, i + 1);
          return false;
        }
      }
      this.groupsAt.delete(t);
      // A timer registered while firing may be earlier than t (event time in the past): it
      // is on top now and fires next; t stays in the heap, stale, and is popped later.
      if (this.times.peek() === t) this.times.pop();
    }
  }

  /** Fires the timers of keys that are not numbers at `t` in key group `g`. */
  private fireGeneral(t: number, g: number, fire: (timestampMs: number, key: KeyType, namespace: number) => void): void {
    const group = this.general[g]!;
    const byKey = group.get(t);
    if (byKey === undefined) return;
    if (this.capture !== null) this.capture.touch(g);
    const changes = this.changes;
    const it = byKey.entries();
    for (let r = it.next(); !r.done; r = it.next()) {
      const key = r.value[0];
      if (changes !== null) changes.mark(g, key);
      // One at a time, re-read after each: the timer fired may add or delete timers of this key at t.
      for (let namespaces = byKey.get(key); namespaces !== undefined; namespaces = byKey.get(key)) {
        let ns: number;
        if (typeof namespaces === 'number') {
          ns = namespaces;
          byKey.delete(key);
        } else {
          ns = namespaces.shift()!;
          if (namespaces.length === 1) byKey.set(key, namespaces[0]!);
          else if (namespaces.length === 0) byKey.delete(key);
        }
        this.count--;
        fire(t, key, ns);
      }
    }
    // Every timer of (t, g) fired or was deleted (new ones were visited above).
    if (group.get(t) === byKey) group.delete(t);
  }

  /** Every timer: [timestamp, key, namespace]. */
  *entries(): IterableIterator<[number, KeyType, number]> {
    for (let g = 0; g < this.numeric.length; g++) {
      const timers = new TimerColumns();
      this.collectGroup(g, (t, key, namespaces) => timers.addAll(t, key, namespaces));
      const [timesAndNamespaces, keys] = timers.columns();
      for (let i = 0; i < keys.length; i++) yield [timesAndNamespaces[2 * i]!, keys[i]!, timesAndNamespaces[2 * i + 1]!];
    }
  }

  /** Calls `fn` for the timers of key group `g`: per timestamp, its number keys' one by one, then the other keys' with their namespaces. */
  private collectGroup(g: number, fn: (timestampMs: number, key: KeyType, namespaces: Namespaces) => void): void {
    for (const [t, bucket] of this.numeric[g]!) bucket.forEach((key, ns) => fn(t, key, ns));
    for (const [t, byKey] of this.general[g]!) byKey.forEach((namespaces, key) => fn(t, key, namespaces));
  }

  /** How many timers key group `g` holds when every key is a number; -1 when some key is not. */
  numericGroupSize(g: number): number {
    for (const byKey of this.general[g]!.values()) if (byKey.size > 0) return -1;
    let count = 0;
    for (const bucket of this.numeric[g]!.values()) count += bucket.size;
    return count;
  }

  /**
   * Writes the timers of key group `g` (every key a number: `numericGroupSize` >= 0) as the
   * columns of `encodeGroup`, into `out` from `at`: (timestamp, namespace) pairs, then the keys.
   */
  writeNumericGroup(g: number, out: Float64Array, at: number): void {
    const count = this.numericGroupSize(g);
    assert(count >= 0 && out.length - at >= 3 * count, 'the columns have room for the timers of a group of number keys');
    let n = 0;
    for (const [t, bucket] of this.numeric[g]!) n += bucket.writeColumns(t, out, at + 2 * n, at + 2 * count + n);
    assert(n === count, 'every timer of the group was written');
  }

  /** How many timers key group `g` holds. */
  private groupSize(g: number): number {
    let count = 0;
    for (const bucket of this.numeric[g]!.values()) count += bucket.size;
    for (const byKey of this.general[g]!.values()) for (const namespaces of byKey.values()) count += namespaceCount(namespaces);
    return count;
  }

  /**
   * The timers of one key group, packed (undefined when it has none) as columns:
   * [Float64Array of (timestamp, namespace) pairs, keys], the keys a Float64Array when all
   * are numbers (then packing is a copy) and an array otherwise. Nested maps packed as they
   * are took 8x longer, which made timers most of a q5 checkpoint's cost.
   */
  encodeGroup(groupIndex: number): Uint8Array | undefined {
    const count = this.groupSize(groupIndex);
    if (count === 0) return undefined;
    const columns = new TimerColumns(count);
    this.collectGroup(groupIndex, (t, key, namespaces) => columns.addAll(t, key, namespaces));
    assert(columns.size === count, 'every timer of the group was encoded');
    return packGroup(columns.columns());
  }

  /**
   * The timers of the `changed` keys of one key group, as a delta that replaces every timer
   * of those keys (undefined when no key changed): the columns of `encodeGroup` plus the
   * changed keys.
   */
  encodeGroupDelta(groupIndex: number, changed: ReadonlySet<KeyType>): Uint8Array | undefined {
    if (changed.size === 0) return undefined;
    const columns = new TimerColumns(changed.size);
    for (const [t, bucket] of this.numeric[groupIndex]!) {
      bucket.forEach((key, ns) => {
        if (changed.has(key)) columns.add(t, key, ns);
      });
    }
    for (const [t, byKey] of this.general[groupIndex]!) {
      // Walk the smaller side; no closure per timer (this runs for every changed key at every checkpoint).
      if (byKey.size <= changed.size) {
        byKey.forEach((namespaces, key) => {
          if (changed.has(key)) columns.addAll(t, key, namespaces);
        });
      } else {
        for (const key of changed) {
          const namespaces = byKey.get(key);
          if (namespaces !== undefined) columns.addAll(t, key, namespaces);
        }
      }
    }
    let replaced: Float64Array | KeyType[] = new Float64Array(changed.size);
    let i = 0;
    for (const key of changed) {
      if (typeof key !== 'number') {
        replaced = [...changed];
        break;
      }
      replaced[i++] = key;
    }
    return packGroup([...columns.columns(), replaced]);
  }

  /** Adds the timers of a packed group (from `encodeGroup`). */
  addEncodedGroup(bytes: Uint8Array): void {
    forEachEncodedTimer(bytes, (t, key, ns) => this.add(t, key, ns));
  }
}

/** Timers collected into the columns a packed timer group holds. */
export class TimerColumns {
  private timesAndNamespaces: Float64Array;
  /** The keys while all are numbers; null once one is not (then `keys` holds them). */
  private numericKeys: Float64Array | null;
  private keys: KeyType[] | null = null;
  private count = 0;

  constructor(capacity = 16) {
    this.timesAndNamespaces = new Float64Array(2 * Math.max(1, capacity));
    this.numericKeys = new Float64Array(Math.max(1, capacity));
  }

  get size(): number {
    return this.count;
  }

  add(timestampMs: number, key: KeyType, namespace: number): void {
    const i = this.count;
    if (2 * i === this.timesAndNamespaces.length) {
      const grown = new Float64Array(2 * this.timesAndNamespaces.length);
      grown.set(this.timesAndNamespaces);
      this.timesAndNamespaces = grown;
      if (this.numericKeys !== null) {
        const keys = new Float64Array(2 * this.numericKeys.length);
        keys.set(this.numericKeys);
        this.numericKeys = keys;
      }
    }
    this.timesAndNamespaces[2 * i] = timestampMs;
    this.timesAndNamespaces[2 * i + 1] = namespace;
    if (this.numericKeys !== null && typeof key !== 'number') {
      this.keys = Array.from(this.numericKeys.subarray(0, i));
      this.numericKeys = null;
    }
    if (this.numericKeys !== null) this.numericKeys[i] = key as number;
    else this.keys!.push(key);
    this.count = i + 1;
  }

  /** Adds a key's timers at one timestamp: one namespace or several. */
  addAll(timestampMs: number, key: KeyType, namespaces: Namespaces): void {
    if (typeof namespaces === 'number') this.add(timestampMs, key, namespaces);
    else for (let i = 0; i < namespaces.length; i++) this.add(timestampMs, key, namespaces[i]!);
  }

  columns(): [Float64Array, Float64Array | KeyType[]] {
    return [this.timesAndNamespaces.subarray(0, 2 * this.count), this.numericKeys?.subarray(0, this.count) ?? this.keys!];
  }
}

/** The keys a timer delta (from `encodeGroupDelta`) replaces, and a walk over its timers. */
export function decodeTimerDelta(bytes: Uint8Array): { replacedKeys: ArrayLike<KeyType>; forEach(fn: (timestampMs: number, key: KeyType, namespace: number) => void): void } {
  const [timesAndNamespaces, keys, replacedKeys] = unpackGroup(bytes) as [Float64Array, ArrayLike<KeyType>, ArrayLike<KeyType>];
  assert(timesAndNamespaces.length === 2 * keys.length && replacedKeys.length >= 0, 'a timer delta holds a timestamp and a namespace per key, and the keys it replaces');
  return {
    replacedKeys,
    forEach: (fn) => {
      for (let i = 0; i < keys.length; i++) fn(timesAndNamespaces[2 * i]!, keys[i]!, timesAndNamespaces[2 * i + 1]!);
    },
  };
}

/** Calls `fn` for every timer of a group packed by `TimerQueue.encodeGroup` (or in the earlier nested-map format). */
export function forEachEncodedTimer(bytes: Uint8Array, fn: (timestampMs: number, key: KeyType, namespace: number) => void): void {
  const packed = unpackGroup(bytes) as [Float64Array, ArrayLike<KeyType>] | LegacyTimerGroup;
  if (Array.isArray(packed)) {
    const [timesAndNamespaces, keys] = packed;
    assert(timesAndNamespaces.length === 2 * keys.length, 'a timer group holds a timestamp and a namespace per key');
    for (let i = 0; i < keys.length; i++) fn(timesAndNamespaces[2 * i]!, keys[i]!, timesAndNamespaces[2 * i + 1]!);
    return;
  }
  for (const [t, byKey] of packed) for (const [k, nss] of byKey) for (const ns of nss) fn(t, k, ns);
}
