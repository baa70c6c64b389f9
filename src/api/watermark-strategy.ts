import { MIN_WATERMARK } from '../runtime/channel/stream-element.js';

export interface WatermarkOutput {
  emitWatermark(watermarkMs: number): void;
  /** No events for a while: downstream tasks stop waiting for this input's watermark. */
  markIdle(): void;
  markActive(): void;
}

/** Flink's WatermarkGenerator: called per event and periodically (pipeline.auto-watermark-interval). */
export interface WatermarkGenerator<T> {
  onEvent(event: T, timestampMs: number, output: WatermarkOutput): void;
  onPeriodicEmit(output: WatermarkOutput): void;
}

export type TimestampAssigner<T> = (event: T, recordTimestampMs: number | undefined) => number;

/** Watermarks trail the largest timestamp seen by the allowed out-of-orderness. */
export class BoundedOutOfOrdernessWatermarks<T> implements WatermarkGenerator<T> {
  private maxTimestampMs: number;
  constructor(private readonly outOfOrdernessMs: number) {
    if (!(outOfOrdernessMs >= 0)) throw new RangeError(`out-of-orderness must be >= 0 ms, got ${outOfOrdernessMs}`);
    this.maxTimestampMs = MIN_WATERMARK + outOfOrdernessMs + 1;
  }
  onEvent(_event: T, timestampMs: number): void {
    if (timestampMs > this.maxTimestampMs) this.maxTimestampMs = timestampMs;
  }
  onPeriodicEmit(output: WatermarkOutput): void {
    output.emitWatermark(this.maxTimestampMs - this.outOfOrdernessMs - 1);
  }
}

/** Marks the input idle when no event arrived for `idleTimeoutMs` of processing time. */
export class WatermarksWithIdleness<T> implements WatermarkGenerator<T> {
  private lastEventAtMs: number;
  private idle = false;
  constructor(
    private readonly inner: WatermarkGenerator<T>,
    private readonly idleTimeoutMs: number,
    private readonly nowMs: () => number,
  ) {
    if (!(idleTimeoutMs > 0)) throw new RangeError(`idle timeout must be > 0 ms, got ${idleTimeoutMs}`);
    this.lastEventAtMs = nowMs();
  }
  onEvent(event: T, timestampMs: number, output: WatermarkOutput): void {
    this.lastEventAtMs = this.nowMs();
    if (this.idle) {
      this.idle = false;
      output.markActive();
    }
    this.inner.onEvent(event, timestampMs, output);
  }
  onPeriodicEmit(output: WatermarkOutput): void {
    if (this.nowMs() - this.lastEventAtMs >= this.idleTimeoutMs) {
      if (!this.idle) {
        this.idle = true;
        output.markIdle();
      }
      return;
    }
    this.inner.onPeriodicEmit(output);
  }
}

/** `withWatermarkAlignment`: sources of one group keep their watermarks within a drift of each other. */
export interface WatermarkAlignment {
  readonly group: string;
  readonly maxAllowedDriftMs: number;
  readonly updateIntervalMs: number;
}

/** How a stream gets event timestamps and watermarks (Flink's WatermarkStrategy). */
export class WatermarkStrategy<T> {
  private constructor(
    readonly createGenerator: (nowMs: () => number) => WatermarkGenerator<T>,
    readonly timestampAssigner: TimestampAssigner<T> | undefined,
    readonly idleTimeoutMs: number | undefined,
    readonly alignment: WatermarkAlignment | undefined = undefined,
  ) {}

  static forBoundedOutOfOrderness<T>(maxOutOfOrdernessMs: number): WatermarkStrategy<T> {
    new BoundedOutOfOrdernessWatermarks(maxOutOfOrdernessMs); // validates
    return new WatermarkStrategy<T>(() => new BoundedOutOfOrdernessWatermarks<T>(maxOutOfOrdernessMs), undefined, undefined);
  }

  static forMonotonousTimestamps<T>(): WatermarkStrategy<T> {
    return WatermarkStrategy.forBoundedOutOfOrderness<T>(0);
  }

  static forGenerator<T>(factory: () => WatermarkGenerator<T>): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(factory, undefined, undefined);
  }

  static noWatermarks<T>(): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(() => ({ onEvent() {}, onPeriodicEmit() {} }), undefined, undefined);
  }

  withTimestampAssigner(assigner: TimestampAssigner<T>): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(this.createGenerator, assigner, this.idleTimeoutMs, this.alignment);
  }

  withIdleness(idleTimeoutMs: number): WatermarkStrategy<T> {
    if (!(idleTimeoutMs > 0)) throw new RangeError(`idle timeout must be > 0 ms, got ${idleTimeoutMs}`);
    return new WatermarkStrategy<T>(this.createGenerator, this.timestampAssigner, idleTimeoutMs, this.alignment);
  }

  /**
   * Watermark alignment (Flink's `withWatermarkAlignment`, FLIP-182), for a strategy given to
   * `env.fromSource`: every `updateIntervalMs` each source subtask of the `group` (of any
   * source) reports its watermark to the JobManager, which answers with the least watermark of
   * the group plus `maxAllowedDriftMs`; a subtask whose watermark is beyond that stops reading
   * until the others caught up. So a source or subtask far ahead in event time (one reading a
   * live topic next to one working through a backlog) does not fill windows and joins with
   * records that wait for the slow one. A subtask that is idle, or whose data ended, does not
   * hold the group back; one that has emitted no watermark yet does.
   */
  withWatermarkAlignment(group: string, maxAllowedDriftMs: number, updateIntervalMs = 1000): WatermarkStrategy<T> {
    if (typeof group !== 'string' || group === '') throw new TypeError('withWatermarkAlignment: the group must be a non-empty name (sources of one group align with each other)');
    if (!Number.isSafeInteger(maxAllowedDriftMs) || maxAllowedDriftMs < 0) throw new RangeError(`withWatermarkAlignment: the maximal drift must be a whole number of ms >= 0, got ${maxAllowedDriftMs}`);
    if (!Number.isSafeInteger(updateIntervalMs) || updateIntervalMs <= 0) throw new RangeError(`withWatermarkAlignment: the update interval must be a whole number of ms > 0, got ${updateIntervalMs}`);
    return new WatermarkStrategy<T>(this.createGenerator, this.timestampAssigner, this.idleTimeoutMs, { group, maxAllowedDriftMs, updateIntervalMs });
  }

  /** The generator for one subtask, wrapped for idleness when configured. */
  generator(nowMs: () => number): WatermarkGenerator<T> {
    const inner = this.createGenerator(nowMs);
    return this.idleTimeoutMs === undefined ? inner : new WatermarksWithIdleness(inner, this.idleTimeoutMs, nowMs);
  }
}
