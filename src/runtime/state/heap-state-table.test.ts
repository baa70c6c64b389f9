import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { HeapStateTable } from './heap-state-table.js';

describe.each([
  { layout: 'maps', numericValues: false, switchAt: -1 },
  { layout: 'numeric', numericValues: true, switchAt: -1 },
  { layout: 'numeric, then maps at step 9000 (a string value)', numericValues: true, switchAt: 9000 },
])('HeapStateTable (namespaced, $layout)', ({ numericValues, switchAt }) => {
  it('matches a model under random gets, puts, removes and key removals (the last-key cache never serves a removed map)', () => {
    const seed = 20261201;
    const random = seededRandom(seed);
    const table = new HeapStateTable('s', { startKeyGroup: 0, endKeyGroup: 3 }, true, numericValues);
    const model = new Map<string, unknown>();
    const id = (g: number, k: number, ns: number) => `${g}|${k}|${ns}`;
    for (let step = 0; step < 20_000; step++) {
      const g = Math.floor(random() * 4);
      const k = Math.floor(random() * 6);
      const ns = Math.floor(random() * 3);
      const r = random();
      if (r < 0.4) {
        expect(table.get(g, k, ns), `seed ${seed} step ${step}`).toBe(model.get(id(g, k, ns)));
      } else if (r < 0.75 || step === switchAt) {
        const value = step === switchAt ? 'not a number' : step;
        table.put(g, k, ns, value);
        model.set(id(g, k, ns), value);
      } else if (r < 0.95) {
        table.remove(g, k, ns);
        model.delete(id(g, k, ns));
      } else {
        table.removeKey(g, k);
        for (let n = 0; n < 3; n++) model.delete(id(g, k, n));
      }
      expect(table.isNumeric, `seed ${seed} step ${step}`).toBe(numericValues && (switchAt < 0 || step < switchAt));
      // A key without namespaces is not kept (snapshots would write an empty map).
      const inGroup = table.groupMap(g).get(k) as Map<number, unknown> | undefined;
      expect(inGroup === undefined || inGroup.size > 0, `seed ${seed} step ${step}`).toBe(true);
      if (step % 97 === 0) expect(table.numEntries(), `seed ${seed} step ${step}`).toBe(model.size);
    }
    expect(table.numEntries()).toBe(model.size);
    for (let g = 0; g < 4; g++) {
      const fromTable = [...table.groupMap(g)].flatMap(([k, byNs]) => [...(byNs as Map<number, unknown>)].map(([ns, v]) => `${id(g, k as number, ns)}=${String(v)}`));
      const fromModel = [...model].filter(([key]) => key.startsWith(`${g}|`)).map(([key, v]) => `${key}=${String(v)}`);
      expect(fromTable.sort()).toEqual(fromModel.sort());
    }
  });
});

describe('HeapStateTable (numeric layout)', () => {
  it('keeps numbers in the numeric layout and turns into maps, entries kept, at the first other key or value', () => {
    const table = new HeapStateTable('s', { startKeyGroup: 0, endKeyGroup: 0 }, false, true);
    table.put(0, 1, 0, 10);
    table.put(0, -0, 0, 11);
    table.put(0, 2.5, 0, NaN);
    expect(table.isNumeric).toBe(true);
    expect(table.get(0, 0, 0)).toBe(11);
    expect(table.get(0, 'x', 0)).toBeUndefined();
    table.put(0, 'x', 0, 12);
    expect(table.isNumeric).toBe(false);
    expect([...table.groupMap(0)].sort()).toEqual([[0, 11], [1, 10], [2.5, NaN], ['x', 12]].sort());
    expect(table.numEntries()).toBe(4);
  });
});
