import { describe, expect, it } from 'vitest';
import { unstorablePart } from './unstorable-part.js';

describe('unstorablePart', () => {
  it('finds functions and symbols anywhere in a record, with their path', () => {
    expect(unstorablePart(() => 1)).toBe('record is a function');
    expect(unstorablePart({ a: 1, b: { c: [1, Symbol('x')] } })).toBe('record.b.c[1] is a symbol');
    expect(unstorablePart(new Map([['k', { f: () => 1 }]]))).toBe('record.get(k).f is a function');
    expect(unstorablePart(new Set([1, () => 2]))).toBe('record<element> is a function');
    class Bid {
      constructor(
        readonly price: number,
        readonly onWin: () => void,
      ) {}
    }
    expect(unstorablePart(new Bid(3, () => {}))).toBe('record.onWin is a function');
  });

  it('passes data: scalars, nested objects, Maps, Sets, Dates, typed arrays, cycles', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    for (const v of [1, 'x', true, null, undefined, 10n, [1, [2, { a: 'b' }]], new Map([[1, new Set([2])]]), new Date(), new Float64Array(3), Buffer.from('x'), cyclic]) {
      expect(unstorablePart(v)).toBeUndefined();
    }
  });

  it('finds what hides deeper than the fast walk goes, and passes deep data', () => {
    const deep = (leaf: unknown): unknown => {
      let v: unknown = { leaf };
      for (let i = 0; i < 40; i++) v = i % 2 === 0 ? [v] : { v };
      return v;
    };
    expect(unstorablePart(deep(1))).toBeUndefined();
    const found = unstorablePart(deep(() => 1));
    expect(found).toMatch(/^record(\.v\[0\]){20}\.leaf is a function$/);
    expect(unstorablePart(new Map([[1, [new Set([{ a: Symbol('s') }])]]]))).toBe('record.get(1)[0]<element>.a is a symbol');
  });
});
