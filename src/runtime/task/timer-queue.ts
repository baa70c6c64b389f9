import type { KeyType } from '../state/key-group.js';
import { MinHeap } from './min-heap.js';

/**
 * Timers of one keyed operator in one time domain, deduplicated per (timestamp, key,
 * namespace), fired in timestamp order and, within a timestamp, in registration order.
 */
export class TimerQueue {
  private readonly byTime = new Map<number, Map<KeyType, number[]>>();
  private readonly times = new MinHeap();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The earliest timestamp that may hold a timer (a deleted one may linger). */
  peekTime(): number | undefined {
    return this.times.peek();
  }

  add(timestampMs: number, key: KeyType, namespace: number): boolean {
    let byKey = this.byTime.get(timestampMs);
    if (byKey === undefined) {
      byKey = new Map();
      this.byTime.set(timestampMs, byKey);
      this.times.push(timestampMs);
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
    const byKey = this.byTime.get(timestampMs);
    const namespaces = byKey?.get(key);
    if (namespaces === undefined) return false;
    const i = namespaces.indexOf(namespace);
    if (i < 0) return false;
    namespaces.splice(i, 1);
    if (namespaces.length === 0) byKey!.delete(key);
    this.count--;
    return true;
  }

  /**
   * Fires every timer with timestamp <= upToMs, one at a time (as Flink polls its queue):
   * timers added while firing fire too when due, and a timer deleted while its timestamp is
   * firing does not fire. One live Map iterator per timestamp keeps this linear (restarting
   * iteration after each deletion would skip ever more holes).
   */
  fireUpTo(upToMs: number, fire: (timestampMs: number, key: KeyType, namespace: number) => void): void {
    for (;;) {
      const t = this.times.peek();
      if (t === undefined || t > upToMs) return;
      const byKey = this.byTime.get(t);
      if (byKey !== undefined) {
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
      }
      // Every timer of this timestamp fired or was deleted (new ones were visited above).
      if (this.times.peek() === t) this.times.pop();
      if (this.byTime.get(t)?.size === 0 || this.byTime.get(t) === byKey) this.byTime.delete(t);
    }
  }

  /** Every timer, for snapshots: [timestamp, key, namespace]. */
  *entries(): IterableIterator<[number, KeyType, number]> {
    for (const [t, byKey] of this.byTime) for (const [k, nss] of byKey) for (const ns of nss) yield [t, k, ns];
  }
}
