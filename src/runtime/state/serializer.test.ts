import { describe, expect, it } from 'vitest';
import { checkMsgpackValue, SerializationError } from './serializer.js';

describe('checkMsgpackValue', () => {
  it('accepts plain data, dates, typed arrays, Maps, Sets and shared (acyclic) references', () => {
    const shared = { n: 1 };
    for (const v of [0, -1.5, 'x', true, null, undefined, 12n, new Date(0), new Uint8Array(3), [1, [2, { a: 'b' }]], ['word', 1, null, undefined, true, 2n], [], new Map([[1, { s: new Set([1, 2]) }]]), { a: shared, b: shared }, Object.assign(Object.create(null), { z: 1 })]) {
      expect(() => checkMsgpackValue(v)).not.toThrow();
    }
  });

  it('names the path of a function, a symbol, a class instance and a cycle', () => {
    class Point {
      x = 1;
    }
    const cyclic: { self?: unknown; list: unknown[] } = { list: [] };
    cyclic.list.push({ back: cyclic });
    const cases: [unknown, RegExp][] = [
      [() => 1, /^value is a function, which state cannot hold/],
      [{ a: [1, { f: () => 1 }] }, /^value\.a\[1\]\.f is a function/],
      // Flat objects (no nested objects) take a shorter path: it must still refuse these.
      [{ auction: 1, count: 2, f: () => 1 }, /^value\.f is a function/],
      [{ auction: 1, s: Symbol('s') }, /^value\.s is a symbol/],
      // So do flat arrays (tuples such as [word, count]).
      [['word', 1, () => 1], /^value\[2\] is a function/],
      [['word', Symbol('s')], /^value\[1\] is a symbol/],
      [['word', new Point()], /^value\[1\] is an instance of class Point/],
      [Object.assign(new Point(), { y: 2 }), /^value is an instance of class Point/],
      [new Map([['k', Symbol('s')]]), /^value\.get\(k\) is a symbol/],
      [new Map([[Symbol('s'), 1]]), /^value<key> is a symbol/],
      [new Set([1, new Point()]), /^value<element> is an instance of class Point; state holds plain objects only/],
      [cyclic, /^value\.list\[0\]\.back refers back to itself \(a cycle\)/],
    ];
    for (const [value, message] of cases) {
      let thrown: unknown;
      try {
        checkMsgpackValue(value);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(SerializationError);
      expect((thrown as Error).message).toMatch(message);
    }
  });

  it('uses the path it is given as the root', () => {
    expect(() => checkMsgpackValue({ a: () => 1 }, 'acc')).toThrow(/^acc\.a is a function/);
  });
});
