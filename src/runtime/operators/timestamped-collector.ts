import type { Collector } from '../../api/functions.js';
import type { Output } from '../task/output.js';

/** A collector for user functions: emits with the timestamp of the record being processed. */
export class TimestampedCollector<T> implements Collector<T> {
  timestampMs = Number.NEGATIVE_INFINITY;
  constructor(private readonly output: Output<T>) {}
  collect(value: T): void {
    this.output.collect(value, this.timestampMs);
  }
}
