import { describe, expect, inject, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { KafkaCluster } from '../src/connectors/kafka/kafka-cluster.js';
import { KafkaSink } from '../src/connectors/kafka/kafka-sink.js';
import { KafkaSource } from '../src/connectors/kafka/kafka-source.js';
import { uniqueTopic } from './services/kafka-test-client.js';

const brokers = inject('kafka');

/** Runs `build`'s job once (no restarts) and returns the error it failed with. */
async function failureOf(build: (env: StreamExecutionEnvironment) => void): Promise<Error> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
  build(env);
  try {
    await env.executeAsync(undefined, { log: () => {} }).result;
  } catch (e) {
    return e as Error;
  }
  throw new Error('the job finished; it should have failed');
}

describe('Kafka connection errors name what is wrong', () => {
  it('a topic that does not exist: the cluster, a source and a sink name it and say to create it', async () => {
    const missing = uniqueTopic('no-such-topic');
    const cluster = new KafkaCluster({ bootstrapServers: brokers.bootstrap });
    try {
      await expect(cluster.topic(missing)).rejects.toThrow(new RegExp(`kafka: topic '${missing}' does not exist \\(create it first`));
    } finally {
      await cluster.close();
    }
    const sourceFailure = await failureOf((env) => {
      env.fromSource(new KafkaSource<string>({ bootstrapServers: brokers.bootstrap, topics: missing, stoppingOffsets: 'latest', groupId: `${missing}-g` }), 'kafka-in').sinkTo(new CollectSink());
    });
    expect(String(sourceFailure)).toMatch(new RegExp(`topic '${missing}' does not exist`));
    const sinkFailure = await failureOf((env) => {
      env.fromElements('a', 'b').sinkTo(new KafkaSink<string>({ bootstrapServers: brokers.bootstrap, topic: missing, deliveryGuarantee: 'at-least-once' }));
    });
    expect(String(sinkFailure)).toMatch(new RegExp(`topic '${missing}' does not exist`));
  });

  it('no broker at the bootstrap address: the error names the address and the cause', async () => {
    const cluster = new KafkaCluster({ bootstrapServers: '127.0.0.1:1', retryTimeoutMs: 300 });
    try {
      await expect(cluster.topic('t')).rejects.toThrow(/kafka: cannot connect to any broker of 127\.0\.0\.1:1 \(connect ECONNREFUSED 127\.0\.0\.1:1\); check bootstrapServers/);
    } finally {
      await cluster.close();
    }
  });
});
