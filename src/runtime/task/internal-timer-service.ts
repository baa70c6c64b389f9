import type { KeyType } from '../state/key-group.js';
import type { ProcessingTimeService } from './processing-time-service.js';
import { TimerQueue } from './timer-queue.js';
import { MAX_WATERMARK } from '../channel/stream-element.js';

export interface Triggerable {
  onEventTime(timestampMs: number, key: KeyType, namespace: number): void;
  onProcessingTime(timestampMs: number, key: KeyType, namespace: number): void;
}

/** Bounded slices for long firing (OperatorRuntime's `shouldYield` and `defer`). */
export interface FiringSlices {
  readonly shouldYield: () => boolean;
  readonly defer: (rest: () => boolean) => void;
}

/**
 * Keyed timers of one operator: event-time timers fire when the watermark passes them,
 * processing-time timers through one physical timer set to the earliest of them. With
 * `slices`, firing stops part-way when the slice is used up: `advanceWatermark` says so (the
 * operator resumes it), processing-time timers hand the rest to the subtask themselves.
 */
export class InternalTimerService {
  currentWatermarkMs = Number.MIN_SAFE_INTEGER;
  private physicalTimerAt = Number.POSITIVE_INFINITY;
  private cancelPhysical: (() => void) | undefined;

  constructor(
    private readonly processingTime: ProcessingTimeService,
    private readonly target: Triggerable,
    private readonly setCurrentKey: (key: KeyType) => void,
    readonly eventTimers: TimerQueue = new TimerQueue(),
    readonly processingTimers: TimerQueue = new TimerQueue(),
    private readonly slices?: FiringSlices,
  ) {
    // Restored processing-time timers need their physical timer.
    const next = processingTimers.peekTime();
    if (next !== undefined) this.schedulePhysical(next);
  }

  registerEventTimeTimer(timestampMs: number, key: KeyType, namespace: number): void {
    timestampMs = timerTime(timestampMs);
    this.eventTimers.add(timestampMs, key, namespace);
  }

  deleteEventTimeTimer(timestampMs: number, key: KeyType, namespace: number): void {
    this.eventTimers.delete(timerTime(timestampMs), key, namespace);
  }

  registerProcessingTimeTimer(timestampMs: number, key: KeyType, namespace: number): void {
    timestampMs = timerTime(timestampMs);
    if (this.processingTimers.add(timestampMs, key, namespace) && timestampMs < this.physicalTimerAt) {
      this.schedulePhysical(timestampMs);
    }
  }

  deleteProcessingTimeTimer(timestampMs: number, key: KeyType, namespace: number): void {
    this.processingTimers.delete(timerTime(timestampMs), key, namespace);
  }

  /**
   * Fires the event-time timers up to `watermarkMs`. With `slices`, firing may stop part-way
   * (false); calling again with the same watermark continues.
   */
  advanceWatermark(watermarkMs: number): boolean {
    this.currentWatermarkMs = watermarkMs;
    return this.eventTimers.fireUpTo(watermarkMs, this.fireEventTimer, this.slices?.shouldYield);
  }

  private readonly fireEventTimer = (t: number, key: KeyType, ns: number): void => {
    this.setCurrentKey(key);
    this.target.onEventTime(t, key, ns);
  };

  private schedulePhysical(timestampMs: number): void {
    this.cancelPhysical?.();
    this.physicalTimerAt = timestampMs;
    this.cancelPhysical = this.processingTime.registerTimer(timestampMs, (t) => this.onPhysicalTimer(t));
  }

  private onPhysicalTimer(timestampMs: number): void {
    this.physicalTimerAt = Number.POSITIVE_INFINITY;
    this.cancelPhysical = undefined;
    this.processingUpToMs = Math.max(timestampMs, this.processingTime.nowMs());
    if (!this.fireProcessingTimers()) this.slices!.defer(this.fireProcessingTimers);
  }

  /** The processing time whose due timers are firing. */
  private processingUpToMs = Number.NEGATIVE_INFINITY;

  /** Fires (a slice of) the due processing-time timers; true when all have fired and the next physical timer is set. */
  private readonly fireProcessingTimers = (): boolean => {
    if (!this.processingTimers.fireUpTo(this.processingUpToMs, this.fireProcessingTimer, this.slices?.shouldYield)) return false;
    const next = this.processingTimers.peekTime();
    if (next !== undefined) this.schedulePhysical(next);
    return true;
  };

  private readonly fireProcessingTimer = (t: number, key: KeyType, ns: number): void => {
    this.setCurrentKey(key);
    this.target.onProcessingTime(t, key, ns);
  };
}

/**
 * A timer's time as the queues keep it: a number (NaN, from `ctx.timestamp() + n` on a record
 * without a timestamp, never fired and blocked every later timer), and at most MAX_WATERMARK,
 * so a timer at Number.MAX_VALUE or Infinity (Flink's `Long.MAX_VALUE` idiom) fires at the end
 * of input.
 */
export function timerTime(timestampMs: number): number {
  if (typeof timestampMs !== 'number' || Number.isNaN(timestampMs)) {
    throw new TypeError(
      `a timer's timestamp must be a number of milliseconds, got ${String(timestampMs)} ` +
        '(ctx.timestamp() is undefined for a record without a timestamp: assign timestamps, or use processing time)',
    );
  }
  return Math.max(-MAX_WATERMARK, Math.min(MAX_WATERMARK, timestampMs));
}
