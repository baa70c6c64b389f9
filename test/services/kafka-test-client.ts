import { randomBytes } from 'node:crypto';
import { createTopicsV7, describeTransactionsV0, listTransactionsV1 } from '@platformatic/kafka';
import { KafkaCluster, sleep } from '../../src/connectors/kafka/kafka-cluster.js';
import { initTransactionalProducer } from '../../src/connectors/kafka/kafka-transactions.js';
import { RecordSender } from '../../src/connectors/kafka/record-sender.js';

/** A topic name no other test uses. */
export function uniqueTopic(label: string): string {
  return `${label}-${randomBytes(4).toString('hex')}`;
}

/** Creates topics and waits until every partition has a leader. */
export async function createTopics(bootstrap: string, topics: readonly { name: string; partitions: number }[]): Promise<void> {
  const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
  try {
    await createTopicsV7.api.async(
      await cluster.anyConnection(),
      topics.map((t) => ({ name: t.name, numPartitions: t.partitions, replicationFactor: 1, assignments: [], configs: [] })),
      10_000,
      false,
    );
    for (const t of topics) await cluster.topic(t.name);
  } finally {
    await cluster.close();
  }
}

export interface InputRecord {
  readonly partition: number;
  readonly value: string;
  readonly key?: string;
  readonly timestampMs?: number;
}

/** Writes records to a topic (acks=all), in record batches of at most `batchRecordsMax` records (default 5,000). */
export async function produce(bootstrap: string, topic: string, records: readonly InputRecord[], batchRecordsMax = 5000): Promise<void> {
  const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
  try {
    await cluster.topic(topic);
    const sender = new RecordSender(cluster, { batchRecordsMax, compression: 'none', produceTimeoutMs: 30_000 });
    for (const r of records) {
      await sender.add({
        topic,
        partition: r.partition,
        value: Buffer.from(r.value),
        ...(r.key === undefined ? {} : { key: Buffer.from(r.key) }),
        timestamp: BigInt(r.timestampMs ?? Date.now()),
      });
    }
    await sender.flush();
  } finally {
    await cluster.close();
  }
}

/** Opens a transaction on `transactionalId`, writes the records and leaves it open (as a crashed producer would). */
export async function leaveOpenTransaction(bootstrap: string, transactionalId: string, topic: string, values: readonly string[]): Promise<void> {
  const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
  try {
    await cluster.topic(topic);
    const identity = await initTransactionalProducer(cluster, transactionalId, 3_600_000);
    const sender = new RecordSender(cluster, { batchRecordsMax: 5000, compression: 'none', produceTimeoutMs: 30_000, transaction: identity });
    for (const v of values) await sender.add({ topic, partition: 0, value: Buffer.from(v) });
    await sender.flush();
  } finally {
    await cluster.close();
  }
}

/** Transactional ids with an open (Ongoing) transaction, from every broker. */
export async function openTransactions(bootstrap: string): Promise<string[]> {
  const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
  try {
    const metadata = await cluster.refreshMetadata([]);
    const out: string[] = [];
    for (const b of metadata.brokers) {
      const r = await listTransactionsV1.api.async(await cluster.connectionTo(b.nodeId), [], [], -1n, null);
      for (const t of r.transactionStates) if (t.transactionState === 'Ongoing') out.push(t.transactionalId);
    }
    return out.sort();
  } finally {
    await cluster.close();
  }
}

/** The coordinator's view of transactional ids (state, producer id, epoch). */
export async function describeTransactions(bootstrap: string, ids: readonly string[]): Promise<{ id: string; state: string; producerId: bigint; producerEpoch: number }[]> {
  const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
  try {
    const out = [];
    for (const id of ids) {
      const r = await cluster.retrying('describe', async () => describeTransactionsV0.api.async(await cluster.coordinator('transaction', id), [id]));
      const s = r.transactionStates[0]!;
      out.push({ id, state: s.transactionState, producerId: s.producerId, producerEpoch: s.producerEpoch });
    }
    return out;
  } finally {
    await cluster.close();
  }
}

/** Waits until `check` holds, polling. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(100);
  }
}
