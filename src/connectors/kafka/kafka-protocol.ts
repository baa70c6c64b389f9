import type * as KafkaProtocol from '@platformatic/kafka';

/** `@platformatic/kafka`: the protocol functions and connection pool the Kafka connectors use. */
export type KafkaModule = typeof KafkaProtocol;

let loading: Promise<KafkaModule> | undefined;
let loaded: KafkaModule | undefined;

/**
 * Loads `@platformatic/kafka` on first use. Importing it compiles its clients' schemas, 0.4 s
 * and more on a busy machine: every job that imports `sluice/connectors` paid that on every
 * TaskManager it was deployed to, Kafka or not. Only jobs that open a Kafka connection pay it now.
 */
export function kafka(): Promise<KafkaModule> {
  return (loading ??= import('@platformatic/kafka').then((m) => (loaded = m)));
}

/** The module when something loaded it already (an error it threw can only come from a loaded module). */
export function kafkaIfLoaded(): KafkaModule | undefined {
  return loaded;
}
