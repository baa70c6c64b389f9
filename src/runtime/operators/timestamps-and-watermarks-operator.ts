import type { WatermarkGenerator, WatermarkOutput, WatermarkStrategy } from '../../api/watermark-strategy.js';
import { MAX_WATERMARK, NO_TIMESTAMP } from '../channel/stream-element.js';
import { StreamOperator } from '../task/stream-operator.js';

/** What a timestamp assigner returned, checked: a whole number of epoch milliseconds. */
export function checkedTimestamp(operatorName: string, t: number): number {
  if (!Number.isSafeInteger(t)) {
    throw new Error(
      `operator '${operatorName}': the timestamp assigner returned ${t} (a whole number of epoch milliseconds is needed` +
        (Number.isFinite(t) ? ': round it, e.g. Math.floor(...))' : ')'),
    );
  }
  return t;
}

/**
 * Assigns event timestamps and generates watermarks: per event and every
 * `autoWatermarkIntervalMs` of processing time. Upstream watermarks are dropped except
 * the final one that closes event time.
 */
export class TimestampsAndWatermarksOperator<T> extends StreamOperator<T> implements WatermarkOutput {
  private generator!: WatermarkGenerator<T>;
  private emittedMs = Number.MIN_SAFE_INTEGER;
  private idle = false;

  constructor(
    private readonly strategy: WatermarkStrategy<T>,
    private readonly autoWatermarkIntervalMs: number,
  ) {
    super();
  }

  override open(): void {
    const pts = this.runtime.processingTime;
    this.generator = this.strategy.generator(() => pts.nowMs());
    if (this.autoWatermarkIntervalMs > 0) {
      pts.scheduleAtFixedRate(this.autoWatermarkIntervalMs, () => this.generator.onPeriodicEmit(this));
    }
  }

  processElement(value: unknown, timestampMs: number): void {
    const assigner = this.strategy.timestampAssigner;
    const t = assigner === undefined ? timestampMs : checkedTimestamp(this.runtime.name, assigner(value as T, timestampMs === NO_TIMESTAMP ? undefined : timestampMs));
    this.output.collect(value as T, t);
    this.generator.onEvent(value as T, t, this);
  }

  override processWatermark(watermarkMs: number): void {
    if (watermarkMs === MAX_WATERMARK) this.emitWatermark(MAX_WATERMARK);
  }

  override processWatermarkStatus(): void {
    // this operator decides idleness itself
  }

  override finish(): void {
    this.generator.onPeriodicEmit(this);
  }

  emitWatermark(watermarkMs: number): void {
    if (watermarkMs <= this.emittedMs) return;
    if (this.idle) this.markActive();
    this.emittedMs = watermarkMs;
    this.currentWatermark = watermarkMs;
    this.output.emitWatermark(watermarkMs);
  }

  markIdle(): void {
    if (this.idle) return;
    this.idle = true;
    this.output.emitWatermarkStatus(true);
  }

  markActive(): void {
    if (!this.idle) return;
    this.idle = false;
    this.output.emitWatermarkStatus(false);
  }
}
