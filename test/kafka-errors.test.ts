import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { JobExecutionError, StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { KafkaCluster } from '../src/connectors/kafka/kafka-cluster.js';
import { KafkaSink } from '../src/connectors/kafka/kafka-sink.js';
import { KafkaSource } from '../src/connectors/kafka/kafka-source.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { classifyThrowable } from '../src/runtime/recovery/throwable-classifier.js';
import { createTopics, uniqueTopic } from './services/kafka-test-client.js';
import { ClusterProcesses, restGet, runSluice } from './support/cluster-processes.js';

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

/** Runs `build`'s job with five restarts allowed, 1 ms apart; the error it failed with and the restarts it made. */
async function failureWithRestarts(build: (env: StreamExecutionEnvironment) => void, more: Record<string, number> = {}): Promise<{ error: Error; restarts: number }> {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': 1,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 5,
    'restart-strategy.fixed-delay.delay': 1,
    ...more,
  });
  build(env);
  const executor = new LocalExecutor(env.getJobGraph('kafka-errors'), env.config, { log: () => {} });
  const error = await executor.run().then(
    (r) => new Error(`the job ended ${r.status}; it should have failed`),
    (e: Error) => e,
  );
  expect(error, error.stack).toBeInstanceOf(JobExecutionError);
  return { error, restarts: executor.progress().numRestarts };
}

const NOT_RESTARTED = /\(not restarted: a restart cannot fix this failure\)$/;

describe('Kafka misconfigurations fail the job at once, whatever the restart strategy', () => {
  it('a sink writing to a topic that does not exist (the test brokers do not create topics; Sluice never asks them to)', async () => {
    const missing = uniqueTopic('no-such-topic');
    const { error, restarts } = await failureWithRestarts((env) => {
      env.fromSource(numberSource({ count: 10 }), 'numbers').map((n) => String(n)).sinkTo(new KafkaSink<string>({ bootstrapServers: brokers.bootstrap, topic: missing, deliveryGuarantee: 'at-least-once', retryTimeoutMs: 1000 }));
    });
    expect(error.message).toMatch(new RegExp(`kafka: topic '${missing}' does not exist \\(create it first`));
    expect(error.message).toMatch(NOT_RESTARTED);
    expect(restarts).toBe(0);
  });

  it("an exactly-once sink whose transaction timeout is above the brokers' transaction.max.timeout.ms", async () => {
    const topic = uniqueTopic('txn-timeout');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 1 }]);
    const { error, restarts } = await failureWithRestarts(
      (env) => {
        env
          .fromSource(numberSource({ count: 10 }), 'numbers')
          .map((n) => String(n))
          .sinkTo(
            new KafkaSink<string>({
              bootstrapServers: brokers.bootstrap,
              topic,
              deliveryGuarantee: 'exactly-once',
              transactionalIdPrefix: topic,
              transactionTimeoutMs: brokers.transactionMaxTimeoutMs + 60_000,
            }),
          );
      },
      { 'execution.checkpointing.interval': 100 },
    );
    expect(error.message).toMatch(/more than the broker allows \(transaction\.max\.timeout\.ms = \d+ ms\)/);
    expect(error.message).toMatch(NOT_RESTARTED);
    expect(restarts).toBe(0);
  });

  it('a request the cluster refuses for good (an ACL: TOPIC_AUTHORIZATION_FAILED) is non-recoverable; a retriable one is not', async () => {
    const cluster = new KafkaCluster({ bootstrapServers: brokers.bootstrap, retryTimeoutMs: 100 });
    try {
      const denied = await cluster
        .retrying('produce to t:0', async () => {
          throw Object.assign(new Error('Received response with error while executing API'), { apiId: 'TOPIC_AUTHORIZATION_FAILED' });
        })
        .catch((e: Error) => e);
      expect(denied.message).toBe('kafka: produce to t:0 failed: TOPIC_AUTHORIZATION_FAILED (Received response with error while executing API)');
      expect(classifyThrowable(denied)).toBe('NonRecoverableError');
      const other = await cluster
        .retrying('produce to t:0', async () => {
          throw Object.assign(new Error('Received response with error while executing API'), { apiId: 'CORRUPT_MESSAGE' });
        })
        .catch((e: Error) => e);
      expect(classifyThrowable(other)).toBe('RecoverableError');
    } finally {
      await cluster.close();
    }
  });
});

describe('sluice run --detached on a cluster: a Kafka sink whose topic does not exist', () => {
  const processes = new ClusterProcesses('sluice-kafka-errors-');
  afterAll(() => processes.cleanUp());

  it('fails the job at once on the TaskManager; run --detached prints the cause and exits 1', async () => {
    const rest = await processes.startCluster(1);
    const missing = uniqueTopic('no-such-topic-cluster');
    const job = join(import.meta.dirname, 'fixtures', 'kafka', 'numbers-to-topic-job.ts');
    const restarts = ['-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=1000', '-D', 'restart-strategy.fixed-delay.delay=200 ms'];
    const r = await runSluice(['run', '--jobmanager', rest, '--detached', '--no-typecheck', '-p', '1', ...restarts, job, brokers.bootstrap, missing]);
    expect(r.code, r.stderr).toBe(1);
    const jobId = r.stdout.trim().split('\n').at(-1)!.trim();
    expect(r.stderr).toMatch(new RegExp(`Job ${jobId} failed: .*kafka: topic '${missing}' does not exist \\(create it first; Sluice does not create topics\\).*\\(not restarted: a restart cannot fix this failure\\)`));
    expect(await restGet<{ status: string; numRestarts: number }>(rest, `/jobs/${jobId}/result`)).toMatchObject({ status: 'FAILED', numRestarts: 0 });
  });
});
