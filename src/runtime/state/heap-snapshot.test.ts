import { describe, expect, it } from 'vitest';
import { listState, mapState, reducingState, valueState, type ListState, type MapState, type ReducingState, type ValueState } from '../../api/state-descriptors.js';
import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import { assignToKeyGroup, keyGroupRangeContains, keyGroupRangeForOperator } from './key-group.js';
import type { KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { decodeKeyedStateSnapshot, encodeKeyedStateSnapshot } from './keyed-state-snapshot.js';

const MAXP = 128;
const counts = valueState<number>('count');
const items = listState<string>('items');
const attrs = mapState<string, number>('attrs');
const sums = reducingState<number>('sum', (a, b) => a + b);

function backend(p: number, i: number): HeapKeyedStateBackend {
  return new HeapKeyedStateBackend(keyGroupRangeForOperator(MAXP, p, i), MAXP, () => 0);
}

function handles(b: HeapKeyedStateBackend) {
  return {
    count: b.getOrCreateState(counts, false) as unknown as ValueState<number>,
    items: b.getOrCreateState(items, false) as unknown as ListState<string>,
    attrs: b.getOrCreateState(attrs, false) as unknown as MapState<string, number>,
    sum: b.getOrCreateState(sums, true) as unknown as ReducingState<number> & { setCurrentNamespace(n: number): void },
  };
}

const keys = Array.from({ length: 500 }, (_, i) => (i % 3 === 0 ? i : i % 3 === 1 ? `k${i}` : BigInt(i)));

function fill(bs: HeapKeyedStateBackend[], p: number): void {
  for (const k of keys) {
    const b = bs.find((x) => keyGroupRangeContains(x.keyGroupRange, assignToKeyGroup(k, MAXP)))!;
    expect(bs.indexOf(b)).toBeLessThan(p);
    const h = handles(b);
    b.setCurrentKey(k);
    h.count.update(Number(k.toString().replace('k', '')));
    h.items.add(`a${k}`);
    h.items.add(`b${k}`);
    h.attrs.put('x', 1);
    h.sum.setCurrentNamespace(10);
    h.sum.add(2);
    h.sum.setCurrentNamespace(20);
    h.sum.add(3);
  }
}

async function snapshotAll(bs: HeapKeyedStateBackend[]): Promise<KeyedStateSnapshot[]> {
  return Promise.all(bs.map(async (b) => decodeKeyedStateSnapshot(encodeKeyedStateSnapshot(await b.snapshot()()))));
}

function restoreAt(p: number, snaps: KeyedStateSnapshot[]): HeapKeyedStateBackend[] {
  return Array.from({ length: p }, (_, i) => {
    const b = backend(p, i);
    b.restore(snaps);
    handles(b);
    return b;
  });
}

function check(bs: HeapKeyedStateBackend[]): void {
  let seen = 0;
  for (const b of bs) seen += b.numEntries('count');
  expect(seen).toBe(keys.length);
  for (const k of keys) {
    const owners = bs.filter((x) => keyGroupRangeContains(x.keyGroupRange, assignToKeyGroup(k, MAXP)));
    expect(owners).toHaveLength(1);
    const b = owners[0]!;
    const h = handles(b);
    b.setCurrentKey(k);
    expect(h.count.value()).toBe(Number(k.toString().replace('k', '')));
    expect(h.items.get()).toEqual([`a${k}`, `b${k}`]);
    expect(h.attrs.get('x')).toBe(1);
    h.sum.setCurrentNamespace(10);
    expect(h.sum.get()).toBe(2);
    h.sum.setCurrentNamespace(20);
    expect(h.sum.get()).toBe(3);
  }
}

describe('heap keyed state snapshots', () => {
  it('restore at parallelism 1 -> 3 -> 2 keeps every entry with its exact owner, keys keep their types', async () => {
    const one = [backend(1, 0)];
    fill(one, 1);
    const s1 = await snapshotAll(one);
    const three = restoreAt(3, s1);
    check(three);
    const two = restoreAt(2, await snapshotAll(three));
    check(two);
  });

  it('the snapshot is the state at the synchronous point, even when values change or are mutated in place afterwards', async () => {
    const b = backend(1, 0);
    const h = handles(b);
    b.setCurrentKey('a');
    h.count.update(1);
    h.items.add('x');
    const finish = b.snapshot();
    h.count.update(2);
    b.setCurrentKey('a');
    (h.items.get() as string[]).push('mutated in place');
    h.items.add('y');
    b.setCurrentKey('b');
    h.count.update(5);
    const restored = restoreAt(1, [await finish()]);
    const r = handles(restored[0]!);
    restored[0]!.setCurrentKey('a');
    expect(r.count.value()).toBe(1);
    expect(r.items.get()).toEqual(['x']);
    restored[0]!.setCurrentKey('b');
    expect(r.count.value()).toBeUndefined();
  });

  it('timers go with their key groups, and the snapshot holds the timers of the synchronous point', async () => {
    const b = backend(1, 0);
    handles(b);
    for (const [i, k] of keys.entries()) {
      b.timerQueue(0).add(1000 + i, k, 7);
      b.timerQueue(1).add(5000 + i, k, 8);
    }
    const finish = b.snapshot();
    // After the synchronous point: fire some, add and delete others; the snapshot must not see it.
    b.timerQueue(0).fireUpTo(1000 + Math.floor(keys.length / 2), () => {});
    b.timerQueue(1).add(9999, keys[0]!, 1);
    b.timerQueue(1).delete(5000, keys[0]!, 8);
    const snaps = [decodeKeyedStateSnapshot(encodeKeyedStateSnapshot(await finish()))];
    const two = Array.from({ length: 2 }, (_, i) => {
      const x = backend(2, i);
      x.restore(snaps);
      return x;
    });
    for (const domain of [0, 1] as const) {
      const all = two.flatMap((x) => [...x.timerQueue(domain).entries()].map(([t, k, ns]) => ({ x, t, k, ns })));
      expect(all.length).toBe(keys.length);
      for (const { x, t, k, ns } of all) {
        expect(keyGroupRangeContains(x.keyGroupRange, assignToKeyGroup(k, MAXP))).toBe(true);
        expect(t).toBe((domain === 0 ? 1000 : 5000) + keys.indexOf(k as (typeof keys)[number]));
        expect(ns).toBe(domain === 0 ? 7 : 8);
      }
    }
  });

  it('refuses another max parallelism and a changed state kind, naming the fix', async () => {
    const b = backend(1, 0);
    handles(b);
    b.setCurrentKey('a');
    (b.getOrCreateState(counts, false) as unknown as ValueState<number>).update(1);
    const snaps = await snapshotAll([b]);
    const other = new HeapKeyedStateBackend(keyGroupRangeForOperator(256, 1, 0), 256, () => 0);
    expect(() => other.restore(snaps)).toThrow(/max parallelism 128 .* now has 256.*cannot change/);
    const c = backend(1, 0);
    c.restore(snaps);
    expect(() => c.getOrCreateState(listState('count'), false)).toThrow(/restored as value state and is now registered as list state/);
  });
});
