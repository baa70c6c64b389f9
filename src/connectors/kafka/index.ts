/** The Kafka connectors: a source and a sink with Flink's KafkaSource / KafkaSink semantics. */
export { KafkaSource, splitOwner, type KafkaSourceOptions, type KafkaSplit, type StartingOffsets, type ConsumedRecord } from './kafka-source.js';
export { kafkaDeadLetter, type KafkaDeadLetterOptions } from './kafka-dead-letter.js';
export { KafkaSink, type KafkaSinkOptions, type KafkaSinkWriterState, type DeliveryGuarantee } from './kafka-sink.js';
export type { KafkaConnectionOptions } from './kafka-cluster.js';
export type { PreparedTransaction } from './kafka-transactions.js';
export { TransactionCommitError } from './kafka-transactions.js';
export type { Serializer, Deserializer, SerializerSpec, DeserializerSpec } from './serde.js';
export type { Compression } from './record-sender.js';
