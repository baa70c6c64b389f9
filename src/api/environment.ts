import { previewValue } from '../util/preview.js';
import { ConfigError, Configuration, type ConfigValue } from '../config/configuration.js';
import { stateBackendSpec, type StateBackendType } from '../runtime/state/state-backend-factory.js';
import { buildJobGraph, type JobGraph } from '../graph/job-graph.js';
import { buildStreamGraph, type StreamGraph } from '../graph/stream-graph.js';
import type { Transformation, TransformationSettings } from '../graph/transformation.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { StreamOperator } from '../runtime/task/stream-operator.js';
import { LocalExecutor, type JobProgress, type JobResult, type LocalExecutorOptions } from '../runtime/local-executor.js';
import { DataStream, SingleOutputStream } from './data-stream.js';
import type { KeySelector } from './functions.js';
import type { Source } from './source.js';
import type { WatermarkStrategy } from './watermark-strategy.js';
import type { SourceWatermarksSpec } from '../runtime/task/source-watermarks.js';
import type { CheckpointStatsEntry } from '../runtime/checkpoint/checkpoint-stats.js';
import { SocketTextSource } from '../connectors/socket/socket-text-source.js';
import { CollectionSource } from '../connectors/collection-source.js';
import { GeneratorSource } from '../connectors/generator/generator-source.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A transformation before it gets an id and default settings. */
export type NewTransformation = DistributiveOmit<Transformation, 'id' | keyof TransformationSettings> & { name: string };

export type CheckpointingMode = 'EXACTLY_ONCE' | 'AT_LEAST_ONCE';

/** The `execution.checkpointing.*` options by their camelCase names; durations in ms or as text ("10 min"). */
export interface CheckpointingOptions {
  readonly interval?: number | string;
  readonly mode?: CheckpointingMode;
  readonly timeout?: number | string;
  readonly minPause?: number | string;
  readonly maxConcurrentCheckpoints?: number;
  readonly tolerableFailedCheckpoints?: number;
  readonly externalizedCheckpointRetention?: 'NO_EXTERNALIZED_CHECKPOINTS' | 'DELETE_ON_CANCELLATION' | 'RETAIN_ON_CANCELLATION';
  readonly unaligned?: boolean;
  readonly alignedCheckpointTimeout?: number | string;
  readonly numRetained?: number;
  readonly checkpointsAfterTasksFinish?: boolean;
  readonly incremental?: boolean;
  readonly dir?: string;
  readonly savepointDir?: string;
  readonly storage?: 'jobmanager' | 'filesystem';
  readonly dataInlineThreshold?: number | string;
}

const CHECKPOINTING_KEYS: Record<keyof CheckpointingOptions, string> = {
  interval: 'execution.checkpointing.interval',
  mode: 'execution.checkpointing.mode',
  timeout: 'execution.checkpointing.timeout',
  minPause: 'execution.checkpointing.min-pause',
  maxConcurrentCheckpoints: 'execution.checkpointing.max-concurrent-checkpoints',
  tolerableFailedCheckpoints: 'execution.checkpointing.tolerable-failed-checkpoints',
  externalizedCheckpointRetention: 'execution.checkpointing.externalized-checkpoint-retention',
  unaligned: 'execution.checkpointing.unaligned.enabled',
  alignedCheckpointTimeout: 'execution.checkpointing.aligned-checkpoint-timeout',
  numRetained: 'execution.checkpointing.num-retained',
  checkpointsAfterTasksFinish: 'execution.checkpointing.checkpoints-after-tasks-finish',
  incremental: 'execution.checkpointing.incremental',
  dir: 'execution.checkpointing.dir',
  savepointDir: 'execution.checkpointing.savepoint-dir',
  storage: 'execution.checkpointing.storage',
  dataInlineThreshold: 'execution.checkpointing.data-inline-threshold',
};

/** A running job. */
export interface JobClient {
  readonly jobId: string;
  readonly result: Promise<JobResult>;
  progress(): JobProgress;
  /** Checkpoint statistics, newest first. */
  checkpoints(): readonly CheckpointStatsEntry[];
  /** Triggers a checkpoint now (`sluice checkpoint`); resolves when it completed. */
  triggerCheckpoint(full?: boolean): Promise<{ checkpointId: number; pointer: string }>;
  cancel(): void;
}

/**
 * Where a job is assembled: sources, settings, and the graph of transformations. A job
 * module's function receives one; the runtime executes what it built.
 */
export class StreamExecutionEnvironment {
  readonly config: Configuration;
  private readonly transformations: Transformation[] = [];
  private nextId = 1;
  private definesJob = false;

  constructor(config: Configuration | Record<string, ConfigValue> = new Configuration()) {
    this.config = config instanceof Configuration ? config : new Configuration(Object.entries(config));
  }

  static create(config: Configuration | Record<string, ConfigValue> = {}): StreamExecutionEnvironment {
    return new StreamExecutionEnvironment(config);
  }

  /**
   * The environment a `defineJob` function builds into (`sluice run`, the cluster): the
   * runtime executes what it built, so executing it from inside the function is an error.
   */
  static forJobDefinition(config: Configuration): StreamExecutionEnvironment {
    const env = new StreamExecutionEnvironment(config);
    env.definesJob = true;
    return env;
  }

  setParallelism(parallelism: number): this {
    this.config.set('parallelism.default', parallelism);
    return this;
  }

  getParallelism(): number {
    return this.config.getNumber('parallelism.default');
  }

  setMaxParallelism(maxParallelism: number): this {
    this.config.set('pipeline.max-parallelism', maxParallelism);
    return this;
  }

  /**
   * The keyed state backend: `'hashmap'` (default; state as objects on the heap) or `'lmdb'`
   * (an embedded store on local disk, for state larger than memory). Same as setting
   * `state.backend.type`; docs/state.md compares them.
   */
  setStateBackend(type: StateBackendType): this {
    this.config.set('state.backend.type', type);
    return this;
  }

  /** Sets any configuration key (dotted Flink-style key). */
  configure(key: string, value: ConfigValue): this {
    this.config.set(key, value);
    return this;
  }

  /**
   * Turns on periodic checkpoints: `enableCheckpointing(1000)`, `enableCheckpointing('10 s')`,
   * `enableCheckpointing(1000, 'AT_LEAST_ONCE')` or `enableCheckpointing({ interval: 1000, minPause: 500, unaligned: true })`
   * with the camelCase names of the `execution.checkpointing.*` options.
   */
  enableCheckpointing(interval: number | string | CheckpointingOptions, mode?: CheckpointingMode): this {
    if (typeof interval !== 'number' && typeof interval !== 'string' && (typeof interval !== 'object' || interval === null || Array.isArray(interval))) {
      throw new TypeError(
        `enableCheckpointing takes an interval (milliseconds, or text such as '10 s') or an object of checkpointing options, got ${previewValue(interval, 80)}`,
      );
    }
    const options: CheckpointingOptions = typeof interval === 'number' || typeof interval === 'string' ? { interval, ...(mode === undefined ? {} : { mode }) } : interval;
    for (const [name, value] of Object.entries(options)) {
      if (value === undefined) continue;
      const key = CHECKPOINTING_KEYS[name as keyof CheckpointingOptions];
      if (key === undefined) {
        throw new ConfigError(`unknown checkpointing option '${name}'; known: ${Object.keys(CHECKPOINTING_KEYS).join(', ')}`);
      }
      this.config.set(key, value as ConfigValue);
    }
    return this;
  }

  fromSource<T>(source: Source<T, unknown>, name: string): SingleOutputStream<T>;
  /**
   * A source whose records get timestamps and watermarks in the source itself (Flink's
   * `fromSource(source, watermarkStrategy, name)`): each split the reader emits separately
   * (each Kafka partition) has watermarks of its own, and the subtask's watermark is the least
   * of them; `withIdleness` lets a split that went quiet stop holding it back.
   */
  fromSource<T>(source: Source<T, unknown>, watermarkStrategy: WatermarkStrategy<T>, name: string): SingleOutputStream<T>;
  fromSource<T>(source: Source<T, unknown>, strategyOrName: WatermarkStrategy<T> | string, maybeName?: string): SingleOutputStream<T> {
    const name = typeof strategyOrName === 'string' ? strategyOrName : (maybeName ?? 'Source');
    if (source === null || typeof source !== 'object' || typeof source.createReader !== 'function') {
      throw new TypeError(`fromSource('${name}'): not a Source (it needs createSplits and createReader)`);
    }
    let watermarks: SourceWatermarksSpec | undefined;
    if (typeof strategyOrName !== 'string') {
      if (typeof (strategyOrName as Partial<WatermarkStrategy<T>> | null)?.generator !== 'function') {
        throw new TypeError(`fromSource('${name}'): the second argument must be a WatermarkStrategy (e.g. WatermarkStrategy.forBoundedOutOfOrderness(5_000)) or the source's name`);
      }
      const config = this.config;
      watermarks = {
        strategy: strategyOrName as WatermarkStrategy<unknown>,
        autoWatermarkIntervalMs: () => config.getNumber('pipeline.auto-watermark-interval'),
        allowUnalignedSourceSplits: () => config.getBoolean('pipeline.watermark-alignment.allow-unaligned-source-splits'),
      };
    }
    const t = this.addTransformation({ kind: 'source', name, source: source as Source<unknown, unknown>, watermarks });
    return new SingleOutputStream<T>(this, t);
  }

  /** A bounded stream of the given values, for examples and tests. */
  fromElements<T>(...values: T[]): SingleOutputStream<T> {
    return this.fromCollection(values);
  }

  /** A bounded stream of the given values (Flink's fromCollection), for examples and tests. */
  fromCollection<T>(values: Iterable<T>): SingleOutputStream<T> {
    // Not through fromElements(...values): spreading a large collection overflows the stack.
    return this.fromSource(new CollectionSource<T>(Array.from(values)), 'Collection Source').setParallelism(1);
  }

  /**
   * The integers `from` to `to`, both included (Flink's fromSequence): a parallel, bounded,
   * replayable source; each subtask reads its share.
   */
  fromSequence(from: number, to: number): SingleOutputStream<number> {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from) {
      throw new RangeError(`fromSequence(${from}, ${to}): from and to must be whole numbers with from <= to`);
    }
    return this.fromSource(new GeneratorSource<number>({ generate: (i) => from + i, count: to - from + 1 }), 'Sequence Source');
  }

  /**
   * Lines of text from a TCP server (Flink's socketTextStream), for trying things out: `nc -lk
   * 9999` in one terminal, a job reading `env.socketTextStream('localhost', 9999)` in another.
   * Read by one subtask. Not replayable: after a failure the job goes on with what the server
   * sends next, so results are at most once; read from Kafka or files for anything that counts.
   */
  socketTextStream(host: string, port: number, delimiter = '\n', maxRetry = 0): SingleOutputStream<string> {
    const s = this.fromSource(new SocketTextSource({ host, port, delimiter, maxRetry }), 'Socket Stream').setParallelism(1);
    s.transformation.fixedParallelism = 'socketTextStream reads one connection, so its parallelism is 1';
    return s;
  }

  addTransformation(spec: NewTransformation): Transformation {
    const t = { ...spec, id: this.nextId++, uid: undefined, parallelism: undefined, maxParallelism: undefined, chaining: 'always' } as Transformation;
    this.transformations.push(t);
    return t;
  }

  keyedOneInput<R>(name: string, input: Transformation, operator: () => StreamOperator, keySelector: KeySelector<unknown, KeyType>): SingleOutputStream<R> {
    const t = this.addTransformation({ kind: 'one-input', name, input, operator, keySelector });
    return new SingleOutputStream<R>(this, t);
  }

  twoInput<R>(
    name: string,
    input1: Transformation,
    input2: Transformation,
    operator: () => StreamOperator,
    keySelector1: KeySelector<unknown, KeyType> | undefined,
    keySelector2: KeySelector<unknown, KeyType> | undefined,
  ): SingleOutputStream<R> {
    const t = this.addTransformation({ kind: 'two-input', name, input1, input2, operator, keySelector1, keySelector2 });
    return new SingleOutputStream<R>(this, t);
  }

  getStreamGraph(jobName = this.config.getString('pipeline.name') ?? 'Sluice Job'): StreamGraph {
    return buildStreamGraph(jobName, this.transformations, {
      parallelism: this.getParallelism(),
      maxParallelism: this.config.getOptionalNumber('pipeline.max-parallelism'),
      stateBackend: stateBackendSpec(this.config),
    });
  }

  getJobGraph(jobName?: string): JobGraph {
    return buildJobGraph(this.getStreamGraph(jobName), this.config.getBoolean('pipeline.operator-chaining.enabled'));
  }

  /** Runs the job in this process and resolves when a bounded job has finished. */
  async execute(jobName?: string): Promise<JobResult> {
    return this.executeAsync(jobName).result;
  }

  /** Starts the job in this process; the client reports progress and can cancel it. */
  executeAsync(jobName?: string, options: LocalExecutorOptions = {}): JobClient {
    if (this.definesJob) {
      throw new Error(
        'the job executes its own environment (env.execute(), executeAsync() or executeAndCollect() inside a defineJob function): ' +
          'a job module only builds the dataflow, and `sluice run` or the cluster runs it. Remove the call; ' +
          'to run a dataflow from your own code and read its results, create the environment yourself with StreamExecutionEnvironment.create()',
      );
    }
    const executor = new LocalExecutor(this.getJobGraph(jobName), this.config, options);
    const result = executor.run();
    result.catch(() => {});
    return {
      jobId: executor.jobId,
      result,
      progress: () => executor.progress(),
      checkpoints: () => executor.checkpointStats.entries(),
      triggerCheckpoint: (full) => executor.triggerCheckpoint(full),
      cancel: () => executor.cancel(),
    };
  }

  /** True once any transformation was added. */
  get isEmpty(): boolean {
    return this.transformations.length === 0;
  }
}

export { DataStream };
