import { describe, expect, inject, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { KafkaSink } from '../src/connectors/kafka/kafka-sink.js';
import { KafkaSource, type ConsumedRecord } from '../src/connectors/kafka/kafka-source.js';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, produce, uniqueTopic } from './services/kafka-test-client.js';
import { kafkaDeadLetter } from '../src/connectors/kafka/kafka-dead-letter.js';
import { PostgresUpsertSink } from '../src/connectors/postgres/upsert-sink.js';
import { machineServer, sql, uniqueTableName } from './services/postgres-cluster.js';

/** Dead-letter outputs of the Kafka source (records that fail to deserialize) and sink (elements that cannot be serialized), against a real broker. */

const brokers = inject('kafka');

async function collect<T>(source: KafkaSource<T>): Promise<T[]> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'execution.checkpointing.interval': 100 });
  const sink = new CollectSink<T>();
  env.fromSource(source, 'kafka').sinkTo(sink);
  await env.executeAsync(undefined, { log: () => {} }).result;
  return sink.values;
}

/** Every record of a topic with its headers (read_committed). */
function readRaw(topic: string): Promise<ConsumedRecord[]> {
  return collect(new KafkaSource<ConsumedRecord>({ bootstrapServers: brokers.bootstrap, topics: topic, stoppingOffsets: 'latest', recordDeserializer: (r) => r }));
}

const header = (r: ConsumedRecord, name: string): string | undefined => r.headers.find(([k]) => k === name)?.[1]?.toString('utf8');

describe('Kafka dead-letter outputs', () => {
  it('source: records that fail to deserialize go to the dead-letter topic with topic/partition/offset and the error; the rest is read', async () => {
    const input = uniqueTopic('dl-src-in');
    const dlq = uniqueTopic('dl-src-dlq');
    await createTopics(brokers.bootstrap, [
      { name: input, partitions: 2 },
      { name: dlq, partitions: 1 },
    ]);
    await produce(brokers.bootstrap, input, [
      { partition: 0, value: '{"n":1}' },
      { partition: 0, value: 'not json', key: 'k0' },
      { partition: 0, value: '{"n":2}' },
      { partition: 1, value: '{"n":3}' },
      { partition: 1, value: '{"n":' },
    ]);
    const logs: string[] = [];
    const got = await collect(new KafkaSource<{ n: number }>({ bootstrapServers: brokers.bootstrap, topics: input, stoppingOffsets: 'latest', deserializer: 'json', deadLetter: { topic: dlq }, log: (m) => logs.push(m) }));
    expect(got.map((r) => r.n).sort()).toEqual([1, 2, 3]);
    const letters = await readRaw(dlq);
    expect(letters.map((r) => r.value?.toString('utf8')).sort()).toEqual(['not json', '{"n":']);
    const a = letters.find((r) => r.value?.toString('utf8') === 'not json')!;
    expect(a.key?.toString('utf8')).toBe('k0');
    expect(header(a, 'sluice.dlq.topic')).toBe(input);
    expect(header(a, 'sluice.dlq.partition')).toBe('0');
    expect(header(a, 'sluice.dlq.offset')).toBe('1');
    expect(header(a, 'sluice.dlq.error')).toMatch(/JSON/);
    const b = letters.find((r) => r.value?.toString('utf8') === '{"n":')!;
    expect([header(b, 'sluice.dlq.partition'), header(b, 'sluice.dlq.offset')]).toEqual(['1', '1']);
    expect(logs.join('\n')).toContain('went to the dead-letter output');
  });

  it('source: a dead-letter function gets the consumed record and the error', async () => {
    const input = uniqueTopic('dl-src-fn');
    await createTopics(brokers.bootstrap, [{ name: input, partitions: 1 }]);
    await produce(brokers.bootstrap, input, [{ partition: 0, value: '1' }, { partition: 0, value: 'x' }, { partition: 0, value: '3' }]);
    const letters: string[] = [];
    const got = await collect(
      new KafkaSource<number>({
        bootstrapServers: brokers.bootstrap,
        topics: input,
        stoppingOffsets: 'latest',
        deserializer: (b) => {
          const n = Number(b?.toString('utf8'));
          if (Number.isNaN(n)) throw new Error('not a number');
          return n;
        },
        deadLetter: async (r, e) => {
          await new Promise((x) => setTimeout(x, 10));
          letters.push(`${r.topic}:${r.partition}:${r.offset}:${r.value?.toString('utf8')}:${e.message}`);
        },
        log: () => {},
      }),
    );
    expect(got).toEqual([1, 3]);
    expect(letters).toEqual([`${input}:0:1:x:not a number`]);
  });

  it('sink (exactly-once): elements the serializer rejects go to the dead-letter topic in the same transaction; the rest is written', async () => {
    const out = uniqueTopic('dl-sink-out');
    const dlq = uniqueTopic('dl-sink-dlq');
    await createTopics(brokers.bootstrap, [
      { name: out, partitions: 2 },
      { name: dlq, partitions: 1 },
    ]);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'execution.checkpointing.interval': 100 });
    env.fromElements(1, 2, 3, 4, 5, 6).sinkTo(
      new KafkaSink<number>({
        bootstrapServers: brokers.bootstrap,
        topic: out,
        deliveryGuarantee: 'exactly-once',
        transactionalIdPrefix: out,
        valueSerializer: (n) => {
          if (n % 3 === 0) throw new Error(`${n} is a multiple of three`);
          return Buffer.from(String(n));
        },
        deadLetter: { topic: dlq },
        log: () => {},
      }),
    );
    await env.executeAsync(undefined, { log: () => {} }).result;
    expect((await readTopicWithJavaConsumer(brokers.bootstrap, out, { idleMs: 2000 })).sort()).toEqual(['1', '2', '4', '5']);
    const letters = await readRaw(dlq);
    expect(letters.map((r) => JSON.parse(r.value!.toString('utf8')) as unknown)).toEqual([
      { error: `kafka sink: cannot make a record of 3 for topic '${out}': 3 is a multiple of three`, record: 3 },
      { error: `kafka sink: cannot make a record of 6 for topic '${out}': 6 is a multiple of three`, record: 6 },
    ]);
    expect(header(letters[0]!, 'sluice.dlq.target.topic')).toBe(out);
    expect(header(letters[0]!, 'sluice.dlq.error')).toContain('3 is a multiple of three');
  });

  it('sink: a dead-letter function, and without one the job fails naming the element', async () => {
    const out = uniqueTopic('dl-sink-fn');
    await createTopics(brokers.bootstrap, [{ name: out, partitions: 1 }]);
    const serializer = (s: string): Buffer => {
      if (s === 'bad') throw new Error('refused');
      return Buffer.from(s);
    };
    const letters: string[] = [];
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    env.fromElements('a', 'bad', 'b').sinkTo(new KafkaSink<string>({ bootstrapServers: brokers.bootstrap, topic: out, deliveryGuarantee: 'at-least-once', valueSerializer: serializer, deadLetter: (v, e) => void letters.push(`${v}: ${e.message}`) }));
    await env.executeAsync(undefined, { log: () => {} }).result;
    expect(letters).toEqual([`bad: kafka sink: cannot make a record of "bad" for topic '${out}': refused`]);
    expect(await readTopicWithJavaConsumer(brokers.bootstrap, out, { idleMs: 2000 })).toEqual(['a', 'b']);

    const failing = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
    failing.fromElements('c', 'bad').sinkTo(new KafkaSink<string>({ bootstrapServers: brokers.bootstrap, topic: out, valueSerializer: serializer }));
    await expect(failing.executeAsync(undefined, { log: () => {} }).result).rejects.toThrow(/cannot make a record of "bad" for topic '.*': refused/);
  });
});

describe('kafkaDeadLetter: a Kafka dead-letter topic for the PostgreSQL sinks', () => {
  it('rows PostgreSQL refuses go to the topic with the error and the origin; the rest is written', async () => {
    const server = await machineServer();
    const t = uniqueTableName('dl_kafka');
    await sql(server, `CREATE TABLE ${t} (k integer PRIMARY KEY, c integer NOT NULL CHECK (c >= 0))`);
    try {
      const dlq = uniqueTopic('pg-dlq');
      await createTopics(brokers.bootstrap, [{ name: dlq, partitions: 2 }]);
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'execution.checkpointing.interval': 50, 'restart-strategy.type': 'none' });
      env
        .fromElements(...Array.from({ length: 8 }, (_, k) => ({ k, c: k % 3 === 2 ? -k : k })))
        .sinkTo(
          new PostgresUpsertSink<{ k: number; c: number }, 'k' | 'c'>({
            connection: server.connection,
            table: t,
            row: { fields: { k: (r) => r.k, c: (r) => r.c } },
            keyColumns: ['k'],
            deadLetter: kafkaDeadLetter({ bootstrapServers: brokers.bootstrap, topic: dlq, origin: t }),
          }),
        );
      await env.executeAsync(undefined, { log: () => {} }).result;
      expect((await sql<{ k: number }>(server, `SELECT k FROM ${t} ORDER BY k`)).map((r) => r.k)).toEqual([0, 1, 3, 4, 6, 7]);
      const letters = await readRaw(dlq);
      const values = letters.map((r) => JSON.parse(r.value!.toString('utf8')) as { error: string; record: { k: number; c: number } });
      expect(values.map((v) => v.record).sort((a, b) => a.k - b.k)).toEqual([
        { k: 2, c: -2 },
        { k: 5, c: -5 },
      ]);
      for (const [i, r] of letters.entries()) {
        expect(values[i]!.error).toMatch(/cannot be written to .*check constraint/);
        expect(header(r, 'sluice.dlq.origin')).toBe(t);
        expect(header(r, 'sluice.dlq.error')).toBe(values[i]!.error);
      }
    } finally {
      await sql(server, `DROP TABLE IF EXISTS ${t}`).catch(() => {});
      await server.stop();
    }
  });

  it('a dead letter that cannot be written fails the job, naming the topic and the record error', async () => {
    const server = await machineServer();
    const t = uniqueTableName('dl_kafka_missing');
    await sql(server, `CREATE TABLE ${t} (k integer PRIMARY KEY, c integer NOT NULL CHECK (c >= 0))`);
    try {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
      env.fromElements({ k: 1, c: -1 }).sinkTo(
        new PostgresUpsertSink<{ k: number; c: number }, 'k' | 'c'>({
          connection: server.connection,
          table: t,
          row: { fields: { k: (r) => r.k, c: (r) => r.c } },
          keyColumns: ['k'],
          deadLetter: kafkaDeadLetter({ bootstrapServers: brokers.bootstrap, topic: uniqueTopic('no-such-dlq'), retryTimeoutMs: 1000 }),
        }),
      );
      await expect(env.executeAsync(undefined, { log: () => {} }).result).rejects.toThrow(/writing a dead letter to Kafka topic 'no-such-dlq.*' failed: .*check constraint/s);
    } finally {
      await sql(server, `DROP TABLE IF EXISTS ${t}`).catch(() => {});
      await server.stop();
    }
  });
});
