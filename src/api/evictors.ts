import { positiveWhole } from './triggers.js';
import type { TimeWindow } from './windows.js';

/** A window's record with its timestamp, as an evictor sees it (Flink's TimestampedValue). */
export interface TimestampedValue<T> {
  readonly value: T;
  /** The record's event timestamp; undefined when it has none. */
  readonly timestampMs: number | undefined;
}

export interface EvictorContext {
  getCurrentProcessingTime(): number;
  getCurrentWatermark(): number;
}

/**
 * Removes records from a window when it fires (Flink's Evictor): `evictBefore` before the
 * window function sees them, `evictAfter` after it. Each returns the records that stay, in
 * order; what it leaves out is gone from the window. A window with an evictor keeps every
 * record (no incremental reduce or aggregate): the window function runs over the records
 * that stay at each firing.
 */
export interface Evictor<T> {
  evictBefore?(elements: readonly TimestampedValue<T>[], window: TimeWindow, ctx: EvictorContext): readonly TimestampedValue<T>[];
  evictAfter?(elements: readonly TimestampedValue<T>[], window: TimeWindow, ctx: EvictorContext): readonly TimestampedValue<T>[];
  /** Shown in errors. */
  readonly name?: string;
}

/** Evicts before (or, with `doEvictAfter`, after) the window function, as Flink's evictors: the option picks the hook. */
function at<T>(name: string, doEvictAfter: boolean, keep: (elements: readonly TimestampedValue<T>[]) => readonly TimestampedValue<T>[]): Evictor<T> {
  return doEvictAfter ? { name, evictAfter: keep } : { name, evictBefore: keep };
}

/** Keeps the last `maxCount` records of the window (Flink's CountEvictor). */
export const CountEvictor = {
  of<T = unknown>(maxCount: number, doEvictAfter = false): Evictor<T> {
    positiveWhole('CountEvictor.of: the count', maxCount);
    return at<T>(`CountEvictor(${maxCount})`, doEvictAfter, (elements) => (elements.length <= maxCount ? elements : elements.slice(elements.length - maxCount)));
  },
};

/**
 * Keeps the records within `windowLengthMs` of the newest record's timestamp (Flink's
 * TimeEvictor): a record at or before `newest - windowLengthMs` goes. Records without
 * timestamps are all kept.
 */
export const TimeEvictor = {
  of<T = unknown>(windowLengthMs: number, doEvictAfter = false): Evictor<T> {
    positiveWhole('TimeEvictor.of: the window length (ms)', windowLengthMs);
    return at<T>(`TimeEvictor(${windowLengthMs})`, doEvictAfter, (elements) => {
      let newest = Number.NEGATIVE_INFINITY;
      for (const e of elements) {
        if (e.timestampMs === undefined) return elements;
        if (e.timestampMs > newest) newest = e.timestampMs;
      }
      const cutoff = newest - windowLengthMs;
      return elements.filter((e) => e.timestampMs! > cutoff);
    });
  },
};

/**
 * Evicts the records whose delta to the window's last record is at or above `threshold`
 * (Flink's DeltaEvictor), `delta(record, last)` being a distance of your choosing.
 */
export const DeltaEvictor = {
  of<T>(threshold: number, delta: (record: T, last: T) => number, doEvictAfter = false): Evictor<T> {
    if (typeof delta !== 'function') throw new TypeError('DeltaEvictor.of needs a delta function (record, last) => number');
    return at<T>(`DeltaEvictor(${threshold})`, doEvictAfter, (elements) => {
      const last = elements.at(-1);
      return last === undefined ? elements : elements.filter((e) => delta(e.value, last.value) < threshold);
    });
  },
};
