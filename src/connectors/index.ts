/** Connectors: sources and sinks that come with Sluice. */
export { GeneratorSource, type GeneratorSourceOptions, type GeneratorSplit } from './generator/generator-source.js';
export { numberSource, nexmarkSource, type NumberSourceOptions, type NexmarkSourceOptions } from './generator/sources.js';
export * from './generator/nexmark/index.js';
export { FileSource, type FileSplit, type FileSourceOptions } from './file/file-source.js';
export { FileSink, type FileSinkOptions } from './file/file-sink.js';
export {
  ExactlyOnceFileSink,
  readCommittedLines,
  committedFileName,
  type ExactlyOnceFileSinkOptions,
  type FileTransaction,
} from './file/exactly-once-file-sink.js';
export { CollectSink } from './collect-sink.js';
export { DiscardingSink } from './discarding-sink.js';
export { PrintSink, type PrintSinkOptions } from './print-sink.js';
export { CollectionSource, type CollectionSplit } from './collection-source.js';
export { SocketTextSource, type SocketTextSourceOptions, type SocketSplit } from './socket/socket-text-source.js';
export {
  KafkaSource,
  KafkaSink,
  kafkaDeadLetter,
  type KafkaDeadLetterOptions,
  TransactionCommitError,
  splitOwner,
  type KafkaSourceOptions,
  type KafkaSplit,
  type StartingOffsets,
  type ConsumedRecord,
  type KafkaSinkOptions,
  type KafkaSinkWriterState,
  type DeliveryGuarantee,
  type KafkaConnectionOptions,
  type PreparedTransaction,
  type Serializer,
  type Deserializer,
  type SerializerSpec,
  type DeserializerSpec,
  type Compression,
} from './kafka/index.js';
export {
  PostgresUpsertSink,
  PostgresTwoPhaseCommitSink,
  PostgresWriteAheadSink,
  BadRecordError,
  type PostgresDeadLetter,
  type PostgresUpsertSinkOptions,
  type PostgresTwoPhaseCommitSinkOptions,
  type PostgresWriteAheadSinkOptions,
  type PostgresTransaction,
  type PostgresConnectionOptions,
  type TableName,
  type RowMapping,
  type SqlValue,
} from './postgres/index.js';
export * from './postgres-cdc/index.js';
