import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { HeapStateTable } from './heap-state-table.js';

describe('HeapStateTable (namespaced)', () => {
  it('matches a model under random gets, puts, removes and key removals (the last-key cache never serves a removed map)', () => {
    const seed = 20261201;
    const random = seededRandom(seed);
    const table = new HeapStateTable('s', { startKeyGroup: 0, endKeyGroup: 3 }, true);
    const model = new Map<string, unknown>();
    const id = (g: number, k: number, ns: number) => `${g}|${k}|${ns}`;
    for (let step = 0; step < 20_000; step++) {
      const g = Math.floor(random() * 4);
      const k = Math.floor(random() * 6);
      const ns = Math.floor(random() * 3);
      const r = random();
      if (r < 0.4) {
        expect(table.get(g, k, ns), `seed ${seed} step ${step}`).toBe(model.get(id(g, k, ns)));
      } else if (r < 0.75) {
        table.put(g, k, ns, step);
        model.set(id(g, k, ns), step);
      } else if (r < 0.95) {
        table.remove(g, k, ns);
        model.delete(id(g, k, ns));
      } else {
        table.removeKey(g, k);
        for (let n = 0; n < 3; n++) model.delete(id(g, k, n));
      }
      // A key without namespaces is not kept (snapshots would write an empty map).
      const inGroup = table.groups[g]!.get(k) as Map<number, unknown> | undefined;
      expect(inGroup === undefined || inGroup.size > 0, `seed ${seed} step ${step}`).toBe(true);
      if (step % 97 === 0) expect(table.numEntries(), `seed ${seed} step ${step}`).toBe(model.size);
    }
    expect(table.numEntries()).toBe(model.size);
  });
});
