/** A window of time [start, end); its records have timestamps <= end - 1. */
export interface TimeWindow {
  readonly start: number;
  readonly end: number;
}

export function maxTimestamp(w: TimeWindow): number {
  return w.end - 1;
}

/** Flink's TimeWindow.getWindowStartWithOffset. */
export function windowStartWithOffset(timestampMs: number, offsetMs: number, sizeMs: number): number {
  const remainder = (timestampMs - offsetMs) % sizeMs;
  return remainder < 0 ? timestampMs - (remainder + sizeMs) : timestampMs - remainder;
}

export type TimeCharacteristic = 'event-time' | 'processing-time';

/** Tumbling and sliding windows: fixed size, assigned without merging. */
export interface SlidingWindowAssigner {
  readonly kind: 'sliding';
  readonly time: TimeCharacteristic;
  readonly sizeMs: number;
  readonly slideMs: number;
  readonly offsetMs: number;
}

/** Session windows: a window per burst of activity, closed by a gap; windows merge. */
export interface SessionWindowAssigner {
  readonly kind: 'session';
  readonly time: TimeCharacteristic;
  /** The gap; 0 with `gapOf`. */
  readonly gapMs: number;
  /** withDynamicGap: each record's own gap (Flink's SessionWindowTimeGapExtractor). */
  readonly gapOf?: (element: unknown) => number;
}

/** Flink's SessionWindowTimeGapExtractor: a record's session gap in ms. A function, or an object with `extract`. */
export type SessionWindowTimeGapExtractor<T> = ((element: T) => number) | { extract(element: T): number };

function dynamicSession<T>(time: TimeCharacteristic, extractor: SessionWindowTimeGapExtractor<T>): SessionWindowAssigner {
  const extract = typeof extractor === 'function' ? extractor : typeof extractor?.extract === 'function' ? (e: T) => extractor.extract(e) : undefined;
  if (extract === undefined) throw new TypeError(`withDynamicGap needs a function of the record that returns its gap in ms (or an object with extract(record)), got ${String(extractor)}`);
  return { kind: 'session', time, gapMs: 0, gapOf: extract as (element: unknown) => number };
}

/** A record's dynamic session gap, checked as Flink checks it (0 < gap). */
export function sessionGapOf(a: SessionWindowAssigner, element: unknown): number {
  if (a.gapOf === undefined) return a.gapMs;
  const gap = a.gapOf(element);
  if (!Number.isSafeInteger(gap) || gap <= 0) {
    throw new RangeError(`withDynamicGap: the gap extractor returned ${String(gap)}; a session gap must be a positive whole number of milliseconds`);
  }
  return gap;
}

/**
 * Flink's GlobalWindows: one window per key holding all its records, which never ends. It
 * fires only when a trigger says so (`.trigger(CountTrigger.of(100))`; without one it never
 * does, as in Flink); results carry the window's last timestamp (Number.MAX_SAFE_INTEGER - 1).
 * Not an event-time window: nothing is late.
 */
export interface GlobalWindowAssigner {
  readonly kind: 'global';
  readonly time: 'processing-time';
}

/** The assigners of windows that end: the window operator's. */
export type TimeWindowAssigner = SlidingWindowAssigner | SessionWindowAssigner;

export type WindowAssigner = TimeWindowAssigner | GlobalWindowAssigner;

function positive(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`${name} must be a positive whole number of milliseconds, got ${v}`);
  return v;
}

function sliding(time: TimeCharacteristic, sizeMs: number, slideMs: number, offsetMs: number): SlidingWindowAssigner {
  positive('window size', sizeMs);
  positive('window slide', slideMs);
  if (!Number.isSafeInteger(offsetMs)) throw new RangeError(`window offset must be a whole number of milliseconds, got ${offsetMs}`);
  if (Math.abs(offsetMs) >= slideMs) throw new RangeError(`window offset must be smaller than the slide (${slideMs} ms), got ${offsetMs}`);
  return { kind: 'sliding', time, sizeMs, slideMs, offsetMs };
}

export const TumblingEventTimeWindows = {
  of: (sizeMs: number, offsetMs = 0): SlidingWindowAssigner => sliding('event-time', sizeMs, sizeMs, offsetMs),
};
export const TumblingProcessingTimeWindows = {
  of: (sizeMs: number, offsetMs = 0): SlidingWindowAssigner => sliding('processing-time', sizeMs, sizeMs, offsetMs),
};
export const SlidingEventTimeWindows = {
  of: (sizeMs: number, slideMs: number, offsetMs = 0): SlidingWindowAssigner => sliding('event-time', sizeMs, slideMs, offsetMs),
};
export const SlidingProcessingTimeWindows = {
  of: (sizeMs: number, slideMs: number, offsetMs = 0): SlidingWindowAssigner => sliding('processing-time', sizeMs, slideMs, offsetMs),
};
export const EventTimeSessionWindows = {
  withGap: (gapMs: number): SessionWindowAssigner => ({ kind: 'session', time: 'event-time', gapMs: positive('session gap', gapMs) }),
  /** Each record brings its own gap (Flink's DynamicEventTimeSessionWindows). */
  withDynamicGap: <T>(extractor: SessionWindowTimeGapExtractor<T>): SessionWindowAssigner => dynamicSession('event-time', extractor),
};
export const ProcessingTimeSessionWindows = {
  withGap: (gapMs: number): SessionWindowAssigner => ({ kind: 'session', time: 'processing-time', gapMs: positive('session gap', gapMs) }),
  /** Each record brings its own gap (Flink's DynamicProcessingTimeSessionWindows). */
  withDynamicGap: <T>(extractor: SessionWindowTimeGapExtractor<T>): SessionWindowAssigner => dynamicSession('processing-time', extractor),
};
export const GlobalWindows = {
  create: (): GlobalWindowAssigner => ({ kind: 'global', time: 'processing-time' }),
};
