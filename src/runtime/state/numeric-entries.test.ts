import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { NumericEntries, numericPairHash } from './numeric-entries.js';

describe('NumericEntries', () => {
  it('matches a Map under random sets, deletes and key deletions, growing from 2 slots (seeded)', () => {
    for (const seed of [1, 2, 3, 20261201]) {
      const random = seededRandom(seed);
      const entries = new NumericEntries(2);
      const model = new Map<string, number>();
      const id = (k: number, ns: number) => `${k}|${ns}`;
      // Integers, negative ones, doubles beyond 32 bits (timestamps) and fractions: both hash paths.
      const keys = [0, 1, -1, 7, 2 ** 31, 1.7e12 + 3, 0.5, -123456.25, 42];
      const namespaces = [0, 1, 1.7e12, 1.7e12 + 2000, -5, 0.25];
      for (let step = 0; step < 30_000; step++) {
        const k = keys[Math.floor(random() * keys.length)]!;
        const ns = namespaces[Math.floor(random() * namespaces.length)]!;
        const r = random();
        const at = `seed ${seed} step ${step}`;
        if (r < 0.35) expect(entries.get(k, ns), at).toBe(model.get(id(k, ns)));
        else if (r < 0.7) {
          expect(entries.set(k, ns, step), at).toBe(!model.has(id(k, ns)));
          model.set(id(k, ns), step);
        } else if (r < 0.97) {
          expect(entries.delete(k, ns), at).toBe(model.delete(id(k, ns)));
        } else {
          const removed = namespaces.filter((n) => model.delete(id(k, n))).length;
          expect(entries.deleteKey(k), at).toBe(removed);
        }
        expect(entries.size, at).toBe(model.size);
      }
      const seen = new Map<string, number>();
      entries.forEach((k, ns, v) => seen.set(id(k, ns), v));
      expect(seen).toEqual(model);
      const columns = new Float64Array(3 * entries.size + 2);
      expect(entries.writeColumns(columns, 2)).toBe(columns.length);
      const fromColumns = new Map<string, number>();
      for (let i = 2; i < columns.length; i += 3) fromColumns.set(id(columns[i]!, columns[i + 1]!), columns[i + 2]!);
      expect(fromColumns).toEqual(model);
    }
  });

  it('treats -0 as 0 (as a Map does) and keeps any number as a value', () => {
    const e = new NumericEntries();
    expect(e.set(-0, -0, -0)).toBe(true);
    expect(e.set(0, 0, NaN)).toBe(false);
    expect(e.get(0, -0)).toBeNaN();
    expect(e.size).toBe(1);
    expect(NumericEntries.accepts(NaN, 0)).toBe(false);
    expect(NumericEntries.accepts(1, NaN)).toBe(false);
    expect(NumericEntries.accepts('1', 0)).toBe(false);
  });

  it('sets the entry a get found only while that slot still holds it (removals shift entries, growth moves them)', () => {
    const e = new NumericEntries(8);
    // Keys with the same home slot form one probe run: removing the first shifts the others back.
    const run: number[] = [];
    for (let k = 0; run.length < 3; k++) if ((numericPairHash(k, 0) & 7) === (numericPairHash(0, 0) & 7)) run.push(k);
    for (const k of run) e.set(k, 0, k);
    expect(e.get(run[2]!, 0)).toBe(run[2]); // remembers run[2]'s slot
    e.delete(run[0]!, 0); // run[1] and run[2] shift back: run[2]'s old slot is free now
    expect(e.set(run[2]!, 0, 100)).toBe(false);
    expect(e.get(run[1]!, 0)).toBe(run[1]); // remembers run[1]'s slot...
    e.delete(run[1]!, 0); // ...which run[2] shifts into
    expect(e.set(run[1]!, 0, 200)).toBe(true); // a new entry, not run[2] overwritten
    expect(e.get(run[2]!, 0)).toBe(100);
    expect(e.get(run[1]!, 0)).toBe(200);
    for (let k = 1000; k < 1100; k++) e.set(k, 1, k); // grows: every entry moves
    expect(e.get(1050, 1)).toBe(1050);
    expect(e.set(run[2]!, 0, 300)).toBe(false);
    expect(e.get(1050, 1)).toBe(1050);
    expect(e.get(run[2]!, 0)).toBe(300);
    expect(e.size).toBe(102);
  });

  it('survives long probe runs wrapping around the end of the table (backward-shift deletion)', () => {
    const e = new NumericEntries(1024);
    const model = new Map<number, number>();
    const random = seededRandom(7);
    for (let round = 0; round < 50_000; round++) {
      const k = Math.floor(random() * 600);
      if (random() < 0.55) {
        e.set(k, 0, round);
        model.set(k, round);
      } else {
        e.delete(k, 0);
        model.delete(k);
      }
    }
    for (let k = 0; k < 600; k++) expect(e.get(k, 0), `key ${k}`).toBe(model.get(k));
  });
});

