import type { SingleOutputStream } from './data-stream.js';
import type { ReduceFunction } from './functions.js';

/**
 * The fields of a record that hold numbers, for `sum`, `min`, `max`, `minBy` and `maxBy`: a
 * tuple's positions (as Flink's `sum(1)`), or an object's keys (as Flink's `sum("count")`).
 */
export type NumberField<T> = T extends readonly unknown[]
  ? { [I in keyof T]: T[I] extends number ? (I extends `${infer N extends number}` ? N : never) : never }[number]
  : { [P in keyof T]-?: T[P] extends number ? P : never }[keyof T];

export type FieldAggregation = 'sum' | 'min' | 'max' | 'minBy' | 'maxBy';

/** A copy of a tuple or a plain object, so the record already emitted is never changed. */
function copy<T>(record: T): T {
  return (Array.isArray(record) ? record.slice() : { ...(record as object) }) as T;
}

/**
 * The reduce function of a field aggregation, with Flink's semantics (SumAggregator,
 * ComparableAggregator):
 * - `sum`, `min`, `max`: the first record of the key with the field replaced by the running
 *   sum, minimum or maximum (the other fields stay those of the first record);
 * - `minBy`, `maxBy`: the record with the smallest or largest field; on a tie the earlier one
 *   when `first` (the default), else the later one.
 */
export function fieldAggregation<T>(kind: FieldAggregation, field: PropertyKey, first = true): ReduceFunction<T> {
  const get = (record: T): number => {
    if (record === null || typeof record !== 'object') throw new TypeError(`${kind}(${String(field)}) needs tuples or objects; a record is ${record === null ? 'null' : typeof record}`);
    const v = (record as Record<PropertyKey, unknown>)[field];
    if (typeof v !== 'number') throw new TypeError(`${kind}(${String(field)}): the field of a record is ${v === null ? 'null' : typeof v}, not a number`);
    return v;
  };
  const set = (record: T, value: number): T => {
    const c = copy(record);
    (c as Record<PropertyKey, unknown>)[field] = value;
    return c;
  };
  switch (kind) {
    case 'sum':
      return (a, b) => set(a, get(a) + get(b));
    case 'min':
      return (a, b) => {
        const x = get(a);
        const y = get(b);
        return y < x ? set(a, y) : a;
      };
    case 'max':
      return (a, b) => {
        const x = get(a);
        const y = get(b);
        return y > x ? set(a, y) : a;
      };
    case 'minBy':
      return (a, b) => {
        const x = get(a);
        const y = get(b);
        return y < x || (!first && y === x) ? b : a;
      };
    case 'maxBy':
      return (a, b) => {
        const x = get(a);
        const y = get(b);
        return y > x || (!first && y === x) ? b : a;
      };
  }
}

/**
 * `sum`, `min`, `max`, `minBy` and `maxBy` of a stream that can reduce (keyed, windowed, count
 * windowed, all-windowed): each is a reduce with a field aggregation's function.
 */
export abstract class FieldAggregations<T> {
  abstract reduce(fn: ReduceFunction<T>): SingleOutputStream<T>;

  /** Adds the reduce of a field aggregation (a keyed stream names the operator after it). */
  protected aggregateField(_kind: FieldAggregation, fn: ReduceFunction<T>): SingleOutputStream<T> {
    return this.reduce(fn);
  }

  /** The sum of a number field (a tuple position or an object key); the other fields are those of the first record. */
  sum(field: NumberField<T>): SingleOutputStream<T> {
    return this.aggregateField('sum', fieldAggregation<T>('sum', field));
  }

  /** The minimum of a number field; the other fields are those of the first record (`minBy` keeps the whole record). */
  min(field: NumberField<T>): SingleOutputStream<T> {
    return this.aggregateField('min', fieldAggregation<T>('min', field));
  }

  /** The maximum of a number field; the other fields are those of the first record (`maxBy` keeps the whole record). */
  max(field: NumberField<T>): SingleOutputStream<T> {
    return this.aggregateField('max', fieldAggregation<T>('max', field));
  }

  /** The record with the smallest field; on a tie the earlier one, or the later with `first` false. */
  minBy(field: NumberField<T>, first = true): SingleOutputStream<T> {
    return this.aggregateField('minBy', fieldAggregation<T>('minBy', field, first));
  }

  /** The record with the largest field; on a tie the earlier one, or the later with `first` false. */
  maxBy(field: NumberField<T>, first = true): SingleOutputStream<T> {
    return this.aggregateField('maxBy', fieldAggregation<T>('maxBy', field, first));
  }
}
