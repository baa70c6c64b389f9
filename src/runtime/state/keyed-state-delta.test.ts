import { describe, expect, it } from 'vitest';
import { TimerQueue } from '../task/timer-queue.js';
import { EMPTY_TIMER_GROUP, resolveDeltas, TIMER_DELTA_BY_KEY } from './keyed-state-delta.js';
import { decodeTimerGroup, packGroup, type KeyedStateSnapshot } from './keyed-state-snapshot.js';
import type { KeyType } from './key-group.js';

const range = { startKeyGroup: 0, endKeyGroup: 0 };
const snapshot = (timers: Uint8Array | undefined, baseCheckpointId?: number): KeyedStateSnapshot => ({
  formatVersion: 1,
  maxParallelism: 1,
  keyGroupRange: range,
  states: [],
  timers: timers === undefined ? new Map() : new Map([[0, timers]]),
  ...(baseCheckpointId === undefined ? {} : { baseCheckpointId }),
});
const queue = (timers: [number, KeyType, number][]): TimerQueue => {
  const q = new TimerQueue();
  for (const [t, k, ns] of timers) q.add(t, k, ns);
  return q;
};
/** Both domains' timers of a folded chain, as sorted text. */
const timersOf = (chain: KeyedStateSnapshot[]): string[][] => {
  const [folded] = resolveDeltas(chain);
  return ([0, 1] as const).map((domain) => {
    const q = new TimerQueue();
    for (const bytes of folded!.timers.values()) decodeTimerGroup(bytes, domain, q);
    return [...q.entries()].map(([t, k, ns]) => `${t}/${String(k)}/${ns}`).sort();
  });
};

describe('timer deltas', () => {
  const event = queue([[10, 'a', 0], [20, 'a', 1], [10, 'b', 0]]);
  const processing = queue([[5, 'a', 0], [7, 'c', 0]]);
  const full = snapshot(packGroup([event.encodeGroup(0)!, processing.encodeGroup(0)!]));

  it('a per-key delta replaces the timers of the keys it names, in its domain only', () => {
    const now = queue([[30, 'a', 2], [10, 'b', 0], [40, 'd', 0]]);
    const delta = snapshot(packGroup([now.encodeGroupDelta(0, new Set<KeyType>(['a', 'd', 'gone']))!, null, TIMER_DELTA_BY_KEY]), 1);
    expect(timersOf([full, delta])).toEqual([['10/b/0', '30/a/2', '40/d/0'], ['5/a/0', '7/c/0']]);
  });

  it('deltas that empty a key group leave no timers; an unchanged domain is null', () => {
    const none = new TimerQueue();
    const delta = snapshot(packGroup([none.encodeGroupDelta(0, new Set<KeyType>(['a', 'b']))!, none.encodeGroupDelta(0, new Set<KeyType>(['a', 'c']))!, TIMER_DELTA_BY_KEY]), 1);
    const [folded] = resolveDeltas([full, delta]);
    expect(folded!.timers.size).toBe(0);
    expect(new TimerQueue().encodeGroupDelta(0, new Set())).toBeUndefined();
  });

  it('reads deltas of the earlier format, which replace the whole key group', () => {
    const now = queue([[99, 'z', 0]]);
    expect(timersOf([full, snapshot(packGroup([now.encodeGroup(0)!, null]), 1)])).toEqual([['99/z/0'], []]);
    expect(resolveDeltas([full, snapshot(EMPTY_TIMER_GROUP, 1)])[0]!.timers.size).toBe(0);
  });
});

describe('chains restored by the backends themselves', () => {
  it('a namespaced key removed in a delta is gone in either backend (deltas of one backend applied by the other)', async () => {
    const { HeapKeyedStateBackend } = await import('./heap-keyed-state-backend.js');
    const { LmdbKeyedStateBackend } = await import('./lmdb-keyed-state-backend.js');
    const { listState } = await import('../../api/state-descriptors.js');
    const range = { startKeyGroup: 0, endKeyGroup: 127 };
    const makers = [() => new HeapKeyedStateBackend(range, 128), () => new LmdbKeyedStateBackend(range, 128)];
    for (const makeSource of makers) {
      const source = makeSource();
      const list = source.getOrCreateState(listState<number>('l'), true) as unknown as { add(v: number): void; clear(): void; get(): Iterable<number>; setCurrentNamespace(ns: number): void };
      for (const k of ['a', 'b']) {
        source.setCurrentKey(k);
        for (const ns of [1, 2, 3]) {
          list.setCurrentNamespace(ns);
          list.add(ns);
        }
      }
      const full = await source.snapshot({ checkpointId: 1, incremental: true })();
      source.notifyCheckpointComplete(1);
      source.setCurrentKey('a');
      for (const ns of [1, 2, 3]) {
        list.setCurrentNamespace(ns);
        list.clear();
      }
      source.setCurrentKey('b');
      list.setCurrentNamespace(2);
      list.clear();
      const delta = await source.snapshot({ checkpointId: 2, incremental: true })();
      expect(delta.baseCheckpointId).toBe(1);
      source.dispose();
      for (const makeTarget of makers) {
        const target = makeTarget();
        target.restore([full, delta]);
        const l = target.getOrCreateState(listState<number>('l'), true) as unknown as typeof list;
        const seen: string[] = [];
        for (const k of ['a', 'b']) {
          target.setCurrentKey(k);
          for (const ns of [1, 2, 3]) {
            l.setCurrentNamespace(ns);
            for (const v of l.get()) seen.push(`${k}${ns}:${v}`);
          }
        }
        expect(seen, `${source.constructor.name} -> ${target.constructor.name}`).toEqual(['b1:1', 'b3:3']);
        target.dispose();
      }
    }
  });
});
