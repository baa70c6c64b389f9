import type { OutputTag } from '../../api/output-tag.js';
import { timerTime } from '../task/internal-timer-service.js';
import {
  aggregatingState,
  listState,
  reducingState,
  valueState,
  type AggregatingState,
  type ListState,
  type KeyedStateDescriptor,
  type ReducingState,
  type ValueState,
} from '../../api/state-descriptors.js';
import type { KeyedStateStore } from '../../api/functions.js';
import type { WindowContext, WindowFunctionSpec } from '../../api/window-functions.js';
import { sessionGapOf, windowStartWithOffset, type TimeWindow, type TimeWindowAssigner } from '../../api/windows.js';
import type { KeyType } from '../state/key-group.js';
import type { InternalState } from '../state/keyed-state-backend.js';
import type { AddingInternalState } from '../state/state-handles.js';
import { globalStateStore, keyedRuntimeContext, SESSION_WINDOW_STATE, windowStateStore } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { TimestampedCollector } from './timestamped-collector.js';
import { slicingPlan, type SlicingPlan } from './window-slicing.js';
// What a window with a trigger or evictor keeps: refused here when it holds windows.
import { evictingContentsName, SESSIONS as TRIGGER_SESSIONS } from './trigger-window-operator.js';

/**
 * Keyed state of window contents: one entry per (key, window start). Session windows keep
 * theirs under this name; tumbling and sliding windows under `contentsName(size)`, since the
 * namespace holds only the start: a job restored with another window size keeps the restored
 * windows apart, under their own size, and fires them at their own end (as Flink, whose
 * namespace is the window). State of a savepoint taken before sizes were in the name is
 * read under this name as windows of the job's size.
 */
const WINDOW_CONTENTS = '_window-contents';
/** Keyed state of sliced sliding windows: one accumulator per (key, slice start); see window-slicing.ts. */
const WINDOW_SLICES = '_window-slices';
/** Keyed state of session windows: the active windows of a key. */
const WINDOW_SESSIONS = '_window-sessions';

function contentsName(sizeMs: number): string {
  return `${WINDOW_CONTENTS}@size=${sizeMs}ms`;
}

function slicesName(sizeMs: number, slideMs: number): string {
  return `${WINDOW_SLICES}@size=${sizeMs}ms,slide=${slideMs}ms`;
}

const SIZED_CONTENTS = /^_window-contents@size=(\d+)ms$/;

/** Windows restored from a job with another window size: they fire at their own end and take no new records. */
interface RestoredWindows {
  readonly sizeMs: number;
  readonly contents: Contents & InternalState;
}

export interface WindowOperatorOptions {
  readonly assigner: TimeWindowAssigner;
  readonly fn: WindowFunctionSpec;
  readonly allowedLatenessMs: number;
  readonly lateDataTag: OutputTag<unknown> | undefined;
  /** Whether sliding windows may share slices (`disableSlicing()` sets false; default true). */
  readonly slicing?: boolean;
}

type Contents = ReducingState<unknown> | AggregatingState<unknown, unknown> | ListState<unknown>;

/**
 * Keyed windows. Window contents live in keyed state with the window's start as namespace;
 * a timer at the window's last timestamp (namespace = start) fires it. Session windows keep,
 * per key, the set of active windows in a value state and merge their contents. Sliding
 * windows that an aggregate function with a primitive accumulator can slice keep one
 * accumulator per slide instead of one per window (window-slicing.ts) and chain their timers
 * (one pending per key and run of slices with contents; see `addToSlice`).
 */
export class WindowOperator extends KeyedOperator<unknown> {
  private contents!: Contents & { setCurrentNamespace(ns: number): void };
  /** Session windows of the current key: flat [start, end, start, end, ...]. */
  private sessions: ValueState<number[]> | undefined;
  private readonly eventTime: boolean;
  private collector!: TimestampedCollector<unknown>;
  private windowCtx!: MutableWindowContext;
  /** Set when the sliding windows share slices; undefined: one accumulator per window. */
  private slicing: SlicingPlan | undefined;
  numLateRecordsDropped = 0;

  /** Whether the windows share slices (decided when the operator opens). */
  get sliced(): boolean {
    return this.slicing !== undefined;
  }

  private readonly o: WindowOperatorOptions;

  constructor(options: WindowOperatorOptions) {
    super();
    const fn = options.fn;
    // this subtask's own window function object (what open() stores on `this` stays here)
    this.o = fn.process === undefined ? options : { ...options, fn: { ...fn, process: perSubtask(fn.process) } as WindowFunctionSpec };
    const o = this.o;
    this.eventTime = o.assigner.time === 'event-time';
    if (!(o.allowedLatenessMs >= 0)) throw new RangeError(`allowed lateness must be >= 0 ms, got ${o.allowedLatenessMs}`);
  }

  protected override openKeyed(): void | Promise<void> {
    const fn = this.o.fn;
    const assigner = this.o.assigner;
    const descriptor = (name: string) =>
      fn.kind === 'reduce' ? reducingState(name, fn.reduce) : fn.kind === 'aggregate' ? aggregatingState(name, fn.aggregate) : listState<unknown>(name);
    const register = (name: string) => this.backend.getOrCreateState(descriptor(name), true) as Contents & InternalState;
    const restoredNames = this.backend.stateNames();
    // Entries of a restored layout (registering it loads them).
    const restoredEntries = (name: string): number => {
      if (!restoredNames.includes(name)) return 0;
      // Slices are aggregate accumulators: another function kind cannot register them (and cannot take them).
      if (name.startsWith(WINDOW_SLICES) && fn.kind !== 'aggregate') return 1;
      if (name === WINDOW_SESSIONS) this.backend.getOrCreateState(valueState<number[]>(name), false);
      else register(name);
      return this.backend.numEntries(name);
    };
    const describe = describeAssigner(assigner);
    // Windows kept by a window with a trigger or evictor (trigger-window-operator.ts).
    const held = (d: KeyedStateDescriptor, namespaced: boolean): boolean => {
      if (!restoredNames.includes(d.name)) return false;
      this.backend.getOrCreateState(d, namespaced);
      return this.backend.numEntries(d.name) > 0;
    };
    const withTriggerOrEvictor =
      held(valueState<number[]>(TRIGGER_SESSIONS), false) || (assigner.kind === 'sliding' && held(listState<unknown>(evictingContentsName(assigner.sizeMs)), true));
    if (withTriggerOrEvictor) {
      throw new Error(
        `window operator '${this.runtime.name}': the restored state holds open windows of a window with a trigger or evictor, which this window ` +
          '(without them) keeps another way: restore with the same trigger and evictor, or stop the old job with `sluice stop --drain` first',
      );
    }
    for (const name of restoredNames) {
      if (!name.startsWith(WINDOW_SLICES) || restoredEntries(name) === 0) continue;
      const own = assigner.kind === 'sliding' && (name === WINDOW_SLICES || name === slicesName(assigner.sizeMs, assigner.slideMs));
      if (own && this.slicingPlan() !== undefined) continue;
      const was = name === WINDOW_SLICES ? 'a sliding window' : `a sliding window (${name.slice(WINDOW_SLICES.length + 1)})`;
      throw new Error(
        `window operator '${this.runtime.name}': the restored state keeps the open windows of ${was} as slices (an aggregate ` +
          `function with merge() and a number, string, bigint or boolean accumulator, size a multiple of the slide), but this ` +
          `job's window (${describe}${this.o.slicing === false ? ', disableSlicing()' : ''}) cannot take them: restore with the same window assigner and aggregate function, or stop ` +
          'the old job with `sluice stop --drain` so that its windows fire before the change',
      );
    }
    if (assigner.kind === 'session') {
      this.contents = register(WINDOW_CONTENTS);
      this.sessions = this.backend.getOrCreateState(valueState<number[]>(WINDOW_SESSIONS), false) as ValueState<number[]>;
    } else {
      if (restoredEntries(WINDOW_SESSIONS) > 0) {
        throw new Error(
          `window operator '${this.runtime.name}': the restored state holds open session windows, but this job's window is ` +
            `${describe}: restore with session windows, or stop the old job with \`sluice stop --drain\` so that its windows fire before the change`,
        );
      }
      const perWindow = restoredNames.includes(WINDOW_CONTENTS) ? WINDOW_CONTENTS : contentsName(assigner.sizeMs);
      let slicing = this.slicingPlan();
      // State restored from a checkpoint taken without slices keeps its layout (one accumulator
      // per window cannot be split into slices); a job restored from one keeps it from then on.
      if (slicing !== undefined && restoredEntries(perWindow) > 0) slicing = undefined;
      this.slicing = slicing;
      if (slicing !== undefined) this.sliceValues = new Array<unknown>(slicing.slicesPerWindow).fill(undefined);
      this.contents =
        slicing === undefined ? register(perWindow) : register(restoredNames.includes(WINDOW_SLICES) ? WINDOW_SLICES : slicesName(assigner.sizeMs, assigner.slideMs));
    }
    // Windows of another size (sessions keep their ends, so a new gap needs none of this).
    for (const name of restoredNames) {
      const size = SIZED_CONTENTS.exec(name);
      if (size === null || name === contentsName(assigner.kind === 'sliding' ? assigner.sizeMs : Number.NaN)) continue;
      if (restoredEntries(name) > 0) this.restoredWindows.push({ sizeMs: Number(size[1]), contents: register(name) });
    }
    this.collector = new TimestampedCollector(this.output);
    this.windowCtx = new MutableWindowContext(this);
    return fn.process?.open?.(keyedRuntimeContext(this.runtime));
  }

  private slicingPlan(): SlicingPlan | undefined {
    return this.o.slicing === false ? undefined : slicingPlan(this.o.assigner, this.o.fn);
  }

  /** Restored windows of other sizes that have not all fired yet (see `RestoredWindows`). */
  private readonly restoredWindows: RestoredWindows[] = [];

  processElement(value: unknown, timestampMs: number): void {
    this.setKeyOf(value);
    const a = this.o.assigner;
    const t = this.eventTime ? timestampMs : this.processingTimeOfRecord();
    if (this.eventTime && !Number.isFinite(t)) {
      throw new Error(
        `window operator '${this.runtime.name}' got a record without an event timestamp: assign timestamps with ` +
          'assignTimestampsAndWatermarks(...) before an event-time window, or use a processing-time window',
      );
    }
    if (a.kind === 'sliding' && this.slicing !== undefined) {
      this.addToSlice(value, timestampMs, t, a.sizeMs, a.slideMs, a.offsetMs);
    } else if (a.kind === 'sliding') {
      let assigned = false;
      const last = windowStartWithOffset(t, a.offsetMs, a.slideMs);
      for (let start = last; start > t - a.sizeMs; start -= a.slideMs) {
        const end = start + a.sizeMs;
        if (this.isLate(end)) continue;
        assigned = true;
        this.addToWindow(value, start, end, true);
      }
      // As Flink: a record is late when it was skipped by every window *and* is itself late;
      // with size < slide a record may fall between windows, which is not lateness.
      if (!assigned && this.isLate(t + 1)) this.late(value, timestampMs);
    } else {
      this.addToSession(value, timestampMs, t, sessionGapOf(a, value));
    }
  }

  private isLate(end: number): boolean {
    return this.eventTime && end - 1 + this.o.allowedLatenessMs <= this.currentWatermark;
  }

  private late(value: unknown, timestampMs: number): void {
    if (this.o.lateDataTag !== undefined) this.output.collectSide(this.o.lateDataTag, value, timestampMs);
    else this.numLateRecordsDropped++;
  }

  /**
   * Adds `value` to the window [start, end) of the current key and registers the window's
   * timers. Flink registers them for every element and lets the timer queue drop the
   * repeats; here, when `fixedWindows` (sliding and tumbling: a window's contents exist
   * exactly while its timers are pending, registered with its first element and removed by
   * its cleanup timer), an element added to existing contents skips that, which is a fifth of
   * a sliding-window job's time. Session windows merge, so their timers move: always registered.
   */
  private addToWindow(value: unknown, start: number, end: number, fixedWindows: boolean): void {
    this.contents.setCurrentNamespace(start);
    const first = (this.contents as unknown as AddingInternalState).add(value);
    const key = this.backend.getCurrentKey();
    if (this.eventTime) {
      if (end - 1 <= this.currentWatermark) {
        // Late but within the allowed lateness: fire again at once with the new element.
        this.emitWindow(key, start, end);
      } else if (first || !fixedWindows) {
        this.timers.registerEventTimeTimer(end - 1, key, start);
      }
      if (this.o.allowedLatenessMs > 0 && (first || !fixedWindows)) this.timers.registerEventTimeTimer(end - 1 + this.o.allowedLatenessMs, key, start);
    } else if (first || !fixedWindows) {
      this.timers.registerProcessingTimeTimer(end - 1, key, start);
    }
  }

  /**
   * Sliced sliding windows: `value` goes into its slice's accumulator. Timers are chained:
   * when a slice gets its first element, the timer of the earliest window holding it that has
   * not fired is registered; a window that fires registers the next window's timer when one
   * of its slices other than the first has contents (those are in the next window too). So a
   * key holds one pending timer per run of slices with contents, not one per window, and a
   * checkpoint captures a fifth of the timers (size 10 s, slide 2 s). Every window with contents
   * still fires: the chain from the earliest window of any of its slices reaches it. With an
   * allowed lateness the windows' timers are registered as without slices (a late element
   * fires again at once the windows that fired but are kept).
   */
  private addToSlice(value: unknown, timestampMs: number, t: number, sizeMs: number, slideMs: number, offsetMs: number): void {
    const sliceStart = windowStartWithOffset(t, offsetMs, slideMs);
    // The last window holding the slice starts with it: when that one is late, all are.
    if (this.isLate(sliceStart + sizeMs)) {
      this.late(value, timestampMs);
      return;
    }
    this.contents.setCurrentNamespace(sliceStart);
    const first = (this.contents as unknown as AddingInternalState).add(value);
    const lateness = this.eventTime ? this.o.allowedLatenessMs : 0;
    if (lateness === 0) {
      if (!first) return;
      // The earliest window holding the slice ends with it; those that fired are behind the watermark.
      let end = sliceStart + slideMs;
      if (this.eventTime) while (end - 1 <= this.currentWatermark) end += slideMs;
      this.registerWindowTimer(this.backend.getCurrentKey(), end - sizeMs, end, 0);
      return;
    }
    const key = this.backend.getCurrentKey();
    for (let start = sliceStart; start > sliceStart - sizeMs; start -= slideMs) {
      const end = start + sizeMs;
      if (this.isLate(end)) break; // earlier windows end earlier: late too
      if (end - 1 <= this.currentWatermark) this.emitWindow(key, start, end);
      else if (first) this.timers.registerEventTimeTimer(end - 1, key, start);
      if (first) this.timers.registerEventTimeTimer(end - 1 + lateness, key, start);
    }
  }

  /** The firing timer of window [start, end) and, with an allowed lateness, its cleanup timer. */
  private registerWindowTimer(key: KeyType, start: number, end: number, lateness: number): void {
    if (!this.eventTime) {
      this.timers.registerProcessingTimeTimer(end - 1, key, start);
      return;
    }
    this.timers.registerEventTimeTimer(end - 1, key, start);
    if (lateness > 0) this.timers.registerEventTimeTimer(end - 1 + lateness, key, start);
  }

  private addToSession(value: unknown, timestampMs: number, t: number, gapMs: number): void {
    const sessions = this.sessions!;
    const list = sessions.value() ?? [];
    let start = t;
    let end = t + gapMs;
    const merged: number[] = [];
    const kept: number[] = [];
    for (let i = 0; i < list.length; i += 2) {
      const s = list[i]!;
      const e = list[i + 1]!;
      if (s <= end && e >= start) {
        merged.push(s, e);
        start = Math.min(start, s);
        end = Math.max(end, e);
      } else {
        kept.push(s, e);
      }
    }
    if (this.isLate(end)) {
      this.late(value, timestampMs);
      return;
    }
    const key = this.backend.getCurrentKey();
    // Merge the contents of the overlapped windows into the new window's namespace.
    for (let i = 0; i < merged.length; i += 2) {
      const s = merged[i]!;
      const e = merged[i + 1]!;
      this.deleteTimers(key, s, e);
      if (s !== start) this.moveContents(s, start);
    }
    kept.push(start, end);
    sessions.update(kept);
    this.addToWindow(value, start, end, false);
  }

  private deleteTimers(key: KeyType, start: number, end: number): void {
    if (this.eventTime) {
      this.timers.deleteEventTimeTimer(end - 1, key, start);
      if (this.o.allowedLatenessMs > 0) this.timers.deleteEventTimeTimer(end - 1 + this.o.allowedLatenessMs, key, start);
    } else {
      this.timers.deleteProcessingTimeTimer(end - 1, key, start);
    }
  }

  private moveContents(from: number, to: number): void {
    const c = this.contents as Contents & InternalState;
    c.setCurrentNamespace(from);
    const fromValue = c.getInternal();
    c.clear();
    if (fromValue === undefined) return;
    c.setCurrentNamespace(to);
    const toValue = c.getInternal();
    c.updateInternal(toValue === undefined ? fromValue : this.mergeAccumulators(toValue, fromValue));
  }

  private mergeAccumulators(a: unknown, b: unknown): unknown {
    const fn = this.o.fn;
    switch (fn.kind) {
      case 'process':
        return [...(a as unknown[]), ...(b as unknown[])];
      case 'reduce':
        return fn.reduce(a, b);
      case 'aggregate': {
        const merge = fn.aggregate.merge;
        if (merge === undefined) {
          throw new Error(`window operator '${this.runtime.name}': session windows need an AggregateFunction with merge(a, b)`);
        }
        return merge(a, b);
      }
    }
  }

  override onEventTime(timestampMs: number, key: KeyType, namespace: number): void {
    this.onTimer(timestampMs, key, namespace);
  }

  override onProcessingTime(timestampMs: number, key: KeyType, namespace: number): void {
    if (timestampMs > this.processingTimersFiredUpToMs) this.processingTimersFiredUpToMs = timestampMs;
    this.onTimer(timestampMs, key, namespace);
  }

  /** The latest processing-time timer that fired (timers fire in time order, every key's at once). */
  private processingTimersFiredUpToMs = Number.NEGATIVE_INFINITY;

  /**
   * A record's processing time. Sliced windows put a record that comes after the timer of a
   * window it would belong to (the clock can read the timer's millisecond) into the next
   * slice: the window has fired and dropped its first slice, so it cannot take the record
   * any more (one accumulator per window fires such a window again with the record alone).
   */
  private processingTimeOfRecord(): number {
    const now = this.runtime.processingTime.nowMs();
    return this.slicing !== undefined && now <= this.processingTimersFiredUpToMs ? this.processingTimersFiredUpToMs + 1 : now;
  }

  private onTimer(timestampMs: number, key: KeyType, start: number): void {
    if (this.restoredWindows.length > 0) this.onRestoredWindowTimer(timestampMs, key, start);
    const end = this.windowEnd(start);
    if (end === undefined) return; // window was merged away
    const lateness = this.eventTime ? this.o.allowedLatenessMs : 0;
    if (timestampMs === end - 1) {
      this.emitWindow(key, start, end);
      // Sliced: the chain goes on while a slice after the first has contents (always, also
      // with an allowed lateness, where the timer is there already, so that state restored
      // from a job without lateness keeps firing).
      const slicing = this.slicing;
      if (slicing !== undefined && this.laterSlicesHeld) {
        // (A restored window's timer may share a (time, start) with a window the chain would fire without its timer.)
        if (lateness === 0 && this.eventTime && this.restoredWindows.length === 0) {
          this.fireDueChain(key, start, end, slicing);
          return;
        }
        this.registerWindowTimer(key, start + slicing.sliceMs, end + slicing.sliceMs, lateness);
      }
    }
    // A window's time is over once its end plus the allowed lateness has passed: also when a
    // timer of a job restored with another lateness (or of a restored window of another
    // size) says so first. A window that fired under a smaller lateness than the job's now
    // gets its cleanup timer when one of its timers fires (a repeat is a no-op).
    // As a timer's time: an allowed lateness past the last watermark (Infinity, 1e17) ends the window with the input (Flink's Long.MAX_VALUE cleanup time).
    const cleanupMs = timerTime(end - 1 + lateness);
    if (timestampMs >= cleanupMs) this.clearWindow(start);
    else if (timestampMs >= end - 1) this.timers.registerEventTimeTimer(cleanupMs, key, start);
  }

  /**
   * A timer at `timestampMs` of windows starting at `start` fired: the restored windows of
   * other sizes that end then fire; those whose end has passed are cleared (they fired; no
   * record can reach them, so they keep no allowed lateness).
   */
  private onRestoredWindowTimer(timestampMs: number, key: KeyType, start: number): void {
    for (const w of this.restoredWindows) {
      const end = start + w.sizeMs;
      if (timestampMs < end - 1) continue;
      w.contents.setCurrentNamespace(start);
      if (timestampMs === end - 1) this.emitContents(key, start, end, w.contents);
      w.contents.clear();
    }
  }

  /**
   * Sliced, event time, no allowed lateness: window [start, end) of `key` fired and a later
   * slice of it has contents, so the chain goes on. The windows after it that the watermark has
   * passed too (a jump of the watermark, the end of the input) fire now, one after the other,
   * rather than through a timer each that would fire after every other key's window of the
   * same end: the key's slices are read while they are in the cache, and a timer is registered
   * only for the first window not due. A timer such a window got from a later slice's first
   * element is deleted, so the window fires once. Each window's first slice is dropped after it
   * fired (it is the last window holding that slice).
   */
  private fireDueChain(key: KeyType, start: number, end: number, slicing: SlicingPlan): void {
    const sliceMs = slicing.sliceMs;
    const held = this.sliceValues;
    const last = held.length - 1;
    for (;;) {
      this.clearWindow(start);
      start += sliceMs;
      end += sliceMs;
      if (end - 1 > this.currentWatermark) {
        this.registerWindowTimer(key, start, end, 0);
        return;
      }
      this.timers.deleteEventTimeTimer(end - 1, key, start);
      // The window's slices are the last window's but its first, and one more, read now: a
      // slice is read once on its way through the chain, not once per window holding it.
      for (let i = 0; i < last; i++) held[i] = held[i + 1];
      held[last] = this.sliceValue(end - sliceMs);
      this.emitResult(key, start, end, this.mergeHeldSlices(slicing));
      if (!this.laterSlicesHeld) {
        this.clearWindow(start);
        return;
      }
    }
  }

  private windowEnd(start: number): number | undefined {
    const a = this.o.assigner;
    if (a.kind === 'sliding') return start + a.sizeMs;
    const list = this.sessions!.value() ?? [];
    for (let i = 0; i < list.length; i += 2) if (list[i] === start) return list[i + 1];
    return undefined;
  }

  private clearWindow(start: number): void {
    const clear = this.o.fn.process?.clear;
    if (clear !== undefined) {
      const end = this.windowEnd(start);
      if (end !== undefined) {
        this.windowCtx.window = { start, end };
        clear.call(this.o.fn.process, this.windowCtx);
      }
    }
    // Sliced: the window starting at a slice is the last one that holds it.
    this.contents.setCurrentNamespace(start);
    this.contents.clear();
    if (this.sessions !== undefined) {
      const list = this.sessions.value() ?? [];
      const kept: number[] = [];
      for (let i = 0; i < list.length; i += 2) if (list[i] !== start) kept.push(list[i]!, list[i + 1]!);
      this.sessions.update(kept.length === 0 ? undefined : kept);
    }
  }

  private emitWindow(key: KeyType, start: number, end: number): void {
    if (this.slicing !== undefined) this.emitResult(key, start, end, this.mergeSlices(start, this.slicing));
    else this.emitContents(key, start, end, this.contents);
  }

  /** Emits window [start, end) of `contents`, one entry per window (nothing when it has no contents). */
  private emitContents(key: KeyType, start: number, end: number, contents: Contents & { setCurrentNamespace(ns: number): void }): void {
    contents.setCurrentNamespace(start);
    const fn = this.o.fn;
    if (fn.kind === 'process') {
      this.collector.timestampMs = end - 1;
      const elements = (contents as ListState<unknown>).get();
      if (elements.length === 0) return;
      this.windowCtx.window = { start, end };
      fn.process.process(key, this.windowCtx, elements, this.collector);
      return;
    }
    this.emitResult(key, start, end, (contents as ReducingState<unknown>).get());
  }

  /** Emits the result of window [start, end) of an aggregate or reduce function (none when undefined: the window had no contents). */
  private emitResult(key: KeyType, start: number, end: number, result: unknown): void {
    if (result === undefined) return;
    const fn = this.o.fn as Exclude<WindowFunctionSpec, { kind: 'process' }>;
    this.collector.timestampMs = end - 1;
    if (fn.process === undefined) {
      this.output.collect(result, end - 1);
    } else {
      this.windowCtx.window = { start, end };
      fn.process.process(key, this.windowCtx, [result], this.collector);
    }
  }

  /** Set by `mergeSlices`: whether a slice after the window's first had contents (they are in the next window too). */
  private laterSlicesHeld = false;

  /**
   * The accumulators of the slices of the window `mergeSlices` read last, in order (undefined:
   * an empty slice); `fireDueChain` moves it along the chain. Primitives, so holding them is safe.
   */
  private sliceValues: unknown[] = [];

  /** The result of the sliced window starting at `start`: its slices' accumulators merged (primitives: none is modified). */
  private mergeSlices(start: number, slicing: SlicingPlan): unknown {
    const held = this.sliceValues;
    for (let i = 0; i < held.length; i++) held[i] = this.sliceValue(start + i * slicing.sliceMs);
    return this.mergeHeldSlices(slicing);
  }

  /** The accumulator of the current key's slice starting at `sliceStart` (undefined: empty). */
  private sliceValue(sliceStart: number): unknown {
    const c = this.contents as Contents & InternalState;
    c.setCurrentNamespace(sliceStart);
    return c.getInternal();
  }

  /** The result of the window whose slices `sliceValues` holds; sets `laterSlicesHeld`. */
  private mergeHeldSlices(slicing: SlicingPlan): unknown {
    const held = this.sliceValues;
    let acc: unknown = undefined;
    let later = false;
    for (let i = 0; i < held.length; i++) {
      const v = held[i];
      if (v === undefined) continue;
      acc = acc === undefined ? v : slicing.merge(acc, v);
      if (i !== 0) later = true;
    }
    this.laterSlicesHeld = later;
    if (acc === undefined) return undefined;
    return (this.o.fn as Extract<WindowFunctionSpec, { kind: 'aggregate' }>).aggregate.getResult(acc);
  }

  currentWatermarkMs(): number {
    return this.currentWatermark;
  }

  get isSessionWindow(): boolean {
    return this.o.assigner.kind === 'session';
  }

  override close(): void | Promise<void> {
    return this.o.fn.process?.close?.();
  }
}

function describeAssigner(a: TimeWindowAssigner): string {
  const time = a.time === 'event-time' ? 'event time' : 'processing time';
  if (a.kind === 'session') return a.gapOf === undefined ? `session windows with a gap of ${a.gapMs} ms (${time})` : `session windows with a dynamic gap (${time})`;
  if (a.sizeMs === a.slideMs) return `tumbling windows of ${a.sizeMs} ms (${time})`;
  return `sliding windows of ${a.sizeMs} ms every ${a.slideMs} ms (${time})`;
}

class MutableWindowContext implements WindowContext {
  window: TimeWindow = { start: 0, end: 0 };
  constructor(private readonly op: WindowOperator) {}
  currentWatermark(): number {
    return this.op.currentWatermarkMs();
  }
  currentProcessingTime(): number {
    return this.op.runtime.processingTime.nowMs();
  }
  output<X>(tag: OutputTag<X>, value: X): void {
    this.op.output.collectSide(tag as OutputTag<unknown>, value, this.window.end - 1);
  }
  windowState(): KeyedStateStore {
    if (this.op.isSessionWindow) throw new Error(SESSION_WINDOW_STATE);
    return windowStateStore(this.op.runtime, () => this.window.start);
  }
  globalState(): KeyedStateStore {
    return globalStateStore(this.op.runtime);
  }
}
