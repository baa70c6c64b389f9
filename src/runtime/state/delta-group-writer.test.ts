import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { columnsGroupBytes, fullGroupOfColumns, writeHeapDeltaGroup, writeNumericDeltaGroup } from './delta-group-writer.js';
import { NumericEntries } from './numeric-entries.js';
import type { KeyType } from './key-group.js';
import { packDeltaGroup } from './keyed-state-delta.js';
import { packGroup, unpackGroup } from './keyed-state-snapshot.js';
import { mergeDeltaGroupBytes } from './group-merge.js';

/** The delta msgpackr gives for the same changes (heapDeltaGroup's own path). */
function reference(group: Map<KeyType, unknown>, changed: Set<KeyType>, namespaced: boolean): Uint8Array {
  const upserts = new Map<unknown, unknown>();
  const deleted: unknown[] = [];
  for (const k of changed) {
    const v = group.get(k);
    if (namespaced) deleted.push(k);
    if (v === undefined) {
      if (!namespaced) deleted.push(k);
    } else upserts.set(k, v);
  }
  return packDeltaGroup([upserts, deleted, []]);
}

const edgeNumbers = [0, -0, 1, 63, 64, 127, 128, 255, 256, 65535, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, 1.5, -2.25, 1e-300, Number.MAX_VALUE, Infinity, -Infinity, NaN];
const strings = ['', 'a', 'é', '日本語', '🦀', 'x'.repeat(31), 'y'.repeat(32), 'é'.repeat(11), 'z'.repeat(255), 'w'.repeat(256), 'é'.repeat(40000), 'v'.repeat(70000)];

function scalar(rnd: () => number): unknown {
  const r = rnd();
  if (r < 0.45) return edgeNumbers[Math.floor(rnd() * edgeNumbers.length)];
  if (r < 0.6) return Math.floor(rnd() * 1e9) * (rnd() < 0.5 ? -1 : 1);
  if (r < 0.8) return strings[Math.floor(rnd() * (strings.length - 2))];
  if (r < 0.9) return rnd() < 0.5;
  return null;
}

describe('writeHeapDeltaGroup', () => {
  for (const namespaced of [false, true]) {
    it(`decodes to what msgpackr's delta decodes to (${namespaced ? 'namespaced' : 'plain'}, seeded edge values)`, () => {
      const seed = 777 + (namespaced ? 1 : 0);
      const rnd = seededRandom(seed);
      for (let round = 0; round < 60; round++) {
        const group = new Map<KeyType, unknown>();
        const changed = new Set<KeyType>();
        const size = round === 0 ? 70_000 : Math.floor(rnd() * 80); // once past the 16-bit headers
        for (let i = 0; i < size; i++) {
          const k: KeyType = rnd() < 0.5 ? (edgeNumbers[Math.floor(rnd() * 27)]! as number) + i * 1e6 : `key-${i}-${strings[Math.floor(rnd() * 6)]}`;
          if (rnd() < 0.8) {
            if (!namespaced) group.set(k, scalar(rnd));
            else group.set(k, new Map(Array.from({ length: 1 + Math.floor(rnd() * (round === 1 ? 20 : 5)) }, (_, j) => [j * 2000 - 4000, scalar(rnd)])));
          }
          if (rnd() < 0.7) changed.add(k);
        }
        const written = writeHeapDeltaGroup(group, changed, namespaced);
        if (changed.size === 0) {
          expect(written).toBeUndefined();
          continue;
        }
        expect(written, `seed ${seed}, round ${round}`).toBeInstanceOf(Uint8Array);
        expect(unpackGroup(written as Uint8Array), `seed ${seed}, round ${round}`).toEqual(unpackGroup(reference(group, changed, namespaced)));
      }
    });
  }

  it('never writes a fixint of 0x40-0x7f (read as a record reference by the scan): the snapshot thread merges its deltas as bytes', () => {
    const group = new Map<KeyType, unknown>(Array.from({ length: 128 }, (_, i) => [i, new Map([[i, i]])]));
    const delta = writeHeapDeltaGroup(group, new Set(group.keys()), true) as Uint8Array;
    for (let i = 0x40; i < 0x80; i++) expect(delta.includes(i) ? [...delta].filter((b, j) => b === i && delta[j - 1] !== 0xcc).length : 0).toBe(0);
    const merged = mergeDeltaGroupBytes(packGroup(new Map([[500, new Map([[0, 1]])]])), delta, true);
    expect(merged).toBeInstanceOf(Uint8Array);
    expect((unpackGroup(merged as Uint8Array) as Map<unknown, unknown>).size).toBe(129);
  });

  it('-0 comes back as 0 and NaN as NaN, as from msgpackr', () => {
    const out = unpackGroup(writeHeapDeltaGroup(new Map([[1, -0], [2, NaN]]), new Set([1, 2]), false) as Uint8Array) as [Map<number, number>];
    expect(Object.is(out[0].get(1), 0)).toBe(true);
    expect(out[0].get(2)).toBeNaN();
  });

  it('leaves other kinds of keys and values to msgpackr (null)', () => {
    expect(writeHeapDeltaGroup(new Map([[1, { a: 1 }]]), new Set([1]), false)).toBeNull();
    expect(writeHeapDeltaGroup(new Map([[1, [1, 2]]]), new Set([1]), false)).toBeNull();
    expect(writeHeapDeltaGroup(new Map([[1n, 1]]), new Set([1n]), false)).toBeNull();
    expect(writeHeapDeltaGroup(new Map([[1, new Map([[0, new Date(0)]])]]), new Set([1]), true)).toBeNull();
    expect(writeHeapDeltaGroup(new Map([[1, undefined]]), new Set<KeyType>(), false)).toBeUndefined();
  });
});

describe('numeric key groups (numeric-entries.ts)', () => {
  const numbers = edgeNumbers.filter((n) => !Number.isNaN(n));
  /** A random numeric group, and the same entries as the map a map-layout table would hold. */
  function randomGroup(rnd: () => number, namespaced: boolean, size: number): { entries: NumericEntries; map: Map<KeyType, unknown> } {
    const entries = new NumericEntries();
    const map = new Map<KeyType, unknown>();
    for (let i = 0; i < size; i++) {
      const k = numbers[Math.floor(rnd() * numbers.length)]! + Math.floor(rnd() * 50) * 1e6 + 0;
      const value = edgeNumbers[Math.floor(rnd() * edgeNumbers.length)]!;
      const ns = namespaced ? [0, 1.7e12, -3, 2.5][Math.floor(rnd() * 4)]! : 0;
      entries.set(k, ns, value);
      if (!namespaced) map.set(k, value);
      else {
        let byNs = map.get(k) as Map<number, unknown> | undefined;
        if (byNs === undefined) map.set(k, (byNs = new Map()));
        byNs.set(ns, value);
      }
    }
    return { entries, map };
  }

  for (const namespaced of [false, true]) {
    it(`a delta written from the columns decodes to what msgpackr's delta decodes to (${namespaced ? 'namespaced' : 'plain'}, seeded)`, () => {
      const seed = 31 + (namespaced ? 1 : 0);
      const rnd = seededRandom(seed);
      for (let round = 0; round < 40; round++) {
        const { entries, map } = randomGroup(rnd, namespaced, round === 0 ? 30_000 : Math.floor(rnd() * 200));
        const changed = new Set<KeyType>();
        for (const k of map.keys()) if (rnd() < 0.6) changed.add(k);
        changed.add(123.5e9); // a key with no entry (removed)
        if (round % 2 === 0) changed.add('a removed string key');
        const written = writeNumericDeltaGroup(entries, changed, namespaced);
        expect(written, `seed ${seed}, round ${round}`).toBeInstanceOf(Uint8Array);
        expect(unpackGroup(written as Uint8Array), `seed ${seed}, round ${round}`).toEqual(unpackGroup(reference(map, changed, namespaced)));
      }
      expect(writeNumericDeltaGroup(new NumericEntries(), new Set(), namespaced)).toBeUndefined();
      expect(writeNumericDeltaGroup(new NumericEntries(), new Set([1n]), namespaced)).toBeNull();
    });

    it(`a columns group becomes the full group msgpackr packs for the same entries, at any byte offset (${namespaced ? 'namespaced' : 'plain'}, seeded)`, () => {
      const rnd = seededRandom(51 + (namespaced ? 1 : 0));
      for (let round = 0; round < 20; round++) {
        const { entries, map } = randomGroup(rnd, namespaced, round === 0 ? 0 : Math.floor(rnd() * 300));
        const bytes = columnsGroupBytes(entries, namespaced);
        const shifted = new Uint8Array(bytes.length + 3).subarray(3); // not 8-byte aligned
        shifted.set(bytes);
        for (const b of [bytes, shifted]) {
          const full = fullGroupOfColumns(b);
          if (map.size === 0) expect(full).toBeUndefined();
          else expect(unpackGroup(full as Uint8Array)).toEqual(unpackGroup(packGroup(map)));
        }
      }
    });
  }
});
