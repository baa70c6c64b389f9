/** The Kafka connectors: a source and a sink with Flink's KafkaSource / KafkaSink semantics. */
export { KafkaSource, splitOwner, type KafkaSourceOptions, type KafkaSplit, type StartingOffsets, type ConsumedRecord } from './kafka-source.js';
export { kafkaDeadLetter, type KafkaDeadLetterOptions } from './kafka-dead-letter.js';
export { KafkaSink, type KafkaSinkOptions, type KafkaSinkWriterState, type DeliveryGuarantee } from './kafka-sink.js';
export type { KafkaConnectionOptions } from './kafka-types.js';
export type { PreparedTransaction } from './kafka-types.js';
export { TransactionCommitError } from './transaction-commit-error.js';
export type { Serializer, Deserializer, SerializerSpec, DeserializerSpec } from './serde.js';
export type { Compression } from './kafka-types.js';
