import type { InputStatus, ReaderOutput, Source, SourceOutput, SourceReader, SourceReaderContext } from '../../api/source.js';
import { stringHashCode } from '../../runtime/state/key-group.js';
import { KafkaCluster, parseBootstrap, sleep } from './kafka-cluster.js';
import type { KafkaConnectionOptions, TopicInfo } from './kafka-types.js';
import { deadLetterHeaders } from './dead-letter.js';
import {
  CONNECTION_OPTION_NAMES,
  INT32_MAX,
  checkBooleanOption,
  checkConnectionOptions,
  checkDeadLetterOption,
  checkFunctionOption,
  checkNumberOption,
  checkOneOf,
  checkOptionsObject,
  checkStringOption,
  describeValue,
  didYouMean,
} from './kafka-options.js';
import { checkKnownOptions } from '../../util/known-options.js';
import { kafka } from './kafka-protocol.js';
import { RecordSender } from './record-sender.js';
import { resolveDeserializer, type Deserializer, type DeserializerSpec } from './serde.js';
import { processLogger, type LogFields, type LogLevel } from '../../util/logger.js';

/** Where a partition is read from when the job starts without state (Flink's OffsetsInitializer). */
export type StartingOffsets =
  | 'earliest'
  | 'latest'
  /** The first offset whose record timestamp is at or after this time (latest when there is none). */
  | { readonly timestampMs: number }
  /** The group's committed offsets (`groupId` needed); partitions without one start at `fallback` (default earliest). */
  | { readonly committed: true; readonly fallback?: 'earliest' | 'latest' };

/** A consumed record as a user deserializer sees it. */
export interface ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly timestampMs: number;
  readonly key: Buffer | undefined;
  readonly value: Buffer | undefined;
  readonly headers: readonly (readonly [string, Buffer | undefined])[];
}

export interface KafkaSourceOptions<T> extends KafkaConnectionOptions {
  /** Topics to read (one or more), or `topicPattern`. */
  readonly topics?: string | readonly string[];
  /** Every topic whose name matches (checked again at each partition discovery). */
  readonly topicPattern?: RegExp;
  /** The consumer group: for `startingOffsets: { committed }` and for the offsets committed back on checkpoint completion (monitoring only). */
  readonly groupId?: string;
  /** Default 'earliest'. `{ timestampMs }`: an integer number of epoch milliseconds >= 0. */
  readonly startingOffsets?: StartingOffsets;
  /** 'latest': bounded, each partition ends at the offset that was latest when the job started (Flink's setBounded(latest())). Default: unbounded. */
  readonly stoppingOffsets?: 'latest';
  /** Default 'read_committed': records of open or aborted transactions are never read (exactly these two values; anything else is refused). */
  readonly isolationLevel?: 'read_committed' | 'read_uncommitted';
  /** How the value becomes the record: 'string' (default), 'json', 'bytes' or a function of the value bytes. */
  readonly deserializer?: DeserializerSpec<T>;
  /** Instead of `deserializer`: a function of the whole consumed record (key, value, headers, topic, partition, offset, timestamp). */
  readonly recordDeserializer?: (record: ConsumedRecord) => T;
  /** Look for new partitions (and topics of the pattern) this often; new ones are read from the earliest offset. 0 or absent: off (Flink: partition.discovery.interval.ms). */
  readonly partitionDiscoveryIntervalMs?: number;
  /** Commit the checkpointed offsets to the group when a checkpoint completes (default true with a groupId). */
  readonly commitOffsetsOnCheckpoint?: boolean;
  /**
   * Where a record that fails to deserialize goes instead of failing the job (default: the job
   * fails naming its topic, partition and offset). `{ topic }`: the record's key, value and
   * headers are written as they are to that topic (of the same cluster; it must exist), with
   * the headers `sluice.dlq.topic`, `sluice.dlq.partition`, `sluice.dlq.offset`,
   * `sluice.dlq.timestamp` and `sluice.dlq.error` added. A function: called with the consumed
   * record and the error (awaited). The source reads past the record only once it was written
   * (or the function resolved), so a dead letter is never lost; after a failure it may be
   * written again (at-least-once). A dead letter that cannot be written fails the job.
   */
  readonly deadLetter?: { readonly topic: string } | ((record: ConsumedRecord, error: Error) => void | Promise<void>);
  /** Records buffered per subtask before fetching pauses: an integer >= 1 (default 10 000). */
  readonly queueRecordsMax?: number;
  /** Kafka's fetch.max.wait.ms: an integer >= 0 (default 200). */
  readonly fetchMaxWaitMs?: number;
  /** Kafka's max.partition.fetch.bytes: bytes of one partition a fetch asks for, an integer >= 1 (default 1 MiB; a larger first batch still comes whole). */
  readonly fetchPartitionMaxBytes?: number;
  /** Where the source reports discovered partitions, dead letters and brokers it cannot reach yet (default stderr). */
  readonly log?: (message: string) => void;
}

/**
 * One topic partition and the next offset to read (a decimal string: 64-bit offsets in plain
 * data). `stopAt`: a bounded split ends there. `ownerParallelism`: the parallelism it was
 * assigned at (discovery is off after a restore at another parallelism).
 */
export interface KafkaSplit {
  readonly topic: string;
  readonly partition: number;
  offset: string;
  readonly stopAt?: string;
  readonly ownerParallelism: number;
}

/** Flink's KafkaSourceEnumerator.getSplitOwner: the subtask reading a partition. */
export function splitOwner(topic: string, partition: number, parallelism: number): number {
  const start = (Math.imul(stringHashCode(topic), 31) & 0x7fffffff) % parallelism;
  return (start + partition) % parallelism;
}

const EARLIEST = -2n;
const LATEST = -1n;
const IS_TRANSACTIONAL = 1 << 4;
const IS_CONTROL = 1 << 5;

/**
 * Flink's KafkaSource: the partitions of the topics (or of the topics matching a pattern)
 * are split across the subtasks; each split keeps the next offset to read, so a checkpoint holds
 * the positions and a restored job reads on from them (offsets committed to the group are for
 * monitoring only). read_committed by default: records of aborted transactions are skipped and
 * nothing past the last stable offset is read.
 */
export class KafkaSource<T = string> implements Source<T, KafkaSplit> {
  readonly splitKind = 'kafka';
  readonly boundedness: 'bounded' | 'unbounded';
  /** topicPattern without the 'g' and 'y' flags (whose lastIndex made test() skip every other matching topic). */
  private readonly pattern: RegExp | undefined;

  /** Checks every option (a bad one fails here, naming it, the value and what is accepted). */
  constructor(readonly options: KafkaSourceOptions<T>) {
    checkSourceOptions(options);
    const p = options.topicPattern;
    this.pattern = p === undefined ? undefined : /[gy]/.test(p.flags) ? new RegExp(p.source, p.flags.replace(/[gy]/g, '')) : p;
    this.boundedness = options.stoppingOffsets === 'latest' ? 'bounded' : 'unbounded';
  }

  /** @internal */
  matches(topic: string): boolean {
    const o = this.options;
    if (this.pattern !== undefined) return this.pattern.test(topic) && !topic.startsWith('__');
    return (typeof o.topics === 'string' ? [o.topics] : o.topics!).includes(topic);
  }

  /** @internal */
  async subscribedTopics(cluster: KafkaCluster): Promise<TopicInfo[]> {
    const o = this.options;
    if (o.topicPattern !== undefined) return (await cluster.listTopics()).filter((t) => this.matches(t.name));
    const names = typeof o.topics === 'string' ? [o.topics] : o.topics!;
    return Promise.all(names.map((n) => cluster.topic(n)));
  }

  async createSplits(parallelism: number): Promise<KafkaSplit[]> {
    const cluster = new KafkaCluster({ ...this.options, clientId: this.options.clientId ?? 'sluice-source', log: (m) => this.log(m, 'warn') });
    try {
      const topics = await this.subscribedTopics(cluster);
      const partitions = topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition })));
      const start = await resolveStartingOffsets(cluster, this.options, partitions);
      const stop = this.options.stoppingOffsets === 'latest' ? await listOffsets(cluster, partitions, LATEST, this.isolation()) : undefined;
      return partitions.map((tp) => {
        const key = `${tp.topic}:${tp.partition}`;
        return { ...tp, offset: start.get(key)!.toString(), ...(stop === undefined ? {} : { stopAt: stop.get(key)!.toString() }), ownerParallelism: parallelism };
      });
    } finally {
      await cluster.close();
    }
  }

  assignSplit(split: KafkaSplit, _index: number, parallelism: number): number {
    return splitOwner(split.topic, split.partition, parallelism);
  }

  createReader(ctx: SourceReaderContext): SourceReader<T, KafkaSplit> {
    return new KafkaSourceReader(this, ctx);
  }

  /** @internal */
  isolation(): 0 | 1 {
    return (this.options.isolationLevel ?? 'read_committed') === 'read_committed' ? 1 : 0;
  }

  /** @internal */
  log(message: string, level: LogLevel = 'info', fields: LogFields = {}): void {
    if (this.options.log !== undefined) this.options.log(message);
    else processLogger('sluice')[level](message, fields);
  }
}

const SOURCE = 'kafka source';
const STARTING_OFFSETS = "'earliest', 'latest', { timestampMs: <epoch ms> } or { committed: true, fallback?: 'earliest' | 'latest' }";

const SOURCE_OPTION_NAMES = {
  ...CONNECTION_OPTION_NAMES,
  topics: true,
  topicPattern: true,
  groupId: true,
  startingOffsets: true,
  stoppingOffsets: true,
  isolationLevel: true,
  deserializer: true,
  recordDeserializer: true,
  partitionDiscoveryIntervalMs: true,
  commitOffsetsOnCheckpoint: true,
  deadLetter: true,
  queueRecordsMax: true,
  fetchMaxWaitMs: true,
  fetchPartitionMaxBytes: true,
} as const satisfies Record<keyof KafkaSourceOptions<unknown>, true>;

function checkSourceOptions(o: KafkaSourceOptions<unknown>): void {
  checkOptionsObject(SOURCE, o);
  checkKnownOptions(SOURCE, o, SOURCE_OPTION_NAMES);
  parseBootstrap(o.bootstrapServers, SOURCE);
  checkConnectionOptions(SOURCE, o);
  const topics: unknown = o.topics;
  const topicsOk =
    topics === undefined ||
    (typeof topics === 'string' && topics.length > 0) ||
    (Array.isArray(topics) && topics.length > 0 && topics.every((t: unknown) => typeof t === 'string' && t.length > 0));
  if (!topicsOk) throw new Error(`${SOURCE}: topics must be a topic name or a non-empty array of topic names, got ${describeValue(topics)}`);
  if (o.topicPattern !== undefined && !(o.topicPattern instanceof RegExp)) {
    throw new Error(`${SOURCE}: topicPattern must be a RegExp (e.g. /^orders-/), got ${describeValue(o.topicPattern)}`);
  }
  if ((topics === undefined) === (o.topicPattern === undefined)) {
    throw new Error(`${SOURCE}: give either topics or topicPattern (${topics === undefined ? 'neither was given' : 'not both'})`);
  }
  checkStringOption(SOURCE, 'groupId', o.groupId, "the consumer group, Kafka's group.id");
  checkStartingOffsets(o.startingOffsets, o.groupId);
  checkOneOf(SOURCE, 'stoppingOffsets', o.stoppingOffsets, ['latest'], ' (bounded: each partition ends at the offset that was latest when the job started) or absent (unbounded)');
  checkOneOf(SOURCE, 'isolationLevel', o.isolationLevel, ['read_committed', 'read_uncommitted']);
  resolveDeserializer(o.deserializer, 'string', SOURCE, 'deserializer');
  checkFunctionOption(SOURCE, 'recordDeserializer', o.recordDeserializer, '(record: ConsumedRecord) => T');
  if (o.deserializer !== undefined && o.recordDeserializer !== undefined) {
    throw new Error(`${SOURCE}: give deserializer (the record's value) or recordDeserializer (the whole record: key, headers, offset...), not both; recordDeserializer took precedence and deserializer was not used`);
  }
  checkNumberOption(SOURCE, 'partitionDiscoveryIntervalMs', o.partitionDiscoveryIntervalMs, { min: 0, unit: 'milliseconds', note: '0: off' });
  checkBooleanOption(SOURCE, 'commitOffsetsOnCheckpoint', o.commitOffsetsOnCheckpoint);
  checkDeadLetterOption(SOURCE, o.deadLetter, '(record, error) => void | Promise<void>');
  checkNumberOption(SOURCE, 'queueRecordsMax', o.queueRecordsMax, { min: 1, integer: true, unit: 'records' });
  checkNumberOption(SOURCE, 'fetchMaxWaitMs', o.fetchMaxWaitMs, { min: 0, max: INT32_MAX, integer: true, unit: 'milliseconds' });
  checkNumberOption(SOURCE, 'fetchPartitionMaxBytes', o.fetchPartitionMaxBytes, { min: 1, max: INT32_MAX, integer: true, unit: 'bytes' });
}

function checkStartingOffsets(so: unknown, groupId: string | undefined): void {
  if (so === undefined || so === 'earliest' || so === 'latest') return;
  if (so === null || typeof so !== 'object' || Array.isArray(so)) {
    throw new Error(`${SOURCE}: startingOffsets must be ${STARTING_OFFSETS}, got ${describeValue(so)}${didYouMean(so, ['earliest', 'latest'])}`);
  }
  const keys = Object.keys(so);
  const extra = (allowed: string[]): string[] => keys.filter((k) => !allowed.includes(k));
  if ('timestampMs' in so) {
    const t = (so as { timestampMs: unknown }).timestampMs;
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 0) {
      const hint = t instanceof Date ? ' (a Date: give date.getTime())' : typeof t === 'string' ? " (a string: give a number, e.g. Date.parse('2026-01-01T00:00:00Z'))" : '';
      throw new Error(`${SOURCE}: startingOffsets.timestampMs must be an integer number of epoch milliseconds >= 0, got ${describeValue(t)}${hint}`);
    }
    if (extra(['timestampMs']).length > 0) throw new Error(`${SOURCE}: startingOffsets { timestampMs } takes no other keys, got ${describeValue(so)}`);
    return;
  }
  if ('committed' in so) {
    const c = so as { committed: unknown; fallback?: unknown };
    if (c.committed !== true) throw new Error(`${SOURCE}: startingOffsets.committed must be true, got ${describeValue(c.committed)} (for no committed offsets use 'earliest' or 'latest')`);
    checkOneOf(SOURCE, 'startingOffsets.fallback', c.fallback, ['earliest', 'latest'], ' (where partitions without a committed offset start; default earliest)');
    if (extra(['committed', 'fallback']).length > 0) throw new Error(`${SOURCE}: startingOffsets { committed } takes only committed and fallback, got ${describeValue(so)}`);
    if (groupId === undefined) throw new Error(`${SOURCE}: startingOffsets { committed } needs a groupId`);
    return;
  }
  throw new Error(`${SOURCE}: startingOffsets must be ${STARTING_OFFSETS}, got ${describeValue(so)}`);
}

async function listOffsets(cluster: KafkaCluster, partitions: readonly { topic: string; partition: number }[], timestamp: bigint, isolation: 0 | 1): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  for (const tp of partitions) {
    const r = await cluster.retrying(`ListOffsets of ${tp.topic}:${tp.partition}`, async (deadline) => {
      const leader = await cluster.leaderConnection(tp.topic, tp.partition, deadline);
      return (await kafka()).listOffsetsV9.api.async(leader.connection, -1, isolation, [{ name: tp.topic, partitions: [{ partitionIndex: tp.partition, currentLeaderEpoch: -1, timestamp }] }]);
    });
    const offset = r.topics[0]!.partitions[0]!.offset;
    out.set(`${tp.topic}:${tp.partition}`, offset);
  }
  return out;
}

async function resolveStartingOffsets(
  cluster: KafkaCluster,
  o: KafkaSourceOptions<unknown>,
  partitions: readonly { topic: string; partition: number }[],
): Promise<Map<string, bigint>> {
  const so = o.startingOffsets ?? 'earliest';
  const isolation = (o.isolationLevel ?? 'read_committed') === 'read_committed' ? 1 : 0;
  if (so === 'earliest') return listOffsets(cluster, partitions, EARLIEST, isolation);
  if (so === 'latest') return listOffsets(cluster, partitions, LATEST, isolation);
  if ('timestampMs' in so) {
    const byTime = await listOffsets(cluster, partitions, BigInt(so.timestampMs), isolation);
    const latest = await listOffsets(cluster, partitions, LATEST, isolation);
    for (const [k, v] of byTime) if (v < 0n) byTime.set(k, latest.get(k)!);
    return byTime;
  }
  const groupId = o.groupId!;
  const topics = new Map<string, number[]>();
  for (const tp of partitions) topics.set(tp.topic, [...(topics.get(tp.topic) ?? []), tp.partition]);
  const r = await cluster.retrying(`OffsetFetch of group '${groupId}'`, async (deadline) =>
    (await kafka()).offsetFetchV9.api.async(await cluster.coordinator('group', groupId, deadline), [{ groupId, memberEpoch: -1, topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })) }], true),
  );
  const fallback = await listOffsets(cluster, partitions, so.fallback === 'latest' ? LATEST : EARLIEST, isolation);
  const out = new Map(fallback);
  for (const t of r.groups[0]?.topics ?? []) for (const p of t.partitions) if (p.committedOffset >= 0n) out.set(`${t.name}:${p.partitionIndex}`, p.committedOffset);
  return out;
}

/** What the fetch loop hands the poll: a record, or the split's position after skipped markers and aborted records. */
type Fetched =
  | { readonly split: KafkaSplit; readonly offset: bigint; readonly record: ConsumedRecord }
  | { readonly split: KafkaSplit; readonly advanceTo: bigint; readonly record?: undefined };

const RECORDS_PER_POLL = 512;
/** UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH. */
const RETRIABLE_FETCH_ERRORS = new Set([3, 5, 6, 74, 75]);

class KafkaSourceReader<T> implements SourceReader<T, KafkaSplit> {
  private readonly splits = new Map<string, KafkaSplit>();
  /** Each partition's output, for the reader output they came from (see outputOf). */
  private readonly splitOutputs = new Map<KafkaSplit, SourceOutput<T>>();
  private splitOutputsOf: ReaderOutput<T> | undefined;
  /** Splits were added: their outputs are created at the next poll, before any record. */
  private outputsToRegister = false;
  /** Partitions (`topic:partition`) paused by watermark alignment: not fetched. */
  private readonly pausedSplits = new Set<string>();
  /** The partition's high watermark at the last fetch, for the lag metric. */
  private readonly highWatermarks = new Map<string, bigint>();
  /** Next offset to fetch per split (ahead of `split.offset` by what is queued). */
  private readonly fetchPositions = new Map<string, bigint>();
  private readonly queue: Fetched[] = [];
  private queueHead = 0;
  private cluster: KafkaCluster | undefined;
  private loop: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;
  private noMore = false;
  private waiter: (() => void) | undefined;
  private drained: (() => void) | undefined;
  private readonly deserialize: (r: ConsumedRecord) => T;
  private readonly snapshots = new Map<number, { topic: string; partition: number; offset: bigint }[]>();
  private discoveryEnabled: boolean;
  private nextDiscoveryMs = 0;
  /** The record at the queue's head being dead-lettered: read past it once `done`. */
  private deadLettering: { entry: Fetched; done: boolean; promise: Promise<void> } | undefined;
  private deadLetterSender: RecordSender | undefined;

  constructor(
    private readonly source: KafkaSource<T>,
    private readonly ctx: SourceReaderContext,
  ) {
    const o = source.options;
    if (o.recordDeserializer !== undefined) {
      this.deserialize = o.recordDeserializer;
    } else {
      const d: Deserializer<T> = resolveDeserializer<T>(o.deserializer, 'string');
      this.deserialize = (r) => d(r.value);
    }
    this.discoveryEnabled = (o.partitionDiscoveryIntervalMs ?? 0) > 0 && source.boundedness === 'unbounded';
  }

  start(): void {
    this.cluster = new KafkaCluster({ ...this.source.options, clientId: this.source.options.clientId ?? `sluice-source-${this.ctx.subtaskIndex}`, log: (m) => this.log(m, 'warn') });
  }

  addSplits(splits: readonly KafkaSplit[]): void {
    for (const s of splits) {
      const split: KafkaSplit = { ...s };
      if (split.ownerParallelism !== this.ctx.parallelism && this.discoveryEnabled) {
        this.discoveryEnabled = false;
        this.log(`kafka source subtask ${this.ctx.subtaskIndex}: restored at parallelism ${this.ctx.parallelism} from ${split.ownerParallelism}: partition discovery is off for this run`);
      }
      const key = `${s.topic}:${s.partition}`;
      const known = this.splits.has(key);
      this.splits.set(key, split);
      this.outputsToRegister = true;
      this.fetchPositions.set(key, BigInt(s.offset));
      // Consumer lag per partition (Flink's KafkaSourceReader.topic.<t>.partition.<p> group):
      // records in the partition the job has not read yet.
      if (!known) {
        this.ctx.metricGroup
          ?.addGroup('KafkaSourceReader')
          .addGroup('topic', s.topic)
          .addGroup('partition', String(s.partition))
          .gauge('records-lag', () => {
            const hw = this.highWatermarks.get(key);
            const now = this.splits.get(key);
            return hw === undefined || now === undefined ? 0 : Math.max(0, Number(hw - BigInt(now.offset)));
          });
      }
    }
  }

  /** Watermark alignment per partition (Flink's pauseOrResumeSplits): a paused partition is not fetched; what was fetched is still emitted. */
  pauseOrResumeSplits(pause: readonly string[], resume: readonly string[]): void {
    for (const id of pause) this.pausedSplits.add(id);
    for (const id of resume) this.pausedSplits.delete(id);
  }

  noMoreSplits(): void {
    this.noMore = true;
    this.loop ??= this.fetchLoop().catch((e: unknown) => {
      this.failure = e instanceof Error ? e : new Error(String(e));
      this.wakePoll();
    });
  }

  /**
   * The output of a partition (Flink's per-partition watermarks: with a watermark strategy on
   * fromSource, each partition's records make watermarks of their own). Cached per split for
   * the output polls hand in.
   */
  private outputOf(output: ReaderOutput<T>, split: KafkaSplit): SourceOutput<T> {
    if (output !== this.splitOutputsOf) {
      this.splitOutputs.clear();
      this.splitOutputsOf = output;
    }
    let out = this.splitOutputs.get(split);
    if (out === undefined) {
      out = output.createOutputForSplit(`${split.topic}:${split.partition}`);
      this.splitOutputs.set(split, out);
    }
    return out;
  }

  /**
   * Every partition of the reader has its output from the start, as in Flink: a partition
   * whose first records are not in yet holds the watermark back (one with no records at all
   * does until the strategy's idleness timeout, as Flink's documentation says of idle partitions).
   */
  private registerOutputs(output: ReaderOutput<T>): void {
    this.outputsToRegister = false;
    for (const split of this.splits.values()) {
      if (split.stopAt === undefined || BigInt(split.offset) < BigInt(split.stopAt)) this.outputOf(output, split);
    }
  }

  /** A bounded partition read to its end: its watermark no longer holds the others back. */
  private releaseOutput(output: ReaderOutput<T>, split: KafkaSplit): void {
    output.releaseOutputForSplit(`${split.topic}:${split.partition}`);
    this.splitOutputs.delete(split);
  }

  pollNext(output: ReaderOutput<T>): InputStatus {
    if (this.failure !== undefined) throw this.failure;
    if (this.outputsToRegister || output !== this.splitOutputsOf) this.registerOutputs(output);
    let emitted = 0;
    while (this.queueHead < this.queue.length && emitted < RECORDS_PER_POLL) {
      const f = this.queue[this.queueHead]!;
      if (f.record === undefined) {
        this.queueHead++;
        if (BigInt(f.split.offset) < f.advanceTo) f.split.offset = f.advanceTo.toString();
        if (f.split.stopAt !== undefined && f.advanceTo >= BigInt(f.split.stopAt) && this.splitOutputs.has(f.split)) this.releaseOutput(output, f.split);
        continue;
      }
      const dl = this.deadLettering;
      if (dl !== undefined && dl.entry === f) {
        if (!dl.done) break; // wait until the dead letter is written
        this.deadLettering = undefined;
        this.queueHead++;
        f.split.offset = (f.offset + 1n).toString();
        continue;
      }
      let value: T;
      try {
        value = this.deserialize(f.record);
      } catch (e) {
        const error = new Error(
          `kafka source: cannot deserialize the record at topic '${f.record.topic}' partition ${f.record.partition} offset ${f.record.offset}: ${(e as Error).message}`,
          { cause: e },
        );
        if (this.source.options.deadLetter === undefined) throw error;
        this.startDeadLetter(f, f.record, e instanceof Error ? e : new Error(String(e)));
        break;
      }
      this.queueHead++;
      f.split.offset = (f.offset + 1n).toString();
      this.outputOf(output, f.split).collect(value, f.record.timestampMs);
      emitted++;
      if (f.split.stopAt !== undefined && f.offset + 1n >= BigInt(f.split.stopAt)) this.releaseOutput(output, f.split);
    }
    if (this.queueHead >= this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
      this.drained?.();
    }
    if (emitted > 0) return 'more';
    if (this.source.boundedness === 'bounded' && this.noMore && [...this.splits.values()].every((s) => s.stopAt === undefined || BigInt(s.offset) >= BigInt(s.stopAt))) return 'end';
    return 'nothing';
  }

  /** Writes a record that failed to deserialize to the dead-letter output; the poll reads past it once that is done. */
  private startDeadLetter(entry: Fetched, record: ConsumedRecord, error: Error): void {
    const target = this.source.options.deadLetter!;
    const state = { entry, done: false, promise: Promise.resolve() };
    state.promise = (async () => {
      if (typeof target === 'function') {
        await target(record, error);
        return;
      }
      const cluster = this.cluster!;
      const info = await cluster.topic(target.topic);
      this.deadLetterSender ??= new RecordSender(cluster, { batchRecordsMax: 1, compression: 'none', produceTimeoutMs: this.source.options.requestTimeoutMs ?? 30_000 });
      const headers = new Map<Buffer, Buffer>();
      for (const [k, v] of record.headers) if (v !== undefined) headers.set(Buffer.from(k, 'utf8'), v);
      for (const [k, v] of deadLetterHeaders({ topic: record.topic, partition: record.partition, offset: record.offset, timestampMs: record.timestampMs }, error)) headers.set(Buffer.from(k, 'utf8'), Buffer.from(v, 'utf8'));
      await this.deadLetterSender.add({
        topic: target.topic,
        partition: record.partition % info.partitions.length,
        ...(record.key === undefined ? {} : { key: record.key }),
        value: record.value as Buffer,
        headers,
        timestamp: BigInt(record.timestampMs),
      });
      await this.deadLetterSender.flush();
    })().then(
      () => {
        state.done = true;
        this.log(`kafka source subtask ${this.ctx.subtaskIndex}: record at ${record.topic}:${record.partition} offset ${record.offset} went to the dead-letter output: ${error.message}`, 'warn');
        this.wakePoll();
      },
      (e: unknown) => {
        this.failure ??= new Error(
          `kafka source: the record at topic '${record.topic}' partition ${record.partition} offset ${record.offset} failed to deserialize (${error.message}) and writing it to the dead-letter output failed: ${(e as Error).message}`,
          { cause: e },
        );
        this.wakePoll();
      },
    );
    this.deadLettering = state;
  }

  isAvailable(): Promise<void> {
    if (this.failure !== undefined || (this.queueHead < this.queue.length && (this.deadLettering === undefined || this.deadLettering.done))) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiter = resolve;
      // Also wake now and then: a bounded reader checks its end, and nothing is lost by polling.
      setTimeout(() => this.wakePoll(), 100).unref();
    });
  }

  snapshotState(checkpointId: number): KafkaSplit[] {
    const splits = [...this.splits.values()].map((s) => ({ ...s }));
    this.snapshots.set(checkpointId, splits.map((s) => ({ topic: s.topic, partition: s.partition, offset: BigInt(s.offset) })));
    return splits;
  }

  /** Commits the offsets of the completed checkpoint to the group: for monitoring only, a failure is logged. */
  async notifyCheckpointComplete(checkpointId: number): Promise<void> {
    const offsets = this.snapshots.get(checkpointId);
    for (const id of [...this.snapshots.keys()]) if (id <= checkpointId) this.snapshots.delete(id);
    const groupId = this.source.options.groupId;
    if (offsets === undefined || groupId === undefined || this.source.options.commitOffsetsOnCheckpoint === false || offsets.length === 0) return;
    const cluster = this.cluster;
    if (cluster === undefined || cluster.isClosed) return;
    const topics = new Map<string, { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number }[]>();
    for (const o of offsets) topics.set(o.topic, [...(topics.get(o.topic) ?? []), { partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: -1 }]);
    try {
      await cluster.retrying(`OffsetCommit of group '${groupId}'`, async (deadline) =>
        (await kafka()).offsetCommitV9.api.async(await cluster.coordinator('group', groupId, deadline), groupId, -1, '', null, [...topics].map(([name, partitions]) => ({ name, partitions }))),
      );
    } catch (e) {
      if (this.closed) return; // the attempt ended meanwhile
      this.log(`kafka source subtask ${this.ctx.subtaskIndex}: committing offsets of checkpoint ${checkpointId} to group '${groupId}' failed (monitoring only): ${(e as Error).message}`, 'warn');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.drained?.();
    await this.cluster?.close();
    await this.loop?.catch(() => {});
  }

  private log(message: string, level: LogLevel = 'info'): void {
    this.source.log(message, level, { subtask: this.ctx.subtaskIndex });
  }

  private wakePoll(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private get queued(): number {
    return this.queue.length - this.queueHead;
  }

  private async fetchLoop(): Promise<void> {
    const cluster = this.cluster!;
    const max = this.source.options.queueRecordsMax ?? 10_000;
    while (!this.closed) {
      if (this.queued >= max) {
        await new Promise<void>((resolve) => {
          this.drained = resolve;
        });
        this.drained = undefined;
        continue;
      }
      if (this.discoveryEnabled && this.ctx.nowMs() >= this.nextDiscoveryMs) {
        this.nextDiscoveryMs = this.ctx.nowMs() + this.source.options.partitionDiscoveryIntervalMs!;
        await this.discover(cluster);
      }
      const unfinished = [...this.splits.values()].filter((s) => s.stopAt === undefined || this.fetchPositions.get(`${s.topic}:${s.partition}`)! < BigInt(s.stopAt));
      if (unfinished.length === 0 && this.source.boundedness === 'bounded') return;
      // Partitions paused by watermark alignment are not fetched until they are resumed.
      const active = this.pausedSplits.size === 0 ? unfinished : unfinished.filter((s) => !this.pausedSplits.has(`${s.topic}:${s.partition}`));
      if (active.length === 0) {
        await sleep(unfinished.length === 0 ? 100 : 10);
        continue;
      }
      const byLeader = new Map<number, KafkaSplit[]>();
      for (const s of active) {
        const t = await cluster.topic(s.topic);
        const leader = t.partitions[s.partition]?.leaderId ?? -1;
        byLeader.set(leader, [...(byLeader.get(leader) ?? []), s]);
      }
      await Promise.all([...byLeader].map(([leader, splits]) => this.fetchFrom(cluster, leader, splits)));
    }
  }

  private async discover(cluster: KafkaCluster): Promise<void> {
    const topics = await this.source.subscribedTopics(cluster);
    const added: KafkaSplit[] = [];
    for (const t of topics) {
      for (const p of t.partitions) {
        const key = `${t.name}:${p.partition}`;
        if (this.splits.has(key) || splitOwner(t.name, p.partition, this.ctx.parallelism) !== this.ctx.subtaskIndex) continue;
        const [offset] = (await listOffsets(cluster, [{ topic: t.name, partition: p.partition }], EARLIEST, this.source.isolation())).values();
        added.push({ topic: t.name, partition: p.partition, offset: offset!.toString(), ownerParallelism: this.ctx.parallelism });
      }
    }
    if (added.length > 0) {
      this.log(`kafka source subtask ${this.ctx.subtaskIndex}: discovered ${added.map((s) => `${s.topic}:${s.partition}`).join(', ')}`);
      this.addSplits(added);
    }
  }

  private async fetchFrom(cluster: KafkaCluster, leader: number, splits: readonly KafkaSplit[]): Promise<void> {
    const topicIds = new Map<string, string>();
    const byTopic = new Map<string, KafkaSplit[]>();
    for (const s of splits) {
      topicIds.set(s.topic, (await cluster.topic(s.topic)).topicId);
      byTopic.set(s.topic, [...(byTopic.get(s.topic) ?? []), s]);
    }
    let response;
    try {
      response = await cluster.retrying(`fetch from broker ${leader}`, async (deadline) =>
        (await kafka()).fetchV17.api.async(
          await cluster.connectionTo(leader, deadline),
          this.source.options.fetchMaxWaitMs ?? 200,
          1,
          8 << 20,
          this.source.isolation(),
          0,
          -1,
          [...byTopic].map(([topic, list]) => ({
            topicId: topicIds.get(topic)!,
            partitions: list.map((s) => ({
              partition: s.partition,
              currentLeaderEpoch: -1,
              fetchOffset: this.fetchPositions.get(`${s.topic}:${s.partition}`)!,
              lastFetchedEpoch: -1,
              partitionMaxBytes: this.source.options.fetchPartitionMaxBytes ?? 1 << 20,
            })),
          })),
          [],
          '',
        ),
      );
    } catch (e) {
      if (this.closed) return;
      throw e;
    }
    const topicById = new Map([...topicIds].map(([name, id]) => [id, name]));
    for (const t of response.responses) {
      const topic = topicById.get(t.topicId)!;
      for (const p of t.partitions) {
        const split = this.splits.get(`${topic}:${p.partitionIndex}`)!;
        if (p.errorCode === 0 && p.highWatermark !== undefined) this.highWatermarks.set(`${topic}:${p.partitionIndex}`, BigInt(p.highWatermark));
        if (p.errorCode !== 0) {
          await this.partitionError(cluster, split, p.errorCode);
          continue;
        }
        this.take(split, p.records ?? [], p.abortedTransactions);
      }
    }
    this.wakePoll();
  }

  private async partitionError(cluster: KafkaCluster, split: KafkaSplit, errorCode: number): Promise<void> {
    const key = `${split.topic}:${split.partition}`;
    if (errorCode === 1) {
      // OFFSET_OUT_OF_RANGE: the records were deleted (retention); go on from the earliest there is.
      const [offset] = (await listOffsets(cluster, [split], EARLIEST, this.source.isolation())).values();
      this.log(`kafka source: offset ${this.fetchPositions.get(key)} of ${key} is out of range; reading on from ${offset}`, 'warn');
      this.fetchPositions.set(key, offset!);
      this.queue.push({ split, advanceTo: offset! });
      return;
    }
    // Leadership moved or metadata is stale: look again next round.
    if (!RETRIABLE_FETCH_ERRORS.has(errorCode)) throw new Error(`kafka source: fetching ${key} failed with Kafka error code ${errorCode}`);
    await cluster.refreshMetadata([split.topic]).catch(() => {});
    await sleep(50);
  }

  /**
   * Queues the records of one partition's fetch from the fetch position on. read_committed:
   * the records of aborted transactions are skipped as Kafka's Java consumer does (a producer
   * is aborted from the first offset the response lists until its ABORT marker); control
   * records are never returned.
   */
  private take(split: KafkaSplit, batches: readonly FetchedBatch[], abortedTransactions: readonly { producerId: bigint; firstOffset: bigint }[]): void {
    const key = `${split.topic}:${split.partition}`;
    let position = this.fetchPositions.get(key)!;
    const stopAt = split.stopAt === undefined ? undefined : BigInt(split.stopAt);
    const aborted = [...abortedTransactions].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
    const abortedProducers = new Set<bigint>();
    let nextAborted = 0;
    const readCommitted = this.source.isolation() === 1;
    for (const batch of batches) {
      const lastOffset = batch.firstOffset + BigInt(batch.lastOffsetDelta);
      if (lastOffset < position) continue;
      if (stopAt !== undefined && batch.firstOffset >= stopAt) break;
      if (readCommitted) {
        while (nextAborted < aborted.length && aborted[nextAborted]!.firstOffset <= lastOffset) abortedProducers.add(aborted[nextAborted++]!.producerId);
      }
      const control = (batch.attributes & IS_CONTROL) !== 0;
      if (control) {
        const type = batch.records[0]?.key?.readInt16BE(2);
        if (type === 0) abortedProducers.delete(batch.producerId);
      } else if (!(readCommitted && (batch.attributes & IS_TRANSACTIONAL) !== 0 && abortedProducers.has(batch.producerId))) {
        for (const r of batch.records) {
          const offset = batch.firstOffset + BigInt(r.offsetDelta);
          if (offset < position || (stopAt !== undefined && offset >= stopAt)) continue;
          this.queue.push({
            split,
            offset,
            record: {
              topic: split.topic,
              partition: split.partition,
              offset,
              timestampMs: Number(batch.firstTimestamp + r.timestampDelta),
              key: r.key ?? undefined,
              value: r.value ?? undefined,
              headers: r.headers.map(([k, v]) => [k?.toString('utf8') ?? '', v ?? undefined] as const),
            },
          });
        }
      }
      position = stopAt !== undefined && lastOffset + 1n > stopAt ? stopAt : lastOffset + 1n;
    }
    this.fetchPositions.set(key, position);
    this.queue.push({ split, advanceTo: position });
  }
}

interface FetchedBatch {
  readonly firstOffset: bigint;
  readonly lastOffsetDelta: number;
  readonly attributes: number;
  readonly producerId: bigint;
  readonly firstTimestamp: bigint;
  readonly records: readonly { offsetDelta: number; timestampDelta: bigint; key: Buffer | null; value: Buffer | null; headers: [Buffer | null, Buffer | null][] }[];
}
