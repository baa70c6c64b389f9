import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { forEachEncodedTimer, TimerColumns } from '../task/timer-queue.js';
import { mergeDeltaGroupBytes, mergeTimerDeltaBytes } from './group-merge.js';
import type { KeyType } from './key-group.js';
import { applyDeltaGroup, applyTimerDelta, decodeFullGroup, packDeltaGroup, packFoldedTimers, unfoldTimers, type DeltaGroup, type FoldedTimers } from './keyed-state-delta.js';
import { packGroup, unpackGroup } from './keyed-state-snapshot.js';

type Group = Map<unknown, unknown>;

/** Values that stand alone in msgpack (numbers of every width, strings, arrays, bigints, typed arrays) and, with `objects`, plain objects (msgpackr records). */
function value(rnd: () => number, objects: boolean): unknown {
  const r = rnd();
  if (r < 0.25) return Math.floor(rnd() * 200); // fixint, and 64..199 (uint8: 0x40-0x7f are record references)
  if (r < 0.35) return -Math.floor(rnd() * 1e6);
  if (r < 0.45) return rnd() * 1e12;
  if (r < 0.55) return Math.floor(rnd() * 2 ** 52);
  if (r < 0.65) return `v${Math.floor(rnd() * 1e6)}`.repeat(1 + Math.floor(rnd() * 40));
  if (r < 0.75) return [Math.floor(rnd() * 10), 'x', [1.5, null, true]];
  if (r < 0.8) return BigInt(Math.floor(rnd() * 1e9)) * 10n ** 12n;
  if (r < 0.85) return new Float64Array([rnd(), rnd()]);
  if (objects) return { count: Math.floor(rnd() * 9), name: 'o' };
  return null;
}

function key(rnd: () => number, strings: boolean): unknown {
  const k = Math.floor(rnd() * 300);
  if (strings && rnd() < 0.5) return `key-${k}`;
  return rnd() < 0.1 ? k * 1e6 + 0.5 : k; // floats too
}

function group(rnd: () => number, namespaced: boolean, size: number, strings: boolean, objects: boolean): Group {
  const g: Group = new Map();
  for (let i = 0; i < size; i++) {
    const k = key(rnd, strings);
    if (!namespaced) g.set(k, value(rnd, objects));
    else {
      const byNs = new Map<number, unknown>();
      for (let n = 1 + Math.floor(rnd() * 5); n > 0; n--) byNs.set(Math.floor(rnd() * 10) * 2000, value(rnd, objects));
      g.set(k, byNs);
    }
  }
  return g;
}

/** A delta as the heap backend writes it: changed keys upserted (namespaced: deleted first, so replaced whole), removed keys deleted. */
function heapDelta(rnd: () => number, base: Group, namespaced: boolean, strings: boolean, objects: boolean): DeltaGroup {
  const next = group(rnd, namespaced, Math.floor(rnd() * 40), strings, objects);
  const deleted: unknown[] = [];
  for (const k of base.keys()) if (rnd() < 0.3) deleted.push(k);
  if (namespaced) for (const k of next.keys()) if (!deleted.includes(k)) deleted.push(k);
  return [next, deleted, []];
}

/** The decoding path's answer, as a plain sorted structure (entry order is not part of a group). */
function viaDecoding(full: Uint8Array | undefined, delta: Uint8Array, namespaced: boolean): unknown {
  const g = full === undefined ? new Map() : decodeFullGroup(full, namespaced);
  applyDeltaGroup(g, delta, namespaced);
  return g.size === 0 ? undefined : canonical(g);
}

function canonical(g: Group): unknown {
  return [...g].map(([k, v]) => [k, v instanceof Map ? [...v].sort((a, b) => a[0] - b[0]) : v]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

describe('mergeDeltaGroupBytes', () => {
  for (const namespaced of [false, true]) {
    it(`gives what decoding, applying and packing gives (${namespaced ? 'namespaced' : 'plain'} groups, seeded chains of deltas)`, () => {
      const seed = 20261201 + (namespaced ? 1 : 0);
      const rnd = seededRandom(seed);
      let merged = 0;
      for (let chain = 0; chain < 40; chain++) {
        const strings = chain % 2 === 0;
        let full: Uint8Array | undefined = chain % 7 === 0 ? undefined : packGroup(group(rnd, namespaced, Math.floor(rnd() * 60), strings, false));
        for (let step = 0; step < 6; step++) {
          const base = full === undefined ? new Map() : decodeFullGroup(full, namespaced);
          const delta = packDeltaGroup(heapDelta(rnd, base, namespaced, strings, false));
          const expected = viaDecoding(full, delta, namespaced);
          const result = mergeDeltaGroupBytes(full, delta, namespaced);
          expect(result, `seed ${seed}, chain ${chain}, step ${step}`).not.toBe('decode');
          const bytes = result as Uint8Array | undefined;
          expect(bytes === undefined ? undefined : canonical(decodeFullGroup(bytes, namespaced)), `seed ${seed}, chain ${chain}, step ${step}`).toEqual(expected);
          full = bytes;
          merged++;
        }
      }
      expect(merged).toBe(240);
    });
  }

  it('leaves groups it cannot copy alone to the decoding path: object values (records), single-entry removals, namespaced upserts that add to a key, the column format', () => {
    const rnd = seededRandom(7);
    const objects = packGroup(new Map([[1, { a: 1 }], [2, { a: 2 }]]));
    const plainDelta = packDeltaGroup([new Map([[3, 3]]), [], []]);
    expect(mergeDeltaGroupBytes(objects, plainDelta, false)).toBe('decode');
    expect(mergeDeltaGroupBytes(packGroup(new Map([[1, 1]])), packDeltaGroup([new Map([[2, { b: 1 }]]), [], []]), false)).toBe('decode');
    const ns = packGroup(new Map([[1, new Map([[0, 5]])]]));
    expect(mergeDeltaGroupBytes(ns, packDeltaGroup([new Map(), [], [[1, 0]]]), true)).toBe('decode');
    expect(mergeDeltaGroupBytes(ns, packDeltaGroup([new Map([[1, new Map([[2000, 6]])]]), [], []]), true)).toBe('decode');
    expect(mergeDeltaGroupBytes(packGroup([[1], [2]]), plainDelta, false)).toBe('decode');
    // ...and the decoding path still gets them right.
    expect(viaDecoding(ns, packDeltaGroup([new Map([[1, new Map([[2000, 6]])]]), [], []]), true)).toEqual([[1, [[0, 5], [2000, 6]]]]);
    void rnd;
  });

  it('a group emptied by a delta is gone; a delta over no group is the upserts', () => {
    expect(mergeDeltaGroupBytes(packGroup(new Map([['a', 1]])), packDeltaGroup([new Map(), ['a'], []]), false)).toBeUndefined();
    const fresh = mergeDeltaGroupBytes(undefined, packDeltaGroup([new Map([['b', 2]]), [], []]), false);
    expect(decodeFullGroup(fresh as Uint8Array, false)).toEqual(new Map([['b', 2]]));
  });

  it('keeps maps of more than 65535 entries (32-bit header)', () => {
    const big = new Map<unknown, unknown>();
    for (let i = 0; i < 70_000; i++) big.set(i, i % 100);
    const out = mergeDeltaGroupBytes(packGroup(big), packDeltaGroup([new Map([[70_000, 1]]), [5], []]), false) as Uint8Array;
    const decoded = decodeFullGroup(out, false);
    expect(decoded.size).toBe(70_000);
    expect(decoded.has(5)).toBe(false);
    expect(decoded.get(70_000)).toBe(1);
    expect(decoded.get(69_999)).toBe(99);
  });
});

describe('mergeTimerDeltaBytes', () => {
  /** Timers of one domain as [timestamp, key, namespace] rows. */
  type Row = [number, unknown, number];

  function packDomain(rows: readonly Row[]): Uint8Array | null {
    if (rows.length === 0) return null;
    const c = new TimerColumns();
    for (const [t, k, ns] of rows) c.add(t, k as KeyType, ns);
    return packGroup(c.columns());
  }

  function packDomainDelta(rows: readonly Row[], replaced: readonly unknown[]): Uint8Array {
    const c = new TimerColumns();
    for (const [t, k, ns] of rows) c.add(t, k as KeyType, ns);
    const keys = replaced.every((k) => typeof k === 'number') ? Float64Array.from(replaced as number[]) : [...replaced];
    return packGroup([...c.columns(), keys]);
  }

  function rowsOf(bytes: Uint8Array | undefined): string[][] {
    if (bytes === undefined) return [[], []];
    const parts = unpackGroup(bytes) as (Uint8Array | null)[];
    return [0, 1].map((d) => {
      const rows: string[] = [];
      if (parts[d] !== null && parts[d] !== undefined) forEachEncodedTimer(parts[d]!, (t, k, ns) => rows.push(`${t}/${typeof k}:${String(k)}/${ns}`));
      return rows.sort();
    });
  }

  it('gives the timers the folding path gives (seeded chains, numeric and string keys, one or both domains changing)', () => {
    const seed = 4242;
    const rnd = seededRandom(seed);
    for (let chain = 0; chain < 30; chain++) {
      const strings = chain % 3 === 0;
      const k = (): unknown => (strings && rnd() < 0.5 ? `k${Math.floor(rnd() * 50)}` : Math.floor(rnd() * 50));
      const randomRows = (n: number): Row[] => Array.from({ length: n }, () => [Math.floor(rnd() * 10) * 2000, k(), Math.floor(rnd() * 5)] as Row);
      let full: Uint8Array | undefined = chain % 5 === 0 ? undefined : packGroup([packDomain(randomRows(Math.floor(rnd() * 40))), packDomain(randomRows(Math.floor(rnd() * 10)))]);
      for (let step = 0; step < 6; step++) {
        const parts = [0, 1].map(() => {
          if (rnd() < 0.3) return null;
          const replaced = [...new Set(Array.from({ length: Math.floor(rnd() * 12) }, k))];
          const rows = randomRows(Math.floor(rnd() * 20)).filter((r) => replaced.includes(r[1]));
          return packDomainDelta(rows, replaced);
        });
        const folded: FoldedTimers = full === undefined ? [new Map(), new Map()] : unfoldTimers(full);
        applyTimerDelta(folded, parts);
        const expected = packFoldedTimers(folded);
        const merged = mergeTimerDeltaBytes(full, parts);
        expect(merged, `seed ${seed}, chain ${chain}, step ${step}`).not.toBe('decode');
        expect(rowsOf(merged as Uint8Array | undefined), `seed ${seed}, chain ${chain}, step ${step}`).toEqual(rowsOf(expected));
        full = merged as Uint8Array | undefined;
      }
    }
  });

  it('leaves timers in the earlier nested-map format to the folding path', () => {
    const legacy = packGroup([packGroup(new Map([[2000, new Map([[1, [0]]])]])), null]);
    expect(mergeTimerDeltaBytes(legacy, [packDomainDelta([], [1]), null])).toBe('decode');
  });
});
