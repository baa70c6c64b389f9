// Kafka benchmarks, in the shape of bench/checkpoint-benchmarks.js (steps in fresh processes,
// metrics per run, median over runs). Name and metrics as in /work/shared/BENCH_FORMAT.md.
//
// kafka-exactly-once: Kafka -> map -> Kafka through a real broker, one process, parallelism 2,
// checkpoints every 1 s in both modes.
// - throughput: THROUGHPUT.records records pre-written to a 4-partition topic are read by a
//   bounded KafkaSource and written by a KafkaSink with deliveryGuarantee 'at-least-once'
//   (flush at every barrier) and then 'exactly-once' (a transaction per subtask and
//   checkpoint); throughputRatio = exactly-once records/s / at-least-once records/s, each over
//   THROUGHPUT.pairs copies, alternating (which goes first changes from run to run).
// - latency: a producer writes LATENCY.perSecond records/s for LATENCY.seconds s, each carrying
//   its send time; the exactly-once job copies them; a read_committed consumer (a second job
//   with a KafkaSource) records when each becomes visible; latencyMsP50/P99 = visible - sent,
//   so they include the wait for the checkpoint to complete (about the interval) and the commit.
// The broker: KAFKA_BOOTSTRAP=host:port, or a single-node broker started here from the jars of
// test/services/kafka (test/services/kafka-broker.ts, compiled with esbuild on the fly).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createTopicsV7 } from '@platformatic/kafka';
import { StreamExecutionEnvironment } from '../dist/index.js';
import { KafkaSink, KafkaSource } from '../dist/connectors/index.js';
import { KafkaCluster } from '../dist/connectors/kafka/kafka-cluster.js';
import { RecordSender } from '../dist/connectors/kafka/record-sender.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const THROUGHPUT = { records: 800_000, pairs: 2, valueBytes: 100, partitions: 4, parallelism: 2, checkpointIntervalMs: 1000 };
const LATENCY = { perSecond: 2000, seconds: 12, partitions: 4, parallelism: 2, checkpointIntervalMs: 1000 };

/** Starts the test broker (compiled from TypeScript into .cache/bench, so its paths to the repository hold). */
async function startBroker() {
  const esbuild = await import('esbuild');
  const out = join(ROOT, '.cache', 'bench', 'kafka-broker.mjs');
  mkdirSync(dirname(out), { recursive: true });
  const ts = readFileSync(join(ROOT, 'test', 'services', 'kafka-broker.ts'), 'utf8');
  writeFileSync(out, (await esbuild.transform(ts, { loader: 'ts', format: 'esm', target: 'node20' })).code);
  const { startKafkaBroker } = await import(pathToFileURL(out).href);
  return startKafkaBroker({ transactionVersion: 2 });
}

async function withBroker(fn) {
  if (process.env.KAFKA_BOOTSTRAP) return fn(process.env.KAFKA_BOOTSTRAP);
  const broker = await startBroker();
  try {
    return await fn(broker.bootstrap);
  } finally {
    await broker.stop();
  }
}

let topicSeq = 0;
async function createTopic(bootstrap, partitions) {
  const name = `bench-${process.pid}-${Date.now().toString(36)}-${topicSeq++}`;
  const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
  try {
    await createTopicsV7.api.async(await cluster.anyConnection(), [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], 10_000, false);
    await cluster.topic(name);
  } finally {
    await cluster.close();
  }
  return name;
}

async function produceFilled(bootstrap, topic, partitions, records, valueBytes) {
  const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
  try {
    await cluster.topic(topic);
    const sender = new RecordSender(cluster, { batchRecordsMax: 5000, compression: 'none', produceTimeoutMs: 30_000 });
    const pad = 'x'.repeat(valueBytes);
    for (let i = 0; i < records; i++) await sender.add({ topic, partition: i % partitions, value: Buffer.from(`${i} ${pad}`.slice(0, valueBytes)), timestamp: BigInt(Date.now()) });
    await sender.flush();
  } finally {
    await cluster.close();
  }
}

/** Counts a topic's records with a read_committed bounded job (checks the copy is complete). */
async function countRecords(bootstrap, topic) {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
  let n = 0;
  env.fromSource(new KafkaSource({ bootstrapServers: bootstrap, topics: topic, stoppingOffsets: 'latest', deserializer: 'bytes' }), 'count').sinkTo({
    createWriter: () => ({ write: () => void n++ }),
  });
  await env.executeAsync(undefined, { log: () => {} }).result;
  return n;
}

async function copyJob(bootstrap, input, output, guarantee) {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': THROUGHPUT.parallelism,
    'execution.checkpointing.interval': THROUGHPUT.checkpointIntervalMs,
    'restart-strategy.type': 'none',
  });
  env
    .fromSource(new KafkaSource({ bootstrapServers: bootstrap, topics: input, stoppingOffsets: 'latest', deserializer: 'bytes' }), 'in')
    .map((b) => b)
    .startNewChain() // the sink's writes may wait (backpressure): not chained to the source, which emits many records per poll
    .sinkTo(new KafkaSink({ bootstrapServers: bootstrap, topic: output, deliveryGuarantee: guarantee, transactionalIdPrefix: output, log: () => {} }));
  const started = performance.now();
  const client = env.executeAsync(undefined, { log: () => {} });
  await client.result;
  const seconds = (performance.now() - started) / 1000;
  return { seconds, checkpoints: client.checkpoints().filter((c) => c.status === 'COMPLETED').length };
}

async function throughputStep(run) {
  return withBroker(async (bootstrap) => {
    const input = await createTopic(bootstrap, THROUGHPUT.partitions);
    await produceFilled(bootstrap, input, THROUGHPUT.partitions, THROUGHPUT.records, THROUGHPUT.valueBytes);
    // at-least-once and exactly-once alternate (pairs times), starting with the other one from run to run:
    // the machine's background load then falls on both alike.
    const first = run % 2 === 0 ? 'at-least-once' : 'exactly-once';
    const second = first === 'at-least-once' ? 'exactly-once' : 'at-least-once';
    const out = { 'at-least-once': { seconds: [], checkpoints: [] }, 'exactly-once': { seconds: [], checkpoints: [] } };
    for (let i = 0; i < THROUGHPUT.pairs; i++) {
      for (const g of [first, second]) {
        const output = await createTopic(bootstrap, THROUGHPUT.partitions);
        const r = await copyJob(bootstrap, input, output, g);
        const copied = await countRecords(bootstrap, output);
        if (copied !== THROUGHPUT.records) throw new Error(`INVALID BENCHMARK: ${g} copied ${copied} of ${THROUGHPUT.records} records (read_committed)`);
        out[g].seconds.push(r.seconds);
        out[g].checkpoints.push(r.checkpoints);
      }
    }
    for (const g of Object.keys(out)) out[g].recordsPerSecond = (THROUGHPUT.records * THROUGHPUT.pairs) / out[g].seconds.reduce((a, b) => a + b, 0);
    return out;
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

async function latencyStep() {
  return withBroker(async (bootstrap) => {
    const input = await createTopic(bootstrap, LATENCY.partitions);
    const output = await createTopic(bootstrap, LATENCY.partitions);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': LATENCY.parallelism, 'execution.checkpointing.interval': LATENCY.checkpointIntervalMs, 'restart-strategy.type': 'none' });
    env
      .fromSource(new KafkaSource({ bootstrapServers: bootstrap, topics: input, deserializer: 'bytes', startingOffsets: 'earliest' }), 'in')
      .map((b) => b)
      .startNewChain() // the sink's writes may wait (backpressure): not chained to the source, which emits many records per poll
      .sinkTo(new KafkaSink({ bootstrapServers: bootstrap, topic: output, deliveryGuarantee: 'exactly-once', transactionalIdPrefix: output, log: () => {} }));
    const pipeline = env.executeAsync(undefined, { log: () => {} });
    // The read_committed reader: a job with one subtask; a record's value is its send time.
    const latencies = [];
    const readerEnv = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    readerEnv.fromSource(new KafkaSource({ bootstrapServers: bootstrap, topics: output, isolationLevel: 'read_committed', fetchMaxWaitMs: 20 }), 'reader').sinkTo({
      createWriter: () => ({ write: (v) => void latencies.push(Date.now() - Number(v)) }),
    });
    const reader = readerEnv.executeAsync(undefined, { log: () => {} });
    const total = LATENCY.perSecond * LATENCY.seconds;
    const cluster = new KafkaCluster({ bootstrapServers: bootstrap });
    try {
      await cluster.topic(input);
      // Give both jobs time to start reading.
      await new Promise((r) => setTimeout(r, 2000));
      const sender = new RecordSender(cluster, { batchRecordsMax: 1, compression: 'none', produceTimeoutMs: 30_000 });
      const t0 = Date.now();
      const perTick = LATENCY.perSecond / 100;
      for (let tick = 0; tick * perTick < total; tick++) {
        const due = t0 + tick * 10;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        for (let i = 0; i < perTick; i++) void sender.add({ topic: input, partition: (tick * perTick + i) % LATENCY.partitions, value: Buffer.from(String(Date.now())) });
        await sender.flush();
      }
      const deadline = Date.now() + 30_000;
      while (latencies.length < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    } finally {
      await cluster.close();
      pipeline.cancel();
      reader.cancel();
      await Promise.allSettled([pipeline.result, reader.result]);
    }
    if (latencies.length !== total) throw new Error(`INVALID BENCHMARK: the read_committed reader saw ${latencies.length} of ${total} records`);
    const sorted = [...latencies].sort((a, b) => a - b);
    return { latencyMsP50: percentile(sorted, 50), latencyMsP99: percentile(sorted, 99), latencyMsMax: sorted.at(-1), records: total };
  });
}

export const kafkaBenchmarks = {
  'kafka-exactly-once': {
    description:
      `Kafka -> map -> Kafka on one single-node broker, one process, parallelism ${THROUGHPUT.parallelism}, checkpoints every ${THROUGHPUT.checkpointIntervalMs} ms: ` +
      `throughputRatio = exactly-once / at-least-once records/s copying ${THROUGHPUT.records} records of ${THROUGHPUT.valueBytes} bytes (${THROUGHPUT.pairs} copies each, alternating); ` +
      `latencyMsP50/P99 = send to visible for a read_committed consumer at ${LATENCY.perSecond} records/s (exactly-once)`,
    parallelism: THROUGHPUT.parallelism,
    headline: ['throughputRatio', 'latencyMsP50', 'latencyMsP99'],
    target: { throughputRatio: '>= 0.9' },
    config: { throughput: THROUGHPUT, latency: LATENCY, broker: process.env.KAFKA_BOOTSTRAP ? 'KAFKA_BOOTSTRAP' : 'started (test/services/kafka-broker.ts, transaction.version 2)' },
    // A step starts its own broker (about 15 s) unless KAFKA_BOOTSTRAP is set, and copies 4 x 800 000 records.
    stepTimeoutMs: 300_000,
    steps: (run) => [`throughput-${run}`, 'latency'],
    runStep: (step) => (step === 'latency' ? latencyStep() : throughputStep(Number(step.split('-')[1]))),
    metrics: (samples) => {
      const t = Object.entries(samples).find(([k]) => k.startsWith('throughput-'))[1];
      const l = samples.latency;
      return {
        throughputRatio: t['exactly-once'].recordsPerSecond / t['at-least-once'].recordsPerSecond,
        recordsPerSecondExactlyOnce: Math.round(t['exactly-once'].recordsPerSecond),
        recordsPerSecondAtLeastOnce: Math.round(t['at-least-once'].recordsPerSecond),
        latencyMsP50: l.latencyMsP50,
        latencyMsP99: l.latencyMsP99,
        latencyMsMax: l.latencyMsMax,
        checkpointIntervalMs: LATENCY.checkpointIntervalMs,
      };
    },
  },
};
