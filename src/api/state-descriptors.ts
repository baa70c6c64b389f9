import type { TypeSerializer } from '../runtime/state/serializer.js';

/** When the last-access time of a state entry with TTL is refreshed. */
export type TtlUpdateType = 'OnCreateAndWrite' | 'OnReadAndWrite';
/** Whether an expired entry that was not cleaned up yet may still be returned. */
export type TtlStateVisibility = 'NeverReturnExpired' | 'ReturnExpiredIfNotCleanedUp';

/** Time-to-live of keyed state entries, in processing time (as Flink's StateTtlConfig). */
export interface StateTtlConfig {
  readonly ttlMs: number;
  readonly updateType?: TtlUpdateType;
  readonly stateVisibility?: TtlStateVisibility;
}

interface DescriptorBase<V> {
  readonly name: string;
  readonly serializer?: TypeSerializer<V> | undefined;
  readonly ttl?: StateTtlConfig | undefined;
}

export interface ValueStateDescriptor<T> extends DescriptorBase<T> {
  readonly kind: 'value';
  readonly defaultValue?: T | undefined;
}
export interface ListStateDescriptor<T> extends DescriptorBase<T> {
  readonly kind: 'list';
}
export interface MapStateDescriptor<UK, UV> extends DescriptorBase<UV> {
  readonly kind: 'map';
  readonly keySerializer?: TypeSerializer<UK> | undefined;
}
export interface ReducingStateDescriptor<T> extends DescriptorBase<T> {
  readonly kind: 'reducing';
  readonly reduce: (a: T, b: T) => T;
}
export interface AggregatingStateDescriptor<IN, ACC, OUT> extends DescriptorBase<ACC> {
  readonly kind: 'aggregating';
  readonly aggregate: AggregateFunction<IN, ACC, OUT>;
}

export type KeyedStateDescriptor =
  | ValueStateDescriptor<any>
  | ListStateDescriptor<any>
  | MapStateDescriptor<any, any>
  | ReducingStateDescriptor<any>
  | AggregatingStateDescriptor<any, any, any>;

/** Incremental aggregation: Flink's AggregateFunction. */
export interface AggregateFunction<IN, ACC, OUT> {
  createAccumulator(): ACC;
  add(value: IN, accumulator: ACC): ACC;
  getResult(accumulator: ACC): OUT;
  merge?(a: ACC, b: ACC): ACC;
}

interface Options<T> {
  serializer?: TypeSerializer<T>;
  ttl?: StateTtlConfig;
}

export function valueState<T>(name: string, options: Options<T> & { defaultValue?: T } = {}): ValueStateDescriptor<T> {
  return { kind: 'value', name: checkName(name), ...options };
}
export function listState<T>(name: string, options: Options<T> = {}): ListStateDescriptor<T> {
  return { kind: 'list', name: checkName(name), ...options };
}
export function mapState<UK, UV>(name: string, options: Options<UV> & { keySerializer?: TypeSerializer<UK> } = {}): MapStateDescriptor<UK, UV> {
  return { kind: 'map', name: checkName(name), ...options };
}
export function reducingState<T>(name: string, reduce: (a: T, b: T) => T, options: Options<T> = {}): ReducingStateDescriptor<T> {
  return { kind: 'reducing', name: checkName(name), reduce, ...options };
}
export function aggregatingState<IN, ACC, OUT>(
  name: string,
  aggregate: AggregateFunction<IN, ACC, OUT>,
  options: Options<ACC> = {},
): AggregatingStateDescriptor<IN, ACC, OUT> {
  return { kind: 'aggregating', name: checkName(name), aggregate, ...options };
}

function checkName(name: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new Error('a state descriptor needs a non-empty name');
  return name;
}

/** Keyed state handles, as in Flink. */
export interface ValueState<T> {
  value(): T | undefined;
  update(value: T | undefined): void;
  clear(): void;
}
export interface ListState<T> {
  get(): readonly T[];
  add(value: T): void;
  addAll(values: readonly T[]): void;
  update(values: readonly T[]): void;
  clear(): void;
}
export interface MapState<UK, UV> {
  get(key: UK): UV | undefined;
  put(key: UK, value: UV): void;
  putAll(entries: Iterable<readonly [UK, UV]>): void;
  remove(key: UK): void;
  contains(key: UK): boolean;
  entries(): IterableIterator<[UK, UV]>;
  keys(): IterableIterator<UK>;
  values(): IterableIterator<UV>;
  isEmpty(): boolean;
  clear(): void;
}
export interface ReducingState<T> {
  get(): T | undefined;
  add(value: T): void;
  clear(): void;
}
export interface AggregatingState<IN, OUT> {
  get(): OUT | undefined;
  add(value: IN): void;
  clear(): void;
}

/** The handle type a descriptor yields. */
export type StateOf<D> = D extends ValueStateDescriptor<infer T>
  ? ValueState<T>
  : D extends ListStateDescriptor<infer T>
    ? ListState<T>
    : D extends MapStateDescriptor<infer UK, infer UV>
      ? MapState<UK, UV>
      : D extends ReducingStateDescriptor<infer T>
        ? ReducingState<T>
        : D extends AggregatingStateDescriptor<infer IN, any, infer OUT>
          ? AggregatingState<IN, OUT>
          : never;

/** Operator (non-keyed) list state; redistributed evenly (list) or to everyone (union). */
export interface OperatorListStateDescriptor<T> {
  readonly kind: 'operator-list';
  readonly name: string;
  readonly serializer?: TypeSerializer<T> | undefined;
}
export function operatorListState<T>(name: string, options: { serializer?: TypeSerializer<T> } = {}): OperatorListStateDescriptor<T> {
  return { kind: 'operator-list', name: checkName(name), ...options };
}
