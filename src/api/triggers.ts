import { reducingState, type KeyedStateDescriptor, type ReducingState, type StateOf } from './state-descriptors.js';
import { maxTimestamp, type TimeWindow } from './windows.js';

/** What a trigger decides for a window (Flink's TriggerResult). */
export type TriggerResult = 'CONTINUE' | 'FIRE' | 'PURGE' | 'FIRE_AND_PURGE';

/** What a trigger sees of the current key and window (Flink's Trigger.TriggerContext). */
export interface TriggerContext {
  getCurrentWatermark(): number;
  getCurrentProcessingTime(): number;
  /** Timers of this key and window: `onEventTime` / `onProcessingTime` is called at that time. */
  registerEventTimeTimer(timeMs: number): void;
  registerProcessingTimeTimer(timeMs: number): void;
  deleteEventTimeTimer(timeMs: number): void;
  deleteProcessingTimeTimer(timeMs: number): void;
  /** State of the trigger for this key and window, in checkpoints; `clear` should clear it. */
  getPartitionedState<D extends KeyedStateDescriptor>(descriptor: D): StateOf<D>;
}

/** The context of `onMerge` (Flink's OnMergeContext): the trigger state of the merged windows can be combined into the new one's. */
export interface OnMergeContext extends TriggerContext {
  /** Combines this state of the merged windows into the new window's (reducing, aggregating or list state). */
  mergePartitionedState(descriptor: KeyedStateDescriptor): void;
}

/**
 * Decides when a window fires and when its contents are purged (Flink's Trigger). Called for
 * every record added to a window and for the timers it registered; `clear` runs when the
 * window's time is over (its end plus the allowed lateness) and must remove the trigger's
 * timers and state of that window. A window's result carries the window's last timestamp,
 * whenever it fires; a firing with no contents emits nothing.
 */
export interface Trigger<in T> {
  onElement(element: T, timestampMs: number, window: TimeWindow, ctx: TriggerContext): TriggerResult;
  onEventTime(timeMs: number, window: TimeWindow, ctx: TriggerContext): TriggerResult;
  onProcessingTime(timeMs: number, window: TimeWindow, ctx: TriggerContext): TriggerResult;
  clear(window: TimeWindow, ctx: TriggerContext): void;
  /**
   * Session windows merge: `onMerge(merged, ctx)` runs for the window that replaces them (merge
   * their state with `ctx.mergePartitionedState` and register the new window's timers); then
   * `clear` runs for each window merged away. A trigger without it cannot be used on session windows.
   */
  onMerge?(window: TimeWindow, ctx: OnMergeContext): void;
  /** Shown in errors and the job graph. */
  readonly name?: string;
}

/** Fires once the watermark passes the window's end (the default of event-time windows). */
export const EventTimeTrigger = {
  create(): Trigger<unknown> {
    return {
      name: 'EventTimeTrigger',
      onElement(_e, _ts, window, ctx) {
        // A window already behind the watermark (allowed lateness) fires at once with the late record.
        if (maxTimestamp(window) <= ctx.getCurrentWatermark()) return 'FIRE';
        ctx.registerEventTimeTimer(maxTimestamp(window));
        return 'CONTINUE';
      },
      onEventTime: (time, window) => (time === maxTimestamp(window) ? 'FIRE' : 'CONTINUE'),
      onProcessingTime: () => 'CONTINUE',
      clear: (window, ctx) => ctx.deleteEventTimeTimer(maxTimestamp(window)),
      onMerge(window, ctx) {
        if (maxTimestamp(window) > ctx.getCurrentWatermark()) ctx.registerEventTimeTimer(maxTimestamp(window));
      },
    };
  },
};

/** Never fires: the default of GlobalWindows, which fire only by a trigger of the job's (as Flink's GlobalWindows.NeverTrigger). */
export const NeverTrigger: Trigger<unknown> = {
  name: 'NeverTrigger',
  onElement: () => 'CONTINUE',
  onEventTime: () => 'CONTINUE',
  onProcessingTime: () => 'CONTINUE',
  clear: () => {},
  onMerge: () => {},
};

/** Fires when the clock passes the window's end (the default of processing-time windows). */
export const ProcessingTimeTrigger = {
  create(): Trigger<unknown> {
    return {
      name: 'ProcessingTimeTrigger',
      onElement(_e, _ts, window, ctx) {
        ctx.registerProcessingTimeTimer(maxTimestamp(window));
        return 'CONTINUE';
      },
      onEventTime: () => 'CONTINUE',
      onProcessingTime: () => 'FIRE',
      clear: (window, ctx) => ctx.deleteProcessingTimeTimer(maxTimestamp(window)),
      onMerge(window, ctx) {
        if (maxTimestamp(window) > ctx.getCurrentProcessingTime()) ctx.registerProcessingTimeTimer(maxTimestamp(window));
      },
    };
  },
};

/** `v` when it is a whole number above 0; a RangeError naming `what` otherwise. */
export function positiveWhole(what: string, v: number): number {
  if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`${what} must be a positive whole number, got ${v}`);
  return v;
}

const sum = (a: number, b: number): number => a + b;
const min = (a: number, b: number): number => Math.min(a, b);

/** Fires each time the window has `maxCount` more records (Flink's CountTrigger; nothing is purged). */
export const CountTrigger = {
  of(maxCount: number): Trigger<unknown> {
    positiveWhole('CountTrigger.of: the count', maxCount);
    const count = reducingState<number>('count', sum);
    return {
      name: `CountTrigger(${maxCount})`,
      onElement(_e, _ts, _window, ctx) {
        const c = ctx.getPartitionedState(count);
        c.add(1);
        if (c.get()! < maxCount) return 'CONTINUE';
        c.clear();
        return 'FIRE';
      },
      onEventTime: () => 'CONTINUE',
      onProcessingTime: () => 'CONTINUE',
      clear: (_window, ctx) => ctx.getPartitionedState(count).clear(),
      onMerge: (_window, ctx) => ctx.mergePartitionedState(count),
    };
  },
};

/** Purges the window's contents whenever the given trigger fires it (Flink's PurgingTrigger). */
export const PurgingTrigger = {
  of<T>(trigger: Trigger<T>): Trigger<T> {
    const purging = (r: TriggerResult): TriggerResult => (r === 'FIRE' ? 'FIRE_AND_PURGE' : r);
    return {
      name: `PurgingTrigger(${trigger.name ?? 'trigger'})`,
      onElement: (e, ts, window, ctx) => purging(trigger.onElement(e, ts, window, ctx)),
      onEventTime: (time, window, ctx) => purging(trigger.onEventTime(time, window, ctx)),
      onProcessingTime: (time, window, ctx) => purging(trigger.onProcessingTime(time, window, ctx)),
      clear: (window, ctx) => trigger.clear(window, ctx),
      ...(trigger.onMerge === undefined ? {} : { onMerge: (window: TimeWindow, ctx: OnMergeContext) => trigger.onMerge!(window, ctx) }),
    };
  },
};

/**
 * Registers the next periodic firing at `timeMs`, or at the window's end when that comes
 * first, unless one is registered (state holds the earliest pending firing).
 */
function nextFiring(state: ReducingState<number>, timeMs: number, window: TimeWindow, register: (t: number) => void): void {
  const next = Math.min(timeMs, maxTimestamp(window));
  state.add(next);
  register(next);
}

/**
 * Fires every `intervalMs` of event time while the window is open, and at its end (Flink's
 * ContinuousEventTimeTrigger): early results of a long window.
 */
export const ContinuousEventTimeTrigger = {
  of(intervalMs: number): Trigger<unknown> {
    positiveWhole('ContinuousEventTimeTrigger.of: the interval (ms)', intervalMs);
    const fireAt = reducingState<number>('fire-time', min);
    return {
      name: `ContinuousEventTimeTrigger(${intervalMs})`,
      onElement(_e, timestampMs, window, ctx) {
        if (maxTimestamp(window) <= ctx.getCurrentWatermark()) return 'FIRE';
        ctx.registerEventTimeTimer(maxTimestamp(window));
        const state = ctx.getPartitionedState(fireAt);
        if (state.get() === undefined) {
          // Flink's `time - (time % interval)`: Java's % truncates toward zero, as JavaScript's,
          // so a negative timestamp aligns upwards (-15 to -10 at 10 ms), as in Flink.
          const start = timestampMs - (timestampMs % intervalMs);
          nextFiring(state, start + intervalMs, window, (t) => ctx.registerEventTimeTimer(t));
        }
        return 'CONTINUE';
      },
      onEventTime(time, window, ctx) {
        if (time === maxTimestamp(window)) return 'FIRE';
        const state = ctx.getPartitionedState(fireAt);
        if (state.get() !== time) return 'CONTINUE';
        state.clear();
        nextFiring(state, time + intervalMs, window, (t) => ctx.registerEventTimeTimer(t));
        return 'FIRE';
      },
      onProcessingTime: () => 'CONTINUE',
      clear(window, ctx) {
        const state = ctx.getPartitionedState(fireAt);
        const t = state.get();
        if (t !== undefined) ctx.deleteEventTimeTimer(t);
        state.clear();
        ctx.deleteEventTimeTimer(maxTimestamp(window));
      },
      onMerge(window, ctx) {
        ctx.mergePartitionedState(fireAt);
        const next = ctx.getPartitionedState(fireAt).get();
        if (next !== undefined) ctx.registerEventTimeTimer(next);
        if (maxTimestamp(window) > ctx.getCurrentWatermark()) ctx.registerEventTimeTimer(maxTimestamp(window));
      },
    };
  },
};

/** Fires every `intervalMs` of processing time while the window has records (Flink's ContinuousProcessingTimeTrigger). */
export const ContinuousProcessingTimeTrigger = {
  of(intervalMs: number): Trigger<unknown> {
    positiveWhole('ContinuousProcessingTimeTrigger.of: the interval (ms)', intervalMs);
    const fireAt = reducingState<number>('fire-time', min);
    return {
      name: `ContinuousProcessingTimeTrigger(${intervalMs})`,
      onElement(_e, _ts, window, ctx) {
        const state = ctx.getPartitionedState(fireAt);
        if (state.get() === undefined) {
          const now = ctx.getCurrentProcessingTime();
          nextFiring(state, now - (now % intervalMs) + intervalMs, window, (t) => ctx.registerProcessingTimeTimer(t));
        }
        return 'CONTINUE';
      },
      onEventTime: () => 'CONTINUE',
      onProcessingTime(time, window, ctx) {
        const state = ctx.getPartitionedState(fireAt);
        if (state.get() !== time) return 'CONTINUE';
        state.clear();
        nextFiring(state, time + intervalMs, window, (t) => ctx.registerProcessingTimeTimer(t));
        return 'FIRE';
      },
      clear(_window, ctx) {
        const state = ctx.getPartitionedState(fireAt);
        const t = state.get();
        if (t !== undefined) ctx.deleteProcessingTimeTimer(t);
        state.clear();
      },
      onMerge(_window, ctx) {
        ctx.mergePartitionedState(fireAt);
        const next = ctx.getPartitionedState(fireAt).get();
        if (next !== undefined) ctx.registerProcessingTimeTimer(next);
      },
    };
  },
};
