import type { ReaderOutput, SourceOutput } from '../../api/source.js';
import type { WatermarkGenerator, WatermarkOutput, WatermarkStrategy } from '../../api/watermark-strategy.js';
import { MAX_WATERMARK, MIN_WATERMARK, NO_TIMESTAMP } from '../channel/stream-element.js';
import { checkedTimestamp } from '../operators/timestamps-and-watermarks-operator.js';
import type { OperatorOutput } from './output.js';

/**
 * A timestamp a reader gave with a record: whole epoch milliseconds. Anything else (NaN, a
 * string, a Date) would reach the windows as a record no window takes, dropped without a word.
 */
function readerTimestamp(source: string, t: number): number {
  if (Number.isSafeInteger(t)) return t;
  const shown = typeof t === 'number' ? String(t) : `${typeof t} ${JSON.stringify(t) ?? String(t)}`;
  throw new Error(
    `source '${source}': the reader emitted a record with the timestamp ${shown}; ReaderOutput.collect(record, timestampMs) takes a whole number of epoch milliseconds ` +
      '(e.g. Date.parse(text) or date.getTime()), or no timestamp',
  );
}

/** `env.fromSource(source, strategy, name)`: how the source subtask makes its watermarks. */
export interface SourceWatermarksSpec {
  readonly strategy: WatermarkStrategy<unknown>;
  /** `pipeline.auto-watermark-interval`, read when the job runs. */
  readonly autoWatermarkIntervalMs: () => number;
  /** `pipeline.watermark-alignment.allow-unaligned-source-splits`, read when the job runs. */
  readonly allowUnalignedSourceSplits: () => boolean;
}

/** What a source subtask emits through: records counted; the final watermark at the end of its data. */
export interface SourceTaskOutput extends ReaderOutput<unknown> {
  readonly count: number;
  endOfInput(): void;
}

/** The output of a source without a watermark strategy: records as the reader emits them, split outputs are this one. */
export class PlainSourceOutput implements SourceTaskOutput {
  count = 0;
  constructor(
    private readonly head: OperatorOutput<unknown>,
    /** The source's name, for errors about timestamps. */
    private readonly name: string,
  ) {}
  collect(value: unknown, timestampMs?: number): void {
    const t = timestampMs === undefined ? NO_TIMESTAMP : readerTimestamp(this.name, timestampMs);
    this.count++;
    this.head.collect(value, t);
  }
  createOutputForSplit(): SourceOutput<unknown> {
    return this;
  }
  releaseOutputForSplit(): void {}
  endOfInput(): void {
    this.head.emitWatermark(MAX_WATERMARK);
  }
}

/**
 * Timestamps and watermarks made in a source subtask (Flink's ProgressiveTimestampsAndWatermarks
 * with its WatermarkOutputMultiplexer). Each split the reader emits through an output of its
 * own (`createOutputForSplit`, e.g. a Kafka partition) has a watermark generator of its own,
 * and the subtask's watermark is the least of its splits' that are not idle: a partition that
 * lags behind the others holds the watermark back, instead of its records arriving behind a
 * watermark the others pushed ahead. Records emitted through the main output count as one
 * more split, from the first of them on. When every split is idle, so is the subtask. The
 * watermark never goes back: a split that starts behind what was emitted (one added later)
 * does not lower it.
 */
export class SourceWatermarks implements SourceTaskOutput {
  count = 0;
  private readonly outputs: SplitWatermarks[] = [];
  private readonly bySplit = new Map<string, SplitWatermarks>();
  private main: SplitWatermarks | undefined;
  private emittedMs = MIN_WATERMARK;
  private idle = false;
  /** During a periodic emit the combined watermark is updated once, after every split's. */
  private deferUpdates = false;
  /** Since when the subtask has had no split (a Kafka subtask without partitions): idle after the strategy's idleness timeout. */
  private emptySinceMs: number;

  constructor(
    readonly head: OperatorOutput<unknown>,
    readonly strategy: WatermarkStrategy<unknown>,
    readonly nowMs: () => number,
    /** The source's name, for errors about timestamps. */
    readonly name: string,
  ) {
    this.emptySinceMs = nowMs();
  }

  collect(value: unknown, timestampMs?: number): void {
    (this.main ??= this.register()).collect(value, timestampMs);
  }

  createOutputForSplit(splitId: string): SourceOutput<unknown> {
    let o = this.bySplit.get(splitId);
    if (o === undefined) {
      o = this.register();
      this.bySplit.set(splitId, o);
    }
    return o;
  }

  releaseOutputForSplit(splitId: string): void {
    const o = this.bySplit.get(splitId);
    if (o === undefined) return;
    this.bySplit.delete(splitId);
    this.outputs.splice(this.outputs.indexOf(o), 1);
    if (this.outputs.length === 0) this.emptySinceMs = this.nowMs();
    this.update();
  }

  /** Every `pipeline.auto-watermark-interval`: each split's generator, then the subtask's watermark. */
  onPeriodicEmit(): void {
    this.deferUpdates = true;
    try {
      for (const o of this.outputs) o.generator.onPeriodicEmit(o);
    } finally {
      this.deferUpdates = false;
    }
    // A subtask with nothing to read (more subtasks than Kafka partitions) holds the watermark
    // back until the strategy's idleness timeout says it is idle, as in Flink.
    const timeout = this.strategy.idleTimeoutMs;
    if (this.outputs.length === 0 && timeout !== undefined && !this.idle && this.emittedMs !== MAX_WATERMARK && this.nowMs() - this.emptySinceMs >= timeout) {
      this.idle = true;
      this.head.emitWatermarkStatus(true);
    }
    this.update();
  }

  endOfInput(): void {
    this.emittedMs = MAX_WATERMARK;
    if (this.idle) {
      this.idle = false;
      this.head.emitWatermarkStatus(false);
    }
    this.head.emitWatermark(MAX_WATERMARK);
  }

  /** A split's watermark or idleness changed. */
  splitChanged(): void {
    if (!this.deferUpdates) this.update();
  }

  /** The splits (ids given to `createOutputForSplit`) whose watermark is beyond `maxMs`. */
  /** Splits with an output of their own (created and not released). */
  get numSplits(): number {
    return this.bySplit.size;
  }

  splitsAhead(maxMs: number): string[] {
    const ahead: string[] = [];
    for (const [id, o] of this.bySplit) if (o.watermarkMs > maxMs) ahead.push(id);
    return ahead;
  }

  /** Every split of the subtask is idle (and so is its output). */
  get isIdle(): boolean {
    return this.idle;
  }

  /** The watermark the subtask emitted last (MIN_WATERMARK before the first). */
  get currentWatermarkMs(): number {
    return this.emittedMs;
  }

  private register(): SplitWatermarks {
    const o = new SplitWatermarks(this, this.strategy.generator(this.nowMs));
    this.outputs.push(o);
    return o;
  }

  private update(): void {
    if (this.emittedMs === MAX_WATERMARK) return;
    let min = Number.POSITIVE_INFINITY;
    let active = false;
    for (const o of this.outputs) {
      if (o.idle) continue;
      active = true;
      if (o.watermarkMs < min) min = o.watermarkMs;
    }
    if (!active) {
      if (this.outputs.length > 0 && !this.idle) {
        this.idle = true;
        this.head.emitWatermarkStatus(true);
      }
      return;
    }
    if (this.idle) {
      this.idle = false;
      this.head.emitWatermarkStatus(false);
    }
    if (min > this.emittedMs) {
      this.emittedMs = min;
      this.head.emitWatermark(min);
    }
  }
}

/** One split's output: assigns timestamps, feeds the split's generator, keeps its watermark. */
class SplitWatermarks implements SourceOutput<unknown>, WatermarkOutput {
  watermarkMs = MIN_WATERMARK;
  idle = false;

  constructor(
    private readonly parent: SourceWatermarks,
    readonly generator: WatermarkGenerator<unknown>,
  ) {}

  collect(value: unknown, timestampMs?: number): void {
    const p = this.parent;
    const assigner = p.strategy.timestampAssigner;
    const t =
      assigner === undefined ? (timestampMs === undefined ? NO_TIMESTAMP : readerTimestamp(p.name, timestampMs)) : checkedTimestamp(p.name, assigner(value, timestampMs));
    p.count++;
    p.head.collect(value, t);
    this.generator.onEvent(value, t, this);
  }

  emitWatermark(watermarkMs: number): void {
    const advanced = watermarkMs > this.watermarkMs;
    if (advanced) this.watermarkMs = watermarkMs;
    if (this.idle) this.idle = false;
    else if (!advanced) return;
    this.parent.splitChanged();
  }

  markIdle(): void {
    if (this.idle) return;
    this.idle = true;
    this.parent.splitChanged();
  }

  markActive(): void {
    if (!this.idle) return;
    this.idle = false;
    this.parent.splitChanged();
  }
}
