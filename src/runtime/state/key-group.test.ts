import { describe, expect, it } from 'vitest';
import {
  assignToKeyGroup,
  computeDefaultMaxParallelism,
  KeyGroupHints,
  keyGroupRangeForOperator,
  keyHashCode,
  operatorIndexForKeyGroup,
  type KeyType,
} from './key-group.js';

// Expected values printed by a Java 17 program using Object.hashCode() and Flink's
// MathUtils.murmurHash: [key, hashCode, keyGroup of 128, keyGroup of 32768].
const javaReference: Array<[KeyType, number, number, number]> = [
  ['hello', 99162322, 35, 31395],
  ['', 0, 94, 31198],
  ['auction-42', 821921352, 60, 9276],
  ['ÿ€😀', 17407408, 106, 8810],
  [0, 0, 94, 31198],
  [1, 1, 86, 16342],
  [-1, -1, 80, 15184],
  [42, 42, 29, 28189],
  [2147483647, 2147483647, 62, 19646],
  [-2147483648, -2147483648, 108, 10348],
  [4294967296, 1, 86, 16342],
  [9007199254740991, -2097152, 73, 27849],
  [-9007199254740991, -2097151, 13, 30861],
  [4294967296n, 1, 86, 16342],
  [1.5, 1073217536, 65, 833],
  [-0.25, -1076887552, 74, 1354],
  [1e300, -164130400, 111, 2159],
  [true, 1231, 77, 11725],
  [false, 1237, 3, 32003],
];

describe('key groups', () => {
  it.each(javaReference.map(([k, ...rest]) => [String(k), k, ...rest] as const))('key %s hashes and assigns as in Java/Flink', (_name, key, hash, kg128, kg32768) => {
    expect(keyHashCode(key)).toBe(hash);
    expect(assignToKeyGroup(key, 128)).toBe(kg128);
    expect(assignToKeyGroup(key, 32768)).toBe(kg32768);
  });

  it('ranges of all subtasks partition [0, maxP) and agree with operatorIndexForKeyGroup', () => {
    for (const maxP of [1, 7, 128, 1000]) {
      for (let p = 1; p <= Math.min(maxP, 13); p++) {
        let next = 0;
        for (let i = 0; i < p; i++) {
          const r = keyGroupRangeForOperator(maxP, p, i);
          expect(r.startKeyGroup).toBe(next);
          for (let kg = r.startKeyGroup; kg <= r.endKeyGroup; kg++) expect(operatorIndexForKeyGroup(maxP, p, kg)).toBe(i);
          next = r.endKeyGroup + 1;
        }
        expect(next).toBe(maxP);
      }
    }
  });

  it('default max parallelism follows Flink', () => {
    expect(computeDefaultMaxParallelism(1)).toBe(128);
    expect(computeDefaultMaxParallelism(100)).toBe(256);
    expect(computeDefaultMaxParallelism(30000)).toBe(32768);
  });

  it('rejects bad parallelism and keys', () => {
    expect(() => keyGroupRangeForOperator(128, 0, 0)).toThrow(/parallelism/);
    expect(() => keyGroupRangeForOperator(128, 129, 0)).toThrow(/parallelism/);
    expect(() => keyHashCode({} as unknown as KeyType)).toThrow(/key must be/);
  });

  it('a key group sent along is trusted, checked against the key one time in 64, and refused at once outside the range', () => {
    const range = keyGroupRangeForOperator(128, 2, 1); // [64, 127]
    const keys = Array.from({ length: 2000 }, (_, i) => `k${i}`).filter((k) => assignToKeyGroup(k, 128) >= 64);
    const hints = new KeyGroupHints(range, 128);
    for (const k of keys) expect(hints.slotOf(k, assignToKeyGroup(k, 128))).toBe(assignToKeyGroup(k, 128) - 64);
    // A key selector that gives the receiving side another key: caught within 64 records.
    const lying = new KeyGroupHints(range, 128);
    let caught: unknown;
    let records = 0;
    try {
      for (const k of keys) {
        records++;
        const other = keys.find((o) => assignToKeyGroup(o, 128) !== assignToKeyGroup(k, 128))!;
        lying.slotOf(other, assignToKeyGroup(k, 128));
      }
    } catch (e) {
      caught = e;
    }
    expect(records).toBeLessThanOrEqual(64);
    expect(String(caught)).toMatch(/the keyBy sent its record as key group \d+: the key selector must return the same key .*non-deterministic/);
    expect(() => new KeyGroupHints(range, 128).slotOf(keys[0]!, 3)).toThrow(/the keyBy sent its record as key group 3:/);
  });
});
