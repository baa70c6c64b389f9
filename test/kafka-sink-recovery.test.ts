import { describe, expect, inject, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import type { SinkWriter, SinkWriterContext } from '../src/api/sink.js';
import { KafkaSink, type KafkaSinkWriterState } from '../src/connectors/kafka/kafka-sink.js';
import { lingeringToAbort } from '../src/connectors/kafka/kafka-transactions.js';
import { checkTransactionTimeout } from '../src/connectors/kafka/transaction-timeout-check.js';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, describeTransactions, leaveOpenTransaction, openTransactions, produce, uniqueTopic } from './services/kafka-test-client.js';

const brokers = inject('kafka');

const ctx = (subtaskIndex: number, parallelism: number, attemptNumber = 0): SinkWriterContext => ({ subtaskIndex, parallelism, attemptNumber, checkpointing: true });

function eosSink(bootstrap: string, topic: string, prefix: string, logs: string[] = []): KafkaSink<string> {
  // One record per produce round: what is written is on the broker at once.
  return new KafkaSink<string>({ bootstrapServers: bootstrap, topic, deliveryGuarantee: 'exactly-once', transactionalIdPrefix: prefix, batchRecordsMax: 1, log: (m) => logs.push(m) });
}

async function writeAll(w: SinkWriter<string>, values: readonly string[]): Promise<void> {
  for (const v of values) await w.write(v, undefined);
}

const protocols = [
  { name: 'transaction.version 2', bootstrap: brokers.bootstrap },
  { name: 'transaction.version 1', bootstrap: brokers.bootstrapTv1 },
] as const;

describe('Kafka sink recovery against a real broker', () => {
  for (const proto of protocols) {
    it(`(${proto.name}) a transaction pre-committed before a crash is committed after restore, with the saved producer id and epoch`, async () => {
      const topic = uniqueTopic('restore');
      await createTopics(proto.bootstrap, [{ name: topic, partitions: 2 }]);
      const sink = eosSink(proto.bootstrap, topic, topic);
      const w1 = await sink.createWriter(ctx(0, 1), []);
      await writeAll(w1, ['a', 'b', 'c']);
      await w1.prepareCommit!(4);
      const state = w1.snapshotState!(4) as KafkaSinkWriterState[];
      // Records after the barrier go to the next transaction, which the crash leaves open.
      await writeAll(w1, ['after-barrier']);
      expect(state[0]!.pending.map((p) => p.txn.transactionalId)).toEqual([`${topic}-0-1`]);
      const saved = state[0]!.pending[0]!.txn;
      // The crash: the checkpoint completed, but the writer never heard of it (no notifyCheckpointComplete).
      expect(await readTopicWithJavaConsumer(proto.bootstrap, topic, { idleMs: 1000 })).toEqual([]);
      expect(await openTransactions(proto.bootstrap)).toEqual(expect.arrayContaining([`${topic}-0-1`, `${topic}-0-5`]));

      const logs: string[] = [];
      const w2 = await eosSink(proto.bootstrap, topic, topic, logs).createWriter(ctx(0, 1, 1), state);
      const [after] = await describeTransactions(proto.bootstrap, [saved.transactionalId]);
      expect(after!.state).toBe('CompleteCommit');
      // EndTxn with the saved identity: the producer id is the saved one (InitProducerId would have bumped the epoch and aborted).
      expect(after!.producerId.toString()).toBe(saved.producerId);
      // EndTxn v4 (the client's newest) keeps the v1 protocol for the transaction on either broker setting: no epoch bump.
      expect(after!.producerEpoch).toBe(saved.producerEpoch);
      expect((await readTopicWithJavaConsumer(proto.bootstrap, topic)).sort()).toEqual(['a', 'b', 'c']);
      // The transaction open at the crash (named after the restored checkpoint) was aborted as lingering.
      expect((await openTransactions(proto.bootstrap)).filter((id) => id.startsWith(topic))).toEqual([]);
      expect(logs.join('\n')).toContain(`aborted 1 lingering (${topic}-0-5)`);
      // Committing again (a second restore of the same checkpoint) is harmless.
      const w3 = await eosSink(proto.bootstrap, topic, topic).createWriter(ctx(0, 1, 2), state);
      await w2.close!();
      await w3.close!();
      expect((await readTopicWithJavaConsumer(proto.bootstrap, topic)).sort()).toEqual(['a', 'b', 'c']);
    });
  }

  it('lingering transactions of the prefix are aborted on start, so read_committed readers are not stalled', async () => {
    const topic = uniqueTopic('linger');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 1 }]);
    // A crashed earlier run (parallelism 3) left transactions open; another job's prefix is not touched.
    await leaveOpenTransaction(brokers.bootstrap, `${topic}-0-7`, topic, ['lost-0']);
    await leaveOpenTransaction(brokers.bootstrap, `${topic}-2-9`, topic, ['lost-2']);
    await leaveOpenTransaction(brokers.bootstrap, `${topic}x-0-8`, topic, ['other-job']);
    await produce(brokers.bootstrap, topic, [{ partition: 0, value: 'committed-after' }]);
    // The open transactions hold back the last stable offset: a read_committed reader sees nothing yet.
    expect(await readTopicWithJavaConsumer(brokers.bootstrap, topic, { idleMs: 1000 })).toEqual([]);
    const logs: string[] = [];
    // Restart at parallelism 2 from checkpoint 5: subtask 0 owns old subtasks 0 and 2.
    const restored: KafkaSinkWriterState = { v: 1, transactionalIdPrefix: topic, subtask: 0, parallelism: 3, checkpointId: 5, pending: [] };
    const w = await eosSink(brokers.bootstrap, topic, topic, logs).createWriter(ctx(0, 2), [restored]);
    expect(logs.join('\n')).toContain(`aborted 2 lingering (${topic}-0-7, ${topic}-2-9)`);
    expect((await openTransactions(brokers.bootstrap)).filter((id) => id.startsWith(topic))).toEqual([`${topic}x-0-8`]);
    await w.close!();
    // Abort the other job's one to read the topic.
    await eosSink(brokers.bootstrap, topic, `${topic}x`).createWriter(ctx(0, 1), []).then((x) => x.close!());
    expect(await readTopicWithJavaConsumer(brokers.bootstrap, topic)).toEqual(['committed-after']);
  });

  it('lingeringToAbort: only ids of the prefix, named after the restored checkpoint, of subtasks mapping to this one', () => {
    const ids = ['p-0-3', 'p-0-6', 'p-1-6', 'p-2-7', 'p-3-9', 'px-0-9', 'p-0-x', 'q-0-9'];
    expect(lingeringToAbort(ids, { prefix: 'p', subtask: 0, parallelism: 2, restoredCheckpointId: 5 })).toEqual(['p-0-6', 'p-2-7']);
    expect(lingeringToAbort(ids, { prefix: 'p', subtask: 1, parallelism: 2, restoredCheckpointId: 5 })).toEqual(['p-1-6', 'p-3-9']);
  });

  it('transaction timeout above the broker maximum: createWriter fails explaining transaction.max.timeout.ms', async () => {
    const topic = uniqueTopic('timeout');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 1 }]);
    const sink = new KafkaSink<string>({
      bootstrapServers: brokers.bootstrap,
      topic,
      deliveryGuarantee: 'exactly-once',
      transactionalIdPrefix: topic,
      transactionTimeoutMs: brokers.transactionMaxTimeoutMs + 1,
    });
    await expect(sink.createWriter(ctx(0, 1), [])).rejects.toThrow(/more than the broker allows \(transaction\.max\.timeout\.ms = \d+ ms\)/);
  });

  it('transaction timeout shorter than checkpoint timeout plus restart delay: the job fails at start explaining why', async () => {
    const topic = uniqueTopic('timeout-job');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 1 }]);
    const env = StreamExecutionEnvironment.create({
      'execution.checkpointing.interval': 100,
      'execution.checkpointing.timeout': 60_000,
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 0,
      'restart-strategy.fixed-delay.delay': 5_000,
    });
    env
      .fromSource(numberSource({ count: 10 }), 'numbers')
      .map((n) => String(n))
      .sinkTo(new KafkaSink<string>({ bootstrapServers: brokers.bootstrap, topic, deliveryGuarantee: 'exactly-once', transactionalIdPrefix: topic, transactionTimeoutMs: 30_000 }));
    await expect(env.executeAsync(undefined, { log: () => {} }).result).rejects.toThrow(
      /transaction\.timeout\.ms\) is 30000 ms, but .*execution\.checkpointing\.timeout = 60000 ms\) plus the longest restart delay \(5000 ms\) = 65000 ms/,
    );
  });

  it('checkTransactionTimeout decides from the facts alone', () => {
    expect(checkTransactionTimeout({ transactionTimeoutMs: 900_000, brokerMaxTimeoutMs: 900_000, checkpointTimeoutMs: 600_000, restartDelayMsMax: 66_000 })).toBeUndefined();
    expect(checkTransactionTimeout({ transactionTimeoutMs: 900_001, brokerMaxTimeoutMs: 900_000, checkpointTimeoutMs: undefined, restartDelayMsMax: undefined })).toMatch(/transaction\.max\.timeout\.ms/);
    expect(checkTransactionTimeout({ transactionTimeoutMs: 600_000, brokerMaxTimeoutMs: undefined, checkpointTimeoutMs: 600_000, restartDelayMsMax: 0 })).toMatch(/Raise transactionTimeoutMs above 600000 ms/);
  });
});
