import type { OutputTag } from '../../api/output-tag.js';
import { timerTime } from '../task/internal-timer-service.js';
import type { KeyedStateDescriptor, ListState, ReducingState, StateOf, ValueState } from '../../api/state-descriptors.js';
import { aggregatingState, listState, reducingState, valueState } from '../../api/state-descriptors.js';
import type { Evictor, EvictorContext, TimestampedValue } from '../../api/evictors.js';
import type { OnMergeContext, Trigger, TriggerContext, TriggerResult } from '../../api/triggers.js';
import { NO_TIMESTAMP } from '../channel/stream-element.js';
import type { WindowContext, WindowFunctionSpec } from '../../api/window-functions.js';
import { sessionGapOf, windowStartWithOffset, type TimeWindow, type WindowAssigner } from '../../api/windows.js';
import { MAX_WATERMARK, MIN_WATERMARK } from '../channel/stream-element.js';
import type { KeyType } from '../state/key-group.js';
import type { InternalState } from '../state/keyed-state-backend.js';
import type { AddingInternalState } from '../state/state-handles.js';
import { globalStateStore, keyedRuntimeContext, SESSION_WINDOW_STATE, windowStateStore } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { TimestampedCollector } from './timestamped-collector.js';

export interface TriggerWindowOperatorOptions {
  readonly assigner: WindowAssigner;
  readonly trigger: Trigger<unknown>;
  /** Set: the window keeps its records (with timestamps) and the evictor removes some at each firing. */
  readonly evictor?: Evictor<unknown> | undefined;
  readonly fn: WindowFunctionSpec;
  readonly allowedLatenessMs: number;
  readonly lateDataTag: OutputTag<unknown> | undefined;
}

type Namespaced = InternalState & { setCurrentNamespace(ns: number): void };
type Contents = (ReducingState<unknown> | ListState<unknown>) & Namespaced;

/** The same keyed state as the window operator without slices, so windows restore across the two. */
const contentsName = (sizeMs: number): string => `_window-contents@size=${sizeMs}ms`;
/** With an evictor: every record of a window with its timestamp, `[timestampMs, value]` (Flink's EvictingWindowOperator). */
export const evictingContentsName = (sizeMs: number): string => `_evicting-window-contents@size=${sizeMs}ms`;
type Stored = [number, unknown];
/**
 * Session windows with a trigger: per key, `[nextId, start, end, id, start, end, id, ...]`. A
 * window's contents, trigger state and timers live in the namespace of its id, and a merge
 * gives the merged window a new id (Flink's namespace is the window itself), so the state of
 * the windows merged away and the new window's never share a namespace.
 */
export const SESSIONS = '_trigger-window-sessions';
/** GlobalWindows: the one window of a key, in namespace 0; it never ends (no cleanup). */
const GLOBAL_CONTENTS = '_global-window-contents';
const EVICTING_GLOBAL_CONTENTS = '_evicting-global-window-contents';
const GLOBAL_WINDOW: TimeWindow = Object.freeze({ start: MIN_WATERMARK, end: MAX_WATERMARK });
const SESSION_CONTENTS = '_trigger-window-contents';
const EVICTING_SESSION_CONTENTS = '_evicting-trigger-window-contents';
/** The window operator's session state (without a trigger): a different layout. */
const PLAIN_SESSIONS = '_window-sessions';
interface Session {
  readonly start: number;
  readonly end: number;
  readonly id: number;
}
/** Trigger state is kept apart from the job's own keyed state of the same name. */
const TRIGGER_STATE_PREFIX = '_trigger:';

/**
 * Tumbling and sliding windows with a trigger of the job's (Flink's WindowOperator with a
 * custom Trigger): each window keeps its contents in keyed state (namespace = its start); the
 * trigger, asked for every record and for the timers it registered, decides when the window
 * fires and when its contents are purged. A window's state and the trigger's are cleared at
 * its cleanup time: its last timestamp plus the allowed lateness in event time, its last
 * timestamp in processing time. (Windows without a trigger of the job's take the window
 * operator, which may share slices between sliding windows.)
 */
export class TriggerWindowOperator extends KeyedOperator<unknown> {
  private contents!: Contents;
  private collector!: TimestampedCollector<unknown>;
  private readonly eventTime: boolean;
  private readonly o: TriggerWindowOperatorOptions;
  /** The window the trigger context speaks of, and the namespace of its state and timers (its start; a session's id). */
  private window: TimeWindow = { start: 0, end: 0 };
  private ns = 0;
  private sessions: ValueState<number[]> | undefined;
  private readonly mergeCtx: OnMergeContext;
  /** The namespaces of the windows being merged, while `onMerge` runs. */
  private mergedNamespaces: readonly number[] = [];
  private readonly triggerCtx: TriggerContext;
  private readonly windowCtx: WindowContext & { window: TimeWindow };
  private readonly triggerStates = new Map<string, Namespaced>();
  numLateRecordsDropped = 0;

  constructor(options: TriggerWindowOperatorOptions) {
    super();
    const fn = options.fn;
    this.o = fn.process === undefined ? options : { ...options, fn: { ...fn, process: perSubtask(fn.process) } as WindowFunctionSpec };
    this.eventTime = options.assigner.time === 'event-time';
    const op = this;
    this.triggerCtx = {
      getCurrentWatermark: () => op.currentWatermark,
      getCurrentProcessingTime: () => op.runtime.processingTime.nowMs(),
      registerEventTimeTimer: (t) => op.timers.registerEventTimeTimer(t, op.backend.getCurrentKey(), op.ns),
      registerProcessingTimeTimer: (t) => op.timers.registerProcessingTimeTimer(t, op.backend.getCurrentKey(), op.ns),
      deleteEventTimeTimer: (t) => op.timers.deleteEventTimeTimer(t, op.backend.getCurrentKey(), op.ns),
      deleteProcessingTimeTimer: (t) => op.timers.deleteProcessingTimeTimer(t, op.backend.getCurrentKey(), op.ns),
      getPartitionedState: <D extends KeyedStateDescriptor>(d: D): StateOf<D> => op.triggerState(d) as unknown as StateOf<D>,
    };
    this.mergeCtx = { ...this.triggerCtx, mergePartitionedState: (d) => op.mergeTriggerState(d) };
    this.windowCtx = {
      window: { start: 0, end: 0 },
      currentWatermark: () => op.currentWatermark,
      currentProcessingTime: () => op.runtime.processingTime.nowMs(),
      output<X>(tag: OutputTag<X>, value: X): void {
        op.output.collectSide(tag as OutputTag<unknown>, value, this.window.end - 1);
      },
      windowState: () => {
        if (op.o.assigner.kind === 'session') throw new Error(SESSION_WINDOW_STATE);
        return windowStateStore(op.runtime, () => op.ns);
      },
      globalState: () => globalStateStore(op.runtime),
    };
  }

  protected override openKeyed(): void | Promise<void> {
    const { fn, assigner } = this.o;
    const session = assigner.kind === 'session';
    const name = session ? SESSION_CONTENTS : assigner.kind === 'global' ? GLOBAL_CONTENTS : contentsName(assigner.sizeMs);
    const evictingName = session ? EVICTING_SESSION_CONTENTS : assigner.kind === 'global' ? EVICTING_GLOBAL_CONTENTS : evictingContentsName(assigner.sizeMs);
    // With an evictor, the records; without, what the window function keeps (accumulators, or records for process).
    const records = listState<Stored>(evictingName);
    const accumulators = fn.kind === 'reduce' ? reducingState(name, fn.reduce) : fn.kind === 'aggregate' ? aggregatingState(name, fn.aggregate) : listState<unknown>(name);
    const [descriptor, other] = this.o.evictor !== undefined ? [records, accumulators] : [accumulators, records];
    const refuse = (held: string, fix: string): never => {
      throw new Error(`window operator '${this.runtime.name}': the restored state holds open windows kept as ${held}, which this window cannot take: ${fix}, or stop the old job with \`sluice stop --drain\` first`);
    };
    for (const n of this.backend.stateNames()) {
      if (!n.startsWith('_window-slices')) continue;
      if (fn.kind !== 'aggregate' || this.restoredEntries(aggregatingState(n, fn.aggregate), true) > 0) {
        refuse('slices of sliding windows (a window without a trigger or evictor)', 'restore without the trigger and evictor');
      }
    }
    if (session && this.restoredEntries(valueState<number[]>(PLAIN_SESSIONS), false) > 0) {
      refuse('session windows without a trigger or evictor', 'restore without them');
    }
    // Records (with an evictor) and accumulators (without) are not interchangeable.
    if (this.restoredEntries(other, true) > 0) {
      refuse(this.o.evictor === undefined ? 'records for an evictor' : 'accumulators (a window without an evictor)', this.o.evictor === undefined ? 'restore with the evictor' : 'restore without the evictor');
    }
    if (session && this.o.trigger.onMerge === undefined) {
      throw new Error(`window operator '${this.runtime.name}': trigger ${this.o.trigger.name ?? ''} cannot merge, and session windows merge: give it an onMerge(window, ctx)`);
    }
    if (session) this.sessions = this.backend.getOrCreateState(valueState<number[]>(SESSIONS), false) as ValueState<number[]>;
    this.contents = this.backend.getOrCreateState(descriptor, true) as unknown as Contents;
    this.collector = new TimestampedCollector(this.output);
    return fn.process?.open?.(keyedRuntimeContext(this.runtime));
  }

  /** Entries of a restored state of another window layout (registering it loads them); 0 when there is none. */
  private restoredEntries(d: KeyedStateDescriptor, namespaced: boolean): number {
    if (!this.backend.stateNames().includes(d.name)) return 0;
    this.backend.getOrCreateState(d, namespaced);
    return this.backend.numEntries(d.name);
  }

  private triggerState(d: KeyedStateDescriptor): Namespaced {
    let s = this.triggerStates.get(d.name);
    if (s === undefined) {
      s = this.backend.getOrCreateState({ ...d, name: TRIGGER_STATE_PREFIX + d.name }, true) as Namespaced;
      this.triggerStates.set(d.name, s);
    }
    s.setCurrentNamespace(this.ns);
    return s;
  }

  /** OnMergeContext.mergePartitionedState: this trigger state of the merged windows, combined into the new window's. */
  private mergeTriggerState(d: KeyedStateDescriptor): void {
    const target = this.triggerState(d);
    let acc = target.getInternal();
    for (const from of this.mergedNamespaces) {
      target.setCurrentNamespace(from);
      const v = target.getInternal();
      if (v === undefined) continue;
      acc = acc === undefined ? v : mergeStored(d, acc, v);
    }
    target.setCurrentNamespace(this.ns);
    if (acc !== undefined) target.updateInternal(acc);
  }

  private setWindow(start: number, end: number, ns: number): void {
    this.window = { start, end };
    this.ns = ns;
  }

  processElement(value: unknown, timestampMs: number): void {
    this.setKeyOf(value);
    const a = this.o.assigner;
    const t = this.eventTime ? timestampMs : this.runtime.processingTime.nowMs();
    if (this.eventTime && !Number.isFinite(t)) {
      throw new Error(
        `window operator '${this.runtime.name}' got a record without an event timestamp: assign timestamps with ` +
          'assignTimestampsAndWatermarks(...) before an event-time window, or use a processing-time window',
      );
    }
    if (a.kind === 'session') {
      this.addToSession(value, timestampMs, t, sessionGapOf(a, value));
      return;
    }
    if (a.kind === 'global') {
      this.setWindow(GLOBAL_WINDOW.start, GLOBAL_WINDOW.end, 0);
      this.addToCurrentWindow(value, timestampMs);
      return;
    }
    let assigned = false;
    for (let start = windowStartWithOffset(t, a.offsetMs, a.slideMs); start > t - a.sizeMs; start -= a.slideMs) {
      const end = start + a.sizeMs;
      if (this.isLate(end)) continue;
      assigned = true;
      this.setWindow(start, end, start);
      this.addToCurrentWindow(value, timestampMs);
    }
    if (!assigned && this.isLate(t + 1)) this.late(value, timestampMs);
  }

  private late(value: unknown, timestampMs: number): void {
    if (this.o.lateDataTag !== undefined) this.output.collectSide(this.o.lateDataTag, value, timestampMs);
    else this.numLateRecordsDropped++;
  }

  /** Adds the record to the current window, asks the trigger, and makes sure the window is cleaned up in time. */
  private addToCurrentWindow(value: unknown, timestampMs: number): void {
    this.contents.setCurrentNamespace(this.ns);
    (this.contents as unknown as AddingInternalState).add(this.o.evictor === undefined ? value : ([timestampMs, value] satisfies Stored));
    this.act(this.o.trigger.onElement(value, timestampMs, this.window, this.triggerCtx));
    this.registerCleanupTimer();
  }

  /** The key's session windows, and the next id to give one. */
  private readSessions(): { nextId: number; sessions: Session[] } {
    const flat = this.sessions!.value() ?? [0];
    const sessions: Session[] = [];
    for (let i = 1; i < flat.length; i += 3) sessions.push({ start: flat[i]!, end: flat[i + 1]!, id: flat[i + 2]! });
    return { nextId: flat[0]!, sessions };
  }

  private writeSessions(nextId: number, sessions: readonly Session[]): void {
    if (sessions.length === 0) {
      this.sessions!.clear();
      return;
    }
    const flat = [nextId];
    for (const w of sessions) flat.push(w.start, w.end, w.id);
    this.sessions!.update(flat);
  }

  /**
   * Session windows (Flink's MergingWindowSet): the record's window [t, t + gap) merges with
   * every session it touches; the merged window gets a new id, the merged windows' contents
   * and trigger state move into it (`onMerge`), and the trigger clears what it kept for them.
   */
  private addToSession(value: unknown, timestampMs: number, t: number, gapMs: number): void {
    const { nextId, sessions } = this.readSessions();
    let start = t;
    let end = t + gapMs;
    const merged: Session[] = [];
    const kept: Session[] = [];
    for (const w of sessions) {
      if (w.start <= end && w.end >= start) {
        merged.push(w);
        start = Math.min(start, w.start);
        end = Math.max(end, w.end);
      } else {
        kept.push(w);
      }
    }
    if (this.isLate(end)) {
      this.late(value, timestampMs);
      return;
    }
    let id = nextId;
    let next = nextId;
    const same = merged.length === 1 && merged[0]!.start === start && merged[0]!.end === end;
    if (same) id = merged[0]!.id;
    else next++;
    kept.push({ start, end, id });
    this.writeSessions(next, kept);
    if (!same && merged.length > 0) this.merge({ start, end, id }, merged);
    this.setWindow(start, end, id);
    this.addToCurrentWindow(value, timestampMs);
  }

  private merge(into: Session, merged: readonly Session[]): void {
    // Contents: the merged windows' into the new window's.
    const c = this.contents;
    let acc: unknown = undefined;
    for (const m of merged) {
      c.setCurrentNamespace(m.id);
      const v = c.getInternal();
      c.clear();
      if (v !== undefined) acc = acc === undefined ? v : this.mergeContents(acc, v);
    }
    c.setCurrentNamespace(into.id);
    if (acc !== undefined) c.updateInternal(acc);
    // The trigger: onMerge for the new window, then clear for each merged one (as Flink).
    this.setWindow(into.start, into.end, into.id);
    this.mergedNamespaces = merged.map((m) => m.id);
    try {
      this.o.trigger.onMerge!(this.window, this.mergeCtx);
    } finally {
      this.mergedNamespaces = [];
    }
    for (const m of merged) {
      this.setWindow(m.start, m.end, m.id);
      this.clearTriggerOf(true);
    }
  }

  private mergeContents(a: unknown, b: unknown): unknown {
    const fn = this.o.fn;
    if (this.o.evictor !== undefined || fn.kind === 'process') return [...(a as unknown[]), ...(b as unknown[])];
    if (fn.kind === 'reduce') return fn.reduce(a, b);
    const merge = fn.aggregate.merge;
    if (merge === undefined) throw new Error(`window operator '${this.runtime.name}': session windows need an AggregateFunction with merge(a, b)`);
    return merge(a, b);
  }

  /** The trigger's clear for the current window and whatever trigger state it left there; `merged`: also the window's cleanup timer. */
  private clearTriggerOf(merged: boolean): void {
    this.o.trigger.clear(this.window, this.triggerCtx);
    for (const st of this.triggerStates.values()) {
      st.setCurrentNamespace(this.ns);
      st.clear();
    }
    if (!merged) return;
    const key = this.backend.getCurrentKey();
    if (this.eventTime) this.timers.deleteEventTimeTimer(this.cleanupTime(), key, this.ns);
    else this.timers.deleteProcessingTimeTimer(this.cleanupTime(), key, this.ns);
  }

  private isLate(end: number): boolean {
    return this.eventTime && end - 1 + this.o.allowedLatenessMs <= this.currentWatermark;
  }

  /** As a timer's time: a lateness past the last watermark ends the window with the input. */
  private cleanupTime(): number {
    return timerTime(this.window.end - 1 + (this.eventTime ? this.o.allowedLatenessMs : 0));
  }

  private registerCleanupTimer(): void {
    if (this.o.assigner.kind === 'global') return; // never over
    const key = this.backend.getCurrentKey();
    if (this.eventTime) this.timers.registerEventTimeTimer(this.cleanupTime(), key, this.ns);
    else this.timers.registerProcessingTimeTimer(this.cleanupTime(), key, this.ns);
  }

  override onEventTime(timestampMs: number, _key: KeyType, ns: number): void {
    this.onTimer(timestampMs, ns, true);
  }

  override onProcessingTime(timestampMs: number, _key: KeyType, ns: number): void {
    this.onTimer(timestampMs, ns, false);
  }

  private onTimer(timestampMs: number, ns: number, eventTimer: boolean): void {
    const a = this.o.assigner;
    let session: Session | undefined;
    if (a.kind === 'session') {
      // A timer of a window merged away or over that its trigger did not delete: nothing to do (as Flink).
      session = this.readSessions().sessions.find((w) => w.id === ns);
      if (session === undefined) return;
      this.setWindow(session.start, session.end, ns);
    } else if (a.kind === 'global') {
      this.setWindow(GLOBAL_WINDOW.start, GLOBAL_WINDOW.end, 0);
    } else {
      this.setWindow(ns, ns + a.sizeMs, ns);
    }
    const trigger = this.o.trigger;
    this.act(eventTimer ? trigger.onEventTime(timestampMs, this.window, this.triggerCtx) : trigger.onProcessingTime(timestampMs, this.window, this.triggerCtx));
    if (eventTimer === this.eventTime && timestampMs === this.cleanupTime()) {
      this.contents.setCurrentNamespace(ns);
      this.contents.clear();
      this.clearTriggerOf(false);
      const clear = this.o.fn.process?.clear;
      if (clear !== undefined) {
        this.windowCtx.window = this.window;
        clear.call(this.o.fn.process, this.windowCtx);
      }
      if (session !== undefined) {
        const { nextId, sessions } = this.readSessions();
        this.writeSessions(nextId, sessions.filter((w) => w.id !== ns));
      }
    }
  }

  /** Fires and/or purges the current window as the trigger said. */
  private act(result: TriggerResult): void {
    if (result === 'CONTINUE') return;
    this.contents.setCurrentNamespace(this.ns);
    if (result === 'FIRE' || result === 'FIRE_AND_PURGE') this.emit();
    if (result === 'PURGE' || result === 'FIRE_AND_PURGE') {
      this.contents.setCurrentNamespace(this.ns);
      this.contents.clear();
    }
  }

  /** The window function over the current window's contents (nothing when it has none); results carry the window's last timestamp. */
  private emit(): void {
    const { start, end } = this.window;
    const fn = this.o.fn;
    const key = this.backend.getCurrentKey();
    this.collector.timestampMs = end - 1;
    this.windowCtx.window = { start, end };
    if (this.o.evictor !== undefined) {
      this.emitEvicting(key, this.o.evictor);
      return;
    }
    if (fn.kind === 'process') {
      const elements = (this.contents as ListState<unknown>).get();
      if (elements.length > 0) fn.process.process(key, this.windowCtx, elements, this.collector);
      return;
    }
    const result = (this.contents as ReducingState<unknown>).get();
    if (result === undefined) return;
    if (fn.process === undefined) this.collector.collect(result);
    else fn.process.process(key, this.windowCtx, [result], this.collector);
  }

  /** With an evictor: evict, run the window function over the records that stay, evict again, keep what is left. */
  private emitEvicting(key: KeyType, evictor: Evictor<unknown>): void {
    const list = this.contents as unknown as ListState<Stored>;
    const stored = list.get();
    if (stored.length === 0) return;
    const ctx: EvictorContext = this.triggerCtx;
    let elements: readonly TimestampedValue<unknown>[] = stored.map(([t, value]) => ({ value, timestampMs: t === NO_TIMESTAMP ? undefined : t }));
    if (evictor.evictBefore !== undefined) elements = evictor.evictBefore(elements, this.window, ctx);
    // As Flink's EvictingWindowOperator: the window function runs even when the evictor left
    // nothing (a process function gets no elements, an aggregate its empty accumulator's
    // result); a reduce of nothing, or an aggregate result of undefined, emits nothing.
    const fn = this.o.fn;
    const values = elements.map((e) => e.value);
    if (fn.kind === 'process') {
      fn.process.process(key, this.windowCtx, values, this.collector);
    } else {
      let result: unknown;
      if (fn.kind === 'reduce') {
        result = values[0];
        for (let i = 1; i < values.length; i++) result = fn.reduce(result, values[i]);
      } else {
        let acc = fn.aggregate.createAccumulator();
        for (const v of values) acc = fn.aggregate.add(v, acc);
        result = fn.aggregate.getResult(acc);
      }
      if (result !== undefined) {
        if (fn.process === undefined) this.collector.collect(result);
        else fn.process.process(key, this.windowCtx, [result], this.collector);
      }
    }
    if (evictor.evictAfter !== undefined) elements = evictor.evictAfter(elements, this.window, ctx);
    if (elements.length !== stored.length) {
      this.contents.setCurrentNamespace(this.ns);
      list.update(elements.map((e): Stored => [e.timestampMs ?? NO_TIMESTAMP, e.value]));
    }
  }

  override close(): void | Promise<void> {
    return this.o.fn.process?.close?.();
  }
}

/** Two stored values of a mergeable trigger state, combined (OnMergeContext.mergePartitionedState). */
function mergeStored(d: KeyedStateDescriptor, a: unknown, b: unknown): unknown {
  switch (d.kind) {
    case 'reducing':
      return d.reduce(a, b);
    case 'aggregating': {
      const merge = d.aggregate.merge;
      if (merge === undefined) throw new Error(`mergePartitionedState('${d.name}'): the AggregateFunction has no merge(a, b)`);
      return merge(a, b);
    }
    case 'list':
      return [...(a as unknown[]), ...(b as unknown[])];
    default:
      throw new Error(`mergePartitionedState('${d.name}'): ${d.kind} state cannot be merged; keep what must merge in reducing, aggregating or list state`);
  }
}
