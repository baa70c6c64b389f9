import { describe, expect, it } from 'vitest';
import { mapState, valueState, type MapState, type ValueState } from '../../api/state-descriptors.js';
import { seededRandom } from '../../testing/seeded-random.js';
import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import { HeapReplica } from './heap-replica.js';
import { decodeFullGroup, unfoldTimers } from './keyed-state-delta.js';
import type { KeyType } from './key-group.js';
import type { KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { fromSnapshotParts, toSnapshotParts, type UnpackedParts } from './snapshot-parts.js';

/** A snapshot's content independent of entry order: per state and key group, sorted entries; timers sorted. */
function normalize(p: UnpackedParts): unknown {
  const states = p.states
    .map((st) => ({
      name: st.name,
      kind: st.kind,
      groups: [...st.groups]
        .map(([kg, bytes]) => {
          const entries = [...decodeFullGroup(bytes, st.namespaced)].map(([k, v]) => [String(k), typeof k, v instanceof Map ? [...v].sort((a, b) => a[0] - b[0]) : v]);
          return [kg, entries.sort((a, b) => (a[0]! < b[0]! ? -1 : 1))];
        })
        .sort((a, b) => (a[0] as number) - (b[0] as number)),
    }))
    .filter((st) => st.groups.length > 0)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const timers = [...p.timers]
    .map(([kg, bytes]) => [kg, unfoldTimers(bytes).map((byKey) => [...byKey].map(([k, xs]) => [String(k), [...xs]]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)))])
    .sort((a, b) => (a[0] as number) - (b[0] as number));
  return { states, timers };
}

const parts = (s: KeyedStateSnapshot): UnpackedParts => fromSnapshotParts(toSnapshotParts(s.states, s.timers));

type Handles = { b: HeapKeyedStateBackend; counts: ValueState<number>; windows: MapState<string, number> & { setCurrentNamespace(n: number): void } };

function handles(b: HeapKeyedStateBackend): Handles {
  return {
    b,
    counts: b.getOrCreateState(valueState<number>('count'), false) as unknown as ValueState<number>,
    windows: b.getOrCreateState(mapState<string, number>('windows'), true) as unknown as Handles['windows'],
  };
}

const RANGE = { startKeyGroup: 0, endKeyGroup: 31 };

describe('HeapReplica', () => {
  for (const seed of [1, 2, 3, 42]) {
    it(`reset by a full snapshot and moved by deltas, it holds the state at every position (seed ${seed})`, async () => {
      const random = seededRandom(seed);
      // `logged` takes changelog snapshots (a materialization, then deltas); `twin` gets the same writes and is snapshotted whole.
      const logged = handles(new HeapKeyedStateBackend(RANGE, 128));
      const twin = handles(new HeapKeyedStateBackend(RANGE, 128));
      const keys: KeyType[] = Array.from({ length: 600 }, (_, i) => (i % 2 === 0 ? i : `k${i}`)).filter((k) => isOwned(logged.b, k));
      const replica = new HeapReplica();
      for (let position = 1; position <= 12; position++) {
        for (let op = 0; op < 400; op++) {
          const k = keys[Math.floor(random() * keys.length)]!;
          const r = random();
          const ns = Math.floor(random() * 4);
          const field = `f${Math.floor(random() * 3)}`;
          const value = Math.floor(random() * 1000);
          for (const h of [logged, twin]) {
            h.b.setCurrentKey(k);
            if (r < 0.35) h.counts.update(value);
            else if (r < 0.45) h.counts.clear();
            else if (r < 0.7) {
              h.windows.setCurrentNamespace(ns);
              h.windows.put(field, value);
            } else if (r < 0.8) {
              h.windows.setCurrentNamespace(ns);
              h.windows.clear();
            } else if (r < 0.9) h.b.timerQueue(0).add(value % 50, k, ns);
            else if (r < 0.95) h.b.timerQueue(0).delete(value % 50, k, ns);
            else h.b.timerQueue(1).add(1000 + (value % 50), k, 0);
          }
        }
        if (position % 4 === 0) for (const h of [logged, twin]) h.b.timerQueue(0).fireUpTo(position * 4, () => {});
        const materialize = position === 1 || position === 7;
        const segment = await logged.b.snapshot({ checkpointId: position, incremental: false, changelog: materialize ? 'materialize' : 'segment' })();
        expect(segment.baseCheckpointId === undefined).toBe(materialize);
        if (segment.baseCheckpointId === undefined) replica.reset(position, parts(segment));
        else replica.apply(segment.baseCheckpointId, position, parts(segment));
        expect(replica.position).toBe(position);
        expect(normalize(replica.snapshot()), `seed ${seed}, position ${position}`).toEqual(normalize(parts(await twin.b.snapshot()())));
      }
    });
  }

  it('refuses a delta that does not start where the replica is', () => {
    const r = new HeapReplica();
    r.reset(3, { states: [], timers: new Map() });
    expect(() => r.apply(2, 4, { states: [], timers: new Map() })).toThrow(/a delta from position 2 applies to a replica at 2 \(it is at 3\)/);
  });
});

function isOwned(b: HeapKeyedStateBackend, k: KeyType): boolean {
  try {
    b.setCurrentKey(k);
    return true;
  } catch {
    return false;
  }
}
