import type { ChangedEntries } from '../state/changed-entries.js';
import { GroupCapture } from '../state/heap-snapshot.js';
import type { KeyType } from '../state/key-group.js';
import { packGroup, unpackGroup } from '../state/keyed-state-snapshot.js';
import { assert } from '../../util/assert.js';
import { MinHeap } from './min-heap.js';

/** The timers of one key group: timestamp -> key -> namespaces, in registration order. */
type TimerGroup = Map<number, Map<KeyType, number[]>>;

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
  /** Set when checkpoints are incremental: the key groups whose timers changed. */
  changes: ChangedEntries<0> | null = null;

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

  /** The earliest timestamp that may hold a timer (a deleted one may linger). */
  peekTime(): number | undefined {
    return this.times.peek();
  }

  add(timestampMs: number, key: KeyType, namespace: number): boolean {
    const g = this.groupIndexOf(key);
    if (this.capture !== null) this.capture.touch(g);
    if (this.changes !== null) this.changes.mark(g, 0);
    const group = this.groups[g]!;
    let byKey = group.get(timestampMs);
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
    const namespaces = byKey.get(key);
    if (namespaces === undefined) {
      byKey.set(key, [namespace]);
    } else {
      if (namespaces.includes(namespace)) return false;
      namespaces.push(namespace);
    }
    this.count++;
    return true;
  }

  delete(timestampMs: number, key: KeyType, namespace: number): boolean {
    const g = this.groupIndexOf(key);
    const byKey = this.groups[g]!.get(timestampMs);
    const namespaces = byKey?.get(key);
    if (namespaces === undefined) return false;
    const i = namespaces.indexOf(namespace);
    if (i < 0) return false;
    if (this.capture !== null) this.capture.touch(g);
    if (this.changes !== null) this.changes.mark(g, 0);
    namespaces.splice(i, 1);
    if (namespaces.length === 0) byKey!.delete(key);
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
        if (this.changes !== null) this.changes.mark(g, 0);
        const it = byKey.entries();
        for (let r = it.next(); !r.done; r = it.next()) {
          const [key, namespaces] = r.value;
          while (namespaces.length > 0) {
            const ns = namespaces.shift()!;
            if (namespaces.length === 0) byKey.delete(key);
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
    for (const group of this.groups) for (const [t, byKey] of group) for (const [k, nss] of byKey) for (const ns of nss) yield [t, k, ns];
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
    for (const byKey of group.values()) for (const namespaces of byKey.values()) count += namespaces.length;
    if (count === 0) return undefined;
    const timesAndNamespaces = new Float64Array(2 * count);
    let numericKeys: Float64Array | null = new Float64Array(count);
    let keys: KeyType[] | null = null;
    let i = 0;
    for (const [t, byKey] of group) {
      for (const [key, namespaces] of byKey) {
        if (numericKeys !== null && typeof key !== 'number') {
          keys = Array.from(numericKeys.subarray(0, i));
          numericKeys = null;
        }
        for (const ns of namespaces) {
          timesAndNamespaces[2 * i] = t;
          timesAndNamespaces[2 * i + 1] = ns;
          if (numericKeys !== null) numericKeys[i] = key as number;
          else keys!.push(key);
          i++;
        }
      }
    }
    assert(i === count, 'every timer of the group was encoded');
    return packGroup([timesAndNamespaces, numericKeys ?? keys]);
  }

  /** Adds the timers of a packed group (from `encodeGroup`). */
  addEncodedGroup(bytes: Uint8Array): void {
    forEachEncodedTimer(bytes, (t, key, ns) => this.add(t, key, ns));
  }
}

/** Calls `fn` for every timer of a group packed by `TimerQueue.encodeGroup` (or in the earlier nested-map format). */
export function forEachEncodedTimer(bytes: Uint8Array, fn: (timestampMs: number, key: KeyType, namespace: number) => void): void {
  const packed = unpackGroup(bytes) as [Float64Array, ArrayLike<KeyType>] | TimerGroup;
  if (Array.isArray(packed)) {
    const [timesAndNamespaces, keys] = packed;
    assert(timesAndNamespaces.length === 2 * keys.length, 'a timer group holds a timestamp and a namespace per key');
    for (let i = 0; i < keys.length; i++) fn(timesAndNamespaces[2 * i]!, keys[i]!, timesAndNamespaces[2 * i + 1]!);
    return;
  }
  for (const [t, byKey] of packed) for (const [k, nss] of byKey) for (const ns of nss) fn(t, k, ns);
}
