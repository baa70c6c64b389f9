import type { Collector, FilterFunction, FlatMapFunction, MapFunction } from '../../api/functions.js';
import { StreamOperator } from '../task/stream-operator.js';
import { TimestampedCollector } from './timestamped-collector.js';

/** Record-at-a-time operators without state: map, filter, flatMap. */

export class MapOperator<IN, OUT> extends StreamOperator<OUT> {
  constructor(private readonly fn: MapFunction<IN, OUT>) {
    super();
  }
  processElement(value: unknown, timestampMs: number): void {
    this.output.collect(this.fn(value as IN), timestampMs);
  }
}

export class FilterOperator<T> extends StreamOperator<T> {
  constructor(private readonly fn: FilterFunction<T>) {
    super();
  }
  processElement(value: unknown, timestampMs: number): void {
    if (this.fn(value as T)) this.output.collect(value as T, timestampMs);
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
    this.fn(value as IN, this.collector as Collector<OUT>);
  }
}
