import { describe, expect, it } from 'vitest';
import { redistributeOperatorList } from './redistribution.js';

describe('operator state redistribution', () => {
  const state = [[1, 2, 3], [4], [5, 6, 7, 8]];

  it('split: every entry exactly once, shares differ by at most one', () => {
    for (let p = 1; p <= 10; p++) {
      const out = redistributeOperatorList('split', state, p);
      expect(out).toHaveLength(p);
      expect(out.flat().sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const sizes = out.map((s) => s.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
    expect(redistributeOperatorList('split', state, 3)).toEqual([[1, 2, 3], [4, 5, 6], [7, 8]]);
  });

  it('union: every subtask gets everything', () => {
    expect(redistributeOperatorList('union', state, 2)).toEqual([[1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8]]);
  });

  it('broadcast: every subtask gets a copy of one', () => {
    expect(redistributeOperatorList('broadcast', [[9, 8], [9, 8]], 3)).toEqual([[9, 8], [9, 8], [9, 8]]);
  });

  it('rejects a bad parallelism', () => {
    expect(() => redistributeOperatorList('split', state, 0)).toThrow(/parallelism/);
  });
});
