/** PostgreSQL sinks: upserts, exactly-once with prepared transactions, write-ahead. */
export { type PostgresConnectionOptions, type TableName } from './options.js';
export { type RowMapping, type SqlValue } from './row-mapping.js';
export { BadRecordError } from './bad-record-error.js';
export { type PostgresDeadLetter } from './bad-record-error.js';
export { PostgresUpsertSink, type PostgresUpsertSinkOptions } from './upsert-sink.js';
export { PostgresTwoPhaseCommitSink, type PostgresTwoPhaseCommitSinkOptions, type PostgresTransaction } from './two-phase-commit-sink.js';
export { PostgresWriteAheadSink, type PostgresWriteAheadSinkOptions } from './write-ahead-sink.js';
export { transactionId, parseTransactionId, lingeringToRollBack, GID_LENGTH_MAX, PREFIX_LENGTH_MAX } from './transaction-ids.js';
