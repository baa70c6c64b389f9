import { checkKnownOptions } from '../../util/known-options.js';
import { previewValue } from '../../util/preview.js';
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
  /**
   * Number of splits. Default: the source's parallelism ('static'); with 'on-request', 64 per
   * subtask (at least 1,024 records each), so the last split handed out is short.
   */
  readonly splits?: number;
  /**
   * 'static' (default): split i holds indexes i, i + n, i + 2n, ... and each subtask reads its
   * share from the start. 'on-request': split i is the i-th contiguous range of the index
   * space, handed out in order by the JobManager to whichever reader asks next, so a subtask
   * that gets through its records faster (less downstream work, a faster machine) reads more.
   * A reader emits its ranges in index order, so event time stays ordered per reader. Needs a
   * bounded generator (`count`).
   */
  readonly splitAssignment?: 'static' | 'on-request';
}

const GENERATOR_OPTION_NAMES = {
  generate: true,
  timestampOf: true,
  count: true,
  from: true,
  eventsPerSecond: true,
  splits: true,
  splitAssignment: true,
} as const satisfies Record<keyof GeneratorSourceOptions<unknown>, true>;

/**
 * A deterministic, replayable source: record i is generate(i). The index space is dealt
 * round-robin to splits, so parallel subtasks advance through event time together.
 */
export class GeneratorSource<T> implements Source<T, GeneratorSplit> {
  readonly splitKind = 'generator';
  readonly boundedness: 'bounded' | 'unbounded';
  readonly splitAssignment: 'static' | 'on-request';
  private readonly count: number;
  private readonly from: number;

  constructor(private readonly o: GeneratorSourceOptions<T>) {
    if (o === null || typeof o !== 'object') throw new TypeError(`generator source: the options must be an object ({ generate, count, ... }), got ${previewValue(o, 80)}`);
    checkKnownOptions('generator source', o, GENERATOR_OPTION_NAMES);
    if (typeof o.generate !== 'function') throw new TypeError(`generator source: generate must be a function (index) => record, got ${previewValue(o.generate, 80)}`);
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
    const assignment = o.splitAssignment ?? 'static';
    if (assignment !== 'static' && assignment !== 'on-request') throw new RangeError(`generator splitAssignment must be 'static' or 'on-request', got ${String(o.splitAssignment)}`);
    if (assignment === 'on-request' && this.boundedness === 'unbounded') {
      throw new RangeError("generator splitAssignment 'on-request' hands out ranges of a bounded index space: set `count`, or use 'static' for an unbounded generator");
    }
    this.splitAssignment = assignment;
  }

  createSplits(parallelism: number): GeneratorSplit[] {
    if (this.splitAssignment === 'on-request') return this.rangeSplits(parallelism);
    const n = this.o.splits ?? parallelism;
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`generator splits must be an integer >= 1, got ${n}`);
    const end = this.from + this.count;
    return Array.from({ length: n }, (_, i) => ({ id: i, stride: n, end, next: this.from + i }));
  }

  /** Contiguous ranges (stride 1) of the index space, in order. */
  private rangeSplits(parallelism: number): GeneratorSplit[] {
    const n = this.o.splits ?? Math.max(1, Math.min(parallelism * 64, Math.ceil(this.count / 1024)));
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`generator splits must be an integer >= 1, got ${n}`);
    const splits: GeneratorSplit[] = [];
    for (let i = 0; i < n; i++) {
      const start = this.from + Math.floor((this.count * i) / n);
      const end = this.from + Math.floor((this.count * (i + 1)) / n);
      if (end > start) splits.push({ id: i, stride: 1, end, next: start });
    }
    return splits;
  }

  createReader(ctx: SourceReaderContext): SourceReader<T, GeneratorSplit> {
    return this.splitAssignment === 'on-request' ? new RangeReader(this.o, ctx) : new GeneratorReader(this.o, ctx);
  }
}

/**
 * The reader of an on-request generator: it holds the ranges it was given (restored ones may
 * be several, and strided splits of a static run before), emits them in index order, and asks
 * for the next range when it holds none, or one it has read half of, so the answer is there
 * before the range runs out. Not sooner: a reader that asked as soon as it held one took the
 * second of two ranges before the other reader's first request arrived, and read them both
 * while the other subtask idled.
 */
class RangeReader<T> implements SourceReader<T, GeneratorSplit> {
  /** Unfinished ranges, in index order. */
  private splits: GeneratorSplit[] = [];
  private requested = false;
  private noMore = false;
  /** The index from which the reader asks for its next range while it holds one (halfway through it). */
  private requestAt = 0;
  private readonly generate: (index: number) => T;
  private readonly timestampOf: ((index: number) => number) | undefined;
  private readonly ratePerMs: number;
  private rateStartMs = -1;
  private emitted = 0;
  private wakeUp: (() => void) | undefined;

  constructor(
    o: GeneratorSourceOptions<T>,
    private readonly ctx: SourceReaderContext,
  ) {
    this.generate = o.generate;
    this.timestampOf = o.timestampOf;
    this.ratePerMs = o.eventsPerSecond === undefined ? 0 : o.eventsPerSecond / 1000 / ctx.parallelism;
  }

  addSplits(splits: readonly GeneratorSplit[]): void {
    for (const s of splits) if (s.next < s.end) this.splits.push({ ...s });
    this.splits.sort((a, b) => a.next - b.next);
    this.requested = false;
    this.planRequest();
    this.signal();
  }

  /** Sets where the next request is due when the reader is down to its last range. */
  private planRequest(): void {
    const last = this.splits.length === 1 ? this.splits[0]! : undefined;
    if (last !== undefined) this.requestAt = last.next + Math.floor((last.end - last.next) / 2);
  }

  noMoreSplits(): void {
    this.noMore = true;
    this.requested = false;
    this.signal();
  }

  private signal(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  pollNext(output: ReaderOutput<T>): InputStatus {
    const splits = this.splits;
    if (!this.requested && !this.noMore && (splits.length === 0 || (splits.length === 1 && splits[0]!.next >= this.requestAt))) {
      this.requested = true;
      this.ctx.sendSplitRequest();
    }
    const split = splits[0];
    if (split === undefined) return this.noMore ? 'end' : 'nothing';
    if (this.ratePerMs > 0) {
      const now = this.ctx.nowMs();
      if (this.rateStartMs < 0) this.rateStartMs = now;
      if (this.emitted >= (now - this.rateStartMs) * this.ratePerMs) return 'nothing';
      this.emitted++;
    }
    const i = split.next;
    // Stride 1 for its own ranges; a strided split restored from a static run keeps its stride.
    const next = i + split.stride;
    split.next = next;
    if (next >= split.end) {
      splits.shift();
      this.planRequest();
    }
    if (this.timestampOf === undefined) output.collect(this.generate(i));
    else output.collect(this.generate(i), this.timestampOf(i));
    return 'more';
  }

  isAvailable(): Promise<void> {
    if (this.ratePerMs > 0 && this.splits.length > 0) {
      return new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(50, 1 / this.ratePerMs))));
    }
    if (this.splits.length > 0 || this.noMore) return Promise.resolve();
    return new Promise((resolve) => (this.wakeUp = resolve));
  }

  snapshotState(): GeneratorSplit[] {
    return this.splits.map((s) => ({ ...s }));
  }
}

class GeneratorReader<T> implements SourceReader<T, GeneratorSplit> {
  private readonly splits: GeneratorSplit[] = [];
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
      // A strided split is 1/stride of the records. Ranges (from an on-request run restored
      // into a static source) are not: such a reader takes its subtask's share of the rate.
      const ranges = this.splits.length > 1 && this.splits.some((s) => s.stride === 1);
      this.ratePerMs = ranges ? this.o.eventsPerSecond / 1000 / this.ctx.parallelism : ((this.o.eventsPerSecond / 1000) * this.splits.length) / this.numSplitsTotal;
      this.rateStartMs = this.ctx.nowMs();
      this.emittedSinceStart = 0;
    }
  }

  noMoreSplits(): void {
    this.noMore = true;
  }

  pollNext(output: ReaderOutput<T>): InputStatus {
    const splits = this.splits;
    // The split with the lowest next index, of those with records left: records come in the
    // order of their index, as one reader of every record would read them. Splits restored
    // from several subtasks (a rescale) stand at different positions, seconds apart in event
    // time; taken in turn, event time would jump back and forth and a watermark from the
    // split ahead would make the other's records late.
    let split: GeneratorSplit | undefined;
    if (splits.length === 1) {
      const s = splits[0]!;
      if (s.next < s.end) split = s;
    } else {
      for (const s of splits) if (s.next < s.end && (split === undefined || s.next < split.next)) split = s;
    }
    if (split === undefined) return this.noMore ? 'end' : 'nothing';
    if (this.ratePerMs > 0) {
      const allowed = (this.ctx.nowMs() - this.rateStartMs) * this.ratePerMs;
      if (this.emittedSinceStart >= allowed) return 'nothing';
      this.emittedSinceStart++;
    }
    const i = split.next;
    split.next = i + split.stride;
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
