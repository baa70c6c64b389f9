import type { MessageRecord } from '@platformatic/kafka';
import type { Sink, SinkWriter, SinkWriterContext } from '../../api/sink.js';
import zlib from 'node:zlib';
import { KafkaCluster, parseBootstrap } from './kafka-cluster.js';
import type { KafkaConnectionOptions, TopicInfo } from './kafka-types.js';
import {
  CONNECTION_OPTION_NAMES,
  INT32_MAX,
  checkConnectionOptions,
  checkDeadLetterOption,
  checkFunctionOption,
  checkNumberOption,
  checkOneOf,
  checkOptionsObject,
  checkStringOption,
  describeValue,
} from './kafka-options.js';
import { checkKnownOptions } from '../../util/known-options.js';
import {
  abortLingeringTransactions,
  brokerTransactionMaxTimeoutMs,
  endTransaction,
  initTransactionalProducer,
  transactionalIdOf,
  type ProducerIdentity,
} from './kafka-transactions.js';
import type { PreparedTransaction } from './kafka-types.js';
import { deadLetterEnvelope, deadLetterHeaders } from './dead-letter.js';
import { partitionForKey } from './partitioner.js';
import { RecordSender } from './record-sender.js';
import { processLogger, type LogFields, type LogLevel } from '../../util/logger.js';
import type { Compression } from './kafka-types.js';
import { resolveSerializer, type Serializer, type SerializerSpec } from './serde.js';
import { checkTransactionTimeout } from './transaction-timeout-check.js';
import { NonRecoverableError } from '../../runtime/recovery/non-recoverable-error.js';

export type DeliveryGuarantee = 'none' | 'at-least-once' | 'exactly-once';

export interface KafkaSinkOptions<T, K = never, V = T> extends KafkaConnectionOptions {
  /** The topic of every record, or a function choosing it per record. The topics must exist. */
  readonly topic: string | ((value: T) => string);
  /**
   * Flink's DeliveryGuarantee (default 'none'): 'none' sends records as they come;
   * 'at-least-once' also waits at every barrier until the broker acknowledged all records
   * before it; 'exactly-once' writes a Kafka transaction per subtask and checkpoint, committed
   * when the checkpoint completes (readers must use isolation.level=read_committed).
   */
  readonly deliveryGuarantee?: DeliveryGuarantee;
  /** Prefix of the transactional ids (`<prefix>-<subtask>-<checkpointId>`); required for 'exactly-once', unique per job writing to a cluster. */
  readonly transactionalIdPrefix?: string;
  /** Kafka's `transaction.timeout.ms`: an integer number of milliseconds in [1, 2147483647] (default 900 000, the brokers' default maximum). */
  readonly transactionTimeoutMs?: number;
  /** The record key, taken from the value (default: no key). */
  readonly key?: (value: T) => K;
  /** How the key becomes bytes: 'string', 'json', 'bytes' or a function (default 'string'). */
  readonly keySerializer?: SerializerSpec<K>;
  /** The record value, taken from the element (default: the element itself). */
  readonly value?: (value: T) => V;
  /** How the value becomes bytes: 'string', 'json', 'bytes' or a function (default: strings as UTF-8, Buffers as they are, anything else as JSON). */
  readonly valueSerializer?: SerializerSpec<V>;
  /** The partition of a record (default: murmur2 of the key like Kafka's producer; records without key round-robin). */
  readonly partition?: (value: T, partitions: number) => number;
  readonly headers?: (value: T) => Readonly<Record<string, string | Buffer>>;
  /**
   * Where an element goes when it cannot be made into a record (the key, value, topic, partition
   * or headers function or a serializer throws), instead of failing the job (the default, naming
   * the element). `{ topic }`: a JSON envelope `{"error": "...", "record": <the element>}` is
   * written to that topic (it must exist) with a `sluice.dlq.error` header, through the same
   * producer: with 'exactly-once' inside the same transaction, so dead letters are exactly-once
   * too. A function: called with the element and the error (awaited before the next element;
   * at-least-once after failures).
   */
  readonly deadLetter?: { readonly topic: string } | ((value: T, error: Error) => void | Promise<void>);
  /** Records per produce round: an integer >= 1 (default 2000). */
  readonly batchRecordsMax?: number;
  /**
   * Kafka's `linger.ms`: how long a record may wait in the writer for its produce round to fill
   * before the round is sent anyway, in milliseconds >= 0 (default 5, Kafka 4.0's default).
   */
  readonly lingerMs?: number;
  /** 'none' (default), 'gzip', 'snappy', 'lz4' or 'zstd' (zstd needs Node.js 22.15 or later). */
  readonly compression?: Compression;
  /** Where the sink reports what it did on start (aborted lingering transactions) and brokers it cannot reach yet; default stderr. */
  readonly log?: (message: string) => void;
}

/** What an exactly-once writer keeps in a checkpoint. */
export interface KafkaSinkWriterState {
  readonly v: 1;
  readonly transactionalIdPrefix: string;
  readonly subtask: number;
  readonly parallelism: number;
  /** The checkpoint this state belongs to. */
  readonly checkpointId: number;
  /** Pre-committed transactions waiting for their checkpoint to complete, oldest first. */
  readonly pending: readonly { readonly checkpointId: number; readonly txn: PreparedTransaction }[];
}

/** Job timings the runtime may hand a sink writer (see SinkWriterContext). */
interface TimingContext {
  readonly checkpointTimeoutMs?: number;
  readonly restartDelayMsMax?: number;
}

const DEFAULT_TRANSACTION_TIMEOUT_MS = 900_000;

/**
 * Flink's KafkaSink. Exactly-once: each subtask writes the records between two barriers in a
 * transaction with transactional id `<prefix>-<subtask>-<n>` (n: the id of the checkpoint after
 * the previous barrier; the first after a restore of checkpoint c is c+1). At the barrier the
 * transaction is flushed and its (transactionalId, producerId, epoch) kept in the checkpoint;
 * when the checkpoint completes it commits with EndTxn. After a restore the pre-committed
 * transactions in state commit with EndTxn and the saved producer id and epoch (never
 * InitProducerId, which would abort them), and transactions of the prefix left open by the
 * failed run are aborted. The transaction timeout is checked at start against the brokers'
 * maximum and the job's checkpoint timeout plus restart delay.
 */
export class KafkaSink<T, K = never, V = T> implements Sink<T> {
  readonly deliveryGuarantee: DeliveryGuarantee;
  readonly transactionTimeoutMs: number;

  /** Checks every option (a bad one fails here, naming it, the value and what is accepted, instead of in every restart's writer). */
  constructor(readonly options: KafkaSinkOptions<T, K, V>) {
    checkSinkOptions(options);
    this.deliveryGuarantee = options.deliveryGuarantee ?? 'none';
    this.transactionTimeoutMs = options.transactionTimeoutMs ?? DEFAULT_TRANSACTION_TIMEOUT_MS;
    if (this.deliveryGuarantee === 'exactly-once') {
      const prefix = options.transactionalIdPrefix;
      if (prefix === undefined || prefix.length === 0) {
        throw new Error("kafka sink: deliveryGuarantee 'exactly-once' needs a transactionalIdPrefix, unique to this job among the jobs writing to the cluster");
      }
      const problem = checkTransactionTimeout({ transactionTimeoutMs: this.transactionTimeoutMs, brokerMaxTimeoutMs: undefined, checkpointTimeoutMs: undefined, restartDelayMsMax: undefined });
      if (problem !== undefined) throw new Error(problem);
    }
  }

  async createWriter(ctx: SinkWriterContext, restoredState: readonly unknown[]): Promise<SinkWriter<T>> {
    const cluster = new KafkaCluster({ ...this.options, clientId: this.options.clientId ?? `sluice-sink-${ctx.subtaskIndex}`, log: (m) => this.log(m, 'warn', { subtask: ctx.subtaskIndex }) });
    try {
      // A fixed topic that does not exist fails the writer's opening, not its first record: the
      // attempt fails before it runs (`sluice run --detached` reports it). Its metadata stays cached.
      if (typeof this.options.topic === 'string') await cluster.topic(this.options.topic);
      const router = new RecordRouter(this.options, cluster);
      if (this.deliveryGuarantee !== 'exactly-once' || ctx.checkpointing !== true) {
        if (this.deliveryGuarantee === 'exactly-once') {
          // Without checkpoints there is nothing to commit with: one transaction for the whole input.
          return await TransactionalWriter.create(this, ctx, cluster, router, restoredState);
        }
        return new PlainWriter(cluster, router, this.senderOptions(), this.deliveryGuarantee === 'at-least-once');
      }
      return await TransactionalWriter.create(this, ctx, cluster, router, restoredState);
    } catch (e) {
      await cluster.close();
      throw e;
    }
  }

  /** @internal */
  senderOptions(): { batchRecordsMax: number; lingerMs: number; compression: Compression; produceTimeoutMs: number } {
    return {
      batchRecordsMax: this.options.batchRecordsMax ?? 2000,
      lingerMs: this.options.lingerMs ?? 5,
      compression: this.options.compression ?? 'none',
      produceTimeoutMs: this.options.requestTimeoutMs ?? 30_000,
    };
  }

  /** @internal */
  log(message: string, level: LogLevel = 'info', fields: LogFields = {}): void {
    if (this.options.log !== undefined) this.options.log(message);
    else processLogger('sluice')[level](message, fields);
  }
}

const SINK = 'kafka sink';
const COMPRESSIONS: readonly Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

const SINK_OPTION_NAMES = {
  ...CONNECTION_OPTION_NAMES,
  topic: true,
  deliveryGuarantee: true,
  transactionalIdPrefix: true,
  transactionTimeoutMs: true,
  key: true,
  keySerializer: true,
  value: true,
  valueSerializer: true,
  partition: true,
  headers: true,
  deadLetter: true,
  batchRecordsMax: true,
  lingerMs: true,
  compression: true,
} as const satisfies Record<keyof KafkaSinkOptions<unknown>, true>;

function checkSinkOptions<T, K, V>(o: KafkaSinkOptions<T, K, V>): void {
  checkOptionsObject(SINK, o);
  checkKnownOptions(SINK, o, SINK_OPTION_NAMES);
  parseBootstrap(o.bootstrapServers, SINK);
  checkConnectionOptions(SINK, o);
  if (typeof o.topic !== 'function' && (typeof o.topic !== 'string' || o.topic.length === 0)) {
    throw new Error(`${SINK}: topic is required: a topic name or a function (element) => topic name, got ${describeValue(o.topic)}`);
  }
  checkOneOf(SINK, 'deliveryGuarantee', o.deliveryGuarantee, ['none', 'at-least-once', 'exactly-once']);
  checkStringOption(SINK, 'transactionalIdPrefix', o.transactionalIdPrefix, 'the prefix of the transactional ids, unique to this job');
  checkNumberOption(SINK, 'transactionTimeoutMs', o.transactionTimeoutMs, { min: 1, max: INT32_MAX, integer: true, unit: 'milliseconds' });
  checkFunctionOption(SINK, 'key', o.key, '(element) => key');
  resolveSerializer(o.keySerializer, 'string', SINK, 'keySerializer');
  checkFunctionOption(SINK, 'value', o.value, '(element) => value');
  resolveSerializer(o.valueSerializer, 'json', SINK, 'valueSerializer');
  checkFunctionOption(SINK, 'partition', o.partition, '(element, partitions) => partition');
  checkFunctionOption(SINK, 'headers', o.headers, '(element) => ({ name: string | Buffer })');
  checkDeadLetterOption(SINK, o.deadLetter, '(element, error) => void | Promise<void>');
  checkNumberOption(SINK, 'batchRecordsMax', o.batchRecordsMax, { min: 1, integer: true, unit: 'records' });
  checkNumberOption(SINK, 'lingerMs', o.lingerMs, { min: 0, max: INT32_MAX, integer: true, unit: 'milliseconds' });
  checkOneOf(SINK, 'compression', o.compression, COMPRESSIONS);
  if (o.compression === 'zstd' && typeof (zlib as { zstdCompressSync?: unknown }).zstdCompressSync !== 'function') {
    throw new Error(`${SINK}: compression 'zstd' needs Node.js 22.15 or later (this is ${process.version}); use 'gzip', 'snappy' or 'lz4', or upgrade Node.js`);
  }
}

function previewElement(v: unknown): string {
  let s: string;
  try {
    s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

function defaultValueSerializer(v: unknown): Buffer | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return Buffer.from(JSON.stringify(v), 'utf8');
}

/** Turns elements into Kafka records: topic, key, value, partition, headers, timestamp. */
class RecordRouter<T, K, V> {
  private readonly keySerializer: Serializer<K>;
  private readonly valueSerializer: Serializer<V>;
  private roundRobin = 0;
  private deadLetterRoundRobin = 0;

  constructor(
    private readonly o: KafkaSinkOptions<T, K, V>,
    private readonly cluster: KafkaCluster,
  ) {
    this.keySerializer = resolveSerializer<K>(o.keySerializer, 'string');
    this.valueSerializer = o.valueSerializer === undefined ? (defaultValueSerializer as Serializer<V>) : resolveSerializer<V>(o.valueSerializer, 'json');
  }

  /**
   * The record, at once when the topic's metadata is known, else after looking it up;
   * `undefined` when the element went to a dead-letter function instead.
   */
  route(value: T, timestampMs: number | undefined): MessageRecord | undefined | Promise<MessageRecord | undefined> {
    let topic: string;
    try {
      topic = typeof this.o.topic === 'function' ? this.o.topic(value) : this.o.topic;
    } catch (e) {
      return this.deadLetter(value, e, undefined);
    }
    const info = this.cluster.cachedTopic(topic);
    if (info !== undefined) return this.buildOrDeadLetter(value, timestampMs, topic, info);
    return this.cluster.topic(topic).then((i) => this.buildOrDeadLetter(value, timestampMs, topic, i));
  }

  private buildOrDeadLetter(value: T, timestampMs: number | undefined, topic: string, info: TopicInfo): MessageRecord | undefined | Promise<MessageRecord | undefined> {
    try {
      return this.build(value, timestampMs, topic, info);
    } catch (e) {
      return this.deadLetter(value, e, topic);
    }
  }

  /** An element that cannot become a record: to the dead-letter output, or an error naming it. */
  private deadLetter(value: T, cause: unknown, topic: string | undefined): MessageRecord | undefined | Promise<MessageRecord | undefined> {
    const error = new Error(
      `kafka sink: cannot make a record of ${previewElement(value)}${topic === undefined ? '' : ` for topic '${topic}'`}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    const target = this.o.deadLetter;
    if (target === undefined) throw error;
    if (typeof target === 'function') {
      const r = target(value, error);
      return r instanceof Promise ? r.then(() => undefined) : undefined;
    }
    const make = (info: TopicInfo): MessageRecord => ({
      topic: target.topic,
      partition: this.deadLetterRoundRobin++ % info.partitions.length,
      value: deadLetterEnvelope(value, error),
      headers: new Map([...deadLetterHeaders(undefined, error), ...(topic === undefined ? [] : [['sluice.dlq.target.topic', topic] as [string, string]])].map(([k, v]) => [Buffer.from(k, 'utf8'), Buffer.from(v, 'utf8')])),
      timestamp: BigInt(Date.now()),
    });
    const info = this.cluster.cachedTopic(target.topic);
    return info !== undefined ? make(info) : this.cluster.topic(target.topic).then(make);
  }

  private build(value: T, timestampMs: number | undefined, topic: string, info: TopicInfo): MessageRecord {
    const key = this.o.key === undefined ? undefined : this.keySerializer(this.o.key(value));
    const v = this.valueSerializer(this.o.value === undefined ? (value as unknown as V) : this.o.value(value));
    const n = info.partitions.length;
    let partition: number;
    if (this.o.partition !== undefined) {
      partition = this.o.partition(value, n);
      if (!Number.isInteger(partition) || partition < 0 || partition >= n) throw new Error(`kafka sink: partition function returned ${partition} for topic '${topic}', which has ${n} partitions`);
    } else if (key !== undefined) {
      partition = partitionForKey(key, n);
    } else {
      partition = this.roundRobin++ % n;
    }
    const record: MessageRecord = { topic, partition, value: v as Buffer, timestamp: BigInt(Math.trunc(timestampMs ?? Date.now())) };
    if (key !== undefined) record.key = key;
    if (this.o.headers !== undefined) {
      const h = this.o.headers(value);
      record.headers = new Map(Object.entries(h).map(([k, x]) => [Buffer.from(k, 'utf8'), typeof x === 'string' ? Buffer.from(x, 'utf8') : x]));
    }
    return record;
  }
}

/** 'none' and 'at-least-once': one sender for the writer's lifetime; at-least-once flushes at every barrier. */
class PlainWriter<T, K, V> implements SinkWriter<T> {
  private readonly sender: RecordSender;

  constructor(
    private readonly cluster: KafkaCluster,
    private readonly router: RecordRouter<T, K, V>,
    options: { batchRecordsMax: number; lingerMs: number; compression: Compression; produceTimeoutMs: number },
    private readonly flushAtBarrier: boolean,
  ) {
    this.sender = new RecordSender(cluster, options);
  }

  /** A write still waiting for its topic's metadata or a dead-letter function (a barrier of a chained source can come meanwhile). */
  private pendingWrite: Promise<unknown> | undefined;

  write(value: T, timestampMs: number | undefined): void | Promise<void> {
    const r = this.router.route(value, timestampMs);
    if (r instanceof Promise) {
      const p = r.then((rec) => (rec === undefined ? undefined : this.sender.add(rec)));
      const tracked: Promise<void> = p.then(
        () => {},
        () => {},
      ).then(() => {
        if (this.pendingWrite === tracked) this.pendingWrite = undefined;
      });
      this.pendingWrite = tracked;
      return p;
    }
    return r === undefined ? undefined : this.sender.add(r);
  }

  prepareCommit(): void | Promise<void> {
    if (!this.flushAtBarrier) return;
    const pending = this.pendingWrite;
    if (pending === undefined) return this.sender.flush();
    return pending.then(() => this.sender.flush());
  }

  flush(): Promise<void> {
    return this.sender.flush();
  }

  async close(): Promise<void> {
    try {
      if (this.sender.failed === undefined) await this.sender.flush();
    } finally {
      await this.cluster.close();
    }
  }
}

/** The transaction a writer is filling: named at once, opened on the broker at its first record. */
interface OpenTransaction {
  readonly transactionalId: string;
  identity: ProducerIdentity | undefined;
  opening: Promise<RecordSender> | undefined;
  sender: RecordSender | undefined;
  /** The last write that had to wait (for the open, metadata or a dead-letter function): the barrier waits for it. */
  pendingWrite: Promise<unknown> | undefined;
}

/** 'exactly-once': a Kafka transaction per subtask and checkpoint. */
class TransactionalWriter<T, K, V> implements SinkWriter<T> {
  private current: OpenTransaction;
  private readonly pending: { checkpointId: number; txn: PreparedTransaction }[] = [];
  /** The last pre-commit's flush: the next transaction sends after it, so partitions get transactions in order. */
  private lastFlush: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;
  private readonly prefix: string;

  private constructor(
    private readonly sink: KafkaSink<T, K, V>,
    private readonly ctx: SinkWriterContext,
    private readonly cluster: KafkaCluster,
    private readonly router: RecordRouter<T, K, V>,
    restoredCheckpointId: number,
  ) {
    this.prefix = sink.options.transactionalIdPrefix!;
    this.current = this.newTransaction(restoredCheckpointId + 1);
  }

  static async create<T, K, V>(
    sink: KafkaSink<T, K, V>,
    ctx: SinkWriterContext,
    cluster: KafkaCluster,
    router: RecordRouter<T, K, V>,
    restoredState: readonly unknown[],
  ): Promise<TransactionalWriter<T, K, V>> {
    const timings = ctx as SinkWriterContext & TimingContext;
    const problem = checkTransactionTimeout({
      transactionTimeoutMs: sink.transactionTimeoutMs,
      brokerMaxTimeoutMs: await brokerTransactionMaxTimeoutMs(cluster),
      checkpointTimeoutMs: ctx.checkpointing === true ? timings.checkpointTimeoutMs : undefined,
      restartDelayMsMax: timings.restartDelayMsMax,
    });
    // The sink's, the broker's and the job's settings: a restart finds the same ones.
    if (problem !== undefined) throw new NonRecoverableError(problem);

    const states = restoredState.map((s) => asState(s));
    const restoredCheckpointId = states.reduce((m, s) => Math.max(m, s.checkpointId), 0);
    // Commit what completed checkpoints pre-committed, oldest first, with the saved producer id and epoch.
    const pending = states.flatMap((s) => s.pending).sort((a, b) => a.checkpointId - b.checkpointId);
    for (const p of pending) await endTransaction(cluster, p.txn, true, sink.transactionTimeoutMs);
    const aborted = await abortLingeringTransactions(cluster, {
      prefix: sink.options.transactionalIdPrefix!,
      subtask: ctx.subtaskIndex,
      parallelism: ctx.parallelism,
      restoredCheckpointId,
      transactionTimeoutMs: sink.transactionTimeoutMs,
    });
    if (pending.length > 0 || aborted.length > 0) {
      sink.log(
        `kafka sink subtask ${ctx.subtaskIndex}: restored checkpoint ${restoredCheckpointId}: committed ${pending.length} pre-committed transaction(s)` +
          `${pending.length > 0 ? ` (${pending.map((p) => p.txn.transactionalId).join(', ')})` : ''}, aborted ${aborted.length} lingering` +
          `${aborted.length > 0 ? ` (${aborted.join(', ')})` : ''}`,
        'info',
        { subtask: ctx.subtaskIndex },
      );
    }
    return new TransactionalWriter(sink, ctx, cluster, router, restoredCheckpointId);
  }

  private newTransaction(n: number): OpenTransaction {
    return { transactionalId: transactionalIdOf(this.prefix, this.ctx.subtaskIndex, n), identity: undefined, opening: undefined, sender: undefined, pendingWrite: undefined };
  }

  private checkHealthy(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private open(txn: OpenTransaction): Promise<RecordSender> {
    if (txn.opening !== undefined) return txn.opening;
    // Sends after the transactions pre-committed before this one was opened (taken now: a later, deferred pre-commit may wait for this one).
    const after = this.lastFlush;
    txn.opening = initTransactionalProducer(this.cluster, txn.transactionalId, this.sink.transactionTimeoutMs).then((identity) => {
      txn.identity = identity;
      txn.sender = new RecordSender(this.cluster, { ...this.sink.senderOptions(), transaction: identity, after });
      return txn.sender;
    });
    return txn.opening;
  }

  write(value: T, timestampMs: number | undefined): void | Promise<void> {
    this.checkHealthy();
    const txn = this.current;
    const r = this.router.route(value, timestampMs);
    if (r === undefined) return undefined;
    if (txn.sender !== undefined && !(r instanceof Promise)) return this.guard(txn.sender.add(r));
    const p = this.guard(Promise.all([r, this.open(txn)]).then(([rec, sender]) => (rec === undefined ? undefined : sender.add(rec))))!;
    const tracked: Promise<void> = p.then(
      () => {},
      () => {},
    ).then(() => {
      if (txn.pendingWrite === tracked) txn.pendingWrite = undefined;
    });
    txn.pendingWrite = tracked;
    return p;
  }

  private guard(p: Promise<void> | undefined): Promise<void> | undefined {
    if (p === undefined) return undefined;
    return p.catch((e: unknown) => {
      this.failure ??= e as Error;
      throw e;
    });
  }

  prepareCommit(checkpointId: number): void | Promise<void> {
    this.checkHealthy();
    const txn = this.current;
    this.current = this.newTransaction(checkpointId + 1);
    if (txn.opening === undefined) return; // no record: nothing to commit
    if (txn.sender !== undefined && txn.identity !== undefined) {
      const prepared = { transactionalId: txn.identity.transactionalId, producerId: txn.identity.producerId.toString(), producerEpoch: txn.identity.producerEpoch };
      this.pending.push({ checkpointId, txn: prepared });
      // A write may still wait (for a topic's metadata or a dead-letter function): its record belongs to this transaction.
      if (txn.pendingWrite === undefined) return this.preCommit(txn, prepared);
      const deferred = txn.pendingWrite.then(() => {
        this.checkHealthy();
        return this.preCommit(txn, prepared);
      });
      this.lastFlush = deferred.catch(() => {});
      return deferred;
    }
    // The first write of a chained source still waits for the open (the barrier came meanwhile):
    // its record belongs to this transaction, whose producer id and epoch are not known yet. The
    // entry is filled in place when they are: the checkpoint's state holds this very object
    // (see snapshotState) and is serialized only after this pre-commit resolved.
    const placeholder = { transactionalId: txn.transactionalId, producerId: '', producerEpoch: -1 };
    this.pending.push({ checkpointId, txn: placeholder });
    const deferred = (txn.pendingWrite ?? Promise.resolve())
      .then(() => txn.opening)
      .then(() => {
        this.checkHealthy();
        return this.preCommit(txn, placeholder);
      });
    this.lastFlush = deferred.catch(() => {});
    return deferred;
  }

  private preCommit(txn: OpenTransaction, prepared: { transactionalId: string; producerId: string; producerEpoch: number }): Promise<void> {
    const sender = txn.sender!;
    const identity = txn.identity!;
    if (prepared.producerId === '') {
      prepared.producerId = identity.producerId.toString();
      prepared.producerEpoch = identity.producerEpoch;
    }
    const flushed = sender.flush();
    this.lastFlush = flushed.catch(() => {});
    return flushed.catch((e: unknown) => {
      // A pre-committed transaction must hold all its records: this writer cannot go on.
      this.failure ??= e as Error;
      throw e;
    });
  }

  snapshotState(checkpointId: number): unknown[] {
    const state: KafkaSinkWriterState = {
      v: 1,
      transactionalIdPrefix: this.prefix,
      subtask: this.ctx.subtaskIndex,
      parallelism: this.ctx.parallelism,
      checkpointId,
      // Copies, except a transaction whose producer id is not known yet: that one is filled in place (see prepareCommit).
      pending: this.pending.map((p) => ({ checkpointId: p.checkpointId, txn: p.txn.producerId === '' ? p.txn : { ...p.txn } })),
    };
    return [state];
  }

  /** Commits every pre-committed transaction up to the checkpoint (the runtime calls this in order, one at a time). */
  async notifyCheckpointComplete(checkpointId: number): Promise<void> {
    this.checkHealthy();
    while (this.pending.length > 0 && this.pending[0]!.checkpointId <= checkpointId) {
      await endTransaction(this.cluster, this.pending[0]!.txn, true, this.sink.transactionTimeoutMs);
      this.pending.shift();
    }
  }

  /** End of input without checkpoints: commit the one transaction now. */
  async flush(endOfInput: boolean): Promise<void> {
    if (!endOfInput || this.ctx.checkpointing === true) return;
    this.checkHealthy();
    const txn = this.current;
    this.current = this.newTransaction(Number.MAX_SAFE_INTEGER);
    if (txn.sender === undefined || txn.identity === undefined) return;
    await txn.sender.flush();
    await endTransaction(
      this.cluster,
      { transactionalId: txn.identity.transactionalId, producerId: txn.identity.producerId.toString(), producerEpoch: txn.identity.producerEpoch },
      true,
      this.sink.transactionTimeoutMs,
    );
  }

  /** The open transaction can never commit: abort it; pre-committed ones stay for the restored job to commit. */
  async close(): Promise<void> {
    const txn = this.current;
    try {
      if (txn.opening !== undefined) {
        const sender = await txn.opening.catch(() => undefined);
        sender?.discard();
        if (txn.identity !== undefined) {
          const id = txn.identity;
          await endTransaction(this.cluster, { transactionalId: id.transactionalId, producerId: id.producerId.toString(), producerEpoch: id.producerEpoch }, false, this.sink.transactionTimeoutMs).catch(
            () => {}, // the restarted job aborts it as lingering
          );
        }
      }
    } finally {
      await this.cluster.close();
    }
  }
}

function asState(s: unknown): KafkaSinkWriterState {
  const st = s as Partial<KafkaSinkWriterState> | undefined;
  if (st === undefined || st === null || st.v !== 1 || !Array.isArray(st.pending) || typeof st.checkpointId !== 'number') {
    throw new NonRecoverableError(`kafka sink: the restored writer state is not a Kafka sink's (${JSON.stringify(s)?.slice(0, 200)}); was the sink's uid reused for another sink?`);
  }
  return st as KafkaSinkWriterState;
}
