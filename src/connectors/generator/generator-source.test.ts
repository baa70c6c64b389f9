import { describe, expect, it } from 'vitest';
import { GeneratorSource, type GeneratorSplit } from './generator-source.js';

const ctx = { subtaskIndex: 0, parallelism: 1, attemptNumber: 0, nowMs: () => 0 };

function drain(source: GeneratorSource<number>, splits: readonly GeneratorSplit[]): number[] {
  const reader = source.createReader(ctx);
  reader.addSplits(splits);
  reader.noMoreSplits?.();
  const out: number[] = [];
  const output = { collect: (v: number) => void out.push(v) };
  for (let guard = 0; guard < 10_000; guard++) {
    const status = reader.pollNext(output);
    if (status === 'end') return out;
    expect(status).toBe('more');
  }
  throw new Error('the reader never reached the end of its splits');
}

describe('GeneratorSource', () => {
  it('emits every index of its splits once, in total the whole range', () => {
    const source = new GeneratorSource<number>({ generate: (i) => i, count: 100 });
    const got = drain(source, source.createSplits(3));
    expect(got.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  // A restore at lower parallelism hands one reader the splits of several subtasks, each at its
  // own position. Whichever split runs out first, the others' records must still come.
  it.each([0, 1, 2])('splits restored at different positions: all remaining records come when split %i runs out first', (first) => {
    const source = new GeneratorSource<number>({ generate: (i) => i, count: 300 });
    const splits = source.createSplits(3).map((s) => ({ ...s, next: s.next + 3 * (s.id === first ? 95 : 10 + 20 * s.id) }));
    const want = splits.flatMap((s) => Array.from({ length: Math.ceil((s.end - s.next) / s.stride) }, (_, k) => s.next + k * s.stride));
    const got = drain(source, splits);
    expect(got.sort((a, b) => a - b)).toEqual(want.sort((a, b) => a - b));
  });
});
