import type { Source, SourceReader } from '../../src/api/source.js';

/**
 * A bounded source for processing-time tests: emits `items` in bursts of `burst` records,
 * `pauseMs` apart, and ends `tailMs` after the last one, so processing-time timers due
 * before then have fired. Read by one subtask.
 */
export class PacedSource<T> implements Source<T, { id: string }> {
  readonly boundedness = 'bounded' as const;
  constructor(
    private readonly items: readonly T[],
    private readonly burst: number,
    private readonly pauseMs: number,
    private readonly tailMs: number,
  ) {}
  createSplits(): { id: string }[] {
    return [{ id: 'paced' }];
  }
  createReader(): SourceReader<T, { id: string }> {
    const { items, burst, pauseMs, tailMs } = this;
    let mine = false;
    let i = 0;
    let resumeAt = 0;
    let endAt: number | undefined;
    return {
      addSplits(splits) {
        if (splits.length > 0) mine = true;
      },
      noMoreSplits() {},
      pollNext(out) {
        if (!mine) return 'end';
        const now = Date.now();
        if (i < items.length) {
          if (now < resumeAt) return 'nothing';
          out.collect(items[i++]!);
          if (i % burst === 0) resumeAt = now + pauseMs;
          return 'more';
        }
        endAt ??= now + tailMs;
        return now >= endAt ? 'end' : 'nothing';
      },
      isAvailable: () =>
        new Promise<void>((resolve) => {
          setTimeout(resolve, Math.max(1, Math.min(5, (endAt ?? resumeAt) - Date.now())));
        }),
      snapshotState: () => [],
    };
  }
}
