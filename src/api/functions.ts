import type { BroadcastState, BroadcastStateDescriptor, ReadOnlyBroadcastState } from './broadcast-state.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { OutputTag } from './output-tag.js';
import type {
  AggregatingState,
  AggregatingStateDescriptor,
  ListState,
  ListStateDescriptor,
  MapState,
  MapStateDescriptor,
  OperatorListStateDescriptor,
  ReducingState,
  ReducingStateDescriptor,
  ValueState,
  ValueStateDescriptor,
} from './state-descriptors.js';

export interface Collector<T> {
  collect(value: T): void;
}

/**
 * The output type of a function that collects its results when TypeScript could not infer it.
 * TypeScript infers a type argument from the types of arguments and the values functions
 * return, never from calls inside a function's body, so `out.collect(x)` alone does not type
 * the stream. Rather than a stream of `unknown`, the output type is then this message, which
 * `out.collect(x)` fails to compile with: it names the fix (see docs/concepts.md, "Output types").
 */
export type OutputTypeNotInferred<Fix extends string> = `output type not inferred (TypeScript does not infer it from calls in the function's body): ${Fix}`;

/** The default output type of `process`: the fix is a type argument, or an annotated collector. */
export type ProcessOutputNotInferred = OutputTypeNotInferred<'give it as process<Out>(...), or annotate out: Collector<Out>'>;

export type MapFunction<IN, OUT> = (value: IN) => OUT;
export type FilterFunction<T> = (value: T) => boolean;
export type FlatMapFunction<IN, OUT> = (value: IN, out: Collector<OUT>) => void;
export type ReduceFunction<T> = (a: T, b: T) => T;
export type KeySelector<T, K extends KeyType> = (value: T) => K;

/** Non-keyed state of an operator subtask, redistributed on rescale. */
export interface OperatorStateStore {
  /** Split redistribution: on restore every subtask gets an even share of all entries. */
  getListState<T>(descriptor: OperatorListStateDescriptor<T>): ListState<T>;
  /** Union redistribution: on restore every subtask gets all entries of all subtasks. */
  getUnionListState<T>(descriptor: OperatorListStateDescriptor<T>): ListState<T>;
}

export interface RuntimeContext {
  readonly taskName: string;
  readonly subtaskIndex: number;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly attemptNumber: number;
  readonly operatorState: OperatorStateStore;
}

/** The runtime context of functions on keyed streams: keyed state lives here only. */
/** Keyed state of the current key (Flink's KeyedStateStore). */
export interface KeyedStateStore {
  getState<T>(descriptor: ValueStateDescriptor<T>): ValueState<T>;
  getListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
  getMapState<UK, UV>(descriptor: MapStateDescriptor<UK, UV>): MapState<UK, UV>;
  getReducingState<T>(descriptor: ReducingStateDescriptor<T>): ReducingState<T>;
  getAggregatingState<IN, ACC, OUT>(descriptor: AggregatingStateDescriptor<IN, ACC, OUT>): AggregatingState<IN, OUT>;
}

export interface KeyedRuntimeContext<K extends KeyType> extends RuntimeContext, KeyedStateStore {
  readonly keyType?: K;
}

export interface TimerService {
  currentProcessingTime(): number;
  currentWatermark(): number;
}

export interface KeyedTimerService extends TimerService {
  registerEventTimeTimer(timestampMs: number): void;
  registerProcessingTimeTimer(timestampMs: number): void;
  deleteEventTimeTimer(timestampMs: number): void;
  deleteProcessingTimeTimer(timestampMs: number): void;
}

export interface ProcessContext {
  /** The record's event timestamp, undefined when it has none. */
  timestamp(): number | undefined;
  output<X>(tag: OutputTag<X>, value: X): void;
  timerService(): TimerService;
}

export interface KeyedProcessContext<K extends KeyType> extends ProcessContext {
  getCurrentKey(): K;
  timerService(): KeyedTimerService;
}

export type TimeDomain = 'EVENT_TIME' | 'PROCESSING_TIME';

export interface OnTimerContext<K extends KeyType> extends KeyedProcessContext<K> {
  timeDomain(): TimeDomain;
}

/**
 * Checkpoint hooks of a function (Flink's CheckpointedFunction and CheckpointListener):
 * `snapshotState` runs at the barrier (a returned promise must settle before the checkpoint
 * is acknowledged), the notifications when the checkpoint completed or was aborted.
 */
export interface CheckpointListener {
  snapshotState?: (checkpointId: number) => void | Promise<void>;
  notifyCheckpointComplete?: (checkpointId: number) => void | Promise<void>;
  notifyCheckpointAborted?: (checkpointId: number) => void | Promise<void>;
}

/** Properties, not methods, so a function's `open` is checked strictly against its context type. */
interface Lifecycle<C> extends CheckpointListener {
  open?: (ctx: C) => void | Promise<void>;
  close?: () => void | Promise<void>;
}

/**
 * Hands the results of one asynchronous call back to its operator (Flink's ResultFuture).
 * Callable from any callback; only the first `complete` or `completeExceptionally` counts.
 */
export interface ResultFuture<in OUT> {
  /** The call's results: zero or more records, emitted with the input record's timestamp. */
  complete(results: Iterable<OUT>): void;
  /** The call failed: the job fails (and restarts by its restart strategy) unless a retry strategy retries it. */
  completeExceptionally(error: unknown): void;
}

/**
 * A function that calls an external system without blocking (Flink's AsyncFunction), for
 * AsyncDataStream.orderedWait / unorderedWait. `asyncInvoke` starts the call for one record
 * and completes `resultFuture` when it is done; a promise it returns that rejects fails the
 * call. Records whose calls are under way go into checkpoints and are called again on
 * recovery, so a call must be safe to repeat (a lookup, an idempotent write).
 */
export interface AsyncFunction<in IN, out OUT> extends Lifecycle<RuntimeContext> {
  asyncInvoke(input: IN, resultFuture: ResultFuture<OUT>): void | Promise<void>;
  /** The call did not complete within the timeout; without this method the job fails with an AsyncTimeoutError. */
  timeout?(input: IN, resultFuture: ResultFuture<OUT>): void | Promise<void>;
}

export interface ProcessFunction<in IN, out OUT> extends Lifecycle<RuntimeContext> {
  processElement(value: IN, ctx: ProcessContext, out: Collector<OUT>): void;
}

export interface KeyedProcessFunction<in K extends KeyType, in IN, out OUT> extends Lifecycle<KeyedRuntimeContext<K>> {
  processElement(value: IN, ctx: KeyedProcessContext<K>, out: Collector<OUT>): void;
  onTimer?(timestampMs: number, ctx: OnTimerContext<K>, out: Collector<OUT>): void;
}

export interface CoProcessFunction<in IN1, in IN2, out OUT> extends Lifecycle<RuntimeContext> {
  processElement1(value: IN1, ctx: ProcessContext, out: Collector<OUT>): void;
  processElement2(value: IN2, ctx: ProcessContext, out: Collector<OUT>): void;
}

export interface KeyedCoProcessFunction<in K extends KeyType, in IN1, in IN2, out OUT> extends Lifecycle<KeyedRuntimeContext<K>> {
  processElement1(value: IN1, ctx: KeyedProcessContext<K>, out: Collector<OUT>): void;
  processElement2(value: IN2, ctx: KeyedProcessContext<K>, out: Collector<OUT>): void;
  onTimer?(timestampMs: number, ctx: OnTimerContext<K>, out: Collector<OUT>): void;
}

/** The context of a record of the non-broadcast input: broadcast state to read. */
export interface BroadcastReadOnlyContext extends ProcessContext {
  getBroadcastState<BK, BV>(descriptor: BroadcastStateDescriptor<BK, BV>): ReadOnlyBroadcastState<BK, BV>;
}

/** The context of a record of the broadcast input: broadcast state to write (no key: it reaches every subtask). */
export interface BroadcastContext extends ProcessContext {
  getBroadcastState<BK, BV>(descriptor: BroadcastStateDescriptor<BK, BV>): BroadcastState<BK, BV>;
}

/**
 * The context of a broadcast record in a KeyedBroadcastProcessFunction: broadcast state to
 * write, and `applyToKeyedState` (Flink's), which calls `fn` for every key of this subtask
 * with an entry in the keyed state, with that key current (read, update or clear its state).
 */
export interface KeyedBroadcastContext<K extends KeyType> extends BroadcastContext {
  applyToKeyedState<T>(descriptor: ValueStateDescriptor<T>, fn: (key: K, state: ValueState<T>) => void): void;
  applyToKeyedState<T>(descriptor: ListStateDescriptor<T>, fn: (key: K, state: ListState<T>) => void): void;
  applyToKeyedState<UK, UV>(descriptor: MapStateDescriptor<UK, UV>, fn: (key: K, state: MapState<UK, UV>) => void): void;
  applyToKeyedState<T>(descriptor: ReducingStateDescriptor<T>, fn: (key: K, state: ReducingState<T>) => void): void;
  applyToKeyedState<IN, ACC, OUT>(descriptor: AggregatingStateDescriptor<IN, ACC, OUT>, fn: (key: K, state: AggregatingState<IN, OUT>) => void): void;
}

export interface KeyedBroadcastReadOnlyContext<K extends KeyType> extends KeyedProcessContext<K> {
  getBroadcastState<BK, BV>(descriptor: BroadcastStateDescriptor<BK, BV>): ReadOnlyBroadcastState<BK, BV>;
}

export interface KeyedBroadcastOnTimerContext<K extends KeyType> extends OnTimerContext<K> {
  getBroadcastState<BK, BV>(descriptor: BroadcastStateDescriptor<BK, BV>): ReadOnlyBroadcastState<BK, BV>;
}

/** `stream.connect(broadcastStream).process(fn)` (Flink's BroadcastProcessFunction). */
export interface BroadcastProcessFunction<in IN1, in IN2, out OUT> extends Lifecycle<RuntimeContext> {
  processElement(value: IN1, ctx: BroadcastReadOnlyContext, out: Collector<OUT>): void;
  processBroadcastElement(value: IN2, ctx: BroadcastContext, out: Collector<OUT>): void;
}

/** `keyedStream.connect(broadcastStream).process(fn)` (Flink's KeyedBroadcastProcessFunction): keyed state and timers on the keyed input. */
export interface KeyedBroadcastProcessFunction<in K extends KeyType, in IN1, in IN2, out OUT> extends Lifecycle<KeyedRuntimeContext<K>> {
  processElement(value: IN1, ctx: KeyedBroadcastReadOnlyContext<K>, out: Collector<OUT>): void;
  processBroadcastElement(value: IN2, ctx: KeyedBroadcastContext<K>, out: Collector<OUT>): void;
  onTimer?(timestampMs: number, ctx: KeyedBroadcastOnTimerContext<K>, out: Collector<OUT>): void;
}

/** The context of one joined pair of an interval join (Flink's ProcessJoinFunction.Context). */
export interface ProcessJoinContext {
  /** The left record's event timestamp. */
  getLeftTimestamp(): number;
  /** The right record's event timestamp. */
  getRightTimestamp(): number;
  /** The result's timestamp: the larger of the two. */
  getTimestamp(): number;
  output<X>(tag: OutputTag<X>, value: X): void;
}

/**
 * `keyedA.intervalJoin(keyedB).between(lowerMs, upperMs).process(fn)` (Flink's
 * ProcessJoinFunction): called once for every pair of records with the same key whose right
 * timestamp lies in [left + lowerMs, left + upperMs]. The open context has the join's keyed state.
 */
export interface ProcessJoinFunction<in IN1, in IN2, out OUT> extends Lifecycle<KeyedRuntimeContext<KeyType>> {
  processElement(left: IN1, right: IN2, ctx: ProcessJoinContext, out: Collector<OUT>): void;
}
