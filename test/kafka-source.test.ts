import { describe, expect, inject, it } from 'vitest';
import { createPartitionsV3 } from '@platformatic/kafka';
import { OutputTag, StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy } from '../src/index.js';
import type { ReaderOutput, SourceReader } from '../src/api/source.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { KafkaCluster } from '../src/connectors/kafka/kafka-cluster.js';
import { KafkaSink } from '../src/connectors/kafka/kafka-sink.js';
import { KafkaSource, type KafkaSplit } from '../src/connectors/kafka/kafka-source.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { MetricRegistry } from '../src/metrics/metric-registry.js';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, leaveOpenTransaction, produce, uniqueTopic } from './services/kafka-test-client.js';
import { collectingReaderOutput } from '../src/testing/reader-output.js';

const KEYS = 13;
const brokers = inject('kafka');

/** Runs a job reading `source` into a collect sink (bounded sources only). */
async function collect<T>(source: KafkaSource<T>, parallelism = 1): Promise<T[]> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism });
  const sink = new CollectSink<T>();
  env.fromSource(source, 'kafka').sinkTo(sink);
  await env.executeAsync(undefined, { log: () => {} }).result;
  return sink.values;
}

/** Polls a reader until `n` records came (or `timeoutMs` passed). */
async function pollReader<T>(reader: SourceReader<T, KafkaSplit>, n: number, timeoutMs = 10_000): Promise<T[]> {
  const out: T[] = [];
  const output: ReaderOutput<T> = collectingReaderOutput((v) => out.push(v));
  const deadline = Date.now() + timeoutMs;
  while (out.length < n && Date.now() < deadline) {
    if (reader.pollNext(output) === 'nothing') await reader.isAvailable();
  }
  return out;
}

describe('Kafka source against a real broker', () => {
  it('Kafka -> keyed count -> Kafka exactly-once, >= 5 injected failures: the read_committed output equals the reference', async () => {
    const records = 4_000;
    const input = uniqueTopic('k2k-in');
    const output = uniqueTopic('k2k-out');
    await createTopics(brokers.bootstrap, [
      { name: input, partitions: 3 },
      { name: output, partitions: 2 },
    ]);
    await produce(brokers.bootstrap, input, Array.from({ length: records }, (_, i) => ({ partition: i % 3, value: String(i) })));
    const plan = FaultPlan.seeded({ seed: 620, recordFaults: 5, recordRange: records, commitFaults: 1, checkpointRange: 5 });
    console.log(`kafka -> kafka exactly-once: ${plan.describe()}`);
    const logs: string[] = [];
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 2,
      'execution.checkpointing.interval': 100,
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 30,
      'restart-strategy.fixed-delay.delay': 10,
    });
    env
      .fromSource(new KafkaSource<string>({ bootstrapServers: brokers.bootstrap, topics: input, stoppingOffsets: 'latest', groupId: `${input}-group`, queueRecordsMax: 200 }), 'kafka-in')
      .uid('kafka-in')
      .map((s) => Number(s))
      .process(plan.failingProcess<number>())
      .keyBy((n) => n % KEYS)
      .process(new CountPerKey())
      .uid('count')
      .sinkTo(
        plan.wrapSink(
          new KafkaSink<string, string>({
            bootstrapServers: brokers.bootstrap,
            topic: output,
            deliveryGuarantee: 'exactly-once',
            transactionalIdPrefix: output,
            key: (s) => s.split(':')[0]!,
            log: (m) => logs.push(m),
          }),
        ),
      )
      .uid('kafka-out');
    const result = await env.executeAsync(undefined, { log: (m) => logs.push(m) }).result;
    expect(result.numRestarts, `${plan.describe()}\n${logs.join('\n')}`).toBeGreaterThanOrEqual(5);
    const committed = await readTopicWithJavaConsumer(brokers.bootstrap, output);
    expect(compareMultisets(committed, countReference(records, KEYS)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('read_committed skips aborted and open transactions; read_uncommitted sees them', async () => {
    const topic = uniqueTopic('rc');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 1 }]);
    await produce(brokers.bootstrap, topic, [{ partition: 0, value: 'c1' }]);
    await leaveOpenTransaction(brokers.bootstrap, `${topic}-t-1`, topic, ['aborted-1', 'aborted-2']);
    // Fencing the id aborts that transaction (an ABORT marker follows its records).
    await leaveOpenTransaction(brokers.bootstrap, `${topic}-t-1`, topic, ['aborted-3']);
    await leaveOpenTransaction(brokers.bootstrap, `${topic}-t-1`, topic, []);
    await produce(brokers.bootstrap, topic, [{ partition: 0, value: 'c2' }]);
    expect(await collect(new KafkaSource({ bootstrapServers: brokers.bootstrap, topics: topic, stoppingOffsets: 'latest' }))).toEqual(['c1', 'c2']);
    const all = await collect(new KafkaSource({ bootstrapServers: brokers.bootstrap, topics: topic, stoppingOffsets: 'latest', isolationLevel: 'read_uncommitted' }));
    expect(all).toEqual(['c1', 'aborted-1', 'aborted-2', 'aborted-3', 'c2']);
  });

  it('starting offsets: earliest, latest, timestamp, committed group offsets (committed back on checkpoints)', async () => {
    const topic = uniqueTopic('start');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 2 }]);
    const t0 = Date.now() - 100_000;
    await produce(
      brokers.bootstrap,
      topic,
      Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, value: `v${i}`, timestampMs: t0 + i * 1000 })),
    );
    const opts = { bootstrapServers: brokers.bootstrap, topics: [topic], stoppingOffsets: 'latest' as const };
    expect((await collect(new KafkaSource({ ...opts, startingOffsets: 'earliest' }))).sort()).toEqual(['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9']);
    expect(await collect(new KafkaSource({ ...opts, startingOffsets: 'latest' }))).toEqual([]);
    expect((await collect(new KafkaSource({ ...opts, startingOffsets: { timestampMs: t0 + 6000 } }))).sort()).toEqual(['v6', 'v7', 'v8', 'v9']);
    // A checkpointed run commits its offsets to the group; a later run from the committed offsets reads only what came after.
    const groupId = `${topic}-group`;
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'execution.checkpointing.interval': 50 });
    const sink = new CollectSink<string>();
    env.fromSource(new KafkaSource({ ...opts, groupId }), 'kafka').sinkTo(sink);
    await env.executeAsync(undefined, { log: () => {} }).result;
    expect(sink.values.length).toBe(10);
    await produce(brokers.bootstrap, topic, [{ partition: 1, value: 'new' }]);
    expect(await collect(new KafkaSource({ ...opts, groupId, startingOffsets: { committed: true } }))).toEqual(['new']);
  });

  it('a malformed record fails the job naming its topic, partition and offset', async () => {
    const topic = uniqueTopic('bad');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 1 }]);
    await produce(brokers.bootstrap, topic, [
      { partition: 0, value: '{"ok":1}' },
      { partition: 0, value: '{"ok":2}' },
      { partition: 0, value: 'not json' },
    ]);
    await expect(collect(new KafkaSource<unknown>({ bootstrapServers: brokers.bootstrap, topics: topic, stoppingOffsets: 'latest', deserializer: 'json' }))).rejects.toThrow(
      new RegExp(`cannot deserialize the record at topic '${topic}' partition 0 offset 2`),
    );
  });

  it('topic pattern, user deserializer over the whole record, and partition discovery of new partitions', async () => {
    const base = uniqueTopic('pat');
    await createTopics(brokers.bootstrap, [{ name: `${base}-a`, partitions: 1 }]);
    await produce(brokers.bootstrap, `${base}-a`, [{ partition: 0, key: 'k', value: 'x' }]);
    const source = new KafkaSource<string>({
      bootstrapServers: brokers.bootstrap,
      topicPattern: new RegExp(`^${base}-`),
      partitionDiscoveryIntervalMs: 100,
      recordDeserializer: (r) => `${r.topic}/${r.partition}/${r.offset}/${r.key?.toString()}=${r.value?.toString()}`,
      log: () => {},
    });
    const splits = await source.createSplits(1);
    const reader = source.createReader({ subtaskIndex: 0, parallelism: 1, attemptNumber: 0, nowMs: () => Date.now(), sendSplitRequest: () => {} });
    await reader.start?.();
    reader.addSplits(splits);
    reader.noMoreSplits();
    try {
      expect(await pollReader(reader, 1)).toEqual([`${base}-a/0/0/k=x`]);
      // A new partition of the topic and a new topic of the pattern are found and read from their start.
      const cluster = new KafkaCluster({ bootstrapServers: brokers.bootstrap });
      await createPartitionsV3.api.async(await cluster.anyConnection(), [{ name: `${base}-a`, count: 2 }], 10_000, false);
      await cluster.close();
      await createTopics(brokers.bootstrap, [{ name: `${base}-b`, partitions: 1 }]);
      await produce(brokers.bootstrap, `${base}-a`, [{ partition: 1, value: 'y' }]);
      await produce(brokers.bootstrap, `${base}-b`, [{ partition: 0, value: 'z' }]);
      expect((await pollReader(reader, 2)).sort()).toEqual([`${base}-a/1/0/undefined=y`, `${base}-b/0/0/undefined=z`]);
      expect(reader.snapshotState(1).map((s) => `${s.topic}:${s.partition}@${s.offset}`).sort()).toEqual([`${base}-a:0@1`, `${base}-a:1@1`, `${base}-b:0@1`]);
    } finally {
      await reader.close?.();
    }
  });

  it('fromSource with a watermark strategy: watermarks per partition, so a partition that lags behind loses no record to lateness', { timeout: 60_000 }, async () => {
    const topic = uniqueTopic('wm');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 2 }]);
    // Partition 0 has 300 s of events; partition 1 gets its first 30 s only after the job read
    // all of partition 0 (a partition that lags, e.g. its producer was down). Each partition's
    // timestamps only grow.
    const n = 3000;
    const t0 = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;
    const fast = Array.from({ length: n }, (_, i) => ({ partition: 0, value: '0', timestampMs: t0 + i * 100 }));
    const slow = Array.from({ length: n }, (_, i) => ({ partition: 1, value: '1', timestampMs: t0 + i * 10 }));
    await produce(brokers.bootstrap, topic, fast);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 5 });
    const lateTag = new OutputTag<string>('late');
    const counts = env
      .fromSource(new KafkaSource<string>({ bootstrapServers: brokers.bootstrap, topics: topic, startingOffsets: 'earliest', log: () => {} }), WatermarkStrategy.forMonotonousTimestamps<string>(), 'kafka')
      .keyBy((p) => p)
      .window(TumblingEventTimeWindows.of(1000))
      .sideOutputLateData(lateTag)
      .aggregate<number, number, string>(
        { createAccumulator: () => 0, add: (_v: string, c: number) => c + 1, getResult: (c: number) => c, merge: (a: number, b: number) => a + b },
        { process: (p, ctx, c, out) => out.collect(`${p}@${ctx.window.start}=${c[0]}`) },
      );
    const sink = new CollectSink<string>();
    const late = new CollectSink<string>();
    counts.sinkTo(sink);
    counts.getSideOutput(lateTag).sinkTo(late);
    const job = env.executeAsync(undefined, { log: () => {} });
    try {
      await expect.poll(() => job.progress().sourceRecords, { timeout: 20_000 }).toBe(n);
      await new Promise((r) => setTimeout(r, 100)); // periodic watermarks while partition 1 has nothing
      await produce(brokers.bootstrap, topic, slow);
      // The watermark can now reach 29.99 s (partition 1's last record): windows up to [28 s, 29 s) fire.
      const windowOf = (t: number): number => t - (t % 1000);
      const lastFired = windowOf(t0 + 29_989) - 1000;
      const expected = new Map<string, number>();
      for (const r of [...fast, ...slow]) {
        const w = windowOf(r.timestampMs);
        if (w + 1000 <= lastFired + 1000) expected.set(`${r.partition}@${w}`, (expected.get(`${r.partition}@${w}`) ?? 0) + 1);
      }
      await expect.poll(() => sink.values.length + late.values.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(expected.size);
      await new Promise((r) => setTimeout(r, 100));
      expect(late.values.length).toBe(0);
      expect([...sink.values].sort()).toEqual([...expected].map(([k, c]) => `${k}=${c}`).sort());
    } finally {
      job.cancel();
      await job.result.catch(() => {});
    }
  });

  it('watermark alignment per partition: one subtask reading a partition far ahead in event time pauses fetching it until the other caught up', { timeout: 60_000 }, async () => {
    const topic = uniqueTopic('align');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 2 }]);
    // Partition 0 moves 100 ms of event time a record, partition 1 10 ms; small record batches
    // and small fetches, so that fetching one partition can be paused while the other goes on.
    const n = 2000;
    const t0 = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;
    await produce(
      brokers.bootstrap,
      topic,
      Array.from({ length: 2 * n }, (_, k) => ({ partition: k % 2, value: String(k % 2), timestampMs: t0 + Math.floor(k / 2) * (k % 2 === 0 ? 100 : 10) })),
      20,
    );
    const lead = async (aligned: boolean): Promise<{ leadMs: number; records: number }> => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 5 });
      let strategy = WatermarkStrategy.forMonotonousTimestamps<string>();
      if (aligned) strategy = strategy.withWatermarkAlignment('partitions', 1_000, 10);
      let latestSlow = t0;
      let slowSeen = 0;
      let leadMs = 0;
      let records = 0;
      env
        .fromSource(
          new KafkaSource<string>({ bootstrapServers: brokers.bootstrap, topics: topic, startingOffsets: 'earliest', stoppingOffsets: 'latest', fetchPartitionMaxBytes: 256, fetchMaxWaitMs: 10, queueRecordsMax: 20, log: () => {} }),
          strategy,
          'kafka',
        )
        .process<string>({
          processElement: (p, ctx, out) => {
            const t = ctx.timestamp()!;
            if (p === '1') {
              latestSlow = t;
              slowSeen++;
            } else if (slowSeen < n) leadMs = Math.max(leadMs, t - latestSlow);
            out.collect(p);
          },
        })
        .sinkTo({ createWriter: () => ({ write: () => void records++ }) });
      expect((await env.executeAsync(undefined, { log: () => {} }).result).status).toBe('FINISHED');
      return { leadMs, records };
    };
    const unaligned = await lead(false);
    const aligned = await lead(true);
    // Unaligned, both partitions are fetched as fast as they come: partition 0 runs minutes ahead.
    expect(unaligned.leadMs).toBeGreaterThan(60_000);
    // Aligned (the subtask's watermark is partition 1's, so only pausing partition 0 helps): the
    // drift, plus the records of partition 0 fetched or queued before the pause took effect.
    expect(aligned.leadMs).toBeLessThan(30_000);
    expect(unaligned.records).toBe(2 * n);
    expect(aligned.records).toBe(2 * n);
  });

  it('reports the consumer lag of every partition (records-lag) to the metric group it is given', async () => {
    const topic = uniqueTopic('lag');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 2 }]);
    await produce(brokers.bootstrap, topic, Array.from({ length: 3000 }, (_, i) => ({ partition: i % 2, value: String(i) })));
    const registry = new MetricRegistry();
    const group = registry.addGroup(['taskmanager', 'job', 'task', 'operator'], { operator_name: 'kafka' });
    const source = new KafkaSource<string>({ bootstrapServers: brokers.bootstrap, topics: topic, queueRecordsMax: 50, startingOffsets: 'earliest', log: () => {} });
    const splits = await source.createSplits(1);
    const reader = source.createReader({ subtaskIndex: 0, parallelism: 1, attemptNumber: 0, nowMs: () => Date.now(), metricGroup: group, sendSplitRequest: () => {} });
    await reader.start?.();
    reader.addSplits(splits);
    reader.noMoreSplits();
    try {
      const lags = (): Map<string, number> =>
        new Map(registry.collect().filter((m) => m.name === 'records-lag').map((m) => [`${m.variables.topic}:${m.variables.partition}`, m.value]));
      const first = await pollReader(reader, 100);
      expect(first.length).toBeLessThan(3000);
      // Partial read: lag is what is left in each partition, and together what was not read.
      await expect.poll(() => [...lags().values()].reduce((a, b) => a + b, 0), { timeout: 10_000 }).toBeGreaterThan(0);
      expect([...lags().keys()].sort()).toEqual([`${topic}:0`, `${topic}:1`]);
      await pollReader(reader, 3000 - first.length);
      await expect.poll(() => [...lags().values()].reduce((a, b) => a + b, 0), { timeout: 10_000 }).toBe(0);
    } finally {
      await reader.close?.();
    }
  });
});
