/** PostgreSQL change data capture: a logical replication slot read with pgoutput, exactly once. */
export { postgresCdcSource, PostgresCdcSource } from './postgres-cdc-source.js';
export { CdcSetupError } from './cdc-setup-error.js';
export {
  UNCHANGED_TOAST,
  isUnchangedToast,
  type UnchangedToast,
  type UpdatedRow,
  type CdcRow,
  type CdcSourceInfo,
  type ChangeRecord,
  type ChangeRecordOf,
  type CdcStartup,
  type DebeziumJsonMessage,
  type PostgresCdcSourceOptions,
  type PostgresCdcSplit,
} from './cdc-types.js';
