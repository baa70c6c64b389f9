/**
 * The PostgreSQL change-data-capture source's public option and record types, apart from the
 * client code: the declarations users compile against reference no type of `pg`.
 */
import type { PostgresConnectionOptions } from '../postgres/options.js';

/** A row of a captured table: column name -> value (see docs/connectors.md for the value of each type). */
export type CdcRow = Record<string, unknown>;

/**
 * An unchanged TOASTed value: PostgreSQL does not send a large value (stored out of line) that
 * an UPDATE left unchanged, so the source cannot say what it is, only that it did not change.
 * Never `null` (which is a real NULL). A plain object, so it crosses processes as it is; test
 * for it with `isUnchangedToast(v)`.
 */
export interface UnchangedToast {
  readonly unchangedToast: true;
}

export const UNCHANGED_TOAST: UnchangedToast = Object.freeze({ unchangedToast: true as const });

export function isUnchangedToast(v: unknown): v is UnchangedToast {
  return typeof v === 'object' && v !== null && (v as { unchangedToast?: unknown }).unchangedToast === true && Object.keys(v).length === 1;
}

/** The row after an UPDATE: a column may be an unchanged TOASTed value. */
export type UpdatedRow<Row extends object> = { [K in keyof Row]: Row[K] | UnchangedToast };

/** Where a change comes from. */
export interface CdcSourceInfo {
  /** The LSN of the change's own WAL record (`X/Y`). */
  readonly lsn: string;
  /** The LSN of its transaction's commit record: transactions arrive in this order. */
  readonly commitLsn: string;
  /** Its position in the transaction: 1 for the first change. */
  readonly seq: number;
  readonly txId: number;
  /** The commit time, ISO 8601 in UTC with microseconds (`2026-12-07T20:50:10.123456Z`). */
  readonly commitTs: string;
  readonly schema: string;
  readonly table: string;
}

interface ChangeBase<Table extends string> {
  /** The table as given in the `tables` option (narrow on it to get the table's row type). */
  readonly table: Table;
  readonly source: CdcSourceInfo;
}

/**
 * One change of one row (Debezium's op letters): 'c' insert, 'u' update, 'd' delete, and 't' a
 * TRUNCATE of the table (no rows). `before` holds the old row's replica identity: every column
 * with REPLICA IDENTITY FULL, the key columns otherwise (for an update only when the key
 * changed, else `null`).
 */
export type ChangeRecord<Row extends object = CdcRow, Table extends string = string> =
  | (ChangeBase<Table> & { readonly op: 'c'; readonly before: null; readonly after: Row })
  | (ChangeBase<Table> & { readonly op: 'u'; readonly before: Partial<Row> | null; readonly after: UpdatedRow<Row> })
  | (ChangeBase<Table> & { readonly op: 'd'; readonly before: Partial<Row> | null; readonly after: null })
  | (ChangeBase<Table> & { readonly op: 't'; readonly before: null; readonly after: null });

/** The records of a source over several tables: `{ 'public.orders': Order, ... }` -> a union narrowed by `table`. */
export type ChangeRecordOf<Tables extends object> = { [K in keyof Tables & string]: Tables[K] extends object ? ChangeRecord<Tables[K], K> : never }[keyof Tables & string];

/**
 * Where a job without state starts reading. `'latest'`: changes committed from the job's start
 * on (the slot is created if missing and `createSlot` allows). `{ lsn }`: transactions that
 * commit at or after this LSN (`X/Y`), which the slot must still hold (at or after its
 * `confirmed_flush_lsn`). A restored job always reads on from its checkpoint.
 */
export type CdcStartup = 'latest' | { readonly lsn: string };

export interface PostgresCdcSourceOptions<Tables extends object = Record<string, CdcRow>> {
  /** Where to connect (as the sinks' `connection`); the user needs the REPLICATION attribute. */
  readonly connection?: PostgresConnectionOptions;
  /** The logical replication slot (lower-case letters, digits and underscores, at most 63). */
  readonly slot: string;
  /** The publication whose changes are read; it must contain every table of `tables`. */
  readonly publication: string;
  /** The tables to emit changes of: `'schema.table'`, or `'table'` for `public.table`. Changes of other tables of the publication are skipped. */
  readonly tables: readonly (keyof Tables & string)[];
  /** Default `'latest'`. */
  readonly startup?: CdcStartup;
  /** Create the slot (plugin pgoutput) when it does not exist; default true. */
  readonly createSlot?: boolean;
  /** Create the publication `FOR TABLE <tables>` when it does not exist; default false (it must exist). */
  readonly createPublication?: boolean;
  /**
   * What `before` must hold, checked at start against each table's REPLICA IDENTITY: `'key'`
   * (default) the key columns (a primary key with REPLICA IDENTITY DEFAULT, an index, or FULL),
   * `'full'` the whole old row (REPLICA IDENTITY FULL).
   */
  readonly before?: 'key' | 'full';
  /** How often the source reports its position to the server while streaming (a standby status update); default 10 000 ms. */
  readonly statusIntervalMs?: number;
  /** Changes buffered before the source stops reading the replication connection; default 10 000. */
  readonly queueChangesMax?: number;
  /** How long a restarted reader waits for the slot to be released by the connection of the attempt before; default 30 000 ms. */
  readonly slotBusyTimeoutMs?: number;
  /** Where the source reports what it did (slot created, where it started); default the process log. */
  readonly log?: (message: string) => void;
  /**
   * `'records'` (default): `ChangeRecord`s. `'debezium-json'`: `DebeziumJsonMessage`s, Kafka
   * messages in the JSON shape of Debezium's PostgreSQL connector (see docs/connectors.md).
   */
  readonly format?: 'records' | 'debezium-json';
  /** With `format: 'debezium-json'`: Debezium's `topic.prefix`, the first part of each topic (`<prefix>.<schema>.<table>`) and `source.name`. */
  readonly topicPrefix?: string;
}

/**
 * A change as Debezium's PostgreSQL connector writes it to Kafka (JSON converter without
 * schemas): the topic `<topicPrefix>.<schema>.<table>`, the key (the primary key columns as
 * JSON, null without a primary key) and the value (the change event as JSON; null: a tombstone).
 */
export interface DebeziumJsonMessage {
  readonly topic: string;
  readonly key: string | null;
  readonly value: string | null;
}

/**
 * The source's one split and its checkpointed position. Every transaction whose commit LSN is
 * below `resumeLsn` was emitted whole; `partial` is a transaction (by its commit LSN) of which
 * the first `emitted` changes were emitted. LSNs are `X/Y` strings (plain data).
 */
export interface PostgresCdcSplit {
  readonly slot: string;
  readonly resumeLsn: string;
  readonly partial?: { readonly commitLsn: string; readonly emitted: number };
}
