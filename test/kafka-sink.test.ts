import { describe, expect, inject, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { KafkaSink, type DeliveryGuarantee } from '../src/connectors/kafka/kafka-sink.js';
import { KafkaSource } from '../src/connectors/kafka/kafka-source.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, openTransactions, uniqueTopic } from './services/kafka-test-client.js';

const KEYS = 13;
const brokers = inject('kafka');

interface RunOptions {
  readonly bootstrap: string;
  readonly topic: string;
  readonly plan: FaultPlan;
  readonly records: number;
  readonly parallelism: number;
  readonly deliveryGuarantee: DeliveryGuarantee;
  readonly prefix: string;
  readonly emitRecord?: boolean;
  readonly config?: Record<string, string | number | boolean>;
}

async function runCountingJob(o: RunOptions) {
  const logs: string[] = [];
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': o.parallelism,
    'execution.checkpointing.interval': 100,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 30,
    'restart-strategy.fixed-delay.delay': 10,
    ...o.config,
  });
  env
    // 4,000 a second: the run spans enough checkpoints for the plan's commit fault (commit #5 of seed 602).
    .fromSource(numberSource({ count: o.records, eventsPerSecond: 4_000 }), 'numbers')
    .process(o.plan.failingProcess<number>())
    .name('faults')
    .keyBy((n) => n % KEYS)
    .process(new CountPerKey(o.emitRecord ?? false))
    .uid('count')
    .sinkTo(
      o.plan.wrapSink(
        new KafkaSink<string, string>({
          bootstrapServers: o.bootstrap,
          topic: o.topic,
          deliveryGuarantee: o.deliveryGuarantee,
          transactionalIdPrefix: o.prefix,
          key: (s) => s.split(':')[0]!,
          log: (m) => logs.push(m),
        }),
      ),
    )
    .uid('kafka-sink');
  const result = await env.executeAsync(undefined, { log: (m) => logs.push(m) }).result;
  return { result, logs };
}

const protocols = [
  { name: 'transaction.version 2', bootstrap: brokers.bootstrap },
  { name: 'transaction.version 1', bootstrap: brokers.bootstrapTv1 },
] as const;

describe('Kafka sink against a real broker', () => {
  for (const proto of protocols) {
    it(`exactly-once (${proto.name}), parallelism 2, >= 5 injected failures: read_committed output equals the reference`, async () => {
      const records = 4_000;
      const seed = proto.name.endsWith('2') ? 602 : 601;
      const plan = FaultPlan.seeded({ seed, recordFaults: 4, recordRange: records, commitFaults: 1, checkpointRange: 6 });
      console.log(`kafka sink exactly-once (${proto.name}): ${plan.describe()}`);
      const topic = uniqueTopic('eos-out');
      await createTopics(proto.bootstrap, [{ name: topic, partitions: 3 }]);
      const { result, logs } = await runCountingJob({ bootstrap: proto.bootstrap, topic, plan, records, parallelism: 2, deliveryGuarantee: 'exactly-once', prefix: topic });
      expect(result.numRestarts, `${plan.describe()}\n${logs.join('\n')}`).toBeGreaterThanOrEqual(5);
      const committed = await readTopicWithJavaConsumer(proto.bootstrap, topic, { isolation: 'read_committed' });
      expect(compareMultisets(committed, countReference(records, KEYS)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      expect((await openTransactions(proto.bootstrap)).filter((id) => id.startsWith(`${topic}-`))).toEqual([]);
    });
  }

  it('at-least-once, >= 5 injected failures: no record lost', async () => {
    const records = 4_000;
    const plan = FaultPlan.seeded({ seed: 610, recordFaults: 5, recordRange: records });
    console.log(`kafka sink at-least-once: ${plan.describe()}`);
    const topic = uniqueTopic('alo-out');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 2 }]);
    const { result } = await runCountingJob({
      bootstrap: brokers.bootstrap,
      topic,
      plan,
      records,
      parallelism: 2,
      deliveryGuarantee: 'at-least-once',
      prefix: topic,
      emitRecord: true,
    });
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
    const seen = new Set(await readTopicWithJavaConsumer(brokers.bootstrap, topic, { isolation: 'read_committed' }));
    const lost = Array.from({ length: records }, (_, i) => String(i)).filter((r) => !seen.has(r));
    expect(lost, plan.describe()).toEqual([]);
  });

  it('records leave the writer after lingerMs, without a full round or a checkpoint barrier (they waited for 2,000 records)', { timeout: 90_000 }, async () => {
    const topic = uniqueTopic('linger-out');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 1 }]);
    // 30 records reach the sink and then no more (the source runs on): no round of 2,000 ever
    // fills, no checkpoint comes, and the job does not end ('none' delivery).
    const producer = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
    producer
      .fromSource(numberSource({ eventsPerSecond: 100 }), 'numbers')
      .filter((n) => n < 30)
      .map((n) => String(n))
      .sinkTo(new KafkaSink<string>({ bootstrapServers: brokers.bootstrap, topic, deliveryGuarantee: 'none', log: () => {} }));
    const running = producer.executeAsync('linger producer');
    try {
      const reader = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
      const first = await reader
        .fromSource(new KafkaSource<string>({ bootstrapServers: brokers.bootstrap, topics: topic, startingOffsets: 'earliest', isolationLevel: 'read_uncommitted', log: () => {} }), 'read')
        .executeAndCollect(20);
      expect(first).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
      // (Without a linger time this waited until the test's timeout.)
    } finally {
      running.cancel();
      await running.result.catch(() => undefined);
    }
  });
});
