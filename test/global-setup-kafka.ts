import type { TestProject } from 'vitest/node';
import { startKafkaBroker, TEST_TRANSACTION_MAX_TIMEOUT_MS, type KafkaBroker } from './services/kafka-broker.js';

/**
 * vitest globalSetup of the `kafka` project: starts the real brokers its tests run against and
 * hands their addresses to the tests (`inject('kafka')`), and stops them at the end.
 * - `KAFKA_BOOTSTRAP=host:port`: use that broker instead of starting the default one
 *   (transaction protocol 2, Kafka 4.x's default);
 * - `KAFKA_BOOTSTRAP_TV1=host:port`: the same for the broker with transaction protocol 1.
 * A broker given this way must allow `transaction.max.timeout.ms` of at least
 * `KAFKA_TRANSACTION_MAX_TIMEOUT_MS` (default: one hour, as the started ones do).
 */
export interface KafkaTestBrokers {
  /** The default broker (transaction.version 2 unless given by KAFKA_BOOTSTRAP). */
  readonly bootstrap: string;
  /** A broker formatted with transaction.version 1. */
  readonly bootstrapTv1: string;
  readonly transactionMaxTimeoutMs: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    kafka: KafkaTestBrokers;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started: KafkaBroker[] = [];
  const t0 = Date.now();
  const stopAll = async (): Promise<void> => {
    await Promise.all(started.map((b) => b.stop()));
  };
  try {
    const [tv2, tv1] = await Promise.all([
      process.env.KAFKA_BOOTSTRAP ? undefined : startKafkaBroker({ transactionVersion: 2 }).then((b) => (started.push(b), b)),
      process.env.KAFKA_BOOTSTRAP_TV1 ? undefined : startKafkaBroker({ transactionVersion: 1 }).then((b) => (started.push(b), b)),
    ]);
    const brokers: KafkaTestBrokers = {
      bootstrap: process.env.KAFKA_BOOTSTRAP ?? tv2!.bootstrap,
      bootstrapTv1: process.env.KAFKA_BOOTSTRAP_TV1 ?? tv1!.bootstrap,
      transactionMaxTimeoutMs: Number(process.env.KAFKA_TRANSACTION_MAX_TIMEOUT_MS ?? TEST_TRANSACTION_MAX_TIMEOUT_MS),
    };
    project.provide('kafka', brokers);
    if (started.length > 0) console.log(`kafka: ${started.map((b) => `${b.bootstrap} (transaction.version ${b.transactionVersion})`).join(', ')} up in ${Date.now() - t0} ms`);
  } catch (e) {
    await stopAll();
    throw e;
  }
  return stopAll;
}
