import type { ReduceFunction } from '../../api/functions.js';
import { valueState, type AggregateFunction, type ValueState } from '../../api/state-descriptors.js';
import { KeyedOperator } from './keyed-operator.js';

/** Rolling reduce on a keyed stream: emits the new reduced value per record. */
export class KeyedReduceOperator<T> extends KeyedOperator<T> {
  private state!: ValueState<T>;
  constructor(private readonly fn: ReduceFunction<T>) {
    super();
  }
  protected override openKeyed(): void {
    this.state = this.backend.getOrCreateState(valueState<T>('_reduce'), false) as ValueState<T>;
  }
  processElement(value: unknown, timestampMs: number): void {
    this.setKeyOf(value);
    const current = this.state.value();
    const next = current === undefined ? (value as T) : this.fn(current, value as T);
    // A primitive the state holds already is not written again (a max that stays, a reduce
    // that keeps its first value); an object is, as it may have been changed in place.
    if (!Object.is(next, current) || (typeof next === 'object' && next !== null)) this.state.update(next);
    this.output.collect(next, timestampMs);
  }
}

/** Rolling aggregate on a keyed stream: emits the current result per record. */
export class KeyedAggregateOperator<IN, ACC, OUT> extends KeyedOperator<OUT> {
  private state!: ValueState<ACC>;
  constructor(private readonly fn: AggregateFunction<IN, ACC, OUT>) {
    super();
  }
  protected override openKeyed(): void {
    this.state = this.backend.getOrCreateState(valueState<ACC>('_aggregate'), false) as ValueState<ACC>;
  }
  processElement(value: unknown, timestampMs: number): void {
    this.setKeyOf(value);
    const current = this.state.value();
    const acc = this.fn.add(value as IN, current === undefined ? this.fn.createAccumulator() : current);
    this.state.update(acc);
    this.output.collect(this.fn.getResult(acc), timestampMs);
  }
}
