import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { KeyedStateSnapshot, StateSnapshot } from '../state/keyed-state-snapshot.js';
import { createStatePackr } from '../state/serializer.js';
import { seededRandom } from '../../testing/seeded-random.js';
import { packKeyGroups } from '../state/packed-key-groups.js';

const packr = createStatePackr();

/** The segments as msgpackr writes them (the format before they were written by hand). */
function packedByMsgpackr(s: KeyedStateSnapshot): { data: Uint8Array; offsets: number[] } {
  const segments: Uint8Array[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (let kg = s.keyGroupRange.startKeyGroup; kg <= s.keyGroupRange.endKeyGroup; kg++) {
    const states: [string, string, boolean, Uint8Array][] = [];
    for (const st of s.states) {
      const bytes = st.groups.get(kg);
      if (bytes !== undefined) states.push([st.name, st.kind, st.namespaced, bytes]);
    }
    const timers = s.timers.get(kg);
    offsets.push(at);
    if (states.length === 0 && timers === undefined) continue;
    const segment = packr.pack([states, timers ?? null]);
    segments.push(segment);
    at += segment.length;
  }
  return { data: Buffer.concat(segments), offsets };
}

describe('key group segments', () => {
  it('are written as msgpackr wrote them, for groups of every size, many states, with and without timers', () => {
    const seed = 31337;
    const random = seededRandom(seed);
    const sizes = [0, 1, 5, 253, 254, 255, 256, 65533, 65534, 65535, 65536, 200_000];
    const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 0xff);
    for (let round = 0; round < 12; round++) {
      const stateCount = round === 11 ? 20 : 1 + Math.floor(random() * 3);
      const states: StateSnapshot[] = Array.from({ length: stateCount }, (_, i) => {
        const groups = new Map<number, Uint8Array>();
        for (let kg = 10; kg <= 17; kg++) if (random() < 0.6) groups.set(kg, bytes(sizes[Math.floor(random() * sizes.length)]!));
        return { name: `state-${i}${'é'.repeat(i)}`, kind: i % 2 ? 'value' : 'map', namespaced: i % 3 === 0, groups };
      });
      const timers = new Map<number, Uint8Array>();
      for (let kg = 10; kg <= 17; kg++) if (random() < 0.4) timers.set(kg, bytes(sizes[Math.floor(random() * sizes.length)]!));
      const snapshot: KeyedStateSnapshot = { formatVersion: 1, maxParallelism: 128, keyGroupRange: { startKeyGroup: 10, endKeyGroup: 17 }, states, timers };
      const mine = packKeyGroups(snapshot);
      const theirs = packedByMsgpackr(snapshot);
      expect(mine.offsets, `seed ${seed} round ${round}`).toEqual(theirs.offsets);
      expect(mine.data.length, `seed ${seed} round ${round}`).toBe(theirs.data.length);
      for (let i = 0; i < mine.offsets.length; i++) {
        const end = i + 1 < mine.offsets.length ? mine.offsets[i + 1]! : mine.data.length;
        if (end === mine.offsets[i]) continue;
        const ours = packr.unpack(mine.data.subarray(mine.offsets[i], end));
        const reference = packr.unpack(theirs.data.subarray(theirs.offsets[i], end));
        // isDeepStrictEqual compares byte arrays natively; toEqual, which walks them element by
        // element (25 s for this test), only describes a difference.
        if (!isDeepStrictEqual(ours, reference)) expect(ours, `seed ${seed} round ${round} group ${i}`).toEqual(reference);
      }
    }
  });
});
