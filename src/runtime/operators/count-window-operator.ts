import type { OutputTag } from '../../api/output-tag.js';
import { listState, valueState, type ListState, type ValueState } from '../../api/state-descriptors.js';
import type { WindowContext, WindowFunctionSpec } from '../../api/window-functions.js';
import { maxTimestamp, type TimeWindow } from '../../api/windows.js';
import { MAX_WATERMARK, MIN_WATERMARK } from '../channel/stream-element.js';
import { globalStateStore, keyedRuntimeContext, windowStateStore } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { TimestampedCollector } from './timestamped-collector.js';

/**
 * Flink's GlobalWindow as a window context sees it: every record of a key, from the first
 * timestamp to the last; results carry its max timestamp, as in Flink.
 */
export const GLOBAL_WINDOW: TimeWindow = Object.freeze({ start: MIN_WATERMARK, end: MAX_WATERMARK });

export interface CountWindowOperatorOptions {
  readonly size: number;
  readonly slide: number;
  readonly fn: WindowFunctionSpec;
}

/** Keyed state of a count window: tumbling windows keep their running accumulator, sliding ones their records since the last `size` at the previous firing. */
const COUNT_WINDOW_ACCUMULATOR = '_count-window-accumulator';
const COUNT_WINDOW_ELEMENTS = '_count-window-elements';
/** Records of the key since the window last fired. */
const COUNT_WINDOW_COUNT = '_count-window-count';

/**
 * Count windows of a keyed stream (Flink's `countWindow`: GlobalWindows with a CountTrigger,
 * and a CountEvictor when sliding). Tumbling (`slide === size`): the window fires with every
 * `size`-th record of a key and starts over; reduce and aggregate keep one accumulator. Sliding:
 * every `slide` records of a key, the window fires with that key's last `size` records (fewer
 * before there were `size`). A key's records that never fill a window are not emitted (the
 * global window never ends), as in Flink.
 */
export class CountWindowOperator extends KeyedOperator<unknown> {
  private count!: ValueState<number>;
  private accumulator: ValueState<unknown> | undefined;
  private elements: ListState<unknown> | undefined;
  private collector!: TimestampedCollector<unknown>;
  private readonly windowCtx: WindowContext;
  private readonly fn: WindowFunctionSpec;

  constructor(private readonly o: CountWindowOperatorOptions) {
    super();
    const fn = o.fn;
    this.fn = fn.process === undefined ? fn : ({ ...fn, process: perSubtask(fn.process) } as WindowFunctionSpec);
    if (this.fn.process !== undefined) this.userFunction = this.fn.process as never;
    const op = this;
    this.windowCtx = {
      window: GLOBAL_WINDOW,
      currentWatermark: () => op.currentWatermark,
      currentProcessingTime: () => op.runtime.processingTime.nowMs(),
      output<X>(tag: OutputTag<X>, value: X): void {
        op.output.collectSide(tag as OutputTag<unknown>, value, maxTimestamp(GLOBAL_WINDOW));
      },
      windowState: () => windowStateStore(op.runtime, () => GLOBAL_WINDOW.start),
      globalState: () => globalStateStore(op.runtime),
    };
  }

  protected override openKeyed(): void | Promise<void> {
    const b = this.backend;
    this.count = b.getOrCreateState(valueState<number>(COUNT_WINDOW_COUNT), false) as ValueState<number>;
    // Tumbling reduce/aggregate: a running accumulator; otherwise the records themselves.
    if (this.o.slide === this.o.size && this.fn.kind !== 'process') this.accumulator = b.getOrCreateState(valueState<unknown>(COUNT_WINDOW_ACCUMULATOR), false) as ValueState<unknown>;
    else this.elements = b.getOrCreateState(listState<unknown>(COUNT_WINDOW_ELEMENTS), false) as ListState<unknown>;
    this.collector = new TimestampedCollector(this.output);
    this.collector.timestampMs = maxTimestamp(GLOBAL_WINDOW);
    return this.fn.process?.open?.(keyedRuntimeContext(this.runtime));
  }

  processElement(value: unknown): void {
    this.setKeyOf(value);
    const n = (this.count.value() ?? 0) + 1;
    const { size, slide } = this.o;
    if (this.accumulator !== undefined) {
      const fn = this.fn as Exclude<WindowFunctionSpec, { kind: 'process' }>;
      const acc = this.accumulator.value();
      const next = fn.kind === 'reduce' ? (acc === undefined ? value : fn.reduce(acc, value)) : fn.aggregate.add(value, acc === undefined ? fn.aggregate.createAccumulator() : acc);
      if (n < size) {
        this.accumulator.update(next);
        this.count.update(n);
        return;
      }
      this.accumulator.clear();
      this.count.clear();
      this.emit(fn.kind === 'reduce' ? next : fn.aggregate.getResult(next), true);
      return;
    }
    const elements = this.elements!;
    elements.add(value);
    if (n < slide) {
      this.count.update(n);
      return;
    }
    this.count.clear();
    let records = elements.get();
    if (slide === size) {
      elements.clear();
    } else if (records.length > size) {
      // The evictor, at the firing (as Flink's CountEvictor): the last `size` records stay, so
      // the state holds at most size + slide - 1 between firings.
      records = records.slice(records.length - size);
      elements.update(records);
    }
    this.fire(records);
  }

  /** The window function over the window's records. */
  private fire(records: readonly unknown[]): void {
    const fn = this.fn;
    switch (fn.kind) {
      case 'process':
        this.emit(records, false);
        return;
      case 'reduce': {
        let acc = records[0];
        for (let i = 1; i < records.length; i++) acc = fn.reduce(acc, records[i]);
        this.emit(acc, true);
        return;
      }
      case 'aggregate': {
        let acc = fn.aggregate.createAccumulator();
        for (const r of records) acc = fn.aggregate.add(r, acc);
        this.emit(fn.aggregate.getResult(acc), true);
        return;
      }
    }
  }

  /** Emits a result (`single`) or hands the records to the process function. */
  private emit(result: unknown, single: boolean): void {
    const process = this.fn.process;
    if (process === undefined) {
      this.collector.collect(result);
      return;
    }
    process.process(this.backend.getCurrentKey(), this.windowCtx, single ? [result] : (result as readonly unknown[]), this.collector);
  }
}
