import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { NumericTimerBucket } from './numeric-timer-bucket.js';

/** The reference: live (key, namespace) pairs in registration order. */
class ModelBucket {
  readonly pairs: [number, number][] = [];
  indexOf(k: number, ns: number): number {
    return this.pairs.findIndex(([a, b]) => a === k && b === ns);
  }
}

function live(bucket: NumericTimerBucket): [number, number][] {
  const out: [number, number][] = [];
  bucket.forEach((k, ns) => out.push([k, ns]));
  return out;
}

describe('numeric timer bucket', () => {
  for (const seed of [1, 2, 3, 41, 977]) {
    it(`matches registration order under random appends, deletes and firing with changes while firing (seed ${seed})`, () => {
      const random = seededRandom(seed);
      const bucket = new NumericTimerBucket();
      const model = new ModelBucket();
      // Small and large key spaces: the scanned and the indexed bucket, growth and compaction.
      const keySpace = seed % 2 === 0 ? 6 : 400;
      const key = (): number => {
        const r = random();
        if (r < 0.05) return -0; // folded into 0, as a Map's keys are
        if (r < 0.1) return 1.5 + Math.floor(random() * 4); // not an integer
        if (r < 0.15) return 2 ** 40 + Math.floor(random() * 4); // beyond 32 bits
        return Math.floor(random() * keySpace);
      };
      const add = (k: number, ns: number, step: number): void => {
        const present = model.indexOf(k, ns) >= 0;
        expect(bucket.has(k, ns), `seed ${seed} step ${step}: has`).toBe(present);
        if (!present) {
          bucket.append(k, ns);
          model.pairs.push([k + 0, ns]);
        }
      };
      for (let step = 0; step < 6000; step++) {
        const r = random();
        const k = key();
        const ns = Math.floor(random() * 3) * 1000;
        if (r < 0.6) add(k, ns, step);
        else if (r < 0.95) {
          const i = model.indexOf(k, ns);
          expect(bucket.delete(k, ns), `seed ${seed} step ${step}: delete`).toBe(i >= 0);
          if (i >= 0) model.pairs.splice(i, 1);
        } else {
          // Fire: every timer in order, and those appended while firing; deleted ones not.
          const expected = [...model.pairs];
          const fired: [number, number][] = [];
          bucket.fire((fk, fns) => {
            fired.push([fk, fns]);
            const next = expected.shift()!;
            expect([fk, fns], `seed ${seed} step ${step}: fired in order`).toEqual(next);
            model.pairs.splice(model.indexOf(fk, fns), 1);
            const c = random();
            if (c < 0.2) {
              // A timer registered while firing fires in the same walk (even the one that fired).
              const ak = random() < 0.5 ? fk : key();
              const ans = Math.floor(random() * 3) * 1000;
              if (model.indexOf(ak, ans) < 0) expected.push([ak + 0, ans]);
              add(ak, ans, step);
            } else if (c < 0.3 && expected.length > 0) {
              // A timer deleted while firing does not fire.
              const [dk, dns] = expected.splice(Math.floor(random() * expected.length), 1)[0]!;
              expect(bucket.delete(dk, dns), `seed ${seed} step ${step}: delete while firing`).toBe(true);
              model.pairs.splice(model.indexOf(dk, dns), 1);
            }
          });
          expect(expected, `seed ${seed} step ${step}: everything due fired`).toEqual([]);
          expect(model.pairs).toEqual([]);
        }
        expect(bucket.size, `seed ${seed} step ${step}: size`).toBe(model.pairs.length);
        if (step % 97 === 0) expect(live(bucket), `seed ${seed} step ${step}: live timers in order`).toEqual(model.pairs);
      }
    });
  }

  it('refuses NaN keys and namespaces and keys that are not numbers', () => {
    expect(NumericTimerBucket.accepts(1, 2)).toBe(true);
    expect(NumericTimerBucket.accepts(NaN, 2)).toBe(false);
    expect(NumericTimerBucket.accepts(1, NaN)).toBe(false);
    expect(NumericTimerBucket.accepts('1', 2)).toBe(false);
    expect(NumericTimerBucket.accepts(1n, 2)).toBe(false);
  });
});
