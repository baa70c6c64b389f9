import type { InputStatus, ReaderOutput, Source, SourceReader, SourceReaderContext } from '../../api/source.js';

/** A share of the generator's index space: indexes `next`, `next + stride`, ... below `end`. */
export interface GeneratorSplit {
  readonly id: number;
  readonly stride: number;
  readonly end: number;
  /** The next index to emit: the split's position, restored after a failure. */
  next: number;
}

export interface GeneratorSourceOptions<T> {
  /** The record at an index: must be a pure function of the index (replayable). */
  readonly generate: (index: number) => T;
  /** Event timestamp of the record at an index, if the records have one. */
  readonly timestampOf?: (index: number) => number;
  /** Number of records; omit (or Infinity) for an unbounded source. */
  readonly count?: number;
  /** First index. */
  readonly from?: number;
  /** Records per second over all subtasks; omit for as fast as possible. */
  readonly eventsPerSecond?: number;
  /** Number of splits; default: the source's parallelism. */
  readonly splits?: number;
}

/**
 * A deterministic, replayable source: record i is generate(i). The index space is dealt
 * round-robin to splits, so parallel subtasks advance through event time together.
 */
export class GeneratorSource<T> implements Source<T, GeneratorSplit> {
  readonly boundedness: 'bounded' | 'unbounded';
  private readonly count: number;
  private readonly from: number;

  constructor(private readonly o: GeneratorSourceOptions<T>) {
    this.count = o.count ?? Number.POSITIVE_INFINITY;
    this.from = o.from ?? 0;
    if (!(this.count >= 0) || (Number.isFinite(this.count) && !Number.isInteger(this.count))) {
      throw new RangeError(`generator count must be a non-negative integer or Infinity, got ${o.count}`);
    }
    if (!Number.isSafeInteger(this.from) || this.from < 0) throw new RangeError(`generator 'from' must be a non-negative integer, got ${o.from}`);
    if (o.eventsPerSecond !== undefined && !(o.eventsPerSecond > 0)) {
      throw new RangeError(`eventsPerSecond must be > 0, got ${o.eventsPerSecond}`);
    }
    this.boundedness = Number.isFinite(this.count) ? 'bounded' : 'unbounded';
  }

  createSplits(parallelism: number): GeneratorSplit[] {
    const n = this.o.splits ?? parallelism;
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`generator splits must be an integer >= 1, got ${n}`);
    const end = this.from + this.count;
    return Array.from({ length: n }, (_, i) => ({ id: i, stride: n, end, next: this.from + i }));
  }

  createReader(ctx: SourceReaderContext): SourceReader<T, GeneratorSplit> {
    return new GeneratorReader(this.o, ctx);
  }
}

class GeneratorReader<T> implements SourceReader<T, GeneratorSplit> {
  private readonly splits: GeneratorSplit[] = [];
  private current = 0;
  private noMore = false;
  private readonly generate: (index: number) => T;
  private readonly timestampOf: ((index: number) => number) | undefined;
  private ratePerMs = 0;
  private rateStartMs = 0;
  private emittedSinceStart = 0;
  private numSplitsTotal = 1;

  constructor(
    private readonly o: GeneratorSourceOptions<T>,
    private readonly ctx: SourceReaderContext,
  ) {
    this.generate = o.generate;
    this.timestampOf = o.timestampOf;
  }

  addSplits(splits: readonly GeneratorSplit[]): void {
    for (const s of splits) {
      this.splits.push({ ...s });
      this.numSplitsTotal = s.stride;
    }
    if (this.o.eventsPerSecond !== undefined) {
      this.ratePerMs = ((this.o.eventsPerSecond / 1000) * this.splits.length) / this.numSplitsTotal;
      this.rateStartMs = this.ctx.nowMs();
      this.emittedSinceStart = 0;
    }
  }

  noMoreSplits(): void {
    this.noMore = true;
  }

  pollNext(output: ReaderOutput<T>): InputStatus {
    const splits = this.splits;
    const n = splits.length;
    // The current split, or the next one (wrapping around) with records left. Splits restored
    // from several subtasks stand at different positions, so any of them may run out first;
    // the others still have records.
    let split: GeneratorSplit | undefined;
    for (let tried = 0; tried < n; tried++) {
      const s = splits[this.current]!;
      if (s.next < s.end) {
        split = s;
        break;
      }
      this.current = this.current + 1 === n ? 0 : this.current + 1;
    }
    if (split === undefined) return this.noMore ? 'end' : 'nothing';
    if (this.ratePerMs > 0) {
      const allowed = (this.ctx.nowMs() - this.rateStartMs) * this.ratePerMs;
      if (this.emittedSinceStart >= allowed) return 'nothing';
      this.emittedSinceStart++;
    }
    const i = split.next;
    split.next = i + split.stride;
    // Interleave the splits of one reader so each advances at the same pace.
    if (splits.length > 1) this.current = this.current + 1 === splits.length ? 0 : this.current + 1;
    if (this.timestampOf === undefined) output.collect(this.generate(i));
    else output.collect(this.generate(i), this.timestampOf(i));
    return 'more';
  }

  isAvailable(): Promise<void> {
    const waitMs = this.ratePerMs > 0 ? Math.max(1, Math.min(50, 1 / this.ratePerMs)) : 1000;
    return new Promise((resolve) => setTimeout(resolve, waitMs));
  }

  snapshotState(): GeneratorSplit[] {
    return this.splits.map((s) => ({ ...s }));
  }
}
