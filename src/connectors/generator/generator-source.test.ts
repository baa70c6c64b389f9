import { describe, expect, it } from 'vitest';
import { GeneratorSource, type GeneratorSplit } from './generator-source.js';
import { nexmarkSource, numberSource } from './sources.js';
import type { SourceReader } from '../../api/source.js';
import { collectingReaderOutput } from '../../testing/reader-output.js';

const ctx = { subtaskIndex: 0, parallelism: 1, attemptNumber: 0, nowMs: () => 0, sendSplitRequest: () => {} };

function drain(source: GeneratorSource<number>, splits: readonly GeneratorSplit[]): number[] {
  const reader = source.createReader(ctx);
  reader.addSplits(splits);
  reader.noMoreSplits?.();
  const out: number[] = [];
  const output = collectingReaderOutput((v: number) => void out.push(v));
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

  // The records' order is their event time's (nexmark, numbers with timestamps): a reader with
  // splits far apart must not alternate between them, or the one ahead makes the other's records late.
  it('splits restored at different positions are read in index order: the one behind catches up first', () => {
    const source = new GeneratorSource<number>({ generate: (i) => i, count: 400 });
    const [even, odd] = source.createSplits(2);
    const got = drain(source, [{ ...even!, next: 100 }, { ...odd!, next: 301 }]);
    const want = [...range(100, 400).filter((i) => i % 2 === 0 || i >= 301)];
    expect(got).toEqual(want);
  });
});

describe('GeneratorSource with on-request splits', () => {
  /** A reader driven by a fake enumerator: `answers` are handed out one per request, then no more. */
  function drive(source: GeneratorSource<number>, restored: readonly GeneratorSplit[], answers: GeneratorSplit[]): { out: number[]; requests: number; maxHeld: number } {
    let requests = 0;
    let pending = false;
    const reader = source.createReader({ ...ctx, sendSplitRequest: () => (expect(pending).toBe(false), (pending = true), requests++) });
    if (restored.length > 0) reader.addSplits(restored);
    const out: number[] = [];
    let maxHeld = 0;
    const output = collectingReaderOutput((v: number) => void out.push(v));
    for (let guard = 0; guard < 100_000; guard++) {
      const status = reader.pollNext(output);
      maxHeld = Math.max(maxHeld, reader.snapshotState(0).length);
      if (status === 'end') return { out, requests, maxHeld };
      if (pending) {
        // The answer arrives between two polls, as the task's mailbox delivers it.
        pending = false;
        const next = answers.shift();
        if (next === undefined) reader.noMoreSplits();
        else reader.addSplits([next]);
      }
    }
    throw new Error('the reader never reached the end');
  }

  it('splits are contiguous ranges covering the index space once, in order', () => {
    const source = new GeneratorSource<number>({ generate: (i) => i, count: 10_000, from: 5, splitAssignment: 'on-request' });
    const splits = source.createSplits(2);
    expect(splits.length).toBe(10); // 10,000 records: ranges of at least 1,024 (fewer than 64 per subtask)
    expect(splits.every((s) => s.stride === 1)).toBe(true);
    expect(splits[0]!.next).toBe(5);
    for (let i = 1; i < splits.length; i++) expect(splits[i]!.next).toBe(splits[i - 1]!.end);
    expect(splits.at(-1)!.end).toBe(10_005);
  });

  it('reads the ranges it is given in index order, asks for the next halfway through its last one, and ends on no more splits', () => {
    const source = new GeneratorSource<number>({ generate: (i) => i, count: 5_000, splits: 5, splitAssignment: 'on-request' });
    const splits = source.createSplits(1);
    const { out, requests, maxHeld } = drive(source, [], splits);
    expect(out).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
    expect(requests).toBe(6); // five ranges, then the answer "no more"
    expect(maxHeld).toBeLessThanOrEqual(2); // the current range and the one asked for ahead
  });

  it('a reader that starts first does not take the range the other reader is about to ask for', () => {
    // Two ranges, two readers: reader a is deployed first and asks first. Had it asked for
    // a second range as soon as it held one, it would take both while b idled.
    const source = new GeneratorSource<number>({ generate: (i) => i, count: 4_000, splits: 2, splitAssignment: 'on-request' });
    const enumerator = source.createSplits(2);
    const requests: string[] = [];
    const reader = (name: string) => source.createReader({ ...ctx, sendSplitRequest: () => void requests.push(name) });
    const a = reader('a');
    const b = reader('b');
    const answer = (who: SourceReader<number, GeneratorSplit>) => {
      const next = enumerator.shift();
      if (next === undefined) who.noMoreSplits();
      else who.addSplits([next]);
    };
    const outA: number[] = [];
    const outB: number[] = [];
    a.pollNext(collectingReaderOutput((v) => void outA.push(v)));
    expect(requests).toEqual(['a']);
    answer(a);
    // a reads the first quarter of its range before b's first request arrives.
    for (let k = 0; k < 500; k++) a.pollNext(collectingReaderOutput((v) => void outA.push(v)));
    expect(requests).toEqual(['a']);
    b.pollNext(collectingReaderOutput((v) => void outB.push(v)));
    answer(b);
    for (let k = 0; k < 10_000 && outA.length + outB.length < 4_000; k++) {
      a.pollNext(collectingReaderOutput((v) => void outA.push(v)));
      b.pollNext(collectingReaderOutput((v) => void outB.push(v)));
      while (requests.length > 2) answer(requests.pop() === 'a' ? a : b);
    }
    expect(outA).toEqual(range(0, 2_000));
    expect(outB).toEqual(range(2_000, 4_000));
  });

  it('restored ranges at different positions come first, merged in index order, then the ones it asks for', () => {
    const source = new GeneratorSource<number>({ generate: (i) => i, count: 4_000, splits: 4, splitAssignment: 'on-request' });
    const [a, b, c, d] = source.createSplits(3);
    // Restored at lower parallelism: ranges 2 (at 2,500), 0 (at 300) and 1 (at 1,700) of three
    // earlier readers; the enumerator still has range 3 (it hands ranges out in order).
    const { out } = drive(source, [{ ...c!, next: 2_500 }, { ...a!, next: 300 }, { ...b!, next: 1_700 }], [d!]);
    const want = [...range(300, 1_000), ...range(1_700, 2_000), ...range(2_500, 3_000), ...range(3_000, 4_000)];
    expect(out).toEqual(want);
  });

  it('refuses an unbounded generator', () => {
    expect(() => new GeneratorSource<number>({ generate: (i) => i, splitAssignment: 'on-request' })).toThrow(/bounded index space: set `count`/);
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, k) => from + k);
}

describe('generator option names', () => {
  it('a misspelt name is refused (a misspelt count made an unbounded source: a job that never ended)', () => {
    expect(() => numberSource({ counts: 100 } as never)).toThrow(/^numberSource: unknown option 'counts' \(did you mean 'count'\?\); its options are from, count, eventsPerSecond, splitAssignment, splits$/);
    expect(() => nexmarkSource({ event: 100 } as never)).toThrow(/^nexmarkSource: unknown option 'event' \(did you mean 'events'\?\)/);
    expect(() => new GeneratorSource({ generate: (i: number) => i, eventPerSecond: 10 } as never)).toThrow(/^generator source: unknown option 'eventPerSecond' \(did you mean 'eventsPerSecond'\?\)/);
    expect(() => new GeneratorSource({ count: 10 } as never)).toThrow(/^generator source: generate must be a function \(index\) => record, got undefined$/);
    expect(() => numberSource({ from: 1, count: 2, eventsPerSecond: 5, splitAssignment: 'static', splits: 1 })).not.toThrow();
  });
});
