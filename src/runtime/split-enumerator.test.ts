import { describe, expect, it } from 'vitest';
import { SplitEnumerator } from './split-enumerator.js';

describe('SplitEnumerator', () => {
  it('hands out each split once, in order, then answers no more splits', () => {
    const e = new SplitEnumerator(['a', 'b', 'c']);
    expect([e.handleSplitRequest(), e.handleSplitRequest(), e.handleSplitRequest()]).toEqual(['a', 'b', 'c'].map((split) => ({ kind: 'split', split })));
    expect(e.handleSplitRequest()).toEqual({ kind: 'no-more-splits' });
    expect(e.handleSplitRequest()).toEqual({ kind: 'no-more-splits' });
  });

  it('a snapshot holds exactly the splits not handed out, and a restored enumerator goes on from there', () => {
    const e = new SplitEnumerator([1, 2, 3, 4]);
    e.handleSplitRequest();
    const snapshot = e.snapshot();
    expect(snapshot).toEqual([2, 3, 4]);
    e.handleSplitRequest(); // handed out after the snapshot: a restore gives it out again
    expect(e.remaining).toBe(2);
    const restored = new SplitEnumerator(snapshot);
    expect(restored.handleSplitRequest()).toEqual({ kind: 'split', split: 2 });
    expect(restored.snapshot()).toEqual([3, 4]);
  });

  it('does not share its array with the caller', () => {
    const given = ['x', 'y'];
    const e = new SplitEnumerator(given);
    e.handleSplitRequest();
    expect(given).toEqual(['x', 'y']);
  });
});
