import type { OutputTag } from '../../api/output-tag.js';
import type { KeyedStateDescriptor, ListState, ReducingState, StateOf } from '../../api/state-descriptors.js';
import { aggregatingState, listState, reducingState } from '../../api/state-descriptors.js';
import type { Evictor, EvictorContext, TimestampedValue } from '../../api/evictors.js';
import type { Trigger, TriggerContext, TriggerResult } from '../../api/triggers.js';
import { NO_TIMESTAMP } from '../channel/stream-element.js';
import type { WindowContext, WindowFunctionSpec } from '../../api/window-functions.js';
import { windowStartWithOffset, type SlidingWindowAssigner, type TimeWindow } from '../../api/windows.js';
import type { KeyType } from '../state/key-group.js';
import type { InternalState } from '../state/keyed-state-backend.js';
import type { AddingInternalState } from '../state/state-handles.js';
import { keyedRuntimeContext } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { TimestampedCollector } from './timestamped-collector.js';

export interface TriggerWindowOperatorOptions {
  readonly assigner: SlidingWindowAssigner;
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
const evictingContentsName = (sizeMs: number): string => `_evicting-window-contents@size=${sizeMs}ms`;
type Stored = [number, unknown];
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
  /** The window the trigger context speaks of. */
  private window: TimeWindow = { start: 0, end: 0 };
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
      registerEventTimeTimer: (t) => op.timers.registerEventTimeTimer(t, op.backend.getCurrentKey(), op.window.start),
      registerProcessingTimeTimer: (t) => op.timers.registerProcessingTimeTimer(t, op.backend.getCurrentKey(), op.window.start),
      deleteEventTimeTimer: (t) => op.timers.deleteEventTimeTimer(t, op.backend.getCurrentKey(), op.window.start),
      deleteProcessingTimeTimer: (t) => op.timers.deleteProcessingTimeTimer(t, op.backend.getCurrentKey(), op.window.start),
      getPartitionedState: <D extends KeyedStateDescriptor>(d: D): StateOf<D> => op.triggerState(d) as unknown as StateOf<D>,
    };
    this.windowCtx = {
      window: { start: 0, end: 0 },
      currentWatermark: () => op.currentWatermark,
      currentProcessingTime: () => op.runtime.processingTime.nowMs(),
      output<X>(tag: OutputTag<X>, value: X): void {
        op.output.collectSide(tag as OutputTag<unknown>, value, this.window.end - 1);
      },
    };
  }

  protected override openKeyed(): void | Promise<void> {
    const { fn, assigner } = this.o;
    const name = contentsName(assigner.sizeMs);
    const descriptor =
      this.o.evictor !== undefined
        ? listState<Stored>(evictingContentsName(assigner.sizeMs))
        : fn.kind === 'reduce'
          ? reducingState(name, fn.reduce)
          : fn.kind === 'aggregate'
            ? aggregatingState(name, fn.aggregate)
            : listState<unknown>(name);
    const sliced = this.backend.stateNames().find((n) => n.startsWith('_window-slices'));
    if (sliced !== undefined) {
      throw new Error(
        `window operator '${this.runtime.name}': the restored state keeps sliding windows as slices (${sliced}), which a window with a trigger ` +
          '(one accumulator per window) cannot take: restore without the trigger, or stop the old job with `sluice stop --drain` first',
      );
    }
    this.contents = this.backend.getOrCreateState(descriptor, true) as unknown as Contents;
    this.collector = new TimestampedCollector(this.output);
    return fn.process?.open?.(keyedRuntimeContext(this.runtime));
  }

  private triggerState(d: KeyedStateDescriptor): Namespaced {
    let s = this.triggerStates.get(d.name);
    if (s === undefined) {
      s = this.backend.getOrCreateState({ ...d, name: TRIGGER_STATE_PREFIX + d.name }, true) as Namespaced;
      this.triggerStates.set(d.name, s);
    }
    s.setCurrentNamespace(this.window.start);
    return s;
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
    let assigned = false;
    for (let start = windowStartWithOffset(t, a.offsetMs, a.slideMs); start > t - a.sizeMs; start -= a.slideMs) {
      const end = start + a.sizeMs;
      if (this.isLate(end)) continue;
      assigned = true;
      this.window = { start, end };
      this.contents.setCurrentNamespace(start);
      (this.contents as unknown as AddingInternalState).add(this.o.evictor === undefined ? value : ([timestampMs, value] satisfies Stored));
      this.act(this.o.trigger.onElement(value, timestampMs, this.window, this.triggerCtx));
      this.registerCleanupTimer();
    }
    if (!assigned && this.isLate(t + 1)) {
      if (this.o.lateDataTag !== undefined) this.output.collectSide(this.o.lateDataTag, value, timestampMs);
      else this.numLateRecordsDropped++;
    }
  }

  private isLate(end: number): boolean {
    return this.eventTime && end - 1 + this.o.allowedLatenessMs <= this.currentWatermark;
  }

  private cleanupTime(): number {
    return this.window.end - 1 + (this.eventTime ? this.o.allowedLatenessMs : 0);
  }

  private registerCleanupTimer(): void {
    const key = this.backend.getCurrentKey();
    if (this.eventTime) this.timers.registerEventTimeTimer(this.cleanupTime(), key, this.window.start);
    else this.timers.registerProcessingTimeTimer(this.cleanupTime(), key, this.window.start);
  }

  override onEventTime(timestampMs: number, _key: KeyType, start: number): void {
    this.onTimer(timestampMs, start, true);
  }

  override onProcessingTime(timestampMs: number, _key: KeyType, start: number): void {
    this.onTimer(timestampMs, start, false);
  }

  private onTimer(timestampMs: number, start: number, eventTimer: boolean): void {
    this.window = { start, end: start + this.o.assigner.sizeMs };
    this.contents.setCurrentNamespace(start);
    const trigger = this.o.trigger;
    this.act(eventTimer ? trigger.onEventTime(timestampMs, this.window, this.triggerCtx) : trigger.onProcessingTime(timestampMs, this.window, this.triggerCtx));
    if (eventTimer === this.eventTime && timestampMs === this.cleanupTime()) {
      this.contents.setCurrentNamespace(start);
      this.contents.clear();
      trigger.clear(this.window, this.triggerCtx);
      for (const s of this.triggerStates.values()) {
        // State the trigger left behind in a window that is over is dropped with it.
        s.setCurrentNamespace(start);
        s.clear();
      }
    }
  }

  /** Fires and/or purges the current window as the trigger said. */
  private act(result: TriggerResult): void {
    if (result === 'CONTINUE') return;
    this.contents.setCurrentNamespace(this.window.start);
    if (result === 'FIRE' || result === 'FIRE_AND_PURGE') this.emit();
    if (result === 'PURGE' || result === 'FIRE_AND_PURGE') {
      this.contents.setCurrentNamespace(this.window.start);
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
    if (elements.length > 0) {
      const values = elements.map((e) => e.value);
      const fn = this.o.fn;
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
        if (fn.process === undefined) this.collector.collect(result);
        else fn.process.process(key, this.windowCtx, [result], this.collector);
      }
    }
    if (evictor.evictAfter !== undefined) elements = evictor.evictAfter(elements, this.window, ctx);
    if (elements.length !== stored.length) {
      this.contents.setCurrentNamespace(this.window.start);
      list.update(elements.map((e): Stored => [e.timestampMs ?? NO_TIMESTAMP, e.value]));
    }
  }

  override close(): void | Promise<void> {
    return this.o.fn.process?.close?.();
  }
}
