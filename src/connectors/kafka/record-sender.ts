import type { MessageRecord, NumericMap } from '@platformatic/kafka';
import { kafkaErrorIds, type KafkaCluster } from './kafka-cluster.js';
import { kafka } from './kafka-protocol.js';
import type { ProducerIdentity } from './kafka-transactions.js';

import type { Compression } from './kafka-types.js';

export type { Compression };

export interface RecordSenderOptions {
  /** Records per produce round (all partitions together); a full round is sent while the next fills. */
  readonly batchRecordsMax: number;
  /**
   * Kafka's `linger.ms`: how long a record waits for its round to fill before the round is sent
   * anyway (0: at once, as soon as no round is in flight). Undefined: only full rounds and
   * flushes send.
   */
  readonly lingerMs?: number | undefined;
  readonly compression: Compression;
  /** Kafka's `request.timeout.ms` for a produce request, on the broker side. */
  readonly produceTimeoutMs: number;
  /** Write inside this transaction (AddPartitionsToTxn before the first record of a partition; sequence numbers per partition). */
  readonly transaction?: ProducerIdentity;
  /** Sending starts once this settles: the previous transaction's flush, so a partition receives transactions in order. */
  readonly after?: Promise<unknown>;
}

/**
 * Sends records to their partitions' leaders in rounds: records are buffered; a round is sent
 * (one produce request per partition, acks=all) when `batchRecordsMax` are buffered, or when
 * the oldest buffered record has waited `lingerMs` (Kafka's linger.ms), or at a flush; while
 * one is in flight the next round fills, and is sent when the first completes if it is full or
 * has lingered long enough. `add` returns a promise (backpressure) when the next round is full
 * too. A failed round fails the sender: every later call throws.
 */
export class RecordSender {
  private buffer: MessageRecord[] = [];
  private inflight: Promise<void> | undefined;
  private failure: Error | undefined;
  /** Producer sequence numbers per partition of a transaction (created with the first produce). */
  private sequences: NumericMap | undefined;
  private readonly addedPartitions = new Set<string>();
  /** When the oldest buffered record was added (its linger started); undefined while the buffer is empty. */
  private lingerSinceMs: number | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  /** Records handed to `add` so far. */
  records = 0;

  constructor(
    private readonly cluster: KafkaCluster,
    private readonly options: RecordSenderOptions,
  ) {}

  get failed(): Error | undefined {
    return this.failure;
  }

  add(record: MessageRecord): Promise<void> | undefined {
    if (this.failure !== undefined) throw this.failure;
    this.buffer.push(record);
    this.records++;
    if (this.buffer.length === 1 && this.options.lingerMs !== undefined) this.startLinger();
    if (this.buffer.length < this.options.batchRecordsMax) return undefined;
    if (this.inflight === undefined) {
      this.startRound();
      return undefined;
    }
    return this.inflight;
  }

  /** Sends everything buffered and waits until the broker acknowledged it all. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      if (this.inflight !== undefined) {
        await this.inflight;
        continue;
      }
      if (this.buffer.length === 0) return;
      this.startRound();
    }
  }

  /** Stops: drops what is buffered; a round in flight still completes. */
  discard(): void {
    this.stopLinger();
    this.buffer = [];
    this.failure ??= new Error('kafka sink: the sender was discarded');
  }

  private startLinger(): void {
    this.lingerSinceMs = Date.now();
    if (this.lingerTimer === undefined) this.armLinger(this.options.lingerMs!);
  }

  private armLinger(delayMs: number): void {
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = undefined;
      this.onLingerDue();
    }, delayMs);
    this.lingerTimer.unref();
  }

  private stopLinger(): void {
    if (this.lingerTimer !== undefined) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.lingerSinceMs = undefined;
  }

  /** The linger time of the oldest buffered record passed: send it, unless a round is in flight (it goes when that completes). */
  private onLingerDue(): void {
    const lingerMs = this.options.lingerMs;
    if (lingerMs === undefined || this.failure !== undefined || this.buffer.length === 0 || this.inflight !== undefined || this.lingerSinceMs === undefined) return;
    const waitedMs = Date.now() - this.lingerSinceMs;
    if (waitedMs >= lingerMs) this.startRound();
    else if (this.lingerTimer === undefined) this.armLinger(lingerMs - waitedMs);
  }

  private startRound(): void {
    const round = this.buffer;
    this.buffer = [];
    this.stopLinger();
    const p: Promise<void> = this.sendRound(round).then(
      () => {
        if (this.inflight === p) this.inflight = undefined;
        // The next round filled meanwhile: it goes now if full or lingered long enough, else when its linger ends.
        if (this.inflight === undefined && this.buffer.length > 0) {
          if (this.buffer.length >= this.options.batchRecordsMax) this.startRound();
          else if (this.options.lingerMs !== undefined) {
            this.lingerSinceMs ??= Date.now();
            this.onLingerDue();
          }
        }
      },
      (e: unknown) => {
        this.failure ??= e instanceof Error ? e : new Error(String(e));
        if (this.inflight === p) this.inflight = undefined;
        throw this.failure;
      },
    );
    p.catch(() => {}); // reported by the next add or flush
    this.inflight = p;
  }

  private async sendRound(round: MessageRecord[]): Promise<void> {
    if (this.options.after !== undefined) await this.options.after;
    const byPartition = new Map<string, MessageRecord[]>();
    for (const r of round) {
      const tp = `${r.topic}:${r.partition}`;
      let list = byPartition.get(tp);
      if (list === undefined) byPartition.set(tp, (list = []));
      list.push(r);
    }
    const txn = this.options.transaction;
    if (txn !== undefined) await this.addPartitions(txn, [...byPartition.values()].map((l) => l[0]!).filter((r) => !this.addedPartitions.has(`${r.topic}:${r.partition}`)));
    await Promise.all([...byPartition.entries()].map(([tp, records]) => this.produce(tp, records)));
  }

  private async addPartitions(txn: ProducerIdentity, firsts: MessageRecord[]): Promise<void> {
    if (firsts.length === 0) return;
    const topics = new Map<string, number[]>();
    for (const r of firsts) {
      const list = topics.get(r.topic) ?? [];
      list.push(r.partition!);
      topics.set(r.topic, list);
    }
    await this.cluster.retrying(`AddPartitionsToTxn for transactional id '${txn.transactionalId}'`, async (deadline) => {
      const coordinator = await this.cluster.coordinator('transaction', txn.transactionalId, deadline);
      await (await kafka()).addPartitionsToTxnV3.api.async(coordinator, [
        {
          transactionalId: txn.transactionalId,
          producerId: txn.producerId,
          producerEpoch: txn.producerEpoch,
          verifyOnly: false,
          topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
        },
      ]);
    });
    for (const r of firsts) this.addedPartitions.add(`${r.topic}:${r.partition}`);
  }

  private async produce(tp: string, records: MessageRecord[]): Promise<void> {
    const { topic, partition } = records[0]!;
    const txn = this.options.transaction;
    const k = await kafka();
    const sequences = (this.sequences ??= new k.NumericMap());
    try {
      await this.cluster.retrying(`produce to ${tp}`, async (deadline) => {
        const leader = await this.cluster.leaderConnection(topic, partition!, deadline);
        await k.produceV11.api.async(leader.connection, -1, this.options.produceTimeoutMs, records, {
          compression: this.options.compression,
          ...(txn === undefined
            ? {}
            : { transactionalId: txn.transactionalId, producerId: txn.producerId, producerEpoch: txn.producerEpoch, sequences }),
        });
      });
    } catch (e) {
      // A retried request the broker had written already: the records are there once.
      if (!kafkaErrorIds(e).every((id) => id === 'DUPLICATE_SEQUENCE_NUMBER') || kafkaErrorIds(e).length === 0) throw e;
    }
    if (txn !== undefined) sequences.set(tp, sequences.getWithDefault(tp, 0) + records.length);
  }
}
