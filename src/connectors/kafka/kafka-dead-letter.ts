import { KafkaCluster, parseBootstrap } from './kafka-cluster.js';
import type { KafkaConnectionOptions } from './kafka-types.js';
import { checkKnownOptions } from '../../util/known-options.js';
import { CONNECTION_OPTION_NAMES, INT32_MAX, checkConnectionOptions, checkNumberOption, checkOptionsObject, checkStringOption } from './kafka-options.js';
import { deadLetterEnvelope, deadLetterHeaders } from './dead-letter.js';
import { RecordSender } from './record-sender.js';

export interface KafkaDeadLetterOptions extends KafkaConnectionOptions {
  /** The dead-letter topic (it must exist). */
  readonly topic: string;
  /** Added as header `sluice.dlq.origin`: what refused the record (a table name, for example). */
  readonly origin?: string;
  /** The connection closes after this long without dead letters: milliseconds >= 0 (default 1000), so it never keeps a process alive. */
  readonly idleCloseMs?: number;
}

const DEAD_LETTER_OPTION_NAMES = { ...CONNECTION_OPTION_NAMES, topic: true, origin: true, idleCloseMs: true } as const satisfies Record<keyof KafkaDeadLetterOptions, true>;

/**
 * A dead-letter output on a Kafka topic for any connector that takes a dead-letter function,
 * the PostgreSQL sinks for example:
 *
 *   new PostgresUpsertSink({ ..., deadLetter: kafkaDeadLetter({ bootstrapServers, topic: 'orders.dlq', origin: 'orders' }) })
 *
 * Each bad record becomes one message: the value `{"error": ..., "record": ...}` (the record
 * as JSON), headers `sluice.dlq.error` and `sluice.dlq.origin`. The returned function resolves
 * once the broker acknowledged the message (acks=all), so a sink that awaits it (the
 * PostgreSQL sinks do) goes on only when the dead letter is stored: none is lost; after a
 * failure and replay one may be written again (at-least-once). It connects on the first
 * dead letter and disconnects when idle.
 */
export function kafkaDeadLetter<T = unknown>(options: KafkaDeadLetterOptions): (record: T, error: Error) => Promise<void> {
  const owner = 'kafkaDeadLetter';
  checkOptionsObject(owner, options);
  checkKnownOptions(owner, options, DEAD_LETTER_OPTION_NAMES);
  parseBootstrap(options.bootstrapServers, owner);
  checkConnectionOptions(owner, options);
  checkStringOption(owner, 'topic', options.topic, 'the dead-letter topic; it must exist');
  if (options.topic === undefined) throw new Error(`${owner}: topic is required (the dead-letter topic; it must exist)`);
  checkStringOption(owner, 'origin', options.origin, 'the sluice.dlq.origin header', true);
  checkNumberOption(owner, 'idleCloseMs', options.idleCloseMs, { min: 0, max: INT32_MAX, unit: 'milliseconds' });
  let open: { cluster: KafkaCluster; sender: RecordSender } | undefined;
  let pending = 0;
  let idle: ReturnType<typeof setTimeout> | undefined;
  let roundRobin = 0;
  const idleCloseMs = options.idleCloseMs ?? 1000;
  return async (record: T, error: Error): Promise<void> => {
    if (idle !== undefined) clearTimeout(idle);
    idle = undefined;
    pending++;
    try {
      if (open === undefined || open.sender.failed !== undefined) {
        const cluster = new KafkaCluster({ ...options, clientId: options.clientId ?? 'sluice-dead-letter' });
        open = { cluster, sender: new RecordSender(cluster, { batchRecordsMax: 1, compression: 'none', produceTimeoutMs: options.requestTimeoutMs ?? 30_000 }) };
      }
      const { cluster, sender } = open;
      const info = await cluster.topic(options.topic);
      const headers = new Map<Buffer, Buffer>();
      const pairs = [...deadLetterHeaders(undefined, error), ...(options.origin === undefined ? [] : [['sluice.dlq.origin', options.origin] as [string, string]])];
      for (const [k, v] of pairs) headers.set(Buffer.from(k, 'utf8'), Buffer.from(v, 'utf8'));
      await sender.add({ topic: options.topic, partition: roundRobin++ % info.partitions.length, value: deadLetterEnvelope(record, error), headers });
      await sender.flush();
    } catch (e) {
      throw new Error(`writing a dead letter to Kafka topic '${options.topic}' failed: ${(e as Error).message} (the record's own error: ${error.message})`, { cause: e });
    } finally {
      pending--;
      if (pending === 0) {
        idle = setTimeout(() => {
          const o = open;
          open = undefined;
          void o?.cluster.close().catch(() => {});
        }, idleCloseMs);
        idle.unref();
      }
    }
  };
}
