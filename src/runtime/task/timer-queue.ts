import type { ChangedEntries } from '../state/changed-entries.js';
import { GroupCapture } from '../state/heap-snapshot.js';
import type { KeyType } from '../state/key-group.js';
import { packGroup, unpackGroup } from '../state/keyed-state-snapshot.js';
import { assert } from '../../util/assert.js';
import { MinHeap } from './min-heap.js';

/**
 * The timers of one key group: timestamp -> key -> namespaces, in registration order. One
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
 * registration order (Flink's order within a timestamp is not defined either).
 *
 * Timers are kept per key group (Flink's KeyGroupPartitionedPriorityQueue), so a snapshot
 * captures them the way heap state is captured: copy on access per key group, the rest
 * serialized in the asynchronous phase, nothing copied at the synchronous point.
 */
export class TimerQueue {
  /** Per key group index of the operator's range. */
  readonly groups: TimerGroup[];
  /** Timestamps that may hold a timer (a fired or deleted one may linger until popped). */
  private readonly times = new MinHeap();
  /** Per timestamp in `times`: the key groups that got a timer at it (may repeat or be stale). */
  private readonly groupsAt = new Map<number, number[]>();
  private count = 0;
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
    this.groups = Array.from({ length: groupCount }, () => new Map());
  }

  get size(): number {
    return this.count;
  }

  get groupCount(): number {
    return this.groups.length;
  }

  /** The earliest timestamp that may hold a timer (a deleted one may linger). */
  peekTime(): number | undefined {
    return this.times.peek();
  }

  add(timestampMs: number, key: KeyType, namespace: number): boolean {
    const g = this.groupIndexOf(key);
    const group = this.groups[g]!;
    let byKey = group.get(timestampMs);
    const namespaces = byKey?.get(key);
    // Many registrations repeat a timer that exists (a process function that registers one per
    // element, a session window): nothing changes, so the snapshot capture and the change
    // tracking are not bothered.
    if (namespaces !== undefined && (namespaces === namespace || (typeof namespaces !== 'number' && namespaces.includes(namespace)))) return false;
    if (this.capture !== null) this.capture.touch(g);
    if (this.changes !== null) this.changes.mark(g, key);
    if (byKey === undefined) {
      byKey = new Map();
      group.set(timestampMs, byKey);
      let at = this.groupsAt.get(timestampMs);
      if (at === undefined) {
        this.groupsAt.set(timestampMs, (at = []));
        this.times.push(timestampMs);
      }
      at.push(g);
    }
    if (namespaces === undefined) byKey.set(key, namespace);
    else if (typeof namespaces === 'number') byKey.set(key, [namespaces, namespace]);
    else namespaces.push(namespace);
    this.count++;
    return true;
  }

  delete(timestampMs: number, key: KeyType, namespace: number): boolean {
    const g = this.groupIndexOf(key);
    const byKey = this.groups[g]!.get(timestampMs);
    const namespaces = byKey?.get(key);
    if (namespaces === undefined) return false;
    const i = typeof namespaces === 'number' ? (namespaces === namespace ? 0 : -1) : namespaces.indexOf(namespace);
    if (i < 0) return false;
    if (this.capture !== null) this.capture.touch(g);
    if (this.changes !== null) this.changes.mark(g, key);
    if (typeof namespaces === 'number') {
      byKey!.delete(key);
    } else {
      namespaces.splice(i, 1);
      if (namespaces.length === 1) byKey!.set(key, namespaces[0]!);
    }
    this.count--;
    return true;
  }

  /**
   * Fires every timer with timestamp <= upToMs, one at a time (as Flink polls its queue):
   * timers added while firing fire too when due, and a timer deleted while its timestamp is
   * firing does not fire. One live Map iterator per (timestamp, key group) keeps this linear
   * (restarting iteration after each deletion would skip ever more holes).
   */
  fireUpTo(upToMs: number, fire: (timestampMs: number, key: KeyType, namespace: number) => void): void {
    for (;;) {
      const t = this.times.peek();
      if (t === undefined || t > upToMs) return;
      const at = this.groupsAt.get(t);
      // `at` grows while firing when a timer at t lands in a group that had none left at t.
      for (let i = 0; at !== undefined && i < at.length; i++) {
        const g = at[i]!;
        const group = this.groups[g]!;
        const byKey = group.get(t);
        if (byKey === undefined) continue;
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
      this.groupsAt.delete(t);
      // A timer registered while firing may be earlier than t (event time in the past): it
      // is on top now and fires next; t stays in the heap, stale, and is popped later.
      if (this.times.peek() === t) this.times.pop();
    }
  }

  /** Every timer: [timestamp, key, namespace]. */
  *entries(): IterableIterator<[number, KeyType, number]> {
    for (const group of this.groups) {
      for (const [t, byKey] of group) {
        for (const [k, nss] of byKey) {
          if (typeof nss === 'number') yield [t, k, nss];
          else for (const ns of nss) yield [t, k, ns];
        }
      }
    }
  }

  /**
   * The timers of one key group, packed (undefined when it has none) as columns:
   * [Float64Array of (timestamp, namespace) pairs, keys], the keys a Float64Array when all
   * are numbers (then packing is a copy) and an array otherwise. Nested maps packed as they
   * are took 8x longer, which made timers most of a q5 checkpoint's cost.
   */
  encodeGroup(groupIndex: number): Uint8Array | undefined {
    const group = this.groups[groupIndex]!;
    let count = 0;
    for (const byKey of group.values()) for (const namespaces of byKey.values()) count += namespaceCount(namespaces);
    if (count === 0) return undefined;
    const columns = new TimerColumns(count);
    for (const [t, byKey] of group) byKey.forEach((namespaces, key) => columns.addAll(t, key, namespaces));
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
    for (const [t, byKey] of this.groups[groupIndex]!) {
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
