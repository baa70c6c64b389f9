/**
 * The Kafka connectors' public option and metadata types, apart from the client code: the
 * declarations users compile against reference no type of the Kafka protocol library.
 */

/** Options shared by the Kafka source and sink for reaching the cluster. */
export interface KafkaConnectionOptions {
  /** `host:port[,host:port...]` (Kafka's `bootstrap.servers`; a `PLAINTEXT://` prefix is allowed), or an array of `host:port`. */
  readonly bootstrapServers: string | readonly string[];
  /** Kafka's `client.id` (default `sluice`). */
  readonly clientId?: string;
  /** Kafka's `request.timeout.ms`: an integer number of milliseconds in [1, 2147483647] (default 30 000). */
  readonly requestTimeoutMs?: number;
  /** How long a request is retried on retriable errors (unknown leader, coordinator loading, ...) before it fails: milliseconds >= 0, 0: no retries (default 60 000). */
  readonly retryTimeoutMs?: number;
  /** Where the client says it is retrying brokers it cannot reach (once per outage); default: not said. */
  readonly log?: (message: string) => void;
}

export interface TopicPartitionInfo {
  readonly partition: number;
  readonly leaderId: number;
  readonly leaderEpoch: number;
}

export interface TopicInfo {
  readonly name: string;
  readonly topicId: string;
  readonly partitions: readonly TopicPartitionInfo[];
}

/** A Kafka record batch's compression codec (the producer's `compression.type`). */
export type Compression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/**
 * A transaction pre-committed at a barrier, as kept in the checkpoint: enough to finish it
 * after a restart without InitProducerId (which would abort it). `producerId` is a decimal
 * string (a 64-bit id does not fit a JS number and checkpoints hold plain data).
 */
export interface PreparedTransaction {
  readonly transactionalId: string;
  readonly producerId: string;
  readonly producerEpoch: number;
}
