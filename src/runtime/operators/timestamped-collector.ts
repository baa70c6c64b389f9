import type { Collector } from '../../api/functions.js';
import type { Output } from '../task/output.js';

/** `out.collect(undefined)`: a record that the operators after it, sinks and the wire cannot tell from none. */
export const UNDEFINED_RECORD =
  'out.collect(undefined): a record cannot be undefined; collect a value (null is one), or do not call collect for this input (a missing return value in the collected expression?)';

/** A collector for user functions: emits with the timestamp of the record being processed. */
export class TimestampedCollector<T> implements Collector<T> {
  timestampMs = Number.NEGATIVE_INFINITY;
  constructor(private readonly output: Output<T>) {}
  collect(value: T): void {
    if (value === undefined) throw new Error(UNDEFINED_RECORD);
    this.output.collect(value, this.timestampMs);
  }
}
