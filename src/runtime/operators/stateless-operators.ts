import type { Collector, FilterFunction, FlatMapFunction, MapFunction } from '../../api/functions.js';
import { StreamOperator } from '../task/stream-operator.js';
import { expectCondition, expectNothingReturned, expectRecord } from './synchronous-function.js';
import { TimestampedCollector } from './timestamped-collector.js';

/** Record-at-a-time operators without state: map, filter, flatMap. */

export class MapOperator<IN, OUT> extends StreamOperator<OUT> {
  constructor(private readonly fn: MapFunction<IN, OUT>) {
    super();
  }
  processElement(value: unknown, timestampMs: number): void {
    const out = this.fn(value as IN);
    if (out === undefined || out instanceof Promise) expectRecord(out, 'map function');
    this.output.collect(out, timestampMs);
  }
}

export class FilterOperator<T> extends StreamOperator<T> {
  constructor(private readonly fn: FilterFunction<T>) {
    super();
  }
  processElement(value: unknown, timestampMs: number): void {
    const keep = this.fn(value as T) as unknown;
    if (keep === true) this.output.collect(value as T, timestampMs);
    else if (keep !== false) {
      expectCondition(keep, 'filter function');
      if (keep) this.output.collect(value as T, timestampMs);
    }
  }
}

export class FlatMapOperator<IN, OUT> extends StreamOperator<OUT> {
  private collector!: TimestampedCollector<OUT>;
  constructor(private readonly fn: FlatMapFunction<IN, OUT>) {
    super();
  }
  override open(): void {
    this.collector = new TimestampedCollector(this.output);
  }
  processElement(value: unknown, timestampMs: number): void {
    this.collector.timestampMs = timestampMs;
    const r = this.fn(value as IN, this.collector as Collector<OUT>) as unknown;
    if (r !== undefined) expectNothingReturned(r, 'flatMap function');
  }
}
