import { PrintSink } from '../connectors/print-sink.js';
import type { Partitioning } from '../runtime/channel/partitioner.js';
import { FilterOperator, FlatMapOperator, MapOperator } from '../runtime/operators/stateless-operators.js';
import { ProcessOperator } from '../runtime/operators/process-operator.js';
import { SinkOperator } from '../runtime/operators/sink-operator.js';
import { TimestampsAndWatermarksOperator } from '../runtime/operators/timestamps-and-watermarks-operator.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { StreamOperator } from '../runtime/task/stream-operator.js';
import type { Transformation } from '../graph/transformation.js';
import type { BroadcastStateDescriptor } from './broadcast-state.js';
import { AllWindowedStream } from './all-windowed-stream.js';
import { BroadcastConnectedStream, BroadcastStream } from './broadcast-stream.js';
import { CoGroupedStreams } from './co-grouped-streams.js';
import { ConnectedStreams } from './connected-streams.js';
import type { StreamExecutionEnvironment } from './environment.js';
import type { FilterFunction, FlatMapFunction, KeySelector, MapFunction, OutputTypeNotInferred, ProcessFunction, ProcessOutputNotInferred } from './functions.js';
import { JoinedStreams } from './joined-streams.js';
import { KeyedStream } from './keyed-stream.js';
import type { OutputTag } from './output-tag.js';
import type { Sink } from './sink.js';
import { CollectResultIterator, CollectResultSink } from './collect-result-iterator.js';
import type { WatermarkStrategy } from './watermark-strategy.js';
import { GlobalWindows, type WindowAssigner } from './windows.js';
import { CountTrigger, PurgingTrigger } from './triggers.js';
import { CountEvictor } from './evictors.js';

/** A stream of records of type T. Every method adds to the job graph and returns a new stream. */
export class DataStream<T> {
  /** Phantom field carrying T. */
  declare readonly __type: T;

  constructor(
    readonly env: StreamExecutionEnvironment,
    readonly transformation: Transformation,
  ) {}

  map<R>(fn: MapFunction<T, R>, name = 'Map'): SingleOutputStream<R> {
    return this.transform<R>(name, () => new MapOperator(fn));
  }

  filter<S extends T>(fn: (value: T) => value is S, name?: string): SingleOutputStream<S>;
  filter(fn: FilterFunction<T>, name?: string): SingleOutputStream<T>;
  filter(fn: FilterFunction<T>, name = 'Filter'): SingleOutputStream<T> {
    return this.transform<T>(name, () => new FilterOperator(fn));
  }

  flatMap<R = OutputTypeNotInferred<'give it as flatMap<Out>(...), or annotate out: Collector<Out>'>>(fn: FlatMapFunction<T, R>, name = 'FlatMap'): SingleOutputStream<R> {
    return this.transform<R>(name, () => new FlatMapOperator(fn));
  }

  process<R = ProcessOutputNotInferred>(fn: ProcessFunction<T, R>, name = 'Process'): SingleOutputStream<R> {
    return this.transform<R>(name, () => new ProcessOperator(fn));
  }

  /** Windows over the whole stream, without keys (Flink's windowAll): one subtask sees every record. */
  windowAll(assigner: WindowAssigner): AllWindowedStream<T> {
    // Flink's all-window operator: the keyed window operator under one constant key, on one subtask.
    return new AllWindowedStream<T>(this.keyBy(() => 0).window(assigner));
  }

  /**
   * Count windows over the whole stream, on one subtask (Flink's countWindowAll): a window per
   * `size` records, or every `slide` records the last `size`. GlobalWindows with a count
   * trigger (and a count evictor when sliding), as Flink builds them.
   */
  countWindowAll(size: number, slide?: number): AllWindowedStream<T> {
    const all = this.windowAll(GlobalWindows.create());
    return slide === undefined ? all.trigger(PurgingTrigger.of(CountTrigger.of(size))) : all.evictor(CountEvictor.of<T>(size)).trigger(CountTrigger.of(slide));
  }

  /** Partitions by key: keyed state, timers and windows exist only on the result. */
  keyBy<K extends KeyType>(keySelector: KeySelector<T, K>): KeyedStream<T, K> {
    return new KeyedStream<T, K>(this, keySelector);
  }

  union(...others: DataStream<T>[]): DataStream<T> {
    for (const o of others) if (o.env !== this.env) throw new Error('union: streams belong to different environments');
    const t = this.env.addTransformation({ kind: 'union', name: 'Union', inputs: [this.transformation, ...others.map((o) => o.transformation)] });
    return new DataStream<T>(this.env, t);
  }

  connect<U>(other: DataStream<U>): ConnectedStreams<T, U>;
  connect<U>(other: BroadcastStream<U>): BroadcastConnectedStream<T, U>;
  connect<U>(other: DataStream<U> | BroadcastStream<U>): ConnectedStreams<T, U> | BroadcastConnectedStream<T, U> {
    return other instanceof BroadcastStream ? new BroadcastConnectedStream<T, U>(this, other) : new ConnectedStreams<T, U>(this, other);
  }

  /** A window join with another stream (Flink's): `.where(key).equalTo(otherKey).window(assigner).apply((a, b) => ...)`. */
  join<U>(other: DataStream<U>): JoinedStreams<T, U> {
    return new JoinedStreams<T, U>(this, other);
  }

  /** Groups both streams by key and window (Flink's coGroup): `.where(key).equalTo(otherKey).window(assigner).apply((as, bs, out) => ...)`. */
  coGroup<U>(other: DataStream<U>): CoGroupedStreams<T, U> {
    return new CoGroupedStreams<T, U>(this, other);
  }

  assignTimestampsAndWatermarks(strategy: WatermarkStrategy<T>, name = 'Timestamps/Watermarks'): SingleOutputStream<T> {
    if (strategy.alignment !== undefined) {
      throw new Error(
        `assignTimestampsAndWatermarks: watermark alignment (group '${strategy.alignment.group}') pauses sources, so it works on a source only: ` +
          'give the strategy to env.fromSource(source, strategy, name)',
      );
    }
    // Read when the job runs, so a later env.configure(...) still applies.
    const config = this.env.config;
    return this.transform<T>(name, () => new TimestampsAndWatermarksOperator(strategy, config.getNumber('pipeline.auto-watermark-interval')));
  }

  rebalance(): DataStream<T> {
    return this.partition({ kind: 'rebalance' });
  }

  rescale(): DataStream<T> {
    return this.partition({ kind: 'rescale' });
  }

  /** Each record to a random subtask downstream, uniformly (Flink's shuffle). */
  shuffle(): DataStream<T> {
    return this.partition({ kind: 'shuffle' });
  }

  /** Every record to the first subtask downstream (Flink's global). */
  global(): DataStream<T> {
    return this.partition({ kind: 'global' });
  }

  /**
   * Each record to the subtask `partitioner(key, numPartitions)` picks for its key (Flink's
   * partitionCustom). Unlike keyBy, the result is not a keyed stream: no keyed state.
   */
  partitionCustom<K>(partitioner: (key: K, numPartitions: number) => number, keySelector: (value: T) => K): DataStream<T> {
    if (typeof partitioner !== 'function' || typeof keySelector !== 'function') throw new TypeError('partitionCustom needs a partitioner (key, numPartitions) => index and a key selector');
    return this.partition({ kind: 'custom', partitioner: partitioner as (key: never, n: number) => number, keySelector: keySelector as (value: never) => unknown });
  }

  /** Every record to every subtask downstream; with broadcast state descriptors, a stream to connect(...) to (Flink's broadcast state pattern). */
  broadcast(): DataStream<T>;
  broadcast(...descriptors: [BroadcastStateDescriptor<unknown, unknown>, ...BroadcastStateDescriptor<unknown, unknown>[]]): BroadcastStream<T>;
  broadcast(...descriptors: BroadcastStateDescriptor<unknown, unknown>[]): DataStream<T> | BroadcastStream<T> {
    const partitioned = this.partition({ kind: 'broadcast' });
    return descriptors.length === 0 ? partitioned : new BroadcastStream<T>(partitioned, descriptors);
  }

  forward(): DataStream<T> {
    return this.partition({ kind: 'forward' });
  }

  /** Ends the stream in a sink; the result only takes settings (uid, name, parallelism). */
  sinkTo(sink: Sink<T>, name = 'Sink'): DataStreamSink {
    return new DataStreamSink(this.transform<never>(name, () => new SinkOperator(sink)));
  }

  /** Prints every record on stdout, `subtask> record` when parallel; with an identifier, `identifier:subtask> record` (Flink's print). */
  print(sinkIdentifier?: string): DataStreamSink {
    return this.sinkTo(new PrintSink<T>(sinkIdentifier === undefined ? {} : { prefix: sinkIdentifier }), 'Print to Std. Out');
  }

  /** As print(), on stderr. */
  printToErr(sinkIdentifier?: string): DataStreamSink {
    return this.sinkTo(new PrintSink<T>({ stderr: true, ...(sinkIdentifier === undefined ? {} : { prefix: sinkIdentifier }) }), 'Print to Std. Err');
  }

  /**
   * Flink's executeAndCollect: adds a collect sink (parallelism 1), runs the job in this
   * process, and hands back its records. Without a limit, an async iterator that yields records
   * as they are committed (leaving the loop cancels the job); with one, a promise of the first
   * `limit` records (the job is canceled once they are in), or of all of them if the job ends
   * first. With checkpointing, records come once their checkpoint completed and exactly once
   * across restarts; without, as they arrive, and a restart fails the iterator.
   */
  executeAndCollect(jobName?: string): CollectResultIterator<T>;
  executeAndCollect(limit: number): Promise<T[]>;
  executeAndCollect(jobName: string, limit: number): Promise<T[]>;
  executeAndCollect(nameOrLimit?: string | number, limitArg?: number): CollectResultIterator<T> | Promise<T[]> {
    const jobName = typeof nameOrLimit === 'string' ? nameOrLimit : undefined;
    const limit = typeof nameOrLimit === 'number' ? nameOrLimit : limitArg;
    if (limit !== undefined && (!Number.isInteger(limit) || limit <= 0)) {
      throw new RangeError(`executeAndCollect: the limit must be a positive whole number of records, not ${String(limit)}`);
    }
    const results = new CollectResultIterator<T>();
    this.sinkTo(new CollectResultSink<T>(results), 'Collect Stream Sink').setParallelism(1);
    results.attach(this.env.executeAsync(jobName));
    return limit === undefined ? results : takeThenClose(results, limit);
  }

  protected partition(partitioning: Partitioning): DataStream<T> {
    const t = this.env.addTransformation({ kind: 'partition', name: partitioning.kind, input: this.transformation, partitioning });
    return new DataStream<T>(this.env, t);
  }

  /** Adds a one-input operator; the building block of every record-at-a-time method. */
  transform<R>(name: string, operator: () => StreamOperator, keySelector?: KeySelector<unknown, KeyType>): SingleOutputStream<R> {
    const t = this.env.addTransformation({ kind: 'one-input', name, input: this.transformation, operator, keySelector });
    return new SingleOutputStream<R>(this.env, t);
  }
}

/** A stream produced by one operator: its settings can be changed, its side outputs read. */
export class SingleOutputStream<T> extends DataStream<T> {
  /** The operator's id for state mapping across job versions; keep it stable. */
  uid(uid: string): this {
    if (!uid) throw new Error('uid must be a non-empty string');
    this.transformation.uid = uid;
    return this;
  }

  name(name: string): this {
    this.transformation.name = name;
    return this;
  }

  setParallelism(parallelism: number): this {
    if (!Number.isInteger(parallelism) || parallelism < 1) throw new RangeError(`parallelism must be an integer >= 1, got ${parallelism}`);
    const fixed = this.transformation.fixedParallelism;
    if (fixed !== undefined && parallelism !== 1) throw new Error(`cannot set the parallelism of '${this.transformation.name}' to ${parallelism}: ${fixed}`);
    this.transformation.parallelism = parallelism;
    return this;
  }

  setMaxParallelism(maxParallelism: number): this {
    if (!Number.isInteger(maxParallelism) || maxParallelism < 1 || maxParallelism > 32768) {
      throw new RangeError(`max parallelism must be an integer in [1, 32768], got ${maxParallelism}`);
    }
    this.transformation.maxParallelism = maxParallelism;
    return this;
  }

  startNewChain(): this {
    this.transformation.chaining = 'head';
    return this;
  }

  disableChaining(): this {
    this.transformation.chaining = 'never';
    return this;
  }

  getSideOutput<X>(tag: OutputTag<X>): DataStream<X> {
    const t = this.env.addTransformation({ kind: 'side-output', name: `side-output:${tag.id}`, input: this.transformation, tag: tag as OutputTag<unknown> });
    return new DataStream<X>(this.env, t);
  }
}

/** The end of a stream: a sink's settings, and nothing can follow it. */
export class DataStreamSink {
  constructor(private readonly stream: SingleOutputStream<never>) {}

  uid(uid: string): this {
    this.stream.uid(uid);
    return this;
  }

  name(name: string): this {
    this.stream.name(name);
    return this;
  }

  setParallelism(parallelism: number): this {
    this.stream.setParallelism(parallelism);
    return this;
  }

  setMaxParallelism(maxParallelism: number): this {
    this.stream.setMaxParallelism(maxParallelism);
    return this;
  }

  disableChaining(): this {
    this.stream.disableChaining();
    return this;
  }
}

async function takeThenClose<T>(results: CollectResultIterator<T>, limit: number): Promise<T[]> {
  const values: T[] = [];
  try {
    for (let r = await results.next(); !r.done; r = await results.next()) {
      values.push(r.value);
      if (values.length === limit) break;
    }
  } finally {
    await results.close();
  }
  return values;
}
